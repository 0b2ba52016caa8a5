/**
 * The per-project snapshot kept between digests (`snapshot#<project id>`), and pure diffs against it.
 *
 * The snapshot stays small (DynamoDB items are capped at 400 KB): numeric metric values only, at most
 * `SNAPSHOT_MAX_METRICS` metrics and `SNAPSHOT_MAX_GAPS` gaps, texts cut to `SNAPSHOT_MAX_TEXT` characters.
 */
import type { Gap, Scalar, VisibilityOverview } from '../read-api-types';

export const SNAPSHOT_MAX_GAPS = 500;
export const SNAPSHOT_MAX_METRICS = 100;
/** Stored texts (prompt text, string prompt_ref, metric labels) are cut to this many UTF-16 code units. */
export const SNAPSHOT_MAX_TEXT = 300;

export interface SnapshotGap {
  prompt_id: string;
  prompt_ref: Scalar;
  prompt_text: string;
}

export interface ProjectSnapshot {
  projectId: string;
  /** `created_at` of the run.completed event the snapshot was taken from. */
  lastCreatedAt: string;
  lastRunId: string;
  /** Numeric headline values by metric label (see `parseNumericValue`). */
  metrics: Record<string, number>;
  /** Gaps in API order (worst first), de-duplicated by prompt_id. */
  gaps: SnapshotGap[];
}

/** The run a snapshot is taken from (from the run.completed event). */
export interface SnapshotRun {
  projectId: string;
  runId: string;
  /** The event's `created_at`. */
  createdAt: string;
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
  /** Previous gaps whose prompt_id is no longer in the current list, in previous order. Empty on the first digest. */
  resolvedGaps: SnapshotGap[];
}

const NUMERIC = /^[+\-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$/;

/**
 * The numeric value of a metric, or null. What counts as numeric:
 * - a finite JSON number;
 * - a string that, after trimming, is a plain decimal number: optional sign (`+`, `-` or `−`), digits
 *   with optional comma thousands separators in groups of three (`1,234,567`), optional decimal part
 *   (`.5`, `42.25`), and optionally a trailing percent sign (`42%`, `42 %`), which is dropped so that
 *   "42%" counts as 42 and deltas are in percentage points.
 * Everything else is not numeric: booleans, null, empty strings, other units or currencies (`42 ms`,
 * `$5`), exponents (`1e3`), suffixes (`1.2k`), bad grouping (`1,23`), European decimals (`1.234,5`),
 * `NaN`, `Infinity`, hex.
 */
export function parseNumericValue(value: Scalar): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  let text = value.trim();
  if (text.endsWith('%')) text = text.slice(0, -1).trimEnd();
  if (text.length === 0 || !NUMERIC.test(text) || !/\d/.test(text)) return null;
  const parsed = Number(text.replace(/,/g, '').replace('\u2212', '-'));
  return Number.isFinite(parsed) ? parsed : null;
}

function cut(text: string): string {
  if (text.length <= SNAPSHOT_MAX_TEXT) return text;
  // Cut between code points, never inside a surrogate pair (full grapheme safety is the renderer's job).
  let end = SNAPSHOT_MAX_TEXT;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** Builds the snapshot to store after a digest of `run`. Pure; bounded in size (see module doc). */
export function buildSnapshot(run: SnapshotRun, overview: VisibilityOverview, gaps: readonly Gap[]): ProjectSnapshot {
  const metrics: [string, number][] = [];
  const seenLabels = new Set<string>();
  for (const metric of overview.metrics) {
    if (metrics.length >= SNAPSHOT_MAX_METRICS) break;
    const label = cut(metric.label);
    if (seenLabels.has(label)) continue;
    seenLabels.add(label);
    const value = parseNumericValue(metric.value);
    if (value !== null) metrics.push([label, value]);
  }

  const storedGaps: SnapshotGap[] = [];
  const seenIds = new Set<string>();
  for (const gap of gaps) {
    if (storedGaps.length >= SNAPSHOT_MAX_GAPS) break;
    if (seenIds.has(gap.prompt_id)) continue;
    seenIds.add(gap.prompt_id);
    storedGaps.push({
      prompt_id: gap.prompt_id,
      prompt_ref: typeof gap.prompt_ref === 'string' ? cut(gap.prompt_ref) : gap.prompt_ref,
      prompt_text: cut(gap.prompt_text),
    });
  }

  return {
    projectId: run.projectId,
    lastCreatedAt: run.createdAt,
    lastRunId: run.runId,
    // fromEntries defines own properties, so a label like "__proto__" is stored as data.
    metrics: Object.fromEntries(metrics),
    gaps: storedGaps,
  };
}

function roundDelta(delta: number): number {
  const rounded = Math.round(delta * 1e6) / 1e6;
  return Object.is(rounded, -0) ? 0 : rounded;
}

/**
 * Compares the current overview and gaps with the previous snapshot (null on a project's first digest).
 * Labels and prompt ids are compared as stored: labels longer than `SNAPSHOT_MAX_TEXT` match on their
 * first `SNAPSHOT_MAX_TEXT` characters.
 *
 * "Resolved" means "not in the current gaps list": the list is the first page of the API's gaps
 * (page_size), so a gap that merely dropped off that page also counts as resolved.
 */
export function diffSnapshots(
  previous: ProjectSnapshot | null,
  current: { overview: VisibilityOverview; gaps: readonly Gap[] },
): SnapshotDiff {
  const metricDeltas = new Map<string, number | null>();
  for (const metric of current.overview.metrics) {
    if (metricDeltas.has(metric.label)) continue;
    let delta: number | null = null;
    if (previous !== null) {
      const key = cut(metric.label);
      const before = Object.hasOwn(previous.metrics, key) ? previous.metrics[key] : undefined;
      const now = parseNumericValue(metric.value);
      if (typeof before === 'number' && Number.isFinite(before) && now !== null) delta = roundDelta(now - before);
    }
    metricDeltas.set(metric.label, delta);
  }

  if (previous === null) return { firstDigest: true, metricDeltas, newGaps: [], resolvedGaps: [] };

  const previousIds = new Set(previous.gaps.map((g) => g.prompt_id));
  const currentIds = new Set(current.gaps.map((g) => g.prompt_id));
  const newGaps: Gap[] = [];
  const seenNew = new Set<string>();
  for (const gap of current.gaps) {
    if (previousIds.has(gap.prompt_id) || seenNew.has(gap.prompt_id)) continue;
    seenNew.add(gap.prompt_id);
    newGaps.push(gap);
  }
  const resolvedGaps = previous.gaps.filter((g) => !currentIds.has(g.prompt_id));
  return { firstDigest: false, metricDeltas, newGaps, resolvedGaps };
}
