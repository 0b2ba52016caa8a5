/** `status <project>`: the project's current figures as a compact message (no gaps, no thread). */
import type { GenericRow, Project, Scalar, VisibilityOverview } from '../read-api-types';
import { escapeSlackText, truncateText } from '../slack-text';
import { inChannel, name } from './replies';
import type { SlackReply } from './ports';

const MAX_ENGINES = 6;
const MAX_FIELDS_PER_ROW = 4;
const VALUE_CHARS = 40;

export function statusReply(project: Project, overview: VisibilityOverview, requestedBy: string): SlackReply {
  const lines = [`${name(project)} — current figures (asked by <@${requestedBy}>)`];
  const metrics = overview.metrics.map(
    (m) =>
      `${escapeSlackText(m.label)} *${scalar(m.value)}*${m.caption ? ` (${escapeSlackText(truncateText(m.caption, VALUE_CHARS))})` : ''}`,
  );
  lines.push(metrics.length > 0 ? metrics.join(' · ') : '_No metrics yet._');
  for (const row of overview.engines.slice(0, MAX_ENGINES)) lines.push(`• ${rowText(row)}`);
  if (overview.engines.length > MAX_ENGINES) lines.push(`…and ${overview.engines.length - MAX_ENGINES} more engines`);
  if (overview.alerts.length > 0)
    lines.push(`⚠️ ${overview.alerts.length} alert${overview.alerts.length === 1 ? '' : 's'}: ${rowText(overview.alerts[0] ?? [])}`);
  return inChannel(lines.join('\n'));
}

function rowText(row: GenericRow): string {
  return row
    .slice(0, MAX_FIELDS_PER_ROW)
    .map(([field, value]) => `${escapeSlackText(field)}: ${scalar(value)}`)
    .join(', ');
}

function scalar(value: Scalar): string {
  return value === null ? '—' : escapeSlackText(truncateText(String(value), VALUE_CHARS));
}
