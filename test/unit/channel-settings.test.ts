/**
 * Per-channel filters and quiet hours, pure parts: parsing `/visibility filter` and `/visibility quiet`,
 * applying a filter to the renderer's input, deciding "filtered to nothing", and quiet windows across
 * midnight, DST changes and time zones (fixed instants, no clock).
 */
import { describe, expect, it } from 'vitest';
import { describeFilter, filterDigestInput, parseFilterArgs } from '../../shared/digest/channel-filter';
import { filteredToNothing } from '../../shared/digest/channel-gate';
import { runViews } from '../../shared/digest/channel-views';
import type { ChannelTarget } from '../../shared/digest/fan-out';
import type { ChannelFilter, Subscription } from '../../shared/ports';
import { isQuietAt, localMinuteOfDay, quietEndsAt } from '../../shared/digest/quiet-hours';
import { renderCatchUp } from '../../shared/digest/held-digests';
import { foldHeld } from '../../shared/digest/held-runs';
import { buildModel, type DigestInput } from '../../shared/digest/render';
import { parseCommandText } from '../../shared/slack-app/commands';
import type { HeldRun, ProjectSnapshot, QuietWindow } from '../../shared/ports';
import { findUnescapedMarkup } from '../../shared/slack-text';

describe('filter parsing', () => {
  it('reads a project with spaces and combined terms', () => {
    expect(parseFilterArgs(['North', 'Wind', 'engines=ChatGPT,Claude', 'alerts>=warning', 'min-change=2.5'])).toEqual({
      ok: true,
      project: 'North Wind',
      filter: { engines: ['ChatGPT', 'Claude'], minAlertLevel: 'warning', minChange: 2.5 },
    });
  });

  it('reads `off`', () => {
    expect(parseFilterArgs(['Northwind', 'off'])).toEqual({ ok: true, project: 'Northwind', filter: null });
  });

  it.each([
    [['Northwind'], /name the project, then what to keep/],
    [['engines=ChatGPT'], /name the project first/],
    [['Northwind', 'engines='], /lists no engine/],
    [['Northwind', 'alerts>=loud'], /takes one of `critical`/],
    [['Northwind', 'min-change=-1'], /number above 0/],
    [['Northwind', 'min-change=abc'], /number above 0/],
    [['Northwind', 'engines=A', 'engines=B'], /given twice/],
    [['Northwind', 'engines=A', 'colour=red'], /is not a filter/],
  ])('refuses %j saying what to fix', (args, problem) => {
    const parsed = parseFilterArgs(args);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toMatch(problem);
  });

  it('is a verb of the command table, bad input shown with its usage', () => {
    expect(parseCommandText('filter Northwind alerts>=error')).toEqual({
      kind: 'filter',
      project: 'Northwind',
      filter: { minAlertLevel: 'error' },
    });
    expect(parseCommandText('filter Northwind alerts>=shouty')).toMatchObject({ kind: 'invalid', verb: 'filter' });
  });

  it('describes a filter for list and the history', () => {
    expect(describeFilter({ engines: ['ChatGPT', 'Claude'], minAlertLevel: 'warning', minChange: 2 })).toBe(
      'engines ChatGPT, Claude · alerts ≥ warning · min-change 2',
    );
  });
});

describe('quiet parsing', () => {
  it('reads a window with and without a zone, and off', () => {
    expect(parseCommandText('quiet 22:00-07:00 europe/berlin')).toEqual({
      kind: 'quiet',
      window: { startMinute: 22 * 60, endMinute: 7 * 60, timeZone: 'Europe/Berlin' },
    });
    expect(parseCommandText('quiet 9:30-12:00')).toEqual({
      kind: 'quiet',
      window: { startMinute: 570, endMinute: 720, timeZone: undefined },
    });
    expect(parseCommandText('quiet off')).toEqual({ kind: 'quiet', window: null });
    // Exactly two sweeps' worth open is enough.
    expect(parseCommandText('quiet 09:00-08:50')).toMatchObject({ kind: 'quiet', window: { startMinute: 540, endMinute: 530 } });
    expect(parseCommandText('quiet 00:05-23:55')).toMatchObject({ kind: 'quiet', window: { startMinute: 5, endMinute: 1435 } });
  });

  it.each([
    ['quiet', /give the quiet window/],
    ['quiet 22-07', /not a window/],
    ['quiet 24:00-07:00', /not a window/],
    ['quiet 07:00-07:00', /same time/],
    ['quiet 22:00-07:00 Mars/Olympus', /not a time zone/],
    ['quiet 22:00-07:00 UTC extra', /at most a time zone/],
    // The catch-up sweep (every 5 minutes) could miss the minute or two left open.
    ['quiet 00:00-23:59', /leave at least 10 minutes a day open for the catch-up/],
    ['quiet 09:00-08:58', /leave at least 10 minutes a day open for the catch-up/],
    ['quiet 09:00-08:51', /leave at least 10 minutes a day open/],
  ])('refuses %s', (line, problem) => {
    const parsed = parseCommandText(line);
    expect(parsed).toMatchObject({ kind: 'invalid', verb: 'quiet' });
    if (parsed.kind === 'invalid') expect(parsed.problem).toMatch(problem);
  });
});

describe('quiet windows', () => {
  const berlin: QuietWindow = { startMinute: 22 * 60, endMinute: 7 * 60, timeZone: 'Europe/Berlin' };
  const at = (iso: string) => Date.parse(iso);

  it('runs across midnight in its own zone', () => {
    // Berlin is UTC+1 in November.
    expect(isQuietAt(berlin, at('2026-11-24T20:59:00Z'))).toBe(false);
    expect(isQuietAt(berlin, at('2026-11-24T21:00:00Z'))).toBe(true);
    expect(isQuietAt(berlin, at('2026-11-25T02:00:00Z'))).toBe(true);
    expect(isQuietAt(berlin, at('2026-11-25T05:59:00Z'))).toBe(true);
    expect(isQuietAt(berlin, at('2026-11-25T06:00:00Z'))).toBe(false);
    expect(quietEndsAt(berlin, at('2026-11-24T23:17:30Z'))).toBe(at('2026-11-25T06:00:00Z'));
  });

  it('a daytime window does not wrap', () => {
    const lunch: QuietWindow = { startMinute: 12 * 60, endMinute: 13 * 60, timeZone: 'UTC' };
    expect(isQuietAt(lunch, at('2026-11-24T12:30:00Z'))).toBe(true);
    expect(isQuietAt(lunch, at('2026-11-24T13:00:00Z'))).toBe(false);
    expect(isQuietAt(lunch, at('2026-11-24T23:00:00Z'))).toBe(false);
  });

  it('follows DST: the same local window is a different UTC span in summer, and a short night ends on local time', () => {
    // Summer: UTC+2, so 07:00 local is 05:00Z.
    expect(isQuietAt(berlin, at('2026-07-01T05:30:00Z'))).toBe(false);
    expect(isQuietAt(berlin, at('2026-07-01T04:59:00Z'))).toBe(true);
    // The night of 28-29 March 2026 (clocks go 02:00 → 03:00): 22:00 local = 21:00Z, 07:00 local = 05:00Z.
    expect(quietEndsAt(berlin, at('2026-03-28T21:00:00Z'))).toBe(at('2026-03-29T05:00:00Z'));
    // Autumn, 24-25 October 2026 (03:00 → 02:00): 07:00 local = 06:00Z.
    expect(quietEndsAt(berlin, at('2026-10-24T21:00:00Z'))).toBe(at('2026-10-25T06:00:00Z'));
  });

  it('a window edge that DST skips starts at the first minute that exists', () => {
    const skipped: QuietWindow = { startMinute: 2 * 60 + 30, endMinute: 4 * 60, timeZone: 'Europe/Berlin' };
    // 2026-03-29 02:30 does not exist in Berlin: 01:59 local (00:59Z) is not quiet, 03:00 local (01:00Z) is.
    expect(isQuietAt(skipped, at('2026-03-29T00:59:00Z'))).toBe(false);
    expect(isQuietAt(skipped, at('2026-03-29T01:00:00Z'))).toBe(true);
  });

  it('reads the wall clock of other zones', () => {
    expect(localMinuteOfDay(at('2026-11-24T12:00:00Z'), 'America/New_York')).toBe(7 * 60);
    expect(localMinuteOfDay(at('2026-11-24T12:00:00Z'), 'Asia/Kolkata')).toBe(17 * 60 + 30);
  });
});

// --- Applying filters ---------------------------------------------------------------------------

function snapshot(overrides: Partial<ProjectSnapshot> = {}): ProjectSnapshot {
  return {
    projectId: 'p1',
    lastCreatedAt: '2026-11-23T10:00:00Z',
    lastRunId: 'r0',
    metrics: { 'Share of voice': 40 },
    gaps: [{ prompt_id: 'g1', prompt_ref: 1, prompt_text: 'best ebike', platforms_losing: ['ChatGPT', 'Gemini'], top_competitor: 'Rival' }],
    engines: { ChatGPT: 40, Gemini: 50 },
    ...overrides,
  };
}

function input(overrides: Partial<DigestInput> = {}): DigestInput {
  return {
    project: { id: 'p1', name: 'Northwind', industry: null },
    run: { eventId: 'e1', runId: 'r1', answers: 2000, createdAt: '2026-11-24T10:00:00Z', status: 'completed' },
    overview: {
      metrics: [{ label: 'Share of voice', value: 40, caption: null }],
      engines: [
        [
          ['engine', 'ChatGPT'],
          ['visibility', 40],
        ],
        [
          ['engine', 'Gemini'],
          ['visibility', 30],
        ],
      ],
      alerts: [
        [
          ['severity', 'info'],
          ['message', 'Crawl finished'],
        ],
      ],
    },
    gaps: [
      {
        prompt_id: 'g1',
        prompt_ref: 1,
        prompt_text: 'best ebike',
        platforms_losing: ['ChatGPT', 'Gemini'],
        top_competitor: 'Rival',
        extra: [],
      },
      { prompt_id: 'g2', prompt_ref: 2, prompt_text: 'cheap ebike', platforms_losing: ['Gemini'], top_competitor: 'Rival', extra: [] },
    ],
    previous: snapshot(),
    reasoning: new Map(),
    ...overrides,
  };
}

/** The gate's verdict from the run's model and the channel's, as the digest builds them (shared/digest/channel-views.ts). */
function nothingLeft(run: DigestInput, filter: ChannelFilter): boolean {
  return filteredToNothing(buildModel(run), buildModel(filterDigestInput(run, filter)), filter);
}

describe('applying a filter', () => {
  it('leaves out other engines, their gaps and alerts below the level', () => {
    const filtered = filterDigestInput(input(), { engines: ['chatgpt'], minAlertLevel: 'warning' });
    expect(filtered.overview.engines.map((row) => row[0]?.[1])).toEqual(['ChatGPT']);
    expect(filtered.gaps.map((g) => [g.prompt_id, g.platforms_losing])).toEqual([['g1', ['ChatGPT']]]);
    expect(filtered.overview.alerts).toEqual([]);
    // The previous gaps are filtered alike: g2 (Gemini only) is not "resolved".
    expect(buildModel(filtered).diff.resolvedGaps).toEqual([]);
  });

  it('without a filter the input is the same object', () => {
    const same = input();
    expect(filterDigestInput(same, undefined)).toBe(same);
  });

  it('min-change keeps a change beyond its noise but below the minimum from being called', () => {
    // Gemini fell 20 points (beyond noise at 1,000 answers); min-change=25 does not call it.
    const model = (minChange?: number) =>
      buildModel({ ...input(), options: minChange === undefined ? {} : { minChange } }).engines.find((e) => e.name === 'Gemini');
    expect(model()?.significant).toBe(true);
    expect(model(25)?.significant).toBe(false);
    expect(model(20)?.significant).toBe(true);
  });

  it('min-change applies to gap news too: 6 gaps worse is not called for min-change=95, nor posted', () => {
    const ids = [1, 2, 3, 4, 5, 6];
    const stored = ids.map((i) => ({
      prompt_id: `w${i}`,
      prompt_ref: i,
      prompt_text: `q${i}`,
      platforms_losing: ['ChatGPT'],
      top_competitor: 'Rival',
    }));
    const spread = ids.map((i) => ({ ...stored[i - 1]!, platforms_losing: ['ChatGPT', 'Gemini'], extra: [] }));
    const worse = input({
      overview: {
        ...input().overview,
        engines: [
          [
            ['engine', 'ChatGPT'],
            ['visibility', 40],
          ],
          [
            ['engine', 'Gemini'],
            ['visibility', 50],
          ],
        ],
        alerts: [],
      },
      gaps: spread,
      previous: snapshot({ gaps: stored }),
    });
    const phrases = (minChange?: number) =>
      buildModel({ ...worse, options: minChange === undefined ? {} : { minChange } }).verdict.worse?.called;
    expect(phrases()).toBe(true);
    expect(phrases(95)).toBe(false);
    expect(nothingLeft(worse, { minChange: 95 })).toBe(true);
    expect(nothingLeft(worse, { minChange: 2 })).toBe(false);
  });

  it('a run whose only news is outside the filter is filtered to nothing; a run with news inside is not', () => {
    const quietChatGpt = input({ overview: { ...input().overview, alerts: [] } });
    // Only Gemini moved (and gap g2 is Gemini's): a ChatGPT-only channel has nothing.
    expect(nothingLeft(quietChatGpt, { engines: ['ChatGPT'] })).toBe(true);
    expect(nothingLeft(quietChatGpt, { engines: ['Gemini'] })).toBe(false);
    // A project-wide alert does not keep an engines-only channel posting; one at the asked level does.
    expect(nothingLeft(input(), { engines: ['ChatGPT'] })).toBe(true);
    expect(nothingLeft(input(), { engines: ['ChatGPT'], minAlertLevel: 'info' })).toBe(false);
    // An alert about another engine is left out with the engine.
    const geminiAlert = input({
      overview: {
        ...input().overview,
        alerts: [
          [
            ['severity', 'critical'],
            ['engine', 'Gemini'],
            ['message', 'fell'],
          ],
        ],
      },
    });
    expect(filterDigestInput(geminiAlert, { engines: ['ChatGPT'] }).overview.alerts).toEqual([]);
    expect(nothingLeft(geminiAlert, { engines: ['ChatGPT'], minAlertLevel: 'warning' })).toBe(true);
    // The info alert is all there is once engines are quiet: alerts>=warning leaves nothing.
    const onlyAlert = input({
      previous: snapshot({ engines: { ChatGPT: 40, Gemini: 30 }, gaps: input().gaps.map(({ extra: _e, ...g }) => g) }),
    });
    expect(nothingLeft(onlyAlert, { minAlertLevel: 'warning' })).toBe(true);
    expect(nothingLeft(onlyAlert, { minAlertLevel: 'info' })).toBe(false);
    // A first digest always posts.
    expect(nothingLeft(input({ previous: null }), { engines: ['Perplexity'] })).toBe(false);
  });
});

describe("each channel's view of the run", () => {
  const target = (channel: string, filter?: ChannelFilter): ChannelTarget => ({
    channel,
    mode: 'full',
    home: false,
    subscription: filter === undefined ? undefined : ({ channel, filter } as Subscription),
  });

  it('reads one model for the run: unfiltered channels share its figures, a filtered channel has its own, built once', () => {
    const views = runViews(input(), (t) => ({ mode: t.mode, aboutShown: t.channel === 'C0SEEN' }));
    const plain = views.modelFor(target('C0PLAIN'));
    expect(plain.metrics).toBe(views.run.metrics);
    expect(views.modelFor(target('C0SEEN')).engines).toBe(views.run.engines);
    expect(views.modelFor(target('C0SEEN')).input.options?.aboutShown).toBe(true);
    expect(plain.input.options?.aboutShown).toBe(false);
    const chatGpt = target('C0GPT', { engines: ['ChatGPT'] });
    expect(views.filtered(chatGpt)).toBe(views.filtered(chatGpt));
    expect(views.modelFor(chatGpt).engines.map((e) => e.name)).toEqual(['ChatGPT']);
    expect(views.run.engines.map((e) => e.name)).toEqual(['ChatGPT', 'Gemini']);
  });

  it('renders the same channel digest as a model built for that channel alone', () => {
    const filter: ChannelFilter = { engines: ['Gemini'], minChange: 2 };
    const views = runViews(input(), (t) => ({ mode: t.mode }));
    const alone = buildModel({ ...filterDigestInput(input(), filter), options: { minChange: 2, mode: 'full' } });
    const { input: viewed, promptUrl: _v, ...figures } = views.modelFor(target('C0GEM', filter));
    const { input: own, promptUrl: _o, ...expected } = alone;
    expect(figures).toEqual(expected);
    expect(viewed.options).toEqual(own.options);
  });
});

describe('the catch-up message', () => {
  it('lists each run (headline + link), oldest first, newest last, safely', () => {
    const message = renderCatchUp(
      [
        {
          eventId: 'b',
          projectId: 'p',
          headline: '🔴 Northwind — Share of voice −5 pts',
          link: 'https://dash.example/p/r2',
          createdAt: '2026-11-25T03:00:00Z',
          heldAtMs: 2,
          catchUpAfterMs: 0,
        },
        {
          eventId: 'a',
          projectId: 'p',
          headline: '⚪ Northwind — no changes beyond noise',
          createdAt: '2026-11-24T23:00:00Z',
          heldAtMs: 1,
          catchUpAfterMs: 0,
        },
        {
          eventId: 'c',
          projectId: 'p',
          headline: 'Acme <!channel> & co',
          link: 'javascript:alert(1)',
          createdAt: '2026-11-25T04:00:00Z',
          heldAtMs: 3,
          catchUpAfterMs: 0,
        },
      ],
      { startMinute: 22 * 60, endMinute: 7 * 60, timeZone: 'Europe/Berlin' },
    );
    const body = (message.blocks[1] as { text: { text: string } }).text.text;
    const lines = body.split('\n');
    expect(lines[0]).toContain('no changes beyond noise');
    expect(lines[1]).toContain('<https://dash.example/p/r2|open>');
    expect(lines[2]).toContain('Acme &lt;!channel&gt; &amp; co');
    expect(lines[2]).not.toContain('javascript');
    expect(findUnescapedMarkup(body, { allowLinks: true })).toBeNull();
    expect((message.blocks[0] as { text: { text: string } }).text.text).toContain(
      '3 digests were held during quiet hours (22:00–07:00 Europe/Berlin)',
    );
  });
});

describe('a channel with more held runs than it lists', () => {
  const held = (eventId: string, projectId: string, hour: number, earlier?: number): HeldRun => ({
    eventId,
    projectId,
    headline: `${projectId} run ${eventId}`,
    createdAt: new Date(Date.UTC(2026, 10, 24, hour)).toISOString(),
    heldAtMs: hour,
    catchUpAfterMs: 0,
    ...(earlier === undefined ? {} : { earlier }),
  });

  it('keeps the newest of each project and counts the older ones on it', () => {
    // 40 runs of a busy project, then one of a quiet one long before them.
    const runs = [held('q', 'quiet', 0), ...Array.from({ length: 40 }, (_, i) => held(`b${i}`, 'busy', i + 1))];
    const { kept, dropped, grown } = foldHeld(runs, 30);
    expect(kept).toHaveLength(30);
    // The quiet project's only run is the oldest of all and still kept.
    expect(kept[0]?.eventId).toBe('q');
    expect(kept.at(-1)).toMatchObject({ eventId: 'b39', earlier: 11 });
    expect(dropped.map((r) => r.eventId)).toEqual(Array.from({ length: 11 }, (_, i) => `b${i}`));
    expect(grown.map((r) => r.eventId)).toEqual(['b39']);
    // What a run already stood for moves with it.
    const again = foldHeld([held('x', 'busy', 1, 5), held('y', 'busy', 2, 2)], 1);
    expect(again.kept).toEqual([{ ...held('y', 'busy', 2), earlier: 8 }]);
  });

  it("keeps every project's newest even past the limit", () => {
    const runs = Array.from({ length: 35 }, (_, i) => held(`p${i}`, `project${i}`, i));
    expect(foldHeld(runs, 30)).toMatchObject({ kept: runs, dropped: [], grown: [] });
  });

  it('says in the catch-up how many of each project were held and not listed', () => {
    const runs = [held('a', 'acme', 1), ...Array.from({ length: 34 }, (_, i) => held(`n${i}`, 'northwind', i + 2)), held('a2', 'acme', 50)];
    const message = renderCatchUp(runs, undefined);
    const title = (message.blocks[0] as { text: { text: string } }).text.text;
    expect(title).toContain('36 digests were held during quiet hours');
    const body = message.blocks
      .slice(1)
      .map((b) => (b as { text: { text: string } }).text.text)
      .join('\n');
    const lines = body.split('\n');
    expect(lines).toHaveLength(30);
    expect(lines.filter((l) => l.includes('northwind run n33'))[0]).toContain('(and 5 earlier of this project, not listed)');
    expect(lines.at(-1)).toContain('acme run a2');
    expect(lines.at(-1)).toContain('(and 1 earlier of this project, not listed)');
    expect(findUnescapedMarkup(body, { allowLinks: true })).toBeNull();
  });
});
