/**
 * The simulator's generated projects: four profiles, each project's pool of questions it may lose,
 * and the seeded moves a run makes (gaps drawn from the pool, figures drifting by a few percent).
 * `SimulatorData` (./data) keeps the state; this holds what it draws from.
 */
import { isRecord } from '../../shared/util';
import type { FixtureGap, FixtureVisibility } from './fixture';
import { between, deterministicUuid, pick, rngFor, round, shuffle, type Rng } from './random';

export const ENGINES = ['ChatGPT', 'Perplexity', 'Gemini', 'Claude', 'Copilot'] as const;

export interface Profile {
  name: string;
  industry: string;
  subjects: readonly string[];
  audiences: readonly string[];
  competitors: readonly string[];
}

export const PROFILES: readonly Profile[] = [
  {
    name: 'Northwind Outdoor',
    industry: 'Outdoor retail',
    subjects: ['hiking boots', 'waterproof jacket', 'ultralight tent', 'trail running shoes', 'sleeping bag'],
    audiences: ['beginners', 'thru-hikers', 'families', 'winter camping'],
    competitors: ['Summitline', 'TrailForge', 'Alpenhaus', 'Ridgeway Supply'],
  },
  {
    name: 'Ledgerly',
    industry: 'Accounting software',
    subjects: ['invoicing software', 'bookkeeping app', 'payroll tool', 'expense tracker', 'accounting platform'],
    audiences: ['freelancers', 'small businesses', 'agencies', 'nonprofits'],
    competitors: ['BookNest', 'Tallybright', 'CountWise', 'Quillbooks'],
  },
  {
    name: 'Brightsmile Dental',
    industry: 'Healthcare',
    subjects: ['electric toothbrush', 'teeth whitening kit', 'water flosser', 'dental clinic', 'clear aligner'],
    audiences: ['sensitive teeth', 'kids', 'seniors', 'braces wearers'],
    competitors: ['PearlCare', 'DentaNova', 'SmileCraft', 'Oralis'],
  },
  {
    name: 'Voltway',
    industry: 'EV charging',
    subjects: ['home EV charger', 'charging network', 'portable EV charger', 'charging app', 'fleet charging solution'],
    audiences: ['apartment dwellers', 'road trips', 'delivery fleets', 'new EV owners'],
    competitors: ['AmpRoute', 'Kilowatt Hub', 'PlugPath', 'Currentry'],
  },
];

const TEMPLATES: readonly ((subject: string, audience: string, competitor: string) => string)[] = [
  (s) => `What is the best ${s}?`,
  (s, a) => `Which ${s} do experts recommend for ${a}?`,
  (s, a) => `Top-rated ${s} for ${a}`,
  (s) => `${s[0]?.toUpperCase() ?? ''}${s.slice(1)} compared: which one is worth it?`,
  (s, a) => `Is there an affordable ${s} for ${a}?`,
  (s) => `Most reliable ${s} brands`,
  (s, _a, c) => `Alternatives to ${c} for a ${s}`,
  (s) => `How do I choose a ${s}?`,
];

export const TRENDS = ['worse', 'stable', 'improving'] as const;
const TREND_RANK: Record<string, number> = { worse: 0, new: 1, stable: 2, improving: 3 };
export const IMPACTS = ['high', 'medium', 'low'] as const;

export interface PoolPrompt {
  prompt_id: string;
  prompt_ref: number;
  prompt_text: string;
  subject: string;
  /** Whether results of this prompt get reasoning cards (a quarter of prompts never do). */
  cards: boolean;
}

export function genericProfile(name: string, industry: string, competitors: readonly string[]): Profile {
  const topic = industry.trim() === '' ? name : industry.toLowerCase();
  return {
    name,
    industry,
    subjects: [`${topic} provider`, `${topic} service`, `${topic} tool`, `${topic} platform`, `${topic} vendor`],
    audiences: ['small teams', 'beginners', 'enterprises', 'families'],
    competitors: competitors.length > 0 ? competitors : ['Competitor A', 'Competitor B', 'Competitor C'],
  };
}

/** The questions a project may lose: 8 templates × 5 subjects, shuffled; refs 101.. in pool order. */
export function promptPool(seed: number, projectId: string, profile: Profile): PoolPrompt[] {
  const rng = rngFor(seed, projectId, 'pool');
  const combos: { subject: string; text: string }[] = [];
  for (const template of TEMPLATES) {
    for (const subject of profile.subjects) {
      combos.push({ subject, text: template(subject, pick(rng, profile.audiences), pick(rng, profile.competitors)) });
    }
  }
  return shuffle(rng, combos).map((combo, i) => ({
    prompt_id: deterministicUuid(seed, projectId, 'prompt', combo.text),
    prompt_ref: 101 + i,
    prompt_text: combo.text,
    subject: combo.subject,
    cards: i % 4 !== 3,
  }));
}

export function losingSubset(rng: Rng, min: number, max: number): string[] {
  const count = min + Math.floor(rng() * (max - min + 1));
  const chosen = new Set(shuffle(rng, ENGINES).slice(0, count));
  return ENGINES.filter((engine) => chosen.has(engine));
}

export function compareGaps(a: FixtureGap, b: FixtureGap): number {
  const byEngines = b.platforms_losing.length - a.platforms_losing.length;
  if (byEngines !== 0) return byEngines;
  const rank = (gap: FixtureGap): number => TREND_RANK[typeof gap['trend'] === 'string' ? gap['trend'] : ''] ?? 4;
  const byTrend = rank(a) - rank(b);
  if (byTrend !== 0) return byTrend;
  return String(a.prompt_ref).localeCompare(String(b.prompt_ref), 'en', { numeric: true });
}

export function newGap(rng: Rng, prompt: PoolPrompt, competitors: readonly string[], run: number, trend: string): FixtureGap {
  return {
    prompt_id: prompt.prompt_id,
    prompt_ref: prompt.prompt_ref,
    prompt_text: prompt.prompt_text,
    platforms_losing: losingSubset(rng, 1, 4),
    top_competitor: pick(rng, competitors),
    trend,
    first_seen_run: run,
  };
}

function decimalsOf(value: number): number {
  const text = String(value);
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : Math.min(3, text.length - dot - 1);
}

/** A numeric value moved by ±2..10 %, keeping its precision; percentages stay in 0..100, positions >= 1. */
export function drift(rng: Rng, value: number, name: string): number {
  const decimals = decimalsOf(value);
  const magnitude = Math.max(Math.abs(value), decimals === 0 ? 10 : 1);
  const change = (rng() < 0.5 ? -1 : 1) * magnitude * between(rng, 0.02, 0.1, 3);
  let next = round(value + change, decimals);
  if (decimals === 0 && next === value) next += rng() < 0.5 ? -1 : 1;
  next = Math.max(0, next);
  if (/visib|share|percent|rate|%/i.test(name)) next = Math.min(100, next);
  if (/position|rank/i.test(name)) next = Math.max(1, next);
  return next;
}

/** Arrays of row objects in an overview whose key names engines/platforms. */
export function engineRows(visibility: FixtureVisibility): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const [key, value] of Object.entries(visibility)) {
    if (key === 'metrics' || !/engine|platform/i.test(key) || !Array.isArray(value)) continue;
    for (const row of value) if (isRecord(row)) rows.push(row);
  }
  return rows;
}

export function mean(values: readonly number[], decimals: number): number {
  if (values.length === 0) return 0;
  return round(values.reduce((sum, v) => sum + v, 0) / values.length, decimals);
}

export function mostCommon(values: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  // The first value counted most often.
  return [...counts].reduce<[string, number] | undefined>(
    (best, entry) => (best === undefined || entry[1] > best[1] ? entry : best),
    undefined,
  )?.[0];
}
