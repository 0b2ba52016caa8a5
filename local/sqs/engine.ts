// In-memory SQS: queues, messages, visibility, long polling, dead-letter redrive and move tasks.
// Every operation runs synchronously on the event loop, so two receives can never take the same
// message; only long polls wait, and they are served one after another when messages appear.
import { randomBytes, randomUUID } from 'node:crypto';
import * as sqsApi from '@aws-sdk/client-sqs';
import { SqsError, invalidParameter, missingParameter, queueDoesNotExist, receiptHandleIsInvalid, unknownOperation } from './errors';
import { type JsonObject, optInt, optObject, optObjectArray, optString, optStringArray, optStringMap, reqString } from './input';
import { type MessageAttribute, md5Hex, md5OfMessageAttributes } from './md5';
import { isRecord } from '../../shared/util';

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

interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly attributes: ReadonlyMap<string, MessageAttribute>;
  readonly md5OfAttributes: string | undefined;
  readonly sentTimestamp: number;
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

interface Waiter {
  readonly queue: Queue;
  readonly request: ReceiveRequest;
  readonly done: (messages: JsonObject[]) => void;
}

interface Queue {
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

interface ReceiveRequest {
  readonly max: number;
  readonly visibilityTimeout: number | undefined;
  readonly systemAttributeNames: readonly string[];
  readonly messageAttributeNames: readonly string[];
}

interface BuiltMessage {
  readonly stored: StoredMessage;
  readonly delaySeconds: number;
  /** Body plus attribute names, types and values, as SQS counts message size. */
  readonly size: number;
}

interface RedrivePolicy {
  readonly deadLetterTargetArn: string;
  readonly maxReceiveCount: number;
}

type TaskStatus = 'RUNNING' | 'COMPLETED' | 'CANCELLED' | 'FAILED';

interface MoveTask {
  readonly handle: string;
  readonly sourceArn: string;
  readonly destinationArn: string | undefined;
  readonly rate: number | undefined;
  readonly startedTimestamp: number;
  readonly toMove: number;
  /** Ids of the messages in the DLQ when the task started: only those are moved. */
  readonly pending: Set<string>;
  status: TaskStatus;
  moved: number;
  failureReason: string | undefined;
  timer: NodeJS.Timeout | undefined;
}

const DEFAULTS: Readonly<Record<string, string>> = {
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

const READ_ONLY = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
  'CreatedTimestamp',
  'LastModifiedTimestamp',
  'QueueArn',
] as const;

const SETTABLE = new Set([...Object.keys(INT_RANGES), ...FREE_FORM, 'RedrivePolicy']);
const FIFO_ONLY = new Set(['FifoQueue', 'ContentBasedDeduplication', 'DeduplicationScope', 'FifoThroughputLimit']);
// FIFO-only names are valid to ask for; a standard queue just has no value for them.
const GETTABLE = new Set<string>([...SETTABLE, ...READ_ONLY, ...FIFO_ONLY]);

const SYSTEM_ATTRIBUTES = [
  'SenderId',
  'SentTimestamp',
  'ApproximateReceiveCount',
  'ApproximateFirstReceiveTimestamp',
  'DeadLetterQueueSourceArn',
] as const;

const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;
const BATCH_ID = /^[A-Za-z0-9_-]{1,80}$/;
const ATTRIBUTE_NAME = /^[A-Za-z0-9_.-]{1,256}$/;
const DATA_TYPE = /^(String|Number|Binary)(\..{1,250})?$/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
// Characters SQS accepts in a body or string attribute (XML 1.0 set).
const INVALID_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const MAX_BATCH = 10;
const TASK_TICK_MS = 50;

export class SqsEngine {
  private readonly queues = new Map<string, Queue>();
  private readonly tasks = new Map<string, MoveTask>();
  private readonly toNotify = new Set<Queue>();
  private notifyScheduled = false;
  private closed = false;

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
    StartMessageMoveTask: (input) => this.startMessageMoveTask(input),
    ListMessageMoveTasks: (input) => this.listMessageMoveTasks(input),
    CancelMessageMoveTask: (input) => this.cancelMessageMoveTask(input),
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
  close(): void {
    this.closed = true;
    for (const queue of this.queues.values()) this.endWaiters(queue);
    for (const task of this.tasks.values()) {
      if (task.timer) clearTimeout(task.timer);
      task.timer = undefined;
    }
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
    const normalised = this.normaliseAttributes(attributes);
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
    const values = this.attributeValues(queue);
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
    for (const task of this.tasks.values()) {
      if (task.status === 'RUNNING' && task.sourceArn === queue.arn) this.finishTask(task, 'FAILED', 'Source queue was deleted.');
    }
    return {};
  }

  // ---- messages ----

  private sendMessage(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    const message = this.buildMessage(queue, input, 'MessageBody');
    this.enqueue(queue, message.stored, message.delaySeconds);
    return this.sendResult(message.stored);
  }

  private sendMessageBatch(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    const entries = this.batchEntries(input);
    const built: { id: string; message?: BuiltMessage; error?: SqsError }[] = [];
    let totalSize = 0;
    for (const entry of entries) {
      const id = this.entryId(entry);
      try {
        const message = this.buildMessage(queue, entry, 'MessageBody');
        totalSize += message.size;
        built.push({ id, message });
      } catch (error) {
        if (!(error instanceof SqsError)) throw error;
        built.push({ id, error });
      }
    }
    const limit = Number(queue.attributes.get('MaximumMessageSize') ?? DEFAULTS.MaximumMessageSize);
    if (totalSize > limit) {
      throw new SqsError('BatchRequestTooLong', `Batch requests cannot be longer than ${limit} bytes.`);
    }
    const successful: JsonObject[] = [];
    const failed: JsonObject[] = [];
    for (const { id, message, error } of built) {
      if (message) {
        this.enqueue(queue, message.stored, message.delaySeconds);
        successful.push({ Id: id, ...this.sendResult(message.stored) });
      } else if (error) {
        failed.push(batchFailure(id, error));
      }
    }
    return { Successful: successful, Failed: failed };
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
    const successful: JsonObject[] = [];
    const failed: JsonObject[] = [];
    for (const entry of this.batchEntries(input)) {
      const id = this.entryId(entry);
      try {
        this.deleteByHandle(queue, reqString(entry, 'ReceiptHandle'));
        successful.push({ Id: id });
      } catch (error) {
        if (!(error instanceof SqsError)) throw error;
        failed.push(batchFailure(id, error));
      }
    }
    return { Successful: successful, Failed: failed };
  }

  private changeMessageVisibility(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    const handle = reqString(input, 'ReceiptHandle');
    const timeout = optInt(input, 'VisibilityTimeout', 0, 43200);
    if (timeout === undefined) throw missingParameter('VisibilityTimeout');
    this.changeVisibility(queue, handle, timeout);
    return {};
  }

  private changeMessageVisibilityBatch(input: JsonObject): JsonObject {
    const queue = this.queueFrom(input);
    const successful: JsonObject[] = [];
    const failed: JsonObject[] = [];
    for (const entry of this.batchEntries(input)) {
      const id = this.entryId(entry);
      try {
        const timeout = optInt(entry, 'VisibilityTimeout', 0, 43200);
        if (timeout === undefined) throw missingParameter('VisibilityTimeout');
        this.changeVisibility(queue, reqString(entry, 'ReceiptHandle'), timeout);
        successful.push({ Id: id });
      } catch (error) {
        if (!(error instanceof SqsError)) throw error;
        failed.push(batchFailure(id, error));
      }
    }
    return { Successful: successful, Failed: failed };
  }

  // ---- message move tasks ----

  private startMessageMoveTask(input: JsonObject): JsonObject {
    const sourceArn = reqString(input, 'SourceArn');
    const destinationArn = optString(input, 'DestinationArn');
    const rate = optInt(input, 'MaxNumberOfMessagesPerSecond', 1, 500);
    const source = this.queueByArn(sourceArn);
    if (!source)
      throw new SqsError('ResourceNotFoundException', "The resource that you specified for the SourceArn parameter doesn't exist.");
    const isDeadLetterQueue = [...this.queues.values()].some((queue) => this.redrivePolicy(queue)?.deadLetterTargetArn === sourceArn);
    if (!isDeadLetterQueue) {
      throw invalidParameter('SourceArn', sourceArn, 'Source queue must be configured as a Dead Letter Queue.');
    }
    if (destinationArn !== undefined && !this.queueByArn(destinationArn)) {
      throw new SqsError('ResourceNotFoundException', "The resource that you specified for the DestinationArn parameter doesn't exist.");
    }
    for (const task of this.tasks.values()) {
      if (task.sourceArn === sourceArn && task.status === 'RUNNING') {
        throw new SqsError(
          'UnsupportedOperation',
          'There is already a task running. Only one active task is allowed for a source queue arn at a given time.',
        );
      }
    }
    this.dropExpired(source, Date.now());
    const handle = Buffer.from(JSON.stringify({ taskId: randomUUID(), sourceArn }), 'utf8').toString('base64');
    const task: MoveTask = {
      handle,
      sourceArn,
      destinationArn,
      rate,
      startedTimestamp: Date.now(),
      toMove: source.messages.size,
      pending: new Set(source.messages.keys()),
      status: 'RUNNING',
      moved: 0,
      failureReason: undefined,
      timer: undefined,
    };
    this.tasks.set(handle, task);
    this.scheduleTask(task, 0);
    return { TaskHandle: handle };
  }

  private listMessageMoveTasks(input: JsonObject): JsonObject {
    const sourceArn = reqString(input, 'SourceArn');
    const maxResults = optInt(input, 'MaxResults', 1, 10) ?? 1;
    if (!this.queueByArn(sourceArn)) {
      throw new SqsError('ResourceNotFoundException', "The resource that you specified for the SourceArn parameter doesn't exist.");
    }
    const results = [...this.tasks.values()]
      .filter((task) => task.sourceArn === sourceArn)
      .reverse() // most recent first; Map keeps start order
      .slice(0, maxResults)
      .map((task) => {
        const entry: JsonObject = {
          Status: task.status,
          SourceArn: task.sourceArn,
          ApproximateNumberOfMessagesMoved: task.moved,
          ApproximateNumberOfMessagesToMove: task.toMove,
          StartedTimestamp: task.startedTimestamp,
        };
        // As in SQS, the handle is only listed while the task can still be cancelled.
        if (task.status === 'RUNNING') entry.TaskHandle = task.handle;
        if (task.destinationArn !== undefined) entry.DestinationArn = task.destinationArn;
        if (task.rate !== undefined) entry.MaxNumberOfMessagesPerSecond = task.rate;
        if (task.failureReason !== undefined) entry.FailureReason = task.failureReason;
        return entry;
      });
    return { Results: results };
  }

  private cancelMessageMoveTask(input: JsonObject): JsonObject {
    const handle = reqString(input, 'TaskHandle');
    const task = this.tasks.get(handle);
    if (!task || task.status !== 'RUNNING') {
      throw new SqsError('ResourceNotFoundException', 'The specified task does not exist or is not running.');
    }
    this.finishTask(task, 'CANCELLED', undefined);
    return { ApproximateNumberOfMessagesMoved: task.moved };
  }

  private scheduleTask(task: MoveTask, delayMs: number): void {
    if (this.closed) return;
    task.timer = setTimeout(() => this.runTask(task), delayMs);
    task.timer.unref();
  }

  private runTask(task: MoveTask): void {
    task.timer = undefined;
    if (task.status !== 'RUNNING' || this.closed) return;
    const source = this.queueByArn(task.sourceArn);
    if (!source) {
      this.finishTask(task, 'FAILED', 'Source queue does not exist.');
      return;
    }
    const now = Date.now();
    this.dropExpired(source, now);
    // With a rate, allow rate × elapsed seconds in total (at least one at once); without, move all.
    let budget =
      task.rate === undefined ? Number.POSITIVE_INFINITY : Math.floor((task.rate * (now - task.startedTimestamp)) / 1000) + 1 - task.moved;
    for (const id of task.pending) {
      if (budget <= 0) break;
      const message = source.messages.get(id);
      if (!message) {
        task.pending.delete(id); // deleted or expired meanwhile: nothing to move
        continue;
      }
      if (message.visibleAt > now) continue; // in flight: moved once visible again
      const destinationArn = task.destinationArn ?? message.deadLetterSourceArn;
      const destination = destinationArn === undefined ? undefined : this.queueByArn(destinationArn);
      if (!destination) {
        this.finishTask(task, 'FAILED', 'AWS.SimpleQueueService.NonExistentQueue');
        return;
      }
      source.messages.delete(id);
      task.pending.delete(id);
      // A moved message is re-sent: new id, receive count from zero, same body and attributes.
      this.enqueue(
        destination,
        {
          ...message,
          messageId: randomUUID(),
          sentTimestamp: now,
          visibleAt: now,
          inFlight: false,
          receiveCount: 0,
          firstReceiveTimestamp: undefined,
          receiptHandle: undefined,
          deadLetterSourceArn: undefined,
        },
        0,
      );
      task.moved += 1;
      budget -= 1;
    }
    if (task.pending.size === 0) this.finishTask(task, 'COMPLETED', undefined);
    else this.scheduleTask(task, TASK_TICK_MS);
  }

  private finishTask(task: MoveTask, status: TaskStatus, failureReason: string | undefined): void {
    task.status = status;
    task.failureReason = failureReason;
    if (task.timer) clearTimeout(task.timer);
    task.timer = undefined;
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

  private redrivePolicy(queue: Queue): RedrivePolicy | undefined {
    const raw = queue.attributes.get('RedrivePolicy');
    if (raw === undefined) return undefined;
    return JSON.parse(raw) as RedrivePolicy; // normalised on the way in
  }

  /** Validates CreateQueue's attributes; '' leaves an optional one unset. */
  private normaliseAttributes(attributes: ReadonlyMap<string, string>): Map<string, string> {
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
        out.set(name, value === '' ? '' : this.normaliseRedrivePolicy(value));
      } else {
        out.set(name, value);
      }
    }
    return out;
  }

  private normaliseRedrivePolicy(value: string): string {
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
    if (!this.queueByArn(target)) throw invalid('Dead letter target does not exist.');
    const policy: RedrivePolicy = { deadLetterTargetArn: target, maxReceiveCount: count };
    return JSON.stringify(policy);
  }

  private attributeValues(queue: Queue): Map<string, string> {
    const now = Date.now();
    this.dropExpired(queue, now);
    let visible = 0;
    let notVisible = 0;
    let delayed = 0;
    for (const message of queue.messages.values()) {
      if (message.visibleAt <= now) visible += 1;
      else if (message.inFlight) notVisible += 1;
      else delayed += 1;
    }
    const values = new Map<string, string>([
      ['QueueArn', queue.arn],
      ['ApproximateNumberOfMessages', String(visible)],
      ['ApproximateNumberOfMessagesNotVisible', String(notVisible)],
      ['ApproximateNumberOfMessagesDelayed', String(delayed)],
      ['CreatedTimestamp', String(queue.createdTimestamp)],
      ['LastModifiedTimestamp', String(queue.lastModifiedTimestamp)],
    ]);
    for (const [key, value] of queue.attributes) values.set(key, value);
    return values;
  }

  private buildMessage(queue: Queue, input: JsonObject, bodyKey: string): BuiltMessage {
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
    const now = Date.now();
    const stored: StoredMessage = {
      messageId: randomUUID(),
      body,
      md5OfBody: md5Hex(body),
      attributes,
      md5OfAttributes: md5OfMessageAttributes(attributes),
      sentTimestamp: now,
      visibleAt: now,
      inFlight: false,
      receiveCount: 0,
      firstReceiveTimestamp: undefined,
      receiptHandle: undefined,
      deadLetterSourceArn: undefined,
    };
    return { stored, delaySeconds, size };
  }

  private sendResult(message: StoredMessage): JsonObject {
    const out: JsonObject = { MessageId: message.messageId, MD5OfMessageBody: message.md5OfBody };
    if (message.md5OfAttributes !== undefined) out.MD5OfMessageAttributes = message.md5OfAttributes;
    return out;
  }

  private enqueue(queue: Queue, message: StoredMessage, delaySeconds: number): void {
    message.visibleAt = Date.now() + this.scaledMs(delaySeconds);
    queue.messages.set(message.messageId, message);
    this.notify(queue);
  }

  /** Takes up to `request.max` visible messages, redriving those past maxReceiveCount. */
  private take(queue: Queue, request: ReceiveRequest): JsonObject[] {
    const now = Date.now();
    this.dropExpired(queue, now);
    const redrive = this.redrivePolicy(queue);
    const deadLetterQueue = redrive ? this.queueByArn(redrive.deadLetterTargetArn) : undefined;
    const timeout = request.visibilityTimeout ?? Number(queue.attributes.get('VisibilityTimeout') ?? 30);
    const out: JsonObject[] = [];
    for (const message of queue.messages.values()) {
      if (out.length >= request.max) break;
      if (message.visibleAt > now) continue;
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
      message.receiptHandle = this.newReceiptHandle(queue, message);
      message.visibleAt = now + timeout * 1000;
      message.receivedUntil = message.visibleAt;
      message.inFlight = timeout > 0;
      out.push(this.render(message, request));
    }
    return out;
  }

  private render(message: StoredMessage, request: ReceiveRequest): JsonObject {
    const out: JsonObject = {
      MessageId: message.messageId,
      ReceiptHandle: message.receiptHandle,
      MD5OfBody: message.md5OfBody,
      Body: message.body,
    };
    const wanted = new Set(request.systemAttributeNames);
    const all = wanted.has('All');
    const system: Record<string, string> = {};
    const values: Record<(typeof SYSTEM_ATTRIBUTES)[number], string | undefined> = {
      SenderId: this.options.accountId,
      SentTimestamp: String(message.sentTimestamp),
      ApproximateReceiveCount: String(message.receiveCount),
      ApproximateFirstReceiveTimestamp: message.firstReceiveTimestamp === undefined ? undefined : String(message.firstReceiveTimestamp),
      DeadLetterQueueSourceArn: message.deadLetterSourceArn,
    };
    for (const name of SYSTEM_ATTRIBUTES) {
      const value = values[name];
      if ((all || wanted.has(name)) && value !== undefined) system[name] = value;
    }
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

  private newReceiptHandle(queue: Queue, message: StoredMessage): string {
    const token = randomBytes(12).toString('hex');
    return Buffer.from(JSON.stringify({ q: queue.name, m: message.messageId, t: token }), 'utf8').toString('base64');
  }

  /** Decodes a handle; garbage, or a handle for another queue, is ReceiptHandleIsInvalid. */
  private parseReceiptHandle(queue: Queue, handle: string): string {
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

  private deleteByHandle(queue: Queue, handle: string): void {
    const id = this.parseReceiptHandle(queue, handle);
    const message = queue.messages.get(id);
    // A well-formed but stale handle (message re-received since, or already deleted) succeeds
    // without deleting, as in SQS: only the latest receipt handle deletes the message.
    if (message?.receiptHandle === handle) queue.messages.delete(id);
  }

  private changeVisibility(queue: Queue, handle: string, timeout: number): void {
    const id = this.parseReceiptHandle(queue, handle);
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

  private batchEntries(input: JsonObject): JsonObject[] {
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
      const id = this.entryId(entry);
      if (seen.has(id)) throw new SqsError('BatchEntryIdsNotDistinct', `Id ${id} repeated.`);
      seen.add(id);
    }
    return entries;
  }

  private entryId(entry: JsonObject): string {
    const id = optString(entry, 'Id');
    if (id === undefined || !BATCH_ID.test(id)) {
      throw new SqsError(
        'InvalidBatchEntryId',
        'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
      );
    }
    return id;
  }

  private dropExpired(queue: Queue, now: number): void {
    const retentionMs = Number(queue.attributes.get('MessageRetentionPeriod') ?? DEFAULTS.MessageRetentionPeriod) * 1000;
    for (const [id, message] of queue.messages) {
      if (now - message.sentTimestamp >= retentionMs) queue.messages.delete(id);
    }
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
    if (queue.wakeTimer) clearTimeout(queue.wakeTimer);
    queue.wakeTimer = undefined;
    queue.wakeAt = 0;
    if (next === Number.POSITIVE_INFINITY) return;
    queue.wakeAt = next;
    queue.wakeTimer = setTimeout(
      () => {
        queue.wakeTimer = undefined;
        queue.wakeAt = 0;
        this.notify(queue);
      },
      Math.max(0, next - Date.now()) + 1,
    );
    queue.wakeTimer.unref();
  }

  private endWaiters(queue: Queue): void {
    for (const waiter of [...queue.waiters]) waiter.done([]);
    if (queue.wakeTimer) clearTimeout(queue.wakeTimer);
    queue.wakeTimer = undefined;
  }
}

function receiveResult(messages: JsonObject[]): JsonObject {
  return messages.length > 0 ? { Messages: messages } : {};
}

function batchFailure(id: string, error: SqsError): JsonObject {
  return { Id: id, SenderFault: error.fault === 'Sender', Code: error.queryCode, Message: error.message };
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
