/** The weekly report's pure parts: the command's parser, the schedule's arithmetic (zones, DST, ISO weeks), the week's verdict, content and messages. */
import { describe, expect, it } from 'vitest';
import { parseCommandText } from '../../shared/slack-app/commands';
import { findBlockKitViolations, findUnescapedMarkup, type CheckableMessage } from '../../shared/slack-text';
import type { ProjectSnapshot } from '../../shared/ports';
import { baselineOf, projectWeek, weekEndingAt } from '../../shared/weekly/content';
import { MAX_DETAIL_REPLIES, renderWeeklyReport } from '../../shared/weekly/render';
import { poolOf, WEEKLY_Z, weeklyVerdict } from '../../shared/weekly/verdict';
import type { DataVisualizationBlock } from '../../shared/slack-blocks/types';
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

  it("pools the week's runs against last week's, and lists the rivals and each engine's change", () => {
    const week = projectWeek({ id: 'p1', name: 'Northwind' }, snapshot(), null, window);
    expect(week.outcome).toBe('worse');
    expect(week.runs).toBe(2);
    // (49 % × 2,000 + 44 % × 2,000) / 4,000 answers against last week's 52 %.
    expect(week.changes.find((c) => c.label === 'Visibility score')).toMatchObject({ from: 52, to: 46.5, delta: -5.5, significant: true });
    expect(week.changes.find((c) => c.label === 'Mentions')).toMatchObject({ delta: 0, significant: false });
    expect(week.topRival).toEqual({ name: 'TrailForge', prompts: 5 });
    expect(week.rivals).toEqual([
      { name: 'TrailForge', from: 2, to: 5, delta: 3 },
      { name: 'Summitline', from: 0, to: 1, delta: 1 },
    ]);
    expect(week.engines).toEqual([{ name: 'ChatGPT', now: 40, delta: -10 }]);
    expect(week.gapChanges).toBeNull();
  });

  it("judges the week on all its answers, not on its last run: a 3-answer last run doesn't hide a drop", () => {
    const day = 24 * HOUR;
    const run = (daysAgo: number, visibility: number, answers: number) => ({
      createdAt: new Date(MONDAY_0900 - daysAgo * day).toISOString(),
      runId: `r${daysAgo}`,
      metrics: { 'Visibility score': visibility },
      answers,
    });
    const history = [
      ...[13, 12, 11, 10, 9, 8].map((d) => run(d, 50, 1240)),
      ...[6, 5, 4, 3, 2].map((d) => run(d, 40, 1240)),
      run(1, 50, 3),
    ];
    const week = projectWeek({ id: 'p1', name: 'Voltway' }, snapshot({ history }), null, window);
    expect(week.outcome).toBe('worse');
    expect(week.changes[0]).toMatchObject({ from: 50, significant: true });
    expect(week.changes[0]?.to).toBeCloseTo(40.005, 3);
  });

  it('says "no data all week" when every run of the week had 0 answers, never "steady"', () => {
    const day = 24 * HOUR;
    const history = [
      { createdAt: new Date(MONDAY_0900 - 9 * day).toISOString(), runId: 'a', metrics: { 'Visibility score': 50 }, answers: 1240 },
      { createdAt: new Date(MONDAY_0900 - 3 * day).toISOString(), runId: 'b', metrics: { 'Visibility score': 0 }, answers: 0 },
      { createdAt: new Date(MONDAY_0900 - day).toISOString(), runId: 'c', metrics: { 'Visibility score': 0 }, answers: 0 },
    ];
    const week = projectWeek({ id: 'p1', name: 'Voltway' }, snapshot({ history }), null, window);
    expect(week).toMatchObject({ outcome: 'no-data', runs: 2, changes: [] });
    const report = renderWeeklyReport([week], window, { scheduleText: 'Monday 09:00 (UTC)' });
    expect(JSON.stringify(report.main.blocks)).toContain('⚠️ *Voltway* no data all week (2 runs, 0 answers)');
    expect(JSON.stringify(report.main.blocks)).not.toContain('steady');
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
    expect(projectWeek({ id: 'p1', name: 'N' }, quiet, null, window).outcome).toBe('no-runs');
    expect(projectWeek({ id: 'p2', name: 'M' }, null, null, window).outcome).toBe('never');
  });
});

describe('weeklyVerdict', () => {
  it('calls a share move only beyond 3.5 standard errors of the two pooled weeks', () => {
    // ±1.6 pts standard error at 2,000 answers a week: 3 pts is noise at this strictness, 6 pts is not.
    expect(
      weeklyVerdict(
        'Visibility score',
        { value: 50, answers: 2000, runs: 1, spread: null },
        { value: 53, answers: 2000, runs: 1, spread: null },
      ),
    ).toMatchObject({
      basis: 'sample',
      significant: false,
    });
    expect(
      weeklyVerdict(
        'Visibility score',
        { value: 50, answers: 2000, runs: 1, spread: null },
        { value: 44, answers: 2000, runs: 1, spread: null },
      ).significant,
    ).toBe(true);
    // Pooling 7 runs a week: the same 3 pts is a move.
    expect(
      weeklyVerdict(
        'Visibility score',
        { value: 50, answers: 14_000, runs: 7, spread: null },
        { value: 53, answers: 14_000, runs: 7, spread: null },
      ).significant,
    ).toBe(true);
    expect(WEEKLY_Z).toBeGreaterThanOrEqual(3.5);
  });

  it("tests counts against their Poisson noise as well as the label's minimum", () => {
    // Mentions 400 → 415 a run is +15 (over the minimum of 10) but within √(400/5 + 415/7)·3.5 ≈ 41.
    expect(
      weeklyVerdict('Mentions', { value: 400, answers: null, runs: 5, spread: null }, { value: 415, answers: null, runs: 7, spread: null })
        .significant,
    ).toBe(false);
    expect(
      weeklyVerdict('Mentions', { value: 400, answers: null, runs: 5, spread: null }, { value: 480, answers: null, runs: 7, spread: null })
        .significant,
    ).toBe(true);
  });

  it("needs a larger move of a metric that swings from run to run (the runs' own spread)", () => {
    const steady = { value: 3, answers: null, runs: 3, spread: 0 };
    const swinging = { value: 3, answers: null, runs: 3, spread: 0.04 };
    // Average position 3 → 3.35: over its 0.3 minimum, and a move when the runs barely vary…
    expect(weeklyVerdict('Average position', steady, { ...steady, value: 3.35 }).significant).toBe(true);
    // …but within 3.5 × √(0.04 + 0.04) ≈ 0.99 when they swing by ±0.35 a run.
    expect(weeklyVerdict('Average position', swinging, { ...swinging, value: 3.35 })).toMatchObject({
      basis: 'sample',
      significant: false,
    });
  });

  it('leaves 0-answer runs out of the pool and weighs the rest by their answers', () => {
    const at = (answers: number, v: number) => ({ createdAt: '2026-11-20T00:00:00Z', runId: 'r', metrics: { S: v }, answers });
    expect(poolOf('S', [at(1000, 40), at(3000, 60), at(0, 0)])).toEqual({ value: 55, answers: 4000, runs: 2, spread: 100 });
    expect(poolOf('S', [at(0, 0)])).toBeNull();
  });
});

function weekOf(name: string, visibility: [number, number], rivals: Record<string, number> = {}) {
  const day = 24 * HOUR;
  const run = (daysAgo: number, v: number) => ({
    createdAt: new Date(MONDAY_0900 - daysAgo * day).toISOString(),
    runId: `r${daysAgo}`,
    metrics: { 'Visibility score': v },
    answers: 1240,
    rivals,
  });
  const history = [...[13, 11, 9].map((d) => run(d, visibility[0])), ...[6, 4, 2].map((d) => run(d, visibility[1]))];
  return projectWeek({ id: name.toLowerCase(), name }, snapshot({ history }), null, weekEndingAt(MONDAY_0900));
}

describe('the report message', () => {
  const options = { scheduleText: 'Monday 09:00 (UTC)' };

  it('opens with the portfolio, then one line per project; the notification names the movers only', () => {
    const weeks = [
      weekOf('Acme', [40, 40]),
      weekOf('Voltway', [50, 42], { TrailForge: 5, Summitline: 2 }),
      weekOf('Northwind', [30, 35]),
      weekOf('Brightline', [60, 60]),
    ];
    const report = renderWeeklyReport(weeks, weekEndingAt(MONDAY_0900), options);
    const texts = (report.main.blocks as { text?: { text: string } }[]).map((b) => b.text?.text);
    expect(texts[0]).toBe('*1 of 4 projects worse, 1 better, 2 steady — biggest move Voltway −8 pts*');
    expect(texts[1]?.split('\n')).toEqual([
      '🔴 *Voltway* Visibility score −8 pts, worse · top rival TrailForge (5 prompts)',
      '🟢 *Northwind* Visibility score +5 pts, better',
      '⚪ *Acme* steady',
      '⚪ *Brightline* steady',
    ]);
    const [headline, chartWords] = report.main.text.split('\n');
    expect(headline).toBe(
      'Weekly report — 1 of 4 projects worse, 1 better, 2 steady — biggest move Voltway −8 pts: Voltway −8 pts · Northwind +5 pts',
    );
    // The portfolio chart: each project's pooled week, the biggest movers first; its words follow the headline.
    const chart = report.main.blocks.find((b) => (b as { type?: string }).type === 'data_visualization') as DataVisualizationBlock;
    expect(chart.chart).toMatchObject({
      type: 'line',
      axis_config: { categories: ['to Nov 16', 'to Nov 23'], y_label: 'Visibility score (%)' },
    });
    expect(chart.chart.type === 'line' && chart.chart.series.map((s) => s.name)).toEqual(['Voltway', 'Northwind', 'Acme', 'Brightline']);
    expect(chartWords).toBe(
      'Visibility score by project, weeks to Nov 16 – to Nov 23 (UTC): Voltway 50 → 42 % (−8); Northwind 30 → 35 % (+5); Acme 40 → 40 % (±0); Brightline 60 → 60 % (±0).',
    );
    expect(report.main.fallbackBlocks?.map((b) => (b as { type?: string }).type)).not.toContain('data_visualization');
    expect(report.main.blocks.length).toBeLessThanOrEqual(4);
    // The details are in the thread, with the thresholds said once per project.
    expect(report.thread).toHaveLength(1);
    const details = JSON.stringify(report.thread[0]?.blocks);
    expect(details).toContain('Visibility score −8 pts, worse: 42 %, was 50 %');
    expect(details).toContain('normal variation ±');
  });

  it('draws at most six projects in the portfolio chart, those that moved most; the rest are counted in its words', () => {
    const weeks = Array.from({ length: 9 }, (_, i) => weekOf(`Project ${i}`, [40, 40 + i]));
    const report = renderWeeklyReport(weeks, weekEndingAt(MONDAY_0900), options);
    const chart = report.main.blocks.find((b) => (b as { type?: string }).type === 'data_visualization') as DataVisualizationBlock;
    expect(chart.chart.type === 'line' && chart.chart.series.map((s) => s.name)).toEqual([
      'Project 8',
      'Project 7',
      'Project 6',
      'Project 5',
      'Project 4',
      'Project 3',
    ]);
    expect(report.main.text).toContain('3 more projects not shown.');
    expect(findBlockKitViolations(report.main as CheckableMessage)).toEqual([]);
  });

  it('names both sides of mixed news', () => {
    const day = 24 * HOUR;
    const run = (daysAgo: number, v: number, position: number) => ({
      createdAt: new Date(MONDAY_0900 - daysAgo * day).toISOString(),
      runId: `r${daysAgo}`,
      metrics: { 'Visibility score': v, 'Average position': position },
      answers: 1240,
    });
    const history = [run(9, 50, 3), run(8, 50, 3), run(3, 42, 2), run(2, 42, 2)];
    const week = projectWeek({ id: 'p', name: 'Mixed' }, snapshot({ history }), null, weekEndingAt(MONDAY_0900));
    expect(week.outcome).toBe('mixed');
    const report = renderWeeklyReport([week], weekEndingAt(MONDAY_0900), options);
    expect(JSON.stringify(report.main.blocks)).toContain('🟡 *Mixed* Visibility score −8 pts, worse · Average position −1, better');
  });

  it('stays well inside Block Kit limits with 50 projects, every one on its line, with service text sanitized', () => {
    const hostile = '<!channel> *bold* `code` <https://evil|click> \u202Eevil';
    const weeks = Array.from({ length: 50 }, (_, i) =>
      projectWeek(
        { id: `p${i}`, name: `${hostile} ${i} ${'long name '.repeat(30)}` },
        snapshot({
          gaps: Array.from({ length: 200 }, (_, g) => ({ prompt_id: `g${g}`, prompt_ref: g, prompt_text: hostile.repeat(20) })),
          history: snapshot().history?.map((p) => ({
            ...p,
            metrics: Object.fromEntries(Array.from({ length: 10 }, (_, m) => [`${hostile} ${m}`, m * i])),
            rivals: { [hostile.repeat(5)]: 7 },
          })),
        }),
        baselineOf(`p${i}`, snapshot(), 0),
        weekEndingAt(MONDAY_0900),
        {},
      ),
    );
    const report = renderWeeklyReport(weeks, weekEndingAt(MONDAY_0900), {
      ...options,
      dashboardUrlTemplate: 'https://app.example.com/p/{project_id}',
    });
    for (const message of [report.main, ...report.thread]) {
      expect(findBlockKitViolations(message as unknown as CheckableMessage)).toEqual([]);
      for (const block of message.blocks as { text?: { text?: string }; elements?: { text?: string }[] }[])
        for (const text of [block.text?.text, ...(block.elements ?? []).map((e) => e.text)])
          if (text !== undefined) expect(findUnescapedMarkup(text, { allowLinks: true })).toBeNull();
    }
    expect(report.main.blocks.length).toBeLessThanOrEqual(10);
    const lines = (report.main.blocks as { type: string; text?: { text: string } }[])
      .filter((b) => b.type === 'section')
      .slice(1)
      .flatMap((b) => b.text?.text.split('\n') ?? []);
    expect(lines).toHaveLength(50);
    expect(report.thread.length).toBeLessThanOrEqual(MAX_DETAIL_REPLIES);
    expect(JSON.stringify(report.thread.at(-1)?.blocks)).toContain('Not detailed here');
  });

  it('says so when the channel has no project', () => {
    const report = renderWeeklyReport([], weekEndingAt(MONDAY_0900), options);
    expect(JSON.stringify(report.main.blocks)).toContain('No project is subscribed here');
    expect(report.thread).toEqual([]);
  });
});

describe('the thread', () => {
  it('says once, not per project, that a first report has no gaps opened or closed to list', () => {
    const weeks = ['A', 'B', 'C'].map((name) => weekOf(name, [40, 40]));
    const report = renderWeeklyReport(weeks, weekEndingAt(MONDAY_0900), { scheduleText: 'Monday 09:00 (UTC)' });
    const text = JSON.stringify(report.thread);
    expect(text.match(/next week's lists/g)).toHaveLength(1);
  });
});
