/** Durations as people type them: `<number><unit>` (30m, 2h, 7d, 1w, 90s, 1.5h), the one parser for Slack and the CLI. */

export type DurationUnit = 's' | 'm' | 'h' | 'd' | 'w';

const UNIT_MS: Readonly<Record<DurationUnit, number>> = { s: 1_000, m: 60_000, h: 3600_000, d: 24 * 3600_000, w: 7 * 24 * 3600_000 };
const UNIT_ALIASES: Readonly<Record<string, DurationUnit>> = {
  s: 's',
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
  week: 'w',
  weeks: 'w',
};
const DURATION = /^(\d+)(\.\d+)?\s*([a-z]+)$/;
/** Whole counts are bounded (a mute of 1234567d is a typo, not a duration). */
const MAX_WHOLE_DIGITS = 6;

export interface DurationOptions {
  /** The units accepted; an alias (min, hours, wk…) counts as its unit. */
  units: readonly DurationUnit[];
  /** Whether 1.5h is accepted. */
  fractions: boolean;
}

export interface Duration {
  ms: number;
  count: number;
  unit: DurationUnit;
}

/** The duration, or undefined when the text is not one in the accepted units. */
export function parseDuration(text: string, options: DurationOptions): Duration | undefined {
  const match = DURATION.exec(text.trim().toLowerCase());
  if (!match) return undefined;
  const [, whole = '', fraction, unitText = ''] = match;
  const unit = UNIT_ALIASES[unitText];
  if (unit === undefined || !options.units.includes(unit)) return undefined;
  if (!options.fractions && (fraction !== undefined || whole.length > MAX_WHOLE_DIGITS)) return undefined;
  const count = Number(`${whole}${fraction ?? ''}`);
  return { ms: count * UNIT_MS[unit], count, unit };
}
