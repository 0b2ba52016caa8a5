/**
 * SQS batch handling with partial batch responses: only the messages that failed are returned
 * (`batchItemFailures`), so one bad message never fails its neighbours. A failure that asked for a
 * specific wait (429 Retry-After, a busy claim) gets that visibility timeout before it goes back.
 */
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { processBatch, type BatchDeps, type Queue } from './batch';
import type { QueueName } from './kinds';
import { classifyFailure } from '../digest/failures';
import { describeError } from '../observability';
import { DIGEST_METRICS } from '../contracts';
import type { Log, MessageVisibility, Metrics } from '../ports';

/** One batch's deps: its queue's kinds' and the batch loop's own. */
export interface QueueDeps<D> {
  deps: D;
  batch: BatchDeps;
}

export async function handleSqsBatch<Q extends QueueName, D>(
  records: readonly SQSRecord[],
  queue: Queue<Q, D>,
  resolveDeps: () => Promise<QueueDeps<D>>,
  visibility: MessageVisibility,
  log: Log,
  metrics: Metrics,
): Promise<SQSBatchResponse> {
  let deps: QueueDeps<D>;
  try {
    deps = await resolveDeps();
  } catch (error) {
    // Without secrets nothing can be posted: give every message back (they reach the DLQ if it lasts).
    const verdict = classifyFailure(error);
    log.error(`digest batch not processed: ${verdict.fix ?? verdict.errorMessage}`, {
      errorName: verdict.errorName,
      errorMessage: verdict.errorMessage,
      messages: records.length,
    });
    return handBack(
      records.map((r) => r.messageId),
      metrics,
    );
  }
  const outcomes = await processBatch(
    records.map((r) => ({
      messageId: r.messageId,
      body: r.body,
      receiveCount: Number(r.attributes?.ApproximateReceiveCount) || undefined,
    })),
    queue,
    deps.deps,
    deps.batch,
  );
  const handles = new Map(records.map((r) => [r.messageId, r.receiptHandle]));
  const failures = outcomes.filter((o) => !o.ok);
  await Promise.all(
    failures.map(async (failure) => {
      const handle = handles.get(failure.messageId);
      if (failure.ok || failure.retryAfterSeconds === undefined || handle === undefined) return;
      try {
        await visibility.delay(handle, failure.retryAfterSeconds);
      } catch (error) {
        // The queue's own visibility timeout still brings it back, just not at the requested time.
        log.warn('could not set the retry delay on a failed message', { messageId: failure.messageId, ...describeError(error) });
      }
    }),
  );
  return handBack(
    failures.map((f) => f.messageId),
    metrics,
  );
}

/** The partial batch response, counted: the BatchItemFailures alarm reads BatchItemFailed. */
function handBack(messageIds: readonly string[], metrics: Metrics): SQSBatchResponse {
  if (messageIds.length > 0) metrics.count(DIGEST_METRICS.batchItemFailed, messageIds.length);
  return { batchItemFailures: messageIds.map((itemIdentifier) => ({ itemIdentifier })) };
}
