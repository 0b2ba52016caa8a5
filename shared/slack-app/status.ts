/**
 * `status <project>`: where the project stands now, in the digest's own words — `renderStatus` (the
 * baseline's pieces: position, who takes its prompts, worst gaps, figures), then its alerts most
 * severe first, who asked and when. Ephemeral, with a "Share in channel" button.
 */
import type { KnownBlock } from '@slack/web-api';
import { renderStatus } from '../digest/render';
import { context, section } from '../digest/render/blocks';
import { alertLine } from '../digest/render/sections/rows';
import { alertsBySeverity } from '../digest/rows';
import type { GapsResult } from '../ports';
import type { Project, VisibilityOverview } from '../read-api-types';
import { mention, shareableBlocks, slackDate } from './replies';
import type { SlackReply, StatusOptions } from './ports';

/** Alerts listed by line; the rest are counted. */
export const STATUS_ALERTS_SHOWN = 5;

export interface StatusFigures {
  project: Project;
  overview: VisibilityOverview;
  gaps: GapsResult;
}

/** Ephemeral, with a "Share in channel" button carrying `shareValue` (none without a signed value). */
export function statusReply(
  figures: StatusFigures,
  asked: { by: string; atMs: number },
  shareValue: string | undefined,
  options: StatusOptions = {},
): SlackReply {
  const { project, overview, gaps } = figures;
  const rendered = renderStatus({
    project,
    // Not a run: no answers to weigh noise by, and nothing to compare (renderStatus compares with nothing).
    run: { eventId: 'status', runId: 'status', answers: null, createdAt: new Date(asked.atMs).toISOString() },
    overview,
    gaps: gaps.gaps,
    pageSize: options.gapsPageSize,
    unreadableGaps: gaps.skipped,
    reasoning: new Map(),
    options: { dashboardUrlTemplate: options.dashboardUrlTemplate, noiseMinimums: options.noiseMinimums },
  });
  const blocks: KnownBlock[] = [
    ...rendered.blocks,
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
