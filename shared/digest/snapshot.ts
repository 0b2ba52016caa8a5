/**
 * The per-project snapshot kept between digests (`snapshot#<project id>`), and pure comparisons with it.
 *
 * The snapshot stays small (DynamoDB items are capped at 400 KB): numeric metric values only, at most
 * `SNAPSHOT_MAX_METRICS` metrics and `SNAPSHOT_MAX_GAPS` gaps, texts cut to `SNAPSHOT_MAX_TEXT` characters,
 * and a history of the last `SNAPSHOT_HISTORY_RUNS` runs' first `SNAPSHOT_HISTORY_METRICS` metrics.
 */
import type { ProjectSnapshot, RunMark, SnapshotGap, SnapshotPoint, VerdictState } from '../ports';
import type { Gap, VisibilityOverview } from '../read-api-types';
import { gapTrend } from './gap-trend';
import { parseNumericValue } from './numeric';
import { rivalRecord, SNAPSHOT_MAX_GAP_ENGINES } from './rivals';
import { rowName, rowPrimaryValue } from './rows';

export { parseNumericValue } from './numeric';
export type { ProjectSnapshot, SnapshotGap, SnapshotPoint } from '../ports';

export const SNAPSHOT_MAX_GAPS = 500;
export const SNAPSHOT_MAX_METRICS = 100;
/** Stored texts (prompt text, string prompt_ref, metric labels) are cut to this many UTF-16 code units. */
export const SNAPSHOT_MAX_TEXT = 300;
/** Runs kept in `history` (the newest included): enough for a sparkline and a week of daily runs. */
export const SNAPSHOT_HISTORY_RUNS = 12;
/** Metrics per history point: the headline ones (first in API order). */
export const SNAPSHOT_HISTORY_METRICS = 10;

/** "vs last week" uses the history point closest to 7 days before the run, if it is 5 to 9 days old. */
const WEEK_MS = 7 * 24 * 3600 * 1000;
const WEEK_TOLERANCE_MS = 2 * 24 * 3600 * 1000;

/** The run a snapshot is taken from (from the run.completed event). */
export interface SnapshotRun {
  projectId: string;
  runId: string;
  /** The event's `created_at`. */
  createdAt: string;
  /** page_size of the gaps read (with `rawGapCount`, tells whether the list was truncated). */
  pageSize?: number | undefined;
  /** Gap entries on the page, unreadable ones and duplicates included; default: `gaps.length`. */
  rawGapCount?: number | undefined;
  /** The run's answer count (run.completed `answers`), kept for the noise of later comparisons. */
  answers?: number | null | undefined;
}

export interface SnapshotDiff {
  /** True when there is no previous snapshot: no deltas, no new/resolved lists. */
  firstDigest: boolean;
  /**
   * For every metric label of the current overview (first occurrence of a label wins): the change of its
   * numeric value since the previous snapshot, or null when either side is not numeric, the label is
   * new, or this is the first digest. Never NaN. Rounded to 6 decimals to drop float noise.
   */
  metricDeltas: Map<string, number | null>;
  /** Current gaps whose prompt_id was not in the previous snapshot, in API order. Empty on the first digest. */
  newGaps: Gap[];
  /** Gaps in both lists that got worse: the service says so (trend), or more engines lose them now. */
  worseningGaps: Gap[];
  /** Previous gaps absent from a complete current list: really resolved. */
  resolvedGaps: SnapshotGap[];
  /** Previous gaps absent from a truncated current list: they left the top N, they are not resolved. */
  leftTopGaps: SnapshotGap[];
  /** The history point used for "vs last week", or null when none is 5 to 9 days older than the run. */
  weekAgo: SnapshotPoint | null;
  /** Change of each metric since `weekAgo` (null where unknown), keyed like `metricDeltas`. */
  weekDeltas: Map<string, number | null>;
  /** Values of each numeric metric over the stored runs plus this one, oldest first. */
  series: Map<string, number[]>;
  /** Change of each engine's main figure by engine name (only engines known both times). */
  engineDeltas: Map<string, number>;
}

export interface DiffCurrent {
  overview: VisibilityOverview;
  gaps: readonly Gap[];
  /** The run's created_at (for "vs last week"); without it there is no week comparison. */
  createdAt?: string | undefined;
  /** True when the current gaps list filled its page (see `isTruncated`). */
  truncated?: boolean | undefined;
}

/** A page that came back full may have more behind it: treat it as truncated. */
export function isTruncated(rawCount: number, pageSize: number | undefined): boolean {
  return pageSize !== undefined && pageSize > 0 && rawCount >= pageSize;
}

function cut(text: string): string {
  if (text.length <= SNAPSHOT_MAX_TEXT) return text;
  // Cut between code points, never inside a surrogate pair (full grapheme safety is the renderer's job).
  let end = SNAPSHOT_MAX_TEXT;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** Numeric values by stored label, first occurrence wins, at most `max` labels. */
function numericMetrics(overview: VisibilityOverview, max: number): Record<string, number> {
  const metrics: [string, number][] = [];
  const seenLabels = new Set<string>();
  for (const metric of overview.metrics) {
    if (metrics.length >= max) break;
    const label = cut(metric.label);
    if (seenLabels.has(label)) continue;
    seenLabels.add(label);
    const value = parseNumericValue(metric.value);
    if (value !== null) metrics.push([label, value]);
  }
  // fromEntries defines own properties, so a label like "__proto__" is stored as data.
  return Object.fromEntries(metrics);
}

function storedGaps(gaps: readonly Gap[]): SnapshotGap[] {
  const stored: SnapshotGap[] = [];
  const seenIds = new Set<string>();
  for (const gap of gaps) {
    if (stored.length >= SNAPSHOT_MAX_GAPS) break;
    if (seenIds.has(gap.prompt_id)) continue;
    seenIds.add(gap.prompt_id);
    stored.push({
      prompt_id: gap.prompt_id,
      prompt_ref: typeof gap.prompt_ref === 'string' ? cut(gap.prompt_ref) : gap.prompt_ref,
      prompt_text: cut(gap.prompt_text),
      platforms_losing: gap.platforms_losing.slice(0, SNAPSHOT_MAX_GAP_ENGINES).map(cut),
      top_competitor: cut(gap.top_competitor),
    });
  }
  return stored;
}

/** Each engine's main figure by name (first row of a name wins). */
export function engineFigures(engines: VisibilityOverview['engines']): Record<string, number> {
  const figures = new Map<string, number>();
  for (const row of engines) {
    const name = rowName(row);
    const primary = rowPrimaryValue(row);
    if (name === null || primary === null || figures.has(cut(name)) || figures.size >= SNAPSHOT_MAX_METRICS) continue;
    figures.set(cut(name), primary.value);
  }
  return Object.fromEntries(figures);
}

function engineChanges(previous: ProjectSnapshot | null, engines: VisibilityOverview['engines']): Map<string, number> {
  const deltas = new Map<string, number>();
  const before = previous?.engines;
  if (before === undefined) return deltas;
  for (const [name, now] of Object.entries(engineFigures(engines))) {
    const then = Object.hasOwn(before, name) ? before[name] : undefined;
    if (typeof then === 'number' && Number.isFinite(then)) deltas.set(name, roundDelta(now - then));
  }
  return deltas;
}

/** The stored history of `previous` (a pre-v2 snapshot counts as one point), oldest first. */
export function historyOf(previous: ProjectSnapshot | null): SnapshotPoint[] {
  if (previous === null) return [];
  if (previous.history !== undefined) return previous.history;
  return [{ createdAt: previous.lastCreatedAt, runId: previous.lastRunId, metrics: previous.metrics }];
}

/**
 * What the verdict made of the run (shared/digest/verdict): its state to carry on, whether the run was too
 * thin to judge, and the digest's mark and headline of it.
 */
export interface SnapshotVerdict {
  state: VerdictState;
  lowData: boolean;
  mark: RunMark;
  headline: string;
}

/**
 * Builds the snapshot to store after a digest of `run`. Pure; bounded in size (see module doc).
 * Pass the `previous` snapshot to carry the history on (without it the history starts again here).
 * A run too thin to judge (`verdict.lowData`) is only recorded in the history (its answers count
 * towards the project's usual); the figures, gaps and verdict state of the last judged run stay the
 * comparison for the next one.
 */
export function buildSnapshot(
  run: SnapshotRun,
  overview: VisibilityOverview,
  gaps: readonly Gap[],
  previous: ProjectSnapshot | null = null,
  verdict?: SnapshotVerdict,
): ProjectSnapshot {
  const lowData = verdict?.lowData === true;
  const judged =
    verdict === undefined
      ? {}
      : { verdict: verdict.state, lastVerdict: { runId: run.runId, mark: verdict.mark, headline: verdict.headline } };
  const point: SnapshotPoint = {
    createdAt: run.createdAt,
    runId: run.runId,
    metrics: numericMetrics(overview, SNAPSHOT_HISTORY_METRICS),
    ...(typeof run.answers === 'number' && Number.isFinite(run.answers) ? { answers: run.answers } : {}),
    rivals: rivalRecord(storedGaps(gaps)),
    ...(lowData ? { lowData: true } : {}),
  };
  const earlier = historyOf(previous).filter((p) => p.runId !== run.runId);
  const history = [...earlier, point].slice(-SNAPSHOT_HISTORY_RUNS);
  if (lowData && previous !== null) return { ...previous, lastCreatedAt: run.createdAt, lastRunId: run.runId, history, ...judged };
  return {
    projectId: run.projectId,
    lastCreatedAt: run.createdAt,
    lastRunId: run.runId,
    metrics: numericMetrics(overview, SNAPSHOT_MAX_METRICS),
    gaps: storedGaps(gaps),
    gapsTruncated: isTruncated(run.rawGapCount ?? gaps.length, run.pageSize),
    ...(run.pageSize !== undefined ? { pageSize: run.pageSize } : {}),
    history,
    engines: engineFigures(overview.engines),
    ...judged,
  };
}

function roundDelta(delta: number): number {
  const rounded = Math.round(delta * 1e6) / 1e6;
  return Object.is(rounded, -0) ? 0 : rounded;
}

/** Change of each current metric since `before` (null where either side is not numeric). */
function deltasSince(overview: VisibilityOverview, before: Record<string, number> | null): Map<string, number | null> {
  const deltas = new Map<string, number | null>();
  for (const metric of overview.metrics) {
    if (deltas.has(metric.label)) continue;
    let delta: number | null = null;
    if (before !== null) {
      const key = cut(metric.label);
      const then = Object.hasOwn(before, key) ? before[key] : undefined;
      const now = parseNumericValue(metric.value);
      if (typeof then === 'number' && Number.isFinite(then) && now !== null) delta = roundDelta(now - then);
    }
    deltas.set(metric.label, delta);
  }
  return deltas;
}

/** The history point closest to 7 days before `createdAt`, if one is 5 to 9 days older. */
export function pointAWeekBefore(history: readonly SnapshotPoint[], createdAt: string | undefined): SnapshotPoint | null {
  const now = createdAt === undefined ? Number.NaN : Date.parse(createdAt);
  if (!Number.isFinite(now)) return null;
  let best: SnapshotPoint | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const point of history) {
    if (point.lowData === true) continue;
    const distance = Math.abs(now - Date.parse(point.createdAt) - WEEK_MS);
    if (distance <= WEEK_TOLERANCE_MS && distance < bestDistance) {
      best = point;
      bestDistance = distance;
    }
  }
  return best;
}

function seriesOf(history: readonly SnapshotPoint[], overview: VisibilityOverview): Map<string, number[]> {
  const series = new Map<string, number[]>();
  for (const metric of overview.metrics) {
    const now = parseNumericValue(metric.value);
    if (series.has(metric.label) || now === null) continue;
    const key = cut(metric.label);
    const past = history.flatMap((p) =>
      p.lowData !== true && Object.hasOwn(p.metrics, key) && typeof p.metrics[key] === 'number' ? [p.metrics[key]] : [],
    );
    series.set(metric.label, [...past, now]);
  }
  return series;
}

/** Current gaps (first of each prompt_id) not in `previous`, and those in both that got worse. */
function gapChanges(previous: ProjectSnapshot, gaps: readonly Gap[]): { newGaps: Gap[]; worseningGaps: Gap[] } {
  const before = new Map(previous.gaps.map((g) => [g.prompt_id, g]));
  const seen = new Set<string>();
  const newGaps: Gap[] = [];
  const worseningGaps: Gap[] = [];
  for (const gap of gaps) {
    if (seen.has(gap.prompt_id)) continue;
    seen.add(gap.prompt_id);
    const then = before.get(gap.prompt_id);
    if (then === undefined) newGaps.push(gap);
    else if (gapTrend(gap) === 'worse' || gap.platforms_losing.length > (then.platforms_losing?.length ?? Number.POSITIVE_INFINITY))
      worseningGaps.push(gap);
  }
  return { newGaps, worseningGaps };
}

/**
 * Compares the current overview and gaps with the previous snapshot (null on a project's first digest).
 * Labels and prompt ids are compared as stored: labels longer than `SNAPSHOT_MAX_TEXT` match on their
 * first `SNAPSHOT_MAX_TEXT` characters.
 *
 * A previous gap missing from the current list is "resolved" only when the current list is complete;
 * when it filled its page (`current.truncated`), the gap merely "left the top N".
 */
export function diffSnapshots(previous: ProjectSnapshot | null, current: DiffCurrent): SnapshotDiff {
  const history = historyOf(previous);
  const weekAgo = pointAWeekBefore(history, current.createdAt);
  const common = {
    metricDeltas: deltasSince(current.overview, previous?.metrics ?? null),
    weekAgo,
    weekDeltas: deltasSince(current.overview, weekAgo?.metrics ?? null),
    series: seriesOf(history, current.overview),
    engineDeltas: engineChanges(previous, current.overview.engines),
  };
  if (previous === null) return { firstDigest: true, ...common, newGaps: [], worseningGaps: [], resolvedGaps: [], leftTopGaps: [] };

  const currentIds = new Set(current.gaps.map((g) => g.prompt_id));
  const gone = previous.gaps.filter((g) => !currentIds.has(g.prompt_id));
  const truncated = current.truncated === true;
  return {
    firstDigest: false,
    ...common,
    ...gapChanges(previous, current.gaps),
    resolvedGaps: truncated ? [] : gone,
    leftTopGaps: truncated ? gone : [],
  };
}
