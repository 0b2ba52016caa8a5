import { describe, expect, it } from 'vitest';
import { planTrendChart } from '../../shared/charts/plan';
import { CHART_LIMITS, cleanName, formatChange, preparePanel, type ChartPanel, type NamedPoint } from '../../shared/charts/series';
import { CHART_PALETTE, colourOf, coloursFor } from '../../shared/charts/palette';
import { lineLabels, trendChartSpec, yDomain } from '../../shared/charts/spec';
import type { EnginePoint, TrendChartInput } from '../../shared/charts/types';

const DAY = 24 * 3600 * 1000;
const T0 = Date.UTC(2025, 0, 6);

function weekly(engine: string, values: number[], start = T0): EnginePoint[] {
  return values.map((value, i) => ({ engine, atMs: start + i * 7 * DAY, value }));
}

function named(points: EnginePoint[]): NamedPoint[] {
  return points.map((p) => ({ name: p.engine, atMs: p.atMs, value: p.value }));
}

function panelOf(points: EnginePoint[], keep?: string): ChartPanel {
  const outcome = preparePanel(named(points), { keep });
  if (outcome.kind !== 'panel') throw new Error(`expected a panel, got: ${outcome.reason}`);
  return outcome.panel;
}

describe('preparePanel', () => {
  it('normalises fractions to 0–100 and keeps 0–100 values as they are', () => {
    expect(panelOf(weekly('ChatGPT', [0.4, 0.5, 0.55, 0.6])).series[0]!.points.map((p) => p.value)).toEqual([40, 50, 55, 60]);
    expect(panelOf(weekly('ChatGPT', [40, 50, 55, 60])).series[0]!.points.map((p) => p.value)).toEqual([40, 50, 55, 60]);
  });

  it('drops NaN, infinite, non-numeric values and bad times, and clamps to 0–100', () => {
    const points = [
      ...weekly('ChatGPT', [40, Number.NaN, 55, Number.POSITIVE_INFINITY, 140, -3]),
      { engine: 'ChatGPT', atMs: Number.NaN, value: 50 },
      { engine: 'ChatGPT', atMs: T0 + DAY, value: '50' as unknown as number },
    ];
    const series = panelOf(points).series[0]!;
    expect(series.points.map((p) => p.value)).toEqual([40, 55, 100, 0]);
  });

  it('keeps the last 8 weeks, counted back from the newest run', () => {
    const panel = panelOf(
      weekly(
        'ChatGPT',
        Array.from({ length: 12 }, (_, i) => 40 + i),
      ),
    );
    expect(panel.runs).toBe(9);
    expect(panel.lastMs - panel.firstMs).toBe(CHART_LIMITS.windowMs);
  });

  it('one run is no chart, two or three are points, four or more are lines', () => {
    const one = preparePanel(named(weekly('ChatGPT', [40])));
    expect(one).toEqual({ kind: 'empty', reason: expect.stringContaining('only one run') as unknown });
    expect(preparePanel([])).toEqual({ kind: 'empty', reason: 'no run has a usable figure' });
    expect(panelOf(weekly('ChatGPT', [40, 41])).mark).toBe('points');
    expect(panelOf(weekly('ChatGPT', [40, 41, 42])).mark).toBe('points');
    expect(panelOf(weekly('ChatGPT', [40, 41, 42, 43])).mark).toBe('lines');
  });

  it('bounds 500 engines to 8 lines, the best covered, and counts the rest', () => {
    const points = Array.from({ length: 500 }, (_, i) => weekly(`engine-${i}`, i < 5 ? [1, 2, 3, 4, 5] : [10, 20])).flat();
    const panel = panelOf(points);
    expect(panel.series).toHaveLength(CHART_LIMITS.series);
    expect(panel.omitted).toBe(492);
    expect(panel.series.filter((s) => s.points.length === 5)).toHaveLength(5);
  });

  it('keeps the brand even when it is not among the best covered, and lists it first', () => {
    const points = [...Array.from({ length: 10 }, (_, i) => weekly(`rival-${i}`, [50, 60, 70, 80])).flat(), ...weekly('Brand', [10, 20])];
    const panel = panelOf(points, 'Brand');
    expect(panel.series[0]!.label).toBe('Brand');
    expect(panel.keptLabel).toBe('Brand');
    expect(panel.series).toHaveLength(CHART_LIMITS.series);
  });

  it('thins a long series evenly, keeping its first and last point', () => {
    const points = Array.from({ length: 500 }, (_, i) => ({ engine: 'ChatGPT', atMs: T0 + i * 3600_000, value: i % 100 }));
    const series = panelOf(points).series[0]!;
    expect(series.points).toHaveLength(CHART_LIMITS.pointsPerSeries);
    expect(series.points[0]!.atMs).toBe(T0);
    expect(series.points.at(-1)!.atMs).toBe(T0 + 499 * 3600_000);
  });

  it('cleans hostile names for the image and escapes them for Slack', () => {
    const panel = panelOf([...weekly('<b>Grok</b> & *co*\u200B\u202E\u0007', [1, 2, 3, 4]), ...weekly('\u200B\u200B', [5, 6, 7, 8])]);
    const labels = panel.series.map((s) => s.label);
    expect(labels).toContain('<b>Grok</b> & *co*');
    expect(labels).toContain('(unnamed)');
    const grok = panel.series.find((s) => s.label.startsWith('<b>'))!;
    expect(grok.slackName).toBe('&lt;b&gt;Grok&lt;/b&gt; &amp; \u2217co\u2217');
  });

  it('gives names that are cut alike distinct labels', () => {
    const long = 'An engine with a very long name';
    const panel = panelOf([...weekly(`${long} A`, [1, 2, 3, 4]), ...weekly(`${long} B`, [5, 6, 7, 8])]);
    const labels = panel.series.map((s) => s.label);
    expect(new Set(labels).size).toBe(2);
    for (const label of labels) expect(label.length).toBeLessThanOrEqual(CHART_LIMITS.labelChars);
  });
});

describe('planTrendChart', () => {
  const engines = [...weekly('ChatGPT', [52, 55, 58, 61]), ...weekly('Gemini', [48, 47, 45, 44])];

  it("writes one paragraph with each engine's first → last value", () => {
    const plan = planTrendChart({ projectName: 'Northwind', engines });
    expect(plan.kind).toBe('draw');
    if (plan.kind !== 'draw') return;
    expect(plan.altText).toBe(
      'Visibility by engine for Northwind, 4 runs from Jan 6 to Jan 27 (UTC): ChatGPT 52 → 61 (+9); Gemini 48 → 44 (\u22124).',
    );
    expect(plan.panels).toHaveLength(1);
  });

  it('adds the brand-vs-rivals panel when the data allows, and says why not when it does not', () => {
    const rivals = [...weekly('Northwind', [0.2, 0.22, 0.25, 0.24]), ...weekly('Summit', [0.3, 0.28, 0.27, 0.26])].map((p) => ({
      name: p.engine,
      atMs: p.atMs,
      value: p.value,
    }));
    const both = planTrendChart({ projectName: 'Northwind', engines, rivals: { brand: 'Northwind', points: rivals } });
    expect(both.kind === 'draw' && both.panels.map((p) => p.title)).toEqual(['Northwind', 'Northwind vs top rivals']);
    expect(both.kind === 'draw' && both.altText).toContain('Share of voice, brand against its top rivals, 4 runs');
    expect(both.kind === 'draw' && both.altText).toContain('Northwind 20 → 24 (+4)');

    const noBrand = planTrendChart({ projectName: 'Northwind', engines, rivals: { brand: 'Absent', points: rivals } });
    expect(noBrand.kind === 'draw' && noBrand.panels).toHaveLength(1);
    expect(noBrand.kind === 'draw' && noBrand.altText).toContain('Share of voice against rivals: not drawn (the brand has no figure');
  });

  it('skips with a reason for one run, and never throws on garbage', () => {
    expect(planTrendChart({ projectName: 'P', engines: weekly('ChatGPT', [40]) })).toEqual({
      kind: 'skipped',
      reason: expect.stringContaining('a trend needs at least two') as unknown,
    });
    const garbage = [null, undefined, 42, 'x', { engines: 'no' }, { projectName: {}, engines: [null, 1, 'a', { engine: {}, atMs: 'x' }] }];
    for (const input of garbage) expect(planTrendChart(input as unknown as TrendChartInput).kind).toBe('skipped');
  });

  it('keeps the alt text within Slack alt_txt limit', () => {
    const many = Array.from({ length: 8 }, (_, i) => weekly(`${'x'.repeat(60)}${i}`, [1, 2, 3, 4])).flat();
    const plan = planTrendChart({ projectName: 'y'.repeat(500), engines: many, rivals: { brand: 'z'.repeat(300), points: [] } });
    expect(plan.kind === 'draw' && plan.altText.length).toBeLessThanOrEqual(CHART_LIMITS.altTextChars);
  });
});

describe('the spec', () => {
  type Spec = {
    encoding: { y: { axis: { labelExpr: string } }; color: { scale: { domain: string[]; range: string[] }; legend: null } };
    layer: [
      { mark: { type: string } },
      { mark: { type: string }; data: { values: { key: string; t: number; v: number; text: string }[] } },
    ];
  };

  it('draws lines with a y range around the data, in % on the axis, each named at its end', () => {
    const panel = panelOf([...weekly('Low', [20, 22, 24, 23]), ...weekly('High', [60, 62, 64, 66])]);
    expect(yDomain(panel)).toEqual([10, 80]);
    const spec = trendChartSpec({ title: 'T', subtitle: 'S', panel }) as unknown as Spec;
    expect(spec.layer[0].mark.type).toBe('line');
    expect(spec.encoding.color.scale.domain).toEqual(['High', 'Low']);
    expect(spec.encoding.color.legend).toBeNull();
    expect(spec.encoding.y.axis.labelExpr).toContain("' %'");
    expect(spec.layer[1].mark.type).toBe('text');
    expect(spec.layer[1].data.values).toEqual([
      { key: 'Low', t: T0 + 21 * DAY, v: 23, text: 'Low 23' },
      { key: 'High', t: T0 + 21 * DAY, v: 66, text: 'High 66' },
    ]);
  });

  it('gives each engine one colour in every chart, whatever the legend order', () => {
    const one = panelOf([...weekly('Claude', [50, 51, 52, 53]), ...weekly('ChatGPT', [40, 41, 42, 43])]);
    const other = panelOf([
      ...weekly('ChatGPT', [60, 61, 62, 63]),
      ...weekly('Gemini', [50, 51, 52, 53]),
      ...weekly('Claude', [10, 11, 12, 13]),
    ]);
    const colours = (panel: ChartPanel) => {
      const { domain, range } = (trendChartSpec({ title: 'T', subtitle: 'S', panel }) as unknown as Spec).encoding.color.scale;
      return Object.fromEntries(domain.map((name, i) => [name, range[i]]));
    };
    expect(colours(one)['Claude']).toBe(colours(other)['Claude']);
    expect(colours(one)['ChatGPT']).toBe(colours(other)['ChatGPT']);
    expect(colours(one)['Claude']).toBe(colourOf('Claude'));
    expect(new Set(Object.values(colours(other))).size).toBe(3);
  });

  it('colours an unknown engine by its name, deterministically, and never like another line of the chart', () => {
    expect(colourOf('Mistral Le Chat')).toBe(colourOf('mistral le chat'));
    expect(CHART_PALETTE).toContain(colourOf('Mistral Le Chat'));
    const names = ['ChatGPT', 'Claude', 'Gemini', 'Perplexity', 'Copilot', 'A', 'B', 'C'];
    const colours = coloursFor(names);
    expect(new Set(colours.values()).size).toBe(8);
    expect(coloursFor([...names].reverse())).toEqual(new Map([...colours].reverse()));
  });

  it('moves labels of lines ending close together apart, inside the y range', () => {
    const panel = panelOf([...weekly('A', [40, 40, 40, 40]), ...weekly('B', [40.2, 40, 40, 40.2]), ...weekly('C', [79, 79, 79, 79.5])]);
    const domain = yDomain(panel);
    const labels = lineLabels(panel, domain);
    const gap = ((domain[1] - domain[0]) * 17) / 220;
    expect((labels[1]?.v ?? 0) - (labels[0]?.v ?? 0)).toBeGreaterThanOrEqual(gap - 1e-9);
    expect(Math.max(...labels.map((l) => l.v))).toBeLessThanOrEqual(domain[1]);
  });

  it('formats changes with a real minus sign', () => {
    expect([formatChange(4), formatChange(-3.54), formatChange(0.01)]).toEqual(['+4', '\u22123.5', '±0']);
    expect(cleanName(12)).toBe('12');
  });
});
