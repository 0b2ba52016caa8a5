/**
 * Ingest: one webhook delivery in, one HTTP answer out. The status codes follow the sender's retry
 * rules (spec §6): 2xx ends the delivery, 5xx/429 are retried with the same id, any other status is
 * a failure, and 15 failures in a row switch the webhook off. So: 503 only when a retry can
 * succeed (a dependency outage); 401/413 for what the service never sends (unsigned, stale,
 * oversized); and a signed delivery the bridge can't process is quarantined in the DLQ and answered
 * 202, so a change on the service's side can't switch the webhook off.
 */
import { isHandledEventType, parseSignedDelivery, projectIdOf, type WebhookEvent } from './events';
import { quarantinedDelivery, type QuarantinedDelivery } from './quarantine';
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS, INGEST_METRICS, METRIC_DIMENSIONS, type IngestMetricName } from './contracts';
import { type SignatureFailure, type SignatureVerifier } from './signature';
import type { Clock, DeliveryStore, EventQueue, Log, LogFields, Metrics } from './ports';
import { describeError } from './observability';
import { webhookTargetOf } from './connections/model';
import { tenantOf, type Tenant } from './tenancy';
import type { ConnectionWebhooks } from './connections/verifiers';

/** Bodies are ids and counts only; 64 KiB is far above any real delivery and bounds the HMAC work. */
export const MAX_BODY_BYTES = 64 * 1024;
/** The sender's first retry comes after 30 s; asking for it explicitly documents the intent. */
export const RETRY_AFTER_SECONDS = 30;
/** Unauthenticated header values are logged at most this long (a 10 KB header must not be a 10 KB log line). */
export const MAX_LOGGED_HEADER_CHARS = 200;

/** An unauthenticated header value as it may be logged: bounded, with a mark when cut. */
export function boundedHeader(value: string | undefined): string | undefined {
  if (value === undefined || value.length <= MAX_LOGGED_HEADER_CHARS) return value;
  return `${value.slice(0, MAX_LOGGED_HEADER_CHARS)}…(${value.length} chars)`;
}

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
  /** The connections' webhooks (`/webhook/<id>`, each verified with its own secrets); none = `/webhook` only. */
  connections?: ConnectionWebhooks | undefined;
  /** The verifier's tolerance (default 300 s); also bounds how far `created_at` may lie after the signature's `t`. */
  toleranceSeconds?: number;
  store: DeliveryStore;
  /** A connection's deliveries, keyed under its tenant prefix (./tenancy.ts); none = every delivery in `store`. */
  storeOf?: ((tenant: Tenant) => DeliveryStore) | undefined;
  queue: EventQueue;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}

/** Why a delivery was refused; each maps to exactly one status code in `toResponse`. */
export type Rejection =
  | { kind: 'not_found' }
  /** A connection the operator removed: not retried, so its 15 failures switch the service's webhook off (spec §6). */
  | { kind: 'connection_removed' }
  | { kind: 'method_not_allowed' }
  | { kind: 'payload_too_large' }
  | { kind: 'signature'; reason: SignatureFailure }
  | { kind: 'delivery_id_mismatch' }
  | { kind: 'in_progress'; retryAfterSeconds: number }
  | { kind: 'store_unavailable' }
  | { kind: 'queue_unavailable' }
  | { kind: 'secrets_unavailable' }
  | { kind: 'quarantine_unavailable' };

export type Acceptance = 'accepted' | 'duplicate' | 'ignored';

const ACCEPTANCE_METRIC: Record<Acceptance, IngestMetricName> = {
  accepted: INGEST_METRICS.deliveryAccepted,
  duplicate: INGEST_METRICS.deliveryDuplicate,
  ignored: INGEST_METRICS.deliveryIgnored,
};

export type IngestOutcome =
  | { ok: true; result: Acceptance }
  /** Signed but not processable: kept in the DLQ with `reason`. */
  | { ok: true; result: 'quarantined'; reason: string }
  | { ok: false; rejection: Rejection };

/** The one place that maps outcomes to HTTP answers. Bodies carry a code, never internals. */
export function toResponse(outcome: IngestOutcome): IngestResponse {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (outcome.ok && outcome.result === 'quarantined') {
    return { statusCode: 202, headers, body: JSON.stringify({ ok: true, result: 'quarantined', reason: outcome.reason }) };
  }
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
    case 'connection_removed':
      return reply(410, 'connection_removed');
    case 'method_not_allowed':
      return { ...reply(405, 'method_not_allowed'), headers: { ...headers, allow: 'POST' } };
    case 'payload_too_large':
      return reply(413, 'payload_too_large');
    case 'signature':
      return reply(401, `signature_${r.reason}`);
    case 'delivery_id_mismatch':
      return reply(400, 'delivery_id_mismatch');
    case 'in_progress':
      return withRetryAfter(reply(503, 'in_progress'), r.retryAfterSeconds);
    case 'store_unavailable':
    case 'queue_unavailable':
    case 'secrets_unavailable':
    case 'quarantine_unavailable':
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
  const deliveryId = boundedHeader(request.headers['x-service-delivery']);
  if (outcome.ok && outcome.result === 'quarantined') {
    deps.metrics.count(INGEST_METRICS.deliveryQuarantined);
    deps.log.warn('signed delivery quarantined in the DLQ', { deliveryId, reason: outcome.reason });
  } else if (outcome.ok) {
    deps.metrics.count(ACCEPTANCE_METRIC[outcome.result]);
  } else {
    const reason = outcome.rejection.kind === 'signature' ? `signature_${outcome.rejection.reason}` : outcome.rejection.kind;
    deps.metrics.count(INGEST_METRICS.deliveryRejected, 1, { [METRIC_DIMENSIONS.reason]: reason });
    if (outcome.rejection.kind === 'signature') deps.metrics.count(INGEST_METRICS.signatureRejected);
    if (reason.endsWith('_unavailable')) deps.metrics.count(INGEST_METRICS.ingestUnavailable);
    deps.log.warn('delivery rejected', { deliveryId, reason });
  }
  return toResponse(outcome);
}

/** Verifies, de-duplicates and enqueues one delivery. Never throws: every failure is an outcome. */
export async function ingestDelivery(request: IngestRequest, deps: IngestDeps): Promise<IngestOutcome> {
  const target = webhookTargetOf(request.path);
  if (target.kind === 'none' || (target.kind === 'connection' && deps.connections === undefined)) return reject({ kind: 'not_found' });
  if (request.method.toUpperCase() !== 'POST') return reject({ kind: 'method_not_allowed' });
  const rawText = request.body ?? '';
  if (bodyByteLength(rawText, request.isBase64Encoded) > MAX_BODY_BYTES) return reject({ kind: 'payload_too_large' });
  // The signature covers the bytes as sent: decode base64 first, never re-serialise the JSON.
  const rawBody = request.isBase64Encoded ? Buffer.from(rawText, 'base64') : Buffer.from(rawText, 'utf8');

  const webhook =
    target.kind === 'connection' ? await connectionWebhook(target.id, deps) : { verifier: deps.verifier, connectionId: undefined };
  if ('rejection' in webhook) return reject(webhook.rejection);
  let verify: SignatureVerifier;
  try {
    verify = await webhook.verifier();
  } catch (error) {
    deps.log.error('signing secrets could not be read', describeError(error));
    return reject({ kind: 'secrets_unavailable' });
  }
  const nowMs = deps.clock.now();
  const check = verify(request.headers['x-service-signature'], rawBody, Math.floor(nowMs / 1000));
  if (!check.ok) return reject({ kind: 'signature', reason: check.reason });

  const parsed = parseSignedDelivery(rawBody, check.timestamp, deps.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS);
  // The delivery header is not signed; the body id is. A captured body replayed under another
  // delivery id (never the service: it sends the two equal) must not slip past de-duplication.
  const headerId = request.headers['x-service-delivery']?.trim();
  const bodyId = parsed.ok ? parsed.event.id : parsed.bodyId;
  if (headerId !== undefined && headerId !== '' && bodyId !== undefined && headerId !== bodyId)
    return reject({ kind: 'delivery_id_mismatch' });
  if (!parsed.ok) {
    const delivery = quarantinedDelivery({
      raw: rawBody,
      reason: parsed.reason,
      receivedAt: new Date(nowMs).toISOString(),
      signedAt: check.timestamp,
      bodyId,
      connectionId: webhook.connectionId,
    });
    return quarantine(delivery, deps);
  }
  const event = parsed.event;
  if (!isHandledEventType(event.type)) {
    deps.log.info('signed event of an unhandled type acknowledged', { deliveryId: event.id, type: boundedHeader(event.type) });
    return { ok: true, result: 'ignored' };
  }
  return enqueueOnce(event, webhook.connectionId, nowMs, deps);
}

/** A connection's verifier, or why its webhook refuses: unknown 404, removed 410, table unreadable 503. */
async function connectionWebhook(
  id: string,
  deps: IngestDeps,
): Promise<{ verifier: () => Promise<SignatureVerifier>; connectionId: string } | { rejection: Rejection }> {
  let resolved;
  try {
    resolved = await deps.connections?.resolve(id);
  } catch (error) {
    deps.log.error('connection could not be read', { connectionId: id, ...describeError(error) });
    return { rejection: { kind: 'store_unavailable' } };
  }
  if (resolved === undefined || resolved.kind === 'unknown') return { rejection: { kind: 'not_found' } };
  if (resolved.kind === 'removed') return { rejection: { kind: 'connection_removed' } };
  return { verifier: resolved.verifier, connectionId: id };
}

function reject(rejection: Rejection): IngestOutcome {
  return { ok: false, rejection };
}

/** Keeps the delivery in the DLQ; if that fails the sender must retry (503), never a silent drop. */
async function quarantine(delivery: QuarantinedDelivery, deps: IngestDeps): Promise<IngestOutcome> {
  try {
    await deps.queue.quarantine(delivery);
  } catch (error) {
    deps.log.error('quarantine send to the DLQ failed; the sender will retry', { reason: delivery.reason, ...describeError(error) });
    return reject({ kind: 'quarantine_unavailable' });
  }
  return { ok: true, result: 'quarantined', reason: delivery.reason };
}

/** Where a delivery is deduplicated: its connection's tenant's records, or the stack's. */
function deliveriesOf(connectionId: string | undefined, deps: IngestDeps): DeliveryStore {
  return connectionId === undefined || deps.storeOf === undefined ? deps.store : deps.storeOf(tenantOf(connectionId));
}

async function enqueueOnce(event: WebhookEvent, connectionId: string | undefined, nowMs: number, deps: IngestDeps): Promise<IngestOutcome> {
  const fields = { deliveryId: event.id, type: event.type, projectId: projectIdOf(event), connectionId };
  let claim;
  try {
    claim = await deliveriesOf(connectionId, deps).claim(event.id, nowMs);
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

  if (!(await sendOrRelease(event, connectionId, claim.token, nowMs, fields, deps))) return reject({ kind: 'queue_unavailable' });

  try {
    await deliveriesOf(connectionId, deps).complete(event.id, claim.token, deps.clock.now());
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
async function sendOrRelease(
  event: WebhookEvent,
  connectionId: string | undefined,
  token: string,
  nowMs: number,
  fields: LogFields,
  deps: IngestDeps,
): Promise<boolean> {
  try {
    const receivedAt = new Date(nowMs).toISOString();
    // The stack's own webhook sends the envelope exactly as before; a connection's adds its id.
    await deps.queue.send(
      connectionId === undefined ? { event, received_at: receivedAt } : { event, received_at: receivedAt, connection: connectionId },
    );
    return true;
  } catch (error) {
    deps.log.error('queue send failed; releasing the claim so a retry can enqueue', { ...fields, ...describeError(error) });
    try {
      await deliveriesOf(connectionId, deps).release(event.id, token);
    } catch (releaseError) {
      // The lease still expires on its own, so the sender's next retry takes the record over.
      deps.log.warn('release failed; the lease will expire', { ...fields, ...describeError(releaseError) });
    }
    return false;
  }
}
