/**
 * Reading the overview's generic rows (per-engine rows, alerts) by meaning rather than by field order:
 * the spec shows none of their field names, so known names are looked for and the rest kept as is.
 */
import type { GenericRow, Scalar } from '../read-api-types';
import { parseNumericValue } from './numeric';

const NAME_FIELDS = ['engine', 'platform', 'name', 'model', 'engine_name', 'platform_name'];
/** The figure an engine is compared by, in order of preference. */
const PRIMARY_FIELDS = ['visibility', 'visibility_score', 'score', 'share_of_voice', 'mentions'];
const SEVERITY_FIELDS = ['severity', 'level', 'priority'];
const TEXT_FIELDS = ['message', 'text', 'title', 'description', 'summary'];

function fieldIndex(row: GenericRow, names: readonly string[]): number {
  for (const name of names) {
    const i = row.findIndex(
      ([field, value]) => field.trim().toLowerCase() === name && typeof value === 'string' && value.trim().length > 0,
    );
    if (i >= 0) return i;
  }
  return -1;
}

/** Index of the field naming the row: a known name field, else the first text field; -1 when none. */
export function nameFieldIndex(row: GenericRow): number {
  const known = fieldIndex(row, NAME_FIELDS);
  return known >= 0 ? known : row.findIndex(([, value]) => typeof value === 'string' && value.trim().length > 0);
}

/** The row's name (see `nameFieldIndex`), or null. */
export function rowName(row: GenericRow): string | null {
  const field = row[nameFieldIndex(row)];
  return field !== undefined && typeof field[1] === 'string' ? field[1] : null;
}

/** The engine's main figure: a known field, else its first numeric field; null when none. */
export function rowPrimaryValue(row: GenericRow): { field: string; value: number } | null {
  for (const name of PRIMARY_FIELDS) {
    const field = row.find(([f]) => f.trim().toLowerCase() === name);
    const value = field === undefined ? null : parseNumericValue(field[1]);
    if (field !== undefined && value !== null) return { field: field[0], value };
  }
  for (const [field, raw] of row) {
    const value = typeof raw === 'boolean' ? null : parseNumericValue(raw);
    if (value !== null) return { field, value };
  }
  return null;
}

export type Severity = 'critical' | 'error' | 'warning' | 'info' | 'other';
export const SEVERITY_ORDER: readonly Severity[] = ['critical', 'error', 'warning', 'info', 'other'];

const SEVERITY_WORDS: ReadonlyArray<readonly [RegExp, Severity]> = [
  [/^(critical|crit|fatal|emergency|urgent|high)/, 'critical'],
  [/^(error|err|severe)/, 'error'],
  [/^(warning|warn|medium|moderate)/, 'warning'],
  [/^(info|notice|low|information)/, 'info'],
];

export interface AlertView {
  severity: Severity;
  /** The severity as sent (null when the alert has none). */
  severityText: string | null;
  /** The message/text/title, or null. */
  text: string | null;
  /** The fields not used above, in API order. */
  rest: GenericRow;
}

function severityOf(value: Scalar): Severity {
  if (typeof value !== 'string') return 'other';
  const word = value.trim().toLowerCase();
  return SEVERITY_WORDS.find(([pattern]) => pattern.test(word))?.[1] ?? 'other';
}

/** An alert read by meaning: severity, text, and the other fields. */
export function alertView(row: GenericRow): AlertView {
  const s = fieldIndex(row, SEVERITY_FIELDS);
  const t = fieldIndex(row, TEXT_FIELDS);
  const severityField = row[s];
  const textField = row[t];
  return {
    severity: severityField === undefined ? 'other' : severityOf(severityField[1]),
    severityText: severityField !== undefined && typeof severityField[1] === 'string' ? severityField[1] : null,
    text: textField !== undefined && typeof textField[1] === 'string' ? textField[1] : null,
    rest: row.filter((_, i) => i !== s && i !== t),
  };
}

/** Alerts most severe first; the API's order is kept within a severity. */
export function alertsBySeverity(rows: readonly GenericRow[]): AlertView[] {
  const views = rows.map(alertView);
  return SEVERITY_ORDER.flatMap((severity) => views.filter((v) => v.severity === severity));
}
