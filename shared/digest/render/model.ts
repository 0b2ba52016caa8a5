/** What the digest says, worked out once from the renderer's input; every section reads from it. */
import type { DigestMode } from '../../contracts';
import type { Gap, GenericRow, Metric, Project, ReasoningCard, Scalar, VisibilityOverview } from '../../read-api-types';
import { changeTone, type ChangeTone, type MetricDirections } from '../metric-direction';
import { beyondNoise, noiseBand, readMetric, streakOf, type MetricReading, type NoiseBand, type NoiseMinimums } from '../noise';
import { parseNumericValue } from '../numeric';
import { gapShifts, rivalStandings, type GapShift, type RivalStanding } from '../rivals';
import { alertsBySeverity, rowName, rowPrimaryValue, type AlertView } from '../rows';
import { diffSnapshots, isTruncated, type ProjectSnapshot, type SnapshotDiff } from '../snapshot';
import { fillUrlTemplate } from '../links';
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
  /** A channel filter's `min-change` (../channel-filter.ts): a smaller change is not called, whatever its noise. */
  minChange?: number | undefined;
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
  /** The change is larger than its noise. */
  significant: boolean;
  tone: ChangeTone | null;
}

/** A headline metric read by meaning: kind, unit, change and whether the change is beyond its noise. */
export interface MetricView extends ComparedFigure {
  /** As sent (not escaped). */
  label: string;
  raw: Scalar;
  caption: string | null;
  /** Runs in a row (this one included) that moved it the same way; ≥ 2 is marked ("2nd run down"). */
  streak: number;
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
  /** Why the run has nothing to report, or null: not completed, or no answers. */
  emptyReason: 'status' | 'no-answers' | null;
}

function uniqueGaps(gaps: readonly Gap[]): Gap[] {
  const seen = new Set<string>();
  return gaps.filter((gap) => !seen.has(gap.prompt_id) && seen.add(gap.prompt_id) !== undefined);
}

function emptyReasonOf(run: DigestInput['run']): DigestModel['emptyReason'] {
  const status = run.status?.trim().toLowerCase();
  if (status !== undefined && status.length > 0 && status !== 'completed') return 'status';
  if (run.answers === 0) return 'no-answers';
  return null;
}

function firstOfEachLabel(metrics: readonly Metric[]): Metric[] {
  const seen = new Set<string>();
  return metrics.filter((m) => !seen.has(m.label) && seen.add(m.label) !== undefined);
}

function metricViews(input: DigestInput, diff: SnapshotDiff): MetricView[] {
  const options = input.options ?? {};
  const lead = input.overview.metrics[0]?.label;
  return firstOfEachLabel(input.overview.metrics).map((metric) => {
    const value = parseNumericValue(metric.value);
    const delta = diff.metricDeltas.get(metric.label) ?? null;
    const before = delta !== null && value !== null ? value - delta : null;
    const reading = readMetric(metric.label, before === null ? [metric.value] : [metric.value, before]);
    const band =
      value === null ? null : atLeast(noiseBand(metric.label, reading, value, input.run.answers, options.noiseMinimums), options.minChange);
    const significant = band !== null && beyondNoise(delta, band);
    const series = diff.series.get(metric.label) ?? [];
    return {
      label: metric.label,
      raw: metric.value,
      caption: metric.caption,
      value,
      reading,
      delta,
      band,
      significant,
      tone: changeTone(metric.label, delta, options.directions),
      streak: significant ? Math.max(1, streakOf(series)) : 0,
      weekDelta: diff.weekDeltas.get(metric.label) ?? null,
      series,
      lead: metric.label === lead,
    };
  });
}

/** A count of answers an engine row carries itself (the spec shows none; read by name when sent). */
const ENGINE_COUNT_FIELDS = ['answers', 'responses', 'sample_size', 'samples', 'probes', 'n'];

function engineAnswers(row: GenericRow, runAnswers: number | null, engineCount: number): number | null {
  for (const [field, raw] of row) {
    const value = ENGINE_COUNT_FIELDS.includes(field.trim().toLowerCase()) ? parseNumericValue(raw) : null;
    if (value !== null && value > 0) return value;
  }
  // Without its own count, an engine is taken to have answered its share of the run.
  return runAnswers !== null && runAnswers > 0 ? Math.max(1, Math.floor(runAnswers / Math.max(1, engineCount))) : null;
}

function engineViews(input: DigestInput, diff: SnapshotDiff): EngineView[] {
  const rows = input.overview.engines;
  return rows.map((row) => {
    const name = rowName(row);
    const primary = rowPrimaryValue(row);
    const delta = name === null ? null : (diff.engineDeltas.get(name) ?? null);
    const reading = primary === null ? { kind: 'other' as const, scale: null } : readMetric(primary.field, [primary.value]);
    const band =
      primary === null
        ? null
        : atLeast(
            noiseBand(
              primary.field,
              reading,
              primary.value,
              engineAnswers(row, input.run.answers, rows.length),
              input.options?.noiseMinimums,
            ),
            input.options?.minChange,
          );
    const significant = band !== null && beyondNoise(delta, band);
    return {
      name,
      row,
      field: primary?.field ?? null,
      value: primary?.value ?? null,
      reading,
      delta,
      band,
      significant,
      tone: primary === null ? null : changeTone(primary.field, delta),
    };
  });
}

/**
 * The band widened to a channel's `min-change`: a change below it is not called even beyond its noise
 * (a change of exactly min-change still is: the band is a hair under it).
 */
function atLeast(band: NoiseBand, minChange: number | undefined): NoiseBand {
  if (minChange === undefined || !(minChange > 0)) return band;
  const floor = minChange - 1e-9;
  return band.halfWidth >= floor ? band : { basis: 'minimum', halfWidth: floor };
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
  return {
    input,
    name: projectName(input.project.name, input.project.id),
    gaps,
    truncated,
    unreadable,
    diff,
    alerts: alertsBySeverity(input.overview.alerts),
    metrics: metricViews(input, diff),
    engines: engineViews(input, diff),
    rivals: rivalStandings(gaps, previousGaps, diff.weekAgo?.rivals ?? null),
    shifts: gapShifts(gaps, previousGaps),
    promptUrl: promptLinker(template, ids),
    projectUrl: fillUrlTemplate(template, ids),
    emptyReason: emptyReasonOf(input.run),
  };
}

/** Engines known both times that moved beyond their noise, by direction. */
export function enginesMoved(model: DigestModel): { down: EngineView[]; up: EngineView[]; compared: number } {
  const compared = model.engines.filter((e) => e.delta !== null);
  return {
    down: compared.filter((e) => e.significant && e.tone === 'worse'),
    up: compared.filter((e) => e.significant && e.tone === 'better'),
    compared: compared.length,
  };
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
