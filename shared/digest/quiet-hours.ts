/**
 * Quiet hours of a channel (`/visibility quiet 22:00-07:00 [tz]`): a daily window in an IANA time zone
 * during which digests are held and posted afterwards as one catch-up message (./held-digests.ts).
 * Pure: no I/O; the clock is an argument. Wall-clock minutes are read with Intl in the window's zone, so
 * a window across midnight and DST changes need no offset arithmetic: 22:00-07:00 is quiet from 22:00
 * to 07:00 local time whatever the day's length, and a start or end that a DST jump skips is passed
 * over (the window begins or ends at the first minute that exists after it).
 */
import { QUIET_SWEEP_MINUTES } from '../contracts';
import type { QuietWindow } from '../ports';

export type { QuietWindow } from '../ports';

const MINUTES_PER_DAY = 24 * 60;
const MINUTE_MS = 60_000;

/** `HH:MM` (or `H:MM`, `HHMM` not accepted: ambiguous with a duration) → minutes after midnight; 24:00 is not a time. */
export function parseClock(text: string): number | undefined {
  const match = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * 60 + Number(match[2]);
}

/** Whether Intl knows the zone (every IANA zone Node ships with, and `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.trim() !== '';
  } catch {
    return false;
  }
}

/** The zone as Intl spells it (`europe/berlin` → `Europe/Berlin`), so stored settings read the same everywhere. */
export function canonicalTimeZone(zone: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
}

const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = FORMATTERS.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    FORMATTERS.set(zone, formatter);
  }
  return formatter;
}

/** Minutes after local midnight in `zone` at `atMs`. */
export function localMinuteOfDay(atMs: number, zone: string): number {
  const parts = formatterFor(zone).formatToParts(new Date(atMs));
  const hour = Number(parts.find((p) => p.type === 'hour')?.value ?? 0);
  const minute = Number(parts.find((p) => p.type === 'minute')?.value ?? 0);
  return (hour % 24) * 60 + minute;
}

/** Whether `atMs` falls inside the window (a window whose start is after its end runs across midnight). */
export function isQuietAt(window: QuietWindow, atMs: number): boolean {
  const minute = localMinuteOfDay(atMs, window.timeZone);
  const { startMinute: start, endMinute: end } = window;
  return start < end ? minute >= start && minute < end : minute >= start || minute < end;
}

/** A window must leave this much of a day open: the catch-up sweep (every `QUIET_SWEEP_MINUTES`) needs a chance to land outside it. */
export const MIN_OPEN_MINUTES = 2 * QUIET_SWEEP_MINUTES;

/** Minutes of an ordinary day (no DST change) outside the window. */
export function openMinutesPerDay(window: Pick<QuietWindow, 'startMinute' | 'endMinute'>): number {
  const { startMinute: start, endMinute: end } = window;
  return start < end ? MINUTES_PER_DAY - (end - start) : start - end;
}

/**
 * The first instant at or after `atMs` that is outside the window: when a digest held now is due.
 * Walks minute by minute (at most a day and a DST hour) so a DST jump needs no special case.
 */
export function quietEndsAt(window: QuietWindow, atMs: number): number {
  let t = atMs;
  for (let step = 0; step <= MINUTES_PER_DAY + 60 && isQuietAt(window, t); step++) t = (Math.floor(t / MINUTE_MS) + 1) * MINUTE_MS;
  return t;
}

function clockText(minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
}

/** "22:00–07:00 Europe/Berlin". */
export function describeWindow(window: QuietWindow): string {
  return `${clockText(window.startMinute)}–${clockText(window.endMinute)} ${window.timeZone}`;
}
