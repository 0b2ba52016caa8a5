/**
 * The `/visibility` command service and the digest buttons over real peers: the subscription store
 * on dynalite, the simulator's read API as project directory and status source, and an HTTP server
 * standing in for Slack's response_url.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { VisibilitySimulator } from '../../local/simulator/server';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { ResponseUrlResponder } from '../../shared/adapters/slack-response-url';
import { answerSlashCommand, parseDeferredSlackCommand, runDeferredCommand } from '../../shared/slack-app/service';
import { handleButtonAction } from '../../shared/slack-app/actions';
import { encodeActionValue, parseInteractionForm } from '../../shared/slack-app/interactions';
import type { SlashCommandRequest } from '../../shared/slack-app/commands';
import type { DeferredDeps, SlackReply } from '../../shared/slack-app/ports';

const API_KEY = 'read-key-for-slack-app-tests';
const NOW = Date.parse('2026-03-01T12:00:00Z');

let dynamo: LocalDynamo;
let sim: VisibilitySimulator;
let hook: http.Server;
let hookUrl: string;
const responses: SlackReply[] = [];
let deps: DeferredDeps;
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
  deps = {
    store: new DynamoSubscriptionStore(dynamo.client, 'slack-app-service'),
    clock: { now: () => NOW },
    directory: readApi,
    status: readApi,
    responder: new ResponseUrlResponder({ allowedOrigins: [hookUrl] }),
  };
});

afterAll(async () => {
  hook.closeAllConnections();
  await new Promise<void>((resolve) => hook.close(() => resolve()));
  await Promise.all([sim.close(), dynamo.close()]);
});

let channel: string;
beforeEach(() => {
  channel = `C${++channelCounter}`;
  responses.length = 0;
});

function request(text: string, user = 'U1'): SlashCommandRequest {
  return {
    command: '/visibility',
    text,
    channelId: channel,
    userId: user,
    userName: 'ana',
    responseUrl: `${hookUrl}/commands/1`,
    triggerId: 't',
    teamId: 'T1',
  };
}

/** Runs a command as the handler and the digest worker will: the ack, then any deferred work through the queue's JSON. */
async function run(text: string, user = 'U1', through: DeferredDeps = deps): Promise<SlackReply> {
  const ack = await answerSlashCommand(request(text, user), through);
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

  it('refuses changes to projects the channel does not subscribe, saying what to do', async () => {
    const reply = await run('mute Ledgerly 1d');
    expect(reply.response_type).toBe('ephemeral');
    expect(reply.text).toContain("This channel isn't subscribed to it: `/visibility list`");
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

  it('answers status with the current figures', async () => {
    const reply = await run('status Northwind');
    expect(reply.response_type).toBe('in_channel');
    expect(reply.text).toContain('*Northwind Outdoor* — current figures (asked by <@U1>)');
    expect(reply.text.split('\n').length).toBeGreaterThan(1);
  });

  it('answers help, typos and bad arguments inline and ephemerally', async () => {
    expect((await run('help')).text).toContain('`/visibility subscribe <project name or id>`');
    expect((await run('subscrbe x')).text).toContain('Did you mean `/visibility subscribe <project name or id>`?');
    expect((await run('mute Voltway soon')).text).toContain('"soon" is not a duration');
  });

  it('says the read API failed, and delivers that answer, when the service is unreachable', async () => {
    const down = { ...deps, directory: new ReadApiClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, timeoutMs: 500 }) };
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
      actions: [{ action_id: actionId, value: encodeActionValue({ projectId, projectName: 'Northwind Outdoor', channel }) }],
      message: { blocks },
    };
    const parsed = parseInteractionForm(new URLSearchParams({ payload: JSON.stringify(payload) }).toString());
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
      elements: [{ type: 'mrkdwn', text: expect.stringContaining('🔕 <@U5> muted *Northwind Outdoor* here for 7d') as string }],
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
    expect(responses.at(-1)).toMatchObject({ response_type: 'in_channel', text: expect.stringContaining('to *changes*') as string });
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
  let hostile: DeferredDeps;

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
    const texts = [answer!.text, ...((answer!.blocks ?? []) as { elements?: { text: string }[] }[]).flatMap((b) => b.elements ?? [])];
    for (const item of texts) {
      const text = typeof item === 'string' ? item : item.text;
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
    expect(answers.status.text).toContain('current figures');
    expect(answers.mute.text).toContain('muted');
    expect(answers.mode.text).toContain('to *changes*');
    expect(answers.unmute.text).toContain('unmuted');
    expect(answers.unsubscribe.text).toContain('unsubscribed');
    for (const kind of ['mute_7d', 'only_changes'] as const) {
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
