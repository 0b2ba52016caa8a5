// SQS messages on the wire: what a send builds, what a receive renders, receipt handles and batch entries.
import { randomBytes, randomUUID } from 'node:crypto';
import { SqsError, invalidParameter, receiptHandleIsInvalid } from './errors';
import { type JsonObject, optInt, optObject, optObjectArray, optString, reqString } from './input';
import { type MessageAttribute, md5Hex, md5OfMessageAttributes } from './md5';
import { DEFAULTS, type Queue, type ReceiveRequest, type StoredMessage } from './queue';
import { isRecord } from '../../shared/util';

export interface BuiltMessage {
  readonly stored: StoredMessage;
  readonly delaySeconds: number;
  /** Body plus attribute names, types and values, as SQS counts message size. */
  readonly size: number;
}

const BATCH_ID = /^[A-Za-z0-9_-]{1,80}$/;
const ATTRIBUTE_NAME = /^[A-Za-z0-9_.-]{1,256}$/;
const DATA_TYPE = /^(String|Number|Binary)(\..{1,250})?$/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
// Characters SQS accepts in a body or string attribute (XML 1.0 set).
const INVALID_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const MAX_BATCH = 10;
/** 1–128 letters, digits and ASCII punctuation, as SQS takes it on FIFO and (fair) standard queues alike. */
const MESSAGE_GROUP_ID = /^[\x21-\x7e]{1,128}$/;

export function buildMessage(queue: Queue, input: JsonObject, bodyKey: string): BuiltMessage {
  const body = reqString(input, bodyKey);
  if (INVALID_CHARACTER.test(body)) {
    throw new SqsError('InvalidMessageContents', 'Invalid binary character in message body.');
  }
  const delaySeconds = optInt(input, 'DelaySeconds', 0, 900) ?? Number(queue.attributes.get('DelaySeconds') ?? 0);
  const attributes = parseMessageAttributes(optObject(input, 'MessageAttributes'));
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, attribute] of attributes) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(attribute.DataType, 'utf8');
    size += attribute.BinaryValue?.length ?? Buffer.byteLength(attribute.StringValue ?? '', 'utf8');
  }
  const limit = Number(queue.attributes.get('MaximumMessageSize') ?? DEFAULTS.MaximumMessageSize);
  if (size > limit) {
    throw invalidParameter(bodyKey, '(message)', `Message must be shorter than ${limit} bytes.`);
  }
  const messageGroupId = optString(input, 'MessageGroupId');
  if (messageGroupId !== undefined && !MESSAGE_GROUP_ID.test(messageGroupId)) {
    throw invalidParameter(
      'MessageGroupId',
      messageGroupId,
      'MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.',
    );
  }
  const now = Date.now();
  const stored: StoredMessage = {
    body,
    md5OfBody: md5Hex(body),
    attributes,
    md5OfAttributes: md5OfMessageAttributes(attributes),
    ...(messageGroupId === undefined ? {} : { messageGroupId }),
    ...freshDelivery(now),
  };
  return { stored, delaySeconds, size };
}

/** What a message sent (or re-sent by a move task) starts with: a new id, never received, visible now. */
export function freshDelivery(now: number) {
  return {
    messageId: randomUUID(),
    sentTimestamp: now,
    visibleAt: now,
    inFlight: false,
    receiveCount: 0,
    firstReceiveTimestamp: undefined,
    receiptHandle: undefined,
    deadLetterSourceArn: undefined,
  };
}

export function sendResult(message: StoredMessage): JsonObject {
  const out: JsonObject = { MessageId: message.messageId, MD5OfMessageBody: message.md5OfBody };
  if (message.md5OfAttributes !== undefined) out.MD5OfMessageAttributes = message.md5OfAttributes;
  return out;
}

export function render(message: StoredMessage, request: ReceiveRequest, senderId: string): JsonObject {
  const out: JsonObject = {
    MessageId: message.messageId,
    ReceiptHandle: message.receiptHandle,
    MD5OfBody: message.md5OfBody,
    Body: message.body,
  };
  const wanted = new Set(request.systemAttributeNames);
  const all = wanted.has('All');
  const values: Record<string, string | undefined> = {
    SenderId: senderId,
    SentTimestamp: String(message.sentTimestamp),
    ApproximateReceiveCount: String(message.receiveCount),
    ApproximateFirstReceiveTimestamp: message.firstReceiveTimestamp === undefined ? undefined : String(message.firstReceiveTimestamp),
    DeadLetterQueueSourceArn: message.deadLetterSourceArn,
    MessageGroupId: message.messageGroupId,
  };
  const system = Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => (all || wanted.has(entry[0])) && entry[1] !== undefined),
  );
  if (Object.keys(system).length > 0) out.Attributes = system;

  const selected = new Map<string, MessageAttribute>();
  for (const [name, attribute] of message.attributes) {
    if (attributeSelected(name, request.messageAttributeNames)) selected.set(name, attribute);
  }
  if (selected.size > 0) {
    // The digest covers the attributes returned, which is what SDKs check it against.
    out.MD5OfMessageAttributes = message.attributes.size === selected.size ? message.md5OfAttributes : md5OfMessageAttributes(selected);
    const rendered: Record<string, JsonObject> = {};
    for (const [name, attribute] of selected) {
      rendered[name] =
        attribute.BinaryValue !== undefined
          ? { DataType: attribute.DataType, BinaryValue: attribute.BinaryValue.toString('base64') }
          : { DataType: attribute.DataType, StringValue: attribute.StringValue };
    }
    out.MessageAttributes = rendered;
  }
  return out;
}

export function newReceiptHandle(queue: Queue, message: StoredMessage): string {
  const token = randomBytes(12).toString('hex');
  return Buffer.from(JSON.stringify({ q: queue.name, m: message.messageId, t: token }), 'utf8').toString('base64');
}

/** Decodes a handle; garbage, or a handle for another queue, is ReceiptHandleIsInvalid. */
export function parseReceiptHandle(queue: Queue, handle: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(handle, 'base64').toString('utf8'));
  } catch {
    throw receiptHandleIsInvalid(handle);
  }
  if (!isRecord(parsed) || typeof parsed.m !== 'string' || typeof parsed.t !== 'string' || parsed.q !== queue.name) {
    throw receiptHandleIsInvalid(handle);
  }
  return parsed.m;
}

export function batchEntries(input: JsonObject): JsonObject[] {
  const entries = optObjectArray(input, 'Entries') ?? [];
  if (entries.length === 0) throw new SqsError('EmptyBatchRequest', 'There should be at least one entry in the request.');
  if (entries.length > MAX_BATCH) {
    throw new SqsError(
      'TooManyEntriesInBatchRequest',
      `Maximum number of entries per request are ${MAX_BATCH}. You have sent ${entries.length}.`,
    );
  }
  const seen = new Set<string>();
  for (const entry of entries) {
    const id = entryId(entry);
    if (seen.has(id)) throw new SqsError('BatchEntryIdsNotDistinct', `Id ${id} repeated.`);
    seen.add(id);
  }
  return entries;
}

function entryId(entry: JsonObject): string {
  const id = optString(entry, 'Id');
  if (id === undefined || !BATCH_ID.test(id)) {
    throw new SqsError(
      'InvalidBatchEntryId',
      'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
    );
  }
  return id;
}

export function receiveResult(messages: JsonObject[]): JsonObject {
  return messages.length > 0 ? { Messages: messages } : {};
}

/** One batch entry's outcome: an SqsError fails that entry only, anything else the whole request. */
type Attempt<T> = { readonly id: string } & ({ readonly ok: true; readonly result: T } | { readonly ok: false; readonly error: SqsError });

export function attempt<T>(entry: JsonObject, run: () => T): Attempt<T> {
  const id = entryId(entry);
  try {
    return { id, ok: true, result: run() };
  } catch (error) {
    if (!(error instanceof SqsError)) throw error;
    return { id, ok: false, error };
  }
}

/** A batch answer; `succeeded` acts on each successful entry, in order, and gives its fields beside Id. */
export function batchResult<T>(attempts: readonly Attempt<T>[], succeeded: (result: T) => JsonObject): JsonObject {
  const successful: JsonObject[] = [];
  const failed: JsonObject[] = [];
  for (const entry of attempts) {
    if (entry.ok) successful.push({ Id: entry.id, ...succeeded(entry.result) });
    else
      failed.push({ Id: entry.id, SenderFault: entry.error.fault === 'Sender', Code: entry.error.queryCode, Message: entry.error.message });
  }
  return { Successful: successful, Failed: failed };
}

/** "All" and ".*" select everything; "prefix.*" selects names under that prefix. */
function attributeSelected(name: string, requested: readonly string[]): boolean {
  return requested.some((pattern) => {
    if (pattern === 'All' || pattern === '.*') return true;
    if (pattern.endsWith('.*')) return name.startsWith(pattern.slice(0, -1));
    return pattern === name;
  });
}

function parseMessageAttributes(input: JsonObject | undefined): Map<string, MessageAttribute> {
  const out = new Map<string, MessageAttribute>();
  if (input === undefined) return out;
  const entries = Object.entries(input);
  if (entries.length > 10) throw invalidParameter('MessageAttributes', '(map)', 'Number of message attributes cannot exceed 10.');
  for (const [name, raw] of entries) {
    const where = `MessageAttributes.${name}`;
    if (
      !ATTRIBUTE_NAME.test(name) ||
      /^(aws\.|amazon\.)/i.test(name) ||
      name.startsWith('.') ||
      name.endsWith('.') ||
      name.includes('..')
    ) {
      throw invalidParameter('MessageAttributes', name, 'Invalid message attribute name.');
    }
    if (!isRecord(raw)) throw invalidParameter(where, raw, 'Must be an object.');
    const dataType = optString(raw, 'DataType');
    if (dataType === undefined || dataType === '') {
      throw invalidParameter(where, name, `The message attribute '${name}' must contain a non-empty message attribute type.`);
    }
    if (!DATA_TYPE.test(dataType)) {
      throw invalidParameter(where, dataType, `The type of message attribute '${name}' is invalid.`);
    }
    if (raw.StringListValues !== undefined || raw.BinaryListValues !== undefined) {
      throw new SqsError('UnsupportedOperation', 'Message attribute list values are not supported.');
    }
    if (dataType.startsWith('Binary')) {
      const binary = optString(raw, 'BinaryValue');
      if (binary === undefined || binary === '') {
        throw invalidParameter(where, name, `The message attribute '${name}' must contain a non-empty value of type 'Binary'.`);
      }
      out.set(name, { DataType: dataType, BinaryValue: Buffer.from(binary, 'base64') });
      continue;
    }
    const value = optString(raw, 'StringValue');
    const base = dataType.startsWith('Number') ? 'Number' : 'String';
    if (value === undefined || value === '') {
      throw invalidParameter(where, name, `The message attribute '${name}' must contain a non-empty value of type '${base}'.`);
    }
    if (base === 'Number' && !NUMBER.test(value)) {
      throw invalidParameter(where, value, `Can't cast the value of message attribute '${name}' to a number.`);
    }
    if (INVALID_CHARACTER.test(value)) {
      throw new SqsError('InvalidMessageContents', `Invalid binary character in message attribute '${name}'.`);
    }
    out.set(name, { DataType: dataType, StringValue: value });
  }
  return out;
}
