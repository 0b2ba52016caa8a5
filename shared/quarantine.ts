/**
 * Quarantined deliveries: a correctly signed delivery the bridge could not process (unknown shape,
 * an id it can't store, a renamed field...) is kept in the DLQ with its exact bytes and the reason,
 * and answered 2xx (a 4xx would count toward the sender's 15-failure switch-off).
 *
 * `bridge dlq replay` moves DLQ messages back to the main queue. The digest worker recognises this
 * envelope by `kind` (parseQuarantinedDelivery) and re-admits it with the current rules
 * (readmitQuarantined): an upgrade that can now read it processes it; otherwise it goes back to the
 * DLQ with the (new) reason.
 */
import { QUEUE_MESSAGE_KINDS, DEFAULT_SIGNATURE_TOLERANCE_SECONDS } from './contracts';
import { isHandledEventType, isStorableEventId, parseSignedDelivery, type QueuedEvent, type WebhookEvent } from './events';
import type { QuarantinedDelivery } from './ports';
import { isRecord } from './util';

export type { QuarantinedDelivery } from './ports';

/** SQS message attributes of a quarantined delivery (`event_id` only when known and storable). */
export const QUARANTINE_ATTRIBUTES = {
  kind: 'kind',
  reason: 'reason',
  quarantinedAt: 'quarantined_at',
  eventId: 'event_id',
} as const;

/** Attribute values are bounded: reasons are fixed texts, but a bound keeps that true. */
export const MAX_REASON_LENGTH = 256;

export function quarantinedDelivery(input: {
  raw: Buffer;
  reason: string;
  receivedAt: string;
  signedAt: number;
  bodyId: string | undefined;
  connectionId?: string | undefined;
}): QuarantinedDelivery {
  return {
    kind: QUEUE_MESSAGE_KINDS.quarantinedDelivery,
    raw_base64: input.raw.toString('base64'),
    reason: input.reason.slice(0, MAX_REASON_LENGTH),
    received_at: input.receivedAt,
    signed_at: input.signedAt,
    ...(isStorableEventId(input.bodyId) ? { event_id: input.bodyId } : {}),
    ...(input.connectionId !== undefined ? { connection: input.connectionId } : {}),
  };
}

/** The envelope, when a parsed queue message body is one (else undefined: some other message). */
export function parseQuarantinedDelivery(body: unknown): QuarantinedDelivery | undefined {
  if (!isRecord(body) || body['kind'] !== QUEUE_MESSAGE_KINDS.quarantinedDelivery) return undefined;
  const { raw_base64, reason, received_at, signed_at, event_id, connection } = body;
  if (typeof raw_base64 !== 'string' || typeof reason !== 'string' || typeof received_at !== 'string') return undefined;
  if (typeof signed_at !== 'number' || !Number.isSafeInteger(signed_at)) return undefined;
  return {
    kind: QUEUE_MESSAGE_KINDS.quarantinedDelivery,
    raw_base64,
    reason,
    received_at,
    signed_at,
    ...(isStorableEventId(event_id) ? { event_id } : {}),
    ...(typeof connection === 'string' ? { connection } : {}),
  };
}

export type Readmission =
  /** Processable now: handle it as the queued event ingest would have sent. */
  | { kind: 'event'; queued: QueuedEvent }
  /** Readable but of a type the bridge does not act on: acknowledge and drop, as ingest does. */
  | { kind: 'ignored'; event: WebhookEvent }
  /** Still not processable: back to the DLQ with this reason. */
  | { kind: 'still_unprocessable'; reason: string };

/** Applies the current admission rules to a quarantined delivery (the signature was checked at ingest). */
export function readmitQuarantined(delivery: QuarantinedDelivery, toleranceSeconds = DEFAULT_SIGNATURE_TOLERANCE_SECONDS): Readmission {
  const parsed = parseSignedDelivery(Buffer.from(delivery.raw_base64, 'base64'), delivery.signed_at, toleranceSeconds);
  if (!parsed.ok) return { kind: 'still_unprocessable', reason: parsed.reason };
  if (!isHandledEventType(parsed.event.type)) return { kind: 'ignored', event: parsed.event };
  const connection = delivery.connection !== undefined ? { connection: delivery.connection } : {};
  return { kind: 'event', queued: { event: parsed.event, received_at: delivery.received_at, ...connection } };
}
