/**
 * A digest's thread replies at Slack's pace, one paced post per invocation (shared/digest/thread.ts):
 * each reply not due at once goes to a follow-up record on the queue. Against real peers: dynalite
 * (claims, paces), the local SQS server (delays, groups), the simulator and the local Slack server.
 */
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoChannelPacer } from '../../shared/adapters/dynamo-channel-pacer';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { SqsMessageVisibility } from '../../shared/adapters/sqs-message-visibility';
import { messageAttributesFor } from '../../shared/adapters/sqs-event-queue';
import { QUEUE_MESSAGE_KINDS, SLACK_APP_DEFAULTS } from '../../shared/contracts';
import type { QueuedEvent, WebhookEvent } from '../../shared/events';
import type { DigestStore } from '../../shared/ports';
import { PACE_REQUEUES_ATTRIBUTE } from '../../shared/worker/sqs';
import { peerDigestDeps, startDigestPeers, steppedTime, type DigestPeers } from '../support/digest-peers';
import { RecordingObserver } from '../support/recording-observer';
import { invokeDigestBatch, receiveRecords } from '../support/sqs-records';
import type { TestWiring } from '../support/worker-wiring';

const TABLE = 'bridge-thread-follow-up';
const TOKEN = 'xoxb-thread';
const CHANNEL = 'C0THREAD';
const T0 = Date.UTC(2026, 10, 21, 9, 0);

let peers: DigestPeers;
let projectId: string;
let observer: RecordingObserver;
/** The digest's clock: it moves only when the digest sleeps for a pace slot. */
let now: number;
let hour = 0;

function deps(overrides: Partial<TestWiring> = {}): TestWiring {
  return {
    ...peerDigestDeps(peers, { slackToken: TOKEN, maxAttempts: 2 }),
    channels: { defaultChannel: CHANNEL, byProject: {} },
    // Slack's own pace (1,100 ms, one post at a time) and the queue follow-ups go to.
    pacer: new DynamoChannelPacer(peers.dynamo.client, { tableName: TABLE }),
    digestQueue: new SqsMessageVisibility(peers.sqs, peers.queueUrl),
    ...steppedTime(
      () => now,
      (ms) => (now += ms),
    ),
    log: observer,
    metrics: observer,
    ...overrides,
  };
}

function runEvent(): WebhookEvent {
  const run = peers.sim.advanceRun(projectId);
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(now - 60_000).toISOString(),
    data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
  };
}

/** As ingest sends it: the tenant's MessageGroupId and attributes. */
async function send(event: WebhookEvent): Promise<void> {
  const message: QueuedEvent = { event, received_at: new Date().toISOString() };
  await peers.sqs.send(
    new SendMessageCommand({
      QueueUrl: peers.queueUrl,
      MessageBody: JSON.stringify(message),
      MessageAttributes: messageAttributesFor(message),
      MessageGroupId: 'stack',
    }),
  );
}

function postCount(): number {
  return peers.slack.calls('chat.postMessage').filter((c) => c.channel === CHANNEL && c.status === 200).length;
}

interface Invocation {
  records: SQSRecord[];
  failed: Set<string>;
  posts: number;
}

/** Whether the queue holds nothing at all: no message visible, delayed (a follow-up) or in flight (one handed back). */
async function queueEmpty(): Promise<boolean> {
  const { Attributes = {} } = await peers.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: peers.queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Object.values(Attributes).every((count) => count === '0');
}

/**
 * Invokes the worker on whatever the queue hands out next (follow-ups come after their delay, a second or
 * two of real time, received by a long poll); undefined once the queue holds nothing.
 */
async function nextInvocation(wiring: () => TestWiring = () => deps()): Promise<Invocation | undefined> {
  for (let tries = 0; tries < 60; tries++) {
    if (await queueEmpty()) return undefined;
    const before = postCount();
    const batch = await invokeDigestBatch(peers.sqs, peers.queueUrl, wiring, observer, 'digest', 1);
    if (batch.records.length > 0) return { ...batch, posts: postCount() - before };
  }
  return undefined;
}

/** Every invocation until the queue is empty. */
async function drain(wiring?: () => TestWiring): Promise<Invocation[]> {
  const invocations: Invocation[] = [];
  for (let invocation = await nextInvocation(wiring); invocation; invocation = await nextInvocation(wiring)) invocations.push(invocation);
  return invocations;
}

function replyNumbers(): number[] {
  return peers.slack
    .messages(CHANNEL)
    .filter((m) => m.thread_ts !== undefined)
    .map((m) => Number((m.metadata as { event_payload?: { reply?: unknown } }).event_payload?.reply));
}

function kindOf(record: SQSRecord): unknown {
  return (JSON.parse(record.body) as { kind?: unknown }).kind;
}

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'thread-follow-up', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  [projectId] = peers.sim.projectIds() as [string];
  // A first digest of the project, unpaced: the next ones have a snapshot to compare with, and their full thread.
  observer = new RecordingObserver();
  now = T0;
  await send(runEvent());
  await drain(() => deps({ pacer: undefined, digestQueue: undefined }));
}, 60_000);

afterAll(async () => {
  await peers.close();
});

beforeEach(async () => {
  observer = new RecordingObserver();
  hour += 1;
  now = T0 + hour * 3_600_000; // a fresh pace for every test
  await peers.reset();
});

describe("a digest's thread from follow-up records", () => {
  it('posts the top level, then each reply from a follow-up of the same tenant: one paced post per invocation, in order, once', async () => {
    await send(runEvent());
    const invocations = await drain();

    const top = peers.slack.messages(CHANNEL).filter((m) => m.thread_ts === undefined);
    expect(top).toHaveLength(1);
    const replies = replyNumbers();
    expect(replies.length).toBeGreaterThan(1);
    expect(replies).toEqual(replies.map((_, i) => i + 1));
    expect(peers.slack.messages(CHANNEL).filter((m) => m.thread_ts !== undefined && m.thread_ts !== top[0]?.ts)).toHaveLength(0);
    // The digest, then one follow-up per reply, each of the stack's group, each posting once.
    expect(invocations.map((i) => i.posts)).toEqual([1, ...replies.map(() => 1)]);
    const followUps = invocations.slice(1).flatMap((i) => i.records);
    expect(followUps.map(kindOf)).toEqual(replies.map(() => QUEUE_MESSAGE_KINDS.digestThread));
    expect(followUps.map((r) => r.attributes.MessageGroupId)).toEqual(replies.map(() => 'stack'));
    expect(invocations.every((i) => i.failed.size === 0)).toBe(true);
    expect(await receiveRecords(peers.sqs, peers.dlqUrl)).toHaveLength(0);

    // A copy of the last follow-up (sent again, not deleted) finds the thread complete.
    const last = followUps.at(-1);
    await peers.sqs.send(new SendMessageCommand({ QueueUrl: peers.queueUrl, MessageBody: last?.body, MessageGroupId: 'stack' }));
    const copy = await drain();
    expect(copy.map((i) => i.posts)).toEqual([0]);
    expect(replyNumbers()).toEqual(replies);
  }, 120_000);

  it('resumes after a failure between a reply and its progress write without posting the reply twice', async () => {
    const store = new DynamoDigestStore(peers.dynamo.client, { tableName: TABLE, leaseMs: 600_000, retentionSeconds: 86400 });
    let progressWrites = 0;
    // The second reply's progress write fails once: the reply is in Slack, the claim does not know it.
    const failing: DigestStore = Object.assign(Object.create(store) as DigestStore, {
      recordChannelProgress: async (...args: Parameters<DigestStore['recordChannelProgress']>) => {
        progressWrites += 1;
        if (progressWrites === 3) throw new Error('the process died after the post');
        return store.recordChannelProgress(...args);
      },
    });
    await send(runEvent());
    const invocations = await drain(() => deps({ store: failing }));

    const replies = replyNumbers();
    expect(replies.length).toBeGreaterThan(2);
    expect(replies).toEqual(replies.map((_, i) => i + 1));
    expect(peers.slack.messages(CHANNEL).filter((m) => m.thread_ts === undefined)).toHaveLength(1);
    // The failed follow-up was handed back and, taken again, found its reply in Slack.
    expect(invocations.filter((i) => i.failed.size > 0)).toHaveLength(1);
    expect(observer.entries.some((e) => e.message === 'found replies an earlier attempt posted; continuing after them')).toBe(true);
    expect(await receiveRecords(peers.sqs, peers.dlqUrl)).toHaveLength(0);
  }, 120_000);

  it("sends a follow-up whose slot is past the pace budget again, in its tenant's group, and it still completes the thread", async () => {
    await send(runEvent());
    const digest = await nextInvocation();
    expect(digest?.posts).toBe(1);
    // Another digest of the channel takes the next slots: the follow-up's first slot is past the budget.
    const pacer = new DynamoChannelPacer(peers.dynamo.client, { tableName: TABLE });
    for (let i = 0; i < 3; i++) await pacer.reserve(CHANNEL, now, Number.POSITIVE_INFINITY);
    const deferred = await nextInvocation();
    expect(deferred?.records.map(kindOf)).toEqual([QUEUE_MESSAGE_KINDS.digestThread]);
    expect(deferred?.posts).toBe(0);
    expect(deferred?.failed.size).toBe(0);

    now += 3 * SLACK_APP_DEFAULTS.paceIntervalMs; // the other posts are out
    const again = await nextInvocation();
    const [copy] = again?.records ?? [];
    expect(copy?.body).toBe(deferred?.records[0]?.body);
    expect(copy?.attributes.MessageGroupId).toBe('stack');
    expect(copy?.messageAttributes[PACE_REQUEUES_ATTRIBUTE]?.stringValue).toBe('1');
    expect(again?.posts).toBe(1);
    await drain();
    const replies = replyNumbers();
    expect(replies).toEqual(replies.map((_, i) => i + 1));
    expect(await receiveRecords(peers.sqs, peers.dlqUrl)).toHaveLength(0);
  }, 120_000);
});
