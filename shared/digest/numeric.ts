/** Reading a metric value the API sent as a number or as text. */
import type { Scalar } from '../read-api-types';

const NUMERIC = /^[+\-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$/;

/**
 * The numeric value of a metric, or null. What counts as numeric:
 * - a finite JSON number;
 * - a string that, after trimming, is a plain decimal number: optional sign (`+`, `-` or `−`), digits
 *   with optional comma thousands separators in groups of three (`1,234,567`), optional decimal part
 *   (`.5`, `42.25`), and optionally a trailing percent sign (`42%`, `42 %`), which is dropped so that
 *   "42%" counts as 42 and deltas are in percentage points.
 * Everything else is not numeric: booleans, null, empty strings, other units or currencies (`42 ms`,
 * `$5`), exponents (`1e3`), suffixes (`1.2k`), bad grouping (`1,23`), European decimals (`1.234,5`),
 * `NaN`, `Infinity`, hex.
 */
export function parseNumericValue(value: Scalar): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  let text = value.trim();
  if (text.endsWith('%')) text = text.slice(0, -1).trimEnd();
  if (text.length === 0 || !NUMERIC.test(text) || !/\d/.test(text)) return null;
  const parsed = Number(text.replace(/,/g, '').replace('\u2212', '-'));
  return Number.isFinite(parsed) ? parsed : null;
}
