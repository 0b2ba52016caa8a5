/**
 * `npm run calibrate`: the digest's verdict (shared/digest/verdict) measured on simulated projects with
 * a known truth (bench/calibration.ts): false 🔴/🟢/🟡 per project-year of daily runs on a stable
 * project at 1,240 and at 40 answers, and how soon real changes are 🔴 — a 10-pt drop on its run, a
 * 5-pt drop within 3 runs, a −1 pt/run drift within 6 runs, a rival taking 3 prompts lost on 3 engines
 * named on its run — for the digest's thresholds and a few others (the trade-off curve). Seeded: the
 * figures are the same every time. `-- --quick` runs fewer trials.
 */
import { median, measuredCommit } from './lib';
import { detectionDelay, falseMarksPerYear, shifted, TAKEOVER_RIVAL, stableTruth, type JudgedRun } from './calibration';
import { THRESHOLDS, type Thresholds } from '../shared/digest/verdict';

const ANSWERS = 1240;
const SMALL_ANSWERS = 40;

interface Figures {
  falsePerYear: number;
  falsePerYearSmall: number;
  drop10OnRun: number;
  drop5Within3: number;
  driftWithin6: number;
  takeoverNamed: number;
  drop5Delay: number | null;
  driftDelay: number | null;
}

function share(delays: readonly (number | null)[], within: number): number {
  return delays.filter((d) => d !== null && d <= within).length / delays.length;
}

function medianDelay(delays: readonly (number | null)[]): number | null {
  const found = delays.filter((d): d is number => d !== null);
  return found.length * 2 >= delays.length ? median(found) : null;
}

function measure(thresholds: Thresholds, years: number, trials: number): Figures {
  const seeds = Array.from({ length: trials }, (_, i) => 1000 + i);
  const drop10 = seeds.map((seed) =>
    detectionDelay({ seed, answers: ANSWERS, horizon: 1, truthAt: () => shifted(ANSWERS, -10), thresholds }),
  );
  const drop5 = seeds.map((seed) =>
    detectionDelay({ seed: seed + 1e5, answers: ANSWERS, horizon: 10, truthAt: () => shifted(ANSWERS, -5), thresholds }),
  );
  const drift = seeds.map((seed) =>
    detectionDelay({ seed: seed + 2e5, answers: ANSWERS, horizon: 12, truthAt: (run) => shifted(ANSWERS, -run), thresholds }),
  );
  const named = (run: JudgedRun): boolean => run.phrases.some((p) => p.startsWith(`${TAKEOVER_RIVAL} took 3 prompts`));
  const takeover = seeds.map((seed) =>
    detectionDelay({
      seed: seed + 3e5,
      answers: ANSWERS,
      horizon: 1,
      truthAt: () => stableTruth(ANSWERS),
      before: (digest) => digest.takeover(3, 3),
      detected: named,
      thresholds,
    }),
  );
  return {
    falsePerYear: falseMarksPerYear({ answers: ANSWERS, years, seed: 1, thresholds }),
    falsePerYearSmall: falseMarksPerYear({ answers: SMALL_ANSWERS, years, seed: 2, thresholds }),
    drop10OnRun: share(drop10, 1),
    drop5Within3: share(drop5, 3),
    driftWithin6: share(drift, 6),
    takeoverNamed: share(takeover, 1),
    drop5Delay: medianDelay(drop5),
    driftDelay: medianDelay(drift),
  };
}

const pct = (x: number): string => `${(100 * x).toFixed(0)} %`;
const num = (x: number | null): string => (x === null ? '—' : String(x));
const label = (t: Thresholds): string => `z ${t.zSingle} · counts z ${t.zCount} · k ${t.k} · h ${t.h}`;

/** Other thresholds for the trade-off curve: looser and stricter single-run z and CUSUM limit. */
const CURVE: readonly Thresholds[] = [
  { zSingle: 3.5, zCount: 3, k: 0.5, h: 4 },
  { zSingle: 4, zCount: 3.2, k: 0.75, h: 5 },
  { zSingle: 4, zCount: 3.5, k: 0.5, h: 5 },
  { zSingle: 4.5, zCount: 4, k: 0.75, h: 6 },
];

function main(): void {
  const quick = process.argv.includes('--quick');
  const years = quick ? 2 : 4;
  const trials = quick ? 40 : 150;
  const started = Date.now();
  const { commit, dirty } = measuredCommit();
  console.log(`Calibration of the digest's verdict — commit ${commit}${dirty ? ' (with uncommitted changes)' : ''}`);
  console.log(
    `Stable projects: ${years} project-years of daily runs each at ${ANSWERS} and ${SMALL_ANSWERS} answers; ${trials} trials per change (after ${30} stable runs).\n`,
  );
  const chosen = measure(THRESHOLDS, years, trials);
  const target = (ok: boolean): string => (ok ? 'meets target' : 'MISSES target');
  console.log(`Digest thresholds (${label(THRESHOLDS)}):`);
  console.log(
    `  false 🔴/🟢/🟡 per project-year, ${ANSWERS} answers: ${chosen.falsePerYear.toFixed(2)} (≤ 1: ${target(chosen.falsePerYear <= 1)})`,
  );
  console.log(
    `  false 🔴/🟢/🟡 per project-year, ${SMALL_ANSWERS} answers: ${chosen.falsePerYearSmall.toFixed(2)} (≤ 1: ${target(chosen.falsePerYearSmall <= 1)})`,
  );
  console.log(`  10-pt drop 🔴 on its run: ${pct(chosen.drop10OnRun)} (≥ 90 %: ${target(chosen.drop10OnRun >= 0.9)})`);
  console.log(
    `  5-pt drop 🔴 within 3 runs: ${pct(chosen.drop5Within3)} (≥ 90 %: ${target(chosen.drop5Within3 >= 0.9)}); median delay ${num(chosen.drop5Delay)} runs`,
  );
  console.log(
    `  −1 pt/run drift 🔴 within 6 runs: ${pct(chosen.driftWithin6)} (≥ 90 %: ${target(chosen.driftWithin6 >= 0.9)}); median delay ${num(chosen.driftDelay)} runs`,
  );
  console.log(`  rival taking 3 prompts lost on 3 engines named on its run: ${pct(chosen.takeoverNamed)}\n`);
  console.log('Trade-off (false marks per project-year against detection):');
  console.log(
    '| thresholds | false/yr 1,240 | false/yr 40 | 10 pts on run | 5 pts ≤ 3 runs (median) | drift ≤ 6 runs (median) | takeover named |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  const row = (t: Thresholds, f: Figures): string =>
    `| ${label(t)}${t === THRESHOLDS ? ' (digest)' : ''} | ${f.falsePerYear.toFixed(2)} | ${f.falsePerYearSmall.toFixed(2)} | ${pct(f.drop10OnRun)} | ${pct(f.drop5Within3)} (${num(f.drop5Delay)}) | ${pct(f.driftWithin6)} (${num(f.driftDelay)}) | ${pct(f.takeoverNamed)} |`;
  console.log(row(THRESHOLDS, chosen));
  const curveYears = Math.max(1, Math.round(years / 2));
  const curveTrials = Math.max(20, Math.round(trials / 3));
  for (const t of CURVE) console.log(row(t, measure(t, curveYears, curveTrials)));
  console.log(
    `\n(curve rows: ${curveYears} project-years and ${curveTrials} trials each) — ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
}

main();
