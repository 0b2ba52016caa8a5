/**
 * The Vega-Lite spec of the trend chart, pure (no vega loaded here). Theme: a solid light card with
 * dark text. The bot cannot know a viewer's Slack theme (one file is shared by everyone in the
 * channel), and a transparent or dark image is unreadable on the other theme; a light card reads on
 * both, like the charts Datadog and Grafana post. Sizes are for a phone: 540×304 layout units drawn at
 * 2.22× (1200×675 px per panel), so 15-unit labels are still ~10 pt when Slack shrinks the image to a
 * phone's width (~375 pt). Each name keeps its colour in every chart (./palette), and each line is
 * named at its end ("ChatGPT 61"), so the reader needs neither a legend nor to tell colours apart.
 */
import type { Config, TopLevelSpec } from 'vega-lite';
import { coloursFor } from './palette';
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
  /** Layout units of the plot's height (the panel less its title and axis), for spacing the line labels. */
  plotHeight: 220,
  /** Layout units between two line labels' baselines. */
  labelGap: 17,
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

interface LineLabel extends Row {
  /** "ChatGPT 61": the last value, so the phone reader needs no hover. */
  text: string;
}

/**
 * Each line's name at its last point, moved apart vertically (in data units) where two would overlap
 * and kept inside the y range: lines ending close together still get readable labels.
 */
export function lineLabels(panel: ChartPanel, domain: readonly [number, number]): LineLabel[] {
  const gap = ((domain[1] - domain[0]) * CHART_THEME.labelGap) / CHART_THEME.plotHeight;
  const labels = panel.series
    .filter((s) => s.points.length > 0)
    .map((s) => {
      const last = s.points.at(-1) as { atMs: number; value: number };
      return { key: s.label, t: last.atMs, v: last.value, text: `${s.label} ${formatFigure(lastValue(s))}` };
    })
    .sort((a, b) => a.v - b.v || a.key.localeCompare(b.key));
  // Upwards from the lowest, then back down from the top if the stack ran out of room.
  labels.forEach((label, i) => {
    const below = labels[i - 1];
    if (below !== undefined) label.v = Math.max(label.v, below.v + gap);
  });
  for (let i = labels.length - 1; i >= 0; i--) {
    const label = labels[i] as LineLabel;
    const above = labels[i + 1];
    label.v = Math.min(label.v, above === undefined ? domain[1] : above.v - gap);
  }
  return labels;
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
  const names = panel.series.map((s) => s.label);
  const colours = coloursFor(names);
  const values: Row[] = panel.series.flatMap((s) => s.points.map((p) => ({ key: s.label, t: p.atMs, v: p.value })));
  const domain = yDomain(panel);
  const lines = panel.mark === 'lines';
  const colour = {
    field: 'key',
    type: 'nominal',
    scale: { domain: names, range: names.map((n) => colours.get(n) ?? CHART_THEME.text) },
    legend: null,
  } as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    background: CHART_THEME.background,
    padding: 12,
    autosize: { type: 'fit', contains: 'padding' },
    config: chartConfig(),
    title: { text: spec.title, subtitle: spec.subtitle },
    width: CHART_THEME.width,
    height: CHART_THEME.panelHeight,
    encoding: {
      x: {
        field: 't',
        type: 'temporal',
        scale: { type: 'utc' },
        axis: { title: null, format: '%b %-d', tickCount: 5, labelOverlap: true, grid: false },
      },
      y: {
        field: 'v',
        type: 'quantitative',
        scale: { domain, nice: false },
        axis: { title: null, tickCount: 5, labelExpr: "datum.label + ' %'" },
      },
      color: colour,
    },
    layer: [
      {
        data: { values },
        mark: lines
          ? { type: 'line', point: { filled: true, size: 45 }, interpolate: 'monotone' }
          : { type: 'point', filled: true, size: 150, opacity: 1 },
        encoding: {
          // The brand among its rivals is drawn thicker; other lines alike.
          strokeWidth:
            spec.emphasis === undefined
              ? { value: 3 }
              : { condition: { test: `datum.key === ${JSON.stringify(spec.emphasis)}`, value: 5 }, value: 2.5 },
        },
      },
      {
        data: { values: lineLabels(panel, domain) },
        mark: { type: 'text', align: 'left', baseline: 'middle', dx: 9, fontSize: 15 },
        encoding: { text: { field: 'text', type: 'nominal' } },
      },
    ],
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
  };
}
