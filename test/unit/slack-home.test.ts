/** App Home: the Events API envelope's one parse, the Home tab's actions, and the portfolio's order, pages and buttons. */
import { describe, expect, it } from 'vitest';
import type { ProjectSnapshot, QuietSetting, RunMark, Subscription } from '../../shared/ports';
import { parseEventEnvelope, slackBotEvents } from '../../shared/slack-app/events';
import { HOME_ACTION_IDS, parseHomeAction } from '../../shared/slack-app/home/actions';
import { byWorstFirst, portfolioEntry, type PortfolioEntry } from '../../shared/slack-app/home/portfolio';
import { parseHomeRequest } from '../../shared/slack-app/home/publish';
import { HOME_PROJECTS_PER_PAGE, HOME_VIEW_MAX_BLOCKS, renderHomeView } from '../../shared/slack-app/home/view';

/** Monday 2026-11-23 09:00 UTC. */
const NOW = Date.UTC(2026, 10, 23, 9, 0);
const DAY = 24 * 3600_000;
/** A run a day for two weeks: 60 last week, 40 this week (the 6 runs after the week's exclusive start). */
const FALLING = [...Array<number>(8).fill(60), ...Array<number>(6).fill(40)];
const ROUTING = { defaultChannel: 'C0DEFAULT', byProject: { p2: 'C0HOME2' } };

describe('the Events API envelope', () => {
  const envelope = (event: Record<string, unknown>) =>
    JSON.stringify({ type: 'event_callback', team_id: 'T0LOCAL', api_app_id: 'A0LOCAL', event_id: 'Ev01', event });

  it('echoes a url_verification challenge, and refuses one without it', () => {
    expect(parseEventEnvelope(JSON.stringify({ type: 'url_verification', token: 't', challenge: 'abc' }))).toEqual({
      ok: true,
      envelope: { kind: 'url_verification', challenge: 'abc' },
    });
    expect(parseEventEnvelope(JSON.stringify({ type: 'url_verification' }))).toMatchObject({ ok: false });
  });

  it('parses app_home_opened with its workspace, app and event id', () => {
    expect(parseEventEnvelope(envelope({ type: 'app_home_opened', user: 'U1', tab: 'home' }))).toEqual({
      ok: true,
      envelope: {
        kind: 'event',
        eventId: 'Ev01',
        origin: { teamIds: ['T0LOCAL'], enterpriseId: undefined, appId: 'A0LOCAL' },
        event: { type: 'app_home_opened', userId: 'U1', tab: 'home' },
      },
    });
  });

  it('marks an event of another type unhandled, and says what is wrong with a broken one', () => {
    expect(parseEventEnvelope(envelope({ type: 'message', text: 'hi' }))).toMatchObject({
      ok: true,
      envelope: { kind: 'unhandled', type: 'message' },
    });
    expect(parseEventEnvelope(envelope({ type: 'app_home_opened' }))).toEqual({
      ok: false,
      problem: 'app_home_opened event lacks its user',
    });
    expect(parseEventEnvelope('not json')).toMatchObject({ ok: false });
    expect(parseEventEnvelope(JSON.stringify({ type: 'block_actions' }))).toMatchObject({ ok: false });
    expect(parseEventEnvelope(JSON.stringify({ type: 'event_callback', event: { type: 'app_home_opened', user: 'U1' } }))).toMatchObject({
      ok: false,
    });
  });

  it('subscribes the manifest to the handled types only, each under its condition', () => {
    expect(slackBotEvents({ postRecovery: 'history', distributed: false })).toEqual(['app_home_opened']);
    expect(slackBotEvents({ postRecovery: 'ledger', distributed: true })).toEqual([
      'app_home_opened',
      'message_metadata_posted',
      'app_uninstalled',
      'tokens_revoked',
    ]);
  });
});

describe('Home tab actions', () => {
  const payload = (action: Record<string, unknown>, metadata = 'page=2') => ({
    type: 'block_actions',
    user: { id: 'U1' },
    view: { type: 'home', private_metadata: metadata },
    actions: [action],
  });

  it('reads a page button, a channel picked for a project (on the page shown), and the digest link', () => {
    expect(parseHomeAction(payload({ action_id: HOME_ACTION_IDS.next, value: '3' }))).toEqual({ kind: 'page', userId: 'U1', page: 3 });
    expect(
      parseHomeAction(payload({ action_id: HOME_ACTION_IDS.subscribe, block_id: 'home_project:p1', selected_conversation: 'C0OPS' })),
    ).toEqual({ kind: 'subscribe', userId: 'U1', projectId: 'p1', channel: 'C0OPS', page: 2 });
    expect(parseHomeAction(payload({ action_id: HOME_ACTION_IDS.openDigest }))).toEqual({ kind: 'open_digest' });
  });

  it('refuses a page that is not one, a subscribe without its project or channel, an unknown action', () => {
    expect(parseHomeAction(payload({ action_id: HOME_ACTION_IDS.next, value: '-1' }))).toBeTypeOf('string');
    expect(parseHomeAction(payload({ action_id: HOME_ACTION_IDS.subscribe, block_id: 'other', selected_conversation: 'C1' }))).toBeTypeOf(
      'string',
    );
    expect(parseHomeAction(payload({ action_id: HOME_ACTION_IDS.subscribe, block_id: 'home_project:p1' }))).toBeTypeOf('string');
    expect(parseHomeAction(payload({ action_id: 'mute_7d' }))).toBeTypeOf('string');
  });

  it('queues only well-formed publishes', () => {
    expect(parseHomeRequest({ kind: 'slack_home', userId: 'U1', page: 0, receivedAtMs: 5 })).toEqual({
      kind: 'slack_home',
      userId: 'U1',
      page: 0,
      receivedAtMs: 5,
    });
    expect(parseHomeRequest({ kind: 'slack_home', userId: 'U1', page: 0, subscribe: { projectId: 'p1' } })).toBeNull();
    expect(parseHomeRequest({ kind: 'slack_home', userId: '', page: 0 })).toBeNull();
    expect(parseHomeRequest({ kind: 'slack_command', userId: 'U1', page: 0 })).toBeNull();
  });
});

function snapshot(
  projectId: string,
  mark: RunMark | null,
  visibility: readonly number[],
  overrides: Partial<ProjectSnapshot> = {},
): ProjectSnapshot {
  // Two runs a day this week and last, so both weeks pool.
  const history = visibility.map((v, i) => ({
    createdAt: new Date(NOW - (visibility.length - i) * DAY).toISOString(),
    runId: `${projectId}-r${i}`,
    metrics: { 'Visibility score': v },
    answers: 2000,
    rivals: { TrailForge: 3 },
  }));
  const last = history.at(-1);
  return {
    projectId,
    lastCreatedAt: last?.createdAt ?? new Date(NOW).toISOString(),
    lastRunId: last?.runId ?? 'r',
    metrics: { 'Visibility score': visibility.at(-1) ?? 0 },
    gaps: [],
    history,
    ...(mark === null ? {} : { lastVerdict: { runId: last?.runId ?? 'r', mark, headline: `Headline of ${projectId}` } }),
    ...overrides,
  };
}

function subscription(projectId: string, channel: string, extra: Partial<Subscription> = {}): Subscription {
  return {
    projectId,
    projectName: projectId,
    channel,
    mode: 'full',
    createdBy: 'U1',
    createdAtMs: NOW - DAY,
    changedBy: 'U1',
    changedAtMs: NOW - DAY,
    lastChange: 'subscribed',
    ...extra,
  };
}

function entry(
  id: string,
  mark: RunMark | null,
  visibility: readonly number[] = [50, 50, 50, 50],
  subs: Subscription[] = [],
): PortfolioEntry {
  return portfolioEntry(
    { project: { id, name: `Project ${id}` }, snapshot: snapshot(id, mark, visibility), subscriptions: subs },
    ROUTING,
    new Map(),
    NOW,
  );
}

describe('the portfolio', () => {
  it('sorts worst first by the mark its digest gave, then by the week, then by name', () => {
    const entries = [entry('a', '⚪'), entry('b', '🟢'), entry('c', '🔴'), entry('d', null), entry('e', '⚠️'), entry('f', '🟡')];
    expect(entries.sort(byWorstFirst).map((e) => e.latest?.mark ?? 'none')).toEqual(['🔴', '🟡', '⚠️', '🟢', '⚪', 'none']);
    const sameMark = [entry('z', '🟢'), entry('y', '🟢')].sort(byWorstFirst);
    expect(sameMark.map((e) => e.project.id)).toEqual(['y', 'z']);
  });

  it("keeps the digest's stored mark and headline, and the week's change of the headline metric as the weekly verdict pooled it", () => {
    const falling = entry('p1', '🔴', FALLING);
    expect(falling.latest).toEqual({ runId: 'p1-r13', mark: '🔴', headline: 'Headline of p1' });
    expect(falling.headline).toMatchObject({ label: 'Visibility score', to: 40, significant: true });
    expect(falling.topRival).toEqual({ name: 'TrailForge', prompts: 3 });
  });

  it('lists the home channel first, then subscriptions, with muted, broken and quiet ones said', () => {
    const quiet = new Map<string, QuietSetting>([
      ['C0QUIET', { window: { startMinute: 8 * 60, endMinute: 10 * 60, timeZone: 'UTC' }, setBy: 'U1', setAtMs: 0 }],
    ]);
    const subs = [
      subscription('p2', 'C0MUTED', { mutedUntilMs: NOW + DAY }),
      subscription('p2', 'C0BROKEN', { broken: { code: 'not_in_channel', atMs: NOW - DAY } }),
      subscription('p2', 'C0QUIET'),
    ];
    const e = portfolioEntry({ project: { id: 'p2', name: 'P2' }, snapshot: null, subscriptions: subs }, ROUTING, quiet, NOW);
    expect(e.channels).toEqual([
      { channel: 'C0HOME2', home: true, state: 'delivered' },
      { channel: 'C0QUIET', home: false, state: 'quiet' },
      { channel: 'C0MUTED', home: false, state: 'muted' },
      { channel: 'C0BROKEN', home: false, state: 'broken' },
    ]);
    expect(e.week).toBe('never');
  });
});

describe('the Home view', () => {
  const many = Array.from({ length: 45 }, (_, i) => entry(`p${String(i).padStart(2, '0')}`, '🟢'));

  it('pages past Slack’s 100 blocks, each page with the buttons to its neighbours', () => {
    const pages = [0, 1, 2].map((page) => renderHomeView(many, { page, canChange: true, nowMs: NOW }));
    for (const view of pages) expect(view.blocks.length).toBeLessThanOrEqual(HOME_VIEW_MAX_BLOCKS);
    const projectsOn = (view: { blocks: unknown[] }) => JSON.stringify(view.blocks).match(/home_project:/g)?.length ?? 0;
    expect(pages.map(projectsOn)).toEqual([HOME_PROJECTS_PER_PAGE, HOME_PROJECTS_PER_PAGE, 5]);
    const pageButtons = (view: { blocks: unknown[] }) =>
      [...JSON.stringify(view.blocks).matchAll(/"action_id":"(home_page_\w+)","text":\{[^}]*\},"value":"(\d+)"/g)].map(
        (m) => `${m[1]}=${m[2]}`,
      );
    expect(pageButtons(pages[0]!)).toEqual(['home_page_next=1']);
    expect(pageButtons(pages[1]!)).toEqual(['home_page_previous=0', 'home_page_next=2']);
    expect(pageButtons(pages[2]!)).toEqual(['home_page_previous=1']);
    expect(pages.map((v) => v.private_metadata)).toEqual(['page=0', 'page=1', 'page=2']);
    // A page past the last (the portfolio shrank since) shows the last.
    expect(renderHomeView(many, { page: 9, canChange: true, nowMs: NOW }).private_metadata).toBe('page=2');
    // The worst case still fits: a full page with a notice.
    expect(renderHomeView(many, { page: 1, canChange: true, notice: 'x', nowMs: NOW }).blocks.length).toBeLessThanOrEqual(
      HOME_VIEW_MAX_BLOCKS,
    );
  });

  it('shows "Subscribe a channel" only to a user the policy lets change', () => {
    const entries = [entry('p1', '🔴')];
    expect(JSON.stringify(renderHomeView(entries, { page: 0, canChange: true, nowMs: NOW }).blocks)).toContain(HOME_ACTION_IDS.subscribe);
    const readOnly = JSON.stringify(renderHomeView(entries, { page: 0, canChange: false, nowMs: NOW }).blocks);
    expect(readOnly).not.toContain(HOME_ACTION_IDS.subscribe);
    expect(readOnly).not.toContain('conversations_select');
    expect(readOnly).toContain(HOME_ACTION_IDS.openDigest);
  });

  it('sanitizes every service text', () => {
    const hostile = portfolioEntry(
      {
        project: { id: 'px', name: '<!channel> *Evil* <https://x.example|click>' },
        snapshot: snapshot('px', '🔴', [50, 50]),
        subscriptions: [],
      },
      ROUTING,
      new Map(),
      NOW,
    );
    const text = JSON.stringify(renderHomeView([hostile], { page: 0, canChange: false, nowMs: NOW }).blocks);
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<https://x.example');
  });

  it('renders a portfolio as Slack will show it (snapshot)', () => {
    const subs = [subscription('p1', 'C0OPS'), subscription('p1', 'C0MUTED', { mutedUntilMs: NOW + DAY })];
    const entries = [
      entry('p1', '🔴', FALLING, subs),
      portfolioEntry(
        {
          project: { id: 'p2', name: 'Ridgeway' },
          snapshot: snapshot('p2', '⚪', [50, 50, 50, 50], { digestThreads: { C0HOME2: '1700000000.000100' } }),
          subscriptions: [],
        },
        ROUTING,
        new Map(),
        NOW,
      ),
      portfolioEntry({ project: { id: 'p3', name: 'Newcomer' }, snapshot: null, subscriptions: [] }, ROUTING, new Map(), NOW),
    ].sort(byWorstFirst);
    expect(
      renderHomeView(entries, { page: 0, canChange: true, notice: 'Subscribed <#C0OPS> to *Project p1*', nowMs: NOW }),
    ).toMatchSnapshot();
  });
});
