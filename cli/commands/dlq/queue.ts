/**
 * SQS access shared by the `bridge dlq` sub-commands: queue depths, the CLI's view of a DLQ
 * message, and receive / release helpers that hide messages only briefly.
 */
import { parseQueuedMessage } from '../../../shared/worker/parse';
import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { MESSAGE_ATTRIBUTE_EVENT_ID, MESSAGE_ATTRIBUTE_PROJECT, MESSAGE_ATTRIBUTE_TYPE } from '../../../shared/events';
import { STACK_TENANT, tenantLabel } from '../../../shared/tenancy';
import { aws, type ErrorContext } from '../../errors';

/** How long peeked messages are hidden while the CLI walks the queue (released at once after). */
export const PEEK_HOLD_SECONDS = 30;
/** How long `replay` hides messages it is looking at; a crash leaves them hidden at most this long. */
export const REPLAY_HOLD_SECONDS = 300;
/** Long-poll wait per receive: short polls on SQS sample only some servers and can come back empty. */
export const RECEIVE_WAIT_SECONDS = 1;

export interface QueueRef {
  url: string;
  /** For error messages: the SQS endpoint override, when there is one. */
  endpoint?: string | undefined;
}

export function ctxFor(queue: QueueRef): ErrorContext {
  return { service: 'SQS', resource: queue.url, ...(queue.endpoint !== undefined ? { endpoint: queue.endpoint } : {}) };
}

export interface QueueDepth {
  url: string;
  arn: string;
  visible: number;
  inFlight: number;
  delayed: number;
}

export async function queueDepth(sqs: SQSClient, queue: QueueRef): Promise<QueueDepth> {
  const result = await aws(ctxFor(queue), () =>
    sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queue.url,
        AttributeNames: [
          'QueueArn',
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    ),
  );
  const attributes = result.Attributes ?? {};
  const count = (name: string): number => {
    const value = Number(attributes[name as keyof typeof attributes] ?? '0');
    return Number.isFinite(value) ? value : 0;
  };
  return {
    url: queue.url,
    arn: attributes.QueueArn ?? '',
    visible: count('ApproximateNumberOfMessages'),
    inFlight: count('ApproximateNumberOfMessagesNotVisible'),
    delayed: count('ApproximateNumberOfMessagesDelayed'),
  };
}

/** What the CLI shows of a DLQ message: the queued event's identity and how long it has waited. */
export interface DlqMessage {
  messageId: string;
  eventId: string | undefined;
  type: string | undefined;
  projectId: string | undefined;
  /** When ingest accepted the delivery (body `received_at`), else when the message was sent. */
  receivedAt: string | undefined;
  ageMs: number | undefined;
  /** Receives before this CLI's own receive (the digest's attempts). */
  receiveCount: number | undefined;
  /** Why it is here: the quarantine reason it carries, else the digest's last recorded failure (peek fills it). */
  reason: string | undefined;
  /**
   * Whose work it is: the connection id its body names, else its MessageGroupId, else `stack` (the
   * stack's own webhook and schedules): what `dlq replay --connection` selects and sends it back with.
   */
  tenant: string;
}

function attr(message: Message, name: string): string | undefined {
  const value = message.MessageAttributes?.[name]?.StringValue;
  return value === undefined || value === '' ? undefined : value;
}

/** A DLQ message as `bridge dlq` shows it, read with the digest's own parser (one parse for both), falling back to its attributes. */
export function describeMessage(message: Message, now: number): DlqMessage {
  const { hints } = parseQueuedMessage(message.Body);
  let receivedAt = hints.receivedAt;
  const sent = Number(message.Attributes?.SentTimestamp);
  if (receivedAt === undefined && Number.isFinite(sent) && sent > 0) receivedAt = new Date(sent).toISOString();
  const received = Number(message.Attributes?.ApproximateReceiveCount);
  return {
    messageId: message.MessageId ?? '',
    eventId: hints.eventId ?? attr(message, MESSAGE_ATTRIBUTE_EVENT_ID),
    type: hints.type ?? attr(message, MESSAGE_ATTRIBUTE_TYPE),
    projectId: hints.projectId ?? attr(message, MESSAGE_ATTRIBUTE_PROJECT),
    receivedAt,
    ageMs: receivedAt === undefined ? undefined : Math.max(0, now - Date.parse(receivedAt)),
    receiveCount: Number.isFinite(received) && received > 0 ? received - 1 : undefined,
    reason: attr(message, 'reason'),
    tenant: hints.connection ?? message.Attributes?.MessageGroupId ?? tenantLabel(STACK_TENANT),
  };
}

const RECEIVE_ATTRIBUTES = {
  MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount', 'MessageGroupId'] as (
    'SentTimestamp' | 'ApproximateReceiveCount' | 'MessageGroupId'
  )[],
  MessageAttributeNames: ['All'],
};

export async function receiveBatch(
  sqs: SQSClient,
  queue: QueueRef,
  max: number,
  visibilityTimeout: number,
  waitSeconds: number,
): Promise<Message[]> {
  const result = await aws(ctxFor(queue), () =>
    sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.url,
        MaxNumberOfMessages: Math.min(10, Math.max(1, max)),
        VisibilityTimeout: visibilityTimeout,
        WaitTimeSeconds: waitSeconds,
        ...RECEIVE_ATTRIBUTES,
      }),
    ),
  );
  return result.Messages ?? [];
}

/** Makes messages visible again at once (best effort: a failure only delays them by the hold time). */
export async function release(sqs: SQSClient, queue: QueueRef, handles: readonly string[]): Promise<number> {
  let failed = 0;
  for (let i = 0; i < handles.length; i += 10) {
    const chunk = handles.slice(i, i + 10);
    try {
      const result = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queue.url,
          Entries: chunk.map((handle, j) => ({ Id: `m${j}`, ReceiptHandle: handle, VisibilityTimeout: 0 })),
        }),
      );
      failed += result.Failed?.length ?? 0;
    } catch {
      failed += chunk.length;
    }
  }
  return failed;
}
