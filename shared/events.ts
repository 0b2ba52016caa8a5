/**
 * Webhook events as the service delivers them (spec §2 "Webhook delivery body", §6 "Events"),
 * and the envelope the ingest function puts on the queue.
 */
import type { WebhookEvent } from './ports';
import { isRecord } from './util';

export type { QueuedEvent, WebhookEvent } from './ports';

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

/** SQS message attribute names set by ingest (used by the CLI's DLQ selectors too). */
export const MESSAGE_ATTRIBUTE_TYPE = 'type';
export const MESSAGE_ATTRIBUTE_PROJECT = 'project_id';
export const MESSAGE_ATTRIBUTE_EVENT_ID = 'event_id';
/** The tenant's label (`stack` or the connection id), as its MessageGroupId is: a record that lacks the group still names it. */
export const MESSAGE_ATTRIBUTE_TENANT = 'tenant';

export type EventValidation = { ok: true; event: WebhookEvent } | { ok: false; reason: string };

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
 * never be stored is quarantined (answered 2xx), never a 503 the sender retries. Ingest's stricter
 * admission rules are in `parseSignedDelivery`.
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
  if (typeof projectId === 'string' && hasSqsInvalidCharacter(projectId))
    return { ok: false, reason: '"data.project_id" has characters SQS refuses' };
  return { ok: true, event: { id, type, created_at, data } };
}

/** Whether `id` can be a DynamoDB key part and an SQS attribute (printable ASCII, 1..MAX_EVENT_ID_LENGTH). */
export function isStorableEventId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_EVENT_ID_LENGTH && EVENT_ID.test(id);
}

const STRICT_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** ISO 8601 in UTC exactly as `YYYY-MM-DDTHH:MM:SS(.fraction)Z`, and a real date (no Feb 30, no 24:00). */
export function isStrictUtcTimestamp(value: string): boolean {
  if (!STRICT_UTC.test(value)) return false;
  const ms = Date.parse(value);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === value.slice(0, 19);
}

/** Ids in `data` (project, run, asset) end up in DynamoDB keys and Slack text: bounded and printable. */
export const MAX_DATA_ID_LENGTH = 256;

/** C0 and C1 control characters, DEL included. */
function hasControlCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** Why a `data` id can't be stored, or undefined when it can (a non-empty string, bounded, printable). */
function dataIdProblem(value: unknown, name: string): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return `without data.${name}`;
  if ([...value].length > MAX_DATA_ID_LENGTH) return `data.${name} longer than ${MAX_DATA_ID_LENGTH} characters`;
  if (hasControlCharacter(value) || hasSqsInvalidCharacter(value)) return `data.${name} has control or unstorable characters`;
  return undefined;
}

export function isHandledEventType(type: string): type is HandledEventType {
  return Object.hasOwn(EVENT_TYPES, type);
}

/** The project id of an event, when it carries one as a non-empty string. */
export function projectIdOf(event: WebhookEvent): string | undefined {
  const value = event.data['project_id'];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export type DataValidation<T> = { ok: true; data: T } | { ok: false; reason: string };

export function parseRunCompletedData(data: Record<string, unknown>): DataValidation<RunCompletedData> {
  const { project_id, run_id, status, answers } = data;
  const problem = dataIdProblem(project_id, 'project_id') ?? dataIdProblem(run_id, 'run_id');
  if (problem !== undefined || typeof project_id !== 'string' || typeof run_id !== 'string')
    return { ok: false, reason: `run.completed ${problem ?? ''}`.trim() };
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
  const problem = dataIdProblem(project_id, 'project_id') ?? dataIdProblem(asset_id, 'asset_id');
  if (problem !== undefined || typeof project_id !== 'string' || typeof asset_id !== 'string')
    return { ok: false, reason: `draft.ready ${problem ?? ''}`.trim() };
  return { ok: true, data: { project_id, asset_id, version } };
}

/** Deeper than any real delivery (body → data → value); bounds recursion in JSON.stringify and later readers. */
export const MAX_JSON_DEPTH = 32;

/** Whether a parsed JSON value nests objects/arrays deeper than `max` (iterative: no stack to overflow). */
export function exceedsJsonDepth(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

export type SignedDeliveryParse =
  | { ok: true; event: WebhookEvent }
  /** `bodyId`: the body's `id` when it is a string (compared with the delivery header), storable or not. */
  | { ok: false; reason: string; bodyId: string | undefined };

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Ingest's admission rules for a body whose signature checked out (the signature covers the raw
 * bytes, a leading UTF-8 BOM included; the BOM is skipped only for parsing). The same rules apply
 * when a quarantined delivery is replayed (shared/quarantine.ts), so an upgrade that widens them
 * lets the replay through. `signedAtSeconds` is the signature's `t`.
 */
export function parseSignedDelivery(raw: Buffer, signedAtSeconds: number, toleranceSeconds: number): SignedDeliveryParse {
  const bytes = raw.subarray(0, 3).equals(UTF8_BOM) ? raw.subarray(3) : raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, reason: 'body is not JSON', bodyId: undefined };
  }
  const bodyId = isRecord(parsed) && typeof parsed['id'] === 'string' ? parsed['id'] : undefined;
  if (exceedsJsonDepth(parsed, MAX_JSON_DEPTH)) return { ok: false, reason: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, bodyId };
  const validation = validateWebhookEvent(parsed);
  if (!validation.ok) return { ok: false, reason: validation.reason, bodyId };
  const problem = admissionProblem(validation.event, signedAtSeconds, toleranceSeconds);
  return problem === undefined ? validation : { ok: false, reason: problem, bodyId };
}

/** Why a structurally valid event can't be admitted, or undefined when it can. */
function admissionProblem(event: WebhookEvent, signedAtSeconds: number, toleranceSeconds: number): string | undefined {
  if (!isStrictUtcTimestamp(event.created_at)) return '"created_at" is not ISO 8601 UTC (YYYY-MM-DDTHH:MM:SS[.sss]Z)';
  // The queued body is JSON.stringify of the event: it escapes control characters and lone
  // surrogates but leaves U+FFFE/U+FFFF, which SQS refuses on every retry.
  if (hasSqsInvalidCharacter(JSON.stringify(event))) return 'characters SQS refuses';
  // The service signs at send time, after creating the event (retries re-sign later), so a genuine
  // created_at is never after t. A far-future one would supersede every later run of its project.
  if (Date.parse(event.created_at) > (signedAtSeconds + toleranceSeconds) * 1000) return '"created_at" is after the signature timestamp';
  if (!isHandledEventType(event.type)) return undefined;
  const data = EVENT_TYPES[event.type].parseData(event.data);
  return data.ok ? undefined : data.reason;
}

// --- The event-type registry ---------------------------------------------------------------------

/** What each handled event type's `data` parses into: the key set is the list of handled types. */
export interface EventDataByType {
  'run.completed': RunCompletedData;
  'draft.ready': DraftReadyData;
}
export type HandledEventType = keyof EventDataByType;

export interface EventTypeSpec<T extends HandledEventType> {
  /** Checks and narrows `data`: ingest quarantines a delivery whose data fails, with the reason. */
  parseData(data: Record<string, unknown>): DataValidation<EventDataByType[T]>;
  /** Example `data` (`bridge trigger`'s default fixture); `freshId` for each id that differs per event. */
  exampleData(projectId: string, freshId: () => string): Record<string, unknown>;
}

/**
 * Every event type the bridge acts on; other signed types are acknowledged and dropped. A mapped type,
 * so a type added to EventDataByType fails `tsc` here and at its queue message kind (shared/worker/kinds.ts) and its handler on the digest queue (shared/worker/queues.ts)
 * until each is written.
 */
export const EVENT_TYPES: { readonly [T in HandledEventType]: EventTypeSpec<T> } = {
  'run.completed': {
    parseData: parseRunCompletedData,
    exampleData: (projectId, freshId) => ({ project_id: projectId, run_id: freshId(), status: 'completed', answers: 120 }),
  },
  'draft.ready': {
    parseData: parseDraftReadyData,
    exampleData: (projectId, freshId) => ({ project_id: projectId, asset_id: freshId(), version: 1 }),
  },
};

export const HANDLED_EVENT_TYPES = Object.keys(EVENT_TYPES) as readonly HandledEventType[];

/** A handled event with its parsed data, discriminated by `type`. */
export type TypedEvent = { [T in HandledEventType]: { type: T; event: WebhookEvent; data: EventDataByType[T] } }[HandledEventType];

/** The event with its data parsed by its type's parser; the reason when the type is not handled or the data fails. */
export function parseTypedEvent(event: WebhookEvent): DataValidation<TypedEvent> {
  if (!isHandledEventType(event.type)) return { ok: false, reason: `unhandled event type "${event.type}"` };
  return typedAs(event.type, event);
}

function typedAs<T extends HandledEventType>(type: T, event: WebhookEvent): DataValidation<TypedEvent> {
  const data = EVENT_TYPES[type].parseData(event.data);
  // TypeScript does not correlate T across the union: this is the entry of the same T.
  return data.ok ? { ok: true, data: { type, event, data: data.data } as TypedEvent } : data;
}
