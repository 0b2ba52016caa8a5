/**
 * The `/visibility` command service and the buttons over real peers: the subscription store on
 * dynalite, the simulator's read API as project directory and status source, the local Slack server
 * for user groups and channel membership (through the bridge's adapter), and an HTTP server standing
 * in for Slack's response_url.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { VisibilitySimulator } from '../../local/simulator/server';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { ResponseUrlResponder } from '../../shared/adapters/slack-response-url';
import { SlackWorkspace } from '../../shared/adapters/slack-workspace';
import { answerSlashCommand, parseDeferredSlackCommand, runDeferredCommand } from '../../shared/slack-app/service';
import { handleButtonAction, type ActionDeps } from '../../shared/slack-app/actions';
import { actionValueCodec } from '../../shared/buttons/value';
import { ACTION_IDS } from '../../shared/buttons/ids';
import { encodeActionValue, parseInteractionForm, shareValuesFrom } from '../../shared/slack-app/interactions';
import { renderDigest } from '../../shared/digest/render';
import { DIGEST_BLOCK_IDS } from '../../shared/digest/render/sections/footer';
import { DEFAULT_SLACK_ACCESS_POLICY } from '../../shared/slack-app/policy';
import type { SlashCommandRequest } from '../../shared/slack-app/commands';
import type { DeferredDeps, SlackReply } from '../../shared/slack-app/ports';
import { LocalSlackServer } from '../../local/slack/server';
import { staticSecret } from '../../shared/secrets';
import { RecordingObserver } from '../support/recording-observer';
import { RecordingCommandQueue } from '../support/command-queue';

const API_KEY = 'read-key-for-slack-app-tests';
const NOW = Date.parse('2026-03-01T12:00:00Z');
const TOKEN = 'xoxb-slack-app-service';
const codec = actionValueCodec(['k'.repeat(40)]);
/** The bot is in every channel but these (a channel the bot was never invited to, an archived one). */
const WITHOUT_BOT = 'C0NOBOT';
const ARCHIVED = 'C0ARCHIVED';

let dynamo: LocalDynamo;
let sim: VisibilitySimulator;
let hook: http.Server;
let hookUrl: string;
const responses: SlackReply[] = [];
let deps: DeferredDeps & ActionDeps;
let slack: LocalSlackServer;
let observer: RecordingObserver;
let queue: RecordingCommandQueue;
let channelCounter = 0;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, 'slack-app-service');
  sim = await VisibilitySimulator.start({ apiKey: API_KEY, seed: 7 });
  hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      responses.push(JSON.parse(body) as SlackReply);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  const readApi = new ReadApiClient({ baseUrl: sim.url, apiKey: API_KEY });
  slack = await LocalSlackServer.start({
    tokens: [TOKEN],
    memberChannels: Array.from({ length: 400 }, (_, i) => `C${i + 1}`).concat(ARCHIVED),
    knownChannels: [WITHOUT_BOT],
    archivedChannels: [ARCHIVED],
    userGroups: { S0OPS: ['U1', 'U7'] },
  });
  const workspace = new SlackWorkspace({ token: staticSecret(TOKEN), slackApiUrl: slack.apiUrl });
  observer = new RecordingObserver();
  queue = new RecordingCommandQueue();
  deps = {
    store: new DynamoSubscriptionStore(dynamo.client, 'slack-app-service'),
    clock: { now: () => NOW },
    directory: readApi,
    status: readApi,
    responder: new ResponseUrlResponder({ allowedOrigins: [hookUrl] }),
    access: DEFAULT_SLACK_ACCESS_POLICY,
    groups: workspace,
    channels: workspace,
    shares: shareValuesFrom(() => Promise.resolve(codec)),
    queue,
    metrics: observer,
    log: observer,
  };
});

afterAll(async () => {
  hook.closeAllConnections();
  await new Promise<void>((resolve) => hook.close(() => resolve()));
  await Promise.all([sim.close(), dynamo.close(), slack.close()]);
});

let channel: string;
beforeEach(() => {
  channel = `C${++channelCounter}`;
  responses.length = 0;
  queue.sent.length = 0;
  observer.counts.clear();
});

/** The mrkdwn of a reply's section and context blocks, top to bottom. */
function blockTexts(reply: SlackReply): string[] {
  return ((reply.blocks ?? []) as { type: string; text?: { text: string }; elements?: { text?: unknown }[] }[]).flatMap((b) => {
    if (b.type === 'section' && b.text) return [b.text.text];
    if (b.type === 'context') return (b.elements ?? []).map((e) => String(e.text));
    return [];
  });
}

function request(text: string, user = 'U1', where = channel): SlashCommandRequest {
  return {
    command: '/visibility',
    text,
    channelId: where,
    userId: user,
    userName: 'ana',
    responseUrl: `${hookUrl}/commands/1`,
    triggerId: 't',
    teamId: 'T1',
  };
}

/** Runs a command as the handler and the digest worker will: the ack, then any deferred work through the queue's JSON. */
async function run(text: string, user = 'U1', through: DeferredDeps = deps, where = channel): Promise<SlackReply> {
  const ack = await answerSlashCommand(request(text, user, where), through);
  if (!ack.deferred) return ack.reply;
  expect(ack.reply.response_type).toBe('ephemeral');
  const work = parseDeferredSlackCommand(JSON.parse(JSON.stringify(ack.deferred)));
  expect(work).not.toBeNull();
  await runDeferredCommand(work!, through);
  return responses.at(-1)!;
}

describe('/visibility commands', () => {
  it('subscribes by name through the queue, lists it, and says so in the channel', async () => {
    const ack = await answerSlashCommand(request('subscribe northwind'), deps);
    expect(ack.deferred).toMatchObject({
      kind: 'slack_command',
      command: { kind: 'subscribe', project: 'northwind' },
      context: { channel },
    });
    const subscribed = await run('subscribe northwind');
    expect(subscribed.response_type).toBe('in_channel');
    expect(subscribed.text).toContain('<@U1> subscribed this channel to *Northwind Outdoor*');
    const list = await run('list');
    expect(list.response_type).toBe('ephemeral');
    expect(list.text).toContain('*Northwind Outdoor* — mode `full`, not muted');
    const again = await run('subscribe Northwind Outdoor');
    expect(again).toMatchObject({ response_type: 'ephemeral' });
    expect(again.text).toContain('already subscribed');
  });

  it('answers mute, mode, unmute and unsubscribe inline, naming who changed what', async () => {
    await run('subscribe Voltway');
    const muted = await run('mute volt 2h', 'U7');
    expect(muted.text).toMatch(/^🔕 <@U7> muted \*Voltway\* here for 2h \(until <!date\^1772373600\^/);
    expect((await deps.store.forChannel(channel))[0]).toMatchObject({ mutedUntilMs: NOW + 7_200_000, changedBy: 'U7' });
    expect((await run('mode voltway changes')).text).toContain('set *Voltway* to *changes*');
    expect((await run('list')).text).toContain('mode `changes`, muted until');
    expect((await run('unmute Voltway')).text).toContain('unmuted *Voltway*');
    expect((await run('unsubscribe Voltway')).text).toContain('unsubscribed this channel from *Voltway*');
    expect((await run('list')).text).toContain('no subscriptions');
  });

  it('refuses changes to projects the channel does not subscribe, saying so and never that the project does not exist', async () => {
    // A channel id of 3+ characters, as Slack sends them, so the answer names the channel (#ops in Slack).
    const ops = `C${channelCounter + 200}`;
    const here = (text: string) => run(text, 'U1', deps, ops);
    const reply = await here('mute Ledgerly 1d');
    expect(reply.response_type).toBe('ephemeral');
    expect(reply.text).toBe(
      `<#${ops}> isn't subscribed to anything called "Ledgerly" — \`/visibility subscribe Ledgerly\` first. It has no subscriptions yet.`,
    );
    await here('subscribe Voltway');
    await here('subscribe Brightsmile');
    for (const verb of ['unmute Ledgerly', 'mode Ledgerly full']) {
      const text = (await here(verb)).text;
      expect(text).toContain(`<#${ops}> isn't subscribed to anything called "Ledgerly" — \`/visibility subscribe Ledgerly\` first.`);
      expect(text).toContain('It is subscribed to *Brightsmile Dental* and *Voltway*');
      expect(text).not.toContain('No project matches');
    }
    // Unsubscribing from what isn't here: nothing to subscribe to first.
    const unsubscribe = (await here('unsubscribe Ledgerly')).text;
    expect(unsubscribe).toContain(`No project subscribed in <#${ops}> matches "Ledgerly".`);
    expect(unsubscribe).toContain('It is subscribed to *Brightsmile Dental* and *Voltway*');
    expect(unsubscribe).not.toContain('subscribe Ledgerly');
    // A name close to a subscription here gets a "did you mean"; an unusual name stays out of the code span.
    expect((await here('unmute Voltwey')).text).toContain('Did you mean *Voltway*?');
    expect((await here('unmute Volt`way')).text).toContain('— `/visibility subscribe` "Voltˋway" first.');
  });

  it('lists ambiguity and unknown projects from the service', async () => {
    const none = await run('subscribe Ledgerlyy');
    expect(none.text).toContain('No project matches "Ledgerlyy". Did you mean *Ledgerly*?');
    await run('subscribe Ledgerly');
    await run('subscribe Voltway');
    const ambiguous = await run('unmute l');
    expect(ambiguous.text).toMatch(/matches several projects:\n• \*Ledgerly\*.*\n• \*Voltway\*/);
  });

  it('lists the projects, marking those subscribed here', async () => {
    await run('subscribe Brightsmile');
    const reply = await run('projects');
    expect(reply.text).toContain('Projects the bridge can see (4)');
    // Ids are shown sanitized and outside code spans (a backtick in an id could close the span).
    expect(reply.text).toMatch(/\*Brightsmile Dental\* — id [\w-]+ ✓ subscribed here/);
    expect(reply.text).not.toMatch(/\*Ledgerly\* — id [\w-]+ ✓/);
  });

  it("answers status in the digest's words, ephemerally, with Share in channel", async () => {
    const reply = await run('status Northwind');
    expect(reply.response_type).toBe('ephemeral');
    const texts = blockTexts(reply);
    // The digest's position: open gaps and where, the lead metric, who takes the prompts, the worst gaps, the figures.
    expect(texts[0]).toMatch(/^\*Northwind Outdoor\* — \d+ open gaps? on /);
    expect(texts.join('\n')).toContain('*Who takes your prompts:*');
    expect(texts.join('\n')).toContain('*Worst gaps*');
    expect(texts.join('\n')).not.toMatch(/engine: |visibility: \d/);
    expect(texts.at(-1)).toBe('Asked by <@U1> · <!date^1772366400^{date_short_pretty} {time}|2026-03-01T12:00:00Z>');
    expect(JSON.stringify(reply.blocks?.at(-1))).toContain(ACTION_IDS.shareInChannel);
    // The button's value names this test's channel: the rest is the answer.
    expect({ ...reply, blocks: reply.blocks?.slice(0, -1) }).toMatchSnapshot();
  });

  it('lists the alerts most severe first in status', async () => {
    const alertsSim = await VisibilitySimulator.start({
      apiKey: API_KEY,
      fixture: {
        projects: [
          {
            id: 'p-alerts',
            name: 'Alerting',
            industry: 'Energy',
            visibility: {
              metrics: [{ label: 'Visibility score', value: 41 }],
              engines: [{ engine: 'ChatGPT', visibility: 41 }],
              alerts: [
                { severity: 'info', message: 'New engine tracked' },
                { severity: 'critical', message: 'Lost every prompt on Gemini' },
                { severity: 'warning', message: 'Share of voice falling' },
              ],
            },
            gaps: [],
          },
        ],
      },
    });
    try {
      const readApi = new ReadApiClient({ baseUrl: alertsSim.url, apiKey: API_KEY });
      const text = blockTexts(await run('status Alerting', 'U1', { ...deps, directory: readApi, status: readApi })).join('\n');
      expect(text).toContain('🚨 *Critical* — Lost every prompt on Gemini');
      const order = ['Lost every prompt on Gemini', 'Share of voice falling', 'New engine tracked'].map((t) => text.indexOf(t));
      expect(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
      expect(text).toContain('*Alerts* (3, most severe first)');
    } finally {
      await alertsSim.close();
    }
  });

  it('answers help, typos and bad arguments inline and ephemerally', async () => {
    expect((await run('help')).text).toContain('`/visibility subscribe <project name or id>`');
    expect((await run('subscrbe x')).text).toContain('Did you mean `/visibility subscribe <project name or id>`?');
    expect((await run('mute Voltway soon')).text).toContain('"soon" is not a duration');
  });

  it('says the read API failed, and delivers that answer, when the service is unreachable', async () => {
    const down = { ...deps, directory: new ReadApiClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, timeoutMs: 500 }) };
    // The ack echoes what was typed through the sanitizer.
    expect((await answerSlashCommand(request('status <!channel> *x*'), down)).reply.text).toBe('Looking up "&lt;!channel&gt; ∗x∗"…');
    const ack = await answerSlashCommand(request('status Northwind'), down);
    await runDeferredCommand(ack.deferred!, down);
    expect(responses.at(-1)?.text).toContain('did not answer just now, so nothing was done');
  });

  it('refuses queue bodies that are not a deferred command', () => {
    expect(parseDeferredSlackCommand({ event: { id: 'e1' }, received_at: 'x' })).toBeNull();
    expect(
      parseDeferredSlackCommand({
        kind: 'slack_command',
        command: { kind: 'list' },
        context: { channel: 'C', responseUrl: 'u', actor: { userId: 'U' } },
      }),
    ).toBeNull();
  });
});

describe('digest buttons', () => {
  function click(actionId: string, projectId: string, blocks: unknown[] = [{ type: 'section', text: { type: 'mrkdwn', text: 'digest' } }]) {
    const payload = {
      type: 'block_actions',
      user: { id: 'U5', username: 'bo' },
      channel: { id: channel },
      response_url: `${hookUrl}/actions/1`,
      actions: [{ action_id: actionId, value: encodeActionValue({ projectId, projectName: 'Northwind Outdoor', channel }, codec) }],
      message: { blocks },
    };
    const parsed = parseInteractionForm(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), codec);
    if (!parsed.ok) throw new Error(parsed.problem);
    return parsed.interaction;
  }

  it('"Mute 7 days" on a configuration-routed digest creates a muted subscription and annotates the digest', async () => {
    const result = await handleButtonAction(click('mute_7d', 'p-config'), deps);
    expect(result).toMatchObject({
      status: 'changed',
      subscription: { channel, mutedUntilMs: NOW + 7 * 86_400_000, createdBy: 'U5', lastChange: 'muted for 7d' },
    });
    const reply = responses.at(-1)!;
    expect(reply.replace_original).toBe(true);
    expect(reply.blocks?.at(-1)).toEqual({
      type: 'context',
      block_id: DIGEST_BLOCK_IDS.settingsNote,
      elements: [
        { type: 'mrkdwn', verbatim: true, text: expect.stringContaining('🔕 <@U5> muted *Northwind Outdoor* here for 7d') as string },
      ],
    });
  });

  it('"Only changes" on a subscribed digest changes only the mode', async () => {
    await deps.store.subscribe({
      projectId: 'p-sub',
      projectName: 'Northwind Outdoor',
      channel,
      actor: { userId: 'U1' },
      nowMs: NOW - 1000,
    });
    const result = await handleButtonAction(click('only_changes', 'p-sub', []), deps);
    expect(result).toMatchObject({ status: 'changed', subscription: { mode: 'changes', createdBy: 'U1', changedBy: 'U5' } });
    expect(responses.at(-1)).toMatchObject({ response_type: 'in_channel', text: expect.stringContaining('to *only changes*') as string });
  });

  /** A digest as the renderer posts it to `channel` in `mode`, with its signed settings buttons. */
  function digestBlocks(projectId: string, mode: 'full' | 'changes' = 'full'): unknown[] {
    const target = { channel, projectId, projectName: 'Northwind Outdoor' };
    const { main } = renderDigest({
      project: { id: projectId, name: 'Northwind Outdoor', industry: null },
      run: { eventId: 'evt-1', runId: 'run-1', answers: 400, createdAt: '2026-03-01T11:00:00Z' },
      overview: { metrics: [{ label: 'Visibility score', value: 41, caption: null }], engines: [], alerts: [] },
      gaps: [],
      previous: null,
      reasoning: new Map(),
      options: { channel: { ...target, mode, actionValue: encodeActionValue(target, codec) } },
    });
    return JSON.parse(JSON.stringify(main.blocks)) as unknown[];
  }

  type Element = { action_id?: string; text?: { text: string }; value?: string; confirm?: unknown };
  function buttonsOf(blocks: readonly unknown[] | undefined): Element[] {
    return ((blocks ?? []) as { type: string; elements?: Element[] }[])
      .filter((b) => b.type === 'actions')
      .flatMap((b) => b.elements ?? []);
  }
  function notesOf(blocks: readonly unknown[] | undefined): string[] {
    return ((blocks ?? []) as { block_id?: string; elements?: { text: string }[] }[])
      .filter((b) => b.block_id === DIGEST_BLOCK_IDS.settingsNote)
      .map((b) => b.elements?.[0]?.text ?? '');
  }
  /** Clicks a button of `blocks` (the value it carries) as Slack sends it; returns the re-rendered message. */
  async function clickOn(blocks: unknown[], actionId: string): Promise<SlackReply> {
    const button = buttonsOf(blocks).find((b) => b.action_id === actionId);
    if (!button) throw new Error(`no ${actionId} button`);
    const payload = {
      type: 'block_actions',
      user: { id: 'U5', username: 'bo' },
      channel: { id: channel },
      response_url: `${hookUrl}/actions/1`,
      actions: [{ action_id: actionId, value: button.value }],
      message: { blocks },
    };
    const parsed = parseInteractionForm(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), codec);
    if (!parsed.ok) throw new Error(parsed.problem);
    expect(await handleButtonAction(parsed.interaction, deps)).toMatchObject({ status: 'changed' });
    return responses.at(-1)!;
  }

  it('the buttons show the state and toggle it: Mute 7 days (confirmed) ↔ Unmute, Only changes ↔ Full digests', async () => {
    const digest = digestBlocks('p-toggle');
    const initial = buttonsOf(digest);
    expect(initial.map((b) => b.text?.text)).toEqual(['Mute 7 days', 'Only changes']);
    // A mis-tap would silence the channel for a week: Slack asks first.
    expect(initial[0]!.confirm).toMatchObject({
      title: { type: 'plain_text' },
      confirm: { text: 'Mute 7 days' },
      deny: { text: 'Cancel' },
    });
    expect(initial[1]!.confirm).toBeUndefined();

    const muted = await clickOn(digest, ACTION_IDS.mute7d);
    expect(buttonsOf(muted.blocks).map((b) => [b.action_id, b.text?.text])).toEqual([
      ['unmute', 'Unmute'],
      ['only_changes', 'Only changes'],
    ]);
    expect(buttonsOf(muted.blocks)[0]!.confirm).toBeUndefined();
    expect((await deps.store.forChannel(channel))[0]).toMatchObject({ mutedUntilMs: NOW + 7 * 86_400_000, mode: 'full' });

    const changesOnly = await clickOn(muted.blocks!, ACTION_IDS.onlyChanges);
    expect(buttonsOf(changesOnly.blocks).map((b) => b.text?.text)).toEqual(['Unmute', 'Full digests']);
    const unmuted = await clickOn(changesOnly.blocks!, ACTION_IDS.unmute);
    expect(buttonsOf(unmuted.blocks).map((b) => b.text?.text)).toEqual(['Mute 7 days', 'Full digests']);
    expect((await deps.store.forChannel(channel))[0]).toMatchObject({ mode: 'changes', lastChange: 'unmuted' });
    expect((await deps.store.forChannel(channel))[0]?.mutedUntilMs).toBeUndefined();
    const full = await clickOn(unmuted.blocks!, ACTION_IDS.fullDigests);
    expect(buttonsOf(full.blocks).map((b) => b.text?.text)).toEqual(['Mute 7 days', 'Only changes']);
    expect((await deps.store.forChannel(channel))[0]).toMatchObject({ mode: 'full' });

    // Every re-rendered message keeps the rest of the digest and the buttons' signed value.
    for (const message of [muted, changesOnly, unmuted, full]) {
      const rest = (message.blocks ?? []).filter((b) => !notesOf([b]).length && (b as { type: string }).type !== 'actions');
      expect(rest).toEqual(digest.filter((b) => (b as { type: string }).type !== 'actions'));
      expect(new Set(buttonsOf(message.blocks).map((b) => b.value))).toEqual(new Set([initial[0]!.value]));
    }
  });

  it('the note is one note: a second "Only changes" replaces it, naming the user as a mention', async () => {
    const digest = digestBlocks('p-note');
    const first = await clickOn(digest, ACTION_IDS.onlyChanges);
    // A stale copy of the digest (another member's client) still shows "Only changes".
    const second = await clickOn(
      first.blocks!.map((b) => b),
      ACTION_IDS.fullDigests,
    );
    const third = await clickOn(digestBlocks('p-note').concat(), ACTION_IDS.onlyChanges);
    const again = await clickOn(third.blocks!, ACTION_IDS.fullDigests);
    const twice = await clickOn((await clickOn(again.blocks!, ACTION_IDS.onlyChanges)).blocks!.slice(), ACTION_IDS.fullDigests);
    for (const message of [first, second, third, again, twice]) expect(notesOf(message.blocks)).toHaveLength(1);
    expect(notesOf(first.blocks)[0]).toBe(
      '<@U5> set *Northwind Outdoor* to *only changes* here: a run where nothing moved gets one line. *Full digests* below undoes it.',
    );
    expect(notesOf(second.blocks)[0]).toBe('<@U5> set *Northwind Outdoor* to *full digests* here: every run gets the whole digest.');
    // Just above the buttons, where the digest shows who changed the settings.
    const types = (first.blocks ?? []).map((b) => (b as { type: string }).type);
    expect(types.slice(-2)).toEqual(['context', 'actions']);
    for (const message of [first, second]) expect(JSON.stringify(message.blocks)).not.toMatch(/set by|@U0LOCAL/);
  });

  it('a digest in changes mode shows Full digests, and its mute keeps that mode on a new subscription', async () => {
    const digest = digestBlocks('p-changes-config', 'changes');
    expect(buttonsOf(digest).map((b) => b.text?.text)).toEqual(['Mute 7 days', 'Full digests']);
    await clickOn(digest, ACTION_IDS.mute7d);
    expect((await deps.store.forChannel(channel))[0]).toMatchObject({ projectId: 'p-changes-config', mode: 'changes' });
  });

  it('acknowledges the dashboard link without a change or a response', async () => {
    const before = responses.length;
    expect(await handleButtonAction({ ...click('mute_7d', 'p'), action: { kind: 'open_dashboard' } }, deps)).toEqual({
      status: 'acknowledged',
    });
    expect(responses.length).toBe(before);
  });
});

describe('service names that try to ping, link, hide or overflow (issue 21)', () => {
  const INJECTION = 'Acme` <!channel> <https://evil.example/login|click to re-authenticate> `';
  const HOSTILE = {
    'p-inject': INJECTION,
    'p-bidi': 'Invoice \u202Egnp.exe\u202C \u200B*bold* _it_ ~s~ https://evil.example',
    'p-long': `${'<!here> '.repeat(500)}${'W'.repeat(2000)}`,
  };
  let hostileSim: VisibilitySimulator;
  let hostile: typeof deps;

  beforeAll(async () => {
    const projects = Object.entries(HOSTILE).map(([id, name]) => ({
      id,
      name,
      industry: 'Security',
      visibility: {
        metrics: [{ label: name, value: name, caption: name }],
        engines: [{ engine: name, visibility: 40 }],
        alerts: [{ severity: 'warning', message: name }],
      },
      gaps: [],
    }));
    hostileSim = await VisibilitySimulator.start({ apiKey: API_KEY, fixture: { projects } });
    const readApi = new ReadApiClient({ baseUrl: hostileSim.url, apiKey: API_KEY });
    hostile = { ...deps, directory: readApi, status: readApi };
  });

  afterAll(() => hostileSim.close());

  /** No ping, link, bidi or zero-width character, no name in a code span, within one text object. */
  function expectSafe(answer: SlackReply | undefined): void {
    const blocks = (answer!.blocks ?? []) as { type: string; text?: { text: string }; elements?: { type: string; text: unknown }[] }[];
    const texts = [
      answer!.text,
      ...blocks.flatMap((b) => (b.text ? [b.text.text] : [])),
      ...blocks.flatMap((b) => (b.type === 'actions' ? [] : (b.elements ?? []).map((e) => String(e.text)))),
    ];
    for (const text of texts) {
      expect(text.length).toBeLessThanOrEqual(3000);
      expect(text).not.toMatch(/[\u200B-\u200F\u2060\uFEFF\u202A-\u202E\u2066-\u2069]/);
      const foreign = text.replace(/`\/visibility[a-z <>]*`|`(full|changes|7d)`/g, '').replace(/<@U\d+>|<!date\^\d+\^[^|>]+\|[^>]+>/g, '');
      expect(foreign).not.toMatch(/[<>`]/);
      expect(text).not.toContain('*bold*');
    }
  }

  it.each(Object.keys(HOSTILE))('subscribe, list, projects, status, mute, mode, unmute and both buttons with %s', async (id) => {
    const answers = {
      subscribe: await run(`subscribe ${id}`, 'U1', hostile),
      list: await run('list', 'U1', hostile),
      projects: await run('projects', 'U1', hostile),
      status: await run(`status ${id}`, 'U1', hostile),
      mute: await run(`mute ${id} 2h`, 'U1', hostile),
      mode: await run(`mode ${id} changes`, 'U1', hostile),
      unmute: await run(`unmute ${id}`, 'U1', hostile),
      unsubscribe: await run(`unsubscribe ${id}`, 'U1', hostile),
    };
    for (const answer of Object.values(answers)) expectSafe(answer);
    expect(answers.subscribe.text).toContain('subscribed this channel to');
    expect(answers.list.text).toContain("This channel's subscriptions (1)");
    expect(answers.projects.text).toContain('Projects the bridge can see (3)');
    expect(answers.status).toMatchObject({ response_type: 'ephemeral' });
    expect(JSON.stringify(answers.status.blocks)).toContain('Asked by <@U1>');
    expect(answers.mute.text).toContain('muted');
    expect(answers.mode.text).toContain('to *changes*');
    expect(answers.unmute.text).toContain('unmuted');
    expect(answers.unsubscribe.text).toContain('unsubscribed');
    for (const kind of ['mute_7d', 'unmute', 'only_changes', 'full_digests'] as const) {
      const action = { kind, projectId: id, projectName: HOSTILE[id as keyof typeof HOSTILE], channel };
      const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: 'digest' } }];
      await handleButtonAction({ actor: { userId: 'U5' }, responseUrl: `${hookUrl}/actions/1`, action, messageBlocks: blocks }, hostile);
      expectSafe(responses.at(-1));
      expect(responses.at(-1)?.replace_original).toBe(true);
    }
  });

  it('the disguised link and the ping are shown as text, outside code spans', async () => {
    const reply = await run('subscribe p-inject', 'U1', hostile);
    expect(reply.text).toContain('*Acmeˋ &lt;!channel&gt; &lt;https://evil.example/login|click to re-authenticate&gt; ˋ*');
  });
});

describe('who may do what, where (issue 21)', () => {
  const usersOnly = { changes: { kind: 'users' as const, userIds: ['U1', 'U2'] }, changeChannels: {} };
  const opsGroup = { changes: { kind: 'userGroup' as const, groupId: 'S0OPS' }, changeChannels: {} };

  function clickBy(user: string, actionId: string, projectId: string, where = channel) {
    const payload = {
      type: 'block_actions',
      user: { id: user },
      channel: { id: where },
      response_url: `${hookUrl}/actions/2`,
      actions: [{ action_id: actionId, value: encodeActionValue({ projectId, projectName: 'Voltway', channel: where }, codec) }],
      message: { blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'digest' } }] },
    };
    const parsed = parseInteractionForm(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), codec);
    if (!parsed.ok) throw new Error(parsed.problem);
    return parsed.interaction;
  }

  it('a member outside the allow-list cannot subscribe, mute or click; told who can, nothing done or queued', async () => {
    await run('subscribe Voltway');
    const policed = { ...deps, access: usersOnly };
    const subscribe = await answerSlashCommand(request('subscribe Ledgerly', 'U9'), policed);
    expect(subscribe.deferred).toBeUndefined();
    expect(subscribe.reply).toMatchObject({ response_type: 'ephemeral' });
    expect(subscribe.reply.text).toMatch(/^Only <@U1> and <@U2> can change digest subscriptions/);
    const mute = await run('mute Voltway 1d', 'U9', policed);
    expect(mute.text).toMatch(/^Only <@U1> and <@U2> can/);
    const voltway = (await deps.store.forChannel(channel))[0]!;
    expect(await handleButtonAction(clickBy('U9', ACTION_IDS.mute7d, voltway.projectId), policed)).toEqual({ status: 'refused' });
    expect(responses.at(-1)).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(responses.at(-1)?.text).toMatch(/^Only <@U1> and <@U2> can/);
    expect((await deps.store.forChannel(channel))[0]?.mutedUntilMs).toBeUndefined();
    expect(observer.countOf('SlackCommandRefused')).toBe(3);
    // Reads stay open to everyone; a listed user changes.
    expect((await run('list', 'U9', policed)).text).toContain('*Voltway*');
    expect((await run('mute Voltway 1d', 'U2', policed)).text).toContain('<@U2> muted *Voltway*');
  });

  it('a user group decides through the local Slack (usergroups.users.list), and an unreadable group refuses', async () => {
    await run('subscribe Voltway');
    const policed = { ...deps, access: opsGroup };
    expect((await run('mode Voltway changes', 'U7', policed)).text).toContain('<@U7> set *Voltway* to *changes*');
    const outsider = await run('unsubscribe Voltway', 'U9', policed);
    expect(outsider.text).toMatch(/^Only members of <!subteam\^S0OPS> can change digest subscriptions/);
    const gone = await run('unmute Voltway', 'U7', {
      ...deps,
      access: { changes: { kind: 'userGroup', groupId: 'S0GONE' }, changeChannels: {} },
    });
    expect(gone.text).toContain("Slack didn't tell me its members just now, so nothing was changed");
    expect(observer.entries.some((e) => e.message.includes('user group could not be read'))).toBe(true);
    expect((await deps.store.forChannel(channel)).map((s) => s.mode)).toEqual(['changes']);
  });

  it('a project with changeChannels is changed only there: subscribe in the worker, mute and buttons at once', async () => {
    const projects = await deps.directory.listProjects();
    const voltway = projects.find((p) => p.name === 'Voltway')!;
    const home = channel;
    await run('subscribe Voltway', 'U1', deps, home);
    channel = `C${++channelCounter}`;
    await run('subscribe Voltway');
    const fenced = { ...deps, access: { changes: { kind: 'everyone' as const }, changeChannels: { [voltway.id]: [home] } } };
    const where = `*Voltway*'s subscriptions can be changed only in <#${home}>, so nothing was changed here.`;
    expect((await run('mute Voltway 1d', 'U1', fenced)).text).toBe(where);
    expect(await handleButtonAction(clickBy('U1', ACTION_IDS.onlyChanges, voltway.id), fenced)).toEqual({ status: 'refused' });
    expect(responses.at(-1)?.text).toBe(where);
    const other = `C${++channelCounter}`;
    expect((await run('subscribe Voltway', 'U1', fenced, other)).text).toBe(where);
    expect(await deps.store.forChannel(other)).toEqual([]);
    expect((await run('mute Voltway 1d', 'U1', fenced, home)).text).toContain('muted *Voltway*');
  });

  it('subscribe in a channel without the bot says how to invite it and subscribes nothing; after /invite it works', async () => {
    const missing = await run('subscribe Voltway', 'U1', deps, WITHOUT_BOT);
    expect(missing.response_type).toBe('ephemeral');
    expect(missing.text).toBe(
      `I'm not in <#${WITHOUT_BOT}>, so I can't post *Voltway*'s digests here: type \`/invite\` here and pick <@U0LOCALBOT>, then subscribe again. Nothing was subscribed.`,
    );
    expect(await deps.store.forChannel(WITHOUT_BOT)).toEqual([]);
    const archived = await run('subscribe Voltway', 'U1', deps, ARCHIVED);
    expect(archived.text).toContain(`<#${ARCHIVED}> is archived`);
    slack.inviteBot(WITHOUT_BOT);
    expect((await run('subscribe Voltway', 'U1', deps, WITHOUT_BOT)).text).toContain('subscribed this channel to *Voltway*');
  });

  it('list shows a broken subscription, and subscribing again clears it', async () => {
    await run('subscribe Voltway');
    const [voltway] = await deps.store.forChannel(channel);
    await deps.store.markBroken(voltway!.projectId, channel, 'not_in_channel', NOW - 60_000);
    const list = await run('list');
    expect(list.text).toContain('⚠ not receiving since <!date^1772366340^');
    expect(list.text).toContain('Slack said `not_in_channel` — invite the bot, then subscribe again.');
    expect((await run('subscribe Voltway')).text).toContain('subscribed this channel to *Voltway*');
    expect((await deps.store.forChannel(channel))[0]?.broken).toBeUndefined();
    expect((await run('list')).text).not.toContain('not receiving');
  });

  it('records every change, buttons and unsubscribes included, and list shows them newest first', async () => {
    await run('subscribe Voltway', 'U1');
    await run('mute Voltway 2h', 'U7');
    const [voltway] = await deps.store.forChannel(channel);
    await handleButtonAction(clickBy('U5', ACTION_IDS.onlyChanges, voltway!.projectId), deps);
    await run('unsubscribe Voltway', 'U2');
    const list = await run('list');
    expect(list.text).toContain('This channel has no subscriptions.');
    const recent = list.text.slice(list.text.indexOf('*Recent changes*'));
    expect(recent.split('\n').slice(1)).toEqual([
      `• <!date^${NOW / 1000}^{date_short_pretty} {time}|2026-03-01T12:00:00Z> <@U2> — unsubscribed *Voltway*`,
      `• <!date^${NOW / 1000}^{date_short_pretty} {time}|2026-03-01T12:00:00Z> <@U5> — mode *Voltway* changes (button)`,
      `• <!date^${NOW / 1000}^{date_short_pretty} {time}|2026-03-01T12:00:00Z> <@U7> — muted *Voltway* for 2h`,
      `• <!date^${NOW / 1000}^{date_short_pretty} {time}|2026-03-01T12:00:00Z> <@U1> — subscribed *Voltway*`,
    ]);
  });
});

describe('reads answer ephemerally with a working "Share in channel" (issue 21)', () => {
  function shareClick(reply: SlackReply, where = channel) {
    const actions = (reply.blocks ?? []).find((b) => (b as { type: string }).type === 'actions') as {
      elements: { action_id: string; value: string }[];
    };
    const button = actions.elements[0]!;
    expect(button.action_id).toBe(ACTION_IDS.shareInChannel);
    const payload = {
      type: 'block_actions',
      user: { id: 'U3' },
      channel: { id: where },
      response_url: `${hookUrl}/share/1`,
      actions: [{ action_id: button.action_id, value: button.value }],
      container: { type: 'message', is_ephemeral: true },
    };
    return parseInteractionForm(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), codec);
  }

  it('status: shared through the deferred queue, posted in the channel, the ephemeral answer deleted', async () => {
    const status = await run('status Northwind', 'U3');
    expect(status.response_type).toBe('ephemeral');
    const click = shareClick(status);
    expect(click.ok).toBe(true);
    if (!click.ok) return;
    expect(await handleButtonAction(click.interaction, deps)).toEqual({ status: 'shared' });
    expect(queue.sent).toHaveLength(1);
    const work = parseDeferredSlackCommand(queue.sent[0]);
    expect(work).toMatchObject({ command: { kind: 'status' }, context: { channel }, share: true });
    responses.length = 0;
    await runDeferredCommand(work!, deps);
    expect(responses).toHaveLength(2);
    expect(responses[0]).toMatchObject({ response_type: 'in_channel' });
    expect(responses[0]!.text).toMatch(/^Northwind Outdoor — \d+ open gaps/);
    expect(responses[0]!.text).toContain('Shared by <@U3>');
    expect(blockTexts(responses[0]!)).toContain('Shared by <@U3>');
    expect(JSON.stringify(responses[0]!.blocks)).not.toContain(ACTION_IDS.shareInChannel);
    expect(responses[1]).toMatchObject({ delete_original: true });
  });

  it('list: a channel with nothing to show gets its hint without a Share button', async () => {
    const empty = await run('list', 'U3');
    expect(empty.text).toContain('This channel has no subscriptions.');
    expect(JSON.stringify(empty.blocks ?? [])).not.toContain(ACTION_IDS.shareInChannel);
  });

  it('list: shared at once; projects through the queue; a click in another channel is refused', async () => {
    await run('subscribe Voltway');
    const list = await run('list', 'U3');
    const click = shareClick(list);
    if (!click.ok) throw new Error(click.problem);
    responses.length = 0;
    expect(await handleButtonAction(click.interaction, deps)).toEqual({ status: 'shared' });
    expect(responses[0]).toMatchObject({ response_type: 'in_channel' });
    expect(responses[0]!.text).toContain('*Voltway* — mode `full`');
    expect(responses[1]).toMatchObject({ delete_original: true });

    const projects = await run('projects', 'U3');
    expect(projects.response_type).toBe('ephemeral');
    const shared = shareClick(projects);
    if (!shared.ok) throw new Error(shared.problem);
    await handleButtonAction(shared.interaction, deps);
    expect(parseDeferredSlackCommand(queue.sent.at(-1))).toMatchObject({ command: { kind: 'projects' }, share: true });

    const elsewhere = shareClick(list, 'C0ELSEWHERE');
    expect(elsewhere).toMatchObject({ ok: false, refusal: { reason: 'other_channel' } });
  });

  it('refuses a share button the bridge did not sign, or clicked without a channel', async () => {
    const status = await run('status Northwind', 'U3');
    const forged = JSON.parse(JSON.stringify(status)) as SlackReply;
    const actions = (forged.blocks ?? []).find((b) => (b as { type: string }).type === 'actions') as { elements: { value: string }[] };
    actions.elements[0]!.value = actions.elements[0]!.value.replace('"v":"status"', '"v":"list"');
    expect(shareClick(forged)).toMatchObject({ ok: false, refusal: { reason: 'unsigned' } });
    expect(shareClick(status, '')).toMatchObject({ ok: false, refusal: { reason: 'no_channel' } });
  });

  it('never shares a change, and never shares an error', async () => {
    const body = {
      kind: 'slack_command',
      command: { kind: 'subscribe', project: 'Voltway' },
      context: { channel, responseUrl: 'u', actor: { userId: 'U1' } },
      share: true,
    };
    expect(parseDeferredSlackCommand(body)).toBeNull();
    const missing = {
      kind: 'slack_command',
      command: { kind: 'status', project: 'no-such-project' },
      context: { channel, responseUrl: `${hookUrl}/x`, actor: { userId: 'U1' } },
      share: true,
    };
    await runDeferredCommand(parseDeferredSlackCommand(missing)!, deps);
    expect(responses.at(-1)).toMatchObject({ response_type: 'ephemeral' });
    expect(responses.at(-1)?.text).toContain('No project matches');
  });
});
