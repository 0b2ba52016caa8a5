/**
 * Exactly-once posting without reading channel history (shared/digest/posted-ledger.ts) against real
 * peers: a post to the local Slack server that times out but goes through, then the retry. With the
 * ledger the retry learns the post from Slack's message_metadata_posted event (recorded in dynalite) and
 * never calls conversations.history or replies; with the history look-up (single-workspace default) it reads them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { DynamoPostedLedger } from '../../shared/adapters/dynamo-posted-ledger';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import { onMessageMetadataPosted, postedKeyOf, withPostedLedger } from '../../shared/digest/posted-ledger';
import type { WebhookEvent } from '../../shared/events';
import type { SlackPoster } from '../../shared/ports';
import { STACK_TENANT, tenantOf, type Tenant } from '../../shared/tenancy';
import { sleep } from '../../shared/util';
import type { TestWiring } from '../support/worker-wiring';
import { RecordingObserver } from '../support/recording-observer';
import { startDigestPeers, type DigestPeers } from '../support/digest-peers';
import { enqueue, invokeDigestBatch } from '../support/sqs-records';

const TOKEN = 'xoxb-posted-ledger';
const TABLE = 'posted-ledger';
/** Far beyond the test's timeout: a retry that finishes was settled by the event, not by the wait running out. */
const SETTLE_MS = 600_000;
let peers: DigestPeers;
let observer: RecordingObserver;
let minute = 0;

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'posted-ledger', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
});

afterAll(() => peers.close());

beforeEach(async () => {
  observer = new RecordingObserver();
  await peers.reset();
});

function ledger(tenant: Tenant = STACK_TENANT): DynamoPostedLedger {
  return new DynamoPostedLedger(peers.dynamo.client, { tableName: TABLE, retentionSeconds: 86400, tenant });
}

/** The digest poster: a 2 s request timeout (room for a loaded machine), so a 4 s slow Slack leaves the post's outcome unknown. */
function poster(): SlackPoster {
  return createSlackPoster({ token: TOKEN, slackApiUrl: peers.slack.apiUrl, requestTimeoutMs: 2_000, sleep: () => Promise.resolve() });
}

function deps(slack: SlackPoster): TestWiring {
  return {
    readApi: new ReadApiClient({ baseUrl: peers.sim.url, apiKey: peers.sim.apiKey, timeoutMs: 2000 }),
    slack,
    store: new DynamoDigestStore(peers.dynamo.client, { tableName: TABLE, leaseMs: 120_000, retentionSeconds: 86400 }),
    deadLetters: new SqsDeadLetters(peers.sqs, peers.dlqUrl),
    channels: { defaultChannel: 'C0DIGESTS', byProject: {} },
    clock: { now: () => Date.now() },
    log: observer,
    metrics: observer,
  };
}

/** `wait`: how the retry waits for an unsettled post (default a timer). */
function ledgerPoster(tenant: Tenant = STACK_TENANT, wait: (ms: number) => Promise<void> = sleep): SlackPoster {
  return withPostedLedger(poster(), {
    ledger: ledger(tenant),
    tenant,
    clock: { now: () => Date.now() },
    sleep: wait,
    log: observer,
    options: { settleMs: SETTLE_MS, pollMs: 50 },
  });
}

function runEvent(): WebhookEvent {
  const projectId = peers.sim.projectIds()[0]!;
  const run = peers.sim.advanceRun(projectId);
  minute += 1;
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(Date.UTC(2026, 10, 22, 0, minute)).toISOString(),
    data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
  };
}

const topLevel = () => peers.slack.messages().filter((m) => !m.thread_ts);

/** Invokes as soon as the queue hands the message out again (a long poll past its visibility delay), and it is processed. */
async function retry(slack: SlackPoster): Promise<void> {
  const { records } = await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(slack), observer, 'digest', 10);
  if (records.length === 0) throw new Error('the message never came back for its retry');
}

/** Slack's message_metadata_posted event for a message the local server holds, as the Events API route hands it over. */
async function deliverMetadataEvent(message: { channel: string; ts: string; metadata: unknown }): Promise<void> {
  await onMessageMetadataPosted(
    { appId: peers.slack.appId, channelId: message.channel, messageTs: message.ts, posted: postedKeyOf(message.metadata) },
    { ledgerOf: ledger, appId: peers.slack.appId, log: observer },
  );
}

/** The first attempt: Slack answers after the client gave up, but posts the digest's top-level message. */
async function firstAttemptTimesOut(slack: SlackPoster): Promise<void> {
  await enqueue(peers.sqs, peers.queueUrl, runEvent());
  // Twice the request timeout: the client gives up well before Slack posts, even on a loaded machine.
  peers.slack.injectFault({ kind: 'delay', method: 'chat.postMessage', latencyMs: 4_000, times: 1 });
  const { failed } = await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(slack), observer);
  expect(failed.size).toBe(1);
  for (let i = 0; i < 300 && topLevel().length === 0; i++) await sleep(100);
  expect(topLevel()).toHaveLength(1);
}

describe('posting exactly once without reading history', () => {
  it('learns a timed-out post from its message_metadata_posted event, arriving while the retry waits: one digest, no history read', async () => {
    let waited = false;
    let retryWaits!: () => void;
    const retryWaiting = new Promise<void>((resolve) => (retryWaits = resolve));
    const slack = ledgerPoster(STACK_TENANT, (ms) => {
      waited = true;
      retryWaits();
      return sleep(ms);
    });
    await firstAttemptTimesOut(slack);
    const [posted] = topLevel();
    // The event comes late: once the retry has begun waiting for it.
    const late = retryWaiting.then(() => deliverMetadataEvent(posted!));
    await retry(slack);
    expect(waited).toBe(true);
    await late;
    expect(topLevel()).toHaveLength(1);
    expect(peers.slack.calls('conversations.history')).toEqual([]);
    expect(peers.slack.calls('conversations.replies')).toEqual([]);
  }, 120_000);

  it('records the ts of every post whose answer came back, so a known outcome needs no event', async () => {
    const slack = ledgerPoster();
    const event = runEvent();
    await enqueue(peers.sqs, peers.queueUrl, event);
    await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(slack), observer);
    const [posted] = topLevel();
    const record = await ledger().find(posted!.channel, event.id);
    expect(record?.mainTs).toBe(posted!.ts);
    expect(record?.unknownAtMs).toBeUndefined();
    expect(record?.replies).toBe(peers.slack.messages().filter((m) => m.thread_ts === posted!.ts).length);
  }, 60_000);

  it('settles an unknown outcome by its ts, whichever is recorded first (the event may beat the error)', async () => {
    const ledgerNow = ledger();
    const [first, second] = [randomUUID(), randomUUID()];
    await ledgerNow.recordPosted('C0DIGESTS', first, '1.000001', undefined);
    await ledgerNow.recordUnknown('C0DIGESTS', first, undefined, 5);
    expect(await ledgerNow.find('C0DIGESTS', first)).toEqual({ mainTs: '1.000001', replies: 0, unknownAtMs: undefined });
    await ledgerNow.recordUnknown('C0DIGESTS', second, '1', 7);
    expect((await ledgerNow.find('C0DIGESTS', second))?.unknownAtMs).toBe(7);
    await ledgerNow.recordPosted('C0DIGESTS', second, '2.000001', '1');
    expect(await ledgerNow.find('C0DIGESTS', second)).toEqual({ mainTs: undefined, replies: 1, unknownAtMs: undefined });
  });

  it("ignores another app's message naming a bridge event (it must not stop a digest)", async () => {
    const outcome = await onMessageMetadataPosted(
      {
        appId: 'A0SOMEONEELSE',
        channelId: 'C0DIGESTS',
        messageTs: '1.000001',
        posted: { eventId: 'evt-x', reply: undefined, tenant: STACK_TENANT },
      },
      { ledgerOf: ledger, appId: peers.slack.appId, log: observer },
    );
    expect(outcome).toBe('ignored');
    expect(await ledger().find('C0DIGESTS', 'evt-x')).toBeUndefined();
  });

  it('the history look-up (the single-workspace default) reads the channel for the same recovery', async () => {
    const slack = poster();
    await firstAttemptTimesOut(slack);
    await retry(slack);
    expect(topLevel()).toHaveLength(1);
    expect(peers.slack.calls('conversations.history').length).toBeGreaterThan(0);
  }, 120_000);
});

describe("a connection's posts", () => {
  const acme = tenantOf('acme');
  const eventIdOf = (message: { metadata?: unknown }) =>
    (message.metadata as { event_payload?: { event_id?: string } } | undefined)?.event_payload?.event_id ?? '';
  const storedKeys = async () =>
    ((await peers.dynamo.client.send(new ScanCommand({ TableName: TABLE }))).Items ?? []).map((item) => item['pk']?.S ?? '');

  it("name the connection in their metadata, and are recorded under its key (from the event too), never the stack's", async () => {
    const slack = ledgerPoster(acme);
    const event = runEvent();
    await enqueue(peers.sqs, peers.queueUrl, event);
    await invokeDigestBatch(peers.sqs, peers.queueUrl, () => deps(slack), observer);
    const [posted] = topLevel();
    expect(posted?.metadata).toMatchObject({ event_payload: { event_id: event.id, connection: 'acme' } });
    await deliverMetadataEvent(posted!);
    const keys = await storedKeys();
    expect(keys).toContain(`t#acme#posted#${posted!.channel}#${event.id}`);
    expect(keys).not.toContain(`posted#${posted!.channel}#${event.id}`);
    expect((await ledger(acme).find(posted!.channel, event.id))?.mainTs).toBe(posted!.ts);
    expect(await ledger().find(posted!.channel, event.id)).toBeUndefined();
  }, 60_000);

  it("recover a lost post from the connection's own ledger, never from another tenant's", async () => {
    const slack = ledgerPoster(acme);
    await firstAttemptTimesOut(slack);
    const [posted] = topLevel();
    await deliverMetadataEvent(posted!);
    // Another tenant (or the stack) looking for the same event in the same channel finds nothing of acme's.
    for (const tenant of [tenantOf('other'), STACK_TENANT])
      expect(await ledgerPoster(tenant).findPosted(posted!.channel, eventIdOf(posted!), 0)).toBeUndefined();
    await retry(slack);
    expect(topLevel()).toHaveLength(1);
    expect(peers.slack.calls('conversations.history')).toEqual([]);
  }, 120_000);
});
