/** The verdict model (shared/digest/verdict): its statistics, each kind of call, persistence, data quality, calibration. */
import { describe, expect, it } from 'vitest';
import { detectionDelay, falseMarksPerYear, shifted, SimulatedDigest, stableTruth, TAKEOVER_RIVAL } from '../../bench/calibration';
import { judgeChurn, learnChurn, usualChurn } from '../../shared/digest/verdict/churn';
import { judgeFigure, THRESHOLDS, type FigureInput } from '../../shared/digest/verdict/figure';
import { dataQuality } from '../../shared/digest/verdict/quality';
import {
  judgeCountChange,
  judgeMeanChange,
  judgeShareChange,
  judgeSpreadChange,
  normalQuantileUpper,
  normalTail,
  poissonUpperTail,
} from '../../shared/digest/verdict/stats';

describe('statistics', () => {
  it('normal tail and its inverse agree, upper tail positive', () => {
    expect(normalTail(1.96)).toBeCloseTo(0.025, 4);
    expect(normalQuantileUpper(0.025)).toBeCloseTo(1.96, 3);
    expect(normalQuantileUpper(1e-6)).toBeCloseTo(4.753, 2);
    expect(normalQuantileUpper(0.999)).toBeCloseTo(-3.09, 2);
  });

  it('Poisson upper tail: exact at whole counts, continuous between', () => {
    // P(X ≥ 3 | 1) = 1 − e⁻¹(1 + 1 + ½)
    expect(poissonUpperTail(3, 1)).toBeCloseTo(1 - Math.exp(-1) * 2.5, 8);
    expect(poissonUpperTail(30, 35)).toBeGreaterThan(0.8);
    expect(poissonUpperTail(0, 1)).toBe(1);
    expect(poissonUpperTail(3.5, 1)).toBeLessThan(poissonUpperTail(3, 1));
  });

  it('pairwise tests for the weekly report: pooled shares, means, counts', () => {
    const week = judgeShareChange({ before: { share: 0.42, answers: 8680 }, after: { share: 0.39, answers: 8680 } });
    expect(week.called).toBe(true);
    expect(week.z).toBeLessThan(-4);
    expect(judgeShareChange({ before: { share: 0.42, answers: 40 }, after: { share: 0.39, answers: 40 } }).called).toBe(false);
    expect(judgeMeanChange({ before: { mean: 3.1, answers: 8680 }, after: { mean: 3.4, answers: 8680 }, sd: 1.5 }).called).toBe(true);
    expect(judgeCountChange({ before: 120, after: 131 }).called).toBe(false);
    expect(judgeCountChange({ before: 120, after: 260, dispersion: 2 }).called).toBe(true);
    // Means per run over a week's runs: +15 a run over 5 and 7 runs is within 3.5 × √(400/5 + 415/7) ≈ 41.
    expect(judgeCountChange({ before: 400, after: 415, runs: { before: 5, after: 7 } }, 3.5)).toMatchObject({ called: false });
    expect(judgeCountChange({ before: 400, after: 415, runs: { before: 5, after: 7 } }, 3.5).band).toBeCloseTo(41.3, 1);
    // The runs' own spread: a move the runs' swings explain is not called.
    const spread = (s: number) => judgeSpreadChange({ before: { mean: 3, spread: s }, after: { mean: 3.35, spread: s } }, 3.5);
    expect(spread(0).called).toBe(true);
    expect(spread(0.04)).toMatchObject({ called: false });
    expect(spread(0.04).band).toBeCloseTo(0.99, 2);
  });
});

function share(value: number, previous: number | null, answers = 1240): FigureInput {
  return {
    key: 'm:Visibility',
    kind: 'share',
    value,
    unit: 100,
    answers,
    previous,
    previousAnswers: answers,
    minimum: 1,
    floor: 0,
    resolution: 0.1,
  };
}

describe('a figure', () => {
  it('a single run beyond z 4 is a change; the same move at 40 answers is normal variation', () => {
    const drop = judgeFigure(share(40, 52), undefined);
    expect(drop.call).toBe('change');
    expect(drop.evidence).toBe('single');
    expect(drop.change).toBeCloseTo(-12, 6);
    expect(judgeFigure(share(40, 52, 40), undefined).call).toBe('steady');
  });

  it('a smaller move that persists is called by the CUSUM, "over N runs"; a called change resets the level', () => {
    let state = judgeFigure(share(50, 50), undefined).next;
    for (let i = 0; i < 20; i += 1) state = judgeFigure(share(50, null), state).next;
    const calls = [45.5, 45.5, 45.5, 45.5].map((value) => {
      const call = judgeFigure(share(value, null), state);
      state = call.next;
      return call;
    });
    expect(calls[0]?.call).toBe('steady');
    const called = calls.find((c) => c.call === 'change');
    expect(called?.evidence).toBe('persistent');
    expect(called?.runs).toBeGreaterThan(1);
    expect(state.level).toBe(45.5);
  });

  it('min-change: a move beyond chance but under the floor is not called', () => {
    expect(judgeFigure({ ...share(40, 52), floor: 15 }, undefined).call).toBe('steady');
  });
});

describe('gap churn', () => {
  it('is judged against the usual amount: a takeover of 3 prompts on 3 engines is news, one new gap is not', () => {
    const usual = usualChurn({ mean: 0.36, meanSquare: 0.76, runs: 30 });
    expect(judgeChurn(9, usual, THRESHOLDS.zCount, true).called).toBe(true);
    expect(judgeChurn(2, usual, THRESHOLDS.zCount, true).called).toBe(false);
    expect(judgeChurn(9, usual, THRESHOLDS.zCount, false).called).toBe(false);
    // A project that usually churns a lot: 9 engine losses are its usual.
    let busy = usualChurn(undefined);
    for (let i = 0; i < 30; i += 1) busy = learnChurn(busy, i % 2 === 0 ? 12 : 6);
    expect(judgeChurn(9, busy, THRESHOLDS.zCount, true).called).toBe(false);
  });
});

describe('data quality', () => {
  const history = [1240, 1236, 1244, 1240].map((answers, i) => ({
    createdAt: `2026-11-0${i + 1}T09:00:00Z`,
    runId: `r${i}`,
    metrics: {},
    answers,
  }));
  it('no answers, or under half the usual, is a data-quality run', () => {
    expect(dataQuality({ answers: 0 }, history)).toEqual({ state: 'no-answers', usual: 1240 });
    expect(dataQuality({ answers: 3 }, history)).toEqual({ state: 'few-answers', answers: 3, usual: 1240 });
    expect(dataQuality({ answers: 700 }, history)).toEqual({ state: 'ok' });
    expect(dataQuality({ answers: 3 }, [])).toEqual({ state: 'ok' });
    // A project that never had answers has no usual to quote.
    expect(dataQuality({ answers: 0 }, [{ ...history[0]!, answers: 0 }])).toEqual({ state: 'no-answers', usual: null });
    expect(dataQuality({ answers: 1240, status: 'failed' }, history)).toEqual({ state: 'status', status: 'failed' });
  });

  it('a data-quality run is ⚠️ and teaches nothing: the next run is judged as if it had not happened', () => {
    const digest = new SimulatedDigest(77);
    for (let i = 0; i < 10; i += 1) digest.next(stableTruth(1240));
    expect(digest.next(stableTruth(3)).mark).toBe('⚠️');
    expect(digest.next(stableTruth(0)).mark).toBe('⚠️');
    expect(digest.next(stableTruth(1240)).mark).toBe('⚪');
  });
});

describe('calibration (seeded, small: fails only when the false-alarm rate is grossly exceeded)', () => {
  it('a stable project gets well under 3 false marks per year, at 1,240 and at 40 answers', () => {
    expect(falseMarksPerYear({ answers: 1240, years: 1, seed: 5 })).toBeLessThanOrEqual(3);
    expect(falseMarksPerYear({ answers: 40, years: 1, seed: 6 })).toBeLessThanOrEqual(3);
  });

  it('real changes are called: a 10-pt drop on its run, a rival taking 3 prompts on 3 engines named', () => {
    expect(detectionDelay({ seed: 9, answers: 1240, horizon: 1, truthAt: () => shifted(1240, -10) })).toBe(1);
    const named = detectionDelay({
      seed: 10,
      answers: 1240,
      horizon: 1,
      truthAt: () => stableTruth(1240),
      before: (digest) => digest.takeover(3, 3),
      detected: (run) => run.phrases.includes(`${TAKEOVER_RIVAL} took 3 prompts`),
    });
    expect(named).toBe(1);
  });
});
