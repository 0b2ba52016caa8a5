/**
 * Ingest against real protocol peers: dynalite for DynamoDB and the local SQS server, through the
 * real adapters. The clock is injected so lease expiry is tested without waiting.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateQueueCommand, PurgeQueueCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDynamoClient, LOCAL_CREDENTIALS } from '../../shared/adapters/aws-clients';
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
import type { QuarantinedDelivery } from '../../shared/quarantine';
import { testSqsClient } from '../support/sqs-client';

const SECRET = 'whsec_new';
const OLD_SECRET = 'whsec_old';
const TABLE = 'bridge';
const START = Date.parse('2026-11-20T10:00:05Z');

let dynamo: LocalDynamo;
let sqsServer: SqsServer;
let sqs: SQSClient;
let queueUrl: string;
let dlqUrl: string;
let clockMs = START;

function makeDeps(overrides: Partial<IngestDeps> = {}, observer = new RecordingObserver()): IngestDeps {
  const verifier = createSignatureVerifier({ secrets: [OLD_SECRET, SECRET] });
  return {
    verifier: () => Promise.resolve(verifier),
    store: new DynamoDeliveryStore(dynamo.client, { tableName: TABLE, leaseMs: 10_000, retentionSeconds: 3 * 86400 }),
    queue: new SqsEventQueue(sqs, queueUrl, dlqUrl),
    clock: { now: () => clockMs },
    log: observer,
    metrics: observer,
    ...overrides,
  };
}

function request(overrides: { id?: string; type?: string; createdAt?: string; secret?: string; data?: Record<string, unknown> } = {}) {
  return signedRequest({ secret: overrides.secret ?? SECRET, timestampSeconds: Math.floor(clockMs / 1000), ...overrides });
}

async function drainQueue(url = queueUrl): Promise<{ body: unknown; attributes: Record<string, string | undefined> }[]> {
  const out: { body: unknown; attributes: Record<string, string | undefined> }[] = [];
  for (;;) {
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'], WaitTimeSeconds: 0 }),
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

function parse(body: string): { ok: boolean; error?: string; result?: string; reason?: string } {
  return JSON.parse(body) as { ok: boolean; error?: string; result?: string; reason?: string };
}

/** The quarantined deliveries in the DLQ (drained). */
async function drainDlq(): Promise<{ body: QuarantinedDelivery; attributes: Record<string, string | undefined> }[]> {
  return (await drainQueue(dlqUrl)) as { body: QuarantinedDelivery; attributes: Record<string, string | undefined> }[];
}

/** Answered 202 quarantined, with the reason. */
function expectQuarantined(response: { statusCode: number; body: string }, label?: string): string {
  expect(response.statusCode, label).toBe(202);
  const answer = parse(response.body);
  expect(answer.result, label).toBe('quarantined');
  return answer.reason ?? '';
}

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  sqsServer = await SqsServer.start();
  sqs = testSqsClient(sqsServer.url);
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'events', Attributes: { VisibilityTimeout: '60' } }))).QueueUrl!;
  dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'events-dlq', Attributes: { VisibilityTimeout: '60' } }))).QueueUrl!;
});

afterAll(async () => {
  sqs.destroy();
  await sqsServer.close();
  await dynamo.close();
});

beforeEach(async () => {
  clockMs = START;
  await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
  await sqs.send(new PurgeQueueCommand({ QueueUrl: dlqUrl }));
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
      event: {
        id: req.id,
        type: 'run.completed',
        created_at: '2026-11-20T10:00:00Z',
        data: { project_id: 'p-9', run_id: 'r-1', status: 'completed', answers: 3 },
      },
      received_at: new Date(START).toISOString(),
    });
    expect(messages[0]!.attributes).toEqual({ type: 'run.completed', project_id: 'p-9', tenant: 'stack', event_id: req.id });
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

  // Was 400 invalid_json / invalid_event: a 4xx counts toward the sender's switch-off (issue 11).
  it('quarantines a signed body that is not JSON or lacks fields: 202, kept in the DLQ with its bytes and reason', async () => {
    const t = Math.floor(clockMs / 1000);
    const observer = new RecordingObserver();
    const cases = [
      ['{not json', 'body is not JSON'],
      ['{"id":"x","type":"run.completed","data":{}}', 'missing or unparseable "created_at"'],
      ['[]', 'body is not a JSON object'],
    ] as const;
    for (const [body, reason] of cases) {
      const req: IngestRequest = {
        method: 'POST',
        path: '/webhook',
        headers: { 'x-service-signature': signPayload(SECRET, t, body) },
        body,
        isBase64Encoded: false,
      };
      expect(expectQuarantined(await handleDelivery(req, makeDeps({}, observer)))).toBe(reason);
    }
    expect(observer.countOf('DeliveryQuarantined')).toBe(3);
    expect(observer.countOf('DeliveryRejected')).toBe(0);
    const kept = await drainDlq();
    expect(kept.map((m) => Buffer.from(m.body.raw_base64, 'base64').toString('utf8')).sort()).toEqual(cases.map(([body]) => body).sort());
    const withId = kept.find((m) => m.body.event_id === 'x')!;
    expect(withId.body).toEqual({
      kind: 'quarantined_delivery',
      raw_base64: Buffer.from(cases[1][0]).toString('base64'),
      reason: cases[1][1],
      received_at: new Date(START).toISOString(),
      signed_at: t,
      event_id: 'x',
    });
    expect(withId.attributes).toEqual({
      kind: 'quarantined_delivery',
      reason: cases[1][1],
      quarantined_at: new Date(START).toISOString(),
      event_id: 'x',
    });
    expect(await drainQueue()).toHaveLength(0);
  });

  /** A delivery of exactly these body bytes, signed now, with the body id as the delivery header. */
  function signedBody(body: string, id?: string): IngestRequest {
    const headers: Record<string, string> = { 'x-service-signature': signPayload(SECRET, Math.floor(clockMs / 1000), body) };
    if (id !== undefined) headers['x-service-delivery'] = id;
    return { method: 'POST', path: '/webhook', headers, body, isBase64Encoded: false };
  }

  // Each of these is signed but can never be stored: DynamoDB or SQS would refuse it on every retry,
  // so a 503 would only burn the sender's retries and count toward switching the webhook off.
  it('quarantines an id that is too long or not printable ASCII, without claiming it or naming it in attributes', async () => {
    for (const id of ['x'.repeat(257), 'e1\u0001', 'ünïcode-id', 'e1\ud800']) {
      const observer = new RecordingObserver();
      const response = await handleDelivery(request({ id }), makeDeps({}, observer));
      expect(expectQuarantined(response, JSON.stringify(id))).toMatch(/"id"/);
    }
    expect(await drainQueue()).toHaveLength(0);
    const kept = await drainDlq();
    expect(kept).toHaveLength(4);
    expect(kept.every((m) => m.body.event_id === undefined && m.attributes['event_id'] === undefined)).toBe(true);
  });

  it('quarantines a type or project id holding characters SQS refuses in an attribute', async () => {
    const cases: { type?: string; data?: Record<string, unknown> }[] = [
      { type: 'run.completed\u0000' },
      { data: { project_id: 'p-\u001b', run_id: 'r-1' } },
      { data: { project_id: 'p-\udc00', run_id: 'r-1' } },
      { data: { project_id: 'p-\uffff', run_id: 'r-1' } },
    ];
    for (const overrides of cases) {
      expectQuarantined(await handleDelivery(request(overrides), makeDeps()), JSON.stringify(overrides));
    }
    expect(await drainQueue()).toHaveLength(0);
    expect(await drainDlq()).toHaveLength(cases.length);
  });

  it('quarantines a body whose queued form would hold U+FFFE/U+FFFF, raw or JSON-escaped (base64 in the DLQ)', async () => {
    const id = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b';
    const raw = `{"id":"${id}","type":"run.completed","created_at":"2026-11-20T10:00:00Z","data":{"project_id":"p-1","run_id":"r-1","note":"\uffff"}}`;
    const escaped = raw.replace('\uffff', '\\ufffe');
    expect(escaped).toContain('"note":"\\ufffe"');
    for (const body of [raw, escaped]) {
      expect(expectQuarantined(await handleDelivery(signedBody(body, id), makeDeps()))).toBe('characters SQS refuses');
    }
    expect(await drainQueue()).toHaveLength(0);
    expect((await drainDlq()).map((m) => Buffer.from(m.body.raw_base64, 'base64').toString('utf8')).sort()).toEqual([raw, escaped].sort());
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

  it('quarantines a created_at after the signature timestamp plus the tolerance', async () => {
    const t = Math.floor(clockMs / 1000);
    const observer = new RecordingObserver();
    // A far-future created_at would make every later run of the project look superseded.
    for (const createdAt of ['2099-01-01T00:00:00Z', new Date((t + 301) * 1000).toISOString()]) {
      expectQuarantined(await handleDelivery(request({ createdAt }), makeDeps({}, observer)), createdAt);
    }
    expect(observer.entries.filter((e) => e.message === 'signed delivery quarantined in the DLQ').map((e) => e.fields['reason'])).toEqual([
      '"created_at" is after the signature timestamp',
      '"created_at" is after the signature timestamp',
    ]);
    expect(await drainQueue()).toHaveLength(0);
    // Up to t + tolerance is accepted (clock skew between the service's hosts).
    expect(parse((await handleDelivery(request({ createdAt: new Date((t + 300) * 1000).toISOString() }), makeDeps())).body).result).toBe(
      'accepted',
    );
    // The bound follows the configured tolerance.
    const strict = await handleDelivery(
      request({ createdAt: new Date((t + 61) * 1000).toISOString() }),
      makeDeps({ toleranceSeconds: 60 }),
    );
    expectQuarantined(strict);
  });

  it('accepts a retry re-signed long after the event was created', async () => {
    const req = request({ createdAt: new Date(START - 5_000).toISOString() });
    clockMs = START + 15 * 60_000; // the sender's last retry, re-signed at send time
    const retry = {
      ...req,
      headers: { ...req.headers, 'x-service-signature': signPayload(SECRET, Math.floor(clockMs / 1000), req.body!) },
    };
    expect(parse((await handleDelivery(retry, makeDeps())).body).result).toBe('accepted');
  });

  it('answers 404 for another path and 405 for another method', async () => {
    const req = request();
    const wrongPath = await handleDelivery({ ...req, path: '/hook' }, makeDeps());
    expect(wrongPath.statusCode).toBe(404);
    expect(parse(wrongPath.body).error).toBe('not_found');
    const wrongMethod = await handleDelivery({ ...req, method: 'GET' }, makeDeps());
    expect(wrongMethod.statusCode).toBe(405);
    expect(parse(wrongMethod.body).error).toBe('method_not_allowed');
    expect(wrongMethod.headers['content-type']).toBe('application/json');
    expect(wrongMethod.headers['allow']).toBe('POST');
  });

  it('answers 413 for a body over 64 KiB without verifying it', async () => {
    let verified = 0;
    const verifier = createSignatureVerifier({ secrets: [SECRET] });
    const deps = makeDeps({
      verifier: () => {
        verified++;
        return Promise.resolve(verifier);
      },
    });
    const big = 'x'.repeat(MAX_BODY_BYTES + 1);
    const response = await handleDelivery({ method: 'POST', path: '/webhook', headers: {}, body: big, isBase64Encoded: false }, deps);
    expect(response.statusCode).toBe(413);
    expect(parse(response.body).error).toBe('payload_too_large');
    const bigBase64 = Buffer.alloc(MAX_BODY_BYTES + 1).toString('base64');
    expect(
      (await handleDelivery({ method: 'POST', path: '/webhook', headers: {}, body: bigBase64, isBase64Encoded: true }, deps)).statusCode,
    ).toBe(413);
    expect(verified).toBe(0);
  });
});

describe('ingest: limits, headers and the metrics the alarms read', () => {
  it('takes a body of exactly 64 KiB, plain or base64, to verification (only a byte more is 413)', async () => {
    const exact = 'x'.repeat(MAX_BODY_BYTES);
    const plain = await handleDelivery({ method: 'POST', path: '/webhook', headers: {}, body: exact, isBase64Encoded: false }, makeDeps());
    expect(plain.statusCode).toBe(401);
    const encoded = Buffer.alloc(MAX_BODY_BYTES).toString('base64'); // 64 KiB is 1 mod 3: ends in "=="
    expect(encoded.endsWith('==')).toBe(true);
    const base64 = await handleDelivery(
      { method: 'POST', path: '/webhook', headers: {}, body: encoded, isBase64Encoded: true },
      makeDeps(),
    );
    expect(base64.statusCode).toBe(401);
  });

  it('accepts a delivery without the delivery header, or with it blank or padded (the body id is the one signed)', async () => {
    for (const header of [undefined, '', '  ']) {
      const req = request();
      const headers = { ...req.headers };
      if (header === undefined) delete headers['x-service-delivery'];
      else headers['x-service-delivery'] = header;
      expect((await handleDelivery({ ...req, headers }, makeDeps())).statusCode, `header ${JSON.stringify(header)}`).toBe(200);
    }
    const padded = request();
    const response = await handleDelivery(
      { ...padded, headers: { ...padded.headers, 'x-service-delivery': ` ${padded.id} ` } },
      makeDeps(),
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
  });

  it('counts each outcome in the metric its alarm reads, and nothing else', async () => {
    const counts = async (req: IngestRequest, overrides: Partial<IngestDeps> = {}) => {
      const observer = new RecordingObserver();
      await handleDelivery(req, makeDeps(overrides, observer));
      const names = [
        'DeliveryAccepted',
        'DeliveryIgnored',
        'RunCompletedAccepted',
        'DeliveryQuarantined',
        'SignatureRejected',
        'IngestUnavailable',
      ];
      const counted: Record<string, number> = {};
      for (const name of names) if (observer.countOf(name) !== 0) counted[name] = observer.countOf(name);
      return counted;
    };
    expect(await counts(request())).toEqual({ DeliveryAccepted: 1, RunCompletedAccepted: 1 });
    expect(await counts(request({ type: 'draft.ready', data: { project_id: 'p', asset_id: 'a', version: 2 } }))).toEqual({
      DeliveryAccepted: 1,
    });
    expect(await counts(request({ type: 'project.renamed' }))).toEqual({ DeliveryIgnored: 1 });
    expect(await counts(request({ createdAt: '1' }))).toEqual({ DeliveryQuarantined: 1 });
    expect(await counts(request({ secret: 'whsec_neither' }))).toEqual({ SignatureRejected: 1 });
    const unreadable = { verifier: () => Promise.reject(new Error('secrets manager down')) };
    expect(await counts(request(), unreadable)).toEqual({ IngestUnavailable: 1 });
    const answer = await handleDelivery(request(), makeDeps(unreadable));
    expect(answer.statusCode).toBe(503);
    expect(parse(answer.body).error).toBe('secrets_unavailable');
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
    const brokenQueue = new SqsEventQueue(sqs, `${sqsServer.url}/000000000000/no-such-queue`, dlqUrl);
    const failed = await handleDelivery(req, makeDeps({ queue: brokenQueue }));
    expect(failed.statusCode).toBe(503);
    expect(parse(failed.body).error).toBe('queue_unavailable');
    expect(failed.headers['retry-after']).toBe('30');
    clockMs += 30_000; // the sender's first retry, re-signed with a fresh timestamp
    const retry = await handleDelivery(
      { ...req, headers: { ...req.headers, 'x-service-signature': signPayload(SECRET, Math.floor(clockMs / 1000), req.body!) } },
      makeDeps(),
    );
    expect(retry.statusCode).toBe(200);
    expect(parse(retry.body).result).toBe('accepted');
    expect(await drainQueue()).toHaveLength(1);
  });

  it('answers 503 when SQS is unreachable, and the released claim lets the retry enqueue', async () => {
    const { SQSClient } = await import('@aws-sdk/client-sqs');
    const unreachable = new SQSClient({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      credentials: LOCAL_CREDENTIALS,
      maxAttempts: 1,
    });
    const req = request();
    const failed = await handleDelivery(req, makeDeps({ queue: new SqsEventQueue(unreachable, queueUrl, dlqUrl) }));
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
    const client = createDynamoClient({
      ...INGEST_CLIENT_BOUNDS,
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: LOCAL_CREDENTIALS,
    });
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
    const unreachable = new DynamoDBClient({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      credentials: LOCAL_CREDENTIALS,
      maxAttempts: 1,
    });
    const store = new DynamoDeliveryStore(unreachable, { tableName: TABLE, leaseMs: 10_000, retentionSeconds: 60 });
    const response = await handleDelivery(request(), makeDeps({ store }));
    expect(response.statusCode).toBe(503);
    expect(parse(response.body).error).toBe('store_unavailable');
    expect(await drainQueue()).toHaveLength(0);
    unreachable.destroy();
  });
});

describe('ingest: quarantine and hardening (issue 11)', () => {
  function signedBytes(bytes: Buffer, t = Math.floor(clockMs / 1000)): IngestRequest {
    return {
      method: 'POST',
      path: '/webhook',
      headers: { 'x-service-signature': signPayload(SECRET, t, bytes) },
      body: bytes.toString('base64'),
      isBase64Encoded: true,
    };
  }

  it('quarantines a signed body without an id even when a delivery header came with it (no id to compare: not a replay)', async () => {
    const request = signedBytes(Buffer.from('not json at all'));
    const response = await handleDelivery({ ...request, headers: { ...request.headers, 'x-service-delivery': 'd-1' } }, makeDeps());
    expectQuarantined(response);
    expect(await drainDlq()).toHaveLength(1);
  });

  it('answers 202 and keeps a body nested 5,000 levels deep (JSON.stringify would overflow): no 5xx', async () => {
    const deep = `{"id":"deep-1","type":"run.completed","created_at":"2026-11-20T10:00:00Z","data":{"project_id":"p","run_id":"r","x":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
    const reason = expectQuarantined(await handleDelivery(signedBytes(Buffer.from(deep)), makeDeps()));
    expect(reason).toBe('JSON nested deeper than 32 levels');
    const [kept] = await drainDlq();
    expect(Buffer.from(kept!.body.raw_base64, 'base64').toString('utf8')).toBe(deep);
    expect(kept!.body.event_id).toBe('deep-1');
  });

  it('quarantines a created_at that is not strict ISO 8601 UTC ("1", RFC 2822, offsets, impossible dates)', async () => {
    for (const createdAt of [
      '1',
      'Fri, 20 Nov 2026 10:00:00 GMT',
      '2026-11-20T10:00:00+00:00',
      '2026-11-20 10:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-11-20T24:00:00Z',
    ]) {
      expect(expectQuarantined(await handleDelivery(request({ createdAt }), makeDeps()), createdAt)).toMatch(/ISO 8601 UTC/);
    }
    for (const createdAt of ['2026-11-20T10:00:00Z', '2026-11-20T10:00:00.123Z', '2026-11-20T10:00:00.123456Z']) {
      expect(parse((await handleDelivery(request({ createdAt }), makeDeps())).body).result, createdAt).toBe('accepted');
    }
  });

  it('quarantines run.completed whose project or run id is missing (a renamed field), too long or has control characters', async () => {
    const cases: Record<string, unknown>[] = [
      { projectId: 'p-1', run_id: 'r-1' },
      { project_id: 'p'.repeat(257), run_id: 'r-1' },
      { project_id: 'p-1', run_id: 'r\u0007' },
      { project_id: 'p-1', run_id: 'r'.repeat(257) },
    ];
    for (const data of cases) {
      expect(expectQuarantined(await handleDelivery(request({ data }), makeDeps()), JSON.stringify(data))).toMatch(
        /^run\.completed .*data\.(project_id|run_id)/,
      );
    }
    expect(parse((await handleDelivery(request({ data: { project_id: 'p'.repeat(256), run_id: 'r-🚀' } }), makeDeps())).body).result).toBe(
      'accepted',
    );
  });

  it('accepts a body that starts with a UTF-8 BOM, signed over the bytes with the BOM', async () => {
    const { id, body } = deliveryBody();
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]);
    const response = await handleDelivery(
      {
        ...signedBytes(bytes),
        headers: { 'x-service-signature': signPayload(SECRET, Math.floor(clockMs / 1000), bytes), 'x-service-delivery': id },
      },
      makeDeps(),
    );
    expect(parse(response.body).result).toBe('accepted');
    // Signed without the BOM, the bytes as sent don't match: the signature covers the raw body.
    const unsigned = { ...signedBytes(bytes), headers: { 'x-service-signature': signPayload(SECRET, Math.floor(clockMs / 1000), body) } };
    expect((await handleDelivery(unsigned, makeDeps())).statusCode).toBe(401);
  });

  it('answers 503 (the sender retries) when the DLQ send fails, and nothing is claimed or enqueued', async () => {
    const brokenDlq = new SqsEventQueue(sqs, queueUrl, `${sqsServer.url}/000000000000/no-such-dlq`);
    const observer = new RecordingObserver();
    const req = request({ createdAt: '1' });
    const failed = await handleDelivery(req, makeDeps({ queue: brokenDlq }, observer));
    expect(failed.statusCode).toBe(503);
    expect(parse(failed.body).error).toBe('quarantine_unavailable');
    expect(failed.headers['retry-after']).toBe('30');
    expect(observer.countOf('IngestUnavailable')).toBe(1);
    expect(observer.countOf('DeliveryQuarantined')).toBe(0);
    expect(await drainQueue()).toHaveLength(0);
    // The retry, with the DLQ back, is kept.
    expectQuarantined(await handleDelivery(req, makeDeps()));
    expect(await drainDlq()).toHaveLength(1);
  });

  it('still answers 400 to a captured body replayed under another delivery id, even an unprocessable one', async () => {
    const req = request({ createdAt: '1' });
    const replay = { ...req, headers: { ...req.headers, 'x-service-delivery': 'other-id' } };
    expect(parse((await handleDelivery(replay, makeDeps())).body).error).toBe('delivery_id_mismatch');
    expect(await drainDlq()).toHaveLength(0);
  });

  it('logs an unauthenticated delivery header bounded to 200 characters', async () => {
    const observer = new RecordingObserver();
    const req = request({ secret: 'whsec_neither' });
    await handleDelivery({ ...req, headers: { ...req.headers, 'x-service-delivery': 'd'.repeat(10_000) } }, makeDeps({}, observer));
    const logged = observer.entries.find((e) => e.message === 'delivery rejected')!.fields['deliveryId'] as string;
    expect(logged.startsWith('d'.repeat(200))).toBe(true);
    expect(logged.length).toBeLessThan(230);
    expect(logged).toContain('10000 chars');
  });
});
