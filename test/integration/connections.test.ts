/**
 * Connections against real protocol peers (issue 31 item 1): the ingest and digest functions' own
 * wiring (their runtime modules) on dynalite, the local SQS server, the local Secrets Manager server,
 * two service simulators with different keys and the local Slack server. `/webhook/<id>` verifies only
 * that connection's secrets; an unknown id is 404 and a removed one 410; the stack's `/webhook` is
 * unchanged; a connection's run is read through its own base URL with its own key and posted to its
 * own channel.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { PurgeQueueCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createIngestDeps, readIngestConfig } from '../../functions/ingest/runtime';
import { createDigestRuntime, readDigestConfig } from '../../functions/digest/runtime';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { connectionSecretPrefix, ENV } from '../../shared/contracts';
import { formatConnectionSecret, type Connection } from '../../shared/connections/model';
import { handleDelivery, type IngestDeps } from '../../shared/ingest';
import type { WebhookEvent } from '../../shared/events';
import { LocalSecretsManagerServer } from '../../local/secrets-manager-server';
import { VisibilitySimulator } from '../../local/simulator/server';
import { digestPeersEnv, startDigestPeers, useLocalSecretsManager, type DigestPeers } from '../support/digest-peers';
import { signedRequest } from '../support/deliveries';
import { RecordingObserver } from '../support/recording-observer';
import { enqueue, receiveRecords } from '../support/sqs-records';

const TABLE = 'bridge-connections';
const TOKEN = 'xoxb-connections-test';
const DEFAULT_SECRET = 'whsec_default';
const ACME_SECRET = 'whsec_acme';
const BETA_SECRET = 'whsec_beta';
const ACME_KEY = 'acme_read_key';
const PREFIX = connectionSecretPrefix('test');

let peers: DigestPeers;
let sqs: SQSClient;
let acmeSim: VisibilitySimulator;
let secrets: LocalSecretsManagerServer;
let store: DynamoConnectionStore;
let restoreProcessEnv: () => void = () => undefined;

function connection(id: string, baseUrl: string, defaultChannel: string): Connection {
  return {
    id,
    baseUrl,
    secretName: `${PREFIX}${id}`,
    routes: { defaultChannel, byProject: {} },
    slackTeamIds: [],
    status: 'active',
    createdAtMs: Date.now(),
  };
}

function functionEnv(): Record<string, string> {
  return {
    ...digestPeersEnv(peers, { slackToken: TOKEN, defaultChannel: 'C0DEFAULT' }),
    [ENV.signingSecrets]: JSON.stringify([DEFAULT_SECRET]),
  };
}

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'connections', visibilityTimeoutSeconds: 1, slackToken: TOKEN });
  sqs = peers.sqs;
  acmeSim = await VisibilitySimulator.start({ apiKey: ACME_KEY, seed: 7 });
  secrets = await LocalSecretsManagerServer.start();
  restoreProcessEnv = useLocalSecretsManager(secrets.url);
  store = new DynamoConnectionStore(peers.dynamo.client, TABLE);
  const acme = connection('acme', acmeSim.url, 'C0ACME');
  const beta = connection('beta', peers.sim.url, 'C0BETA');
  const gone = connection('gone', peers.sim.url, 'C0GONE');
  secrets.createSecret(acme.secretName, formatConnectionSecret({ readApiKey: ACME_KEY, signingSecrets: [ACME_SECRET] }));
  secrets.createSecret(beta.secretName, formatConnectionSecret({ readApiKey: peers.sim.apiKey, signingSecrets: [BETA_SECRET] }));
  secrets.createSecret(gone.secretName, formatConnectionSecret({ readApiKey: 'gone_key', signingSecrets: ['whsec_gone'] }));
  for (const c of [acme, beta, gone]) expect(await store.add(c)).toBe('added');
  expect(await store.markRemoved('gone', Date.now())).toBe(true);
}, 60_000);

afterAll(async () => {
  restoreProcessEnv();
  await Promise.all([peers.close(), acmeSim.close(), secrets.close()]);
});

let observer: RecordingObserver;
let ingest: IngestDeps;
beforeEach(async () => {
  observer = new RecordingObserver();
  ingest = createIngestDeps(readIngestConfig(functionEnv()), { log: observer, metrics: observer });
  await peers.reset();
  acmeSim.clearRequests();
  peers.sim.clearRequests();
});

function deliveryTo(path: string, secret: string, data?: Record<string, unknown>) {
  const request = signedRequest({ secret, timestampSeconds: Math.floor(Date.now() / 1000), ...(data ? { data } : {}) });
  return { ...request, path };
}

async function queuedBodies(): Promise<Record<string, unknown>[]> {
  const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: peers.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
  await sqs.send(new PurgeQueueCommand({ QueueUrl: peers.queueUrl }));
  return (received.Messages ?? []).map((m) => JSON.parse(m.Body ?? '{}') as Record<string, unknown>);
}

describe('ingest: /webhook/<connection id>', () => {
  it("accepts a delivery signed with the connection's own secret and queues it with the connection id", async () => {
    const response = await handleDelivery(deliveryTo('/webhook/acme', ACME_SECRET), ingest);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ ok: true, result: 'accepted' });
    const [body] = await queuedBodies();
    expect(body?.['connection']).toBe('acme');
    // Deduplicated among the connection's own deliveries: its record is keyed under its tenant prefix.
    const id = (body?.['event'] as { id: string }).id;
    const item = async (pk: string) =>
      (await peers.dynamo.client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: pk } }, ConsistentRead: true }))).Item;
    expect(await item(`t#acme#delivery#${id}`)).toBeDefined();
    expect(await item(`delivery#${id}`)).toBeUndefined();
  });

  it("refuses a delivery signed with another connection's secret (401), and the stack's own secret on a connection", async () => {
    const crossed = await handleDelivery(deliveryTo('/webhook/beta', ACME_SECRET), ingest);
    expect(crossed.statusCode).toBe(401);
    expect(JSON.parse(crossed.body)).toEqual({ ok: false, error: 'signature_no_matching_signature' });
    const stackSecret = await handleDelivery(deliveryTo('/webhook/acme', DEFAULT_SECRET), ingest);
    expect(stackSecret.statusCode).toBe(401);
    expect(await queuedBodies()).toEqual([]);
  });

  it('answers 404 for an unknown or malformed id and 410 for a removed connection (neither is retried, spec §6)', async () => {
    for (const path of ['/webhook/nobody', '/webhook/ACME', '/webhook/acme/extra', '/webhook/']) {
      const response = await handleDelivery(deliveryTo(path, ACME_SECRET), ingest);
      expect(response.statusCode, path).toBe(404);
    }
    const removed = await handleDelivery(deliveryTo('/webhook/gone', 'whsec_gone'), ingest);
    expect(removed.statusCode).toBe(410);
    expect(JSON.parse(removed.body)).toEqual({ ok: false, error: 'connection_removed' });
    expect(await queuedBodies()).toEqual([]);
  });

  it("keeps the stack's own /webhook as it was: its secrets only, and the queued envelope without a connection", async () => {
    const own = await handleDelivery(deliveryTo('/webhook', DEFAULT_SECRET), ingest);
    expect(own.statusCode).toBe(200);
    const [body] = await queuedBodies();
    expect(Object.keys(body ?? {}).sort()).toEqual(['event', 'received_at']);
    const connectionSecret = await handleDelivery(deliveryTo('/webhook', ACME_SECRET), ingest);
    expect(connectionSecret.statusCode).toBe(401);
  });
});

describe("digest: a connection's run", () => {
  function runOf(sim: VisibilitySimulator): WebhookEvent {
    const projectId = sim.projectIds()[0] ?? '';
    const run = sim.advanceRun(projectId);
    return {
      id: randomUUID(),
      type: 'run.completed',
      created_at: new Date().toISOString(),
      data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
    };
  }

  it("is read through the connection's base URL with its key, posted to its channel, and its time noted for the watchdog", async () => {
    const event = runOf(acmeSim);
    await enqueue(sqs, peers.queueUrl, JSON.stringify({ event, received_at: new Date().toISOString(), connection: 'acme' }));
    const runtime = createDigestRuntime(readDigestConfig(functionEnv()), { log: observer, metrics: observer });
    const result = await runtime.handle(await receiveRecords(sqs, peers.queueUrl), 60_000);
    expect(result.batchItemFailures).toEqual([]);
    const acmeReads = acmeSim.requests().filter((r) => r.route !== 'control');
    expect(acmeReads.length).toBeGreaterThan(0);
    // A read with any other key would be refused by this simulator (401).
    expect(acmeReads.every((r) => r.status === 200)).toBe(true);
    expect(peers.sim.requests().filter((r) => r.route !== 'control')).toEqual([]);
    expect(peers.slack.messages('C0ACME').filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(peers.slack.messages('C0DEFAULT')).toEqual([]);
    expect((await store.get('acme'))?.cadence.runTimesMs).toEqual([Date.parse(event.created_at)]);
  });

  it('counts its per-run metrics under its tenant, and the stack\'s own under "stack", beside the totals', async () => {
    await enqueue(
      sqs,
      peers.queueUrl,
      JSON.stringify({ event: runOf(acmeSim), received_at: new Date().toISOString(), connection: 'acme' }),
    );
    await enqueue(sqs, peers.queueUrl, JSON.stringify({ event: runOf(peers.sim), received_at: new Date().toISOString() }));
    const runtime = createDigestRuntime(readDigestConfig(functionEnv()), { log: observer, metrics: observer });
    const result = await runtime.handle(await receiveRecords(sqs, peers.queueUrl), 60_000);
    expect(result.batchItemFailures).toEqual([]);
    expect(observer.countOf('DigestPosted')).toBe(2);
    expect(observer.countOf('DigestPosted{tenant=acme}')).toBe(1);
    expect(observer.countOf('DigestPosted{tenant=stack}')).toBe(1);
  });

  it("drops a removed connection's queued event without reading anything", async () => {
    const event = runOf(peers.sim);
    await enqueue(sqs, peers.queueUrl, JSON.stringify({ event, received_at: new Date().toISOString(), connection: 'gone' }));
    const runtime = createDigestRuntime(readDigestConfig(functionEnv()), { log: observer, metrics: observer });
    const result = await runtime.handle(await receiveRecords(sqs, peers.queueUrl), 60_000);
    expect(result.batchItemFailures).toEqual([]);
    expect(peers.sim.requests().filter((r) => r.route !== 'control')).toEqual([]);
    expect(peers.slack.messages()).toEqual([]);
  });

  it("reads the stack's own key and token by ARN and a connection's secret, all from Secrets Manager", async () => {
    const env = {
      ...functionEnv(),
      [ENV.readApiKeySecretArn]: secrets.createSecret(`stack-read-key-${Date.now()}`, peers.sim.apiKey),
      [ENV.slackBotTokenSecretArn]: secrets.createSecret(`stack-bot-token-${Date.now()}`, TOKEN),
    };
    const before = secrets.calls().length;
    await enqueue(
      sqs,
      peers.queueUrl,
      JSON.stringify({ event: runOf(acmeSim), received_at: new Date().toISOString(), connection: 'acme' }),
    );
    await enqueue(sqs, peers.queueUrl, JSON.stringify({ event: runOf(peers.sim), received_at: new Date().toISOString() }));
    const runtime = createDigestRuntime(readDigestConfig(env), { log: observer, metrics: observer });
    const result = await runtime.handle(await receiveRecords(sqs, peers.queueUrl), 60_000);
    expect(result.batchItemFailures).toEqual([]);
    expect(peers.slack.messages('C0ACME').filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(peers.slack.messages('C0DEFAULT').filter((m) => !m.thread_ts)).toHaveLength(1);
    const read = new Set(
      secrets
        .calls()
        .slice(before)
        .filter((c) => c.operation === 'GetSecretValue' && c.status === 200)
        .map((c) => c.secretId),
    );
    expect(read).toEqual(new Set([env[ENV.readApiKeySecretArn], env[ENV.slackBotTokenSecretArn], `${PREFIX}acme`]));
  });
});

describe('the silence watchdog, after the weekly sweep', () => {
  it("tells a connection's silence once, in its channel and the stack's own", async () => {
    const HOUR = 3_600_000;
    const now = Date.now();
    for (const hoursAgo of [30, 24, 18]) await store.noteRun('beta', now - hoursAgo * HOUR);
    const runtime = createDigestRuntime(readDigestConfig(functionEnv()), { log: observer, metrics: observer }, { now: () => now });
    const sweep = async () => {
      await enqueue(sqs, peers.queueUrl, JSON.stringify({ kind: 'weekly_sweep' }));
      const result = await runtime.handle(await receiveRecords(sqs, peers.queueUrl), 60_000);
      expect(result.batchItemFailures).toEqual([]);
    };
    await sweep();
    for (const channel of ['C0BETA', 'C0DEFAULT']) {
      const notices = peers.slack.messages(channel);
      expect(notices, channel).toHaveLength(1);
      expect(notices[0]?.text).toMatch(/connection `beta`.*switched off after 15 failed deliveries/s);
    }
    expect(peers.slack.messages('C0ACME')).toEqual([]); // one run: no cadence learned yet
    await sweep();
    expect(peers.slack.messages('C0BETA')).toHaveLength(1);
    expect(observer.countOf('ConnectionSilent')).toBe(1);
  });
});
