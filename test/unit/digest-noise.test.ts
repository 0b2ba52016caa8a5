/** When a change is news: the sampling error of a share, per-label minimums, streaks, and the stage file's parser. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/config-env';
import { beyondNoise, noiseBand, parseNoiseMinimums, proportionHalfWidth, readMetric } from '../../shared/digest/noise';
import { gapShifts, rivalStandings } from '../../shared/digest/rivals';
import { buildSnapshot } from '../../shared/digest/snapshot';
import type { Gap } from '../../shared/read-api-types';

describe('noise', () => {
  it('a share measured on 3 answers is tens of points wide; on 1,240 answers about 3 points (95 %)', () => {
    expect(proportionHalfWidth(0.505, 3)).toBeGreaterThan(0.3);
    expect(proportionHalfWidth(0.505, 1240)).toBeCloseTo(0.0278, 3);
    expect(proportionHalfWidth(0, 50)).toBeGreaterThan(0); // never a zero band at 0 % or 100 %
  });

  it('reads the kind of a metric from its label and value', () => {
    expect(readMetric('Visibility score', [50.5])).toEqual({ kind: 'share', scale: 'percent' });
    expect(readMetric('Share of voice', ['22%'])).toEqual({ kind: 'share', scale: 'percent' });
    expect(readMetric('share_of_voice', [0.22, 0.2])).toEqual({ kind: 'share', scale: 'fraction' });
    expect(readMetric('Average position', [3.6])).toEqual({ kind: 'position', scale: null });
    expect(readMetric('Open gaps', [12])).toEqual({ kind: 'count', scale: null });
    expect(readMetric('Sentiment', [0.4])).toEqual({ kind: 'other', scale: null });
    expect(readMetric('Visibility index', [420])).toEqual({ kind: 'other', scale: null }); // not a share: out of 0–100
  });

  it('calls a change only beyond its band; a configured label uses its minimum', () => {
    const share = readMetric('Visibility score', [50.5]);
    const big = noiseBand('Visibility score', share, 50.5, 1240);
    expect(big).toMatchObject({ basis: 'sample', answers: 1240 });
    expect(beyondNoise(-3.2, big)).toBe(true);
    expect(beyondNoise(-3.2, noiseBand('Visibility score', share, 50.5, 3))).toBe(false);
    expect(noiseBand('Visibility score', share, 50.5, null)).toEqual({ basis: 'minimum', halfWidth: 1 });
    const position = readMetric('Average position', [3.6]);
    expect(beyondNoise(0.5, noiseBand('Average position', position, 3.6, 1240))).toBe(true);
    expect(beyondNoise(0.2, noiseBand('Average position', position, 3.6, 1240))).toBe(false);
    expect(noiseBand('Mentions', readMetric('Mentions', [388]), 388, 1240, { mentions: 25 })).toEqual({ basis: 'minimum', halfWidth: 25 });
  });

  it("parses the stage file's per-label minimums, naming the key and where to fix it", () => {
    expect(parseNoiseMinimums({ Mentions: 25 }, 'noiseMinimums', 'config/dev.json')).toEqual({ Mentions: 25 });
    expect(parseNoiseMinimums('{"Average position": 0.2}', 'NOISE_MINIMUMS', 'the environment')).toEqual({ 'Average position': 0.2 });
    expect(parseNoiseMinimums(undefined, 'k', 'w')).toEqual({});
    expect(() => parseNoiseMinimums({ Mentions: -1 }, 'noiseMinimums', 'config/dev.json')).toThrow(ConfigError);
    expect(() => parseNoiseMinimums('[1]', 'noiseMinimums', 'config/dev.json')).toThrow(/noiseMinimums.*config\/dev\.json/);
  });
});

function gap(id: string, engines: string[], rival: string): Gap {
  return { prompt_id: id, prompt_ref: id, prompt_text: `q ${id}`, platforms_losing: engines, top_competitor: rival, extra: [] };
}

describe('rivals', () => {
  const before = [gap('a', ['ChatGPT'], 'Summitline'), gap('b', ['Gemini'], 'Summitline'), gap('c', ['Claude'], 'Velocraft')];
  const now = [
    gap('a', ['ChatGPT', 'Gemini', 'Claude'], 'TrailForge'),
    gap('b', ['Gemini'], 'Summitline'),
    gap('d', ['Copilot'], 'TrailForge'),
  ];
  const previous = buildSnapshot(
    { projectId: 'p', runId: 'r1', createdAt: '2026-11-01T09:00:00Z' },
    { metrics: [], engines: [], alerts: [] },
    before,
  );

  it('stores winners and a bounded rival count per run in the snapshot', () => {
    expect(previous.gaps[0]).toMatchObject({ top_competitor: 'Summitline' });
    expect(previous.history?.[0]?.rivals).toEqual({ Summitline: 2, Velocraft: 1 });
  });

  it('ranks who takes the prompts, with the change since the last run and the week', () => {
    const standings = rivalStandings(now, previous.gaps, { TrailForge: 0, Summitline: 3 });
    expect(standings.map((r) => [r.name, r.prompts, r.sinceLastRun, r.sinceLastWeek])).toEqual([
      ['TrailForge', 2, 2, 2],
      ['Summitline', 1, -1, -2],
    ]);
  });

  it('says which prompt changed winner and which engines it is newly lost on', () => {
    expect(gapShifts(now, previous.gaps).get('a')).toEqual({ previousWinner: 'Summitline', newEngines: ['Gemini', 'Claude'], wonBack: [] });
    expect(gapShifts(now, previous.gaps).has('b')).toBe(false);
  });

  it('reads a snapshot from before digest v3 (no winners stored): no rival changes claimed', () => {
    const old = previous.gaps.map(({ top_competitor: _, ...g }) => g);
    expect(rivalStandings(now, old, null)[0]?.sinceLastRun).toBeNull();
    expect(gapShifts(now, old).get('a')?.previousWinner).toBeNull();
  });
});
