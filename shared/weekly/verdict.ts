/**
 * The weekly report's one significance decision (pure), built on the digest's noise primitives
 * (../digest/noise.ts): a metric's week is its runs POOLED, never its last run alone, and it moved
 * only when this week's pool differs from last week's beyond a strict threshold, since every project
 * and metric of a channel is tested each week (docs/SLACK-APP.md, "Weekly report"):
 *
 * - a share measured on answers: the answer-weighted mean of the week (Σ share·answers / Σ answers),
 *   its standard error √(se₁² + se₂²) from each pool's Agresti–Coull half-width at its summed answers;
 *   a move when |Δ| ≥ `WEEKLY_Z` standard errors;
 * - a count (mentions, gaps…): the mean per run, its standard error the Poisson one (√(mean/runs) per
 *   week); a move when |Δ| ≥ `WEEKLY_Z` standard errors and beyond the label's minimum change;
 * - anything else (positions, a share without answer counts): the mean per run, beyond its minimum;
 * - and for every kind, beyond `WEEKLY_Z` times what the runs' own spread says of the two means
 *   (√(s₁²/k₁ + s₂²/k₂), when each week has 2 runs or more): a metric that swings from run to run
 *   needs a larger weekly move.
 *
 * A run with 0 answers is no data: it is left out of the pool; a week whose runs all had 0 answers
 * has no pool (the report says "no data all week", never "nothing moved").
 */
import type { SnapshotPoint } from '../ports';
import { CONFIDENCE, noiseBand, proportionHalfWidth, readMetric, type MetricReading, type NoiseMinimums } from '../digest/noise';

/** Standard errors a weekly move must exceed: about 1 false call in 2,000 tests (two-sided normal). */
export const WEEKLY_Z = 3.5;

/** One metric over one week's runs that had data. */
export interface WeekPool {
  /** The answer-weighted mean when every run has its answer count, else the mean per run. */
  value: number;
  /** Σ answers of the pooled runs; null when a run's count is unknown. */
  answers: number | null;
  runs: number;
  /** The variance of the mean from the runs' own spread (s² / runs); null with fewer than 2 runs. */
  spread: number | null;
}

export interface WeeklyVerdict {
  label: string;
  reading: MetricReading;
  from: number;
  to: number;
  delta: number;
  /** The change a move must exceed (in the metric's unit). */
  threshold: number;
  /** How the threshold was set: sampling error at the pooled answers, or the label's minimum. */
  basis: 'sample' | 'minimum';
  significant: boolean;
}

/** The runs of a week that carry data: a run that says it had 0 answers is no data. */
export function runsWithData(points: readonly SnapshotPoint[]): SnapshotPoint[] {
  return points.filter((p) => p.answers !== 0);
}

/** One metric pooled over `points` (runs with data), or null when none of them has it. */
export function poolOf(label: string, points: readonly SnapshotPoint[]): WeekPool | null {
  const withMetric = runsWithData(points).filter((p) => Object.hasOwn(p.metrics, label) && Number.isFinite(p.metrics[label]));
  if (withMetric.length === 0) return null;
  const values = withMetric.map((p) => p.metrics[label] ?? 0);
  const runs = values.length;
  const mean = values.reduce((s, v) => s + v, 0) / runs;
  const spread = runs < 2 ? null : values.reduce((s, v) => s + (v - mean) ** 2, 0) / (runs - 1) / runs;
  const counted = withMetric.every((p) => typeof p.answers === 'number' && p.answers > 0);
  if (!counted) return { value: mean, answers: null, runs, spread };
  const answers = withMetric.reduce((s, p) => s + (p.answers ?? 0), 0);
  return { value: withMetric.reduce((s, p) => s + (p.metrics[label] ?? 0) * (p.answers ?? 0), 0) / answers, answers, runs, spread };
}

/** What the runs' own spread says a change of the means may be by chance (0 when a week has fewer than 2 runs). */
function spreadThreshold(before: WeekPool, now: WeekPool): number {
  return before.spread === null || now.spread === null ? 0 : WEEKLY_Z * Math.sqrt(before.spread + now.spread);
}

/** Standard error of a pooled share (in its unit), from the noise model's half-width at `CONFIDENCE`. */
function shareError(pool: WeekPool, unit: number): number {
  return (proportionHalfWidth(pool.value / unit, pool.answers ?? 0) * unit) / CONFIDENCE.z;
}

/** Whether `label` moved from last week's pool to this week's. */
export function weeklyVerdict(label: string, before: WeekPool, now: WeekPool, minimums: NoiseMinimums = {}): WeeklyVerdict {
  const reading = readMetric(label, [before.value, now.value]);
  const delta = Math.round((now.value - before.value) * 1e6) / 1e6;
  const band = noiseBand(label, reading, now.value, now.answers, minimums);
  const base = { label, reading, from: before.value, to: now.value, delta };
  const spread = spreadThreshold(before, now);
  if (band.basis === 'sample' && before.answers !== null && now.answers !== null) {
    const unit = reading.scale === 'fraction' ? 1 : 100;
    const threshold = Math.max(WEEKLY_Z * Math.hypot(shareError(before, unit), shareError(now, unit)), spread);
    return { ...base, threshold, basis: 'sample', significant: Math.abs(delta) >= threshold && delta !== 0 };
  }
  // Counts vary by chance too: a mean of Poisson counts over the week's runs.
  const poisson =
    reading.kind === 'count' && before.value >= 0 && now.value >= 0
      ? WEEKLY_Z * Math.sqrt(before.value / before.runs + now.value / now.runs)
      : 0;
  const sampled = Math.max(poisson, spread);
  const threshold = Math.max(band.halfWidth, sampled);
  return { ...base, threshold, basis: sampled > band.halfWidth ? 'sample' : 'minimum', significant: Math.abs(delta) > threshold };
}
