/**
 * `status <project>`: where the project stands now, in the digest's own words — `renderStatus` (the
 * baseline's pieces: position, who takes its prompts, worst gaps, figures), with its links to the
 * project's latest run and a line on that run (its mark and its lead figure's change since the run
 * before, from the digest's snapshot), then its alerts most severe first, who asked and when.
 * Ephemeral, with a "Share in channel" button.
 */
import type { KnownBlock } from '@slack/web-api';
import { fillUrlTemplate, mrkdwnLink } from '../digest/links';
import { changeTone } from '../digest/metric-direction';
import { beyondNoise, noiseBand, readMetric, type NoiseMinimums } from '../digest/noise';
import { renderStatus } from '../digest/render';
import { context, section } from '../digest/render/blocks';
import { inline, LEN, plural, shortId } from '../digest/render/format';
import { alertLine } from '../digest/render/sections/rows';
import { deltaText, valueText } from '../digest/render/units';
import { alertsBySeverity } from '../digest/rows';
import { historyOf } from '../digest/snapshot';
import type { GapsResult, ProjectSnapshot, SnapshotPoint } from '../ports';
import type { Project, VisibilityOverview } from '../read-api-types';
import { mention, shareableBlocks, slackDate } from './replies';
import type { SlackReply, StatusOptions } from './ports';

/** Alerts listed by line; the rest are counted. */
export const STATUS_ALERTS_SHOWN = 5;

export interface StatusFigures {
  project: Project;
  overview: VisibilityOverview;
  gaps: GapsResult;
  /** The digest's snapshot of the project: its latest run; null when no run was digested (or it can't be read). */
  snapshot?: ProjectSnapshot | null | undefined;
}

/** The latest run's change in one mark: the lead figure's change since the run before, judged by the digest's noise rule. */
export type RunChange =
  | { mark: '⚠️'; why: 'no-answers' }
  | { mark: '⚪'; why: 'first' }
  | { mark: '🔴' | '🟢' | '⚪'; why: 'change'; label: string; value: number; delta: number; significant: boolean };

/**
 * The lead figure (the overview's first, as the snapshot keeps them) of the latest run against the last
 * run before it with answers: beyond its noise at the latest run's answers (../digest/noise.ts), worse
 * is 🔴 and better 🟢; within it ⚪. A run with 0 answers is no data (⚠️), never "nothing moved".
 */
export function latestRunChange(snapshot: ProjectSnapshot, minimums: NoiseMinimums = {}): RunChange {
  const history = historyOf(snapshot);
  const latest = history.at(-1) as SnapshotPoint;
  if (latest.answers === 0) return { mark: '⚠️', why: 'no-answers' };
  const [label, value] = Object.entries(latest.metrics)[0] ?? [];
  const before = history
    .slice(0, -1)
    .filter((p) => p.answers !== 0 && label !== undefined && typeof p.metrics[label] === 'number')
    .at(-1);
  if (label === undefined || value === undefined || before === undefined) return { mark: '⚪', why: 'first' };
  const then = before.metrics[label] as number;
  const delta = Math.round((value - then) * 1e6) / 1e6;
  const reading = readMetric(label, [then, value]);
  const significant = beyondNoise(delta, noiseBand(label, reading, value, latest.answers, minimums));
  const tone = changeTone(label, delta);
  const mark = !significant ? '⚪' : tone === 'worse' ? '🔴' : tone === 'better' ? '🟢' : '⚪';
  return { mark, why: 'change', label, value, delta, significant };
}

/** "*Latest run* <link|Run 1a2b3c4d> · date · 1,240 answers — 🔴 Visibility 44 % (−3.8 pts since the run before, worse)". */
function latestRunLine(snapshot: ProjectSnapshot, projectId: string, options: StatusOptions): string {
  const url = fillUrlTemplate(options.dashboardUrlTemplate, { project_id: projectId, run_id: snapshot.lastRunId });
  const latest = historyOf(snapshot).at(-1);
  const answers = typeof latest?.answers === 'number' ? ` · ${plural(latest.answers, 'answer', 'answers')}` : '';
  const atMs = Date.parse(snapshot.lastCreatedAt);
  const when = Number.isFinite(atMs) ? ` · ${slackDate(atMs)}` : '';
  const head = `*Latest run* ${mrkdwnLink(url, `Run ${shortId(snapshot.lastRunId)}`)}${when}${answers}`;
  const change = latestRunChange(snapshot, options.noiseMinimums);
  if (change.why === 'no-answers') return `${head} — ⚠️ no answers in this run: no data, nothing to compare`;
  if (change.why === 'first') return `${head} — the first run digested: nothing to compare yet`;
  const reading = readMetric(change.label, [change.value]);
  const tone = changeTone(change.label, change.delta);
  const since = change.delta === 0 ? 'unchanged since the run before' : `${deltaText(reading, change.delta) ?? ''} since the run before`;
  const verdict =
    change.significant && tone !== null && tone !== 'same' ? `, ${tone}` : change.delta === 0 ? '' : ', within normal variation';
  return `${head} — ${change.mark} ${inline(change.label, LEN.label)} ${valueText(reading, change.value, change.value)} (${since}${verdict})`;
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
