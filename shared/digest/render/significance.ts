/**
 * What changed that matters: the significant changes of a run (beyond their noise), each with its tone
 * and a weight by size, and the status mark they add up to. Changes within noise never appear here, so
 * they never drive the headline or the mark (docs/DIGEST.md, "The mark").
 */
import type { Gap } from '../../read-api-types';
import { orderReasonsByImpact } from '../reasoning-choice';
import { inline, LEN, plural, sparkline } from './format';
import { engineTotal, enginesMoved, type DigestModel, type EngineView, type MetricView } from './model';
import { bandText, deltaText, ordinal, valueText } from './units';
import { enginesText, enginesWhere, gapRef } from './sections/gap-line';

export type StatusMark = '🔴' | '🟡' | '🟢' | '⚪';

export interface ChangeItem {
  tone: 'better' | 'worse';
  /** Size of the change: 0 (barely beyond noise) … 3 (large); the lead metric counts double. */
  weight: number;
  /** A few words for the headline ("4 of 5 engines down", "TrailForge took 3 prompts"). */
  phrase: string;
  /** The change as a line (mrkdwn). */
  line: string;
  /** The gaps it is about: the first with a reasoning card gives its reason. */
  gaps: Gap[];
  /** Why, when it is not in a reasoning card (e.g. the engines behind the lead metric). */
  cause?: string | undefined;
  /** The change of the headline metric (the overview's first): listed first. */
  lead?: boolean | undefined;
}

const MAX_WEIGHT = 3;
const cap = (n: number): number => Math.min(MAX_WEIGHT, Math.max(0, n));

function label(view: { label: string }): string {
  return inline(view.label, LEN.label) || '—';
}

function engineName(engine: EngineView): string {
  return inline(engine.name ?? '', LEN.rowName) || '(unnamed engine)';
}

/** "50.5 % (−3.2 pts)", "3.6, was 3.1" — a metric's value with its change, in its unit. */
export function metricValueWithChange(view: MetricView): string {
  const value = valueText(view.reading, view.value, view.raw);
  if (view.delta === null || view.value === null) return value;
  if (view.reading.kind === 'position') return `${value}, was ${valueText(view.reading, view.value - view.delta, null)}`;
  return `${value} (${deltaText(view.reading, view.delta) ?? ''})`;
}

/** How a metric's change reads as words: the change, its noise, a streak ("2nd run down"). */
export function metricChangeLine(view: MetricView): string {
  // A share's sign says it all; a position or count needs the word (lower can be better).
  const tone = view.reading.kind !== 'share' && (view.tone === 'better' || view.tone === 'worse') ? ` — ${view.tone}` : '';
  const streak = view.streak >= 2 && view.delta !== null ? ` · ${ordinal(view.streak)} run ${view.delta < 0 ? 'down' : 'up'}` : '';
  const week =
    view.weekDelta !== null && view.weekDelta !== view.delta ? ` · vs last week ${deltaText(view.reading, view.weekDelta) ?? ''}` : '';
  const spark = sparkline(view.series);
  return `*${label(view)}* ${metricValueWithChange(view)}${tone}${streak}${week}${spark.length > 0 ? ` ${spark}` : ''}`;
}

/** Size of a metric's change: against its sampling error for a share, relative to its value otherwise. */
function metricWeight(view: MetricView): number {
  const delta = Math.abs(view.delta ?? 0);
  const size =
    view.band?.basis === 'sample'
      ? delta / Math.max(view.band.halfWidth, Number.EPSILON)
      : (10 * delta) / Math.max(1, Math.abs((view.value ?? 0) - (view.delta ?? 0)));
  return cap(size) * (view.lead ? 2 : 1);
}

/** The engines behind a share's move: "4 of 5 engines lower, most on Gemini (−3.5 pts)". */
function engineCause(model: DigestModel, view: MetricView): string | undefined {
  if (view.reading.kind !== 'share' || view.delta === null || view.delta === 0) return undefined;
  const compared = model.engines.filter((e) => e.delta !== null && e.delta !== 0);
  const same = compared.filter((e) => Math.sign(e.delta ?? 0) === Math.sign(view.delta ?? 0));
  if (same.length === 0 || model.engines.filter((e) => e.delta !== null).length < 2) return undefined;
  const most = [...same].sort((a, b) => Math.abs(b.delta ?? 0) - Math.abs(a.delta ?? 0))[0];
  const total = model.engines.filter((e) => e.delta !== null).length;
  const worst = most === undefined ? '' : `, most on ${engineName(most)} (${deltaText(most.reading, most.delta) ?? ''})`;
  return `${same.length} of ${total} engines ${view.delta < 0 ? 'lower' : 'higher'}${worst}`;
}

function isGapCount(view: MetricView): boolean {
  return /\bgaps?\b/i.test(view.label.replace(/_/g, ' '));
}

function metricItems(model: DigestModel, gapNews: boolean): ChangeItem[] {
  return model.metrics
    .filter((v) => v.significant && (v.tone === 'better' || v.tone === 'worse') && !(gapNews && isGapCount(v)))
    .map((v) => ({
      tone: v.tone as 'better' | 'worse',
      weight: metricWeight(v),
      phrase:
        v.reading.kind === 'position' && v.value !== null && v.delta !== null
          ? `${label(v)} ${valueText(v.reading, v.value - v.delta, null)} → ${valueText(v.reading, v.value, v.raw)}`
          : `${label(v)} ${deltaText(v.reading, v.delta) ?? ''}`,
      line: metricChangeLine(v),
      gaps: [],
      cause: v.lead ? engineCause(model, v) : undefined,
      lead: v.lead,
    }));
}

function engineList(engines: readonly EngineView[]): string {
  const shown = engines.slice(0, 4).map((e) => `${engineName(e)} ${deltaText(e.reading, e.delta) ?? ''}`);
  return shown.join(', ') + (engines.length > 4 ? ` +${engines.length - 4} more` : '');
}

function engineItems(model: DigestModel): ChangeItem[] {
  const { down, up, compared } = enginesMoved(model);
  const item = (engines: EngineView[], tone: 'better' | 'worse'): ChangeItem[] => {
    if (engines.length === 0) return [];
    const word = tone === 'worse' ? 'down' : 'up';
    const [only] = engines;
    const phrase =
      engines.length === 1 && only
        ? `${engineName(only)} ${deltaText(only.reading, only.delta) ?? ''}`
        : `${engines.length} of ${compared} engines ${word}`;
    return [
      {
        tone,
        weight: cap((MAX_WEIGHT * engines.length) / Math.max(1, compared)),
        phrase,
        line: `*${phrase}*: ${engineList(engines)}`,
        gaps: [],
      },
    ];
  };
  return [...item(down, 'worse'), ...item(up, 'better')];
}

/** Gap news is sized against the open gaps: 3 new of 220 is small, 3 of 8 is not. */
function gapWeight(model: DigestModel, count: number): number {
  return cap((10 * count) / Math.max(5, model.gaps.length));
}

function gapMentions(model: DigestModel, gaps: readonly Gap[], note: (gap: Gap) => string): string {
  const shown = gaps.slice(0, 2).map((g) => `${gapRef(model, g, 80)}${note(g)}`);
  return shown.join('; ') + (gaps.length > 2 ? ` +${gaps.length - 2} more` : '');
}

/** Prompts a rival took (new gaps it wins, or prompts it won from another rival), grouped by rival. */
function rivalItems(model: DigestModel): { items: ChangeItem[]; covered: Set<string> } {
  const fresh = new Set(model.diff.newGaps.map((g) => g.prompt_id));
  const taken = new Map<string, Gap[]>();
  const covered = new Set<string>();
  for (const gap of model.gaps) {
    const switched = model.shifts.get(gap.prompt_id)?.previousWinner ?? null;
    if (!fresh.has(gap.prompt_id) && switched === null) continue;
    const rival = gap.top_competitor.trim();
    taken.set(rival, [...(taken.get(rival) ?? []), gap]);
    covered.add(gap.prompt_id);
  }
  const items = [...taken].map(([rival, gaps]): ChangeItem => {
    const name = inline(rival, LEN.competitor);
    const note = (g: Gap): string => {
      const from = model.shifts.get(g.prompt_id)?.previousWinner;
      if (from) return ` (from ${inline(from, LEN.competitor)})`;
      const engines = enginesWhere(model, g.platforms_losing);
      return engines.length > 0 ? ` (new, on ${engines})` : ' (new)';
    };
    const phrase =
      name.length > 0 ? `${name} took ${plural(gaps.length, 'prompt', 'prompts')}` : plural(gaps.length, 'new gap', 'new gaps');
    return { tone: 'worse', weight: gapWeight(model, gaps.length), phrase, line: `*${phrase}*: ${gapMentions(model, gaps, note)}`, gaps };
  });
  return { items, covered };
}

/** "now also lost on Gemini, Claude — 4/5 engines" for a gap that spread to more engines. */
export function spreadNote(model: DigestModel, gap: Gap): string {
  const added = model.shifts.get(gap.prompt_id)?.newEngines ?? [];
  if (added.length === 0) return '';
  return ` — now also lost on ${enginesText(added)} (${gap.platforms_losing.length}/${engineTotal(model)} engines)`;
}

function worseGapItems(model: DigestModel, covered: ReadonlySet<string>): ChangeItem[] {
  const gaps = model.diff.worseningGaps.filter((g) => !covered.has(g.prompt_id));
  if (gaps.length === 0) return [];
  const phrase = `${plural(gaps.length, 'gap', 'gaps')} worse`;
  const note = (g: Gap): string => spreadNote(model, g) || ' (the service marks it worse)';
  return [
    { tone: 'worse', weight: gapWeight(model, gaps.length) * 0.7, phrase, line: `*${phrase}*: ${gapMentions(model, gaps, note)}`, gaps },
  ];
}

function resolvedItems(model: DigestModel): ChangeItem[] {
  const gone = model.diff.resolvedGaps;
  if (gone.length === 0) return [];
  const phrase = `${plural(gone.length, 'gap', 'gaps')} resolved`;
  const asGaps = gone.map((g): Gap => ({ ...g, platforms_losing: [], top_competitor: '', extra: [] }));
  return [
    {
      tone: 'better',
      weight: gapWeight(model, gone.length),
      phrase,
      line: `*${phrase}*: ${gapMentions(model, asGaps, () => '')}`,
      gaps: [],
    },
  ];
}

/** Every significant change of the run, the lead metric first, then by weight. Empty on a first digest. */
export function significantChanges(model: DigestModel): ChangeItem[] {
  if (model.diff.firstDigest || model.emptyReason !== null) return [];
  const rivals = rivalItems(model);
  const gapNews = [...rivals.items, ...worseGapItems(model, rivals.covered), ...resolvedItems(model)];
  const lead = metricItems(model, gapNews.length > 0);
  const first = (item: ChangeItem): number => (item.lead === true ? 1 : 0);
  return [...lead, ...engineItems(model), ...gapNews].sort((a, b) => first(b) - first(a) || b.weight - a.weight);
}

/**
 * ⚪ nothing to judge (baseline, empty run, no significant change); 🟢 only good news or good outweighs bad;
 * 🟡 bad news that is small or outweighed; 🔴 bad news that clearly outweighs the good.
 */
export function statusMark(model: DigestModel, changes: readonly ChangeItem[]): StatusMark {
  const sum = (tone: 'better' | 'worse'): number => changes.filter((c) => c.tone === tone).reduce((s, c) => s + c.weight, 0);
  const bad = sum('worse');
  const good = sum('better');
  if (bad === 0) return good > 0 ? '🟢' : '⚪';
  const net = bad - good;
  if (net >= 1.5) return '🔴';
  return net > 0 ? '🟡' : '🟢';
}

/** The top reason of the first of the change's gaps that has a reasoning card with reasons. */
export function topReason(model: DigestModel, item: ChangeItem): string | null {
  for (const gap of item.gaps) {
    const card = model.input.reasoning.get(gap.prompt_id);
    const reason = card ? orderReasonsByImpact(card.reasons)[0] : undefined;
    const detail = reason ? inline(reason.detail, 160) : '';
    if (detail.length > 0) return detail;
  }
  return null;
}

/** A metric within its noise, as "Share of voice +4 pts (within noise: ±18 pts at 25 answers)". */
export function withinNoiseText(view: {
  label: string;
  reading: MetricView['reading'];
  delta: number | null;
  band: MetricView['band'];
}): string {
  return `${label(view)} ${deltaText(view.reading, view.delta) ?? ''} (${view.band ? bandText(view.reading, view.band) : ''})`;
}

export interface Assessment {
  changes: ChangeItem[];
  mark: StatusMark;
}

const ASSESSED = new WeakMap<DigestModel, Assessment>();

/** The model's significant changes and mark, worked out once per model. */
export function assess(model: DigestModel): Assessment {
  const known = ASSESSED.get(model);
  if (known) return known;
  const changes = significantChanges(model);
  const assessment = { changes, mark: statusMark(model, changes) };
  ASSESSED.set(model, assessment);
  return assessment;
}

/**
 * A run with nothing to tell: not the first digest, not empty, and no change beyond its noise.
 * With digestMode 'changes' such a run posts one compact line.
 */
export function isQuietRun(model: DigestModel): boolean {
  return !model.diff.firstDigest && model.emptyReason === null && assess(model).changes.length === 0;
}

/** Metrics and engines that moved, but within their noise, largest first (relative to the noise). */
export function withinNoise(
  model: DigestModel,
): { label: string; reading: MetricView['reading']; delta: number | null; band: MetricView['band'] }[] {
  const metrics = model.metrics.map((m) => ({
    label: m.label,
    reading: m.reading,
    delta: m.delta,
    band: m.band,
    significant: m.significant,
  }));
  const engines = model.engines.map((e) => ({
    label: e.name ?? '',
    reading: e.reading,
    delta: e.delta,
    band: e.band,
    significant: e.significant,
  }));
  return [...metrics, ...engines]
    .filter((v) => !v.significant && v.band !== null && v.delta !== null && v.delta !== 0 && v.label.length > 0)
    .sort((a, b) => Math.abs(b.delta ?? 0) / (b.band?.halfWidth || 1) - Math.abs(a.delta ?? 0) / (a.band?.halfWidth || 1));
}
