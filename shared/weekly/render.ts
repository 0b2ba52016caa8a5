/**
 * The weekly report as one Slack message: a header, then a section per project (the week's
 * significant changes, gaps opened and closed, rivals gaining or losing prompts, each engine's change),
 * most-moved projects first. Pure. Every text from the service or the store goes through the one
 * sanitizer (`serviceText` / `serviceName`, via the digest's formatting helpers); the message stays
 * inside Block Kit's limits at any size: at most `MAX_SECTIONS` projects in full, the rest named in
 * one line, each section cut to `SECTION_TEXT`.
 */
import type { SlackMessage } from '../ports';
import { fillUrlTemplate, mrkdwnLink } from '../digest/links';
import { formatNumber, formatSigned, inline, LEN, plural, projectName, slackDate } from '../digest/render/format';
import { bandText, deltaText, valueText } from '../digest/render/units';
import { SLACK_LIMITS, truncateText } from '../slack-text';
import type { MetricChange, ProjectWeek, RivalMove, WeekWindow } from './content';
import type { BaselineGap } from './ports';
import type { SnapshotGap } from '../ports';

/** Projects shown with their own section; the others are named in a closing line. */
export const MAX_SECTIONS = 8;
/** Characters per project section: MAX_SECTIONS of them stay under the message's total. */
export const SECTION_TEXT = 1000;
const LISTED = { changes: 4, noise: 3, gaps: 3, rivals: 4, engines: 6, othersNamed: 20 } as const;

export interface WeeklyRenderOptions {
  dashboardUrlTemplate?: string | undefined;
  /** What the schedule is, e.g. "Monday 09:00 (Europe/Berlin)", for the closing line. */
  scheduleText: string;
}

function mrkdwn(text: string) {
  return { type: 'section', text: { type: 'mrkdwn', text, verbatim: true } };
}

function context(text: string) {
  return { type: 'context', elements: [{ type: 'mrkdwn', text, verbatim: true }] };
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString();
}

/** How much a project moved this week: its sections come first. */
function weight(week: ProjectWeek): number {
  const significant = week.changes.filter((c) => c.significant).length;
  const gaps = (week.gapChanges?.opened.length ?? 0) + (week.gapChanges?.closed.length ?? 0);
  return significant * 10 + gaps + week.rivals.length + (week.status === 'runs' ? 1 : 0);
}

function changeText(change: MetricChange): string {
  const label = inline(change.label, LEN.label);
  const delta = deltaText(change.reading, change.delta) ?? '±0';
  return `${label} ${valueText(change.reading, change.to, change.to)} (${delta})`;
}

function changesLine(changes: readonly MetricChange[]): string[] {
  const significant = changes
    .filter((c) => c.significant)
    .sort((a, b) => Math.abs(b.delta / b.band.halfWidth) - Math.abs(a.delta / a.band.halfWidth));
  const noise = changes.filter((c) => !c.significant && c.delta !== 0);
  const lines: string[] = [];
  if (significant.length === 0) lines.push('• Nothing moved beyond its noise this week');
  else lines.push(`• ${listed(significant.map(changeText), LISTED.changes)}`);
  if (noise.length > 0)
    lines.push(
      `• Within noise: ${listed(
        noise.map((c) => `${inline(c.label, LEN.label)} ${deltaText(c.reading, c.delta) ?? ''} (${bandText(c.reading, c.band)})`),
        LISTED.noise,
      )}`,
    );
  return lines;
}

function listed(items: readonly string[], max: number): string {
  const shown = items.slice(0, max).join(' · ');
  return items.length > max ? `${shown} · +${formatNumber(items.length - max)} more` : shown;
}

function gapText(gap: SnapshotGap | BaselineGap): string {
  const ref = gap.prompt_ref === null || gap.prompt_ref === '' ? '' : `#${inline(String(gap.prompt_ref), LEN.ref)} `;
  return `${ref}${inline(gap.prompt_text, 60)}`;
}

function gapsLines(week: ProjectWeek): string[] {
  const open = `${week.gapsTruncated ? 'at least ' : ''}${plural(week.gapsOpen, 'open gap', 'open gaps')}`;
  const changes = week.gapChanges;
  if (changes === null) return [`• Gaps: ${open} (the first report here: next week's lists what opened and closed)`];
  const head = `• Gaps: ${formatNumber(changes.opened.length)} opened, ${formatNumber(changes.closed.length)} closed · ${open}`;
  const lines = [changes.leftTop > 0 ? `${head} · ${plural(changes.leftTop, 'gap', 'gaps')} left the top of the list` : head];
  if (changes.opened.length > 0) lines.push(`   opened: ${listed(changes.opened.map(gapText), LISTED.gaps)}`);
  if (changes.closed.length > 0) lines.push(`   closed: ${listed(changes.closed.map(gapText), LISTED.gaps)}`);
  return lines;
}

function rivalText(move: RivalMove): string {
  return `${inline(move.name, LEN.competitor)} ${formatSigned(move.delta) ?? ''} (${formatNumber(move.to)})`;
}

function rivalsLines(rivals: readonly RivalMove[]): string[] {
  const gaining = rivals.filter((r) => r.delta > 0);
  const losing = rivals.filter((r) => r.delta < 0);
  const lines: string[] = [];
  if (gaining.length > 0) lines.push(`• Rivals taking prompts: ${listed(gaining.map(rivalText), LISTED.rivals)}`);
  if (losing.length > 0) lines.push(`• Rivals losing prompts: ${listed(losing.map(rivalText), LISTED.rivals)}`);
  return lines;
}

function enginesLine(week: ProjectWeek): string[] {
  if (week.engines.length === 0) return [];
  const moved = [...week.engines].sort((a, b) => Math.abs(b.delta ?? 0) - Math.abs(a.delta ?? 0));
  const texts = moved.map((e) => {
    const delta = formatSigned(e.delta);
    return `${inline(e.name, LEN.rowName)} ${formatNumber(Math.round(e.now * 100) / 100)}${delta === null ? '' : ` (${delta})`}`;
  });
  return [`• Engines (change this week): ${listed(texts, LISTED.engines)}`];
}

function title(week: ProjectWeek, options: WeeklyRenderOptions): string {
  const url = fillUrlTemplate(options.dashboardUrlTemplate, { project_id: week.projectId });
  return `*${mrkdwnLink(url, projectName(week.projectName, week.projectId))}*`;
}

function projectText(week: ProjectWeek, options: WeeklyRenderOptions): string {
  const name = title(week, options);
  if (week.status === 'none') return `${name} — no run digested yet: the first digest starts its history`;
  const last = week.lastRunAt === undefined ? '' : ` (last run ${slackDate(week.lastRunAt)})`;
  if (week.status === 'quiet') return `${name} — no runs this week${last}`;
  const lines = [
    `${name} — ${plural(week.runs, 'run', 'runs')} this week${last}`,
    ...changesLine(week.changes),
    ...gapsLines(week),
    ...rivalsLines(week.rivals),
    ...enginesLine(week),
  ];
  return truncateText(lines.join('\n'), SECTION_TEXT);
}

/** The fallback text (notifications, screen readers). */
function fallback(weeks: readonly ProjectWeek[], window: WeekWindow): string {
  const moved = weeks.filter((w) => w.changes.some((c) => c.significant)).length;
  const names = weeks.map((w) => projectName(w.projectName, w.projectId)).slice(0, 5);
  return truncateText(
    `Weekly report to ${isoDay(window.endMs).slice(0, 10)}: ${names.join(', ')}${weeks.length > 5 ? ' …' : ''} — ${plural(moved, 'project', 'projects')} with significant changes`,
    SLACK_LIMITS.fallbackText,
  );
}

/** The channel's report for the week ending `window.endMs`, one section per project. */
export function renderWeeklyReport(weeks: readonly ProjectWeek[], window: WeekWindow, options: WeeklyRenderOptions): SlackMessage {
  const ordered = [...weeks].sort((a, b) => weight(b) - weight(a) || a.projectName.localeCompare(b.projectName));
  const shown = ordered.slice(0, MAX_SECTIONS);
  const others = ordered.slice(MAX_SECTIONS);
  const from = slackDate(isoDay(window.startMs));
  const to = slackDate(isoDay(window.endMs));
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: '📅 Weekly visibility report', emoji: true } },
    context(`${from} → ${to} · ${plural(weeks.length, 'project', 'projects')} · changes are called only beyond their noise`),
  ];
  if (weeks.length === 0) blocks.push(mrkdwn('No project is subscribed here: `/visibility subscribe <project>` adds one.'));
  shown.forEach((week, i) => {
    if (i > 0) blocks.push({ type: 'divider' });
    blocks.push(mrkdwn(projectText(week, options)));
  });
  if (others.length > 0) {
    const names = others.map((w) => projectName(w.projectName, w.projectId));
    blocks.push(context(`Also subscribed here: ${listed(names, LISTED.othersNamed)} (fewer changes this week)`));
  }
  blocks.push(context(`Every ${inline(options.scheduleText, 80)} · \`/visibility weekly off\` stops it here`));
  return { text: fallback(weeks, window), blocks };
}
