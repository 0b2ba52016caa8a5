/**
 * A local stand-in for Lambda's SQS event source mapping (with ReportBatchItemFailures).
 *
 * `concurrency` pollers (Lambda's maximum concurrency) each long-poll the queue (ReceiveMessage with
 * all system and message attributes, up to `batchSize` messages), shape the messages into an
 * `SQSEvent` exactly as Lambda does, invoke the function with a context whose
 * `getRemainingTimeInMillis()` counts down from `functionTimeoutMs`, and then delete every record
 * that is not in the answer's `batchItemFailures`:
 * - an answer with no `batchItemFailures` (or `undefined`) deletes the whole batch;
 * - a failure whose `itemIdentifier` is empty or not a message id of the batch fails the whole batch;
 * - a function that throws or runs out of time deletes nothing.
 * Whatever is not deleted comes back after its visibility timeout; the queue's redrive policy (in
 * the SQS server) moves it to the DLQ after maxReceiveCount receives.
 *
 * Each poller owns one handler instance, built on its first batch: like a Lambda container, it is
 * never given two batches at once. A timed-out instance is dropped and a new one built.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { withTimeout } from './timeout';

export type SqsLambdaHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface LambdaPollerOptions {
  client: SQSClient;
  queueUrl: string;
  /** `eventSourceARN` of the records. */
  queueArn: string;
  /** `awsRegion` of the records (default us-east-1). */
  region?: string;
  /** Builds one handler instance (one per poller, rebuilt after a timeout). */
  createHandler: () => SqsLambdaHandler;
  /** Messages per batch, 1–10 (default 10). */
  batchSize?: number;
  /**
   * MaximumBatchingWindowInSeconds: after the first message, keep receiving for up to this long
   * (or until `batchSize` messages) before invoking. Default 0: invoke with what one receive got.
   */
  batchingWindowSeconds?: number;
  /** FunctionResponseTypes has ReportBatchItemFailures (default true); otherwise a returned value is ignored. */
  reportBatchItemFailures?: boolean;
  /** Pollers running side by side (default 2, like maximum concurrency 2). */
  concurrency?: number;
  /** ReceiveMessage WaitTimeSeconds, 0–20 (default 20). */
  waitTimeSeconds?: number;
  /** The function timeout (default 60 000 ms). */
  functionTimeoutMs?: number;
  functionName?: string;
  /** Problems the event source would report (receive/delete errors, function errors and timeouts). */
  onError?: (problem: PollerProblem) => void;
  /** Called after each invocation with what was deleted and what was left on the queue. */
  onBatch?: (outcome: BatchOutcome) => void;
}

export type PollerProblem =
  | { kind: 'receive' | 'delete'; error: unknown }
  | { kind: 'function_error'; error: unknown; messageIds: string[] }
  | { kind: 'timeout'; timeoutMs: number; messageIds: string[] }
  | { kind: 'invalid_response'; detail: string; messageIds: string[] };

export interface BatchOutcome {
  messageIds: string[];
  deleted: string[];
  /** Left on the queue: reported failures, or the whole batch when the invocation failed. */
  failed: string[];
  durationMs: number;
}

const RECEIVE_ERROR_BACKOFF_MS = [200, 500, 1000, 2000];

export class LambdaPoller {
  private readonly abort = new AbortController();
  private readonly workers: Promise<void>[] = [];
  private busy = 0;
  private started = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: LambdaPollerOptions) {}

  /** Batches received and not yet finished (handler running, or deletes pending). */
  get inFlight(): number {
    return this.busy;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    const concurrency = Math.max(1, Math.floor(this.options.concurrency ?? 2));
    for (let i = 0; i < concurrency; i++) this.workers.push(this.work());
  }

  /**
   * Stops polling (ends the long polls at once) and waits for the batches in flight to finish and be
   * deleted, at most `graceMs`; a batch still running after that is left to its visibility timeout.
   */
  close(graceMs = 10_000): Promise<void> {
    this.closing ??= (async () => {
      this.abort.abort();
      await Promise.race([Promise.allSettled(this.workers), delay(graceMs, undefined, { ref: false })]);
    })();
    return this.closing;
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async work(): Promise<void> {
    let handler: SqsLambdaHandler | undefined;
    let receiveFailures = 0;
    while (!this.stopped) {
      let messages: Message[];
      try {
        messages = await this.receive(clamp(this.options.batchSize ?? 10, 1, 10), clamp(this.options.waitTimeSeconds ?? 20, 0, 20));
        receiveFailures = 0;
        if (messages.length > 0) messages = await this.fillBatchingWindow(messages);
      } catch (error) {
        if (this.stopped) break;
        this.report({ kind: 'receive', error });
        await this.sleep(RECEIVE_ERROR_BACKOFF_MS[Math.min(receiveFailures, RECEIVE_ERROR_BACKOFF_MS.length - 1)] ?? 1000);
        receiveFailures += 1;
        continue;
      }
      // Received messages are handled even when closing: they are already hidden from everyone else.
      if (messages.length === 0) continue;
      this.busy += 1;
      try {
        try {
          handler ??= this.options.createHandler();
        } catch (error) {
          // An init error: Lambda fails the invocation; the batch comes back after its visibility timeout.
          this.report({ kind: 'function_error', error, messageIds: messages.map((m) => m.MessageId ?? '') });
          continue;
        }
        const keep = await this.invoke(handler, messages);
        if (!keep) handler = undefined;
      } finally {
        this.busy -= 1;
      }
    }
  }

  /** One ReceiveMessage with every attribute, as the event source asks for them. */
  private async receive(max: number, waitSeconds: number): Promise<Message[]> {
    const received = await this.options.client.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
      { abortSignal: this.abort.signal },
    );
    return received.Messages ?? [];
  }

  /** More receives until the batch is full or the batching window has passed since the first message. */
  private async fillBatchingWindow(first: Message[]): Promise<Message[]> {
    const windowMs = (this.options.batchingWindowSeconds ?? 0) * 1000;
    const batchSize = clamp(this.options.batchSize ?? 10, 1, 10);
    const until = Date.now() + windowMs;
    const messages = [...first];
    while (messages.length < batchSize && Date.now() < until && !this.stopped) {
      try {
        messages.push(...(await this.receive(batchSize - messages.length, clamp(Math.ceil((until - Date.now()) / 1000), 0, 20))));
      } catch {
        break; // What was received is invoked now; the next receive reports the problem.
      }
    }
    return messages;
  }

  /** One invocation and its deletes; false when the handler instance must not be reused (timed out). */
  private async invoke(handler: SqsLambdaHandler, messages: Message[]): Promise<boolean> {
    const started = Date.now();
    const records = messages.map((m) => toSqsRecord(m, this.options.queueArn, this.options.region ?? 'us-east-1'));
    const messageIds = records.map((r) => r.messageId);
    const timeoutMs = this.options.functionTimeoutMs ?? 60_000;
    const context = lambdaContext(this.options.functionName ?? 'digest', timeoutMs, started, this.options.region ?? 'us-east-1');

    // Like Lambda, an invocation that times out is not stopped: its instance is just never reused.
    const result = await withTimeout(() => handler({ Records: records }, context), timeoutMs);

    const outcome = (deleted: string[], failed: string[]): void => {
      try {
        this.options.onBatch?.({ messageIds, deleted, failed, durationMs: Date.now() - started });
      } catch {
        // Observing must not break polling.
      }
    };
    if (!result.ok) {
      this.report(
        result.timedOut ? { kind: 'timeout', timeoutMs, messageIds } : { kind: 'function_error', error: result.error, messageIds },
      );
      outcome([], messageIds);
      return !result.timedOut;
    }
    const failures = this.options.reportBatchItemFailures === false ? new Set<string>() : batchFailures(result.result, messageIds);
    if (failures === 'invalid') {
      this.report({
        kind: 'invalid_response',
        detail: 'batchItemFailures names an empty or unknown itemIdentifier: the whole batch fails',
        messageIds,
      });
      outcome([], messageIds);
      return true;
    }
    const toDelete = records.filter((r) => !failures.has(r.messageId));
    const deleted = await this.deleteRecords(toDelete);
    outcome(
      deleted,
      messageIds.filter((id) => failures.has(id)),
    );
    return true;
  }

  /** One DeleteMessageBatch: a batch is at most 10 messages, as many as it takes. */
  private async deleteRecords(records: SQSRecord[]): Promise<string[]> {
    if (records.length === 0) return [];
    try {
      const answer = await this.options.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: records.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
        }),
      );
      const failed = answer.Failed ?? [];
      if (failed.length > 0) {
        const codes = failed.map((f) => f.Code).join(', ');
        this.report({ kind: 'delete', error: new Error(`DeleteMessageBatch failed for ${failed.length} message(s): ${codes}`) });
      }
      const failedIds = new Set(failed.map((f) => f.Id));
      return records.filter((_r, i) => !failedIds.has(String(i))).map((r) => r.messageId);
    } catch (error) {
      this.report({ kind: 'delete', error });
      return [];
    }
  }

  private report(problem: PollerProblem): void {
    try {
      this.options.onError?.(problem);
    } catch {
      // Reporting must not break polling.
    }
  }

  /** Waits `ms`, or less when the poller closes. */
  private sleep(ms: number): Promise<void> {
    return delay(ms, undefined, { signal: this.abort.signal }).catch(() => undefined);
  }
}

/** The ids to leave on the queue; 'invalid' when Lambda would fail the whole batch. */
function batchFailures(response: SQSBatchResponse | void, messageIds: readonly string[]): Set<string> | 'invalid' {
  if (response === undefined || response === null) return new Set();
  const items: unknown = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (items === undefined || items === null) return new Set();
  if (!Array.isArray(items)) return 'invalid';
  const known = new Set(messageIds);
  const failed = new Set<string>();
  for (const item of items as unknown[]) {
    const id = typeof item === 'object' && item !== null ? (item as { itemIdentifier?: unknown }).itemIdentifier : undefined;
    if (typeof id !== 'string' || id === '' || !known.has(id)) return 'invalid';
    failed.add(id);
  }
  return failed;
}

/** One SQS message as the Lambda SQS event source puts it in `event.Records`. */
export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const system = message.Attributes ?? {};
  const attributes: SQSRecord['attributes'] = {
    ApproximateReceiveCount: system.ApproximateReceiveCount ?? '1',
    SentTimestamp: system.SentTimestamp ?? String(Date.now()),
    SenderId: system.SenderId ?? '',
    ApproximateFirstReceiveTimestamp: system.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  };
  for (const name of [
    'AWSTraceHeader',
    'SequenceNumber',
    'MessageGroupId',
    'MessageDeduplicationId',
    'DeadLetterQueueSourceArn',
  ] as const) {
    const value = system[name];
    if (value !== undefined) attributes[name] = value;
  }
  const record: SQSRecord = {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes,
    messageAttributes: lambdaMessageAttributes(message.MessageAttributes ?? {}),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
  if (message.MD5OfMessageAttributes !== undefined) record.md5OfMessageAttributes = message.MD5OfMessageAttributes;
  return record;
}

/** SQS's `{ DataType, StringValue | BinaryValue }` to Lambda's `{ dataType, stringValue | binaryValue (base64), stringListValues, binaryListValues }`. */
function lambdaMessageAttributes(attributes: Record<string, MessageAttributeValue>): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    out[name] = {
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') } : {}),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64')),
      dataType: value.DataType ?? 'String',
    };
  }
  return out;
}

function lambdaContext(functionName: string, timeoutMs: number, startedMs: number, region: string): Context {
  const deadline = startedMs + timeoutMs;
  const unsupported = (what: string) => (): never => {
    throw new Error(`context.${what} is not supported locally; return from the async handler instead`);
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/[$LATEST]${randomUUID().replace(/-/g, '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(value)));
}
