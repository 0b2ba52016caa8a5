import { describe, expect, it } from 'vitest';
import { chartAsset } from '../../shared/charts/assets';
import { fontMetrics } from '../../shared/charts/font-metrics';
import { loadChartRenderer } from '../../shared/charts/load';
import { rasterise, trendChartSvg, type RasterImage } from '../../shared/charts/trend-chart';
import type { EnginePoint, RenderedChart, TrendChartInput } from '../../shared/charts/types';

const DAY = 24 * 3600 * 1000;
const T0 = Date.UTC(2025, 0, 6);

function weekly(engine: string, values: number[]): EnginePoint[] {
  return values.map((value, i) => ({ engine, atMs: T0 + i * 7 * DAY, value }));
}

const ENGINES: EnginePoint[] = [
  ...weekly('ChatGPT', [52, 55, 58, 61, 60, 63, 62, 64, 66]),
  ...weekly('Gemini', [48, 47, 45, 44, 46, 43, 41, 40, 38]),
  ...weekly('<script>alert(1)</script> & co', [30, 32, 31, 33, 35, 34, 36, 37, 39]),
];

const INPUT: TrendChartInput = { projectName: 'Northwind Outdoor', engines: ENGINES };

async function rendered(input: TrendChartInput): Promise<RenderedChart> {
  const outcome = await (await loadChartRenderer()).renderTrendChart(input);
  if (outcome.kind !== 'rendered') throw new Error(`expected a chart, got: ${outcome.reason}`);
  return outcome.chart;
}

/** Width and height from the PNG's IHDR chunk (bytes 16–23), after checking the signature. */
function pngSize(png: Uint8Array): { width: number; height: number } {
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(Buffer.from(png.subarray(12, 16)).toString('latin1')).toBe('IHDR');
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** Pixels darker than the grid in a rectangle: text and lines, not the white card. */
function darkPixels(image: RasterImage, box: { x: number; y: number; w: number; h: number }): number {
  let count = 0;
  for (let y = box.y; y < box.y + box.h; y++) {
    for (let x = box.x; x < box.x + box.w; x++) {
      const i = 4 * (y * image.width + x);
      if (image.pixels[i]! < 120 && image.pixels[i + 1]! < 120 && image.pixels[i + 2]! < 120) count++;
    }
  }
  return count;
}

/** Pixels clearly not white in a rectangle: text and lines of any colour. */
function inkedPixels(image: RasterImage, box: { x: number; y: number; w: number; h: number }): number {
  let count = 0;
  for (let y = box.y; y < box.y + box.h; y++) {
    for (let x = box.x; x < box.x + box.w; x++) {
      const i = 4 * (y * image.width + x);
      if (Math.min(image.pixels[i]!, image.pixels[i + 1]!, image.pixels[i + 2]!) < 200) count++;
    }
  }
  return count;
}

describe('the trend chart PNG', () => {
  it('is a 1200×675 PNG per panel, and says what it shows', async () => {
    const chart = await rendered(INPUT);
    expect(pngSize(chart.png)).toEqual({ width: 1200, height: 675 });
    expect([chart.width, chart.height]).toEqual([1200, 675]);
    expect(chart.altText).toContain('ChatGPT 52 → 66 (+14)');

    const rivals = [...weekly('Northwind', [20, 22, 25, 24]), ...weekly('Summit', [30, 28, 27, 26])].map((p) => ({ ...p, name: p.engine }));
    const two = await rendered({ ...INPUT, rivals: { brand: 'Northwind', points: rivals } });
    expect(pngSize(two.png)).toEqual({ width: 1200, height: 1350 });
  });

  it('draws its text with the bundled font (resvg draws none without one)', async () => {
    const svg = await trendChartSvg(INPUT);
    expect(svg).toBeDefined();
    const withFont = await rasterise(svg!);
    const withoutFont = await rasterise(svg!, { withFont: false });
    // The title band (top-left): only the title's glyphs are dark there.
    const titleBand = { x: 0, y: 0, w: 700, h: 60 };
    expect(darkPixels(withoutFont, titleBand)).toBe(0);
    expect(darkPixels(withFont, titleBand)).toBeGreaterThan(1000);
    // Right of the lines' ends: each line's name, in its colour.
    const labels = { x: 900, y: 100, w: 290, h: 450 };
    expect(inkedPixels(withFont, labels)).toBeGreaterThan(inkedPixels(withoutFont, labels) + 500);
  });

  it('escapes service text in the SVG', async () => {
    const svg = (await trendChartSvg(INPUT))!;
    expect(svg.includes('<script')).toBe(false);
    expect(svg.includes('&lt;script&gt;alert(1)&lt;/scrip… 39</text>')).toBe(true);
  });

  it('draws 2–3 runs as points only, and gives a reason instead of a chart for one run', async () => {
    const sparse = { projectName: 'P', engines: weekly('ChatGPT', [40, 45, 42]) };
    const svg = (await trendChartSvg(sparse))!;
    expect(svg.includes('class="mark-line')).toBe(false);
    expect(svg.includes('class="mark-symbol')).toBe(true);
    expect((await trendChartSvg(INPUT))!.includes('class="mark-line')).toBe(true);
    expect(pngSize((await rendered(sparse)).png)).toEqual({ width: 1200, height: 675 });

    const renderer = await loadChartRenderer();
    expect(await renderer.renderTrendChart({ projectName: 'P', engines: weekly('ChatGPT', [40]) })).toEqual({
      kind: 'skipped',
      reason: expect.stringContaining('only one run') as unknown,
    });
  });

  it('renders 500 engines with NaN values and markup in names without throwing', async () => {
    const engines = Array.from({ length: 500 }, (_, i) => weekly(`<e${i}>\u202E`, [i % 3 === 0 ? Number.NaN : i % 100, 50, 60, 70])).flat();
    const chart = await rendered({ projectName: '\u200B<b>x</b>', engines });
    expect(pngSize(chart.png).width).toBe(1200);
    expect(chart.altText).toContain('492 more engines not shown');
    expect(chart.altText).not.toMatch(/[<>\u202E]/);
  });
});

describe('fontMetrics', () => {
  it('reads DejaVu Sans advance widths', () => {
    const metrics = fontMetrics(chartAsset('font'))!;
    expect(metrics).toBeDefined();
    expect(metrics.width('0', 10)).toBeCloseTo(metrics.width('9', 10));
    expect(metrics.width('iiii', 10)).toBeLessThan(metrics.width('mmmm', 10) / 2);
    expect(metrics.width('ChatGPT 61', 15)).toBeGreaterThan(60);
    expect(metrics.width('ChatGPT 61', 15)).toBeLessThan(0.8 * 10 * 15);
    expect(fontMetrics(new Uint8Array(20))).toBeUndefined();
  });
});
