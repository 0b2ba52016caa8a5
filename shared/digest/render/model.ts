/** What the digest says, worked out once from the renderer's input; every section reads from it. */
import type { DigestMode } from '../../contracts';
import type { Gap, Project, ReasoningCard, VisibilityOverview } from '../../read-api-types';
import { changeTone, type MetricDirections } from '../metric-direction';
import { alertsBySeverity, type AlertView } from '../rows';
import { diffSnapshots, isTruncated, type ProjectSnapshot, type SnapshotDiff } from '../snapshot';
import { fillUrlTemplate } from '../links';
import { formatNumber, projectName } from './format';

export interface DigestOptions {
  /** Gaps listed in the main message's standing list (default 5). */
  topGaps?: number | undefined;
  /** Top gaps whose reasoning card gets a thread reply (default 3). */
  reasoningGaps?: number | undefined;
  /** https URL template with {project_id} {run_id} {prompt_id} {asset_id}; none = no links. */
  dashboardUrlTemplate?: string | undefined;
  /** 'changes': a quiet run (see `isQuietRun`) renders one compact line and no thread. Default 'full'. */
  mode?: DigestMode | undefined;
  /** A metric "moved" when its change is larger than this (absolute). Default 0.5. */
  quietThreshold?: number | undefined;
  /** Per-label direction overrides (see metric-direction.ts). */
  directions?: MetricDirections | undefined;
  /** The channel the digest is rendered for: its "Mute 7 days" / "Only changes" buttons; none = no buttons. */
  channel?: ChannelContext | undefined;
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

export interface DigestModel {
  input: DigestInput;
  name: string;
  /** Gaps de-duplicated by prompt_id, API order. */
  gaps: Gap[];
  truncated: boolean;
  unreadable: number;
  diff: SnapshotDiff;
  alerts: AlertView[];
  directions: MetricDirections;
  threshold: number;
  /** Link for a prompt / the project, or null without a template. */
  promptUrl: (promptId: string) => string | null;
  projectUrl: string | null;
  /** Why the run has nothing to report, or null: not completed, or no answers. */
  emptyReason: string | null;
}

function uniqueGaps(gaps: readonly Gap[]): Gap[] {
  const seen = new Set<string>();
  return gaps.filter((gap) => !seen.has(gap.prompt_id) && seen.add(gap.prompt_id) !== undefined);
}

function emptyReasonOf(run: DigestInput['run']): string | null {
  const status = run.status?.trim().toLowerCase();
  if (status !== undefined && status.length > 0 && status !== 'completed') return 'status';
  if (run.answers === 0) return 'no-answers';
  return null;
}

export function buildModel(input: DigestInput): DigestModel {
  const unreadable = Math.max(0, Math.floor(input.unreadableGaps ?? 0));
  const truncated = isTruncated(input.gaps.length + unreadable, input.pageSize);
  const template = input.options?.dashboardUrlTemplate;
  const ids = { project_id: input.project.id, run_id: input.run.runId };
  return {
    input,
    name: projectName(input.project.name, input.project.id),
    gaps: uniqueGaps(input.gaps),
    truncated,
    unreadable,
    diff: diffSnapshots(input.previous, { overview: input.overview, gaps: input.gaps, createdAt: input.run.createdAt, truncated }),
    alerts: alertsBySeverity(input.overview.alerts),
    directions: input.options?.directions ?? {},
    threshold: Math.max(0, input.options?.quietThreshold ?? 0.5),
    promptUrl: (promptId) => fillUrlTemplate(template, { ...ids, prompt_id: promptId }),
    projectUrl: fillUrlTemplate(template, ids),
    emptyReason: emptyReasonOf(input.run),
  };
}

/** Metrics whose change is beyond the threshold, with what the change means. */
export function movedMetrics(model: DigestModel): { label: string; delta: number; tone: 'better' | 'worse' }[] {
  const moved: { label: string; delta: number; tone: 'better' | 'worse' }[] = [];
  for (const [label, delta] of model.diff.metricDeltas) {
    const tone = changeTone(label, delta, model.directions);
    if (delta !== null && Math.abs(delta) > model.threshold && (tone === 'better' || tone === 'worse')) moved.push({ label, delta, tone });
  }
  return moved;
}

/**
 * A run with nothing to tell: not the first digest, no metric moved beyond the threshold, no new or
 * worsening gaps, nothing resolved. With digestMode 'changes' such a run posts one compact line.
 */
export function isQuietRun(model: DigestModel): boolean {
  const { diff } = model;
  return (
    !diff.firstDigest &&
    movedMetrics(model).length === 0 &&
    diff.newGaps.length === 0 &&
    diff.worseningGaps.length === 0 &&
    diff.resolvedGaps.length === 0 &&
    model.emptyReason === null
  );
}

/** "220" or, for a list that filled its page, "50+". */
export function gapCountText(model: DigestModel): string {
  return `${formatNumber(model.gaps.length)}${model.truncated ? '+' : ''}`;
}
