/**
 * The trend chart renderer: Vega-Lite spec → vega View (no renderer: nothing drawn in a browser) →
 * SVG → PNG with resvg's WebAssembly build, DejaVu Sans as the only font. Pure apart from loading its
 * two assets once (./assets). Loaded only through `loadChartRenderer` (./load): importing this module
 * pulls in vega, vega-lite and resvg.
 *
 * Text in the SVG is escaped by vega; names were cleaned by ./series before they got here.
 */
import { initWasm, Resvg } from '@resvg/resvg-wasm';
import * as vega from 'vega';
import { logger, None, parse, View } from 'vega';
import { compile } from 'vega-lite';
import { chartAsset, initWasmOnce } from './assets';
import { fontMetrics } from './font-metrics';
import { planTrendChart } from './plan';
import { CHART_THEME, trendChartSpec, type PanelSpec } from './spec';
import type { ChartRenderer, TrendChartInput, TrendChartOutcome } from './types';

export function createChartRenderer(): ChartRenderer {
  return { renderTrendChart };
}

export async function renderTrendChart(input: TrendChartInput): Promise<TrendChartOutcome> {
  const plan = planTrendChart(input);
  if (plan.kind === 'skipped') return plan;
  const svg = stackPanels(await Promise.all(plan.panels.map(panelSvg)));
  const image = await rasterise(svg);
  return { kind: 'rendered', chart: { png: image.png, width: image.width, height: image.height, altText: plan.altText } };
}

/** The chart as SVG (for tests and the bench: the step before the PNG). */
export async function trendChartSvg(input: TrendChartInput): Promise<string | undefined> {
  const plan = planTrendChart(input);
  return plan.kind === 'skipped' ? undefined : stackPanels(await Promise.all(plan.panels.map(panelSvg)));
}

const quiet = logger(None);

/** vega-scenegraph's text measurer, replaceable by design (vl-convert does the same); missing from vega's typings. */
interface TextMetrics {
  width: (item: { fontSize?: unknown; limit?: unknown }, text: unknown) => number;
}

let measuring = false;

/** Makes vega measure text with DejaVu Sans's real widths (see ./font-metrics), once per process. */
function measureWithChartFont(): void {
  if (measuring) return;
  measuring = true;
  const metrics = fontMetrics(chartAsset('font'));
  const textMetrics = (vega as unknown as { textMetrics?: TextMetrics }).textMetrics;
  if (metrics === undefined || textMetrics === undefined) return;
  textMetrics.width = (item, text) => {
    const size = typeof item.fontSize === 'number' ? item.fontSize : 11;
    const width = metrics.width(typeof text === 'string' || typeof text === 'number' ? String(text).trim() : '', size);
    return typeof item.limit === 'number' && item.limit > 0 ? Math.min(width, item.limit) : width;
  };
}

/** One panel as an SVG document of 1200×675 px (see CHART_THEME). */
export async function panelSvg(panel: PanelSpec): Promise<string> {
  measureWithChartFont();
  const { spec } = compile(trendChartSpec(panel), { logger: quiet });
  const view = new View(parse(spec), { renderer: 'none', logLevel: None });
  try {
    return await view.toSVG(CHART_THEME.scale);
  } finally {
    view.finalize();
  }
}

interface SvgPanel {
  svg: string;
  width: number;
  height: number;
}

/** Panels one under another in one SVG document (nested <svg> elements, each at its own offset). */
export function stackPanels(svgs: readonly string[]): string {
  if (svgs.length === 1) return svgs[0]!;
  const panels = svgs.map(measure);
  const width = Math.max(...panels.map((p) => p.width));
  let y = 0;
  const nested = panels.map((p) => {
    const placed = p.svg.replace(/^<svg /, `<svg x="0" y="${y}" `);
    y += p.height;
    return placed;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}">${nested.join('')}</svg>`;
}

function measure(svg: string): SvgPanel {
  const open = /^<svg[^>]*>/.exec(svg)?.[0] ?? '';
  const size = (name: string): number => Number(new RegExp(`\\s${name}="([\\d.]+)"`).exec(open)?.[1] ?? 0);
  return { svg, width: size('width'), height: size('height') };
}

export interface RasterImage {
  png: Uint8Array;
  width: number;
  height: number;
  /** RGBA, row by row. */
  pixels: Uint8Array;
}

/** SVG → PNG with DejaVu Sans as every family (`withFont: false` draws no text: for tests). */
export async function rasterise(svg: string, options: { withFont?: boolean } = {}): Promise<RasterImage> {
  await initWasmOnce((module) => initWasm(module));
  const fontBuffers = options.withFont === false ? [] : [chartAsset('font')];
  const resvg = new Resvg(svg, {
    font: { fontBuffers, defaultFontFamily: CHART_THEME.font, sansSerifFamily: CHART_THEME.font },
    background: CHART_THEME.background,
  });
  try {
    const rendered = resvg.render();
    try {
      return { png: rendered.asPng(), width: rendered.width, height: rendered.height, pixels: rendered.pixels };
    } finally {
      rendered.free();
    }
  } finally {
    resvg.free();
  }
}
