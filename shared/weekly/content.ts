/**
 * What goes in one project's section of a weekly report (pure): read from the project's snapshot
 * (its run history, current gaps and engines, as the digest stored them) and the baseline the
 * channel's last report left. Nothing here calls the read API: a report costs a few DynamoDB reads.
 *
 * - the week is the 7 days up to the report; a week without runs says so;
 * - a metric's change is the week's last run against the last run before the week (else the week's
 *   first run), called only beyond its noise (../digest/noise.ts, as the digest does);
 * - rivals gaining or losing prompts: the same two runs' rival counts (the snapshot history keeps them);
 * - gaps opened and closed, and each engine's change: since the channel's last report (its baseline);
 *   the first report here has no baseline and says so.
 */
import type { ProjectSnapshot, SnapshotGap, SnapshotPoint } from '../ports';
import { beyondNoise, noiseBand, readMetric, type MetricReading, type NoiseBand, type NoiseMinimums } from '../digest/noise';
import { historyOf } from '../digest/snapshot';
import type { BaselineGap, WeeklyBaseline } from './ports';
import { WEEK_MS } from './schedule';

/** Stored prompt texts in a baseline are cut to this (the report shows a few closed gaps, shortly). */
export const BASELINE_TEXT = 80;
/** Gaps kept per baseline (the snapshot keeps at most 500). */
export const BASELINE_MAX_GAPS = 500;

export interface WeekWindow {
  /** Exclusive. */
  startMs: number;
  /** Inclusive: the report's time. */
  endMs: number;
}

export function weekEndingAt(endMs: number): WeekWindow {
  return { startMs: endMs - WEEK_MS, endMs };
}

export interface MetricChange {
  label: string;
  from: number;
  to: number;
  delta: number;
  reading: MetricReading;
  band: NoiseBand;
  significant: boolean;
}

export interface RivalMove {
  name: string;
  from: number;
  to: number;
  delta: number;
}

export interface EngineMove {
  name: string;
  now: number;
  /** null without a baseline figure for this engine. */
  delta: number | null;
}

export interface ProjectWeek {
  projectId: string;
  projectName: string;
  /** `none`: never digested; `quiet`: no run this week; `runs`: runs this week. */
  status: 'none' | 'quiet' | 'runs';
  runs: number;
  /** The last run's `created_at`, when there is one. */
  lastRunAt?: string | undefined;
  runId?: string | undefined;
  changes: MetricChange[];
  rivals: RivalMove[];
  engines: EngineMove[];
  /** Open gaps now (the snapshot's list; `gapsTruncated`: at least this many). */
  gapsOpen: number;
  gapsTruncated: boolean;
  /** Null on the channel's first report of the project: nothing to compare with. */
  gapChanges: { opened: SnapshotGap[]; closed: BaselineGap[]; leftTop: number } | null;
}

function inWindow(point: SnapshotPoint, window: WeekWindow): boolean {
  const at = Date.parse(point.createdAt);
  return at > window.startMs && at <= window.endMs;
}

/** The week's last run and what it is compared with (the last run before the week, else the week's first). */
function weekEnds(history: readonly SnapshotPoint[], window: WeekWindow): { from: SnapshotPoint; to: SnapshotPoint; runs: number } | null {
  const week = history.filter((p) => inWindow(p, window));
  const to = week.at(-1);
  if (to === undefined) return null;
  const before = history.filter((p) => Date.parse(p.createdAt) <= window.startMs).at(-1);
  return { from: before ?? week[0] ?? to, to, runs: week.length };
}

function metricChanges(from: SnapshotPoint, to: SnapshotPoint, minimums: NoiseMinimums): MetricChange[] {
  if (from === to) return [];
  const changes: MetricChange[] = [];
  for (const [label, value] of Object.entries(to.metrics)) {
    const then = Object.hasOwn(from.metrics, label) ? from.metrics[label] : undefined;
    if (typeof then !== 'number' || !Number.isFinite(then) || !Number.isFinite(value)) continue;
    const delta = Math.round((value - then) * 1e6) / 1e6;
    const reading = readMetric(label, [then, value]);
    const band = noiseBand(label, reading, value, to.answers, minimums);
    changes.push({ label, from: then, to: value, delta, reading, band, significant: beyondNoise(delta, band) });
  }
  return changes;
}

function rivalMoves(from: SnapshotPoint, to: SnapshotPoint): RivalMove[] {
  if (from === to || from.rivals === undefined || to.rivals === undefined) return [];
  const before = from.rivals;
  const now = to.rivals;
  const names = new Set([...Object.keys(before), ...Object.keys(now)]);
  const moves: RivalMove[] = [];
  for (const name of names) {
    const a = Object.hasOwn(before, name) ? (before[name] ?? 0) : 0;
    const b = Object.hasOwn(now, name) ? (now[name] ?? 0) : 0;
    if (a !== b) moves.push({ name, from: a, to: b, delta: b - a });
  }
  return moves.sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta) || y.to - x.to || x.name.localeCompare(y.name));
}

/**
 * Each engine's figure now and its change over the week: from the snapshot's per-run trend (the
 * chart's history) when it covers the week, else since the channel's last report (its baseline).
 */
function engineMoves(snapshot: ProjectSnapshot, baseline: WeeklyBaseline | null, window: WeekWindow): EngineMove[] {
  const trend = snapshot.trend ?? [];
  const week = trend.filter((p) => p.atMs > window.startMs && p.atMs <= window.endMs);
  const before = trend.filter((p) => p.atMs <= window.startMs).at(-1) ?? (week.length > 1 ? week[0] : undefined);
  const then = before?.engines ?? baseline?.engines;
  return Object.entries(snapshot.engines ?? {}).map(([name, now]) => {
    const was = then !== undefined && Object.hasOwn(then, name) ? then[name] : undefined;
    return { name, now, delta: typeof was === 'number' ? Math.round((now - was) * 1e6) / 1e6 : null };
  });
}

function gapChanges(snapshot: ProjectSnapshot, baseline: WeeklyBaseline | null): ProjectWeek['gapChanges'] {
  if (baseline === null) return null;
  const before = new Set(baseline.gaps.map((g) => g.prompt_id));
  const now = new Set(snapshot.gaps.map((g) => g.prompt_id));
  const gone = baseline.gaps.filter((g) => !now.has(g.prompt_id));
  // A gap missing from a list that filled its page may only have left the top N: not called closed.
  const truncated = snapshot.gapsTruncated === true;
  return {
    opened: baseline.gapsTruncated ? [] : snapshot.gaps.filter((g) => !before.has(g.prompt_id)),
    closed: truncated ? [] : gone,
    leftTop: truncated ? gone.length : 0,
  };
}

/** One project's week. `snapshot` null: the project was never digested. */
export function projectWeek(
  project: { id: string; name: string },
  snapshot: ProjectSnapshot | null,
  baseline: WeeklyBaseline | null,
  window: WeekWindow,
  minimums: NoiseMinimums = {},
): ProjectWeek {
  const base = { projectId: project.id, projectName: project.name, rivals: [], changes: [], engines: [], gapChanges: null };
  if (snapshot === null) return { ...base, status: 'none', runs: 0, gapsOpen: 0, gapsTruncated: false };
  const ends = weekEnds(historyOf(snapshot), window);
  const common = {
    ...base,
    lastRunAt: snapshot.lastCreatedAt,
    runId: snapshot.lastRunId,
    gapsOpen: snapshot.gaps.length,
    gapsTruncated: snapshot.gapsTruncated === true,
  };
  if (ends === null) return { ...common, status: 'quiet', runs: 0 };
  return {
    ...common,
    status: 'runs',
    runs: ends.runs,
    changes: metricChanges(ends.from, ends.to, minimums),
    rivals: rivalMoves(ends.from, ends.to),
    engines: engineMoves(snapshot, baseline, window),
    gapChanges: gapChanges(snapshot, baseline),
  };
}

/** What this report leaves for the channel's next one. */
export function baselineOf(projectId: string, snapshot: ProjectSnapshot | null, atMs: number): WeeklyBaseline {
  return {
    projectId,
    atMs,
    ...(snapshot === null ? {} : { runId: snapshot.lastRunId }),
    gaps: (snapshot?.gaps ?? []).slice(0, BASELINE_MAX_GAPS).map((g) => ({
      prompt_id: g.prompt_id,
      prompt_ref: g.prompt_ref,
      prompt_text: Array.from(g.prompt_text).slice(0, BASELINE_TEXT).join(''),
    })),
    gapsTruncated: snapshot?.gapsTruncated === true || (snapshot?.gaps.length ?? 0) > BASELINE_MAX_GAPS,
    engines: { ...(snapshot?.engines ?? {}) },
  };
}
