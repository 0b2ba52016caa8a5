/**
 * The digest's time budget: no DynamoDB call outlives the invocation's deadline, and a record that
 * could not finish before it is handed back untouched (no claim taken, nothing posted).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient, LOCAL_CREDENTIALS } from '../../shared/adapters/aws-clients';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import { processTestBatch, type TestWiring } from '../support/worker-wiring';
import { RecordingObserver } from '../support/recording-observer';
import { startDigestPeers, type DigestPeers } from '../support/digest-peers';

const TOKEN = 'xoxb-deadline';
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
let peers: DigestPeers;

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: 'deadline', queueName: 'deadline', visibilityTimeoutSeconds: 30, slackToken: TOKEN });
});
afterAll(() => peers.close());

function store(deadline?: () => number): DynamoDigestStore {
  return new DynamoDigestStore(peers.dynamo.client, {
    tableName: peers.tableName,
    leaseMs: 120_000,
    retentionSeconds: 86_400,
    deadline,
    now: () => T0,
  });
}

describe('DynamoDB calls of the digest', () => {
  it('are cut at the deadline when DynamoDB accepts the connection and never answers', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    // The client alone would wait a minute per attempt: only the deadline can end this call in time.
    const client = createDynamoClient({
      requestTimeoutMs: 60_000,
      connectionTimeoutMs: 1000,
      maxAttempts: 1,
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: LOCAL_CREDENTIALS,
    });
    try {
      const bounded = new DynamoDigestStore(client, {
        tableName: 't',
        leaseMs: 120_000,
        retentionSeconds: 60,
        deadline: () => T0 + 200,
        now: () => T0,
      });
      await expect(bounded.claim(randomUUID(), T0)).rejects.toThrow(/abort/i);
    } finally {
      client.destroy();
      silent.closeAllConnections();
      silent.close();
    }
  }, 20_000);

  it('run normally while time is left', async () => {
    const claim = await store(() => T0 + 60_000).claim(randomUUID(), T0);
    expect(claim.status).toBe('claimed');
  });
});

describe("a record and the invocation's time left", () => {
  function recordAndDeps(deadlineMs: number) {
    const projectId = peers.sim.projectIds()[0]!;
    const run = peers.sim.advanceRun(projectId);
    const eventId = randomUUID();
    const body = JSON.stringify({
      event: {
        id: eventId,
        type: 'run.completed',
        created_at: new Date().toISOString(),
        data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
      },
      received_at: new Date(T0).toISOString(),
    });
    const observer = new RecordingObserver();
    const deps: TestWiring = {
      readApi: new ReadApiClient({ baseUrl: peers.sim.url, apiKey: peers.sim.apiKey }),
      slack: createSlackPoster({ token: TOKEN, slackApiUrl: peers.slack.apiUrl }),
      store: store(),
      deadLetters: new SqsDeadLetters(peers.sqs, peers.dlqUrl),
      channels: { defaultChannel: '#digests', byProject: {} },
      clock: { now: () => T0 },
      log: observer,
      metrics: observer,
      options: { recordBudgetMs: 30_000 },
      deadline: () => deadlineMs,
    };
    return { eventId, record: { messageId: 'm1', body }, deps };
  }

  it('is handed back before anything is claimed or posted when less than its budget is left', async () => {
    const { eventId, record, deps } = recordAndDeps(T0 + 10_000);
    const [outcome] = await processTestBatch([record], deps);
    expect(outcome).toEqual({ messageId: 'm1', ok: false, retryAfterSeconds: undefined });
    expect(peers.slack.messages('#digests')).toHaveLength(0);
    // Untouched: the retry claims the event at once (no lease of this invocation in the way).
    expect((await store().claim(eventId, T0)).status).toBe('claimed');
  });

  it('is digested when exactly its budget is left', async () => {
    const { record, deps } = recordAndDeps(T0 + 30_000);
    const [outcome] = await processTestBatch([record], deps);
    expect(outcome).toEqual({ messageId: 'm1', ok: true, result: 'posted' });
  });
});
