import type { SQSClient } from '@aws-sdk/client-sqs';
import {
  describeMessage,
  PEEK_HOLD_SECONDS,
  queueDepth,
  RECEIVE_WAIT_SECONDS,
  receiveBatch,
  release,
  type DlqMessage,
  type QueueDepth,
  type QueueRef,
} from './queue';

/**
 * Reads up to `max` DLQ messages without consuming them.
 *
 * Receiving is the only way SQS shows a message, and a receive hides it for the visibility
 * timeout. A receive with VisibilityTimeout 0 would leave every message visible, so the next
 * receive could return the same ones again and the walk would never reach the rest. Instead each
 * message is hidden briefly (30 s) so successive receives return distinct messages, and all of them
 * are made visible again (ChangeMessageVisibility 0) right after, also when the walk fails. Nothing
 * is deleted; the only trace is ApproximateReceiveCount + 1 (the DLQ has no redrive policy, so the
 * count has no effect; shown counts exclude this receive).
 */
export async function peekDlq(
  sqs: SQSClient,
  dlq: QueueRef,
  options: { max: number; now: () => number },
): Promise<{ depth: QueueDepth; messages: DlqMessage[] }> {
  const depth = await queueDepth(sqs, dlq);
  const wanted = Math.min(options.max, depth.visible);
  const messages: DlqMessage[] = [];
  const handles: string[] = [];
  const seen = new Set<string>();
  try {
    const maxReceives = Math.ceil(wanted / 10) + 3;
    for (let receives = 0; messages.length < wanted && receives < maxReceives; receives++) {
      const batch = await receiveBatch(sqs, dlq, wanted - messages.length, PEEK_HOLD_SECONDS, RECEIVE_WAIT_SECONDS);
      if (batch.length === 0) break;
      for (const message of batch) {
        if (message.ReceiptHandle !== undefined) handles.push(message.ReceiptHandle);
        const id = message.MessageId ?? '';
        if (seen.has(id)) continue;
        seen.add(id);
        messages.push(describeMessage(message, options.now()));
      }
    }
  } finally {
    await release(sqs, dlq, handles);
  }
  return { depth, messages };
}
