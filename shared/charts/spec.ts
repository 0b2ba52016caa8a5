/**
 * The Vega-Lite spec of the trend chart, pure (no vega loaded here). Theme: a solid light card with
 * dark text. The bot cannot know a viewer's Slack theme (one file is shared by everyone in the
 * channel), and a transparent or dark image is unreadable on the other theme; a light card reads on
 * both, like the charts Datadog and Grafana post. Sizes are for a phone: 540×304 layout units drawn at
 * 2.22× (1200×675 px per panel), so 15-unit labels are still ~10 pt when Slack shrinks the image to a
 * phone's width (~375 pt).
 */
import type { Config, TopLevelSpec } from 'vega-lite';
import { formatDay, formatFigure, lastValue, type ChartPanel } from './series';

export const CHART_THEME = {
  /** Layout units of one panel; the PNG is `scale` times larger. */
  width: 540,
  panelHeight: 303.75,
  scale: 1200 / 540,
  font: 'DejaVu Sans',
  background: '#FFFFFF',
  text: '#1D1C1D',
  muted: '#616061',
  grid: '#E3E3E3',
  /** Okabe–Ito based, dark enough on white, told apart with the common colour-vision deficiencies. */
  palette: ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#6B4C9A', '#4D4D4D'],
} as const;

export interface PanelSpec {
  title: string;
  subtitle: string;
  panel: ChartPanel;
  /** A label drawn thicker (the brand among its rivals). */
  emphasis?: string | undefined;
}

interface Row {
  key: string;
  t: number;
  v: number;
}

/** Legend entries read "ChatGPT  61": the last value, so the phone reader needs no hover. */
function legendKey(label: string, last: number): string {
  return `${label}  ${formatFigure(last)}`;
}

/** A y domain around the data, on tens, inside 0–100, at least 10 wide: small moves stay visible. */
export function yDomain(panel: ChartPanel): [number, number] {
  const values = panel.series.flatMap((s) => s.points.map((p) => p.value));
  const low = Math.max(0, Math.floor((Math.min(...values) - 5) / 10) * 10);
  const high = Math.min(100, Math.ceil((Math.max(...values) + 5) / 10) * 10);
  return high - low >= 10 ? [low, high] : low + 10 <= 100 ? [low, low + 10] : [90, 100];
}

/** "Visibility by engine · 9 runs, Jan 5 – Mar 2 (UTC)". */
export function panelSubtitle(what: string, panel: ChartPanel): string {
  return `${what} · ${panel.runs} runs, ${formatDay(panel.firstMs)} – ${formatDay(panel.lastMs)} (UTC)`;
}

/** One panel, 540×304 layout units exactly (autosize fit); a second panel is a second spec, stacked as images. */
export function trendChartSpec(spec: PanelSpec): TopLevelSpec {
  const { panel } = spec;
  const keys = panel.series.map((s) => legendKey(s.label, lastValue(s)));
  const values: Row[] = panel.series.flatMap((s, i) => s.points.map((p) => ({ key: keys[i]!, t: p.atMs, v: p.value })));
  const emphasis = keys[panel.series.findIndex((s) => s.label === spec.emphasis)];
  const lines = panel.mark === 'lines';
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    background: CHART_THEME.background,
    padding: 12,
    autosize: { type: 'fit', contains: 'padding' },
    config: chartConfig(),
    title: { text: spec.title, subtitle: spec.subtitle },
    width: CHART_THEME.width,
    height: CHART_THEME.panelHeight,
    data: { values },
    mark: lines
      ? { type: 'line', point: { filled: true, size: 45 }, interpolate: 'monotone' }
      : { type: 'point', filled: true, size: 150, opacity: 1 },
    encoding: {
      x: {
        field: 't',
        type: 'temporal',
        scale: { type: 'utc' },
        axis: { title: null, format: '%b %-d', tickCount: 5, labelOverlap: true, grid: false },
      },
      y: { field: 'v', type: 'quantitative', scale: { domain: yDomain(panel), nice: false }, axis: { title: null, tickCount: 5 } },
      color: {
        field: 'key',
        type: 'nominal',
        scale: { domain: keys, range: CHART_THEME.palette.slice(0, keys.length) },
        legend: { title: null, orient: 'right', labelLimit: 190, symbolSize: 90, symbolStrokeWidth: 3 },
      },
      // The brand among its rivals is drawn thicker; other lines alike.
      strokeWidth:
        emphasis === undefined ? { value: 3 } : { condition: { test: `datum.key === ${JSON.stringify(emphasis)}`, value: 5 }, value: 2.5 },
    },
  };
}

function chartConfig(): Config {
  const { font, text, muted, grid, width } = CHART_THEME;
  return {
    font,
    view: { stroke: null },
    title: {
      anchor: 'start',
      fontSize: 20,
      fontWeight: 'normal',
      color: text,
      subtitleFontSize: 14,
      subtitleColor: muted,
      offset: 10,
      limit: width,
    },
    axis: { labelFontSize: 15, labelColor: text, domainColor: muted, tickColor: muted, gridColor: grid, labelPadding: 4 },
    legend: { labelFontSize: 15, labelColor: text, rowPadding: 4 },
  };
}
