/**
 * One figure's call for a run (docs/DIGEST.md, "The verdict"): the residual of this run's value from the
 * figure's usual level, standardized by what chance explains at this run's sample, is called a change
 * when it is large on its own (|z| ≥ `zSingle`) or when one-sided CUSUMs of the residuals cross `h`
 * (a smaller move that persists). A called change resets the level to the new value; a steady run is
 * averaged into the level (and, for figures whose spread is not known, into the learned spread). Pure.
 */
import type { FigureState } from '../../ports';
import { PRIOR_DISPERSION, PRIOR_MEAN_SD, shareVariance, SINGLE_RUN_Z } from './stats';

/** How a figure varies by chance. */
export type FigureKind =
  /** A proportion of the answers: binomial at the answers behind it. */
  | 'share'
  /** A mean over the answers (average position): one answer's spread, learned, over the answers. */
  | 'mean'
  /** A count (mentions, citations, open gaps): Poisson, times the project's learned dispersion. */
  | 'count'
  /** Anything else: its run-to-run variance, learned, starting from its configured minimum. */
  | 'other';

export interface Thresholds {
  /** |z| a single run's residual must reach. */
  zSingle: number;
  /** One-sided z a kind of gap news must reach (a few one-sided tests a run, against ~18 sides of figures). */
  zCount: number;
  /** CUSUM allowance (in z) and decision limit. */
  k: number;
  h: number;
}

/** The thresholds the digest uses (bench/calibrate.ts measures their false marks and delays). */
export const THRESHOLDS: Thresholds = { zSingle: SINGLE_RUN_Z, zCount: 3.5, k: 0.75, h: 5 };

/** The level averages runs with weight max(1/(runs+1), LEVEL_WEIGHT): a running mean at first, then an EWMA. */
const LEVEL_WEIGHT = 0.1;
/** Pseudo-runs a prior spread counts for, and the most runs a learned spread averages over. */
const PRIOR_RUNS = 4;
const SCALE_MEMORY = 30;

export interface FigureInput {
  key: string;
  kind: FigureKind;
  /** This run's value, in the figure's unit. */
  value: number;
  /** 100 for a share in percent, 1 otherwise. */
  unit: number;
  /** Answers behind the value (null: unknown; a share or mean without it is judged as 'other'). */
  answers: number | null;
  /** The last run's value and answers: the level when the figure has no state yet. */
  previous: number | null;
  previousAnswers: number | null;
  /** An 'other' figure's prior noise (its configured minimum change read as a 95 % half-width). */
  minimum: number;
  /** The smallest |change| that may be called, in the figure's unit (a channel's min-change, a configured minimum). */
  floor: number;
  /** The step the value is reported in (0.1 for "50.5"): rounding adds its variance, step²/12. */
  resolution: number;
}

export interface FigureCall {
  key: string;
  /** 'unjudged': nothing to compare with (first run of the figure). */
  call: 'change' | 'steady' | 'unjudged';
  /** How the change showed: one run beyond `zSingle`, or a CUSUM over `runs` runs. */
  evidence: 'single' | 'persistent' | null;
  /** This run's value minus the figure's usual level; null when unjudged. */
  change: number | null;
  /** The standardized residual. */
  z: number | null;
  /** Normal variation at this run's sample: a single run within ±band is not called. */
  band: number | null;
  /** Runs the change built over (1 for a single run). */
  runs: number;
  /** The state to carry to the next run. */
  next: FigureState;
}

function effectiveKind(input: FigureInput): FigureKind {
  if ((input.kind === 'share' || input.kind === 'mean') && !(input.answers !== null && input.answers > 0)) return 'other';
  return input.kind;
}

/** Until learned, spreads start wide: a project's first runs must not alarm on a spread guessed too small. */
function priorScale(kind: FigureKind, minimum: number): number | undefined {
  if (kind === 'mean') return PRIOR_MEAN_SD ** 2;
  if (kind === 'count') return PRIOR_DISPERSION;
  if (kind === 'other') return (Math.max(minimum, Number.EPSILON) / 1.96) ** 2;
  return undefined;
}

/** The smallest spread a learned scale may fall to (a constant series must not make every move news). */
function scaleFloor(kind: FigureKind, minimum: number): number {
  if (kind === 'mean') return 0.25;
  if (kind === 'count') return 1;
  return (Math.max(minimum, Number.EPSILON) / 1.96) ** 2 / 4;
}

/** Variance of one run's value around the level, at `answers`, before rounding. */
function sampling(kind: FigureKind, level: number, unit: number, answers: number | null, scale: number): number {
  if (kind === 'share') return shareVariance(level / unit, answers ?? 1) * unit * unit;
  if (kind === 'mean') return scale / Math.max(answers ?? 1, 1);
  if (kind === 'count') return scale * Math.max(Math.abs(level), 1);
  return scale;
}

function runVariance(kind: FigureKind, level: number, input: FigureInput, answers: number | null, scale: number): number {
  return sampling(kind, level, input.unit, answers, scale) + input.resolution ** 2 / 12;
}

/** The figure's state before this run: the stored one, or one made from the last run's value. */
function stateBefore(input: FigureInput, kind: FigureKind, stored: FigureState | undefined): FigureState | null {
  if (stored !== undefined) return stored;
  if (input.previous === null) return null;
  const scale = priorScale(kind, input.minimum);
  const levelVar = runVariance(kind, input.previous, input, input.previousAnswers ?? input.answers, scale ?? 0);
  return { level: input.previous, levelVar, up: 0, down: 0, upRuns: 0, downRuns: 0, runs: 1, scale, scaleRuns: 0 };
}

function freshState(input: FigureInput, kind: FigureKind, variance: number, scale: number | undefined, scaleRuns: number): FigureState {
  return { level: input.value, levelVar: variance, up: 0, down: 0, upRuns: 0, downRuns: 0, runs: 1, scale, scaleRuns };
}

/** Averages a steady run into the level and the learned spread. */
function learned(
  before: FigureState,
  input: FigureInput,
  kind: FigureKind,
  variance: number,
  residual: number,
): Pick<FigureState, 'level' | 'levelVar' | 'runs' | 'scale' | 'scaleRuns'> {
  const weight = Math.max(1 / (before.runs + 1), LEVEL_WEIGHT);
  const level = (1 - weight) * before.level + weight * input.value;
  const levelVar = (1 - weight) ** 2 * before.levelVar + weight ** 2 * variance;
  const runs = Math.min(before.runs + 1, 1000);
  if (kind === 'share' || before.scale === undefined) return { level, levelVar, runs, scale: before.scale, scaleRuns: before.scaleRuns };
  // E[residual²] = run variance + level variance: what is left, per answer (mean) or per unit (count), is a sample of the scale.
  const excess = Math.max(0, residual * residual - before.levelVar - input.resolution ** 2 / 12);
  const sample =
    kind === 'mean' ? excess * Math.max(input.answers ?? 1, 1) : kind === 'count' ? excess / Math.max(Math.abs(before.level), 1) : excess;
  const seen = Math.min((before.scaleRuns ?? 0) + PRIOR_RUNS, SCALE_MEMORY);
  const scale = Math.max(scaleFloor(kind, input.minimum), (seen * before.scale + sample) / (seen + 1));
  return { level, levelVar, runs, scale, scaleRuns: Math.min((before.scaleRuns ?? 0) + 1, SCALE_MEMORY) };
}

/** Judges one figure at this run and gives its next state. */
export function judgeFigure(input: FigureInput, stored: FigureState | undefined, thresholds: Thresholds = THRESHOLDS): FigureCall {
  const kind = effectiveKind(input);
  const before = stateBefore(input, kind, stored);
  const prior = priorScale(kind, input.minimum);
  if (before === null) {
    const variance = runVariance(kind, input.value, input, input.answers, prior ?? 0);
    return {
      key: input.key,
      call: 'unjudged',
      evidence: null,
      change: null,
      z: null,
      band: null,
      runs: 0,
      next: freshState(input, kind, variance, prior, 0),
    };
  }
  const scale = before.scale ?? prior ?? 0;
  const variance = runVariance(kind, before.level, input, input.answers, scale);
  const se = Math.sqrt(Math.max(variance + before.levelVar, Number.EPSILON));
  const residual = input.value - before.level;
  const z = residual / se;
  const up = Math.max(0, before.up + z - thresholds.k);
  const down = Math.max(0, before.down - z - thresholds.k);
  const upRuns = up > 0 ? before.upRuns + 1 : 0;
  const downRuns = down > 0 ? before.downRuns + 1 : 0;
  const large = Math.abs(residual) >= input.floor;
  const single = large && Math.abs(z) >= thresholds.zSingle;
  const persistent = large && !single && (up >= thresholds.h || down >= thresholds.h);
  const band = thresholds.zSingle * se;
  if (single || persistent) {
    return {
      key: input.key,
      call: 'change',
      evidence: single ? 'single' : 'persistent',
      change: residual,
      z,
      band,
      runs: single ? 1 : Math.max(1, z > 0 ? upRuns : downRuns),
      next: freshState(
        input,
        kind,
        runVariance(kind, input.value, input, input.answers, scale),
        before.scale ?? prior,
        before.scaleRuns ?? 0,
      ),
    };
  }
  return {
    key: input.key,
    call: 'steady',
    evidence: null,
    change: residual,
    z,
    band,
    runs: 0,
    next: {
      ...before,
      ...learned({ ...before, scale: before.scale ?? prior }, input, kind, variance, residual),
      up,
      down,
      upRuns,
      downRuns,
    },
  };
}
