/** Alerts, named by meaning; fields humanised; unknown fields still shown. */
import type { GenericRow } from '../../../read-api-types';
import type { SectionBlock } from '@slack/web-api';
import type { AlertView, Severity } from '../../rows';
import { section } from '../blocks';
import type { DigestModel } from '../model';
import { formatScalar, humaniseKey, inline, LEN, plural } from '../format';

function fieldsText(row: GenericRow): string {
  return row.map(([field, value]) => `${humaniseKey(field)}: ${formatScalar(value, LEN.fieldValue)}`).join(' · ');
}

export const SEVERITY_MARKS: Readonly<Record<Severity, string>> = {
  critical: '🚨',
  error: '🔴',
  warning: '⚠️',
  info: 'ℹ️',
  other: '•',
};

/** `🚨 *Critical* — full message · Field: value`. */
export function alertLine(alert: AlertView): string {
  const severity = alert.severityText !== null ? inline(alert.severityText, LEN.fieldValue) : '';
  const label = severity.length > 0 ? severity[0]!.toUpperCase() + severity.slice(1) : 'Alert';
  const text = alert.text !== null ? inline(alert.text, LEN.alertText) : '';
  const rest = fieldsText(alert.rest);
  return `${SEVERITY_MARKS[alert.severity]} *${label}*${[text, rest]
    .filter((p) => p.length > 0)
    .map((p) => ` — ${p}`)
    .join('')}`;
}

/** Severe alerts whose own text the main message carries. */
const SEVERE_SHOWN = 2;

/**
 * The critical and error alerts, in their own words, in the main message (a standing state, not a
 * change: the mark does not follow them); the others are counted, pointing to the thread only when the
 * digest has the reply that lists them.
 */
export function severeAlertsSection(model: DigestModel, listedInThread: boolean): SectionBlock[] {
  const severe = model.alerts.filter((a) => a.severity === 'critical' || a.severity === 'error');
  if (severe.length === 0) return [];
  const hidden = severe.length - SEVERE_SHOWN;
  const more =
    hidden > 0
      ? [`_${plural(hidden, 'more severe alert', 'more severe alerts')}${listedInThread ? ' in the thread' : ' on the dashboard'}_`]
      : [];
  return [section([...severe.slice(0, SEVERE_SHOWN).map(alertLine), ...more].join('\n'))];
}
