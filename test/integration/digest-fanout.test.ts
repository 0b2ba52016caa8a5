/**
 * The digest's fan-out to subscribed channels, its per-channel pace and deferred slash commands,
 * against real peers: dynalite (claims, subscriptions, paces), the local SQS server, the service
 * simulator and the local Slack server; answers to response_url land on a small local HTTP receiver.
 */
import { randomUUID } from 'node:crypto';
import { SLACK_APP_DEFAULTS } from '../../shared/contracts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DynamoChannelPacer } from '../../shared/adapters/dynamo-channel-pacer';
import { ResponseUrlResponder } from '../../shared/adapters/slack-response-url';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import type { SlackPoster } from '../../shared/ports';
import type { TestWiring } from '../support/worker-wiring';
import type { ChannelPacer, PaceDecision } from '../../shared/ports';
import type { SlackReply } from '../../shared/slack-app/ports';
import type { SlotRequest } from '../../shared/ports';
import { QUEUE_MESSAGE_KINDS } from '../../shared/contracts';
import { RecordingObserver } from '../support/recording-observer';
import { peerDigestDeps, startDigestPeers, steppedTime, type DigestPeers } from '../support/digest-peers';
import { VisibilitySimulator } from '../../local/simulator/server';
import { enqueue, invokeDigestBatch, receiveRecords } from '../support/sqs-records';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { PACE_REQUEUES_ATTRIBUTE } from '../../shared/worker/sqs';
import { messageAttributesFor } from '../../shared/adapters/sqs-event-queue';
import { MESSAGE_ATTRIBUTE_EVENT_ID, type QueuedEvent, type WebhookEvent } from '../../shared/events';
import { actionValueCodec } from '../../shared/buttons/value';
import { SlackWorkspace } from '../../shared/adapters/slack-workspace';
import { staticSecret } from '../../shared/secrets';
import { DEFAULT_SLACK_ACCESS_POLICY } from '../../shared/slack-app/policy';

const TABLE = 'bridge-fanout';
const TOKEN = 'xoxb-fanout';
const T0 = Date.UTC(2026, 10, 20, 9, 0);
const ANA = { userId: 'U0ANA' };

let peers: DigestPeers;
let projectA: string;
let projectB: string;
let observer: RecordingObserver;
let subscriptions: DynamoSubscriptionStore;
/** A fixed clock that only moves when the digest sleeps for a pace slot. */
let now: number;
let receiver: ReplyReceiver;

/** The real pacer, with each reserved slot (reservation time + wait) noted per channel. */
class RecordingPacer implements ChannelPacer {
  readonly slots: { channel: string; atMs: number }[] = [];
  constructor(private readonly pacer: ChannelPacer) {}
  get intervalMs(): number {
    return this.pacer.intervalMs;
  }
  async reserve(channel: string, nowMs: number, maxWaitMs: number, request: SlotRequest = {}): Promise<PaceDecision> {
    const decision = await this.pacer.reserve(channel, nowMs, maxWaitMs, request);
    if (decision.status === 'reserved')
      for (let k = 0; k < (request.slots ?? 1); k++) this.slots.push({ channel, atMs: nowMs + decision.waitMs + k * this.intervalMs });
    return decision;
  }
  peek(channel: string, nowMs: number): Promise<number> {
    return this.pacer.peek(channel, nowMs);
  }
}

/** The stage's button signer (the action-signing key). */
const BUTTONS = actionValueCodec(['digest-fanout-action-signing-key-0123456789']);

/** The bot's view of the workspace (a deferred `subscribe` checks it can post), on the local Slack server. */
function slackWorkspace(): SlackWorkspace {
  return new SlackWorkspace({ token: staticSecret(TOKEN), slackApiUrl: peers.slack.apiUrl });
}

function deps(overrides: Partial<TestWiring> = {}): TestWiring {
  return {
    ...peerDigestDeps(peers, { slackToken: TOKEN, maxAttempts: 2 }),
    channels: { defaultChannel: '#digests', byProject: { [projectB]: '#project-b' } },
    subscriptions,
    // A generous burst: these tests are about where digests go; the pace test sets Slack's own.
    pacer: new DynamoChannelPacer(peers.dynamo.client, { tableName: TABLE, params: { intervalMs: 1000, burst: 1000 } }),
    responder: new ResponseUrlResponder({ allowedOrigins: [receiver.origin] }),
    actionValues: () => Promise.resolve(BUTTONS),
    slackApp: { access: DEFAULT_SLACK_ACCESS_POLICY, groups: slackWorkspace(), channels: slackWorkspace() },
    ...steppedTime(
      () => now,
      (ms) => (now += ms),
    ),
    log: observer,
    metrics: observer,
    ...overrides,
  };
}

let minute = 0;
function runEvent(projectId: string, advance = true): WebhookEvent {
  const run = advance ? peers.sim.advanceRun(projectId) : lastRun.get(projectId);
  if (!run) throw new Error('no earlier run of the project');
  lastRun.set(projectId, run);
  minute += 1;
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(Date.UTC(2026, 10, 20, 10, minute)).toISOString(),
    data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
  };
}
const lastRun = new Map<string, { runId: string; answers: number }>();

async function deliver(options: Partial<TestWiring> = {}, ...bodies: (WebhookEvent | string)[]) {
  for (const body of bodies) await enqueue(peers.sqs, peers.queueUrl, body);
  const { records, failed } = await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(options), observer);
  return { records, failed };
}

/** As the commands queue's event source hands them to the function (the peers' one queue stands in for it). */
async function deliverCommand(body: string) {
  await enqueue(peers.sqs, peers.queueUrl, body);
  return invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(), observer, 'commands');
}

function topLevel(channel: string) {
  return peers.slack.messages(channel).filter((m) => !m.thread_ts);
}

function postsTo(channel: string): number {
  return peers.slack.calls().filter((c) => c.method === 'chat.postMessage' && c.channel === channel).length;
}

async function subscribe(projectId: string, channel: string): Promise<void> {
  await subscriptions.subscribe({ projectId, projectName: projectId, channel, actor: ANA, nowMs: now });
}

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'fanout', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  [projectA, projectB] = peers.sim.projectIds() as [string, string];
  subscriptions = new DynamoSubscriptionStore(peers.dynamo.client, TABLE);
  receiver = await startReplyReceiver();
});

afterAll(async () => {
  await receiver.close();
  await peers.close();
});

beforeEach(async () => {
  observer = new RecordingObserver();
  now = T0 + minute * 3_600_000; // a fresh pace for every test's channels
  await peers.reset();
  receiver.replies.length = 0;
  for (const s of await subscriptions.listAll()) await subscriptions.unsubscribe(s.projectId, s.channel);
});

describe('fan-out to subscribed channels', () => {
  it('posts one digest to each of two subscribed channels and to the configured channel, once', async () => {
    await subscribe(projectB, 'C0ALPHA');
    await subscribe(projectB, 'C0BETA');
    const event = runEvent(projectB);
    const first = await deliver({}, event);
    expect(first.failed.size).toBe(0);
    for (const channel of ['C0ALPHA', 'C0BETA', '#project-b']) expect(topLevel(channel)).toHaveLength(1);
    expect(topLevel('#digests')).toHaveLength(0);

    const posts = peers.slack.messages().length;
    expect((await deliver({}, event)).failed.size).toBe(0); // redelivery
    expect(peers.slack.messages().length).toBe(posts);
  });

  it('without subscriptions posts to the configured channel only, as before', async () => {
    expect((await deliver({}, runEvent(projectA))).failed.size).toBe(0);
    expect(topLevel('#digests')).toHaveLength(1);
    expect(peers.slack.messages('#digests')).toHaveLength(peers.slack.messages().length);
  });

  it('retries only the channel whose post failed', async () => {
    await subscribe(projectA, 'C0ALPHA');
    await subscribe(projectA, 'C0BETA');
    peers.slack.injectFault({ kind: 'server_error', method: 'chat.postMessage', channel: 'C0BETA', times: 1 });
    const first = await deliver({}, runEvent(projectA));
    expect(first.failed.size).toBe(1);
    expect(topLevel('C0ALPHA')).toHaveLength(1);
    expect(topLevel('C0BETA')).toHaveLength(0);
    const alphaPosts = postsTo('C0ALPHA');

    // A long poll: the message is received again once the queue's visibility timeout has passed.
    const retry = await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(), observer, 'digest', 10);
    expect(retry.records).toHaveLength(1);
    expect(retry.failed.size).toBe(0);
    expect(postsTo('C0ALPHA')).toBe(alphaPosts);
    expect(topLevel('C0ALPHA')).toHaveLength(1);
    expect(topLevel('C0BETA')).toHaveLength(1);
  });

  it('skips a channel that muted the project and counts it', async () => {
    await subscribe(projectA, 'C0ALPHA');
    await subscribe(projectA, 'C0BETA');
    await subscriptions.change(projectA, 'C0BETA', { kind: 'mute', untilMs: now + 3_600_000, label: '1h' }, ANA, now);
    expect((await deliver({}, runEvent(projectA))).failed.size).toBe(0);
    expect(topLevel('C0ALPHA')).toHaveLength(1);
    expect(postsTo('C0BETA')).toBe(0);
    expect(observer.countOf('DigestMutedSkip')).toBe(1);
  });

  it('keeps posting to the default channel when another channel subscribes and mutes the project (no hijack)', async () => {
    await subscribe(projectA, 'C0HIJACK');
    await subscriptions.change(projectA, 'C0HIJACK', { kind: 'mute', untilMs: now + 52 * 7 * 86_400_000, label: '52w' }, ANA, now);
    expect((await deliver({}, runEvent(projectA))).failed.size).toBe(0);
    expect(postsTo('C0HIJACK')).toBe(0);
    expect(topLevel('#digests')).toHaveLength(1);
    expect(peers.slack.messages('#digests').length).toBeGreaterThan(1); // the digest and its thread, as without the mute
    expect(observer.countOf('DigestPosted')).toBe(1);
  });

  it('counts a run that every channel muted, the home channel itself included, as handled (RunMuted), posting nothing', async () => {
    const hour = { kind: 'mute', untilMs: now + 3_600_000, label: '1h' } as const;
    await subscribe(projectA, 'C0ALPHA');
    await subscriptions.change(projectA, 'C0ALPHA', hour, ANA, now);
    // Only the default channel's own subscription can mute it there.
    await subscribe(projectA, '#digests');
    await subscriptions.change(projectA, '#digests', hour, ANA, now);
    expect((await deliver({}, runEvent(projectA))).failed.size).toBe(0);
    expect(postsTo('C0ALPHA')).toBe(0);
    expect(postsTo('#digests')).toBe(0);
    expect(observer.countOf('RunMuted')).toBe(1);
    expect(observer.countOf('DigestPosted')).toBe(0);
  });

  it("gives a 'changes' channel the compact line on a quiet run, and the full digest elsewhere", async () => {
    // The generated projects always have worsening gaps; this one stands still.
    const steady = await VisibilitySimulator.start({ fixture: STEADY_FIXTURE });
    try {
      const readApi = new ReadApiClient({ baseUrl: steady.url, apiKey: steady.apiKey, sleep: () => Promise.resolve() });
      await subscribe(STEADY, 'C0ALPHA');
      await subscribe(STEADY, 'C0QUIET');
      await subscriptions.change(STEADY, 'C0QUIET', { kind: 'mode', mode: 'changes' }, { userId: 'U0BO' }, now);
      await deliver({ readApi }, steadyRun(1));
      peers.slack.reset();
      expect((await deliver({ readApi }, steadyRun(2))).failed.size).toBe(0); // the same figures again

      const quiet = peers.slack.messages('C0QUIET');
      expect(quiet).toHaveLength(1);
      expect(JSON.stringify(quiet[0]!.blocks)).toContain('no change beyond normal variation ·');
      const full = topLevel('C0ALPHA');
      expect(full).toHaveLength(1);
      expect(JSON.stringify(full[0]!.blocks)).not.toContain('no change beyond normal variation ·');
    } finally {
      await steady.close();
    }
  });

  it('puts Mute 7 days and Only changes buttons for its own channel on each digest, and who changed the settings', async () => {
    await subscribe(projectA, 'C0ALPHA');
    await subscriptions.change(projectA, 'C0ALPHA', { kind: 'mode', mode: 'changes' }, { userId: 'U0BO' }, now);
    await deliver({}, runEvent(projectA)); // the figures moved: the whole digest
    const [main] = topLevel('C0ALPHA');
    const blocks = main!.blocks as { type: string; elements?: { action_id?: string; value?: string; text?: string }[] }[];
    const buttons = blocks.filter((b) => b.type === 'actions').flatMap((b) => b.elements ?? []);
    expect(buttons.map((b) => b.action_id)).toEqual(['mute_7d', 'full_digests']); // already 'changes': "Full digests"
    expect(BUTTONS.decode(buttons[0]!.value)).toMatchObject({ projectId: projectA, channel: 'C0ALPHA' });
    const notes = blocks.filter((b) => b.type === 'context').map((b) => JSON.stringify(b));
    expect(notes.some((n) => n.includes('Set to only changes by <@U0BO>'))).toBe(true);
  });
});

/** The Slack poster, noting the (fake) time of each post to `channel`, in ms after `start`. */
function postTimes(channel: string, start: number): { slack: SlackPoster; postedAt: number[] } {
  const poster = createSlackPoster({ token: TOKEN, slackApiUrl: peers.slack.apiUrl, sleep: () => Promise.resolve(), maxAttempts: 2 });
  const postedAt: number[] = [];
  const slack: SlackPoster = {
    ...poster,
    post: (to, message, options) => {
      if (to === channel) postedAt.push(now - start);
      return poster.post(to, message, options);
    },
  };
  return { slack, postedAt };
}

describe('paced posting', () => {
  /** These tests watch one subscribed channel's pace: no home channel shares the fake clock. */
  const alone = { channels: { defaultChannel: '', byProject: {} } };

  it("reserves one slot per pace interval in a channel for a burst of five runs (Slack's pace with a margin)", async () => {
    await subscribe(projectA, 'C0BURST');
    const start = now;
    const pacer = new RecordingPacer(new DynamoChannelPacer(peers.dynamo.client, { tableName: TABLE }));
    for (let i = 0; i < 5; i++) expect((await deliver({ ...alone, pacer }, runEvent(projectA))).failed.size).toBe(0);

    const slots = pacer.slots.filter((s) => s.channel === 'C0BURST').map((s) => s.atMs - start);
    expect(slots).toHaveLength(postsTo('C0BURST'));
    expect(topLevel('C0BURST')).toHaveLength(5);
    // The burst at once, then exactly one interval apart.
    const { paceIntervalMs, paceBurst } = SLACK_APP_DEFAULTS;
    expect(slots).toEqual(slots.map((_, i) => Math.max(0, i - (paceBurst - 1)) * paceIntervalMs));
  });

  it("answers Slack's 429 by moving the channel's slots past its Retry-After, then posts once, still at the pace", async () => {
    await subscribe(projectA, 'C0LIMIT');
    const start = now;
    const { slack, postedAt } = postTimes('C0LIMIT', start);
    peers.slack.injectFault({ kind: 'ratelimited', method: 'chat.postMessage', channel: 'C0LIMIT', retryAfterSeconds: 3, times: 1 });
    const pacer = new DynamoChannelPacer(peers.dynamo.client, { tableName: TABLE });
    expect((await deliver({ ...alone, pacer, slack }, runEvent(projectA))).failed.size).toBe(0);

    const calls = peers.slack.calls('chat.postMessage').filter((c) => c.channel === 'C0LIMIT');
    expect(calls.map((c) => c.status)).toEqual([429, ...calls.slice(1).map(() => 200)]);
    expect(topLevel('C0LIMIT')).toHaveLength(1);
    // The first try at once; the retry no sooner than Slack's 3 s, and every later post one interval after the one before.
    expect(postedAt[0]).toBe(0);
    expect(postedAt[1]).toBeGreaterThanOrEqual(3000);
    const gaps = postedAt.slice(2).map((at, i) => at - postedAt[i + 1]!);
    expect(gaps.length).toBeGreaterThan(0);
    expect(gaps.every((gap) => gap >= SLACK_APP_DEFAULTS.paceIntervalMs)).toBe(true);
    expect(observer.countOf('SlackRateLimited')).toBe(1);
  });

  it('gives up a slot the process stalled past, instead of sending the post right before the next one', async () => {
    await subscribe(projectA, 'C0STALL');
    const start = now;
    const { slack, postedAt } = postTimes('C0STALL', start);
    const pacer = new DynamoChannelPacer(peers.dynamo.client, { tableName: TABLE });
    await pacer.reserve('C0STALL', now, Number.POSITIVE_INFINITY); // another worker's post: ours waits one interval
    let stalled = false;
    const sleep = (ms: number) => {
      now += ms + (stalled ? 0 : 2_000); // the first wait overruns by 2 s (a frozen container, a GC pause)
      stalled = true;
      return Promise.resolve();
    };
    expect((await deliver({ ...alone, pacer, slack, sleep }, runEvent(projectA))).failed.size).toBe(0);

    expect(postedAt.length).toBeGreaterThan(1);
    const gaps = postedAt.slice(1).map((at, i) => at - postedAt[i]!);
    expect(gaps.every((gap) => gap >= SLACK_APP_DEFAULTS.paceIntervalMs)).toBe(true);
  });

  // Another client's posts ahead in the channel, and the deadline of the invocation that meets them.
  it.each([
    { why: 'past the pace budget', ahead: 3, deadlineMs: Number.POSITIVE_INFINITY },
    { why: 'past the deadline', ahead: 1, deadlineMs: 3_000 },
  ])(
    'sends a record whose slot is $why again with the wait as its delay: back once, posted once, never counted for the DLQ',
    async ({ ahead, deadlineMs }) => {
      await subscribe(projectA, 'C0BUSY');
      const pacer = new DynamoChannelPacer(peers.dynamo.client, { tableName: TABLE });
      for (let i = 0; i < ahead; i++) await pacer.reserve('C0BUSY', now, Number.POSITIVE_INFINITY);
      const event = runEvent(projectA);
      const message: QueuedEvent = { event, received_at: new Date().toISOString() };
      await peers.sqs.send(
        new SendMessageCommand({
          QueueUrl: peers.queueUrl,
          MessageBody: JSON.stringify(message),
          MessageAttributes: messageAttributesFor(message),
          MessageGroupId: 'burst',
        }),
      );
      const start = now;
      const first = await invokeDigestBatch(
        peers.sqs,
        peers.queueUrl,
        () => deps({ ...alone, pacer, deadline: () => start + deadlineMs }),
        observer,
      );
      expect(first.records).toHaveLength(1);
      // Not handed back (that would count a receive towards maxReceiveCount): deleted, and sent again delayed.
      expect(first.failed.size).toBe(0);
      expect(postsTo('C0BUSY')).toBe(0);
      expect(observer.countOf('SlackPostPaced')).toBe(1);
      expect(observer.countOf('DigestFailed')).toBe(0);
      expect(observer.countOf('BatchItemFailed')).toBe(0);
      expect(await receiveRecords(peers.sqs, peers.queueUrl)).toHaveLength(0);

      now += ahead * SLACK_APP_DEFAULTS.paceIntervalMs; // the posts ahead are out
      // A long poll: the copy is received as soon as its delay has passed.
      const again = await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps({ ...alone, pacer }), observer, 'digest', 20);
      expect(again.records).toHaveLength(1);
      const [record] = again.records;
      expect(JSON.parse(record!.body)).toEqual(message);
      // A new message of the same tenant, with its attributes: its receive count starts over.
      expect(record!.attributes.ApproximateReceiveCount).toBe('1');
      expect(record!.attributes.MessageGroupId).toBe('burst');
      expect(record!.messageAttributes[MESSAGE_ATTRIBUTE_EVENT_ID]?.stringValue).toBe(event.id);
      expect(record!.messageAttributes[PACE_REQUEUES_ATTRIBUTE]?.stringValue).toBe('1');
      expect(again.failed.size).toBe(0);
      expect(topLevel('C0BUSY')).toHaveLength(1);
      expect(await receiveRecords(peers.sqs, peers.queueUrl)).toHaveLength(0);
      expect(await receiveRecords(peers.sqs, peers.dlqUrl)).toHaveLength(0);
    },
  );
});

describe('deferred slash commands', () => {
  it('answers `subscribe` via response_url, and the next run is posted in that channel', async () => {
    const projects = await new ReadApiClient({ baseUrl: peers.sim.url, apiKey: peers.sim.apiKey }).listProjects();
    const name = projects.find((p) => p.id === projectA)!.name;
    const command = {
      kind: QUEUE_MESSAGE_KINDS.slackCommand,
      command: { kind: 'subscribe', project: name },
      context: { channel: 'C0NEW', actor: { userId: 'U0CY' }, responseUrl: `${receiver.origin}/commands/1` },
      receivedAtMs: now,
    };
    expect((await deliverCommand(JSON.stringify(command))).failed.size).toBe(0);
    expect(receiver.replies).toHaveLength(1);
    expect(receiver.replies[0]).toMatchObject({ path: '/commands/1', reply: { response_type: 'in_channel' } });
    expect(receiver.replies[0]!.reply.text).toContain('<@U0CY> subscribed this channel');
    expect((await subscriptions.forChannel('C0NEW')).map((s) => s.projectId)).toEqual([projectA]);

    await deliver({}, runEvent(projectA));
    expect(topLevel('C0NEW')).toHaveLength(1);
  });

  it('quarantines a slack_command message without a usable command', async () => {
    const broken = { kind: QUEUE_MESSAGE_KINDS.slackCommand, command: { kind: 'mute' }, context: { channel: 'C0X' } };
    expect((await deliverCommand(JSON.stringify(broken))).failed.size).toBe(0);
    expect(observer.countOf('MessageQuarantined')).toBe(1);
    expect(receiver.replies).toHaveLength(0);
  });

  it('each queue takes only its own kinds: a command on the digest queue and a run on the commands queue are quarantined', async () => {
    const command = {
      kind: QUEUE_MESSAGE_KINDS.slackCommand,
      command: { kind: 'projects' },
      context: { channel: 'C0NEW', actor: { userId: 'U0CY' }, responseUrl: `${receiver.origin}/commands/2` },
      receivedAtMs: now,
    };
    expect((await deliver({}, JSON.stringify(command))).failed.size).toBe(0);
    const onCommands = await deliverCommand(JSON.stringify({ event: runEvent(projectA), received_at: new Date(T0).toISOString() }));
    expect(onCommands.failed.size).toBe(0);
    expect(observer.countOf('MessageQuarantined')).toBe(2);
    expect(receiver.replies).toHaveLength(0);
    expect(topLevel('#digests')).toHaveLength(0);
    const quarantined = (await receiveRecords(peers.sqs, peers.dlqUrl)).map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(quarantined.map((body) => (body['kind'] === 'slack_command' ? 'command' : 'event' in body ? 'event' : 'other')).sort()).toEqual([
      'command',
      'event',
    ]);
    const reasons = observer.entries.filter((e) => e.message.startsWith('message quarantined')).map((e) => e.fields?.['reason']);
    expect(reasons).toEqual([
      'a slack_command message on the digest queue: it belongs on the commands queue',
      'a run.completed message on the commands queue: it belongs on the digest queue',
    ]);
  });
});

const STEADY = 'steady-project';
const STEADY_FIXTURE = {
  seed: 7,
  projects: [
    {
      id: STEADY,
      name: 'Steady Co',
      industry: 'Retail',
      visibility: {
        metrics: [{ label: 'Visibility score', value: 41.2, caption: 'Share of answers' }],
        engines: [{ engine: 'ChatGPT', visibility: 40.1 }],
        alerts: [],
      },
      gaps: [
        {
          prompt_id: 'pr-1',
          prompt_ref: 1,
          prompt_text: 'Best tent?',
          platforms_losing: ['Gemini'],
          top_competitor: 'Rival',
          trend: 'stable',
        },
      ],
    },
  ],
};

function steadyRun(n: number): WebhookEvent {
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(Date.UTC(2026, 11, 1, 10, n)).toISOString(),
    data: { project_id: STEADY, run_id: `steady-${n}`, status: 'completed', answers: 40 },
  };
}

interface ReplyReceiver {
  origin: string;
  replies: { path: string; reply: SlackReply }[];
  close(): Promise<void>;
}

/** Stands in for Slack's hooks host: records what is POSTed to a response_url. */
async function startReplyReceiver(): Promise<ReplyReceiver> {
  const replies: ReplyReceiver['replies'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      replies.push({ path: request.url ?? '', reply: JSON.parse(Buffer.concat(chunks).toString('utf8')) as SlackReply });
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    replies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
