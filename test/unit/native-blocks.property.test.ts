/**
 * Slack's native chart and table blocks: no input makes the digest send one outside Slack's limits
 * (shared/slack-blocks/limits.ts), and the shared checker the local Slack server answers with does
 * find a block past them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderDigest, type DigestInput } from '../../shared/digest/render';
import type { TrendPoint } from '../../shared/ports';
import { buildSnapshot } from '../../shared/digest/snapshot';
import { nativeBlockProblems } from '../../shared/slack-blocks/check';
import { CHART_BLOCK_LIMITS, TABLE_BLOCK_LIMITS } from '../../shared/slack-blocks/limits';
import { findBlockKitViolations } from '../../shared/slack-text';

const ODD = ['\u200b', '\u202e', '*', '<!channel>', '&', '👩‍👩‍👧', 'e\u0301', '\ud83d', ' ', '\n', '語', 'ChatGPT', 'Claude', 'Gemini'];
const name = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.array(fc.constantFrom(...ODD), { maxLength: 8 }).map((p) => p.join('')),
  fc.constantFrom('ChatGPT', 'Claude', 'Gemini', 'Perplexity', 'Copilot', 'Google AI Overviews', 'Meta AI', 'Grok'),
);
const DAY = 24 * 3600 * 1000;
const NOW = Date.parse('2026-11-08T09:00:00Z');

const trend: fc.Arbitrary<TrendPoint[]> = fc
  .array(
    fc.record({
      back: fc.integer({ min: 0, max: 80 }),
      engines: fc.dictionary(
        name,
        fc.oneof(fc.double(), fc.double({ min: 0, max: 100, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
        {
          maxKeys: 16,
        },
      ),
    }),
    { maxLength: 70 },
  )
  .map((points) => points.map((p) => ({ atMs: NOW - p.back * DAY, engines: p.engines })).sort((a, b) => a.atMs - b.atMs));

/** A previous digest, so the run is a report or a quiet run (a first digest draws no chart). */
const PREVIOUS = buildSnapshot(
  { projectId: 'np', runId: 'r-1', createdAt: '2026-11-07T09:00:00Z' },
  { metrics: [{ label: 'Visibility', value: 41, caption: null }], engines: [], alerts: [] },
  [],
);

function input(points: TrendPoint[], engines: string[]): DigestInput {
  return {
    project: { id: 'np', name: 'Northwind', industry: null },
    run: { eventId: 'e', runId: 'r-2', answers: 800, createdAt: '2026-11-08T09:00:00Z' },
    overview: {
      metrics: [{ label: 'Visibility', value: 40, caption: null }],
      engines: engines.map((e) => [
        ['engine', e],
        ['visibility', 40],
      ]),
      alerts: [],
    },
    gaps: [],
    previous: null,
    reasoning: new Map(),
    options: { trend: points },
  };
}

describe('native blocks within Slack limits', () => {
  it('the trend chart: any stored trend, any engine names and figures', () => {
    let drawn = 0;
    fc.assert(
      fc.property(trend, fc.array(name, { maxLength: 8 }), (points, engines) => {
        const { main, thread } = renderDigest({ ...input(points, engines), previous: PREVIOUS });
        for (const message of [main, ...thread]) {
          expect(nativeBlockProblems(message.blocks)).toEqual([]);
          expect(findBlockKitViolations(message)).toEqual([]);
          if (message.fallbackBlocks !== undefined)
            expect(findBlockKitViolations({ ...message, blocks: message.fallbackBlocks })).toEqual([]);
        }
        expect(main.blocks.length).toBeLessThanOrEqual(8);
        const chart = main.blocks.find((b) => b.type === 'data_visualization');
        if (chart !== undefined && chart.chart.type === 'line') {
          drawn += 1;
          expect(chart.chart.series.length).toBeLessThanOrEqual(CHART_BLOCK_LIMITS.series);
          expect(chart.chart.axis_config.categories.length).toBeLessThanOrEqual(CHART_BLOCK_LIMITS.categories);
        }
      }),
      { numRuns: 300 },
    );
    // The property is about charts: most inputs draw one.
    expect(drawn).toBeGreaterThan(50);
  });
});

const gap = fc.record({
  prompt_id: fc.string({ minLength: 1, maxLength: 12 }),
  prompt_ref: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 999 }), name),
  prompt_text: fc.oneof(name, fc.string({ maxLength: 400 })),
  platforms_losing: fc.array(name, { maxLength: 8 }),
  top_competitor: name,
  extra: fc.constant([]),
});

describe('native tables in the thread within Slack limits', () => {
  it('any engines and open gaps: tables within the limits, or their words; the words always valid', () => {
    const drawn = { tables: 0, words: 0 };
    fc.assert(
      fc.property(fc.array(name, { maxLength: 130 }), fc.array(gap, { maxLength: 130 }), (engines, gaps) => {
        const { thread } = renderDigest({ ...input([], engines), gaps, previous: PREVIOUS });
        for (const message of thread) {
          expect(nativeBlockProblems(message.blocks)).toEqual([]);
          expect(findBlockKitViolations(message)).toEqual([]);
          const tables = message.blocks.filter((b) => b.type === 'data_table');
          if (tables.length === 0) {
            drawn.words += 1;
            expect(message.fallbackBlocks).toBeUndefined();
            continue;
          }
          drawn.tables += 1;
          for (const table of tables) expect(table.rows.length).toBeLessThanOrEqual(TABLE_BLOCK_LIMITS.bodyRows + 1);
          expect(message.fallbackBlocks).toBeDefined();
          expect(message.fallbackBlocks!.some((b) => b.type === 'data_table')).toBe(false);
          expect(findBlockKitViolations({ ...message, blocks: message.fallbackBlocks! })).toEqual([]);
        }
      }),
      { numRuns: 200 },
    );
    // Both sides are exercised: most inputs fit a table, some do not.
    expect(drawn.tables).toBeGreaterThan(50);
    expect(drawn.words).toBeGreaterThan(0);
  });
});

describe('the shared checker', () => {
  const line = (series: number, categories: number) => ({
    type: 'data_visualization',
    title: 'Visibility by engine',
    chart: {
      type: 'line',
      series: Array.from({ length: series }, (_, s) => ({
        name: `Engine ${s}`,
        data: Array.from({ length: categories }, (_, c) => ({ label: `Run ${c}`, value: c })),
      })),
      axis_config: { categories: Array.from({ length: categories }, (_, c) => `Run ${c}`) },
    },
  });

  it('passes a chart at the limits and refuses one past any of them', () => {
    expect(nativeBlockProblems([line(CHART_BLOCK_LIMITS.series, CHART_BLOCK_LIMITS.categories)])).toEqual([]);
    expect(nativeBlockProblems([line(CHART_BLOCK_LIMITS.series + 1, 3)])).toEqual([expect.stringContaining('series (1–6)')]);
    expect(nativeBlockProblems([line(2, CHART_BLOCK_LIMITS.categories + 1)])).toEqual([expect.stringContaining('categories (1–20)')]);
    expect(nativeBlockProblems([line(1, 2), line(1, 2), line(1, 2)])).toEqual([expect.stringContaining('at most 2 per message')]);
    const nan = line(1, 2);
    nan.chart.series[0]!.data[1]!.value = Number.NaN;
    expect(nativeBlockProblems([nan])).toEqual([expect.stringContaining('not a finite number')]);
    const long = { ...line(1, 2), title: 'x'.repeat(51) };
    expect(nativeBlockProblems([long])).toEqual([expect.stringContaining('title is longer than 50')]);
  });

  it('passes a table at the limits and refuses one past them', () => {
    const cell = (text: string) => ({ type: 'raw_text', text });
    const table = (rows: number, columns: number) => ({
      type: 'data_table',
      caption: 'Engines',
      rows: Array.from({ length: rows + 1 }, (_, r) => Array.from({ length: columns }, (_, c) => cell(`${r}.${c}`))),
    });
    expect(nativeBlockProblems([table(TABLE_BLOCK_LIMITS.bodyRows, 4)])).toEqual([]);
    expect(nativeBlockProblems([table(TABLE_BLOCK_LIMITS.bodyRows + 1, 1)])).toEqual([expect.stringContaining('rows (2–101')]);
    expect(nativeBlockProblems([table(1, TABLE_BLOCK_LIMITS.columns + 1)])).toEqual([expect.stringContaining('columns (1–20)')]);
    const rich = table(1, 1);
    rich.rows[0]![0] = { type: 'rich_text', elements: [] } as unknown as ReturnType<typeof cell>;
    expect(nativeBlockProblems([rich])).toEqual([expect.stringContaining('rich_text in the header row')]);
  });
});
