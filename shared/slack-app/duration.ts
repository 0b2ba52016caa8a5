/** Mute durations: `<n><unit>` with unit m, h, d or w (e.g. 30m, 2h, 7d, 1w), bounded. */

export const MIN_MUTE_MS = 60_000;
export const MAX_MUTE_MS = 90 * 24 * 3600_000;

const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3600_000, d: 24 * 3600_000, w: 7 * 24 * 3600_000 };
const UNIT_ALIASES: Readonly<Record<string, string>> = {
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
const DURATION = /^(\d{1,6})\s*([a-z]+)$/;

export type DurationParse = { ok: true; ms: number; label: string } | { ok: false; problem: string };

export function parseDuration(text: string): DurationParse {
  const match = DURATION.exec(text.trim().toLowerCase());
  const unit = match ? UNIT_ALIASES[match[2] ?? ''] : undefined;
  if (!match || unit === undefined) {
    return { ok: false, problem: `"${text}" is not a duration: write a number and a unit, e.g. 30m, 2h, 7d or 1w` };
  }
  const count = Number(match[1]);
  const ms = count * (UNIT_MS[unit] ?? 0);
  if (ms < MIN_MUTE_MS) return { ok: false, problem: 'a mute lasts at least 1m' };
  if (ms > MAX_MUTE_MS) return { ok: false, problem: 'a mute lasts at most 90d (use `unsubscribe` to stop digests for good)' };
  return { ok: true, ms, label: `${count}${unit}` };
}
