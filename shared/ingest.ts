/**
 * Ingest: one webhook delivery in, one HTTP answer out. The status codes follow the sender's retry
 * rules (spec §6): 2xx ends the delivery, 5xx/429 are retried with the same id, any other status is
 * a permanent failure. So we answer 503 only when a retry can succeed, and 4xx when it never will.
 */
import { validateWebhookEvent, hasSqsInvalidCharacter, isHandledEventType, projectIdOf, type WebhookEvent } from './events';
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS, HTTP_PATHS, INGEST_METRICS, METRIC_DIMENSIONS, type IngestMetricName } from './contracts';
import { type SignatureFailure, type SignatureVerifier } from './signature';
import type { Clock, DeliveryStore, EventQueue, Log, LogFields, Metrics } from './ports';
import { describeError } from './observability';

export const WEBHOOK_PATH = HTTP_PATHS.webhook;
/** Bodies are ids and counts only; 64 KiB is far above any real delivery and bounds the HMAC work. */
export const MAX_BODY_BYTES = 64 * 1024;
/** The sender's first retry comes after 30 s; asking for it explicitly documents the intent. */
export const RETRY_AFTER_SECONDS = 30;

export interface IngestRequest {
  method: string;
  path: string;
  /** Header names in lower case (HTTP API lower-cases them; repeated headers arrive comma-joined). */
  headers: Readonly<Record<string, string | undefined>>;
  body: string | undefined;
  isBase64Encoded: boolean;
}

export interface IngestResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export interface IngestDeps {
  /** Resolves the verifier for the current signing secrets (they may rotate while a container lives). */
  verifier: () => Promise<SignatureVerifier>;
  /** The verifier's tolerance (default 300 s); also bounds how far `created_at` may lie after the signature's `t`. */
  toleranceSeconds?: number;
  store: DeliveryStore;
  queue: EventQueue;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}

/** Why a delivery was refused; each maps to exactly one status code in `toResponse`. */
export type Rejection =
  | { kind: 'not_found' }
  | { kind: 'method_not_allowed' }
  | { kind: 'payload_too_large' }
  | { kind: 'signature'; reason: SignatureFailure }
  | { kind: 'invalid_json' }
  | { kind: 'invalid_event'; detail: string }
  | { kind: 'delivery_id_mismatch' }
  | { kind: 'in_progress'; retryAfterSeconds: number }
  | { kind: 'store_unavailable' }
  | { kind: 'queue_unavailable' }
  | { kind: 'secrets_unavailable' };

export type Acceptance = 'accepted' | 'duplicate' | 'ignored';

const ACCEPTANCE_METRIC: Record<Acceptance, IngestMetricName> = {
  accepted: INGEST_METRICS.deliveryAccepted,
  duplicate: INGEST_METRICS.deliveryDuplicate,
  ignored: INGEST_METRICS.deliveryIgnored,
};

export type IngestOutcome = { ok: true; result: Acceptance } | { ok: false; rejection: Rejection };

/** The one place that maps outcomes to HTTP answers. Bodies carry a code, never internals. */
export function toResponse(outcome: IngestOutcome): IngestResponse {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (outcome.ok) return { statusCode: 200, headers, body: JSON.stringify({ ok: true, result: outcome.result }) };
  const r = outcome.rejection;
  const reply = (statusCode: number, error: string): IngestResponse => ({
    statusCode,
    headers,
    body: JSON.stringify({ ok: false, error }),
  });
  switch (r.kind) {
    case 'not_found':
      return reply(404, 'not_found');
    case 'method_not_allowed':
      return { ...reply(405, 'method_not_allowed'), headers: { ...headers, allow: 'POST' } };
    case 'payload_too_large':
      return reply(413, 'payload_too_large');
    case 'signature':
      return reply(401, `signature_${r.reason}`);
    case 'invalid_json':
      return reply(400, 'invalid_json');
    case 'invalid_event':
      return reply(400, 'invalid_event');
    case 'delivery_id_mismatch':
      return reply(400, 'delivery_id_mismatch');
    case 'in_progress':
      return withRetryAfter(reply(503, 'in_progress'), r.retryAfterSeconds);
    case 'store_unavailable':
    case 'queue_unavailable':
    case 'secrets_unavailable':
      return withRetryAfter(reply(503, r.kind), RETRY_AFTER_SECONDS);
  }
}

function withRetryAfter(response: IngestResponse, seconds: number): IngestResponse {
  return { ...response, headers: { ...response.headers, 'retry-after': String(Math.max(1, Math.ceil(seconds))) } };
}

/** Byte length of the body as sent, computed without decoding it (checked before any hashing). */
function bodyByteLength(body: string, isBase64Encoded: boolean): number {
  if (!isBase64Encoded) return Buffer.byteLength(body, 'utf8');
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  return Math.floor((body.length * 3) / 4) - padding;
}

export async function handleDelivery(request: IngestRequest, deps: IngestDeps): Promise<IngestResponse> {
  const outcome = await ingestDelivery(request, deps);
  const deliveryId = request.headers['x-service-delivery'];
  if (outcome.ok) {
    deps.metrics.count(ACCEPTANCE_METRIC[outcome.result]);
  } else {
    const reason = outcome.rejection.kind === 'signature' ? `signature_${outcome.rejection.reason}` : outcome.rejection.kind;
    deps.metrics.count(INGEST_METRICS.deliveryRejected, 1, { [METRIC_DIMENSIONS.reason]: reason });
    if (outcome.rejection.kind === 'signature') deps.metrics.count(INGEST_METRICS.signatureRejected);
    if (reason.endsWith('_unavailable')) deps.metrics.count(INGEST_METRICS.ingestUnavailable);
    // The detail says which check refused a signed body (fixed texts, never body content).
    const detail = outcome.rejection.kind === 'invalid_event' ? { detail: outcome.rejection.detail } : {};
    deps.log.warn('delivery rejected', { deliveryId, reason, ...detail });
  }
  return toResponse(outcome);
}

/** Verifies, de-duplicates and enqueues one delivery. Never throws: every failure is an outcome. */
export async function ingestDelivery(request: IngestRequest, deps: IngestDeps): Promise<IngestOutcome> {
  if (request.path !== WEBHOOK_PATH) return reject({ kind: 'not_found' });
  if (request.method.toUpperCase() !== 'POST') return reject({ kind: 'method_not_allowed' });
  const rawText = request.body ?? '';
  if (bodyByteLength(rawText, request.isBase64Encoded) > MAX_BODY_BYTES) return reject({ kind: 'payload_too_large' });
  // The signature covers the bytes as sent: decode base64 first, never re-serialise the JSON.
  const rawBody = request.isBase64Encoded ? Buffer.from(rawText, 'base64') : Buffer.from(rawText, 'utf8');

  let verify: SignatureVerifier;
  try {
    verify = await deps.verifier();
  } catch (error) {
    deps.log.error('signing secrets could not be read', describeError(error));
    return reject({ kind: 'secrets_unavailable' });
  }
  const nowMs = deps.clock.now();
  const check = verify(request.headers['x-service-signature'], rawBody, Math.floor(nowMs / 1000));
  if (!check.ok) return reject({ kind: 'signature', reason: check.reason });

  const accepted = signedEventOf(rawBody, check.timestamp, request.headers['x-service-delivery'], deps);
  if (!accepted.ok) return reject(accepted.rejection);
  const event = accepted.event;
  if (!isHandledEventType(event.type)) {
    deps.log.info('signed event of an unhandled type acknowledged', { deliveryId: event.id, type: event.type });
    return { ok: true, result: 'ignored' };
  }
  return enqueueOnce(event, nowMs, deps);
}

function reject(rejection: Rejection): IngestOutcome {
  return { ok: false, rejection };
}

/** The event of a body whose signature checked out, if it is one the bridge can store and trust. */
function signedEventOf(
  rawBody: Buffer,
  signedAtSeconds: number,
  deliveryHeader: string | undefined,
  deps: IngestDeps,
): { ok: true; event: WebhookEvent } | { ok: false; rejection: Rejection } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { ok: false, rejection: { kind: 'invalid_json' } };
  }
  const invalid = (detail: string) => ({ ok: false as const, rejection: { kind: 'invalid_event' as const, detail } });
  const validation = validateWebhookEvent(parsed);
  if (!validation.ok) return invalid(validation.reason);
  const event = validation.event;
  // The queued body is JSON.stringify of the event: it escapes control characters and lone
  // surrogates but leaves U+FFFE/U+FFFF, which SQS refuses on every retry.
  if (hasSqsInvalidCharacter(JSON.stringify(event))) return invalid('characters SQS refuses');
  // The service signs at send time, after creating the event (retries re-sign later), so a genuine
  // created_at is never after t. A far-future one would supersede every later run of its project.
  const toleranceSeconds = deps.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  if (Date.parse(event.created_at) > (signedAtSeconds + toleranceSeconds) * 1000) return invalid('"created_at" is after the signature timestamp');
  // The delivery header is not signed; the body id is. A captured body replayed under another
  // delivery id must not slip past de-duplication, so the two must agree.
  const headerId = deliveryHeader?.trim();
  if (headerId !== undefined && headerId !== '' && headerId !== event.id) return { ok: false, rejection: { kind: 'delivery_id_mismatch' } };
  return { ok: true, event };
}

async function enqueueOnce(event: WebhookEvent, nowMs: number, deps: IngestDeps): Promise<IngestOutcome> {
  const fields = { deliveryId: event.id, type: event.type, projectId: projectIdOf(event) };
  let claim;
  try {
    claim = await deps.store.claim(event.id, nowMs);
  } catch (error) {
    deps.log.error('delivery store failed on claim', { ...fields, ...describeError(error) });
    return { ok: false, rejection: { kind: 'store_unavailable' } };
  }
  if (claim.status === 'completed') {
    deps.log.info('duplicate delivery acknowledged', fields);
    return { ok: true, result: 'duplicate' };
  }
  if (claim.status === 'in_progress') {
    return { ok: false, rejection: { kind: 'in_progress', retryAfterSeconds: claim.retryAfterSeconds } };
  }

  if (!(await sendOrRelease(event, claim.token, nowMs, fields, deps))) return reject({ kind: 'queue_unavailable' });

  try {
    await deps.store.complete(event.id, claim.token, deps.clock.now());
  } catch (error) {
    // The event is on the queue: answering 200 is right. A retry after the lease may enqueue it
    // again; the digest worker de-duplicates on the event id.
    deps.log.warn('enqueued but could not mark completed', { ...fields, ...describeError(error) });
  }
  deps.log.info('delivery accepted', fields);
  if (event.type === 'run.completed') deps.metrics.count(INGEST_METRICS.runCompletedAccepted);
  return { ok: true, result: 'accepted' };
}

/** Sends the event to the queue; on failure gives the claim back so the sender's retry can enqueue it. */
async function sendOrRelease(event: WebhookEvent, token: string, nowMs: number, fields: LogFields, deps: IngestDeps): Promise<boolean> {
  try {
    await deps.queue.send({ event, received_at: new Date(nowMs).toISOString() });
    return true;
  } catch (error) {
    deps.log.error('queue send failed; releasing the claim so a retry can enqueue', { ...fields, ...describeError(error) });
    try {
      await deps.store.release(event.id, token);
    } catch (releaseError) {
      // The lease still expires on its own, so the sender's next retry takes the record over.
      deps.log.warn('release failed; the lease will expire', { ...fields, ...describeError(releaseError) });
    }
    return false;
  }
}
