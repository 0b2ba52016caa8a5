/**
 * The data side of the trend chart, pure: untrusted points in, bounded and cleaned series out, plus
 * the text alternative. Nothing here throws on bad input: NaN, odd types, hostile names and 500
 * engines are dropped, cleaned or cut, and what was left out is counted so the alt text can say so.
 */
import { isVisuallyEmpty, serviceText, stripInvisible, truncateText } from '../slack-text';

const WEEK_MS = 7 * 24 * 3600 * 1000;

export const CHART_LIMITS = {
  /** Lines per panel: more cannot be told apart by colour (and the legend would not fit a phone). */
  series: 8,
  /** Points per line: beyond this the line is thinned evenly (first and last kept). */
  pointsPerSeries: 120,
  /** Input points looked at per panel; the rest is ignored (bounds the work for absurd input). */
  inputPoints: 50_000,
  /** Characters of a name drawn in the image. */
  labelChars: 24,
  /** Characters of a name in the alt text (escaped length). */
  altNameChars: 40,
  /** Slack's `alt_txt` limit (files.getUploadURLExternal answers alt_txt_too_large past it). */
  altTextChars: 1000,
  /** The window shown, counted back from the newest point. */
  windowMs: 8 * WEEK_MS,
} as const;

/** One line of a panel. */
export interface ChartSeries {
  /** The name drawn in the image: invisible and control characters removed, cut; unique in its panel. */
  label: string;
  /** The name for Slack text (alt text): `serviceText` of the label. */
  slackName: string;
  /** Oldest first, one per run time, values 0–100. */
  points: { atMs: number; value: number }[];
}

/** How a panel's points are drawn: lines need enough runs to read as a trend. */
export type PanelMark = 'lines' | 'points';

export interface ChartPanel {
  series: ChartSeries[];
  /** Series left out by the `series` limit. */
  omitted: number;
  /** Distinct run times shown. */
  runs: number;
  firstMs: number;
  lastMs: number;
  mark: PanelMark;
  /** The label of the `keep` series (the brand), when it has data. */
  keptLabel?: string | undefined;
}

export type PanelOutcome = { kind: 'panel'; panel: ChartPanel } | { kind: 'empty'; reason: string };

export interface NamedPoint {
  name: unknown;
  atMs: unknown;
  value: unknown;
}

/** Runs (distinct times) below which there is no chart, and below which points are not joined. */
const MIN_RUNS_FOR_CHART = 2;
const MIN_RUNS_FOR_LINES = 4;

/**
 * Turns raw points into a panel: invalid points dropped, the last 8 weeks kept, values normalised to
 * 0–100 (all ≤ 1 means fractions), one point per name and time (the last given wins), names cleaned,
 * at most `CHART_LIMITS.series` series (`keep` first, then the best covered), newest value first.
 */
export function preparePanel(raw: readonly NamedPoint[], options: { keep?: string | undefined } = {}): PanelOutcome {
  const valid = validPoints(raw);
  if (valid.length === 0) return { kind: 'empty', reason: 'no run has a usable figure' };
  const newest = valid.reduce((max, p) => Math.max(max, p.atMs), 0);
  const recent = valid.filter((p) => p.atMs >= newest - CHART_LIMITS.windowMs);
  const scale = recent.every((p) => p.value <= 1) ? 100 : 1;
  const byName = new Map<string, Map<number, number>>();
  for (const p of recent) {
    const series = byName.get(p.name) ?? new Map<number, number>();
    series.set(p.atMs, clamp(Math.round(p.value * scale * 1e6) / 1e6, 0, 100));
    byName.set(p.name, series);
  }
  const keep = options.keep === undefined ? undefined : cleanName(options.keep);
  const all = [...byName.entries()].map(([name, values]) => toSeries(name, values));
  const keyed = chooseSeries(all, keep);
  const chosen = uniqueLabels(keyed);
  const times = new Set(chosen.flatMap((s) => s.points.map((p) => p.atMs)));
  if (times.size < MIN_RUNS_FOR_CHART) {
    return { kind: 'empty', reason: 'only one run in the last 8 weeks has a figure: a trend needs at least two' };
  }
  return {
    kind: 'panel',
    panel: {
      series: chosen,
      omitted: all.length - chosen.length,
      runs: times.size,
      firstMs: Math.min(...times),
      lastMs: Math.max(...times),
      mark: times.size < MIN_RUNS_FOR_LINES ? 'points' : 'lines',
      keptLabel: keep !== undefined && keyed[0]?.name === keep ? chosen[0]?.label : undefined,
    },
  };
}

interface ValidPoint {
  /** `cleanName` of the point's name: the series key. */
  name: string;
  atMs: number;
  value: number;
}

function validPoints(raw: readonly NamedPoint[]): ValidPoint[] {
  const out: ValidPoint[] = [];
  const list: readonly unknown[] = Array.isArray(raw) ? raw.slice(0, CHART_LIMITS.inputPoints) : [];
  for (const item of list) {
    if (typeof item !== 'object' || item === null) continue;
    const p = item as NamedPoint;
    const { atMs, value } = p;
    if (typeof atMs !== 'number' || !Number.isFinite(atMs) || atMs <= 0) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    out.push({ name: cleanName(p.name), atMs, value });
  }
  return out;
}

type KeyedSeries = ChartSeries & { name: string };

/** Best covered first (most runs, then highest last value, then name), `keep` always in; shown newest value first. */
function chooseSeries(all: KeyedSeries[], keep: string | undefined): KeyedSeries[] {
  const ranked = [...all].sort((a, b) => b.points.length - a.points.length || lastValue(b) - lastValue(a) || compare(a.name, b.name));
  const kept = ranked.filter((s) => s.name === keep);
  const chosen = [...kept, ...ranked.filter((s) => s.name !== keep).slice(0, CHART_LIMITS.series - kept.length)];
  return chosen.sort((a, b) => Number(b.name === keep) - Number(a.name === keep) || lastValue(b) - lastValue(a) || compare(a.name, b.name));
}

function toSeries(name: string, values: Map<number, number>): KeyedSeries {
  const points = [...values.entries()].sort(([a], [b]) => a - b).map(([atMs, value]) => ({ atMs, value }));
  return { name, label: name, slackName: '', points: thin(points, CHART_LIMITS.pointsPerSeries) };
}

/** Labels cut to `CHART_LIMITS.labelChars`, made unique (" 2", " 3"…) where two names cut alike. */
function uniqueLabels(series: KeyedSeries[]): ChartSeries[] {
  const used = new Set<string>();
  return series.map(({ name, points }) => {
    let label = truncateText(name, CHART_LIMITS.labelChars);
    for (let n = 2; used.has(label); n++) label = `${truncateText(name, CHART_LIMITS.labelChars - 4)} ${n}`;
    used.add(label);
    return { label, slackName: serviceText(label, CHART_LIMITS.altNameChars), points };
  });
}

/** At most `max` points, evenly spaced, the first and the last kept. */
function thin<T>(points: T[], max: number): T[] {
  if (points.length <= max) return points;
  const step = (points.length - 1) / (max - 1);
  return Array.from({ length: max }, (_, i) => points[Math.round(i * step)]!);
}

/** C0 and C1 control characters (tab and newline included: a label is one line). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001F\u007F-\u009F]/g;

/**
 * A name fit to draw: a string whatever came in, zero-width, bidi and control characters removed,
 * whitespace collapsed, at most 200 characters; "(unnamed)" when nothing visible is left.
 */
export function cleanName(name: unknown): string {
  const text = typeof name === 'string' ? name.slice(0, 1000) : typeof name === 'number' ? String(name) : '';
  const plain = stripInvisible(text).replace(CONTROL_CHARACTERS, ' ').replace(/\s+/g, ' ').trim();
  if (isVisuallyEmpty(plain)) return '(unnamed)';
  return truncateText(plain, 200);
}

/** Names for a legend: cleaned, cut to `max` characters, unique (" 2", " 3"… where two cut alike). */
export function legendNames(names: readonly string[], max: number): string[] {
  const used = new Set<string>();
  return names.map((raw) => {
    const clean = cleanName(raw);
    let name = truncateText(clean, max);
    for (let n = 2; used.has(name); n++) name = `${truncateText(clean, max - 3)} ${n}`;
    used.add(name);
    return name;
  });
}

export function lastValue(series: ChartSeries): number {
  return series.points.at(-1)?.value ?? 0;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

// ---------------------------------------------------------------------------------------------
// Numbers and dates as the chart and its alt text write them

/** One decimal at most ("50.5", "61"). */
export function formatFigure(value: number): string {
  const rounded = Math.round(value * 10) / 10;
  return Number.isInteger(rounded) ? String(rounded) : rounded.toFixed(1);
}

/** A signed change with a real minus sign ("+4", "−3.5", "±0"). */
export function formatChange(delta: number): string {
  const text = formatFigure(Math.abs(delta));
  if (text === '0') return '±0';
  return `${delta > 0 ? '+' : '\u2212'}${text}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** "Mar 3" in UTC, like the chart's axis (no ICU: cheap and the same on every machine). */
export function formatDay(ms: number): string {
  const date = new Date(ms);
  return `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()}`;
}

// ---------------------------------------------------------------------------------------------
// The text alternative

/** "ChatGPT 52 → 61 (+9)", or "ChatGPT 61 (one run)" for a single point. */
function seriesSentence(series: ChartSeries): string {
  const first = series.points[0];
  const last = series.points.at(-1);
  if (first === undefined || last === undefined) return series.slackName;
  if (series.points.length === 1) return `${series.slackName} ${formatFigure(last.value)} (one run)`;
  return `${series.slackName} ${formatFigure(first.value)} → ${formatFigure(last.value)} (${formatChange(last.value - first.value)})`;
}

function panelSentence(heading: string, panel: ChartPanel, noun: string): string {
  const range = `${panel.runs} runs from ${formatDay(panel.firstMs)} to ${formatDay(panel.lastMs)} (UTC)`;
  const more = panel.omitted > 0 ? ` ${panel.omitted} more ${noun}${panel.omitted === 1 ? '' : 's'} not shown.` : '';
  return `${heading}, ${range}: ${panel.series.map(seriesSentence).join('; ')}.${more}`;
}

/**
 * One paragraph: the engines panel (each engine's first → last value), then the rivals panel when
 * there is one, or why it is missing. Slack-safe (names via `serviceText`) and at most Slack's
 * `alt_txt` limit.
 */
export function altTextFor(input: {
  projectName: string;
  engines: ChartPanel;
  rivals?: { measure: string; panel: ChartPanel } | { measure: string; missing: string } | undefined;
}): string {
  const project = serviceText(input.projectName, CHART_LIMITS.altNameChars);
  const parts = [panelSentence(`Visibility by engine for ${project}`, input.engines, 'engine')];
  if (input.rivals !== undefined) {
    const measure = serviceText(input.rivals.measure, CHART_LIMITS.altNameChars);
    parts.push(
      'panel' in input.rivals
        ? panelSentence(`${measure}, brand against its top rivals`, input.rivals.panel, 'rival')
        : `${measure} against rivals: not drawn (${input.rivals.missing}).`,
    );
  }
  return truncateText(parts.join(' '), CHART_LIMITS.altTextChars);
}
