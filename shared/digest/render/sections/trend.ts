/**
 * The trend in the main message as Slack's own line chart (a `data_visualization` block): each engine's
 * main figure over its last runs, one series per engine, from the trend the project's snapshot keeps
 * (../../chart-history.ts) — the figures the digests reported, not recomputed. Within Slack's limits
 * (shared/slack-blocks/limits.ts) by construction: at most `CHART_BLOCK_LIMITS.series` engines, at most
 * `categories` runs, every series one value per run, names and labels cut to 20 characters. Series come
 * in the PNG palette's order (shared/charts/palette.ts), so an engine keeps its place — and Slack's
 * colour for that place — from one digest to the next. Its words (`trendText`) go into the message's
 * fallback text: notifications, screen readers, and clients that cannot draw the block (names there
 * through `serviceText`; the block's own strings are plain text, never parsed as markup).
 */
import { formatChange, formatDay, formatFigure, legendNames } from '../../../charts/series';
import { CHART_PALETTE, coloursFor } from '../../../charts/palette';
import type { TrendPoint } from '../../../ports';
import { CHART_BLOCK_LIMITS } from '../../../slack-blocks/limits';
import type { DataVisualizationBlock } from '../../../slack-blocks/types';
import { serviceText, truncateText } from '../../../slack-text';
import { humaniseKey } from '../format';
import type { DigestModel } from '../model';
import { shownValue } from '../units';

/** The chart's block id: the poster finds it by type, the tests by id. */
export const TREND_BLOCK_ID = 'bridge_trend_chart';

/** One engine's line: its shown values, one per run of the window. */
interface Line {
  name: string;
  values: number[];
}

export interface TrendChart {
  block: DataVisualizationBlock;
  /** The chart in words (plain text, one line). */
  text: string;
}

type Shown = (value: number) => number;

/** The figure of `engine` at `point` as shown, when it is a number that can be drawn (a damaged snapshot may hold anything). */
function shownAt(point: TrendPoint, engine: string, shown: Shown): number | null {
  const value: unknown = Object.hasOwn(point.engines, engine) ? point.engines[engine] : undefined;
  if (typeof value !== 'number') return null;
  const figure = shown(value);
  return Number.isFinite(figure) ? figure : null;
}

/** How many of the newest points hold a figure for `engine`, counting back from the newest. */
function suffixRuns(points: readonly TrendPoint[], engine: string, shown: Shown): number {
  let runs = 0;
  for (let i = points.length - 1; i >= 0 && shownAt(points[i]!, engine, shown) !== null; i--) runs += 1;
  return runs;
}

/**
 * The engines drawn and the runs they share: engines of the newest run that have at least half the
 * longest unbroken history (so one new engine does not cut everyone's line to two runs), the longest
 * first, at most `series`; the window is the runs every one of them has a figure for.
 */
function chooseLines(points: readonly TrendPoint[], shown: Shown): { engines: string[]; runs: number; omitted: number } {
  const newest = points.at(-1);
  if (newest === undefined) return { engines: [], runs: 0, omitted: 0 };
  const candidates = Object.keys(newest.engines)
    .map((engine) => ({ engine, runs: suffixRuns(points, engine, shown), last: shownAt(newest, engine, shown) ?? 0 }))
    .filter((c) => c.runs >= 2);
  const longest = Math.max(0, ...candidates.map((c) => c.runs));
  const eligible = candidates
    .filter((c) => c.runs * 2 >= longest)
    .sort((a, b) => b.runs - a.runs || b.last - a.last || (a.engine < b.engine ? -1 : 1));
  const chosen = eligible.slice(0, CHART_BLOCK_LIMITS.series);
  const runs = Math.min(CHART_BLOCK_LIMITS.categories, ...chosen.map((c) => c.runs));
  return {
    engines: chosen.map((c) => c.engine),
    runs: chosen.length === 0 ? 0 : runs,
    omitted: Object.keys(newest.engines).length - chosen.length,
  };
}

/** Run labels ("Mar 3"): one point a day, so unique; a damaged trend's repeat gets a number. */
function categories(points: readonly TrendPoint[]): string[] {
  const used = new Set<string>();
  return points.map((p) => {
    let label = formatDay(p.atMs);
    for (let n = 2; used.has(label); n++) label = `${formatDay(p.atMs)} (${n})`;
    used.add(label);
    return label;
  });
}

/** The engines' figure and its unit, as the digest reads this run's engines. */
function measure(model: DigestModel): { label: string; unit: string; shown: Shown } {
  const engine = model.engines.find((e) => e.value !== null && e.field !== null);
  const reading = engine?.reading ?? { kind: 'share' as const, scale: null };
  const label = truncateText(humaniseKey(engine?.field ?? 'visibility'), 30);
  const share = reading.kind === 'share';
  return { label, unit: share ? '%' : '', shown: (value) => shownValue(reading, value) };
}

/** The palette's order: known engines in their colour's place, others by name (as `coloursFor` gives them). */
function paletteOrder(lines: Line[]): Line[] {
  const colours = coloursFor(lines.map((l) => l.name));
  const place = (line: Line) => CHART_PALETTE.indexOf((colours.get(line.name) ?? CHART_PALETTE[0]) as (typeof CHART_PALETTE)[number]);
  return [...lines].sort((a, b) => place(a) - place(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The run's trend chart, or null when fewer than two runs have a figure to draw. */
export function trendChart(model: DigestModel): TrendChart | null {
  const trend = model.input.options?.trend ?? [];
  const { label, unit, shown } = measure(model);
  const { engines, runs, omitted } = chooseLines(trend, shown);
  if (engines.length === 0 || runs < 2) return null;
  const window = trend.slice(-runs);
  const names = legendNames(engines, CHART_BLOCK_LIMITS.labelChars);
  const lines = paletteOrder(engines.map((engine, i) => ({ name: names[i]!, values: window.map((p) => shownAt(p, engine, shown) ?? 0) })));
  const labels = categories(window);
  const block: DataVisualizationBlock = {
    type: 'data_visualization',
    block_id: TREND_BLOCK_ID,
    title: truncateText(`${label} by engine, last ${runs} runs`, CHART_BLOCK_LIMITS.titleChars),
    chart: {
      type: 'line',
      series: lines.map((line) => ({ name: line.name, data: line.values.map((value, i) => ({ label: labels[i]!, value })) })),
      axis_config: {
        categories: labels,
        x_label: 'Run (UTC day)',
        y_label: truncateText(unit === '' ? label : `${label} (${unit})`, CHART_BLOCK_LIMITS.axisLabelChars),
      },
    },
  };
  return { block, text: trendText(lines, labels, { label: serviceText(label, 30), unit, omitted }) };
}

/** "Visibility by engine, Mar 3 – Mar 27 (UTC): ChatGPT 52 → 61 % (+9); … 2 more engines not shown." */
function trendText(lines: readonly Line[], labels: readonly string[], what: { label: string; unit: string; omitted: number }): string {
  const unit = what.unit === '' ? '' : ` ${what.unit}`;
  const each = lines.map((line) => {
    const first = line.values[0] ?? 0;
    const last = line.values.at(-1) ?? 0;
    return `${serviceText(line.name, CHART_BLOCK_LIMITS.labelChars * 2)} ${formatFigure(first)} → ${formatFigure(last)}${unit} (${formatChange(last - first)})`;
  });
  const more = what.omitted > 0 ? ` ${what.omitted} more engine${what.omitted === 1 ? '' : 's'} not shown.` : '';
  return `${what.label} by engine, ${labels[0] ?? ''} – ${labels.at(-1) ?? ''} (UTC): ${each.join('; ')}.${more}`;
}
