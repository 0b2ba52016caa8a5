/**
 * `status <project>`: where the project stands now, in the digest's own words — `renderStatus` (the
 * baseline's pieces: position, who takes its prompts, worst gaps, figures), with its links to the
 * project's latest run and a line on that run (the mark and headline its digest gave it, stored in the
 * snapshot), then its alerts most severe first, who asked and when.
 * Ephemeral, with a "Share in channel" button.
 */
import type { KnownBlock } from '@slack/web-api';
import { fillUrlTemplate, mrkdwnLink } from '../digest/links';
import { renderStatus } from '../digest/render';
import { context, section } from '../digest/render/blocks';
import { inline, plural, shortId } from '../digest/render/format';
import { findUnescapedMarkup, truncateText } from '../slack-text';
import { alertLine } from '../digest/render/sections/rows';
import { alertsBySeverity } from '../digest/rows';
import { historyOf } from '../digest/snapshot';
import type { GapsResult, ProjectSnapshot, RunVerdict } from '../ports';
import type { Project, VisibilityOverview } from '../read-api-types';
import { mention, shareableBlocks, slackDate } from './replies';
import type { SlackReply, StatusOptions } from './ports';

/** Alerts listed by line; the rest are counted. */
export const STATUS_ALERTS_SHOWN = 5;
/** The latest run's headline on the status line. */
const STATUS_HEADLINE_CHARS = 300;

export interface StatusFigures {
  project: Project;
  overview: VisibilityOverview;
  gaps: GapsResult;
  /** The digest's snapshot of the project: its latest run; null when no run was digested (or it can't be read). */
  snapshot?: ProjectSnapshot | null | undefined;
}

/**
 * The digest's verdict of the latest run, as the snapshot stored it: never judged again here, so the
 * status cannot disagree with the digest of the same run. Null for a snapshot written before the digest
 * stored it, or whose stored verdict is of another run.
 */
export function latestRunVerdict(snapshot: ProjectSnapshot): RunVerdict | null {
  const stored = snapshot.lastVerdict;
  return stored !== undefined && stored.runId === snapshot.lastRunId ? stored : null;
}

/** "*Latest run* <link|Run 1a2b3c4d> · date · 1,240 answers — 🔴 Visibility score −8 pts", the mark and words the digest gave it. */
function latestRunLine(snapshot: ProjectSnapshot, projectId: string, options: StatusOptions): string {
  const url = fillUrlTemplate(options.dashboardUrlTemplate, { project_id: projectId, run_id: snapshot.lastRunId });
  const latest = historyOf(snapshot).at(-1);
  const answers = typeof latest?.answers === 'number' ? ` · ${plural(latest.answers, 'answer', 'answers')}` : '';
  const atMs = Date.parse(snapshot.lastCreatedAt);
  const when = Number.isFinite(atMs) ? ` · ${slackDate(atMs)}` : '';
  const head = `*Latest run* ${mrkdwnLink(url, `Run ${shortId(snapshot.lastRunId)}`)}${when}${answers}`;
  const verdict = latestRunVerdict(snapshot);
  return verdict === null ? head : `${head} — ${verdict.mark} ${storedHeadline(verdict.headline)}`;
}

/** The digest's stored headline is already safe mrkdwn (escaped once): kept as is, unless it is not, then made safe. */
export function storedHeadline(headline: string): string {
  const oneLine = headline.replace(/\s+/g, ' ').trim();
  return findUnescapedMarkup(oneLine) === null ? truncateText(oneLine, STATUS_HEADLINE_CHARS) : inline(oneLine, STATUS_HEADLINE_CHARS);
}

/** Ephemeral, with a "Share in channel" button carrying `shareValue` (none without a signed value). */
export function statusReply(
  figures: StatusFigures,
  asked: { by: string; atMs: number },
  shareValue: string | undefined,
  options: StatusOptions = {},
): SlackReply {
  const { project, overview, gaps, snapshot } = figures;
  const latest = snapshot ?? null;
  const rendered = renderStatus({
    project,
    // The figures are the latest run's: its links go to that run (without one, to the project's page).
    // No answers to weigh noise by, and nothing to compare (renderStatus compares with nothing).
    run: {
      eventId: 'status',
      runId: latest?.lastRunId ?? '',
      answers: null,
      createdAt: latest?.lastCreatedAt ?? new Date(asked.atMs).toISOString(),
    },
    overview,
    gaps: gaps.gaps,
    pageSize: options.gapsPageSize,
    unreadableGaps: gaps.skipped,
    reasoning: new Map(),
    options: { dashboardUrlTemplate: options.dashboardUrlTemplate, noiseMinimums: options.noiseMinimums },
  });
  const [first, ...rest] = rendered.blocks;
  const blocks: KnownBlock[] = [
    ...(first === undefined ? [] : [first]),
    ...(latest === null ? [] : [section(latestRunLine(latest, project.id, options))]),
    ...rest,
    ...alertsSection(overview),
    context(`Asked by ${mention(asked.by)} · ${slackDate(asked.atMs)}`),
  ];
  return shareableBlocks(rendered.text, blocks, shareValue);
}

/** `*Alerts* (most severe first)` with one line each; none when there are none. */
function alertsSection(overview: VisibilityOverview): KnownBlock[] {
  const alerts = alertsBySeverity(overview.alerts);
  if (alerts.length === 0) return [];
  const lines = alerts.slice(0, STATUS_ALERTS_SHOWN).map(alertLine);
  const rest = alerts.length - lines.length;
  if (rest > 0) lines.push(`_+${rest} more alert${rest === 1 ? '' : 's'} on the dashboard_`);
  return [section([`*Alerts* (${alerts.length}, most severe first)`, ...lines].join('\n'))];
}
