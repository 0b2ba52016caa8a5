// In-memory SQS: queues, messages, visibility, long polling, dead-letter redrive and move tasks.
// Every operation runs synchronously on the event loop, so two receives can never take the same
// message; only long polls wait, and they are served one after another when messages appear.
import * as sqsApi from '@aws-sdk/client-sqs';
import { SqsError, invalidParameter, missingParameter, queueDoesNotExist, unknownOperation } from './errors';
import { type JsonObject, optInt, optString, optStringArray, optStringMap, reqString } from './input';
import {
  attempt,
  batchEntries,
  batchResult,
  buildMessage,
  newReceiptHandle,
  parseReceiptHandle,
  receiveResult,
  render,
  sendResult,
} from './messages';
import {
  DEFAULTS,
  GETTABLE,
  QUEUE_NAME,
  type Queue,
  type ReceiveRequest,
  type StoredMessage,
  type Waiter,
  attributeValues,
  dropExpired,
  normaliseAttributes,
  redrivePolicy,
} from './queue';
import { MoveTasks } from './move-tasks';
import { receiveOrder } from './fair';

export interface EngineOptions {
  readonly baseUrl: string;
  readonly region: string;
  readonly accountId: string;
  /**
   * Delays, visibility changes and the rest of a visibility timeout after `expedite` pass this many
   * times faster than real time (default 1). The deploy rehearsal keeps the template's timeouts
   * (e.g. 1,985 s) and compresses them, so a message's five receives take seconds instead of hours;
   * a received message stays hidden in real time while its invocation runs, as it would in AWS.
   */
  readonly timeScale?: number;
  /** Called when a redrive moves a message to its dead-letter queue (the local stack logs the arrival). */
  readonly onDeadLetter?: (moved: DeadLettered) => void;
  /**
   * Receives favour the MessageGroupId with the fewest messages in flight, as SQS fair queues do
   * (./fair.ts; default true). false: send order whatever the groups, the control of bench/fairness.ts.
   */
  readonly fairQueues?: boolean;
}

/** A message the redrive policy moved to a dead-letter queue. */
export interface DeadLettered {
  readonly source: string;
  readonly target: string;
  readonly messageId: string;
  readonly body: string;
  readonly receiveCount: number;
}

type Operation = (input: JsonObject, signal: AbortSignal) => JsonObject | Promise<JsonObject>;

export class SqsEngine {
  private readonly queues = new Map<string, Queue>();
  private readonly toNotify = new Set<Queue>();
  private notifyScheduled = false;
  private closed = false;

  private readonly moveTasks = new MoveTasks({
    queues: () => this.queues.values(),
    queueByArn: (arn) => this.queueByArn(arn),
    enqueue: (queue, message, delaySeconds) => this.enqueue(queue, message, delaySeconds),
  });

  constructor(private readonly options: EngineOptions) {}

  /** Seconds of queue time as wall-clock milliseconds (see `timeScale`). */
  private scaledMs(seconds: number): number {
    return (seconds * 1000) / (this.options.timeScale ?? 1);
  }

  queueUrl(name: string): string {
    return `${this.options.baseUrl}/${this.options.accountId}/${name}`;
  }

  queueArn(name: string): string {
    return `arn:aws:sqs:${this.options.region}:${this.options.accountId}:${name}`;
  }

  /**
   * The operations the bridge, its CLI, the local stack, the benchmarks and the tests send; SQS has
   * more (GetQueueUrl, ListQueues, SetQueueAttributes, tagging, permissions, ...), which answer
   * UnsupportedOperation, so a new caller finds out at once instead of meeting a half-kept copy.
   */
  private readonly operations: Readonly<Record<string, Operation>> = {
    CreateQueue: (input) => this.createQueue(input),
    GetQueueAttributes: (input) => this.getQueueAttributes(input),
    PurgeQueue: (input) => this.purgeQueue(input),
    DeleteQueue: (input) => this.deleteQueue(input),
    SendMessage: (input) => this.sendMessage(input),
    SendMessageBatch: (input) => this.sendMessageBatch(input),
    ReceiveMessage: (input, signal) => this.receiveMessage(input, signal),
    DeleteMessage: (input) => this.deleteMessage(input),
    DeleteMessageBatch: (input) => this.deleteMessageBatch(input),
    ChangeMessageVisibility: (input) => this.changeMessageVisibility(input),
    ChangeMessageVisibilityBatch: (input) => this.changeMessageVisibilityBatch(input),
    StartMessageMoveTask: (input) => this.moveTasks.start(input),
    ListMessageMoveTasks: (input) => this.moveTasks.list(input),
    CancelMessageMoveTask: (input) => this.moveTasks.cancel(input),
  };

  /** Runs one operation; `signal` aborts a long poll when the client goes away. */
  dispatch(operation: string, input: JsonObject, signal: AbortSignal): JsonObject | Promise<JsonObject> {
    const run = Object.hasOwn(this.operations, operation) ? this.operations[operation] : undefined;
    if (run) return run(input, signal);
    // The SDK has a command for every operation SQS has: those are real, just not served here.
    if (Object.hasOwn(sqsApi, `${operation}Command`)) {
      throw new SqsError('UnsupportedOperation', `${operation} is not supported by this local SQS server.`);
    }
    throw unknownOperation(`AmazonSQS.${operation}`);
  }

  /** Ends every long poll (empty) and stops all timers. */
  stop(): void {
    this.closed = true;
    for (const queue of this.queues.values()) this.endWaiters(queue);
    this.moveTasks.close();
  }

  // ---- queues ----

  private createQueue(input: JsonObject): JsonObject {
    const name = reqString(input, 'QueueName');
    const attributes = optStringMap(input, 'Attributes') ?? new Map<string, string>();
    if (name.endsWith('.fifo') || attributes.get('FifoQueue') === 'true') {
      throw new SqsError('UnsupportedOperation', 'FIFO queues are not supported by this local SQS server.');
    }
    if (!QUEUE_NAME.test(name)) {
      throw invalidParameter('QueueName', name, 'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.');
    }
    attributes.delete('FifoQueue'); // only 'false' can be left here
    const normalised = normaliseAttributes(attributes, (arn) => this.queueByArn(arn) !== undefined);
    const existing = this.queues.get(name);
    if (existing) {
      // SQS returns the existing queue only when every given attribute matches it.
      for (const [key, value] of normalised) {
        if ((existing.attributes.get(key) ?? DEFAULTS[key] ?? '') !== value) {
          throw new SqsError('QueueNameExists', `A queue already exists with the same name and a different value for attribute ${key}`);
        }
      }
      return { QueueUrl: existing.url };
    }
    const now = Math.floor(Date.now() / 1000);
    const queue: Queue = {
      name,
      url: this.queueUrl(name),
      arn: this.queueArn(name),
      createdTimestamp: now,
      lastModifiedTimestamp: now,
      attributes: new Map(Object.entries(DEFAULTS)),
      messages: new Map(),
      waiters: new Set(),
      wakeTimer: undefined,
      wakeAt: 0,
    };
    for (const [key, value] of normalised) queue.attributes.set(key, value);
    for (const [key, value] of queue.attributes) if (value === '') queue.attributes.delete(key);
    this.queues.set(name, queue);
    return { QueueUrl: queue.url };
  }

  private getQueueAttributes(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    const requested = optStringArray(input, 'AttributeNames') ?? [];
    for (const name of requested) {
      if (name !== 'All' && !GETTABLE.has(name)) throw new SqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    }
    const all = requested.includes('All');
    const values = attributeValues(queue, Date.now());
    const out: Record<string, string> = {};
    for (const [name, value] of values) if (all || requested.includes(name)) out[name] = value;
    return Object.keys(out).length > 0 ? { Attributes: out } : {};
  }

  private purgeQueue(input: JsonObject): JsonObject {
    // Real SQS allows one purge per 60 s (PurgeQueueInProgress); not mirrored, tests purge freely.
    const queue = this.queueFrom(input);
    queue.messages.clear();
    this.scheduleWake(queue);
    return {};
  }

  private deleteQueue(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    this.queues.delete(queue.name);
    this.endWaiters(queue);
    this.moveTasks.sourceDeleted(queue.arn);
    return {};
  }

  // ---- messages ----

  private sendMessage(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    const message = buildMessage(queue, input, 'MessageBody');
    this.enqueue(queue, message.stored, message.delaySeconds);
    return sendResult(message.stored);
  }

  private sendMessageBatch(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    const built = batchEntries(input).map((entry) => attempt(entry, () => buildMessage(queue, entry, 'MessageBody')));
    const totalSize = built.reduce((sum, entry) => sum + (entry.ok ? entry.result.size : 0), 0);
    const limit = Number(queue.attributes.get('MaximumMessageSize') ?? DEFAULTS.MaximumMessageSize);
    if (totalSize > limit) {
      throw new SqsError('BatchRequestTooLong', `Batch requests cannot be longer than ${limit} bytes.`);
    }
    return batchResult(built, (message) => {
      this.enqueue(queue, message.stored, message.delaySeconds);
      return sendResult(message.stored);
    });
  }

  private async receiveMessage(input: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    const queue = this.queueFrom(input);
    const max = optInt(input, 'MaxNumberOfMessages', 1, 10) ?? 1;
    const visibilityTimeout = optInt(input, 'VisibilityTimeout', 0, 43200);
    const wait = optInt(input, 'WaitTimeSeconds', 0, 20) ?? Number(queue.attributes.get('ReceiveMessageWaitTimeSeconds') ?? 0);
    optString(input, 'ReceiveRequestAttemptId'); // FIFO only; type-checked and ignored
    const request: ReceiveRequest = {
      max,
      visibilityTimeout,
      // AttributeNames is the deprecated spelling of MessageSystemAttributeNames; SDKs may send either.
      systemAttributeNames: [
        ...(optStringArray(input, 'AttributeNames') ?? []),
        ...(optStringArray(input, 'MessageSystemAttributeNames') ?? []),
      ],
      messageAttributeNames: optStringArray(input, 'MessageAttributeNames') ?? [],
    };
    if (signal.aborted) return {}; // the client is gone: take nothing it cannot get
    const messages = this.take(queue, request);
    if (messages.length > 0 || wait === 0 || this.closed) return receiveResult(messages);

    const received = await new Promise<JsonObject[]>((resolve) => {
      const timer = setTimeout(() => finish([]), wait * 1000);
      timer.unref();
      const onAbort = (): void => finish([]);
      const waiter: Waiter = { queue, request, done: (taken) => finish(taken) };
      function finish(taken: JsonObject[]): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        queue.waiters.delete(waiter);
        resolve(taken);
      }
      signal.addEventListener('abort', onAbort);
      queue.waiters.add(waiter);
      this.scheduleWake(queue);
    });
    this.scheduleWake(queue);
    return receiveResult(received);
  }

  private deleteMessage(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    this.deleteByHandle(queue, reqString(input, 'ReceiptHandle'));
    return {};
  }

  private deleteMessageBatch(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    const done = batchEntries(input).map((entry) => attempt(entry, () => this.deleteByHandle(queue, reqString(entry, 'ReceiptHandle'))));
    return batchResult(done, () => ({}));
  }

  private changeMessageVisibility(input: JsonObject): JsonObject {
    this.changeVisibility(this.queueFrom(input), input);
    return {};
  }

  private changeMessageVisibilityBatch(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    return batchResult(
      batchEntries(input).map((entry) => attempt(entry, () => this.changeVisibility(queue, entry))),
      () => ({}),
    );
  }

  // ---- internals ----

  private queueFrom(input: JsonObject): Queue {
    const url = reqString(input, 'QueueUrl');
    // The name is the last path segment; any host is accepted (localhost vs 127.0.0.1).
    const name = url.replace(/\/+$/, '').split('/').pop() ?? '';
    const queue = this.queues.get(name);
    if (!queue) throw queueDoesNotExist();
    return queue;
  }

  /**
   * The rest of the receive-time visibility timeout of these messages, compressed by `timeScale`
   * (the event source calls it once their invocation failed); a message whose visibility the
   * function changed keeps that change.
   */
  expedite(queueUrl: string, messageIds: readonly string[]): void {
    const queue = this.queueFrom({ QueueUrl: queueUrl });
    const now = Date.now();
    for (const id of messageIds) {
      const message = queue.messages.get(id);
      if (message?.receivedUntil === undefined || message.visibleAt !== message.receivedUntil) continue;
      message.visibleAt = now + Math.max(0, message.visibleAt - now) / (this.options.timeScale ?? 1);
      message.receivedUntil = undefined;
    }
    this.notify(queue);
  }

  /**
   * Every queue's messages, as JSON: what a local stack keeps in its data directory across restarts.
   * Receipt handles are not kept; a message received when the snapshot was taken is visible again
   * on restore, its receive count kept (as when its visibility timeout runs out).
   */
  snapshot(): QueuesSnapshot {
    const queues: QueuesSnapshot = {};
    for (const queue of this.queues.values()) {
      queues[queue.name] = [...queue.messages.values()].map((message) => ({
        ...message,
        attributes: [...message.attributes].map(([name, value]) => [name, withBinary(value, (bytes) => bytes.toString('base64'))]),
        receiptHandle: undefined,
        receivedUntil: undefined,
        ...(message.inFlight ? { inFlight: false, visibleAt: 0 } : {}),
      }));
    }
    return queues;
  }

  /** Puts a snapshot's messages back into the queues of the same names (created first); others are dropped. */
  restore(snapshot: QueuesSnapshot): void {
    for (const [name, messages] of Object.entries(snapshot)) {
      const queue = this.queues.get(name);
      if (!queue) continue;
      for (const kept of messages) {
        const attributes = new Map(
          kept.attributes.map(([key, value]) => [key, withBinary(value, (base64) => Buffer.from(base64, 'base64'))]),
        );
        queue.messages.set(kept.messageId, { ...kept, attributes });
      }
      this.notify(queue);
    }
  }

  private reportDeadLetter(source: Queue, target: Queue, message: StoredMessage): void {
    const { messageId, body, receiveCount } = message;
    try {
      this.options.onDeadLetter?.({ source: source.name, target: target.name, messageId, body, receiveCount });
    } catch {
      // A reporting callback must not break a receive.
    }
  }

  private queueByArn(arn: string): Queue | undefined {
    const name = arn.split(':').pop() ?? '';
    const queue = this.queues.get(name);
    return queue?.arn === arn ? queue : undefined;
  }

  private enqueue(queue: Queue, message: StoredMessage, delaySeconds: number): void {
    message.visibleAt = Date.now() + this.scaledMs(delaySeconds);
    queue.messages.set(message.messageId, message);
    this.notify(queue);
  }

  /** Takes up to `request.max` visible messages, fairly among their groups (./fair.ts), redriving those past maxReceiveCount. */
  private take(queue: Queue, request: ReceiveRequest): JsonObject[] {
    const now = Date.now();
    dropExpired(queue, now);
    const redrive = redrivePolicy(queue);
    const deadLetterQueue = redrive ? this.queueByArn(redrive.deadLetterTargetArn) : undefined;
    const timeout = request.visibilityTimeout ?? Number(queue.attributes.get('VisibilityTimeout') ?? 30);
    const out: JsonObject[] = [];
    for (const message of receiveOrder(queue.messages, now, this.options.fairQueues ?? true)) {
      if (out.length >= request.max) break;
      if (redrive && deadLetterQueue && deadLetterQueue !== queue && message.receiveCount >= redrive.maxReceiveCount) {
        // This receive would exceed maxReceiveCount: SQS moves the message instead of returning it.
        queue.messages.delete(message.messageId);
        message.receiptHandle = undefined;
        message.inFlight = false;
        message.deadLetterSourceArn = queue.arn;
        this.enqueue(deadLetterQueue, message, 0);
        this.reportDeadLetter(queue, deadLetterQueue, message);
        continue;
      }
      message.receiveCount += 1;
      message.firstReceiveTimestamp ??= now;
      message.receiptHandle = newReceiptHandle(queue, message);
      message.visibleAt = now + timeout * 1000;
      message.receivedUntil = message.visibleAt;
      message.inFlight = timeout > 0;
      out.push(render(message, request, this.options.accountId));
    }
    return out;
  }

  private deleteByHandle(queue: Queue, handle: string): void {
    const id = parseReceiptHandle(queue, handle);
    const message = queue.messages.get(id);
    // A well-formed but stale handle (message re-received since, or already deleted) succeeds
    // without deleting, as in SQS: only the latest receipt handle deletes the message.
    if (message?.receiptHandle === handle) queue.messages.delete(id);
  }

  private changeVisibility(queue: Queue, input: JsonObject): void {
    const handle = reqString(input, 'ReceiptHandle');
    const timeout = optInt(input, 'VisibilityTimeout', 0, 43200);
    if (timeout === undefined) throw missingParameter('VisibilityTimeout');
    const id = parseReceiptHandle(queue, handle);
    const message = queue.messages.get(id);
    if (message?.receiptHandle !== handle) {
      throw invalidParameter('ReceiptHandle', handle, 'Message does not exist or is not available for visibility timeout change.');
    }
    // Allowed with the latest handle even after the timeout expired, as long as no one received the
    // message again (as SQS does); a long poll then sees it once the new timeout passes.
    const now = Date.now();
    message.visibleAt = now + this.scaledMs(timeout);
    message.receivedUntil = undefined;
    message.inFlight = timeout > 0;
    this.notify(queue);
  }

  // ---- long polling ----

  /** Serves waiting long polls of `queue` after the current operation finishes. */
  private notify(queue: Queue): void {
    this.toNotify.add(queue);
    if (this.notifyScheduled) return;
    this.notifyScheduled = true;
    queueMicrotask(() => {
      this.notifyScheduled = false;
      const queues = [...this.toNotify];
      this.toNotify.clear();
      for (const pending of queues) this.serveWaiters(pending);
    });
  }

  private serveWaiters(queue: Queue): void {
    if (this.queues.get(queue.name) !== queue) return; // deleted
    for (const waiter of [...queue.waiters]) {
      const taken = this.take(queue, waiter.request);
      if (taken.length > 0) waiter.done(taken);
      else break; // nothing visible left for the others either
    }
    this.scheduleWake(queue);
  }

  /** Keeps one timer per queue, due when the next hidden message becomes visible, while polls wait. */
  private scheduleWake(queue: Queue): void {
    let next = Number.POSITIVE_INFINITY;
    if (queue.waiters.size > 0 && !this.closed) {
      const now = Date.now();
      for (const message of queue.messages.values()) {
        if (message.visibleAt > now && message.visibleAt < next) next = message.visibleAt;
      }
    }
    if (next === queue.wakeAt && queue.wakeTimer) return;
    clearTimeout(queue.wakeTimer);
    const wake = (): void => {
      queue.wakeTimer = undefined;
      queue.wakeAt = 0;
      this.notify(queue);
    };
    const due = next !== Number.POSITIVE_INFINITY;
    queue.wakeAt = due ? next : 0;
    queue.wakeTimer = due ? setTimeout(wake, Math.max(0, next - Date.now()) + 1).unref() : undefined;
  }

  private endWaiters(queue: Queue): void {
    for (const waiter of [...queue.waiters]) waiter.done([]);
    clearTimeout(queue.wakeTimer);
    queue.wakeTimer = undefined;
  }
}

/** A stored message as JSON (binary attribute values in base64). */
export type KeptMessage = Omit<StoredMessage, 'attributes'> & { attributes: [string, KeptAttribute][] };
type KeptAttribute = { DataType: string; StringValue?: string; BinaryValue?: string };
export type QueuesSnapshot = Record<string, KeptMessage[]>;

/** An attribute with its binary value turned by `convert` (to base64 to keep it, back to bytes to restore it). */
function withBinary<From, To>(
  value: { DataType: string; StringValue?: string; BinaryValue?: From },
  convert: (binary: From) => To,
): { DataType: string; StringValue?: string; BinaryValue?: To } {
  const { BinaryValue, ...rest } = value;
  return { ...rest, ...(BinaryValue !== undefined ? { BinaryValue: convert(BinaryValue) } : {}) };
}
