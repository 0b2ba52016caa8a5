/**
 * The digest's fault matrix against real peers (simulator, local Slack server, dynalite, local SQS
 * server). Each fault: the message's fate while the fault lasts (posted / back on the queue /
 * delayed), then, with the fault gone, the proof that the digest is posted exactly once.
 * Ingest-side faults (DynamoDB, SQS, crash between put and send) are in ingest.test.ts.
 * docs/RELIABILITY.md summarises both.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { SqsMessageVisibility } from '../../shared/adapters/sqs-message-visibility';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import { handleTestBatch, type TestWiring } from '../support/worker-wiring';
import { RecordingObserver } from '../support/recording-observer';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import type { WebhookEvent } from '../../shared/events';
import type { LocalDynamo } from '../../local/dynamo';
import type { VisibilitySimulator, FaultSpec } from '../../local/simulator/server';
import type { LocalSlackServer, FaultSpec as SlackFault } from '../../local/slack/server';
import { startDigestPeers, type DigestPeers } from '../support/digest-peers';
import { SECRET_NOT_SET_FIX, SecretNotSet } from '../../shared/errors';
import { enqueue, invokeDigestBatch, receiveRecords } from '../support/sqs-records';

const TOKEN = 'xoxb-fault-matrix';
let dynamo: LocalDynamo;
let sqs: SQSClient;
let queueUrl: string;
let sim: VisibilitySimulator;
let slack: LocalSlackServer;
let projectId: string;
let observer: RecordingObserver;
let minute = 0;

function deps(): TestWiring {
  return {
    // A 5 s budget per invocation: long enough for one short Retry-After, too short for a long one.
    readApi: new ReadApiClient({ baseUrl: sim.url, apiKey: sim.apiKey, timeoutMs: 1000, deadline: () => Date.now() + 5000 }),
    slack: createSlackPoster({
      token: TOKEN,
      slackApiUrl: slack.apiUrl,
      deadline: () => Date.now() + 5000,
      maxAttempts: 3,
      sleep: () => Promise.resolve(),
    }),
    store: new DynamoDigestStore(dynamo.client, { tableName: 'faults', leaseMs: 120_000, retentionSeconds: 86400 }),
    deadLetters: new SqsDeadLetters(sqs, peers.dlqUrl),
    channels: { defaultChannel: '#digests', byProject: {} },
    clock: { now: () => Date.now() },
    log: observer,
    metrics: observer,
  };
}

function runEvent(): WebhookEvent {
  const run = sim.advanceRun(projectId);
  minute += 1;
  return {
    id: randomUUID(),
    type: 'run.completed',
    created_at: new Date(Date.UTC(2026, 10, 21, 0, minute)).toISOString(),
    data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
  };
}

/**
 * One invocation over whatever is visible on the queue (or, with `waitSeconds`, the first message to
 * become visible); like the event source mapping, successes are deleted.
 */
async function invoke(waitSeconds = 0) {
  const { records, failed } = await invokeDigestBatch(sqs, queueUrl, () => deps(), observer, 'digest', waitSeconds);
  return { received: records.length, failed: failed.size };
}

/**
 * Messages still on the queue, hidden or visible again: an attempt that outlasts the 1 s visibility
 * timeout (a loaded machine) has its message visible again by the time this reads, and it is no less kept.
 */
async function messagesOnQueue(): Promise<number> {
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(attributes.Attributes?.['ApproximateNumberOfMessages']) +
    Number(attributes.Attributes?.['ApproximateNumberOfMessagesNotVisible'])
  );
}

const topLevelPosts = () => slack.messages().filter((m) => !m.thread_ts).length;

let peers: DigestPeers;

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: 'faults', queueName: 'faults', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  ({ dynamo, sqs, queueUrl, sim, slack } = peers);
  projectId = sim.projectIds()[0]!;
});

afterAll(() => peers.close());

beforeEach(async () => {
  observer = new RecordingObserver();
  await peers.reset();
});

type Fault = { slack: SlackFault } | { readApi: FaultSpec };

const transient: [string, Fault][] = [
  ['Slack 500', { slack: { kind: 'server_error', method: 'chat.postMessage' } }],
  ['read API 500', { readApi: { route: 'gaps', status: 500, times: Infinity } }],
  ['read API timeout', { readApi: { route: 'visibility', delayMs: 1500, times: Infinity } }],
  ['read API malformed JSON', { readApi: { route: 'gaps', status: 200, body: '{"gaps": [', times: Infinity } }],
];

const needsFix: [string, Fault, RegExp][] = [
  ['Slack channel_not_found', { slack: { kind: 'slack_error', error: 'channel_not_found', method: 'chat.postMessage' } }, /channel/i],
  ['Slack invalid_auth', { slack: { kind: 'slack_error', error: 'invalid_auth', method: 'chat.postMessage' } }, /token/i],
  ['read API 401', { readApi: { route: 'visibility', status: 401, times: Infinity } }, /read-API key/i],
];

function inject(fault: Fault): void {
  if ('slack' in fault) slack.injectFault(fault.slack);
  else sim.injectFault(fault.readApi);
}

function clear(): void {
  slack.clearFaults();
  sim.clearFaults();
}

/** Invokes as the message comes back from its visibility timeout (a long poll each time), until the digest is posted. */
async function retryUntilPosted(): Promise<void> {
  for (let i = 0; i < 20 && topLevelPosts() === 0; i++) await invoke(5);
}

describe('digest fault matrix', () => {
  it.each(transient)('%s: the message goes back to the queue, then posts exactly once', async (_name, fault) => {
    await enqueue(sqs, queueUrl, runEvent());
    inject(fault);
    const during = await invoke();
    expect(during).toEqual({ received: 1, failed: 1 });
    expect(topLevelPosts()).toBe(0);
    expect(await messagesOnQueue()).toBe(1); // not lost: waiting on the queue for its next attempt
    expect(observer.entries.filter((e) => e.message.includes('retry delay'))).toEqual([]); // no wait asked, none set
    clear();
    await retryUntilPosted();
    expect(topLevelPosts()).toBe(1);
    // Deleted after success, not just hidden: nothing left on the queue to post again.
    expect(await messagesOnQueue()).toBe(0);
    expect((await invoke()).received).toBe(0);
    expect(topLevelPosts()).toBe(1);
  });

  it.each(needsFix)(
    '%s: fails with a log line that says how to fix it, then posts once after the fix',
    async (_name, fault, fixPattern) => {
      await enqueue(sqs, queueUrl, runEvent());
      inject(fault);
      expect(await invoke()).toEqual({ received: 1, failed: 1 });
      const line = observer.entries.find((e) => e.level === 'error');
      expect(line?.message).toMatch(fixPattern);
      expect(topLevelPosts()).toBe(0);
      clear();
      await retryUntilPosted();
      expect(topLevelPosts()).toBe(1);
    },
  );

  it('read API 429 within the time left: waited out, posted on the first attempt', async () => {
    await enqueue(sqs, queueUrl, runEvent());
    sim.injectFault({ route: 'visibility', status: 429, retryAfter: 1, times: 1 });
    expect(await invoke()).toEqual({ received: 1, failed: 0 });
    expect(topLevelPosts()).toBe(1);
  });

  it.each([
    ['read API 429', { readApi: { route: 'visibility', status: 429, retryAfter: 600, times: Infinity } }],
    ['Slack 429', { slack: { kind: 'ratelimited', method: 'chat.postMessage', retryAfterSeconds: 600 } }],
  ] as [string, Fault][])('%s beyond the time left: delayed on the queue for the Retry-After wait', async (_name, fault) => {
    await enqueue(sqs, queueUrl, runEvent());
    inject(fault);
    expect(await invoke()).toEqual({ received: 1, failed: 1 });
    // A long poll well past the queue's 1 s visibility timeout: the message is still hidden.
    expect((await invoke(2)).received).toBe(0);
    expect(await messagesOnQueue()).toBe(1);
    expect(topLevelPosts()).toBe(0);
  });

  it('a poison message is quarantined in the DLQ and never blocks the batch', async () => {
    await enqueue(sqs, queueUrl, '{"event":{"id":"x"}}');
    await enqueue(sqs, queueUrl, runEvent());
    expect(await invoke()).toEqual({ received: 2, failed: 0 });
    expect(topLevelPosts()).toBe(1);
    expect(observer.countOf('MessageQuarantined')).toBe(1);
  });

  it('a poison message is handed back (never deleted) when the DLQ cannot be reached', async () => {
    await enqueue(sqs, queueUrl, '{"event":{"id":"y"}}');
    const unreachable = { ...deps(), deadLetters: new SqsDeadLetters(sqs, `${peers.dlqUrl}-missing`) };
    const records = await receiveRecords(sqs, queueUrl);
    const response = await handleTestBatch(records, () => unreachable, new SqsMessageVisibility(sqs, queueUrl), observer);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(records.map((r) => r.messageId));
    expect(observer.countOf('MessageQuarantined')).toBe(0);
    expect(observer.countOf('BatchItemFailed')).toBe(records.length);
  });

  it('secrets that cannot be read: every message goes back, with one log line that says how to fix it', async () => {
    await enqueue(sqs, queueUrl, runEvent());
    await enqueue(sqs, queueUrl, runEvent());
    const records = await receiveRecords(sqs, queueUrl);
    const response = await handleTestBatch(
      records,
      () => Promise.reject(new SecretNotSet('slack-token')),
      new SqsMessageVisibility(sqs, queueUrl),
      observer,
    );
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(records.map((r) => r.messageId).sort());
    const errors = observer.entries.filter((e) => e.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toBe(`digest batch not processed: ${SECRET_NOT_SET_FIX}`);
    expect(errors[0]?.fields).toMatchObject({ errorName: 'SecretNotSet', messages: 2 });
    expect(observer.countOf('BatchItemFailed')).toBe(2);
    expect(topLevelPosts()).toBe(0);
  });

  it('a Retry-After the queue refuses to set: still handed back (the visibility timeout brings it back), with a warning', async () => {
    await enqueue(sqs, queueUrl, runEvent());
    slack.injectFault({ kind: 'ratelimited', method: 'chat.postMessage', retryAfterSeconds: 600 });
    const records = await receiveRecords(sqs, queueUrl);
    const refusing = new SqsMessageVisibility(sqs, `${queueUrl}-missing`);
    const response = await handleTestBatch(records, () => deps(), refusing, observer);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[0]!.messageId }]);
    const warning = observer.entries.find((e) => e.message === 'could not set the retry delay on a failed message');
    expect(warning?.fields).toMatchObject({ messageId: records[0]!.messageId });
  });
});
