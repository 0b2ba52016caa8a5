/** Formatting of values and service text for the digest (pure). */
import type { Scalar } from '../../read-api-types';
import { serviceName, serviceText } from '../../slack-text';

/** Maximum lengths (escaped UTF-16 code units) of service-sourced pieces. */
export const LEN = {
  projectName: 120,
  label: 60,
  value: 60,
  caption: 300,
  ref: 24,
  promptText: 250,
  platform: 30,
  competitor: 60,
  rowName: 60,
  fieldName: 40,
  fieldValue: 80,
  impact: 40,
  category: 60,
  detail: 500,
  alertText: 1200,
  id: 80,
  version: 100,
  status: 40,
} as const;

/** Service text for one mrkdwn line (see `serviceText`). */
export function inline(text: string, max: number): string {
  return serviceText(text, max);
}

/**
 * `n` as `Intl.NumberFormat('en-US', { maximumFractionDigits: 2 })` writes it ("1,234.57", "-0"), and a
 * positive value that would show as "0" to 2 significant digits (`maximumSignificantDigits: 2`:
 * "0.0012"). Written out because creating the first Intl formatter starts ICU (tens of ms of CPU),
 * which would land in the digest's cold start. Like ICU, it rounds the shortest decimal that reads
 * back as `n` (so 1.005 → "1.01"), half away from zero, and never uses an exponent.
 */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '∞' : '-∞';
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  const exact = shortestDecimal(Math.abs(n));
  const shown = roundDecimal(exact, exact.point + 2);
  if (shown.digits === '' && sign === '' && n !== 0) return decimalText(roundDecimal(exact, 2));
  return sign + decimalText(shown);
}

/** A decimal magnitude: `0.<digits> × 10^point` (no leading zero in `digits`; '' for zero). */
interface Decimal {
  digits: string;
  point: number;
}

/** The shortest decimal that reads back as `magnitude` (what `toExponential()` writes). */
function shortestDecimal(magnitude: number): Decimal {
  if (magnitude === 0) return { digits: '', point: 1 };
  const [mantissa = '', exponent = '0'] = magnitude.toExponential().split('e');
  return { digits: mantissa.replace('.', ''), point: Number(exponent) + 1 };
}

/** Rounded to its first `keep` digits, half away from zero. */
function roundDecimal({ digits, point }: Decimal, keep: number): Decimal {
  if (keep >= digits.length) return { digits, point };
  if (keep < 0) return { digits: '', point: 1 };
  const kept = digits.slice(0, keep);
  if (digits.charCodeAt(keep) < 53 /* '5' */) return { digits: kept.replace(/0+$/, ''), point: kept === '' ? 1 : point };
  const last = kept.search(/9*$/);
  // Every kept digit a 9 (or none kept): the carry adds a digit in front.
  if (last === 0) return { digits: '1', point: point + 1 };
  return { digits: kept.slice(0, last - 1) + String(Number(kept[last - 1]) + 1), point };
}

/** "1,234.5": the integer part grouped by thousands, the fraction without trailing zeros. */
function decimalText({ digits, point }: Decimal): string {
  const whole = point <= 0 ? '0' : digits.slice(0, point).padEnd(point, '0');
  const fraction = point >= digits.length ? '' : point < 0 ? '0'.repeat(-point) + digits : digits.slice(point);
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return fraction === '' ? grouped : `${grouped}.${fraction}`;
}

/** A scalar of any type for display: numbers en-US formatted, booleans yes/no, null or blank → "—". */
export function formatScalar(value: Scalar, max: number = LEN.value): string {
  if (value === null) return '—';
  if (typeof value === 'number') return Number.isFinite(value) ? formatNumber(value) : '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  const text = inline(value, max);
  return text.length === 0 ? '—' : text;
}

/** A signed change: "+3.2", "−1" (true minus sign), "±0"; null when there is none. */
export function formatSigned(delta: number | null | undefined): string | null {
  if (delta === null || delta === undefined || !Number.isFinite(delta)) return null;
  if (delta === 0) return '±0';
  return `${delta > 0 ? '+' : '\u2212'}${formatNumber(Math.abs(delta))}`;
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Epoch ms of an ISO 8601 timestamp (no offset = UTC), NaN for anything else. */
function eventTimeMs(timestamp: string): number {
  const match = ISO_TIMESTAMP.exec(timestamp.trim());
  return match ? Date.parse(match[1] === undefined ? `${timestamp.trim()}Z` : timestamp.trim()) : Number.NaN;
}

/**
 * An ISO 8601 timestamp as "YYYY-MM-DD HH:MM UTC" (a timestamp without offset is read as UTC, so the
 * result never depends on the host's time zone). Anything else is shown as given (escaped).
 */
export function formatEventTime(timestamp: string): string {
  const ms = eventTimeMs(timestamp);
  if (!Number.isFinite(ms)) {
    const raw = inline(timestamp, 40);
    return raw.length === 0 ? 'unknown time' : raw;
  }
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/**
 * A Slack date token: each reader sees the time in their own zone; the fallback (clients that can't
 * format it) is `formatEventTime`'s UTC text. Anything that is not a timestamp is shown as given (escaped).
 */
export function slackDate(timestamp: string): string {
  const ms = eventTimeMs(timestamp);
  const fallback = formatEventTime(timestamp);
  if (!Number.isFinite(ms)) return fallback;
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time}|${fallback}>`;
}

/** A long id shortened for reading ("d4ac46c0…"); the full id stays in the message metadata and links. */
export function shortId(id: string): string {
  const chars = Array.from(id.trim());
  // Cut before escaping, so an entity (`&amp;`) is never cut in half.
  const text = chars.length > 12 ? `${inline(chars.slice(0, 8).join(''), LEN.id)}…` : inline(id, LEN.id);
  return text.length > 0 && text !== '…' ? text : '—';
}

export function plural(n: number, one: string, many: string): string {
  return `${formatNumber(n)} ${n === 1 ? one : many}`;
}

/** The project's name, or its id when the name shows nothing. */
export function projectName(name: string | null, projectId: string): string {
  return serviceName(name, projectId, LEN.projectName) || 'unknown project';
}

/** Known field names in words; others: underscores and camelCase split, first letter capitalised. */
const KNOWN_KEYS: Readonly<Record<string, string>> = {
  avg_position: 'Avg position',
  average_position: 'Average position',
  change_pts: 'Change (pts)',
  share_of_voice: 'Share of voice',
  sov: 'Share of voice',
  visibility: 'Visibility',
  visibility_score: 'Visibility score',
  mentions: 'Mentions',
  citations: 'Citations',
  sentiment: 'Sentiment',
  rank: 'Rank',
};

export function humaniseKey(key: string): string {
  const known = KNOWN_KEYS[key.trim().toLowerCase()];
  if (known !== undefined) return known;
  const words = key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_\s]+/g, ' ')
    .trim()
    .toLowerCase();
  const text = words.length > 0 ? words[0]!.toUpperCase() + words.slice(1) : '';
  return inline(text, LEN.fieldName) || '—';
}

const SPARKS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/** Fewer points than this make no trend worth drawing. */
export const SPARKLINE_MIN_POINTS = 4;

/** A sparkline of the values (oldest first); '' for fewer than `SPARKLINE_MIN_POINTS` values. */
export function sparkline(values: readonly number[]): string {
  if (values.length < SPARKLINE_MIN_POINTS) return '';
  const min = Math.min(...values);
  const span = Math.max(...values) - min;
  return values.map((v) => SPARKS[span === 0 ? 3 : Math.round(((v - min) / span) * (SPARKS.length - 1))]).join('');
}
