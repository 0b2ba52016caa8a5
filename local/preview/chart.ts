/**
 * Slack's chart block (`data_visualization`) as the preview draws it: an inline SVG line, area, bar or pie
 * chart with its axes, axis labels and a legend, one colour per series in the palette's order (the order
 * the trend PNG uses), so the preview needs no script and no external asset. Only the shape is read here:
 * the local Slack server has refused any block past Slack's limits before it reaches the page.
 */
import { CHART_PALETTE } from '../../shared/charts/palette';
import { asArray as list, isRecord } from '../../shared/util';
import { escapeHtml, str } from './mrkdwn';

interface Series {
  name: string;
  values: (number | undefined)[];
}

/** The drawing's size in SVG units; the page scales it to the message's width. */
const WIDTH = 560;
const HEIGHT = 260;
const TICKS = 4;
/** Rough width of one character of an axis label (11 px sans-serif), to keep x labels from overlapping. */
const CHAR_WIDTH = 6.2;

function colourAt(index: number): string {
  return CHART_PALETTE[index % CHART_PALETTE.length] ?? CHART_PALETTE[0];
}

/** Coordinates with two decimals: small markup, no visible rounding. */
function n(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/** A tick value without float noise: 0.30000000000000004 → "0.3", 12000 → "12,000". */
function tickLabel(value: number): string {
  return Number(value.toPrecision(10)).toLocaleString('en-US', { maximumFractionDigits: 4 });
}

/** Round ticks (1, 2 or 5 × 10^k apart) covering `min`..`max`. */
function niceTicks(min: number, max: number): number[] {
  const span = max - min || Math.abs(max) || 1;
  const raw = span / TICKS;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const first = Math.floor(min / step) * step;
  const last = Math.ceil(max / step) * step;
  const ticks: number[] = [];
  for (let t = first; t <= last + step / 2; t += step) ticks.push(t);
  return ticks.length > 1 ? ticks : [first, first + step];
}

function seriesOf(chart: Record<string, unknown>, categories: string[]): Series[] {
  return list(chart.series).flatMap((entry) => {
    if (!isRecord(entry)) return [];
    const byLabel = new Map(list(entry.data).flatMap((p) => (isRecord(p) && typeof p.value === 'number' ? [[p.label, p.value]] : [])));
    return [{ name: str(entry.name), values: categories.map((c) => byLabel.get(c)) }];
  });
}

function legendHtml(items: { name: string; colour: string; note?: string }[]): string {
  const entries = items.map(
    ({ name, colour, note }) =>
      `<li><svg class="swatch" viewBox="0 0 10 10" width="10" height="10" aria-hidden="true"><rect width="10" height="10" rx="2" fill="${colour}"/></svg>` +
      `<span class="legend-name">${escapeHtml(name)}</span>${note === undefined ? '' : ` <span class="legend-note">${escapeHtml(note)}</span>`}</li>`,
  );
  return `<ul class="chart-legend">${entries.join('')}</ul>`;
}

/** One path per series: a line, a filled area, or its bars as one path of rectangles. */
function seriesPath(type: string, series: Series, index: number, count: number, plot: Plot): string {
  const colour = colourAt(index);
  const points = series.values.flatMap((v, i) => (v === undefined ? [] : [{ x: plot.x(i), y: plot.y(v), i }]));
  const title = `<title>${escapeHtml(series.name)}</title>`;
  const attrs = `class="series" data-series="${escapeHtml(series.name)}"`;
  if (type === 'bar') {
    const group = plot.band * 0.8;
    const width = group / count;
    const rects = points.map(({ y, i }) => {
      const left = plot.x(i) - group / 2 + index * width;
      const top = Math.min(y, plot.zeroY);
      return `M${n(left)} ${n(top)}h${n(width - 1)}v${n(Math.max(Math.abs(plot.zeroY - y), 1))}h${n(1 - width)}Z`;
    });
    return `<path ${attrs} d="${rects.join('')}" fill="${colour}">${title}</path>`;
  }
  const line = points.map(({ x, y }, k) => `${k === 0 ? 'M' : 'L'}${n(x)} ${n(y)}`).join('');
  // A single point is a dot: a zero-length segment with a round cap.
  const d = points.length === 1 ? `${line}h0` : line;
  if (type === 'area' && points.length > 1) {
    const first = points[0]!;
    const last = points[points.length - 1]!;
    const fill = `${d}L${n(last.x)} ${n(plot.zeroY)}L${n(first.x)} ${n(plot.zeroY)}Z`;
    // The area's top edge drawn again as a line: a stroke on the path would outline its sides and base too.
    const edge = points.map(({ x, y }) => `${n(x)},${n(y)}`).join(' ');
    return (
      `<path ${attrs} d="${fill}" fill="${colour}" fill-opacity="0.25">${title}</path>` +
      `<polyline points="${edge}" fill="none" stroke="${colour}" stroke-width="2" stroke-linejoin="round"/>`
    );
  }
  return `<path ${attrs} d="${d}" fill="none" stroke="${colour}" stroke-width="2.5" stroke-linejoin="round" stroke-linecap="round">${title}</path>`;
}

interface Plot {
  x(index: number): number;
  y(value: number): number;
  zeroY: number;
  band: number;
}

/** A line, area or bar chart: y ticks and grid, x category labels (thinned to fit), axis labels, series. */
function axisChartSvg(type: string, chart: Record<string, unknown>, title: string): { svg: string; series: Series[] } {
  const axis = isRecord(chart.axis_config) ? chart.axis_config : {};
  const categories = list(axis.categories).map(str);
  const series = seriesOf(chart, categories);
  const values = series.flatMap((s) => s.values.filter((v): v is number => v !== undefined && Number.isFinite(v)));
  // Bars and areas stand on zero; a line keeps its own range, so small moves stay visible.
  const from = type === 'line' ? values : [0, ...values];
  const ticks = from.length === 0 ? [0, 1] : niceTicks(Math.min(...from), Math.max(...from));
  const low = ticks[0]!;
  const high = ticks[ticks.length - 1]!;
  const xLabel = str(axis.x_label);
  const yLabel = str(axis.y_label);
  const tickWidth = Math.max(...ticks.map((t) => tickLabel(t).length)) * CHAR_WIDTH;
  const longest = Math.max(...categories.map((c) => c.length), 1);
  // Lines and areas put the first and last category on the plot's edges: room for half their labels.
  const overhang = type === 'bar' ? 0 : (longest * CHAR_WIDTH) / 2 + 4;
  const left = Math.max(8 + tickWidth + (yLabel ? 18 : 0), overhang);
  const right = Math.max(16, overhang);
  const top = 12;
  const bottom = 26 + (xLabel ? 18 : 0);
  const width = WIDTH - left - right;
  const height = HEIGHT - top - bottom;
  const count = Math.max(categories.length, 1);
  const band = width / count;
  const x = (i: number): number => (type === 'bar' || count === 1 ? left + band * (i + 0.5) : left + (width * i) / (count - 1));
  const y = (v: number): number => top + height - ((v - low) / (high - low)) * height;
  const plot: Plot = { x, y, zeroY: y(Math.min(Math.max(0, low), high)), band };

  const grid = ticks.map(
    (t) =>
      `<line class="grid" x1="${n(left)}" x2="${n(left + width)}" y1="${n(y(t))}" y2="${n(y(t))}" stroke="#e8e8e8"/>` +
      `<text x="${n(left - 6)}" y="${n(y(t) + 4)}" text-anchor="end">${escapeHtml(tickLabel(t))}</text>`,
  );
  const every = Math.max(1, Math.ceil((count * (longest * CHAR_WIDTH + 8)) / width));
  const xTicks = categories.map((c, i) =>
    i % every === 0 ? `<text class="category" x="${n(x(i))}" y="${n(top + height + 16)}" text-anchor="middle">${escapeHtml(c)}</text>` : '',
  );
  const axisLabels =
    (xLabel
      ? `<text class="axis-label" x="${n(left + width / 2)}" y="${HEIGHT - 6}" text-anchor="middle">${escapeHtml(xLabel)}</text>`
      : '') +
    (yLabel
      ? `<text class="axis-label" transform="translate(12 ${n(top + height / 2)}) rotate(-90)" text-anchor="middle">${escapeHtml(yLabel)}</text>`
      : '');
  const baseline = `<line x1="${n(left)}" x2="${n(left + width)}" y1="${n(plot.zeroY)}" y2="${n(plot.zeroY)}" stroke="#bbb"/>`;
  const paths = series.map((s, i) => seriesPath(type, s, i, series.length, plot));
  const svg =
    `<svg class="chart-svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(title)}">` +
    `<g class="ticks">${grid.join('')}${xTicks.join('')}</g>${baseline}${paths.join('')}${axisLabels}</svg>`;
  return { svg, series };
}

/** A pie: one path per segment, clockwise from the top, its share in the legend. */
function pieSvg(chart: Record<string, unknown>, title: string): { svg: string; legend: { name: string; colour: string; note: string }[] } {
  const segments = list(chart.segments).flatMap((s) =>
    isRecord(s) && typeof s.value === 'number' && s.value > 0 ? [{ label: str(s.label), value: s.value }] : [],
  );
  const total = segments.reduce((sum, s) => sum + s.value, 0) || 1;
  const cx = WIDTH / 2;
  const cy = HEIGHT / 2;
  const r = HEIGHT / 2 - 12;
  const at = (turn: number): string => `${n(cx + r * Math.sin(turn * 2 * Math.PI))} ${n(cy - r * Math.cos(turn * 2 * Math.PI))}`;
  let start = 0;
  const paths = segments.map((s, i) => {
    const share = s.value / total;
    const end = start + share;
    // A whole circle is two half arcs: one arc from a point to itself draws nothing.
    const d =
      share >= 1
        ? `M${at(0)}A${r} ${r} 0 1 1 ${at(0.5)}A${r} ${r} 0 1 1 ${at(0)}Z`
        : `M${n(cx)} ${n(cy)}L${at(start)}A${r} ${r} 0 ${share > 0.5 ? 1 : 0} 1 ${at(end)}Z`;
    start = end;
    return `<path class="series" data-series="${escapeHtml(s.label)}" d="${d}" fill="${colourAt(i)}" stroke="#fff" stroke-width="1.5"><title>${escapeHtml(s.label)}</title></path>`;
  });
  const legend = segments.map((s, i) => ({ name: s.label, colour: colourAt(i), note: `${Math.round((s.value / total) * 1000) / 10} %` }));
  return {
    svg: `<svg class="chart-svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(title)}">${paths.join('')}</svg>`,
    legend,
  };
}

/** A `data_visualization` block as HTML: its title, the chart, the legend. */
export function chartHtml(block: Record<string, unknown>): string {
  const title = str(block.title);
  const chart = isRecord(block.chart) ? block.chart : {};
  const type = str(chart.type);
  let body: string;
  if (type === 'pie') {
    const pie = pieSvg(chart, title);
    body = pie.svg + legendHtml(pie.legend);
  } else {
    const drawn = axisChartSvg(type, chart, title);
    body = drawn.svg + legendHtml(drawn.series.map((s, i) => ({ name: s.name, colour: colourAt(i) })));
  }
  return `<figure class="block chart" data-chart-type="${escapeHtml(type)}"><figcaption class="chart-title">${escapeHtml(title)}</figcaption>${body}</figure>`;
}
