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
import { MESSAGE_ATTRIBUTE_TENANT } from '../events';
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
  const byId = new Map(records.map((r) => [r.messageId, r]));
  const handedBack = await Promise.all(
    outcomes.map(async (outcome): Promise<string[]> => {
      const record = byId.get(outcome.messageId);
      if (outcome.ok) return [];
      if (record === undefined) return [outcome.messageId];
      if (
        outcome.requeue &&
        outcome.retryAfterSeconds !== undefined &&
        (await requeued(record, outcome.retryAfterSeconds, visibility, log))
      )
        return [];
      if (outcome.retryAfterSeconds === undefined) return [outcome.messageId];
      try {
        await visibility.delay(record.receiptHandle, outcome.retryAfterSeconds);
      } catch (error) {
        // The queue's own visibility timeout still brings it back, just not at the requested time.
        log.warn('could not set the retry delay on a failed message', { messageId: outcome.messageId, ...describeError(error) });
      }
      return [outcome.messageId];
    }),
  );
  return handBack(handedBack.flat(), metrics);
}

/** SQS's longest DelaySeconds: a longer wait comes back then and is deferred again. */
const MAX_DELAY_SECONDS = 900;

/** How many times the pace has sent this record again (a message attribute the re-sent copy carries). */
export const PACE_REQUEUES_ATTRIBUTE = 'pace_requeues';

/** The pace's wait (at least 1 s) the first time, doubled each time the record was sent again before; at most SQS's 900 s. */
export function paceRequeueDelaySeconds(waitSeconds: number, requeuesBefore: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(waitSeconds)) * 2 ** Math.min(Math.max(0, requeuesBefore), 10));
}

/**
 * Sends the record again, keeping its tenant's group; true when sent (the original is then deleted as
 * done). Were both to come back (the send went through, the delete did not), the posting claims keep the
 * digest posted once. Not sent: it is handed back as before. The delay is the pace's wait the first
 * time, doubled each time after: a deferred record redoes its digest's reads, so a client's backlog
 * behind its channel's pace comes back a few times each, not once per slot.
 */
async function requeued(record: SQSRecord, waitSeconds: number, visibility: MessageVisibility, log: Log): Promise<boolean> {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {}))
    if (value.stringValue !== undefined) attributes[name] = value.stringValue;
  const requeues = Number(attributes[PACE_REQUEUES_ATTRIBUTE] ?? 0) || 0;
  attributes[PACE_REQUEUES_ATTRIBUTE] = String(requeues + 1);
  const delaySeconds = paceRequeueDelaySeconds(waitSeconds, requeues);
  try {
    await visibility.requeue({ body: record.body, attributes, groupId: requeueGroupOf(record) }, delaySeconds);
    return true;
  } catch (error) {
    log.warn('could not send a paced record again; it is handed back', { messageId: record.messageId, ...describeError(error) });
    return false;
  }
}

/**
 * The tenant group a re-sent record keeps: its MessageGroupId, or (should the event source not pass the
 * group on) the tenant ingest named in its attributes. A copy without a group would count as a quiet
 * tenant of its own and be received ahead of the other tenants.
 */
export function requeueGroupOf(record: Pick<SQSRecord, 'attributes' | 'messageAttributes'>): string | undefined {
  return record.attributes?.MessageGroupId ?? record.messageAttributes?.[MESSAGE_ATTRIBUTE_TENANT]?.stringValue;
}

/** The partial batch response, counted: the BatchItemFailures alarm reads BatchItemFailed. */
function handBack(messageIds: readonly string[], metrics: Metrics): SQSBatchResponse {
  if (messageIds.length > 0) metrics.count(DIGEST_METRICS.batchItemFailed, messageIds.length);
  return { batchItemFailures: messageIds.map((itemIdentifier) => ({ itemIdentifier })) };
}
