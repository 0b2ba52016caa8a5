/**
 * Durations as people type them: a number and a unit, with or without a space, the unit short or
 * spelled out (30m, 12h, 7d, `7 days`, `1 week`, `2 weeks`, 90s, 1.5h). The one parser for Slack's
 * `mute` and the CLI's duration options.
 */

export type DurationUnit = 's' | 'm' | 'h' | 'd' | 'w';

const ALL_UNITS: readonly DurationUnit[] = ['s', 'm', 'h', 'd', 'w'];
const UNIT_MS: Readonly<Record<DurationUnit, number>> = { s: 1_000, m: 60_000, h: 3600_000, d: 24 * 3600_000, w: 7 * 24 * 3600_000 };
const UNIT_ALIASES: Readonly<Record<string, DurationUnit>> = {
  s: 's',
  sec: 's',
  secs: 's',
  second: 's',
  seconds: 's',
  m: 'm',
  min: 'm',
  mins: 'm',
  minute: 'm',
  minutes: 'm',
  h: 'h',
  hr: 'h',
  hrs: 'h',
  hour: 'h',
  hours: 'h',
  d: 'd',
  day: 'd',
  days: 'd',
  w: 'w',
  wk: 'w',
  wks: 'w',
  week: 'w',
  weeks: 'w',
};
const DURATION = /^(\d+)(\.\d+)?\s*([a-z]+)$/;
/** Whole counts are bounded (a mute of 1234567d is a typo, not a duration). */
const MAX_WHOLE_DIGITS = 6;

/** The forms an error shows as accepted (each parses). */
export const DURATION_EXAMPLES = '30m, 12h, 7d, 7 days, 1 week or 2 weeks';

export interface DurationOptions {
  /** The units accepted (default all); an alias (min, hours, week…) counts as its unit. */
  units?: readonly DurationUnit[] | undefined;
  /** Whether 1.5h is accepted (default yes). */
  fractions?: boolean | undefined;
}

export interface Duration {
  ms: number;
  count: number;
  unit: DurationUnit;
}

/** The duration, or undefined when the text is not one in the accepted units. */
export function parseDuration(text: string, options: DurationOptions = {}): Duration | undefined {
  const match = DURATION.exec(text.trim().replace(/\s+/g, ' ').toLowerCase());
  if (!match) return undefined;
  const [, whole = '', fraction, unitText = ''] = match;
  const unit = UNIT_ALIASES[unitText];
  if (unit === undefined || !(options.units ?? ALL_UNITS).includes(unit)) return undefined;
  if (whole.length > MAX_WHOLE_DIGITS || (options.fractions === false && fraction !== undefined)) return undefined;
  const count = Number(`${whole}${fraction ?? ''}`);
  return { ms: count * UNIT_MS[unit], count, unit };
}

/**
 * A duration at the end of a command's words (`mute Northwind 7 days`): the last two words when they
 * read as one (`7 days`), else the last word; with the words before it. `text` is what was tried last,
 * for an error to quote.
 */
export function trailingDuration(
  words: readonly string[],
  options: DurationOptions = {},
): { ok: true; duration: Duration; before: string[] } | { ok: false; text: string } {
  if (words.length >= 2) {
    const duration = parseDuration(words.slice(-2).join(' '), options);
    if (duration !== undefined) return { ok: true, duration, before: words.slice(0, -2) };
  }
  const last = words.at(-1) ?? '';
  const duration = parseDuration(last, options);
  return duration === undefined ? { ok: false, text: last } : { ok: true, duration, before: words.slice(0, -1) };
}
