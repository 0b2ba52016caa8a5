/**
 * Fuzzing the ingest domain (`handleDelivery`) with fast-check (fixed seed, printed): random,
 * malformed, mis-signed, deeply nested and validly signed deliveries, alone and replayed. The ports
 * never fail here, so every answer must be one of 200/202/400/401/404/405/413 (never a 5xx) with a
 * `{"ok": ...}` JSON body that carries a code and nothing internal, and nothing may be accepted,
 * enqueued or quarantined unless an independent check finds a valid signature over the exact body
 * bytes. A signed body the bridge can't process is quarantined (202, kept in the DLQ with its exact
 * bytes). A reference model predicts each answer.
 *
 * Over 10,000 deliveries go through in-memory fakes of the DeliveryStore and EventQueue ports
 * (pure logic); a smaller run goes through the real adapters on dynalite and the local SQS server.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateQueueCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { handleDelivery, MAX_BODY_BYTES, type IngestDeps, type IngestRequest, type IngestResponse } from '../../shared/ingest';
import type { DeliveryClaim, DeliveryStore, EventQueue } from '../../shared/ports';
import type { QueuedEvent } from '../../shared/events';
import type { QuarantinedDelivery } from '../../shared/quarantine';
import { createSignatureVerifier, signPayload } from '../../shared/signature';
import { isRecord } from '../../shared/util';
import { RecordingObserver } from '../support/recording-observer';
import { DynamoDeliveryStore } from '../../shared/adapters/dynamo-delivery-store';
import { SqsEventQueue } from '../../shared/adapters/sqs-event-queue';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { SqsServer } from '../../local/sqs-server';
import { testSqsClient } from '../support/sqs-client';

const SEED = 20_261_121;
const MEMORY_RUNS = 5_000;
const MIN_MEMORY_DELIVERIES = 10_000;
const ADAPTER_RUNS = 250;
const MIN_ADAPTER_DELIVERIES = 500;
const NOW_MS = Date.parse('2026-11-20T10:00:05Z');
const NOW_S = Math.floor(NOW_MS / 1000);
const TOLERANCE = 300;
const SECRETS = ['whsec_fuzz_current_Q7', 'whsec_fuzz_previous_K2'] as const;
const UNCONFIGURED = 'whsec_fuzz_other_M5';
const HANDLED = new Set(['run.completed', 'draft.ready']);
const STATUSES = new Set([200, 202, 400, 401, 404, 405, 413]);
const SIGNATURE_ERRORS = new Set(
  ['missing_header', 'malformed_header', 'no_matching_signature', 'too_old', 'too_new'].map((r) => `signature_${r}`),
);
const ERRORS = new Set(['not_found', 'method_not_allowed', 'payload_too_large', 'delivery_id_mismatch', ...SIGNATURE_ERRORS]);
const RESULTS = new Set(['accepted', 'duplicate', 'ignored']);
/** A few fixed event ids, so that deliveries of one run (and of earlier runs) collide. */
const ID_POOL = ['0d4c4f7e-1f0a-4c33-9a55-0c2b1d7e9a01', '5b1e9f3a-7c2d-4e8f-a1b0-3c4d5e6f7a02', 'a7e3c1d9-2b4f-4a6e-8c0d-1e2f3a4b5c03'];

console.log(`ingest fuzz: fast-check seed ${SEED}`);

// ---------------------------------------------------------------------------------------------
// In-memory ports (the fuzz never makes them fail)
// ---------------------------------------------------------------------------------------------

class MemoryDeliveryStore implements DeliveryStore {
  private readonly records = new Map<string, { state: 'in_progress' | 'completed'; token: string; leaseUntil: number }>();
  private tokens = 0;

  claim(eventId: string, nowMs: number): Promise<DeliveryClaim> {
    const existing = this.records.get(eventId);
    if (existing === undefined || (existing.state === 'in_progress' && existing.leaseUntil < nowMs)) {
      const token = `token-${++this.tokens}`;
      this.records.set(eventId, { state: 'in_progress', token, leaseUntil: nowMs + 10_000 });
      return Promise.resolve({ status: 'claimed', token });
    }
    if (existing.state === 'completed') return Promise.resolve({ status: 'completed' });
    return Promise.resolve({ status: 'in_progress', retryAfterSeconds: Math.max(1, Math.ceil((existing.leaseUntil - nowMs) / 1000)) });
  }

  complete(eventId: string, token: string): Promise<void> {
    const record = this.records.get(eventId);
    if (record?.token === token) record.state = 'completed';
    return Promise.resolve();
  }

  release(eventId: string, token: string): Promise<void> {
    if (this.records.get(eventId)?.token === token) this.records.delete(eventId);
    return Promise.resolve();
  }
}

class MemoryEventQueue implements EventQueue {
  readonly sent: QueuedEvent[] = [];
  readonly quarantined: QuarantinedDelivery[] = [];
  send(message: QueuedEvent): Promise<void> {
    this.sent.push(structuredClone(message));
    return Promise.resolve();
  }
  quarantine(delivery: QuarantinedDelivery): Promise<void> {
    this.quarantined.push(structuredClone(delivery));
    return Promise.resolve();
  }
}

// ---------------------------------------------------------------------------------------------
// Generated deliveries
// ---------------------------------------------------------------------------------------------

/**
 * JSON text of a generated body; a `data.__deep` count becomes an array nested that deep, written
 * as text (a nested value that deep would overflow JSON.stringify here too).
 */
function serialise(value: Record<string, unknown>, space: string | number | undefined): string {
  return JSON.stringify(value, null, space).replace(
    /"__deep":\s*(\d+)/,
    (_all, n: string) => `"deep":${'['.repeat(Number(n))}${']'.repeat(Number(n))}`,
  );
}

interface Payload {
  bytes: Buffer;
  /** The body's `id` when it has a string one (for the delivery header). */
  id: string | undefined;
}

const eventId = fc.oneof({ arbitrary: fc.constantFrom(...ID_POOL), weight: 1 }, { arbitrary: fc.uuid(), weight: 3 });

const eventPayload: fc.Arbitrary<Payload> = fc
  .record({
    id: fc.oneof({ arbitrary: eventId, weight: 8 }, { arbitrary: fc.constantFrom<unknown>('', 42, null, undefined, ['x']), weight: 1 }),
    type: fc.oneof(
      { arbitrary: fc.constantFrom('run.completed', 'draft.ready'), weight: 6 },
      { arbitrary: fc.constantFrom<unknown>('project.renamed', 'RUN.COMPLETED', '', 7, undefined), weight: 2 },
      { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
    ),
    created_at: fc.oneof(
      { arbitrary: fc.constantFrom('2026-11-20T10:00:00Z', '2026-11-20T09:59:59.123Z'), weight: 6 },
      {
        arbitrary: fc.constantFrom<unknown>(
          'yesterday',
          '',
          0,
          null,
          undefined,
          '2026-13-45T99:00:00Z',
          '2026-11-20T10:00:00.123+02:00',
          '1',
          'Fri, 20 Nov 2026 10:00:00 GMT',
        ),
        weight: 1,
      },
    ),
    data: fc.oneof(
      {
        arbitrary: fc.record({
          project_id: fc.uuid(),
          run_id: fc.uuid(),
          asset_id: fc.uuid(),
          status: fc.constant('completed'),
          answers: fc.nat(1000),
          note: fc.string({ unit: 'grapheme', maxLength: 30 }),
        }),
        weight: 6,
      },
      // A renamed field, an id too long to store, or nesting far deeper than any JSON.stringify can take.
      { arbitrary: fc.record({ projectId: fc.uuid(), run_id: fc.uuid() }), weight: 1 },
      { arbitrary: fc.record({ project_id: fc.constant('p'.repeat(300)), run_id: fc.uuid(), asset_id: fc.uuid() }), weight: 1 },
      {
        arbitrary: fc.integer({ min: 1, max: 6_000 }).map((depth) => ({ project_id: 'p', run_id: 'r', asset_id: 'a', __deep: depth })),
        weight: 1,
      },
      { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
    ),
    space: fc.constantFrom<undefined | number | string>(undefined, undefined, 2, '\t'),
    trailer: fc.constantFrom('', '', '\n', '\r\n', ' '),
    bom: fc.constantFrom('', '', '', '\ufeff'),
  })
  .map((e) => {
    const body: Record<string, unknown> = {};
    for (const key of ['id', 'type', 'created_at', 'data'] as const) if (e[key] !== undefined) body[key] = e[key];
    const text = e.bom + serialise(body, e.space) + e.trailer;
    return { bytes: Buffer.from(text, 'utf8'), id: typeof e.id === 'string' ? e.id : undefined };
  });

const payload: fc.Arbitrary<Payload> = fc.oneof(
  { arbitrary: eventPayload, weight: 10 },
  {
    arbitrary: fc
      .tuple(eventPayload, fc.nat())
      .map(([p, n]) => ({ bytes: p.bytes.subarray(0, p.bytes.length === 0 ? 0 : n % p.bytes.length), id: p.id })),
    weight: 2,
  },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ bytes: Buffer.from(JSON.stringify(v), 'utf8'), id: undefined })), weight: 2 },
  { arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => ({ bytes: Buffer.from(b), id: undefined })), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 300 }).map((s) => ({ bytes: Buffer.from(s, 'utf8'), id: undefined })), weight: 1 },
  {
    arbitrary: fc.integer({ min: 1, max: 2_000 }).map((extra) => ({ bytes: Buffer.alloc(MAX_BODY_BYTES + extra, 0x78), id: undefined })),
    weight: 1,
  },
);

const hex64 = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 });

const signing = fc.record({
  kind: fc.oneof(
    { arbitrary: fc.constant('valid' as const), weight: 6 },
    {
      arbitrary: fc.constantFrom(
        'wrong_secret' as const,
        'stale' as const,
        'early' as const,
        'other_bytes' as const,
        'random' as const,
        'absent' as const,
        'random_canonical' as const,
      ),
      weight: 4,
    },
    { arbitrary: fc.constant('mutated' as const), weight: 3 },
  ),
  secret: fc.constantFrom(...SECRETS),
  skew: fc.integer({ min: -TOLERANCE, max: TOLERANCE }),
  outside: fc.integer({ min: TOLERANCE + 1, max: 100_000 }),
  mutation: fc.constantFrom('flip', 'truncate', 'upper_t', 'upper_hex', 'space', 'duplicate', 'insert', 'double_comma', 'reorder'),
  at: fc.nat(),
  bit: fc.integer({ min: 0, max: 15 }),
  insert: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 2 }),
  random: fc.string({ unit: 'binary', maxLength: 120 }),
  randomHex: hex64,
});

type Signing = typeof signing extends fc.Arbitrary<infer T> ? T : never;

function mutate(header: string, s: Signing): string {
  const i = s.at % (header.length + 1);
  switch (s.mutation) {
    case 'flip': {
      const j = s.at % header.length;
      return header.slice(0, j) + String.fromCharCode(header.charCodeAt(j) ^ (1 << s.bit)) + header.slice(j + 1);
    }
    case 'truncate':
      return header.slice(0, i);
    case 'upper_t':
      return header.replace('t=', 'T=');
    case 'upper_hex':
      return header.replace(/v1=([0-9a-f]+)/, (_all, h: string) => `v1=${h.toUpperCase()}`);
    case 'space':
      return `${header.slice(0, i)} ${header.slice(i)}`;
    case 'duplicate':
      return `${header},${header}`;
    case 'insert':
      return header.slice(0, i) + s.insert + header.slice(i);
    case 'double_comma':
      return `${header.slice(0, i)},,${header.slice(i)}`;
    case 'reorder':
      return header.split(',').reverse().join(',');
  }
}

function signatureFor(s: Signing, signed: Buffer): string | undefined {
  switch (s.kind) {
    case 'valid':
      return signPayload(s.secret, NOW_S + s.skew, signed);
    case 'wrong_secret':
      return signPayload(UNCONFIGURED, NOW_S + s.skew, signed);
    case 'stale':
      return signPayload(s.secret, NOW_S - s.outside, signed);
    case 'early':
      return signPayload(s.secret, NOW_S + s.outside, signed);
    case 'other_bytes':
      return signPayload(s.secret, NOW_S + s.skew, Buffer.concat([signed, Buffer.from(' ')]));
    case 'mutated':
      return mutate(signPayload(s.secret, NOW_S + s.skew, signed), s);
    case 'random':
      return s.random;
    case 'absent':
      return undefined;
    case 'random_canonical':
      return `t=${NOW_S + s.skew},v1=${s.randomHex}`;
  }
}

const delivery: fc.Arbitrary<IngestRequest> = fc
  .record({
    method: fc.oneof(
      { arbitrary: fc.constant('POST'), weight: 12 },
      { arbitrary: fc.constantFrom('post', 'Post', 'GET', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', ''), weight: 1 },
      { arbitrary: fc.string({ maxLength: 8 }), weight: 1 },
    ),
    path: fc.oneof(
      { arbitrary: fc.constant('/webhook'), weight: 12 },
      { arbitrary: fc.constantFrom('/webhook/', '/Webhook', '/hook', '/', '', '/prod/webhook', '/webhook?x=1'), weight: 1 },
      { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
    ),
    payload,
    transport: fc.oneof(
      { arbitrary: fc.constant('text' as const), weight: 8 },
      { arbitrary: fc.constant('base64' as const), weight: 3 },
      { arbitrary: fc.constantFrom('garbage_base64' as const, 'no_body' as const), weight: 1 },
    ),
    garbage: fc.string({ maxLength: 80 }),
    signing,
    signatureHeaderName: fc.oneof(
      { arbitrary: fc.constant('x-service-signature'), weight: 20 },
      { arbitrary: fc.constant('X-Service-Signature'), weight: 1 },
    ),
    deliveryHeader: fc.oneof(
      { arbitrary: fc.constant('same' as const), weight: 6 },
      { arbitrary: fc.constantFrom('absent' as const, 'padded' as const, 'empty' as const, 'other' as const), weight: 2 },
    ),
    otherId: fc.uuid(),
    extraHeaders: fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 2 }),
  })
  .map((d) => {
    let body: string | undefined;
    let signed: Buffer;
    switch (d.transport) {
      case 'text':
        body = d.payload.bytes.toString('utf8');
        signed = Buffer.from(body, 'utf8');
        break;
      case 'base64':
        body = d.payload.bytes.toString('base64');
        signed = d.payload.bytes;
        break;
      case 'garbage_base64':
        body = d.garbage;
        signed = d.payload.bytes;
        break;
      case 'no_body':
        body = undefined;
        signed = Buffer.alloc(0);
        break;
    }
    const headers: Record<string, string | undefined> = {
      ...d.extraHeaders,
      'content-type': 'application/json',
      'user-agent': 'Service-Webhooks/1',
    };
    const signature = signatureFor(d.signing, signed);
    if (signature !== undefined) headers[d.signatureHeaderName] = signature;
    const id = d.payload.id;
    if (d.deliveryHeader === 'same' && id !== undefined) headers['x-service-delivery'] = id;
    if (d.deliveryHeader === 'padded' && id !== undefined) headers['x-service-delivery'] = `  ${id} `;
    if (d.deliveryHeader === 'empty') headers['x-service-delivery'] = '';
    if (d.deliveryHeader === 'other') headers['x-service-delivery'] = d.otherId;
    return { method: d.method, path: d.path, headers, body, isBase64Encoded: d.transport === 'base64' || d.transport === 'garbage_base64' };
  });

/** One run: some deliveries, then (sometimes) an exact replay of the first, as the sender retries. */
const deliveries = fc
  .tuple(fc.array(delivery, { minLength: 1, maxLength: 3 }), fc.boolean())
  .map(([list, replay]) => (replay ? [...list, list[0]!] : list));

// ---------------------------------------------------------------------------------------------
// Reference model
// ---------------------------------------------------------------------------------------------

function rawBytes(request: IngestRequest): Buffer {
  const text = request.body ?? '';
  return request.isBase64Encoded ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
}

/**
 * Independent signature check: a `t` entry within the tolerance and a `v1` entry that is the
 * HMAC-SHA256 of "<t>." + these bytes under a configured secret (entries split on commas,
 * whitespace around keys and values ignored, hex in either case).
 */
function validlySigned(header: string | undefined, bytes: Buffer): boolean {
  if (header === undefined) return false;
  const pairs = header.split(',').flatMap((raw) => {
    const eq = raw.indexOf('=');
    return eq < 0 ? [] : [[raw.slice(0, eq).trim(), raw.slice(eq + 1).trim()] as const];
  });
  const signatures = new Set(pairs.filter(([k]) => k === 'v1').map(([, v]) => v.toLowerCase()));
  return pairs.some(([k, v]) => {
    if (k !== 't' || !/^\d+$/.test(v)) return false;
    const t = Number(v);
    if (Math.abs(NOW_S - t) > TOLERANCE) return false;
    return SECRETS.some((secret) => signatures.has(createHmac('sha256', secret).update(`${t}.`).update(bytes).digest('hex')));
  });
}

/** Depth of nesting of a parsed JSON value (iterative). */
function depthOf(value: unknown): number {
  let max = 0;
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    max = Math.max(max, depth);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return max;
}

const STRICT_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
const storableId = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 256 && /^[\x20-\x7e]+$/.test(v);
const dataId = (v: unknown) =>
  typeof v === 'string' && v.length > 0 && [...v].length <= 256 && [...v].every((c) => c >= ' ' && (c < '\u007f' || c > '\u009f'));

/** Whether a parsed body is an event the bridge can process (all generated times are before the signature's t). */
function processable(parsed: unknown): parsed is { id: string; type: string; created_at: string; data: Record<string, unknown> } {
  if (!isRecord(parsed) || depthOf(parsed) > 32) return false;
  const { id, type, created_at, data } = parsed;
  if (!storableId(id) || typeof type !== 'string' || type === '' || !isRecord(data)) return false;
  if (typeof created_at !== 'string' || !STRICT_UTC.test(created_at) || Number.isNaN(Date.parse(created_at))) return false;
  if (type === 'run.completed') return dataId(data['project_id']) && dataId(data['run_id']);
  if (type === 'draft.ready') return dataId(data['project_id']) && dataId(data['asset_id']);
  return true;
}

/** The answer to a validly signed body: mismatch 400, else quarantined 202, else 200. */
function admit(
  bytes: Buffer,
  headerId: string | undefined,
  acceptedIds: ReadonlySet<string>,
): { outcome: string; event: Prediction['event'] } {
  const bom = bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]));
  let parsed: unknown;
  try {
    parsed = JSON.parse((bom ? bytes.subarray(3) : bytes).toString('utf8'));
  } catch {
    return { outcome: '202:quarantined', event: undefined };
  }
  const bodyId = isRecord(parsed) && typeof parsed['id'] === 'string' ? parsed['id'] : undefined;
  if (headerId !== undefined && headerId !== '' && bodyId !== undefined && headerId !== bodyId)
    return { outcome: '400:delivery_id_mismatch', event: undefined };
  if (!processable(parsed)) return { outcome: '202:quarantined', event: undefined };
  const event = { id: parsed.id, type: parsed.type, created_at: parsed.created_at, data: parsed.data };
  if (!HANDLED.has(event.type)) return { outcome: '200:ignored', event };
  return { outcome: acceptedIds.has(event.id) ? '200:duplicate' : '200:accepted', event };
}

interface Prediction {
  /** Outcomes allowed, as "<status>:<result or error>"; "401:signature" stands for any signature error. */
  allowed: Set<string>;
  signed: boolean;
  event: { id: string; type: string; created_at: string; data: Record<string, unknown> } | undefined;
}

function predict(request: IngestRequest, acceptedIds: ReadonlySet<string>): Prediction {
  const none = (outcome: string): Prediction => ({ allowed: new Set([outcome]), signed: false, event: undefined });
  if (request.path !== '/webhook') return none('404:not_found');
  if (request.method.toUpperCase() !== 'POST') return none('405:method_not_allowed');
  const bytes = rawBytes(request);
  if (bytes.length > MAX_BODY_BYTES) return none('413:payload_too_large');
  const header = request.headers['x-service-signature'];
  if (!validlySigned(header, bytes)) return none('401:signature');

  const { outcome, event } = admit(bytes, request.headers['x-service-delivery']?.trim(), acceptedIds);
  // The service's own header form must give exactly this; other forms may also be refused (401).
  const canonical = header !== undefined && /^t=\d{1,15},v1=[0-9a-f]{64}$/.test(header);
  return { allowed: new Set(canonical ? [outcome] : [outcome, '401:signature']), signed: true, event };
}

/**
 * Checks the shape of an answer and returns it as "<status>:<result or error>". Plain node:assert on
 * this path: it runs for every one of the 10,000+ deliveries, and each vitest `expect` costs a
 * fraction of a millisecond of bookkeeping (seconds over the run).
 */
function checkResponse(response: IngestResponse): string {
  const status = response.statusCode;
  assert.ok(STATUSES.has(status), `unexpected status ${status}`);
  assert.equal(response.headers['content-type'], 'application/json');
  assert.equal(response.headers['retry-after'], undefined);
  if (status === 405) assert.equal(response.headers['allow'], 'POST');
  assert.ok(response.body.length < (status === 202 ? 200 : 100), `a ${status} body of ${response.body.length} characters`);
  const body = JSON.parse(response.body) as unknown;
  assert.ok(isRecord(body), `a body that is not an object: ${response.body}`);
  const answer = body;
  if (status === 202) {
    assert.deepEqual(Object.keys(answer).sort(), ['ok', 'reason', 'result']);
    assert.equal(answer['ok'], true);
    assert.equal(answer['result'], 'quarantined');
    return '202:quarantined';
  }
  if (status === 200) {
    assert.deepEqual(Object.keys(answer).sort(), ['ok', 'result']);
    assert.equal(answer['ok'], true);
    assert.ok(RESULTS.has(answer['result'] as string), `unexpected result ${String(answer['result'])}`);
    return `200:${answer['result'] as string}`;
  }
  assert.deepEqual(Object.keys(answer).sort(), ['error', 'ok']);
  assert.equal(answer['ok'], false);
  const error = answer['error'] as string;
  assert.ok(ERRORS.has(error), `unexpected error ${error}`);
  if (SIGNATURE_ERRORS.has(error)) {
    assert.equal(status, 401);
    return '401:signature';
  }
  return `${status}:${error}`;
}

function depsWith(store: DeliveryStore, queue: EventQueue, observer: RecordingObserver): IngestDeps {
  const verifier = createSignatureVerifier({ secrets: SECRETS, toleranceSeconds: TOLERANCE });
  return { verifier: () => Promise.resolve(verifier), store, queue, clock: { now: () => NOW_MS }, log: observer, metrics: observer };
}

/** Sends one delivery and checks it against the model; returns the accepted event id, if any. */
async function deliverAndCheck(
  request: IngestRequest,
  deps: IngestDeps,
  acceptedIds: Set<string>,
): Promise<{ outcome: string; acceptedId: string | undefined }> {
  const prediction = predict(request, acceptedIds);
  const response = await handleDelivery(request, deps);
  const outcome = checkResponse(response);
  if (!prediction.allowed.has(outcome)) {
    throw new Error(
      `answered ${outcome}, expected one of ${[...prediction.allowed].join(' | ')} for ${JSON.stringify({ ...request, body: request.body?.slice(0, 200) })}`,
    );
  }
  // Nothing is acknowledged unless it was validly signed.
  if (outcome.startsWith('200:') || outcome.startsWith('202:') || outcome.startsWith('400:'))
    assert.ok(prediction.signed, `${outcome} for a delivery without a valid signature`);
  if (outcome === '200:accepted') {
    acceptedIds.add(prediction.event!.id);
    return { outcome, acceptedId: prediction.event!.id };
  }
  return { outcome, acceptedId: undefined };
}

function expectNoSecretsLogged(observer: RecordingObserver): void {
  const logged = JSON.stringify(observer.entries);
  for (const secret of [...SECRETS, UNCONFIGURED]) expect(logged).not.toContain(secret);
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

describe('ingest fuzz: pure logic with in-memory ports', () => {
  it(`answers every delivery as the model predicts (${MIN_MEMORY_DELIVERIES}+ deliveries)`, async () => {
    const outcomes = new Map<string, number>();
    let count = 0;
    await fc.assert(
      fc.asyncProperty(deliveries, async (requests) => {
        const store = new MemoryDeliveryStore();
        const queue = new MemoryEventQueue();
        const observer = new RecordingObserver();
        const deps = depsWith(store, queue, observer);
        const acceptedIds = new Set<string>();
        const enqueued: string[] = [];
        for (const request of requests) {
          const before = queue.sent.length;
          const quarantinedBefore = queue.quarantined.length;
          const { outcome, acceptedId } = await deliverAndCheck(request, deps, acceptedIds);
          count += 1;
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          // Quarantined: exactly one DLQ message holding the exact signed bytes; otherwise none.
          assert.equal(queue.quarantined.length, quarantinedBefore + (outcome === '202:quarantined' ? 1 : 0));
          if (outcome === '202:quarantined')
            assert.ok(
              Buffer.from(queue.quarantined[quarantinedBefore]!.raw_base64, 'base64').equals(rawBytes(request)),
              'quarantined bytes differ',
            );
          if (acceptedId === undefined) {
            assert.equal(queue.sent.length, before);
          } else {
            // Exactly one message, carrying the signed event as sent and the receive time.
            assert.equal(queue.sent.length, before + 1);
            const message = queue.sent[before]!;
            expect(message.event).toEqual(predict(request, new Set()).event);
            assert.equal(message.received_at, new Date(NOW_MS).toISOString());
            enqueued.push(acceptedId);
          }
        }
        expect(new Set(enqueued).size).toBe(enqueued.length);
        expectNoSecretsLogged(observer);
      }),
      { seed: SEED, numRuns: MEMORY_RUNS },
    );
    console.log(`ingest fuzz (in-memory ports): ${count} deliveries; outcomes ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`);
    expect(count).toBeGreaterThanOrEqual(MIN_MEMORY_DELIVERIES);
    // The generator reaches every branch.
    for (const outcome of [
      '200:accepted',
      '200:duplicate',
      '200:ignored',
      '202:quarantined',
      '400:delivery_id_mismatch',
      '401:signature',
      '404:not_found',
      '405:method_not_allowed',
      '413:payload_too_large',
    ]) {
      expect(outcomes.get(outcome) ?? 0, outcome).toBeGreaterThan(0);
    }
  }, 300_000); // 10,000+ deliveries: minutes on a loaded machine
});

describe('ingest fuzz: real adapters on dynalite and the local SQS server', () => {
  const TABLE = 'bridge-fuzz';
  let dynamo: LocalDynamo;
  let sqsServer: SqsServer;
  let sqs: SQSClient;
  let queueUrl: string;
  let dlqUrl: string;

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    await ensureBridgeTable(dynamo.client, TABLE);
    sqsServer = await SqsServer.start();
    sqs = testSqsClient(sqsServer.url);
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'fuzz-events', Attributes: { VisibilityTimeout: '300' } }))).QueueUrl!;
    dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'fuzz-dlq', Attributes: { VisibilityTimeout: '300' } }))).QueueUrl!;
  });

  afterAll(async () => {
    sqs.destroy();
    await sqsServer.close();
    await dynamo.close();
  });

  it(`answers as the model predicts and enqueues each accepted event once (${MIN_ADAPTER_DELIVERIES}+ deliveries)`, async () => {
    const store = new DynamoDeliveryStore(dynamo.client, { tableName: TABLE, leaseMs: 10_000, retentionSeconds: 3 * 86400 });
    const queue = new SqsEventQueue(sqs, queueUrl, dlqUrl);
    const observer = new RecordingObserver();
    const deps = depsWith(store, queue, observer);
    // The table outlives each run, so the model's memory of accepted ids does too.
    const acceptedIds = new Set<string>();
    let count = 0;
    await fc.assert(
      fc.asyncProperty(deliveries, async (requests) => {
        for (const request of requests) {
          await deliverAndCheck(request, deps, acceptedIds);
          count += 1;
        }
      }),
      { seed: SEED + 1, numRuns: ADAPTER_RUNS },
    );
    expectNoSecretsLogged(observer);

    const queued: string[] = [];
    for (;;) {
      const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
      const messages = received.Messages ?? [];
      if (messages.length === 0) break;
      for (const message of messages) queued.push((JSON.parse(message.Body ?? '{}') as QueuedEvent).event.id);
    }
    console.log(`ingest fuzz (dynalite + local SQS): ${count} deliveries, ${acceptedIds.size} accepted and enqueued`);
    expect(count).toBeGreaterThanOrEqual(MIN_ADAPTER_DELIVERIES);
    expect(acceptedIds.size).toBeGreaterThan(0);
    // Every accepted event is on the queue exactly once, and nothing else is.
    expect([...queued].sort()).toEqual([...acceptedIds].sort());
  }, 300_000);
});
