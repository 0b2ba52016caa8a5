/** Per-engine rows and alerts, named by meaning; fields humanised; unknown fields still shown. */
import type { GenericRow } from '../../../read-api-types';
import { nameFieldIndex, type AlertView, type Severity } from '../../rows';
import { formatScalar, formatSigned, humaniseKey, inline, LEN } from '../format';
import type { DigestModel } from '../model';

function fieldsText(row: GenericRow): string {
  return row.map(([field, value]) => `${humaniseKey(field)}: ${formatScalar(value, LEN.fieldValue)}`).join(' · ');
}

/** `• *Gemini* (−3.5) — Visibility: 40.1 · Mentions: 31`. */
export function engineLine(model: DigestModel, row: GenericRow): string {
  const at = nameFieldIndex(row);
  const nameField = row[at];
  const name = nameField !== undefined ? formatScalar(nameField[1], LEN.rowName) : '(unnamed engine)';
  const delta =
    nameField !== undefined && typeof nameField[1] === 'string' ? formatSigned(model.diff.engineDeltas.get(nameField[1])) : null;
  const rest = fieldsText(row.filter((_, i) => i !== at));
  return `• *${name}*${delta !== null ? ` (${delta})` : ''}${rest.length > 0 ? ` — ${rest}` : ''}`;
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
