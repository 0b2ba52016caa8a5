/**
 * The statistics the verdict stands on (docs/DIGEST.md, "The verdict"): the normal tail and its inverse,
 * the Poisson upper tail, the sampling variance of a share, and the pairwise tests the weekly report
 * judges a week's pooled runs with (shares, means, counts, and the runs' own spread). Pure; no state.
 */

/** One-sided upper tail of the standard normal, P(Z ≥ z) (Abramowitz–Stegun 7.1.26 on erfc; |error| < 1.5e-7). */
export function normalTail(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const half = 0.5 * poly * Math.exp(-x * x);
  return z >= 0 ? half : 1 - half;
}

/** The z with P(Z ≥ z) = p (Acklam's rational approximation of Φ⁻¹(1 − p), relative error < 1.2e-9), for 0 < p < 1. */
export function normalQuantileUpper(p: number): number {
  if (!(p > 0)) return Number.POSITIVE_INFINITY;
  if (!(p < 1)) return Number.NEGATIVE_INFINITY;
  const q = 1 - p;
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (r: number): number =>
    (((((c[0]! * r + c[1]!) * r + c[2]!) * r + c[3]!) * r + c[4]!) * r + c[5]!) / ((((d[0]! * r + d[1]!) * r + d[2]!) * r + d[3]!) * r + 1);
  if (q < 0.02425) return tail(Math.sqrt(-2 * Math.log(q)));
  if (q > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - q)));
  const r = (q - 0.5) * (q - 0.5);
  const x =
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * (q - 0.5)) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
  return x;
}

function logGamma(x: number): number {
  // Lanczos (g = 7, n = 9).
  const g = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const y = x - 1;
  let sum = g[0]!;
  for (let i = 1; i < 9; i += 1) sum += g[i]! / (y + i);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(sum);
}

/**
 * P(X ≥ k) for X ~ Poisson(λ), continuous in k (the regularised lower incomplete gamma P(k, λ)), so a count
 * measured in lumps (k = x / φ) has a tail too. 1 for k ≤ 0.
 */
export function poissonUpperTail(k: number, lambda: number): number {
  if (!(k > 0)) return 1;
  if (!(lambda > 0)) return 0;
  if (lambda > k + 1) return 1 - gammaUpperByFraction(k, lambda);
  // Series: P(a, x) = e^{−x} x^a / Γ(a+1) · Σ x^n / ((a+1)…(a+n)).
  let term = 1;
  let sum = 1;
  for (let n = 1; n < 500 && term > sum * 1e-15; n += 1) {
    term *= lambda / (k + n);
    sum += term;
  }
  return Math.min(1, Math.exp(-lambda + k * Math.log(lambda) - logGamma(k + 1)) * sum);
}

/** Q(a, x) by its continued fraction (Lentz), for x > a + 1. */
function gammaUpperByFraction(a: number, x: number): number {
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 500; i += 1) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return Math.exp(-x + a * Math.log(x) - logGamma(a)) * h;
}

/** A one-sided p-value as the z it corresponds to (capped at 40 so a certainty stays finite). */
export function zOfTail(p: number): number {
  return Math.min(40, Math.max(-40, normalQuantileUpper(Math.max(p, 1e-300))));
}

/**
 * Sampling variance of a share p (0–1) measured on n answers, with p pulled towards ½ by two answers each
 * way (the Agresti–Coull "plus four"), so it stays positive at 0 %, 100 % and a handful of answers.
 */
export function shareVariance(p: number, n: number): number {
  const tilde = (Math.min(1, Math.max(0, p)) * n + 2) / (n + 4);
  return (tilde * (1 - tilde)) / Math.max(n, 1);
}

/** A judged difference between two measurements: its z, and whether it is beyond `threshold`. */
export interface PairJudgement {
  /** after − before, in the unit given. */
  delta: number;
  /** delta over its standard error (sign = direction). */
  z: number;
  /** |z| ≥ threshold. */
  called: boolean;
  /** The change that would just be called: threshold · standard error. */
  band: number;
}

function pair(delta: number, variance: number, threshold: number): PairJudgement {
  const se = Math.sqrt(Math.max(variance, Number.EPSILON));
  const z = delta / se;
  return { delta, z, called: Math.abs(z) >= threshold, band: threshold * se };
}

/**
 * Two shares (0–1), each on its answers — e.g. a week's pooled answers against the week before's:
 * `judgeShareChange({ before: { share: 0.42, answers: 8680 }, after: { share: 0.39, answers: 8680 } })`.
 * Pooled two-proportion z; `threshold` is the z a change must reach (the digest's single-run z by default).
 */
export function judgeShareChange(
  sides: { before: { share: number; answers: number }; after: { share: number; answers: number } },
  threshold: number = SINGLE_RUN_Z,
): PairJudgement {
  const { before, after } = sides;
  const pooled = (before.share * before.answers + after.share * after.answers) / Math.max(before.answers + after.answers, 1);
  const variance = shareVariance(pooled, before.answers) + shareVariance(pooled, after.answers);
  return pair(after.share - before.share, variance, threshold);
}

/**
 * Two means (e.g. average position), each over its answers, with the spread of one answer (`sd`; the
 * digest learns it per project; `PRIOR_MEAN_SD` when unknown).
 */
export function judgeMeanChange(
  sides: { before: { mean: number; answers: number }; after: { mean: number; answers: number }; sd?: number | undefined },
  threshold: number = SINGLE_RUN_Z,
): PairJudgement {
  const sd = sides.sd ?? PRIOR_MEAN_SD;
  const variance = sd * sd * (1 / Math.max(sides.before.answers, 1) + 1 / Math.max(sides.after.answers, 1));
  return pair(sides.after.mean - sides.before.mean, variance, threshold);
}

/**
 * Two counts (mentions, gaps) per run, Poisson with overdispersion `dispersion` (≥ 1; the project's usual
 * churn): a count of 0 both times is no change. Each side is one run unless `runs` says it is a mean per
 * run over several (the weekly report's pooled weeks): its variance is then φ·mean/runs.
 */
export function judgeCountChange(
  sides: { before: number; after: number; dispersion?: number | undefined; runs?: { before: number; after: number } | undefined },
  threshold: number = SINGLE_RUN_Z,
): PairJudgement {
  const phi = Math.max(1, sides.dispersion ?? 1);
  const runsBefore = Math.max(1, sides.runs?.before ?? 1);
  const runsAfter = Math.max(1, sides.runs?.after ?? 1);
  const variance = Math.max(sides.before / runsBefore + sides.after / runsAfter, 1 / Math.max(runsBefore, runsAfter));
  return pair(sides.after - sides.before, phi * variance, threshold);
}

/**
 * Two means of several runs each, judged against the runs' own spread: `spread` is each mean's variance
 * from its runs (s² / runs). A figure that swings from run to run needs a larger move; the weekly report
 * asks this besides the sampling test.
 */
export function judgeSpreadChange(
  sides: { before: { mean: number; spread: number }; after: { mean: number; spread: number } },
  threshold: number = SINGLE_RUN_Z,
): PairJudgement {
  return pair(sides.after.mean - sides.before.mean, sides.before.spread + sides.after.spread, threshold);
}

/**
 * The z a single run's move must reach to be called. ~5 engines × a few metrics are tested every run;
 * a family-wise false-alarm rate of ~1/365 per run (≤ 1 false mark per project-year of daily runs) asks
 * ~1e-4 per two-sided test (docs/DIGEST.md, "Calibration"). `bench/calibrate.ts` measures it.
 */
export const SINGLE_RUN_Z = 4;
/** The spread of one answer's position when the project's own is not yet learned (wide: learning narrows it). */
export const PRIOR_MEAN_SD = 3;
/** A count's dispersion (variance / mean) when the project's own is not yet learned. */
export const PRIOR_DISPERSION = 4;
