/**
 * When a channel's weekly report is due (pure: no I/O, the clock passed in).
 *
 * The stack's schedule sweeps every `SWEEP_MINUTES` (EventBridge Scheduler); a sweep posts for every
 * channel whose report time of the week has come within the last `CATCH_UP_MS` and whose week has no
 * finished claim yet. So a failed report is retried by the next sweeps, a missed sweep is caught up,
 * and a schedule set after its own time this week starts next week (not at once).
 *
 * Times are wall-clock times in an IANA zone, computed with Intl (no library): a time that does not
 * exist on a DST change day (02:30 in spring) falls an hour later; one that exists twice (autumn) is taken once.
 */
import type { IsoWeekday, WeeklySchedule, WeeklySetting } from './ports';

/** How often the stack's schedule sweeps (infra/weekly-report.ts); a report goes out at most this late. */
export const SWEEP_MINUTES = 15;
/** A report not posted within a day of its time (the bridge was down, every sweep failed) waits for next week. */
export const CATCH_UP_MS = 24 * 3600_000;
export const WEEK_MS = 7 * 24 * 3600_000;
const DAY_MS = 24 * 3600_000;

export const DEFAULT_WEEKLY = { day: 1 as IsoWeekday, minuteOfDay: 9 * 60 } as const;

export const DAY_NAMES: readonly string[] = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** A day name or its first three letters ("mon", "Monday"). */
export function parseDay(text: string): IsoWeekday | undefined {
  const word = text.trim().toLowerCase();
  if (word.length < 3) return undefined;
  const index = DAY_NAMES.findIndex((name) => name.startsWith(word) && (word.length === 3 || word === name));
  return index < 0 ? undefined : ((index + 1) as IsoWeekday);
}

/** "09:00", "9:30", "17:05" (24-hour) → minutes after midnight. */
export function parseTime(text: string): number | undefined {
  const match = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(text.trim());
  return match ? Number(match[1]) * 60 + Number(match[2]) : undefined;
}

/** True for an IANA zone this runtime knows ("UTC", "Europe/Berlin"). */
export function isTimeZone(zone: string): boolean {
  if (zone.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The zone as Intl spells it ("europe/berlin" → "Europe/Berlin"). */
export function canonicalZone(zone: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
}

export function formatMinutes(minuteOfDay: number): string {
  return `${String(Math.floor(minuteOfDay / 60)).padStart(2, '0')}:${String(minuteOfDay % 60).padStart(2, '0')}`;
}

/** "Monday 09:00 (Europe/Berlin)". */
export function describeSchedule(schedule: WeeklySchedule): string {
  const day = DAY_NAMES[schedule.day - 1] ?? 'monday';
  return `${day.charAt(0).toUpperCase()}${day.slice(1)} ${formatMinutes(schedule.minuteOfDay)} (${schedule.timeZone})`;
}

/** The schedule a channel follows: its own day/time/zone, else the stage's default. */
export function effectiveSchedule(setting: WeeklySetting | undefined, stageZone: string): WeeklySchedule {
  return {
    day: setting?.day ?? DEFAULT_WEEKLY.day,
    minuteOfDay: setting?.minuteOfDay ?? DEFAULT_WEEKLY.minuteOfDay,
    timeZone: setting?.timeZone ?? stageZone,
  };
}

// --- Wall-clock arithmetic ---------------------------------------------------------------------

interface LocalDate {
  year: number;
  month: number;
  day: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, format);
  }
  return format;
}

/** The wall-clock fields of an instant in a zone. */
function wallClock(ms: number, zone: string): LocalDate & { hour: number; minute: number; second: number } {
  const parts = Object.fromEntries(
    formatFor(zone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const num = (key: string) => Number(parts[key] ?? 0);
  return { year: num('year'), month: num('month'), day: num('day'), hour: num('hour'), minute: num('minute'), second: num('second') };
}

/** The zone's offset from UTC at an instant (ms, whole seconds). */
function offsetAt(ms: number, zone: string): number {
  const w = wallClock(ms, zone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(ms / 1000) * 1000;
}

/** The instant of a wall-clock time in a zone (see the module doc for DST gaps and overlaps). */
export function zonedInstant(date: LocalDate, minuteOfDay: number, zone: string): number {
  const guess = Date.UTC(date.year, date.month - 1, date.day, Math.floor(minuteOfDay / 60), minuteOfDay % 60);
  const first = guess - offsetAt(guess, zone);
  const candidates = [first, guess - offsetAt(first, zone)];
  const shows = (ms: number) => {
    const w = wallClock(ms, zone);
    return w.year === date.year && w.month === date.month && w.day === date.day && w.hour * 60 + w.minute === minuteOfDay;
  };
  const exact = candidates.filter(shows);
  // Twice on the clock (autumn): the earlier reading found; never on it (spring gap): the later reading, an hour on.
  return exact.length > 0 ? Math.min(...exact) : Math.max(...candidates);
}

function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day) + days * DAY_MS);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function isoWeekdayOf(date: LocalDate): IsoWeekday {
  const weekday = new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
  return (weekday === 0 ? 7 : weekday) as IsoWeekday;
}

/** ISO 8601 week of a calendar date: "2026-W03" (the week-year may differ from the year at new year). */
export function isoWeekOf(date: LocalDate): string {
  const thursday = addDays(date, 4 - isoWeekdayOf(date));
  const jan1 = Date.UTC(thursday.year, 0, 1);
  const week = Math.floor((Date.UTC(thursday.year, thursday.month - 1, thursday.day) - jan1) / DAY_MS / 7) + 1;
  return `${thursday.year}-W${String(week).padStart(2, '0')}`;
}

/** The ISO week an instant falls in, in a zone. */
export function isoWeekAt(ms: number, zone: string): string {
  return isoWeekOf(wallClock(ms, zone));
}

/** The schedule's time in the (local) week of `ms`. */
function occurrenceInWeekOf(ms: number, schedule: WeeklySchedule): { atMs: number; week: string } {
  const today = wallClock(ms, schedule.timeZone);
  const date = addDays(today, schedule.day - isoWeekdayOf(today));
  return { atMs: zonedInstant(date, schedule.minuteOfDay, schedule.timeZone), week: isoWeekOf(date) };
}

/** The schedule's latest time at or before `nowMs` (this week's, else last week's), and its ISO week. */
export function latestOccurrence(schedule: WeeklySchedule, nowMs: number): { atMs: number; week: string } {
  const thisWeek = occurrenceInWeekOf(nowMs, schedule);
  return thisWeek.atMs <= nowMs ? thisWeek : occurrenceInWeekOf(nowMs - WEEK_MS, schedule);
}

/** The schedule's next time after `nowMs`. */
export function nextOccurrence(schedule: WeeklySchedule, nowMs: number): number {
  const thisWeek = occurrenceInWeekOf(nowMs, schedule);
  return thisWeek.atMs > nowMs ? thisWeek.atMs : occurrenceInWeekOf(nowMs + WEEK_MS, schedule).atMs;
}

export type Due = { due: true; week: string; atMs: number } | { due: false };

/**
 * Whether a report is due now: its time came within `CATCH_UP_MS`, and not before the schedule was
 * set (`configuredAtMs`). Whether the week was already posted is the claim's business.
 */
export function dueNow(schedule: WeeklySchedule, nowMs: number, configuredAtMs?: number): Due {
  const latest = latestOccurrence(schedule, nowMs);
  if (nowMs - latest.atMs >= CATCH_UP_MS) return { due: false };
  if (configuredAtMs !== undefined && configuredAtMs > latest.atMs) return { due: false };
  return { due: true, week: latest.week, atMs: latest.atMs };
}
