/**
 * Webhook events as the service delivers them (spec §2 "Webhook delivery body", §6 "Events"),
 * and the envelope the ingest function puts on the queue.
 */
import { isRecord } from './util';

/** Event types the bridge acts on. Other signed types are acknowledged and dropped. */
export const HANDLED_EVENT_TYPES = ['run.completed', 'draft.ready'] as const;
export type HandledEventType = (typeof HANDLED_EVENT_TYPES)[number];

/** A delivery body that passed structural validation. `data` is kept as sent (ids and counts only). */
export interface WebhookEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

export interface RunCompletedData {
  project_id: string;
  run_id: string;
  status: string;
  answers: number | null;
}

export interface DraftReadyData {
  project_id: string;
  asset_id: string;
  /** Type not fixed by the spec: rendered as given. */
  version: unknown;
}

/** What ingest sends to SQS: the verified event plus when the bridge received it. */
export interface QueuedEvent {
  event: WebhookEvent;
  received_at: string;
}

/** SQS message attribute names set by ingest (used by the CLI's DLQ selectors too). */
export const MESSAGE_ATTRIBUTE_TYPE = 'type';
export const MESSAGE_ATTRIBUTE_PROJECT = 'project_id';
export const MESSAGE_ATTRIBUTE_EVENT_ID = 'event_id';

export type EventValidation =
  | { ok: true; event: WebhookEvent }
  | { ok: false; reason: string };

function isIsoTimestamp(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && !Number.isNaN(Date.parse(value));
}

/** Ids are UUIDs (spec §2); any printable-ASCII id up to this length still fits a DynamoDB key and an SQS attribute. */
export const MAX_EVENT_ID_LENGTH = 256;
const EVENT_ID = /^[\x20-\x7e]+$/;
/** A character SQS refuses in a message body or attribute (allowed: #x9 #xA #xD #x20–#xD7FF #xE000–#xFFFD #x10000–#x10FFFF). */
const SQS_INVALID = /[^\t\n\r\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/** Whether SQS would refuse this text in a message body or attribute (lone surrogates included). */
export function hasSqsInvalidCharacter(text: string): boolean {
  return SQS_INVALID.test(text);
}

/**
 * Structural check of a parsed delivery body: `id`, `type`, `created_at` and `data` must be present,
 * and what goes into DynamoDB keys and SQS attributes must be storable there: a signed body that can
 * never be stored must get a 4xx, not a 503 the sender retries.
 */
export function validateWebhookEvent(body: unknown): EventValidation {
  if (!isRecord(body)) return { ok: false, reason: 'body is not a JSON object' };
  const { id, type, created_at, data } = body;
  if (typeof id !== 'string' || id.length === 0) return { ok: false, reason: 'missing or empty "id"' };
  if (id.length > MAX_EVENT_ID_LENGTH) return { ok: false, reason: `"id" longer than ${MAX_EVENT_ID_LENGTH} characters` };
  if (!EVENT_ID.test(id)) return { ok: false, reason: '"id" has characters outside printable ASCII' };
  if (typeof type !== 'string' || type.length === 0) return { ok: false, reason: 'missing or empty "type"' };
  if (hasSqsInvalidCharacter(type)) return { ok: false, reason: '"type" has characters SQS refuses' };
  if (!isIsoTimestamp(created_at)) return { ok: false, reason: 'missing or unparseable "created_at"' };
  if (!isRecord(data)) return { ok: false, reason: 'missing "data" object' };
  const projectId = data['project_id'];
  if (typeof projectId === 'string' && hasSqsInvalidCharacter(projectId)) return { ok: false, reason: '"data.project_id" has characters SQS refuses' };
  return { ok: true, event: { id, type, created_at, data } };
}

export function isHandledEventType(type: string): type is HandledEventType {
  return (HANDLED_EVENT_TYPES as readonly string[]).includes(type);
}

/** The project id of an event, when it carries one as a non-empty string. */
export function projectIdOf(event: WebhookEvent): string | undefined {
  const value = event.data['project_id'];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export type DataValidation<T> = { ok: true; data: T } | { ok: false; reason: string };

export function parseRunCompletedData(data: Record<string, unknown>): DataValidation<RunCompletedData> {
  const { project_id, run_id, status, answers } = data;
  if (typeof project_id !== 'string' || project_id.length === 0) return { ok: false, reason: 'run.completed without data.project_id' };
  if (typeof run_id !== 'string' || run_id.length === 0) return { ok: false, reason: 'run.completed without data.run_id' };
  return {
    ok: true,
    data: {
      project_id,
      run_id,
      status: typeof status === 'string' ? status : 'completed',
      answers: typeof answers === 'number' && Number.isFinite(answers) ? answers : null,
    },
  };
}

export function parseDraftReadyData(data: Record<string, unknown>): DataValidation<DraftReadyData> {
  const { project_id, asset_id, version } = data;
  if (typeof project_id !== 'string' || project_id.length === 0) return { ok: false, reason: 'draft.ready without data.project_id' };
  if (typeof asset_id !== 'string' || asset_id.length === 0) return { ok: false, reason: 'draft.ready without data.asset_id' };
  return { ok: true, data: { project_id, asset_id, version } };
}
