/**
 * The digest worker against real protocol peers: the service simulator (read API), the local
 * Slack Web API server, dynalite and the local SQS server.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { SqsMessageVisibility } from '../../shared/adapters/sqs-message-visibility';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import { handleTestBatch, type TestWiring } from '../support/worker-wiring';
import { RecordingObserver } from '../support/recording-observer';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import { SlackUnavailableError } from '../../shared/adapters/slack-errors';
import type { WebhookEvent } from '../../shared/events';
import type { SlackPoster } from '../../shared/ports';
import type { LocalDynamo } from '../../local/dynamo';
import type { VisibilitySimulator } from '../../local/simulator/server';
import type { LocalSlackServer } from '../../local/slack/server';
import { startDigestPeers, type DigestPeers } from '../support/digest-peers';
import { enqueue, invokeDigestBatch, receiveRecords } from '../support/sqs-records';
import { quarantinedDelivery } from '../../shared/quarantine';

const TABLE = 'bridge-digest';
const TOKEN = 'xoxb-test-token';
let dynamo: LocalDynamo;
let sqs: SQSClient;
let queueUrl: string;
let sim: VisibilitySimulator;
let slack: LocalSlackServer;
let projectA: string;
let projectB: string;
let observer: RecordingObserver;

function deps(slackRequestTimeoutMs = 10_000): TestWiring {
  return {
    readApi: new ReadApiClient({ baseUrl: sim.url, apiKey: sim.apiKey, sleep: () => Promise.resolve() }),
    slack: createSlackPoster({
      token: TOKEN,
      slackApiUrl: slack.apiUrl,
      sleep: () => Promise.resolve(),
      maxAttempts: 2,
      requestTimeoutMs: slackRequestTimeoutMs,
    }),
    store: new DynamoDigestStore(dynamo.client, { tableName: TABLE, leaseMs: 120_000, retentionSeconds: 86400 }),
    deadLetters: new SqsDeadLetters(sqs, peers.dlqUrl),
    channels: { defaultChannel: '#digests', byProject: { [projectB]: '#project-b' } },
    clock: { now: () => Date.now() },
    log: observer,
    metrics: observer,
  };
}

let minute = 0;
function runEvent(projectId: string, overrides: Partial<WebhookEvent> = {}): WebhookEvent {
  const run = sim.advanceRun(projectId);
  minute += 1;
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(Date.UTC(2026, 10, 20, 10, minute)).toISOString(),
    data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
    ...overrides,
  };
}

async function deliver(...events: (WebhookEvent | string)[]) {
  for (const event of events) await enqueue(sqs, queueUrl, event);
  const { records, failed } = await invokeDigestBatch(sqs, queueUrl, () => deps(), observer);
  return { records, failed, failedIndexes: records.map((r, i) => (failed.has(r.messageId) ? i : -1)).filter((i) => i >= 0) };
}

function topLevel(channel?: string) {
  return slack.messages(channel).filter((m) => !m.thread_ts);
}

let peers: DigestPeers;

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'digest', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  ({ dynamo, sqs, queueUrl, sim, slack } = peers);
  [projectA, projectB] = sim.projectIds() as [string, string];
});

afterAll(() => peers.close());

beforeEach(async () => {
  observer = new RecordingObserver();
  await peers.reset();
});

describe('digest of run.completed', () => {
  it('posts one top-level digest with its details in the thread, and nothing on redelivery', async () => {
    const event = runEvent(projectA);
    const first = await deliver(event);
    expect(first.failed.size).toBe(0);
    const main = topLevel('#digests');
    expect(main).toHaveLength(1);
    const header = JSON.stringify(main[0]!.blocks);
    const projectName = (await new ReadApiClient({ baseUrl: sim.url, apiKey: sim.apiKey }).listProjects()).find(
      (p) => p.id === projectA,
    )!.name;
    expect(header).toContain(projectName);
    expect((main[0]!.text ?? '').length).toBeGreaterThan(0);
    // The first digest of a project is its baseline: one message, no thread.
    expect(slack.messages('#digests').filter((m) => m.thread_ts === main[0]!.ts)).toHaveLength(0);

    const postsBefore = slack.messages().length;
    const again = await deliver(event); // a redelivery or DLQ replay of the same event id
    expect(again.failed.size).toBe(0);
    expect(slack.messages().length).toBe(postsBefore);
    expect(observer.countOf('EventDuplicate')).toBe(1);
  });

  it('shows changes since the previous digest of the project', async () => {
    await deliver(runEvent(projectA));
    slack.reset();
    await deliver(runEvent(projectA));
    const text = JSON.stringify(slack.messages().map((m) => m.blocks));
    expect(text).toMatch(/ pts\b|within noise|no significant change/);
    const [main] = topLevel('#digests');
    const replies = slack.messages('#digests').filter((m) => m.thread_ts === main!.ts);
    expect(replies.length).toBeGreaterThan(0);
    expect(replies.length).toBeLessThanOrEqual(3);
    expect(JSON.stringify(replies.map((r) => r.blocks))).toMatch(/·/); // reasoning lines: impact · category · detail
    expect(text).not.toMatch(/NaN|undefined/);
  });

  it('skips a run older than the newest digested one as superseded', async () => {
    const older = runEvent(projectA);
    const newer = runEvent(projectA);
    await deliver(newer);
    const posts = slack.messages().length;
    const late = await deliver(older);
    expect(late.failed.size).toBe(0);
    expect(slack.messages().length).toBe(posts);
    expect(observer.countOf('EventSuperseded')).toBe(1);
  });

  it('posts one digest for several runs of one project in one batch', async () => {
    const older = runEvent(projectA);
    const newer = runEvent(projectA);
    const result = await deliver(newer, older);
    expect(result.failed.size).toBe(0);
    const main = topLevel('#digests');
    expect(main).toHaveLength(1);
    // The footer names the run by the start of its id.
    expect(JSON.stringify(main[0]!.blocks)).toContain(`Run ${String(newer.data['run_id']).slice(0, 8)}…`);
  });

  it('posts one digest for two runs of one project with the same created_at', async () => {
    const first = runEvent(projectA);
    const second = runEvent(projectA, { created_at: first.created_at });
    const result = await deliver(first, second);
    expect(result.failed.size).toBe(0);
    expect(topLevel('#digests')).toHaveLength(1);
    expect(observer.countOf('EventSuperseded')).toBe(1);
  });

  it('routes a project to its own channel', async () => {
    await deliver(runEvent(projectB));
    expect(topLevel('#project-b')).toHaveLength(1);
    expect(topLevel('#digests')).toHaveLength(0);
  });

  it('reads projects, visibility and gaps concurrently', async () => {
    sim.setLatency(100);
    sim.clearRequests();
    try {
      await deliver(runEvent(projectA));
    } finally {
      sim.setLatency(0);
    }
    expect(sim.peakConcurrency()).toBeGreaterThanOrEqual(3);
  });
});

describe('draft.ready', () => {
  it('posts a short notice naming the project, asset and version', async () => {
    const event: WebhookEvent = {
      id: randomUUID(),
      type: 'draft.ready',
      created_at: '2026-11-20T12:00:00Z',
      data: { project_id: projectA, asset_id: 'asset-42', version: 3 },
    };
    const result = await deliver(event);
    expect(result.failed.size).toBe(0);
    const [notice] = slack.messages('#digests');
    const text = `${notice!.text} ${JSON.stringify(notice!.blocks)}`;
    expect(text).toContain('asset-42');
    expect(text).toContain('3');
  });
});

describe('failures', () => {
  it('quarantines a poison message in the DLQ with its reason, without failing its neighbours', async () => {
    const result = await deliver('{"not":"an event"}', runEvent(projectA), 'not json at all');
    expect(result.failed.size).toBe(0);
    expect(topLevel()).toHaveLength(1);
    expect(observer.countOf('MessageQuarantined')).toBe(2);
    const kept = await receiveAll(peers.dlqUrl);
    expect(kept.map((m) => m.body).sort()).toEqual(['not json at all', '{"not":"an event"}']);
    for (const message of kept) expect(message.reason).toMatch(/\S/);
  });

  it('digests a quarantined delivery replayed after it became processable, and sends one still unprocessable back with its reason', async () => {
    const event = runEvent(projectA);
    const signedAt = Math.floor(Date.parse(event.created_at) / 1000) + 1;
    const envelope = (raw: string, bodyId: string) =>
      JSON.stringify(
        quarantinedDelivery({
          raw: Buffer.from(raw),
          reason: 'an older version could not read it',
          receivedAt: event.created_at,
          signedAt,
          bodyId,
        }),
      );
    const result = await deliver(envelope(JSON.stringify(event), event.id), envelope('{"id":"e-9","type":"run.completed"}', 'e-9'));
    expect(result.failed.size).toBe(0);
    expect(topLevel()).toHaveLength(1);
    const kept = await receiveAll(peers.dlqUrl);
    expect(kept).toHaveLength(1);
    expect(kept[0]!.reason).toMatch(/still not processable/);
  });

  it('fails only the message whose channel is wrong, with a log line that says how to fix it', async () => {
    slack.injectFault({ kind: 'slack_error', error: 'channel_not_found', channel: 'project-b' });
    const result = await deliver(runEvent(projectB), runEvent(projectA));
    expect(result.failedIndexes).toEqual([0]);
    expect(topLevel('#digests')).toHaveLength(1);
    const line = observer.entries.find((e) => e.level === 'error' && e.message.includes('needs a fix'));
    expect(line?.message).toMatch(/channel/i);
  });

  it('gives a rate-limited message back to the queue for the Retry-After wait', async () => {
    sim.injectFault({ route: 'visibility', status: 429, retryAfter: 120, times: Infinity });
    const slowDeps = (): TestWiring => ({
      ...deps(),
      readApi: new ReadApiClient({ baseUrl: sim.url, apiKey: sim.apiKey, deadline: () => Date.now() + 5_000 }),
    });
    await enqueue(sqs, queueUrl, runEvent(projectA));
    const records = await receiveRecords(sqs, queueUrl);
    const response = await handleTestBatch(records, () => slowDeps(), new SqsMessageVisibility(sqs, queueUrl), observer);
    expect(response.batchItemFailures).toHaveLength(1);
    // The queue's own visibility timeout is 1 s; the message stays hidden for the 120 s asked for.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await receiveRecords(sqs, queueUrl)).toHaveLength(0);
    expect(topLevel()).toHaveLength(0);
  });

  it('continues a digest whose thread was cut short, without posting the top level again', async () => {
    const event = runEvent(projectA);
    // The top-level post goes through; then Slack fails on its first reply (a quiet run has one).
    const failing = await (async () => {
      const d = deps();
      d.slack = secondPostFails(d.slack, new SlackUnavailableError('injected outage', { reason: 'server_error', attempts: 1 }));
      await enqueue(sqs, queueUrl, event);
      const records = await receiveRecords(sqs, queueUrl);
      return handleTestBatch(records, () => d, new SqsMessageVisibility(sqs, queueUrl), observer);
    })();
    expect(failing.batchItemFailures).toHaveLength(1);
    expect(topLevel()).toHaveLength(1);
    const mainTs = topLevel()[0]!.ts;
    const repliesBefore = slack.messages().filter((m) => m.thread_ts === mainTs).length;
    expect(repliesBefore).toBe(0);

    await new Promise((resolve) => setTimeout(resolve, 1100)); // visibility timeout of the failed message
    const retry = await deliver();
    expect(retry.records).toHaveLength(1);
    expect(retry.failed.size).toBe(0);
    expect(topLevel()).toHaveLength(1);
    const replies = slack.messages().filter((m) => m.thread_ts === mainTs);
    expect(replies.length).toBeGreaterThan(repliesBefore);
    // No reply posted twice.
    expect(new Set(replies.map((r) => JSON.stringify(r.blocks))).size).toBe(replies.length);
  });
});

/** `slack` whose second post fails with `error`: a digest's top level goes through, its first reply does not. */
function secondPostFails(slack: SlackPoster, error: Error): SlackPoster {
  let posts = 0;
  return {
    findPosted: (...args) => slack.findPosted(...args),
    countReplies: (...args) => slack.countReplies(...args),
    post: async (channel, message, options) => {
      posts += 1;
      if (posts === 2) throw error;
      return slack.post(channel, message, options);
    },
  };
}

describe('posts whose outcome was unknown', () => {
  it('does not post the top level twice when Slack stored it but the answer timed out', async () => {
    const event = runEvent(projectA);
    // Slack answers the first post after 1.5 s; the poster gives up after 0.5 s, but the post is stored.
    slack.injectFault({ kind: 'delay', method: 'chat.postMessage', latencyMs: 1500, times: 1 });
    await enqueue(sqs, queueUrl, event);
    const first = await handleTestBatch(
      await receiveRecords(sqs, queueUrl),
      () => deps(500),
      new SqsMessageVisibility(sqs, queueUrl),
      observer,
    );
    expect(first.batchItemFailures).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1600)); // the stored post lands; the message becomes visible
    expect(topLevel()).toHaveLength(1);

    const retry = await deliver();
    expect(retry.failed.size).toBe(0);
    expect(topLevel()).toHaveLength(1); // found by its metadata, not posted again
    const mainTs = topLevel()[0]!.ts;
    const replies = slack.messages().filter((m) => m.thread_ts === mainTs);
    expect(replies.length).toBeGreaterThan(0);
    expect(new Set(replies.map((r) => JSON.stringify(r.blocks))).size).toBe(replies.length);
  });

  it('finishes the thread of a run whose top level was posted, even when a newer run shares its batch', async () => {
    const older = runEvent(projectA);
    const d = deps();
    d.slack = secondPostFails(
      d.slack,
      new SlackUnavailableError('injected outage', { reason: 'ratelimited', retryAfterSeconds: 1, attempts: 1 }),
    );
    await enqueue(sqs, queueUrl, older);
    const cut = await handleTestBatch(await receiveRecords(sqs, queueUrl), () => d, new SqsMessageVisibility(sqs, queueUrl), observer);
    expect(cut.batchItemFailures).toHaveLength(1);
    const olderTs = topLevel()[0]!.ts;
    expect(slack.messages().filter((m) => m.thread_ts === olderTs)).toHaveLength(0);

    const newer = runEvent(projectA);
    await enqueue(sqs, queueUrl, newer);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the older message's retry delay
    const both = await deliver();
    expect(both.records).toHaveLength(2);
    expect(both.failed.size).toBe(0);
    expect(topLevel()).toHaveLength(2); // the older run's top level (from before) and the newer run's
    expect(slack.messages().filter((m) => m.thread_ts === olderTs).length).toBeGreaterThan(0);
  });
});

/** Every message of a queue with its `reason` attribute (empty when absent). */
async function receiveAll(url: string): Promise<{ body: string; reason: string }[]> {
  const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }));
  return (out.Messages ?? []).map((m) => ({ body: m.Body ?? '', reason: m.MessageAttributes?.['reason']?.StringValue ?? '' }));
}
