/**
 * The weekly report's one significance decision (pure), made by the verdict model's pooled tests
 * (../digest/verdict, `judgeShareChange`, `judgeMeanChange`, `judgeCountChange`, `judgeSpreadChange`):
 * a metric's week is its runs POOLED, never its last run alone, and it moved only when this week's pool
 * differs from last week's beyond `WEEKLY_Z` standard errors, since every project and metric of a
 * channel is tested each week (docs/SLACK-APP.md, "Weekly report"):
 *
 * - a share measured on answers: the answer-weighted mean of the week (Σ share·answers / Σ answers),
 *   judged as two proportions at each week's summed answers;
 * - a position measured on answers: two means at those answers (the verdict's prior spread of one answer),
 *   and beyond the label's minimum change;
 * - a count (mentions, gaps…): the mean per run, Poisson over each week's runs, and beyond the minimum;
 * - anything else (or without answer counts): the mean per run, beyond its minimum;
 * - and for every kind, beyond what the runs' own spread says of the two means (√(s₁²/k₁ + s₂²/k₂),
 *   when each week has 2 runs or more): a metric that swings from run to run needs a larger weekly move.
 *
 * A run with 0 answers is no data: it is left out of the pool; a week whose runs all had 0 answers
 * has no pool (the report says "no data all week", never "nothing moved").
 */
import type { SnapshotPoint } from '../ports';
import { configuredMinimum, minimumFor, readMetric, type MetricReading, type NoiseMinimums } from '../digest/noise';
import { judgeCountChange, judgeMeanChange, judgeShareChange, judgeSpreadChange, type PairJudgement } from '../digest/verdict';

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

/** The verdict's sampling test of the two pools, in the metric's unit; null when the kind has none or a count is unknown. */
function samplingJudgement(reading: MetricReading, before: WeekPool, now: WeekPool): PairJudgement | null {
  const answered = before.answers !== null && now.answers !== null;
  if (reading.kind === 'share' && reading.scale !== null && answered) {
    const unit = reading.scale === 'fraction' ? 1 : 100;
    const judged = judgeShareChange(
      {
        before: { share: before.value / unit, answers: before.answers ?? 0 },
        after: { share: now.value / unit, answers: now.answers ?? 0 },
      },
      WEEKLY_Z,
    );
    return { ...judged, delta: judged.delta * unit, band: judged.band * unit };
  }
  if (reading.kind === 'position' && answered)
    return judgeMeanChange(
      { before: { mean: before.value, answers: before.answers ?? 0 }, after: { mean: now.value, answers: now.answers ?? 0 } },
      WEEKLY_Z,
    );
  if (reading.kind === 'count' && before.value >= 0 && now.value >= 0)
    return judgeCountChange({ before: before.value, after: now.value, runs: { before: before.runs, after: now.runs } }, WEEKLY_Z);
  return null;
}

/** Whether `label` moved from last week's pool to this week's. */
export function weeklyVerdict(label: string, before: WeekPool, now: WeekPool, minimums: NoiseMinimums = {}): WeeklyVerdict {
  const reading = readMetric(label, [before.value, now.value]);
  const delta = Math.round((now.value - before.value) * 1e6) / 1e6;
  const base = { label, reading, from: before.value, to: now.value, delta };
  const sampled = configuredMinimum(label, minimums) === undefined ? samplingJudgement(reading, before, now) : null;
  const spread =
    before.spread === null || now.spread === null
      ? null
      : judgeSpreadChange(
          { before: { mean: before.value, spread: before.spread }, after: { mean: now.value, spread: now.spread } },
          WEEKLY_Z,
        );
  // A share judged on its answers needs no minimum; every other figure is also beyond its label's minimum.
  const minimum = sampled !== null && reading.kind === 'share' ? 0 : minimumFor(label, reading.kind, minimums);
  const judged = [sampled, spread].filter((j): j is PairJudgement => j !== null);
  const sampleBand = Math.max(0, ...judged.map((j) => j.band));
  const significant = delta !== 0 && Math.abs(delta) > minimum && judged.every((j) => j.called);
  return {
    ...base,
    threshold: Math.max(minimum, sampleBand),
    basis: sampleBand > minimum ? 'sample' : 'minimum',
    significant,
  };
}
