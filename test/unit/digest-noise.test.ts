/** How a metric is read, its minimum change, streaks, and the stage file's parser. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/config-env';
import { minimumFor, parseNoiseMinimums, readMetric } from '../../shared/digest/noise';
import { gapShifts, rivalStandings } from '../../shared/digest/rivals';
import { buildSnapshot } from '../../shared/digest/snapshot';
import type { Gap } from '../../shared/read-api-types';

describe('noise', () => {
  it('reads the kind of a metric from its label and value', () => {
    expect(readMetric('Visibility score', [50.5])).toEqual({ kind: 'share', scale: 'percent' });
    expect(readMetric('Share of voice', ['22%'])).toEqual({ kind: 'share', scale: 'percent' });
    expect(readMetric('share_of_voice', [0.22, 0.2])).toEqual({ kind: 'share', scale: 'fraction' });
    expect(readMetric('Average position', [3.6])).toEqual({ kind: 'position', scale: null });
    expect(readMetric('Open gaps', [12])).toEqual({ kind: 'count', scale: null });
    expect(readMetric('Sentiment', [0.4])).toEqual({ kind: 'other', scale: null });
    expect(readMetric('Visibility index', [420])).toEqual({ kind: 'other', scale: null }); // not a share: out of 0–100
  });

  it('gives each metric its minimum change: configured for its label, else by label word, else its kind', () => {
    expect(minimumFor('Mentions', 'count', { mentions: 25 })).toBe(25);
    expect(minimumFor('Mentions', 'count', {})).toBe(10);
    expect(minimumFor('Average position', 'position', {})).toBe(0.3);
    expect(minimumFor('Visibility score', 'share', {})).toBe(1);
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
