/**
 * The posting claim's mutual exclusion: while one invocation holds a live lease on an event, no other
 * may take it over. Checked at the store (DynamoDigestStore on dynalite, fixed clock) and where it
 * matters: two invocations of one event with Slack's history look-up refused, where nothing else
 * stops a second top-level post.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import type { RecordOutcome } from '../../shared/worker/batch';
import { processTestBatch, type TestWiring } from '../support/worker-wiring';
import { RecordingObserver } from '../support/recording-observer';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import type { QueuedEvent, WebhookEvent } from '../../shared/events';
import { startDigestPeers, type DigestPeers } from '../support/digest-peers';
import { waitUntil } from '../support/wait-until';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { TABLE as KEYS, channelPostKey } from '../../shared/contracts';

const TABLE = 'bridge-claims';
const TOKEN = 'xoxb-claims';
const LEASE_MS = 120_000;
/** A fixed instant: the lease arithmetic below must not depend on the wall clock. */
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);

let peers: DigestPeers;

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'claims', visibilityTimeoutSeconds: 30, slackToken: TOKEN });
});

afterAll(() => peers.close());

beforeEach(() => peers.reset());

function store(): DynamoDigestStore {
  return new DynamoDigestStore(peers.dynamo.client, { tableName: TABLE, leaseMs: LEASE_MS, retentionSeconds: 86400 });
}

describe('DynamoDigestStore.claim', () => {
  it("answers busy, with the rest of the lease as the wait, while another holder's lease is live", async () => {
    const eventId = randomUUID();
    const first = await store().claim(eventId, T0);
    expect(first).toMatchObject({ status: 'claimed', attempt: 1 });
    expect(await store().claim(eventId, T0 + 1_000)).toEqual({ status: 'busy', retryAfterSeconds: 119 });
    expect(await store().claim(eventId, T0 + LEASE_MS)).toEqual({ status: 'busy', retryAfterSeconds: 1 });
  });

  it('lets a new holder take over once the lease has ended, keeping the recorded progress', async () => {
    const eventId = randomUUID();
    const first = await store().claim(eventId, T0);
    if (first.status !== 'claimed') throw new Error(`expected a claim, got ${first.status}`);
    await store().recordProgress(eventId, first.token, { channel: 'C1', mainTs: '1.000100', repliesPosted: 2 });
    const second = await store().claim(eventId, T0 + LEASE_MS + 1);
    expect(second).toMatchObject({
      status: 'claimed',
      attempt: 2,
      firstClaimedMs: T0,
      progress: { channel: 'C1', mainTs: '1.000100', repliesPosted: 2 },
    });
    if (second.status !== 'claimed') return;
    expect(second.token).not.toBe(first.token);
    // The overtaken holder can no longer write.
    await expect(store().recordProgress(eventId, first.token, { repliesPosted: 3 })).rejects.toThrow();
  });

  it('lets a new holder in at once after a release, and answers done after finish', async () => {
    const eventId = randomUUID();
    const first = await store().claim(eventId, T0);
    if (first.status !== 'claimed') throw new Error(`expected a claim, got ${first.status}`);
    await store().release(eventId, first.token);
    const second = await store().claim(eventId, T0 + 1_000);
    if (second.status !== 'claimed') throw new Error(`expected a claim after release, got ${second.status}`);
    await store().finish(eventId, second.token, 'posted');
    expect(await store().claim(eventId, T0 + 2 * LEASE_MS)).toEqual({ status: 'done', outcome: 'posted' });
  });
});

describe('DynamoDigestStore records', () => {
  async function item(key: string) {
    const result = await peers.dynamo.client.send(
      new GetItemCommand({ TableName: TABLE, Key: { [KEYS.partitionKey]: { S: key } }, ConsistentRead: true }),
    );
    return result.Item ?? {};
  }

  it('expires a claim after the retention (TTL), counted from the first claim', async () => {
    const eventId = randomUUID();
    await store().claim(eventId, T0);
    expect((await item(`${KEYS.prefixes.digest}${eventId}`))[KEYS.ttlAttribute]?.N).toBe(String(Math.floor(T0 / 1000) + 86400));
  });

  it("keeps a channel's progress across a release, and the failure that released it, cut to 500 characters", async () => {
    const eventId = randomUUID();
    const first = await store().claimChannel(eventId, 'C1', T0);
    if (first.status !== 'claimed') throw new Error(`expected a claim, got ${first.status}`);
    await store().recordChannelProgress(eventId, 'C1', first.token, { channel: 'C1', mainTs: '1.000200', repliesPosted: 1 });
    await store().releaseChannel(eventId, 'C1', first.token, `SlackUnavailableError: ${'x'.repeat(600)}`);
    const second = await store().claimChannel(eventId, 'C1', T0 + 1_000);
    expect(second).toMatchObject({ status: 'claimed', attempt: 2, progress: { channel: 'C1', mainTs: '1.000200', repliesPosted: 1 } });
    const failure = (await item(channelPostKey('C1', eventId)))[KEYS.lastFailureAttribute]?.S;
    expect(failure).toHaveLength(500);
    expect(failure?.startsWith('SlackUnavailableError: x')).toBe(true);
  });

  it('answers done with the outcome and top-level ts of a finished channel', async () => {
    const eventId = randomUUID();
    const claim = await store().claimChannel(eventId, 'C2', T0);
    if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
    await store().recordChannelProgress(eventId, 'C2', claim.token, { channel: 'C2', mainTs: '1.000300', repliesPosted: 0 });
    await store().finishChannel(eventId, 'C2', claim.token);
    expect(await store().claimChannel(eventId, 'C2', T0 + 1)).toEqual({ status: 'done', outcome: 'posted', mainTs: '1.000300' });
  });

  it('throws a store failure instead of reading it as "not the newest run" or "a newer snapshot won"', async () => {
    const missing = new DynamoDigestStore(peers.dynamo.client, { tableName: 'no-such-table', leaseMs: LEASE_MS, retentionSeconds: 86400 });
    await expect(missing.markNewestRun('p1', T0, randomUUID())).rejects.toThrow(/resource not found/i);
    const snapshot = { projectId: 'p1', lastCreatedAt: new Date(T0).toISOString() } as unknown as Parameters<
      DynamoDigestStore['putSnapshot']
    >[0];
    await expect(missing.putSnapshot(snapshot)).rejects.toThrow(/resource not found/i);
  });
});

describe('two invocations of one event, with the Slack history look-up refused', () => {
  function deps(observer: RecordingObserver): TestWiring {
    return {
      readApi: new ReadApiClient({ baseUrl: peers.sim.url, apiKey: peers.sim.apiKey, sleep: () => Promise.resolve() }),
      slack: createSlackPoster({
        token: TOKEN,
        slackApiUrl: peers.slack.apiUrl,
        sleep: () => Promise.resolve(),
        maxAttempts: 1,
        requestTimeoutMs: 30_000,
      }),
      store: store(),
      deadLetters: new SqsDeadLetters(peers.sqs, peers.dlqUrl),
      channels: { defaultChannel: '#digests', byProject: {} },
      clock: { now: () => Date.now() },
      log: observer,
      metrics: observer,
    };
  }

  function recordOf(event: WebhookEvent): { messageId: string; body: string } {
    const queued: QueuedEvent = { event, received_at: event.created_at };
    return { messageId: randomUUID(), body: JSON.stringify(queued) };
  }

  /** A run of the project at `projectIndex`: tests that compare runs' ages use a project of their own. */
  function runEvent(projectIndex = 0): WebhookEvent {
    const projectId = peers.sim.projectIds()[projectIndex]!;
    const run = peers.sim.advanceRun(projectId);
    return {
      id: randomUUID(),
      type: 'run.completed',
      created_at: new Date().toISOString(),
      data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
    };
  }

  function topLevelFor(eventId: string) {
    return peers.slack.messages().filter((m) => !m.thread_ts && JSON.stringify(m.metadata).includes(eventId));
  }

  it('posts once: the second invocation finds the claim busy and is retried after the lease', async () => {
    const event = runEvent();
    // Without channels:history the reconciliation cannot see an earlier post: only the claim prevents a second one.
    peers.slack.injectFault({ method: 'conversations.history', kind: 'slack_error', error: 'missing_scope' });
    // The first invocation's top-level post is held, so the second arrives while the first holds the claim.
    peers.slack.injectFault({ method: 'chat.postMessage', kind: 'delay', latencyMs: 3_000, times: 1 });
    const first = processTestBatch([recordOf(event)], deps(new RecordingObserver()));
    await waitUntil('the first invocation to post', () => peers.slack.calls('chat.postMessage').length > 0);

    const observer = new RecordingObserver();
    const [second] = await processTestBatch([recordOf(event)], deps(observer));
    const [firstOutcome] = await first;

    expect(firstOutcome).toMatchObject({ ok: true, result: 'posted' });
    // Busy is a failure to retry (not a success to delete): the holder may yet fail and need it.
    expect(second).toMatchObject<Partial<RecordOutcome>>({ ok: false });
    expect(second?.ok === false && second.retryAfterSeconds).toBeGreaterThan(60);
    expect(observer.countOf('EventDuplicate')).toBe(0);
    expect(topLevelFor(event.id)).toHaveLength(1);
  });

  it('posts once when the two invocations start together', async () => {
    const event = runEvent();
    peers.slack.injectFault({ method: 'conversations.history', kind: 'slack_error', error: 'missing_scope' });
    const outcomes = (
      await Promise.all([
        processTestBatch([recordOf(event)], deps(new RecordingObserver())),
        processTestBatch([recordOf(event)], deps(new RecordingObserver())),
      ])
    ).flat();

    expect(topLevelFor(event.id)).toHaveLength(1);
    expect(outcomes.filter((o) => o.ok && o.result === 'posted')).toHaveLength(1);
  });

  it('digests only the newest run of a project in a batch, whatever their order, and answers the older superseded', async () => {
    const older = runEvent(1);
    const newer = { ...runEvent(1), created_at: new Date(Date.parse(older.created_at) + 60_000).toISOString() };
    const records = [recordOf(older), recordOf(newer)];
    const outcomes = await processTestBatch(records, deps(new RecordingObserver()));
    expect(outcomes.map((o) => (o.ok ? o.result : 'failed'))).toEqual(['superseded', 'posted']);
    expect(topLevelFor(older.id)).toHaveLength(0);
    expect(topLevelFor(newer.id)).toHaveLength(1);
    // Delivered again: both are settled (the older finished as skipped), nothing more is posted.
    const again = await processTestBatch([recordOf(newer), recordOf(older)], deps(new RecordingObserver()));
    expect(again.map((o) => (o.ok ? o.result : 'failed'))).toEqual(['duplicate', 'duplicate']);
    expect(topLevelFor(newer.id)).toHaveLength(1);
  });

  it('fails a run (to retry) when the newest-run mark cannot be written, instead of skipping it as superseded', async () => {
    const event = runEvent(2);
    const observer = new RecordingObserver();
    const base = deps(observer);
    const failingStore = Object.assign(Object.create(Object.getPrototypeOf(base.store) as object) as typeof base.store, base.store, {
      markNewestRun: () => Promise.reject(new Error('ProvisionedThroughputExceededException')),
    });
    const [outcome] = await processTestBatch([recordOf(event)], { ...base, store: failingStore });
    expect(outcome).toMatchObject({ ok: false });
    expect(topLevelFor(event.id)).toHaveLength(0);
    // The retry, with the store healthy, posts it.
    const retryObserver = new RecordingObserver();
    const retry = await processTestBatch([recordOf(event)], deps(retryObserver));
    expect(retry[0], JSON.stringify(retryObserver.entries)).toMatchObject({ ok: true, result: 'posted' });
  });
});
