/** `status <project>`: the project's current figures as a compact message (no gaps, no thread). */
import type { GenericRow, Project, Scalar, VisibilityOverview } from '../read-api-types';
import { serviceText } from '../slack-text';
import { mention, name, shareable } from './replies';
import type { SlackReply } from './ports';

const MAX_ENGINES = 6;
const MAX_FIELDS_PER_ROW = 4;
/** Longest shown piece of each service string (escaped UTF-16 code units). */
const LEN = { label: 60, field: 40, value: 40 } as const;

/** Ephemeral, with a "Share in channel" button carrying `shareValue`. */
export function statusReply(
  project: Project,
  overview: VisibilityOverview,
  requestedBy: string,
  shareValue: string | undefined,
): SlackReply {
  const lines = [`${name(project)} — current figures (asked by ${mention(requestedBy)})`];
  const metrics = overview.metrics.map(
    (m) => `${serviceText(m.label, LEN.label)} *${scalar(m.value)}*${m.caption ? ` (${serviceText(m.caption, LEN.value)})` : ''}`,
  );
  lines.push(metrics.length > 0 ? metrics.join(' · ') : '_No metrics yet._');
  for (const row of overview.engines.slice(0, MAX_ENGINES)) lines.push(`• ${rowText(row)}`);
  if (overview.engines.length > MAX_ENGINES) lines.push(`…and ${overview.engines.length - MAX_ENGINES} more engines`);
  if (overview.alerts.length > 0)
    lines.push(`⚠️ ${overview.alerts.length} alert${overview.alerts.length === 1 ? '' : 's'}: ${rowText(overview.alerts[0] ?? [])}`);
  return shareable([lines.join('\n')], shareValue);
}

function rowText(row: GenericRow): string {
  return row
    .slice(0, MAX_FIELDS_PER_ROW)
    .map(([field, value]) => `${serviceText(field, LEN.field)}: ${scalar(value)}`)
    .join(', ');
}

/** A value as text; blank or missing shows "—" (an empty `*…*` would show the asterisks). */
function scalar(value: Scalar): string {
  const text = value === null ? '' : serviceText(String(value), LEN.value);
  return text === '' ? '—' : text;
}
