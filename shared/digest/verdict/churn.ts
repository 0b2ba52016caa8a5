/**
 * Gap news judged against the project's usual churn (docs/DIGEST.md, "Gap news"): each kind of news
 * (prompts a rival took, gaps worse, gaps resolved) is measured in engine losses (a prompt lost on four
 * engines weighs four) and called only when this run's amount is improbable under the project's usual
 * amount per run: a Poisson in lumps of the learned dispersion φ (var/mean), P(X ≥ x/φ | mean/φ),
 * read as a one-sided z against `zSingle`. Steady runs teach the usual amount. Pure.
 */
import type { ChurnState } from '../../ports';
import { poissonUpperTail, zOfTail } from './stats';

export type ChurnKind = 'taken' | 'worse' | 'resolved';

/** A new project starts from half an engine loss per run (variance as Poisson), worth a few runs. */
const PRIOR: ChurnState = { mean: 0.5, meanSquare: 0.75, runs: 3 };
/** Runs a usual amount averages over at most. */
const MEMORY = 30;
/** A usual amount below this still leaves room for chance (one new gap on two engines is not news). */
const MEAN_FLOOR = 0.2;

export interface ChurnCall {
  /** The amount, in engine losses. */
  amount: number;
  /** One-sided z of the amount under the usual churn. */
  z: number;
  called: boolean;
}

/** The usual churn of a kind, from the stored state or the prior. */
export function usualChurn(stored: ChurnState | undefined): ChurnState {
  return stored ?? PRIOR;
}

/**
 * How improbable `amount` engine losses are for this kind of news, over `span` runs (more than one when
 * the runs in between were too thin to judge: their churn shows now).
 */
export function judgeChurn(amount: number, usual: ChurnState, threshold: number, large: boolean, span = 1): ChurnCall {
  if (amount <= 0) return { amount, z: 0, called: false };
  const mean = Math.max(usual.mean, MEAN_FLOOR) * Math.max(1, span);
  const variance = Math.max(usual.meanSquare - usual.mean * usual.mean, 0);
  const dispersion = Math.max(1, variance / mean);
  const z = zOfTail(poissonUpperTail(amount / dispersion, mean / dispersion));
  return { amount, z, called: large && z >= threshold };
}

/** The usual churn after a steady run with `amount` engine losses of this kind. */
export function learnChurn(usual: ChurnState, amount: number): ChurnState {
  const runs = Math.min(usual.runs + 1, MEMORY);
  const weight = 1 / runs;
  return {
    mean: (1 - weight) * usual.mean + weight * amount,
    meanSquare: (1 - weight) * usual.meanSquare + weight * amount * amount,
    runs,
  };
}
