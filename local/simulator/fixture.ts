/**
 * The simulator's JSON fixtures (`SimulatorFixture`): the shapes the read API serves, per project its
 * visibility overview, gaps, and optionally its probes, reasoning cards and scripted runs. Extra fields
 * anywhere are kept and served as sent. `validateFixture` checks the rest and throws a `FixtureError`
 * listing every problem with the path of the bad field (e.g. `projects[0].gaps[3].prompt_text`).
 */
import { readFileSync } from 'node:fs';
import { isRecord } from '../../shared/util';

export type JsonScalar = string | number | boolean | null;

export type FixtureMetric = { label: string; value: JsonScalar; caption?: string };

export type FixtureVisibility = {
  metrics: FixtureMetric[];
  /** Per-engine rows, alerts and anything else: served as sent. */
  [field: string]: unknown;
};

export type FixtureGap = {
  prompt_id: string;
  prompt_ref: string | number;
  prompt_text: string;
  platforms_losing: string[];
  top_competitor: string;
  /** Other fields (e.g. `trend`): served as sent. */
  [field: string]: unknown;
};

export type FixtureProbe = {
  id: string;
  /** The question the result belongs to (the results route filters on it). */
  prompt_id: string;
  /** A key of the project's `reasoning`, or null. */
  reasoning_card_id: string | null;
  [field: string]: unknown;
};

export type FixtureReason = { impact: string; category: string; detail: string };

export type FixtureReasoningCard = { reasons: FixtureReason[]; [field: string]: unknown };

export type FixtureProject = {
  id: string;
  name: string;
  industry: string;
  visibility: FixtureVisibility;
  gaps: FixtureGap[];
  probes?: FixtureProbe[];
  reasoning?: Record<string, FixtureReasoningCard>;
  /**
   * Scripted runs: the Nth `advanceRun` (N = 1, 2, …) applies `runs[N-1]` instead of random drift: its
   * `visibility` and `gaps` replace the project's (what it omits stays), `answers` is the count
   * run.completed carries. Past the last scripted run the project drifts as usual.
   */
  runs?: FixtureRun[];
};

export type FixtureRun = {
  visibility?: FixtureVisibility;
  gaps?: FixtureGap[];
  answers?: number;
};

export type SimulatorFixture = {
  seed?: number;
  projects: FixtureProject[];
};

export class FixtureError extends Error {
  override name = 'FixtureError';
  constructor(
    /** Each issue is "<path of the bad field>: <problem>". */
    readonly issues: readonly string[],
    source?: string,
  ) {
    const shown = issues.slice(0, 20);
    const more = issues.length > shown.length ? `\n  … and ${issues.length - shown.length} more` : '';
    super(`Invalid simulator fixture${source === undefined ? '' : ` ${source}`}:\n  ${shown.join('\n  ')}${more}`);
  }
}

const isFiniteNumber = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value);
const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';
const isScalar = (value: unknown): boolean => value === null || ['string', 'boolean'].includes(typeof value) || isFiniteNumber(value);
const isRef = (value: unknown): boolean => isNonEmptyString(value) || isFiniteNumber(value);
const isStrings = (value: unknown): boolean => Array.isArray(value) && value.every((x) => typeof x === 'string');
const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 0;

const NON_EMPTY = 'must be a non-empty string';

/** Records a problem unless `ok`; says whether it was ok. */
type Need = (ok: boolean, path: string, problem: string) => boolean;

/** The object at `at`, or undefined (with the problem recorded). */
function objectAt(value: unknown, at: string, need: Need, problem = 'must be an object'): Record<string, unknown> | undefined {
  return need(isRecord(value), at, problem) ? (value as Record<string, unknown>) : undefined;
}

/** Each item of the array at `at` with its path (nothing, with the problem recorded, when it is not an array). */
function eachOf(value: unknown, at: string, need: Need, check: (item: unknown, path: string) => void, problem = 'must be an array'): void {
  if (need(Array.isArray(value), at, problem)) (value as unknown[]).forEach((item, i) => check(item, `${at}[${i}]`));
}

/** `record[key]` is a non-empty id not seen before in its list. */
function uniqueId(record: Record<string, unknown>, key: string, at: string, seen: Set<string>, kind: string, need: Need): void {
  const id = record[key];
  if (!need(isNonEmptyString(id), `${at}.${key}`, NON_EMPTY)) return;
  need(!seen.has(id as string), `${at}.${key}`, `duplicates the ${key} "${id as string}" of an earlier ${kind}`);
  seen.add(id as string);
}

function visibilityIssues(visibility: unknown, at: string, need: Need): void {
  const v = objectAt(visibility, at, need, 'must be an object with a "metrics" array');
  if (v === undefined) return;
  eachOf(v['metrics'], `${at}.metrics`, need, (metric, mat) => {
    const m = objectAt(metric, mat, need);
    if (m === undefined) return;
    need(isNonEmptyString(m['label']), `${mat}.label`, NON_EMPTY);
    need('value' in m && isScalar(m['value']), `${mat}.value`, 'must be a string, number, boolean or null');
    if (m['caption'] !== undefined) need(typeof m['caption'] === 'string', `${mat}.caption`, 'must be a string when present');
  });
}

function gapsIssues(gaps: unknown, at: string, need: Need): void {
  const promptIds = new Set<string>();
  eachOf(gaps, at, need, (gap, gat) => {
    const g = objectAt(gap, gat, need);
    if (g === undefined) return;
    uniqueId(g, 'prompt_id', gat, promptIds, 'gap', need);
    need(isRef(g['prompt_ref']), `${gat}.prompt_ref`, 'must be a number or a non-empty string');
    need(isNonEmptyString(g['prompt_text']), `${gat}.prompt_text`, NON_EMPTY);
    need(isStrings(g['platforms_losing']), `${gat}.platforms_losing`, 'must be an array of strings');
    need(typeof g['top_competitor'] === 'string', `${gat}.top_competitor`, 'must be a string');
  });
}

/** Scripted runs: each replaces the visibility and/or gaps it names; `answers` a whole number. */
function runsIssues(runs: unknown, at: string, need: Need): void {
  if (runs === undefined) return;
  const runIssues = (run: unknown, rat: string): void => {
    const r = objectAt(run, rat, need, 'must be an object with "visibility", "gaps" and/or "answers"');
    if (r?.['visibility'] !== undefined) visibilityIssues(r['visibility'], `${rat}.visibility`, need);
    if (r?.['gaps'] !== undefined) gapsIssues(r['gaps'], `${rat}.gaps`, need);
    if (r?.['answers'] !== undefined) need(isCount(r['answers']), `${rat}.answers`, 'must be a whole number >= 0 when present');
  };
  eachOf(runs, at, need, runIssues, 'must be an array of scripted runs when present');
}

/** The reasoning cards (card id → card); returns the ids the probes may name. */
function reasoningIssues(reasoning: unknown, at: string, need: Need): Set<string> {
  const cardIds = new Set<string>();
  if (reasoning === undefined) return cardIds;
  for (const [cardId, card] of Object.entries(objectAt(reasoning, at, need, 'must be an object of card id → card') ?? {})) {
    const cat = `${at}["${cardId}"]`;
    cardIds.add(cardId);
    const c = objectAt(card, cat, need, 'must be an object with a "reasons" array');
    if (c === undefined) continue;
    eachOf(c['reasons'], `${cat}.reasons`, need, (reason, rat) => {
      const r = objectAt(reason, rat, need);
      if (r === undefined) return;
      for (const field of ['impact', 'category', 'detail']) need(typeof r[field] === 'string', `${rat}.${field}`, 'must be a string');
    });
  }
  return cardIds;
}

function probesIssues(probes: unknown, at: string, cardIds: Set<string>, reasoningAt: string, need: Need): void {
  if (probes === undefined) return;
  const probeIds = new Set<string>();
  eachOf(probes, at, need, (probe, rat) => {
    const r = objectAt(probe, rat, need);
    if (r === undefined) return;
    uniqueId(r, 'id', rat, probeIds, 'probe', need);
    need(isNonEmptyString(r['prompt_id']), `${rat}.prompt_id`, NON_EMPTY);
    const card = r['reasoning_card_id'];
    if (!need(card === null || isNonEmptyString(card), `${rat}.reasoning_card_id`, 'must be a non-empty string or null')) return;
    if (typeof card === 'string')
      need(cardIds.has(card), `${rat}.reasoning_card_id`, `names the card "${card}" that is not in ${reasoningAt}`);
  });
}

/** Every problem of a would-be fixture, each as "<path>: <problem>"; empty when it is valid. */
export function fixtureIssues(value: unknown): string[] {
  const issues: string[] = [];
  const need: Need = (ok, path, problem) => {
    if (!ok) issues.push(`${path}: ${problem}`);
    return ok;
  };
  const root = objectAt(value, '(root)', need, 'must be a JSON object with a "projects" array');
  if (root === undefined) return issues;
  if (root['seed'] !== undefined) need(Number.isInteger(root['seed']), 'seed', 'must be an integer when present');
  const projects = root['projects'];
  if (!need(Array.isArray(projects) && projects.length > 0, 'projects', 'must be a non-empty array')) return issues;
  const projectIds = new Set<string>();
  eachOf(projects, 'projects', need, (project, at) => {
    const p = objectAt(project, at, need);
    if (p === undefined) return;
    uniqueId(p, 'id', at, projectIds, 'project', need);
    need(isNonEmptyString(p['name']), `${at}.name`, NON_EMPTY);
    need(typeof p['industry'] === 'string', `${at}.industry`, 'must be a string');
    visibilityIssues(p['visibility'], `${at}.visibility`, need);
    gapsIssues(p['gaps'], `${at}.gaps`, need);
    runsIssues(p['runs'], `${at}.runs`, need);
    const cardIds = reasoningIssues(p['reasoning'], `${at}.reasoning`, need);
    probesIssues(p['probes'], `${at}.probes`, cardIds, `${at}.reasoning`, need);
  });
  return issues;
}

/** Checks a would-be fixture; returns it typed, or throws a `FixtureError` naming every bad field. */
export function validateFixture(value: unknown, source?: string): SimulatorFixture {
  const issues = fixtureIssues(value);
  if (issues.length > 0) throw new FixtureError(issues, source);
  return value as SimulatorFixture;
}

/** Reads and validates a fixture file; errors name the file and the bad field. */
export function loadFixtureFile(file: string): SimulatorFixture {
  let problem = 'cannot be read';
  let parsed: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    problem = 'is not valid JSON';
    parsed = JSON.parse(text);
  } catch (error) {
    throw new FixtureError([`(file): ${problem} (${error instanceof Error ? error.message : String(error)})`], file);
  }
  return validateFixture(parsed, file);
}
