/**
 * What goes in one project's part of a weekly report (pure): read from the project's snapshot
 * (its run history, current gaps and engines, as the digest stored them) and the baseline the
 * channel's last report left. Nothing here calls the read API: a report costs a few DynamoDB reads.
 *
 * - the week is the 7 days up to the report; a week without runs says so, and a week whose runs all
 *   had 0 answers has no data (never "nothing moved");
 * - a metric's change is this week's runs pooled against last week's (the 7 days before; else the
 *   last run before that), decided by `weeklyVerdict` (./verdict.ts) alone; the project's outcome
 *   follows its significant changes;
 * - the top rival is the one taking most prompts in the week's last run with data (a fact, not a change);
 * - gaps opened and closed, and each engine's change: since the channel's last report (its baseline);
 *   the first report here has no baseline and says so.
 */
import type { ProjectSnapshot, SnapshotGap, SnapshotPoint } from '../ports';
import { changeTone } from '../digest/metric-direction';
import type { NoiseMinimums } from '../digest/noise';
import { historyOf } from '../digest/snapshot';
import type { BaselineGap, WeeklyBaseline } from './ports';
import { WEEK_MS } from './schedule';
import { poolOf, runsWithData, weeklyVerdict, type WeeklyVerdict } from './verdict';

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

/**
 * The week for the project in one word: its significant changes all worse, all better, or both
 * (`mixed`); none (`steady`); `first`: no run with data before the week to compare with; `no-data`:
 * runs, all with 0 answers; `no-runs`: no run this week; `never`: never digested.
 */
export type WeekOutcome = 'worse' | 'better' | 'mixed' | 'steady' | 'first' | 'no-data' | 'no-runs' | 'never';

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
  outcome: WeekOutcome;
  /** Runs this week, with data or not. */
  runs: number;
  /** The last run's `created_at`, when there is one. */
  lastRunAt?: string | undefined;
  runId?: string | undefined;
  /** Every metric of the week pooled against last week's, significant or not. */
  changes: WeeklyVerdict[];
  /** Prompts taken by rivals: last week's last run with data against this week's. */
  rivals: RivalMove[];
  /** The rival taking most prompts in the week's last run with data. */
  topRival: { name: string; prompts: number } | null;
  engines: EngineMove[];
  /** Open gaps now (the snapshot's list; `gapsTruncated`: at least this many). */
  gapsOpen: number;
  gapsTruncated: boolean;
  /** Null on the channel's first report of the project: nothing to compare with. */
  gapChanges: { opened: SnapshotGap[]; closed: BaselineGap[]; leftTop: number } | null;
  /** The lead metric pooled per week (the weekly verdict's pools), oldest first: the portfolio chart's line. */
  lead?: { label: string; weeks: { endMs: number; value: number }[] } | undefined;
}

function between(history: readonly SnapshotPoint[], startMs: number, endMs: number): SnapshotPoint[] {
  return history.filter((p) => {
    const at = Date.parse(p.createdAt);
    return at > startMs && at <= endMs;
  });
}

/** The week's runs and what they are compared with: last week's runs (else the last run before them). */
function weekRuns(history: readonly SnapshotPoint[], window: WeekWindow): { before: SnapshotPoint[]; week: SnapshotPoint[] } {
  const week = between(history, window.startMs, window.endMs);
  const lastWeek = runsWithData(between(history, window.startMs - WEEK_MS, window.startMs));
  const older = runsWithData(history.filter((p) => Date.parse(p.createdAt) <= window.startMs - WEEK_MS)).slice(-1);
  return { before: lastWeek.length > 0 ? lastWeek : older, week };
}

function metricChanges(before: readonly SnapshotPoint[], week: readonly SnapshotPoint[], minimums: NoiseMinimums): WeeklyVerdict[] {
  const changes: WeeklyVerdict[] = [];
  for (const label of new Set(week.flatMap((p) => Object.keys(p.metrics)))) {
    const then = poolOf(label, before);
    const now = poolOf(label, week);
    if (then !== null && now !== null) changes.push(weeklyVerdict(label, then, now, minimums));
  }
  return changes;
}

function outcomeOf(changes: readonly WeeklyVerdict[], compared: boolean): WeekOutcome {
  if (!compared) return 'first';
  const tones = new Set(changes.filter((c) => c.significant).map((c) => changeTone(c.label, c.delta)));
  if (tones.has('worse') && tones.has('better')) return 'mixed';
  if (tones.has('worse')) return 'worse';
  if (tones.has('better')) return 'better';
  return 'steady';
}

function topRival(point: SnapshotPoint | undefined): ProjectWeek['topRival'] {
  const [best] = Object.entries(point?.rivals ?? {})
    .filter(([, prompts]) => prompts > 0)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  return best === undefined ? null : { name: best[0], prompts: best[1] };
}

function rivalMoves(from: SnapshotPoint | undefined, to: SnapshotPoint | undefined): RivalMove[] {
  if (from?.rivals === undefined || to?.rivals === undefined) return [];
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

/** Weeks the portfolio chart looks back over, this one included. */
export const PORTFOLIO_WEEKS = 8;

/** The lead metric (the latest run's first) pooled over each of the last weeks that have it, oldest first. */
function leadByWeek(history: readonly SnapshotPoint[], window: WeekWindow): ProjectWeek['lead'] {
  const label = Object.keys(runsWithData(history).at(-1)?.metrics ?? {})[0];
  if (label === undefined) return undefined;
  const weeks = Array.from({ length: PORTFOLIO_WEEKS }, (_, i) => window.endMs - (PORTFOLIO_WEEKS - 1 - i) * WEEK_MS).flatMap((endMs) => {
    const pool = poolOf(label, between(history, endMs - WEEK_MS, endMs));
    return pool === null ? [] : [{ endMs, value: pool.value }];
  });
  return { label, weeks };
}

/** One project's week. `snapshot` null: the project was never digested. */
export function projectWeek(
  project: { id: string; name: string },
  snapshot: ProjectSnapshot | null,
  baseline: WeeklyBaseline | null,
  window: WeekWindow,
  minimums: NoiseMinimums = {},
): ProjectWeek {
  const base = { projectId: project.id, projectName: project.name, rivals: [], changes: [], engines: [], gapChanges: null, topRival: null };
  if (snapshot === null) return { ...base, outcome: 'never', runs: 0, gapsOpen: 0, gapsTruncated: false };
  const { before, week } = weekRuns(historyOf(snapshot), window);
  const common = {
    ...base,
    runs: week.length,
    lastRunAt: snapshot.lastCreatedAt,
    runId: snapshot.lastRunId,
    gapsOpen: snapshot.gaps.length,
    gapsTruncated: snapshot.gapsTruncated === true,
  };
  if (week.length === 0) return { ...common, outcome: 'no-runs' };
  const withData = runsWithData(week);
  if (withData.length === 0) return { ...common, outcome: 'no-data' };
  const changes = metricChanges(before, withData, minimums);
  return {
    ...common,
    outcome: outcomeOf(changes, before.length > 0),
    changes,
    rivals: rivalMoves(before.at(-1), withData.at(-1)),
    topRival: topRival(withData.at(-1)),
    engines: engineMoves(snapshot, baseline, window),
    gapChanges: gapChanges(snapshot, baseline),
    lead: leadByWeek(historyOf(snapshot), window),
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
