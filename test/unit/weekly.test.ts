/** The weekly report's pure parts: the command's parser, the schedule's arithmetic (zones, DST, ISO weeks), the week's content and its message. */
import { describe, expect, it } from 'vitest';
import { parseCommandText } from '../../shared/slack-app/commands';
import { findBlockKitViolations, findUnescapedMarkup, type CheckableMessage } from '../../shared/slack-text';
import type { ProjectSnapshot } from '../../shared/ports';
import { baselineOf, projectWeek, weekEndingAt } from '../../shared/weekly/content';
import { MAX_SECTIONS, renderWeeklyReport } from '../../shared/weekly/render';
import {
  dueNow,
  isoWeekAt,
  isoWeekOf,
  latestOccurrence,
  nextOccurrence,
  parseDay,
  parseTime,
  zonedInstant,
} from '../../shared/weekly/schedule';

const BERLIN = { day: 1, minuteOfDay: 9 * 60, timeZone: 'Europe/Berlin' } as const;
/** Monday 2026-11-23 09:00 in Berlin (CET, UTC+1). */
const MONDAY_0900 = Date.UTC(2026, 10, 23, 8, 0);
const HOUR = 3600_000;

describe('/visibility weekly', () => {
  it('parses on, off, and a day with a time and an optional zone', () => {
    expect(parseCommandText('weekly on')).toEqual({ kind: 'weekly', action: 'on' });
    expect(parseCommandText('weekly OFF')).toEqual({ kind: 'weekly', action: 'off' });
    expect(parseCommandText('weekly fri 17:30 europe/berlin')).toEqual({
      kind: 'weekly',
      action: 'at',
      day: 5,
      minuteOfDay: 17 * 60 + 30,
      timeZone: 'Europe/Berlin',
    });
    expect(parseCommandText('weekly Monday 9:00')).toEqual({ kind: 'weekly', action: 'at', day: 1, minuteOfDay: 540, timeZone: undefined });
  });

  it('says what to fix', () => {
    for (const text of [
      'weekly',
      'weekly someday 09:00',
      'weekly mon',
      'weekly mon 25:00',
      'weekly mon 09:00 Mars/Olympus',
      'weekly mon 09:00 UTC extra',
    ])
      expect(parseCommandText(text)).toMatchObject({ kind: 'invalid', verb: 'weekly' });
    expect(parseDay('mo')).toBeUndefined();
    expect(parseDay('tues')).toBeUndefined();
    expect(parseTime('9:5')).toBeUndefined();
  });
});

describe('schedule', () => {
  it('is due from its time for a day, not before, and not when set after its time this week', () => {
    expect(dueNow(BERLIN, MONDAY_0900 - 60_000)).toEqual({ due: false });
    expect(dueNow(BERLIN, MONDAY_0900 + 5 * 60_000)).toEqual({ due: true, week: '2026-W48', atMs: MONDAY_0900 });
    expect(dueNow(BERLIN, MONDAY_0900 + 23 * HOUR).due).toBe(true);
    expect(dueNow(BERLIN, MONDAY_0900 + 24 * HOUR)).toEqual({ due: false });
    expect(dueNow(BERLIN, MONDAY_0900 + HOUR, MONDAY_0900 + 1)).toEqual({ due: false });
    expect(nextOccurrence(BERLIN, MONDAY_0900)).toBe(MONDAY_0900 + 7 * 24 * HOUR);
  });

  it("catches up across the week's end: Sunday 23:30's report is still due after midnight", () => {
    const sunday = { day: 7, minuteOfDay: 23 * 60 + 30, timeZone: 'UTC' } as const;
    const at = Date.UTC(2026, 10, 29, 23, 30);
    expect(dueNow(sunday, at + HOUR)).toEqual({ due: true, week: '2026-W48', atMs: at });
  });

  it('follows the zone through DST: 09:00 Berlin is 08:00 UTC in winter and 07:00 UTC in summer', () => {
    expect(latestOccurrence(BERLIN, Date.UTC(2026, 6, 6, 12)).atMs).toBe(Date.UTC(2026, 6, 6, 7));
    // 02:30 does not exist on 29 March 2026 in Berlin: it falls an hour later (03:30 CEST = 01:30 UTC).
    expect(zonedInstant({ year: 2026, month: 3, day: 29 }, 150, 'Europe/Berlin')).toBe(Date.UTC(2026, 2, 29, 1, 30));
    expect(zonedInstant({ year: 2026, month: 1, day: 5 }, 540, 'America/New_York')).toBe(Date.UTC(2026, 0, 5, 14));
  });

  it('names ISO weeks, the week-year included', () => {
    expect(isoWeekOf({ year: 2026, month: 1, day: 1 })).toBe('2026-W01');
    expect(isoWeekOf({ year: 2027, month: 1, day: 1 })).toBe('2026-W53');
    expect(isoWeekOf({ year: 2024, month: 12, day: 30 })).toBe('2025-W01');
    // Sunday 23:30 UTC is already Monday in Berlin.
    expect(isoWeekAt(Date.UTC(2026, 10, 29, 23, 30), 'UTC')).toBe('2026-W48');
    expect(isoWeekAt(Date.UTC(2026, 10, 29, 23, 30), 'Europe/Berlin')).toBe('2026-W49');
  });
});

function snapshot(overrides: Partial<ProjectSnapshot> = {}): ProjectSnapshot {
  const day = 24 * HOUR;
  const point = (daysAgo: number, visibility: number, rivals: Record<string, number>) => ({
    createdAt: new Date(MONDAY_0900 - daysAgo * day).toISOString(),
    runId: `r${daysAgo}`,
    metrics: { 'Visibility score': visibility, Mentions: 400 },
    answers: 2000,
    rivals,
  });
  return {
    projectId: 'p1',
    lastCreatedAt: new Date(MONDAY_0900 - day).toISOString(),
    lastRunId: 'r1',
    metrics: { 'Visibility score': 44 },
    gaps: [
      { prompt_id: 'g1', prompt_ref: 1, prompt_text: 'Best <!channel> tent?' },
      { prompt_id: 'g3', prompt_ref: 3, prompt_text: 'New gap' },
    ],
    history: [point(9, 52, { TrailForge: 2 }), point(4, 49, { TrailForge: 3 }), point(1, 44, { TrailForge: 5, Summitline: 1 })],
    engines: { ChatGPT: 40 },
    trend: [
      { atMs: MONDAY_0900 - 9 * day, engines: { ChatGPT: 50 } },
      { atMs: MONDAY_0900 - day, engines: { ChatGPT: 40 } },
    ],
    ...overrides,
  };
}

describe("a project's week", () => {
  const window = weekEndingAt(MONDAY_0900);

  it("calls the week's changes beyond noise, the rivals that moved and each engine's change", () => {
    const week = projectWeek({ id: 'p1', name: 'Northwind' }, snapshot(), null, window);
    expect(week.status).toBe('runs');
    expect(week.runs).toBe(2);
    expect(week.changes.find((c) => c.label === 'Visibility score')).toMatchObject({ from: 52, to: 44, delta: -8, significant: true });
    expect(week.changes.find((c) => c.label === 'Mentions')).toMatchObject({ delta: 0, significant: false });
    expect(week.rivals).toEqual([
      { name: 'TrailForge', from: 2, to: 5, delta: 3 },
      { name: 'Summitline', from: 0, to: 1, delta: 1 },
    ]);
    expect(week.engines).toEqual([{ name: 'ChatGPT', now: 40, delta: -10 }]);
    expect(week.gapChanges).toBeNull();
  });

  it('lists gaps opened and closed since the last report; a truncated list never calls a gap closed', () => {
    const baseline = {
      ...baselineOf('p1', snapshot(), MONDAY_0900 - 7 * 24 * HOUR),
      gaps: [
        { prompt_id: 'g1', prompt_ref: 1, prompt_text: 'x' },
        { prompt_id: 'g2', prompt_ref: 2, prompt_text: 'Old' },
      ],
    };
    const week = projectWeek({ id: 'p1', name: 'Northwind' }, snapshot(), baseline, window);
    expect(week.gapChanges?.opened.map((g) => g.prompt_id)).toEqual(['g3']);
    expect(week.gapChanges?.closed.map((g) => g.prompt_id)).toEqual(['g2']);
    const truncated = projectWeek({ id: 'p1', name: 'N' }, snapshot({ gapsTruncated: true }), baseline, window);
    expect(truncated.gapChanges).toMatchObject({ closed: [], leftTop: 1 });
  });

  it('says a week without runs, and a project never digested', () => {
    const quiet = snapshot({ history: [{ createdAt: new Date(MONDAY_0900 - 20 * 24 * HOUR).toISOString(), runId: 'old', metrics: {} }] });
    expect(projectWeek({ id: 'p1', name: 'N' }, quiet, null, window).status).toBe('quiet');
    expect(projectWeek({ id: 'p2', name: 'M' }, null, null, window).status).toBe('none');
  });
});

describe('the report message', () => {
  it('stays inside Block Kit limits at any size, with service text sanitized', () => {
    const hostile = '<!channel> *bold* `code` <https://evil|click> \u202Eevil';
    const weeks = Array.from({ length: 30 }, (_, i) =>
      projectWeek(
        { id: `p${i}`, name: `${hostile} ${'long name '.repeat(30)}` },
        snapshot({
          gaps: Array.from({ length: 200 }, (_, g) => ({ prompt_id: `g${g}`, prompt_ref: g, prompt_text: hostile.repeat(20) })),
          history: snapshot().history?.map((p) => ({
            ...p,
            metrics: Object.fromEntries(Array.from({ length: 10 }, (_, m) => [`${hostile} ${m}`, m * i])),
          })),
        }),
        baselineOf(`p${i}`, snapshot(), 0),
        weekEndingAt(MONDAY_0900),
      ),
    );
    const message = renderWeeklyReport(weeks, weekEndingAt(MONDAY_0900), { scheduleText: 'Monday 09:00 (UTC)' });
    expect(findBlockKitViolations(message as unknown as CheckableMessage)).toEqual([]);
    const sections = message.blocks.filter((b) => (b as { type: string }).type === 'section');
    expect(sections).toHaveLength(MAX_SECTIONS);
    for (const block of message.blocks as { text?: { text?: string }; elements?: { text?: string }[] }[])
      for (const text of [block.text?.text, ...(block.elements ?? []).map((e) => e.text)])
        if (text !== undefined) expect(findUnescapedMarkup(text, { allowLinks: true })).toBeNull();
    expect(JSON.stringify(message.blocks)).toContain('Also subscribed here');
  });

  it('says so when the channel has no project', () => {
    const message = renderWeeklyReport([], weekEndingAt(MONDAY_0900), { scheduleText: 'Monday 09:00 (UTC)' });
    expect(JSON.stringify(message.blocks)).toContain('No project is subscribed here');
  });
});
