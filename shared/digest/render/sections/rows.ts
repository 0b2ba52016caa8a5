/** Alerts, named by meaning; fields humanised; unknown fields still shown. */
import type { GenericRow } from '../../../read-api-types';
import type { AlertView, Severity } from '../../rows';
import { formatScalar, humaniseKey, inline, LEN } from '../format';

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
