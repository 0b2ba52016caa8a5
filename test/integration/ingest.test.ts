/**
 * Ingest against real protocol peers: dynalite for DynamoDB and the local SQS server, through the
 * real adapters. The clock is injected so lease expiry is tested without waiting.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateQueueCommand, PurgeQueueCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDynamoClient, createSqsClient, LOCAL_CREDENTIALS } from '../../shared/adapters/aws-clients';
import { INGEST_CLIENT_BOUNDS } from '../../functions/ingest/runtime';
import { DynamoDeliveryStore } from '../../shared/adapters/dynamo-delivery-store';
import { SqsEventQueue } from '../../shared/adapters/sqs-event-queue';
import { handleDelivery, MAX_BODY_BYTES, type IngestDeps, type IngestRequest } from '../../shared/ingest';
import { RecordingObserver } from '../support/recording-observer';
import { createSignatureVerifier } from '../../shared/signature';
import { startLocalDynamo, ensureBridgeTable, type LocalDynamo } from '../../local/dynamo';
import { SqsServer } from '../../local/sqs-server';
import { deliveryBody, signedRequest } from '../support/deliveries';
import { signPayload } from '../../shared/signature';

const SECRET = 'whsec_new';
const OLD_SECRET = 'whsec_old';
const TABLE = 'bridge';
const START = Date.parse('2026-11-20T10:00:05Z');

let dynamo: LocalDynamo;
let sqsServer: SqsServer;
let sqs: SQSClient;
let queueUrl: string;
let clockMs = START;

function makeDeps(overrides: Partial<IngestDeps> = {}, observer = new RecordingObserver()): IngestDeps {
  const verifier = createSignatureVerifier({ secrets: [OLD_SECRET, SECRET] });
  return {
    verifier: () => Promise.resolve(verifier),
    store: new DynamoDeliveryStore(dynamo.client, { tableName: TABLE, leaseMs: 10_000, retentionSeconds: 3 * 86400 }),
    queue: new SqsEventQueue(sqs, queueUrl),
    clock: { now: () => clockMs },
    log: observer,
    metrics: observer,
    ...overrides,
  };
}

function request(overrides: { id?: string; type?: string; createdAt?: string; secret?: string; data?: Record<string, unknown> } = {}) {
  return signedRequest({ secret: overrides.secret ?? SECRET, timestampSeconds: Math.floor(clockMs / 1000), ...overrides });
}

async function drainQueue(): Promise<{ body: unknown; attributes: Record<string, string | undefined> }[]> {
  const out: { body: unknown; attributes: Record<string, string | undefined> }[] = [];
  for (;;) {
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'], WaitTimeSeconds: 0 }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return out;
    for (const message of messages) {
      const attributes: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) attributes[name] = value.StringValue;
      out.push({ body: JSON.parse(message.Body ?? 'null') as unknown, attributes });
    }
  }
}

function parse(body: string): { ok: boolean; error?: string; result?: string } {
  return JSON.parse(body) as { ok: boolean; error?: string; result?: string };
}

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  sqsServer = await SqsServer.start();
  sqs = createSqsClient({ endpoint: sqsServer.url, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, requestTimeoutMs: 5000, connectionTimeoutMs: 1000, maxAttempts: 1 });
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'events', Attributes: { VisibilityTimeout: '60' } }))).QueueUrl!;
});

afterAll(async () => {
  sqs.destroy();
  await sqsServer.close();
  await dynamo.close();
});

beforeEach(async () => {
  clockMs = START;
  await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
});

describe('ingest: accepted deliveries', () => {
  it('enqueues the verified event with its receive time and attributes, then answers 200', async () => {
    const req = request({ data: { project_id: 'p-9', run_id: 'r-1', status: 'completed', answers: 3 } });
    const response = await handleDelivery(req, makeDeps());
    expect(response.statusCode).toBe(200);
    expect(parse(response.body)).toEqual({ ok: true, result: 'accepted' });
    const messages = await drainQueue();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.body).toEqual({
      event: { id: req.id, type: 'run.completed', created_at: '2026-11-20T10:00:00Z', data: { project_id: 'p-9', run_id: 'r-1', status: 'completed', answers: 3 } },
      received_at: new Date(START).toISOString(),
    });
    expect(messages[0]!.attributes).toEqual({ type: 'run.completed', project_id: 'p-9', event_id: req.id });
  });

  it('verifies a base64-encoded body on its decoded bytes', async () => {
    const { id, body } = deliveryBody({ data: { project_id: 'p-ü', run_id: 'r-🚀' } });
    const req: IngestRequest = {
      method: 'POST',
      path: '/webhook',
      headers: { 'x-service-delivery': id, 'x-service-signature': signPayload(SECRET, Math.floor(clockMs / 1000), body) },
      body: Buffer.from(body, 'utf8').toString('base64'),
      isBase64Encoded: true,
    };
    expect((await handleDelivery(req, makeDeps())).statusCode).toBe(200);
    expect(await drainQueue()).toHaveLength(1);
  });

  it('accepts deliveries signed with the old secret during rotation', async () => {
    expect((await handleDelivery(request({ secret: OLD_SECRET }), makeDeps())).statusCode).toBe(200);
  });

  it('acknowledges a signed event of an unhandled type without enqueueing it', async () => {
    const response = await handleDelivery(request({ type: 'project.renamed' }), makeDeps());
    expect(response.statusCode).toBe(200);
    expect(parse(response.body)).toEqual({ ok: true, result: 'ignored' });
    expect(await drainQueue()).toHaveLength(0);
  });
});

describe('ingest: refusals', () => {
  it('answers 401 for a wrong secret and records the reason', async () => {
    const observer = new RecordingObserver();
    const response = await handleDelivery(request({ secret: 'whsec_neither' }), makeDeps({}, observer));
    expect(response.statusCode).toBe(401);
    expect(parse(response.body)).toEqual({ ok: false, error: 'signature_no_matching_signature' });
    expect(observer.countOf('DeliveryRejected{reason=signature_no_matching_signature}')).toBe(1);
    expect(observer.countOf('SignatureRejected')).toBe(1);
    expect(JSON.stringify(observer.entries)).not.toContain(SECRET);
    expect(await drainQueue()).toHaveLength(0);
  });

  it('answers 401 for stale and future-dated deliveries', async () => {
    const req = request();
    clockMs = START + 301_000;
    expect(parse((await handleDelivery(req, makeDeps())).body).error).toBe('signature_too_old');
    clockMs = START - 301_000;
    expect(parse((await handleDelivery(req, makeDeps())).body).error).toBe('signature_too_new');
    expect(await drainQueue()).toHaveLength(0);
  });

  it('answers 400 when a captured body is replayed under a new delivery header', async () => {
    const original = request();
    expect((await handleDelivery(original, makeDeps())).statusCode).toBe(200);
    const replay = { ...original, headers: { ...original.headers, 'x-service-delivery': '00000000-0000-4000-8000-000000000000' } };
    const response = await handleDelivery(replay, makeDeps());
    expect(response.statusCode).toBe(400);
    expect(parse(response.body).error).toBe('delivery_id_mismatch');
    expect(await drainQueue()).toHaveLength(1);
  });

  it('answers 400 for a signed body that is not JSON or lacks fields', async () => {
    const t = Math.floor(clockMs / 1000);
    for (const [body, error] of [
      ['{not json', 'invalid_json'],
      ['{"id":"x","type":"run.completed","data":{}}', 'invalid_event'],
      ['[]', 'invalid_event'],
    ] as const) {
      const req: IngestRequest = { method: 'POST', path: '/webhook', headers: { 'x-service-signature': signPayload(SECRET, t, body) }, body, isBase64Encoded: false };
      const response = await handleDelivery(req, makeDeps());
      expect(response.statusCode).toBe(400);
      expect(parse(response.body).error).toBe(error);
    }
  });

  /** A delivery of exactly these body bytes, signed now, with the body id as the delivery header. */
  function signedBody(body: string, id?: string): IngestRequest {
    const headers: Record<string, string> = { 'x-service-signature': signPayload(SECRET, Math.floor(clockMs / 1000), body) };
    if (id !== undefined) headers['x-service-delivery'] = id;
    return { method: 'POST', path: '/webhook', headers, body, isBase64Encoded: false };
  }

  // Each of these is signed but can never be stored: DynamoDB or SQS would refuse it on every retry,
  // so a 503 would only burn the sender's retries and count toward switching the webhook off.
  it('answers 400 for an id that is too long or not printable ASCII, without claiming it', async () => {
    for (const id of ['x'.repeat(257), 'e1\u0001', 'ünïcode-id', 'e1\ud800']) {
      const observer = new RecordingObserver();
      const response = await handleDelivery(request({ id }), makeDeps({}, observer));
      expect(response.statusCode, JSON.stringify(id)).toBe(400);
      expect(parse(response.body).error).toBe('invalid_event');
      expect(observer.entries.find((e) => e.message === 'delivery rejected')?.fields['detail']).toMatch(/"id"/);
    }
    expect(await drainQueue()).toHaveLength(0);
  });

  it('answers 400 for a type or project id holding characters SQS refuses in an attribute', async () => {
    const cases: { type?: string; data?: Record<string, unknown> }[] = [
      { type: 'run.completed\u0000' },
      { data: { project_id: 'p-\u001b', run_id: 'r-1' } },
      { data: { project_id: 'p-\udc00', run_id: 'r-1' } },
      { data: { project_id: 'p-\uffff', run_id: 'r-1' } },
    ];
    for (const overrides of cases) {
      const response = await handleDelivery(request(overrides), makeDeps());
      expect(response.statusCode, JSON.stringify(overrides)).toBe(400);
      expect(parse(response.body).error).toBe('invalid_event');
    }
    expect(await drainQueue()).toHaveLength(0);
  });

  it('answers 400 when the queued body would hold U+FFFE/U+FFFF, raw or JSON-escaped in the delivery', async () => {
    const id = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b';
    const raw = `{"id":"${id}","type":"run.completed","created_at":"2026-11-20T10:00:00Z","data":{"project_id":"p-1","run_id":"r-1","note":"\uffff"}}`;
    const escaped = raw.replace('\uffff', '\\ufffe');
    expect(escaped).toContain('"note":"\\ufffe"');
    for (const body of [raw, escaped]) {
      const response = await handleDelivery(signedBody(body, id), makeDeps());
      expect(response.statusCode).toBe(400);
      expect(parse(response.body).error).toBe('invalid_event');
    }
    expect(await drainQueue()).toHaveLength(0);
    // Nothing was claimed: the same id, sent clean, is accepted.
    const clean = await handleDelivery(signedBody(raw.replace('\uffff', 'ok'), id), makeDeps());
    expect(parse(clean.body).result).toBe('accepted');
  });

  it('accepts what JSON.stringify escapes on the way to SQS: control characters and lone surrogates in data', async () => {
    const data = { project_id: 'p-1', run_id: 'r-1', note: 'a\u0000b\u001b\ud800c\udfff' };
    const req = request({ data });
    const response = await handleDelivery(req, makeDeps());
    expect(parse(response.body)).toEqual({ ok: true, result: 'accepted' });
    const messages = await drainQueue();
    expect(messages).toHaveLength(1);
    expect((messages[0]!.body as { event: { data: unknown } }).event.data).toEqual(data);
  });

  it('answers 400 for a created_at after the signature timestamp plus the tolerance', async () => {
    const t = Math.floor(clockMs / 1000);
    const observer = new RecordingObserver();
    // A far-future created_at would make every later run of the project look superseded.
    for (const createdAt of ['2099-01-01T00:00:00Z', new Date((t + 301) * 1000).toISOString()]) {
      const response = await handleDelivery(request({ createdAt }), makeDeps({}, observer));
      expect(response.statusCode, createdAt).toBe(400);
      expect(parse(response.body).error).toBe('invalid_event');
    }
    expect(observer.entries.filter((e) => e.message === 'delivery rejected').map((e) => e.fields['detail'])).toEqual([
      '"created_at" is after the signature timestamp',
      '"created_at" is after the signature timestamp',
    ]);
    expect(await drainQueue()).toHaveLength(0);
    // Up to t + tolerance is accepted (clock skew between the service's hosts).
    expect(parse((await handleDelivery(request({ createdAt: new Date((t + 300) * 1000).toISOString() }), makeDeps())).body).result).toBe('accepted');
    // The bound follows the configured tolerance.
    const strict = await handleDelivery(request({ createdAt: new Date((t + 61) * 1000).toISOString() }), makeDeps({ toleranceSeconds: 60 }));
    expect(parse(strict.body).error).toBe('invalid_event');
  });

  it('accepts a retry re-signed long after the event was created', async () => {
    const req = request({ createdAt: new Date(START - 5_000).toISOString() });
    clockMs = START + 15 * 60_000; // the sender's last retry, re-signed at send time
    const retry = { ...req, headers: { ...req.headers, 'x-service-signature': signPayload(SECRET, Math.floor(clockMs / 1000), req.body!) } };
    expect(parse((await handleDelivery(retry, makeDeps())).body).result).toBe('accepted');
  });

  it('answers 404 for another path and 405 for another method', async () => {
    const req = request();
    expect((await handleDelivery({ ...req, path: '/hook' }, makeDeps())).statusCode).toBe(404);
    const wrongMethod = await handleDelivery({ ...req, method: 'GET' }, makeDeps());
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers['allow']).toBe('POST');
  });

  it('answers 413 for a body over 64 KiB without verifying it', async () => {
    let verified = 0;
    const verifier = createSignatureVerifier({ secrets: [SECRET] });
    const deps = makeDeps({ verifier: () => { verified++; return Promise.resolve(verifier); } });
    const big = 'x'.repeat(MAX_BODY_BYTES + 1);
    const response = await handleDelivery({ method: 'POST', path: '/webhook', headers: {}, body: big, isBase64Encoded: false }, deps);
    expect(response.statusCode).toBe(413);
    const bigBase64 = Buffer.alloc(MAX_BODY_BYTES + 1).toString('base64');
    expect((await handleDelivery({ method: 'POST', path: '/webhook', headers: {}, body: bigBase64, isBase64Encoded: true }, deps)).statusCode).toBe(413);
    expect(verified).toBe(0);
  });
});

describe('ingest: de-duplication', () => {
  it('answers 200 to a duplicate of a completed delivery and enqueues once', async () => {
    const req = request();
    expect((await handleDelivery(req, makeDeps())).statusCode).toBe(200);
    const again = await handleDelivery(req, makeDeps());
    expect(again.statusCode).toBe(200);
    expect(parse(again.body).result).toBe('duplicate');
    expect(await drainQueue()).toHaveLength(1);
  });

  it('enqueues exactly once under concurrent duplicates', async () => {
    const req = request();
    const responses = await Promise.all(Array.from({ length: 25 }, () => handleDelivery(req, makeDeps())));
    const results = responses.map((r) => `${r.statusCode}:${parse(r.body).result ?? parse(r.body).error}`);
    expect(results.filter((r) => r === '200:accepted')).toHaveLength(1);
    // The rest either found it in progress (503, the sender retries) or already completed (200).
    expect(results.every((r) => ['200:accepted', '200:duplicate', '503:in_progress'].includes(r))).toBe(true);
    expect(await drainQueue()).toHaveLength(1);
  });

  it('answers 503 with Retry-After while the same delivery is in progress elsewhere', async () => {
    const req = request();
    const store = makeDeps().store;
    const claim = await store.claim(req.id, clockMs);
    expect(claim.status).toBe('claimed');
    clockMs += 4_000;
    const response = await handleDelivery(req, makeDeps());
    expect(response.statusCode).toBe(503);
    expect(parse(response.body).error).toBe('in_progress');
    expect(response.headers['retry-after']).toBe('6');
  });

  it('takes over a delivery whose function died between the put and the send, once the lease ends', async () => {
    const req = request();
    await makeDeps().store.claim(req.id, clockMs); // the crashed invocation
    clockMs += 9_000;
    expect((await handleDelivery(req, makeDeps())).statusCode).toBe(503);
    clockMs += 2_000; // lease (10 s) over; still well before the sender's first retry window closes
    const retry = await handleDelivery(req, makeDeps());
    expect(retry.statusCode).toBe(200);
    expect(parse(retry.body).result).toBe('accepted');
    expect(await drainQueue()).toHaveLength(1);
  });

  it('releases the record when the queue send fails, answers 503, and a retry enqueues', async () => {
    const req = request();
    const brokenQueue = new SqsEventQueue(sqs, `${sqsServer.url}/000000000000/no-such-queue`);
    const failed = await handleDelivery(req, makeDeps({ queue: brokenQueue }));
    expect(failed.statusCode).toBe(503);
    expect(parse(failed.body).error).toBe('queue_unavailable');
    expect(failed.headers['retry-after']).toBe('30');
    clockMs += 30_000; // the sender's first retry, re-signed with a fresh timestamp
    const retry = await handleDelivery({ ...req, headers: { ...req.headers, 'x-service-signature': signPayload(SECRET, Math.floor(clockMs / 1000), req.body!) } }, makeDeps());
    expect(retry.statusCode).toBe(200);
    expect(parse(retry.body).result).toBe('accepted');
    expect(await drainQueue()).toHaveLength(1);
  });

  it('answers 503 when SQS is unreachable, and the released claim lets the retry enqueue', async () => {
    const { SQSClient } = await import('@aws-sdk/client-sqs');
    const unreachable = new SQSClient({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
    const req = request();
    const failed = await handleDelivery(req, makeDeps({ queue: new SqsEventQueue(unreachable, queueUrl) }));
    expect(failed.statusCode).toBe(503);
    expect(parse(failed.body).error).toBe('queue_unavailable');
    unreachable.destroy();
    const retry = await handleDelivery(req, makeDeps());
    expect(parse(retry.body).result).toBe('accepted');
    expect(await drainQueue()).toHaveLength(1);
  });

  it('answers 503 when DynamoDB accepts the connection but never answers (bounded request timeout)', async () => {
    // A peer that reads the request and says nothing: only the SDK's request timeout can end the call.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const client = createDynamoClient({ ...INGEST_CLIENT_BOUNDS, endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
    try {
      const store = new DynamoDeliveryStore(client, { tableName: TABLE, leaseMs: 10_000, retentionSeconds: 60 });
      const response = await handleDelivery(request(), makeDeps({ store }));
      expect(response.statusCode).toBe(503);
      expect(parse(response.body).error).toBe('store_unavailable');
    } finally {
      client.destroy();
      silent.closeAllConnections();
      silent.close();
    }
  }, 15_000);

  it('answers 503 when DynamoDB is unreachable, and nothing is enqueued', async () => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const unreachable = new DynamoDBClient({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
    const store = new DynamoDeliveryStore(unreachable, { tableName: TABLE, leaseMs: 10_000, retentionSeconds: 60 });
    const response = await handleDelivery(request(), makeDeps({ store }));
    expect(response.statusCode).toBe(503);
    expect(parse(response.body).error).toBe('store_unavailable');
    expect(await drainQueue()).toHaveLength(0);
    unreachable.destroy();
  });
});
