/** What the digest says, worked out once from the renderer's input; every section reads from it. */
import type { DigestMode } from '../../contracts';
import type { TrendPoint } from '../../ports';
import type { Gap, GenericRow, Metric, Project, ReasoningCard, Scalar, VisibilityOverview } from '../../read-api-types';
import { changeTone, type ChangeTone, type MetricDirections } from '../metric-direction';
import {
  dataQuality,
  gapNewsOf,
  judgeRun,
  type DataQuality,
  type FigureCall,
  type FigureInput,
  type FigureKind,
  type GapNews,
  type Thresholds,
  type Verdict,
} from '../verdict';
import { minimumFor, readMetric, type MetricReading, type NoiseBand, type NoiseMinimums } from '../noise';
import { parseNumericValue } from '../numeric';
import { gapShifts, rivalStandings, type GapShift, type RivalStanding } from '../rivals';
import { alertsBySeverity, rowName, rowPrimaryValue, type AlertView } from '../rows';
import { diffSnapshots, historyOf, isTruncated, SNAPSHOT_MAX_TEXT, type ProjectSnapshot, type SnapshotDiff } from '../snapshot';
import { fillUrlTemplate } from '../links';
import { gapTrend } from '../gap-trend';
import { formatNumber, projectName } from './format';

export interface DigestOptions {
  /** Gaps listed by name in the baseline and status (default 5). */
  topGaps?: number | undefined;
  /** Top gaps whose reasoning card is read for the thread (default 3). */
  reasoningGaps?: number | undefined;
  /** https URL template with {project_id} {run_id} {prompt_id} {asset_id}; none = no links. */
  dashboardUrlTemplate?: string | undefined;
  /** 'changes': a quiet run (see `isQuietRun`) renders one compact line and no thread. Default 'full'. */
  mode?: DigestMode | undefined;
  /** Per-label minimum changes of metrics that are not shares (see noise.ts). */
  noiseMinimums?: NoiseMinimums | undefined;
  /** Per-label direction overrides (see metric-direction.ts). */
  directions?: MetricDirections | undefined;
  /** A channel filter's `min-change` (../channel-filter.ts): a smaller change of any kind is not called, whatever its noise. */
  minChange?: number | undefined;
  /** The verdict's thresholds (bench/calibrate.ts tries others); default `THRESHOLDS`. */
  thresholds?: Thresholds | undefined;
  /** The project's trend (../chart-history.ts), this run included: the main message's native chart. */
  trend?: readonly TrendPoint[] | undefined;
  /** The channel the digest is rendered for: its "Mute 7 days" / "Only changes" buttons; none = no buttons. */
  channel?: ChannelContext | undefined;
  /** This channel was already shown "About these figures" (the metric captions): not again. */
  aboutShown?: boolean | undefined;
}

/** The channel a digest goes to, as its buttons and settings note need it. */
export interface ChannelContext {
  channel: string;
  projectId: string;
  /** The project's name as the service gives it (the button value carries it for the reply). */
  projectName: string;
  mode: DigestMode;
  /** The last change of the channel's settings (e.g. "mode changes" by U123), shown as a small note. */
  change?: { what: string; by: string; atMs: number } | undefined;
  /** The value of its Mute / Only changes buttons, signed by the bridge (buttons/value.ts); none = no such buttons. */
  actionValue?: string | undefined;
}

export interface DigestInput {
  project: Project;
  /** From the run.completed event: its id, data.run_id, data.answers, data.status and created_at. */
  run: { eventId: string; runId: string; answers: number | null; createdAt: string; status?: string | undefined };
  overview: VisibilityOverview;
  /** In API order: the first is the worst. */
  gaps: Gap[];
  /** page_size the gaps were read with: a page that came back full is treated as truncated. */
  pageSize?: number | undefined;
  /** Gap entries the read API could not read (skipped); counted and mentioned. */
  unreadableGaps?: number | undefined;
  /** The snapshot stored by the previous digest of this project; null for the first digest. */
  previous: ProjectSnapshot | null;
  /** Reasoning card by prompt_id for the top gaps; null or missing = no card. */
  reasoning: ReadonlyMap<string, ReasoningCard | null>;
  options?: DigestOptions | undefined;
}

/** A figure compared with the last digest: what a metric and an engine's row share. */
export interface ComparedFigure {
  value: number | null;
  reading: MetricReading;
  /** Change since the last digest; null on the first or when either side is not numeric. */
  delta: number | null;
  band: NoiseBand | null;
  /** The verdict called it a change (beyond normal variation, in one run or persistently). */
  significant: boolean;
  /** Of the called change when significant, else of the change since the last run. */
  tone: ChangeTone | null;
  /** The verdict's call (null: not judged — a first digest, a data-quality run, no number). */
  call: FigureCall | null;
}

/** A headline metric read by meaning: kind, unit, change and whether the change is beyond its noise. */
export interface MetricView extends ComparedFigure {
  /** As sent (not escaped). */
  label: string;
  raw: Scalar;
  caption: string | null;
  weekDelta: number | null;
  series: number[];
  /** The overview's first metric: the one the mark follows. */
  lead: boolean;
}

/** One AI engine's row with its main figure compared like a metric. */
export interface EngineView extends ComparedFigure {
  name: string | null;
  row: GenericRow;
  /** The field compared (see `rowPrimaryValue`), null when the row has no number. */
  field: string | null;
}

export interface DigestModel {
  input: DigestInput;
  name: string;
  /** Gaps de-duplicated by prompt_id, API order. */
  gaps: Gap[];
  truncated: boolean;
  unreadable: number;
  diff: SnapshotDiff;
  alerts: AlertView[];
  metrics: MetricView[];
  engines: EngineView[];
  rivals: RivalStanding[];
  /** Per prompt in both runs: a new winner, engines newly lost or won back. */
  shifts: ReadonlyMap<string, GapShift>;
  /** Link for a prompt (only with {prompt_id} in the template) / the project, or null. */
  promptUrl: (promptId: string) => string | null;
  projectUrl: string | null;
  /** What changed among the gaps (null on a first digest), as the verdict weighed it. */
  gapNews: GapNews | null;
  /** Every call of the run (docs/DIGEST.md, "The verdict"); renderers only say what it decided. */
  verdict: Verdict;
  /** Why the run is not judged, or null: not completed, no answers, or far fewer than usual. */
  emptyReason: Exclude<DataQuality['state'], 'ok'> | null;
}

function uniqueGaps(gaps: readonly Gap[]): Gap[] {
  const seen = new Set<string>();
  return gaps.filter((gap) => !seen.has(gap.prompt_id) && seen.add(gap.prompt_id) !== undefined);
}

function emptyReasonOf(quality: DataQuality): DigestModel['emptyReason'] {
  return quality.state === 'ok' ? null : quality.state;
}

function firstOfEachLabel(metrics: readonly Metric[]): Metric[] {
  const seen = new Set<string>();
  return metrics.filter((m) => !seen.has(m.label) && seen.add(m.label) !== undefined);
}

/** Runs since the last judged one, this one included: the data-quality runs between let churn build up. */
function spanOf(previous: ProjectSnapshot | null): number {
  const history = historyOf(previous);
  let span = 1;
  for (let i = history.length - 1; i >= 0 && history[i]?.lowData === true; i -= 1) span += 1;
  return span;
}

/** The run's answers behind each figure; the last judged run's too (for a figure with no state yet). */
interface Samples {
  answers: number | null;
  previousAnswers: number | null;
  engines: number;
}

function samplesOf(input: DigestInput): Samples {
  const last = historyOf(input.previous)
    .filter((p) => p.lowData !== true)
    .at(-1);
  return { answers: input.run.answers, previousAnswers: last?.answers ?? null, engines: input.overview.engines.length };
}

const FIGURE_KINDS: { readonly [K in MetricReading['kind']]: FigureKind } = {
  share: 'share',
  position: 'mean',
  count: 'count',
  other: 'other',
};

function isConfigured(label: string, minimums: NoiseMinimums | undefined): boolean {
  return Object.keys(minimums ?? {}).some((k) => k.trim().toLowerCase() === label.trim().toLowerCase());
}

/** A figure as read from the overview (a metric or an engine's main figure). */
interface Reading {
  key: string;
  /** The label its kind, minimum and direction are read from (an engine's: its field). */
  label: string;
  reading: MetricReading;
  value: number | null;
  /** Since the last run. */
  delta: number | null;
  directions: MetricDirections | undefined;
}

/** What the verdict needs of one figure; a label with a configured minimum is judged against it. */
function figureInput(
  figure: Reading,
  value: number,
  answers: { now: number | null; before: number | null },
  options: DigestOptions,
): FigureInput {
  const { label, reading } = figure;
  const configured = isConfigured(label, options.noiseMinimums);
  const minimum = minimumFor(label, reading.kind, options.noiseMinimums ?? {});
  // min-change is in the figure's unit, points for a share (a fraction share moves in hundredths).
  const minChange =
    options.minChange !== undefined && options.minChange > 0 ? options.minChange * (reading.scale === 'fraction' ? 0.01 : 1) : 0;
  return {
    key: figure.key,
    kind: configured ? 'other' : FIGURE_KINDS[reading.kind],
    value,
    unit: reading.kind === 'share' && reading.scale === 'percent' ? 100 : 1,
    answers: answers.now,
    previous: figure.delta === null ? null : value - figure.delta,
    previousAnswers: answers.before,
    minimum,
    floor: Math.max(minChange, configured ? minimum : 0),
    resolution: resolutionOf(value, figure.delta === null ? null : value - figure.delta),
  };
}

/** The step values are reported in: 0.1 for "50.5" (the finer of now and the last run; 1 for whole numbers). */
function resolutionOf(value: number, before: number | null): number {
  const decimals = (n: number): number => {
    const text = String(Math.round(n * 1e6) / 1e6);
    const dot = text.indexOf('.');
    return dot < 0 ? 0 : text.length - dot - 1;
  };
  return 10 ** -Math.max(decimals(value), before === null ? 0 : decimals(before));
}

/**
 * The values a figure's kind and scale are read from: now, the last run's, and its learned level (so a
 * percent share at 0 or 1 is not read as a fraction).
 */
function valuesOf(input: DigestInput, key: string, now: Scalar, before: number | null): Scalar[] {
  const figures = input.previous?.verdict?.figures;
  const level = figures !== undefined && Object.hasOwn(figures, key) ? figures[key]?.level : undefined;
  return [now, ...(before !== null ? [before] : []), ...(level !== undefined ? [level] : [])];
}

function metricReadings(input: DigestInput, diff: SnapshotDiff): (Reading & { metric: Metric })[] {
  return firstOfEachLabel(input.overview.metrics).map((metric) => {
    const value = parseNumericValue(metric.value);
    const delta = diff.metricDeltas.get(metric.label) ?? null;
    const before = delta !== null && value !== null ? value - delta : null;
    const key = `m:${metric.label.slice(0, SNAPSHOT_MAX_TEXT)}`;
    return {
      key,
      label: metric.label,
      reading: readMetric(metric.label, valuesOf(input, key, metric.value, before)),
      value,
      delta,
      directions: input.options?.directions,
      metric,
    };
  });
}

type EngineReading = Reading & { row: GenericRow; name: string | null; field: string | null };

function engineReadings(input: DigestInput, diff: SnapshotDiff): EngineReading[] {
  return input.overview.engines.map((row) => {
    const name = rowName(row);
    const primary = rowPrimaryValue(row);
    const key = `e:${(name ?? '').slice(0, SNAPSHOT_MAX_TEXT)}`;
    const delta = name === null ? null : (diff.engineDeltas.get(name) ?? null);
    const before = primary !== null && delta !== null ? primary.value - delta : null;
    return {
      key,
      label: primary?.field ?? '',
      reading:
        primary === null ? { kind: 'other' as const, scale: null } : readMetric(primary.field, valuesOf(input, key, primary.value, before)),
      value: primary?.value ?? null,
      delta,
      directions: undefined,
      row,
      name,
      field: primary?.field ?? null,
    };
  });
}

/** The figure as compared: its verdict decides `significant`, the tone and the band. */
function compared(figure: Reading, call: FigureCall | null): ComparedFigure {
  const significant = call?.call === 'change';
  const band: NoiseBand | null = call === null || call.band === null ? null : { basis: 'minimum', halfWidth: call.band };
  return {
    value: figure.value,
    reading: figure.reading,
    delta: figure.delta,
    band,
    significant,
    tone: changeTone(figure.label, significant ? call.change : figure.delta, figure.directions ?? {}),
    call,
  };
}

/** A count of answers an engine row carries itself (the spec shows none; read by name when sent). */
const ENGINE_COUNT_FIELDS = ['answers', 'responses', 'sample_size', 'samples', 'probes', 'n'];

function engineOwnAnswers(row: GenericRow): number | null {
  for (const [field, raw] of row) {
    const value = ENGINE_COUNT_FIELDS.includes(field.trim().toLowerCase()) ? parseNumericValue(raw) : null;
    if (value !== null && value > 0) return value;
  }
  return null;
}

/** Every figure's verdict input: metrics first, then named engines (without its own count, an engine answered its share of the run). */
function figureInputs(
  metrics: readonly Reading[],
  engines: readonly EngineReading[],
  samples: Samples,
  options: DigestOptions,
): FigureInput[] {
  const perEngine = (n: number | null): number | null =>
    n !== null && n > 0 ? Math.max(1, Math.floor(n / Math.max(1, samples.engines))) : null;
  const byMetric = metrics.flatMap((m) =>
    m.value === null ? [] : [figureInput(m, m.value, { now: samples.answers, before: samples.previousAnswers }, options)],
  );
  const byEngine = engines.flatMap((e) => {
    if (e.value === null || e.name === null) return [];
    const own = engineOwnAnswers(e.row);
    return [
      figureInput(e, e.value, { now: own ?? perEngine(samples.answers), before: own ?? perEngine(samples.previousAnswers) }, options),
    ];
  });
  return [...byMetric, ...byEngine];
}

/** Links to a prompt only when the template names {prompt_id}: otherwise every gap would open the same page. */
function promptLinker(template: string | undefined, ids: { project_id: string; run_id: string }): (promptId: string) => string | null {
  if (template === undefined || !template.includes('{prompt_id}')) return () => null;
  return (promptId) => fillUrlTemplate(template, { ...ids, prompt_id: promptId });
}

export function buildModel(input: DigestInput): DigestModel {
  const unreadable = Math.max(0, Math.floor(input.unreadableGaps ?? 0));
  const truncated = isTruncated(input.gaps.length + unreadable, input.pageSize);
  const template = input.options?.dashboardUrlTemplate;
  const ids = { project_id: input.project.id, run_id: input.run.runId };
  const diff = diffSnapshots(input.previous, { overview: input.overview, gaps: input.gaps, createdAt: input.run.createdAt, truncated });
  const gaps = uniqueGaps(input.gaps);
  const previousGaps = input.previous?.gaps ?? null;
  const shifts = gapShifts(gaps, previousGaps);
  const options = input.options ?? {};
  const metrics = metricReadings(input, diff);
  const engines = engineReadings(input, diff);
  const gapNews = diff.firstDigest ? null : gapNewsOf(diff, gaps, shifts);
  const verdict = judgeRun({
    quality: dataQuality(input.run, historyOf(input.previous)),
    figures: diff.firstDigest ? [] : figureInputs(metrics, engines, samplesOf(input), options),
    gapNews,
    state: input.previous?.verdict ?? null,
    thresholds: options.thresholds,
    minCount: options.minChange,
    span: spanOf(input.previous),
  });
  const callOf = (key: string): FigureCall | null => verdict.figures.get(key) ?? null;
  const lead = input.overview.metrics[0]?.label;
  return {
    input,
    name: projectName(input.project.name, input.project.id),
    gaps,
    truncated,
    unreadable,
    diff,
    alerts: alertsBySeverity(input.overview.alerts),
    metrics: metrics.map((m) => ({
      ...compared(m, callOf(m.key)),
      label: m.label,
      raw: m.metric.value,
      caption: m.metric.caption,
      weekDelta: diff.weekDeltas.get(m.label) ?? null,
      series: diff.series.get(m.label) ?? [],
      lead: m.label === lead,
    })),
    engines: engines.map((e) => ({ ...compared(e, callOf(e.key)), name: e.name, row: e.row, field: e.field })),
    rivals: rivalStandings(gaps, previousGaps, diff.weekAgo?.rivals ?? null),
    shifts,
    gapNews,
    verdict,
    promptUrl: promptLinker(template, ids),
    projectUrl: fillUrlTemplate(template, ids),
    emptyReason: emptyReasonOf(verdict.quality),
  };
}

const TREND_RANK: Readonly<Record<string, number>> = { worse: 0, new: 1, stable: 2, improving: 3 };

/** The gaps by impact: lost on the most engines first, then by the service's trend (worse first), then API order. */
export function worstGaps(model: DigestModel): Gap[] {
  const rank = (gap: Gap): number => TREND_RANK[gapTrend(gap) ?? 'stable'] ?? 2;
  return model.gaps
    .map((gap, index) => ({ gap, index }))
    .sort((a, b) => b.gap.platforms_losing.length - a.gap.platforms_losing.length || rank(a.gap) - rank(b.gap) || a.index - b.index)
    .map(({ gap }) => gap);
}

/** "220" or, for a list that filled its page, "50+". */
export function gapCountText(model: DigestModel): string {
  return `${formatNumber(model.gaps.length)}${model.truncated ? '+' : ''}`;
}

/** Engines the project is measured on: the overview's rows, or the engines named in the gaps. */
export function engineTotal(model: DigestModel): number {
  const named = new Set(model.gaps.flatMap((g) => g.platforms_losing.map((p) => p.trim().toLowerCase())));
  return Math.max(model.engines.length, named.size);
}
