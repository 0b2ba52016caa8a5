// An SQS queue as the local engine keeps it: its messages, its attributes (validated on CreateQueue,
// answered by GetQueueAttributes) and its redrive policy.
import { SqsError } from './errors';
import type { JsonObject } from './input';
import type { MessageAttribute } from './md5';
import { isRecord } from '../../shared/util';

export interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly attributes: ReadonlyMap<string, MessageAttribute>;
  readonly md5OfAttributes: string | undefined;
  readonly sentTimestamp: number;
  /** Its tenant on a fair queue (./fair.ts); absent: a tenant of its own. */
  readonly messageGroupId?: string | undefined;
  /** Epoch ms from which the message can be received. */
  visibleAt: number;
  /** Hidden because it was received (not-visible), as opposed to delayed on send. */
  inFlight: boolean;
  receiveCount: number;
  firstReceiveTimestamp: number | undefined;
  /** Only the latest receipt handle acts on the message. */
  receiptHandle: string | undefined;
  /** When the receive hid it until (cleared when the visibility is changed): what `expedite` compresses. */
  receivedUntil?: number | undefined;
  /** Set when redriven to a dead-letter queue: where the message came from. */
  deadLetterSourceArn: string | undefined;
}

export interface Waiter {
  readonly queue: Queue;
  readonly request: ReceiveRequest;
  readonly done: (messages: JsonObject[]) => void;
}

export interface Queue {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
  readonly createdTimestamp: number;
  readonly lastModifiedTimestamp: number;
  /** Settable attributes, normalised to the strings GetQueueAttributes returns. */
  readonly attributes: Map<string, string>;
  /** Insertion order is delivery order (best effort, like a standard queue). */
  readonly messages: Map<string, StoredMessage>;
  readonly waiters: Set<Waiter>;
  wakeTimer: NodeJS.Timeout | undefined;
  wakeAt: number;
}

export interface ReceiveRequest {
  readonly max: number;
  readonly visibilityTimeout: number | undefined;
  readonly systemAttributeNames: readonly string[];
  readonly messageAttributeNames: readonly string[];
}

export interface RedrivePolicy {
  readonly deadLetterTargetArn: string;
  readonly maxReceiveCount: number;
}

export const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;
export const DEFAULTS: Readonly<Record<string, string>> = {
  DelaySeconds: '0',
  MaximumMessageSize: '1048576',
  MessageRetentionPeriod: '345600',
  ReceiveMessageWaitTimeSeconds: '0',
  VisibilityTimeout: '30',
  SqsManagedSseEnabled: 'true',
};

const INT_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  DelaySeconds: [0, 900],
  MaximumMessageSize: [1024, 1048576],
  MessageRetentionPeriod: [60, 1209600],
  ReceiveMessageWaitTimeSeconds: [0, 20],
  VisibilityTimeout: [0, 43200],
  KmsDataKeyReusePeriodSeconds: [60, 86400],
};

/** Stored as given; they do not change this server's behaviour. */
const FREE_FORM = new Set(['Policy', 'RedriveAllowPolicy', 'KmsMasterKeyId', 'SqsManagedSseEnabled']);

/** The counts GetQueueAttributes answers beside a queue's own attributes, at `now`. */
const READ_ONLY: Readonly<
  Record<string, (queue: Queue, counts: Readonly<Record<'visible' | 'notVisible' | 'delayed', number>>) => string>
> = {
  QueueArn: (queue) => queue.arn,
  ApproximateNumberOfMessages: (_queue, counts) => String(counts.visible),
  ApproximateNumberOfMessagesNotVisible: (_queue, counts) => String(counts.notVisible),
  ApproximateNumberOfMessagesDelayed: (_queue, counts) => String(counts.delayed),
  CreatedTimestamp: (queue) => String(queue.createdTimestamp),
  LastModifiedTimestamp: (queue) => String(queue.lastModifiedTimestamp),
};

const SETTABLE = new Set([...Object.keys(INT_RANGES), ...FREE_FORM, 'RedrivePolicy']);
const FIFO_ONLY = new Set(['FifoQueue', 'ContentBasedDeduplication', 'DeduplicationScope', 'FifoThroughputLimit']);
// FIFO-only names are valid to ask for; a standard queue just has no value for them.
export const GETTABLE = new Set<string>([...SETTABLE, ...Object.keys(READ_ONLY), ...FIFO_ONLY]);

/** Validates CreateQueue's attributes; '' leaves an optional one unset. */
export function normaliseAttributes(attributes: ReadonlyMap<string, string>, queueExists: (arn: string) => boolean): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of attributes) {
    if (FIFO_ONLY.has(name)) {
      if (name === 'FifoQueue' && value === 'false') continue;
      throw new SqsError('InvalidAttributeName', `Attribute ${name} applies only to FIFO queues, which this server does not support.`);
    }
    if (!SETTABLE.has(name)) throw new SqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    const range = INT_RANGES[name];
    if (range) {
      const number = Number(value);
      if (!/^\d+$/.test(value) || number < range[0] || number > range[1]) {
        throw new SqsError('InvalidAttributeValue', `Invalid value for the parameter ${name}.`);
      }
      out.set(name, String(number));
    } else if (name === 'RedrivePolicy') {
      out.set(name, value === '' ? '' : normaliseRedrivePolicy(value, queueExists));
    } else {
      out.set(name, value);
    }
  }
  return out;
}

function normaliseRedrivePolicy(value: string, queueExists: (arn: string) => boolean): string {
  const invalid = (reason: string): SqsError =>
    new SqsError('InvalidAttributeValue', `Value ${value} for parameter RedrivePolicy is invalid. Reason: ${reason}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalid('Redrive policy is not a valid JSON map.');
  }
  if (!isRecord(parsed)) throw invalid('Redrive policy is not a valid JSON map.');
  const target = parsed.deadLetterTargetArn;
  const rawCount = parsed.maxReceiveCount;
  const count = typeof rawCount === 'string' && /^\d+$/.test(rawCount) ? Number(rawCount) : rawCount;
  if (typeof target !== 'string') throw invalid('Redrive policy does not contain mandatory attribute: deadLetterTargetArn.');
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1000) {
    throw invalid('Invalid value for maxReceiveCount: must be an integer from 1 to 1000.');
  }
  if (!queueExists(target)) throw invalid('Dead letter target does not exist.');
  const policy: RedrivePolicy = { deadLetterTargetArn: target, maxReceiveCount: count };
  return JSON.stringify(policy);
}

/** Every attribute GetQueueAttributes can answer, counted at `now`. */
export function attributeValues(queue: Queue, now: number): Map<string, string> {
  dropExpired(queue, now);
  const counts = { visible: 0, notVisible: 0, delayed: 0 };
  for (const message of queue.messages.values()) {
    counts[message.visibleAt <= now ? 'visible' : message.inFlight ? 'notVisible' : 'delayed'] += 1;
  }
  const values = new Map(Object.entries(READ_ONLY).map(([name, value]) => [name, value(queue, counts)]));
  for (const [key, value] of queue.attributes) values.set(key, value);
  return values;
}

export function redrivePolicy(queue: Queue): RedrivePolicy | undefined {
  const raw = queue.attributes.get('RedrivePolicy');
  if (raw === undefined) return undefined;
  return JSON.parse(raw) as RedrivePolicy; // normalised on the way in
}

export function dropExpired(queue: Queue, now: number): void {
  const retentionMs = Number(queue.attributes.get('MessageRetentionPeriod') ?? DEFAULTS.MessageRetentionPeriod) * 1000;
  for (const [id, message] of queue.messages) {
    if (now - message.sentTimestamp >= retentionMs) queue.messages.delete(id);
  }
}
