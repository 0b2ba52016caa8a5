/**
 * The worker's batch loop: a batch of one queue's records in, one outcome per record out. Each record
 * is parsed once (./parse.ts); a kind the queue carries goes to its feature's handler (./queues.ts),
 * a few jobs at a time; anything else is quarantined in the DLQ with its reason, never dropped. Every
 * record's work runs through `settle`: the deadline budget, and one place that turns a failure into a
 * retry (with the wait it asked for) or an outcome.
 */
import { DIGEST_METRICS } from '../contracts';
import { ChannelPaceDeferred } from '../errors';
import { describeError } from '../observability';
import type { Clock, DeadLetters, Log, Metrics } from '../ports';
import type { Job, KindHandler, QueueRecord, RecordResult, WorkItem, WorkLabel } from '../queue-work';
import { classifyFailure, retryNote } from '../digest/failures';
import { MESSAGE_KIND_NAMES, MESSAGE_KINDS, type KindsOf, type MessageKind, type MessagePayloads, type QueueName } from './kinds';
import { parseQueuedMessage } from './parse';

export interface BatchDeps {
  /** Where an unusable message goes, with its reason, instead of being deleted. */
  deadLetters: DeadLetters;
  clock: Clock;
  log: Log;
  metrics: Metrics;
  /** The invocation's deadline (epoch ms). */
  deadline: () => number;
  /** Time one record may need: with less left before the deadline it is handed back, not started. */
  recordBudgetMs: number;
  /** The queue's maxReceiveCount, when known: a failure on the last receive says the message moves to the DLQ. */
  maxReceiveCount: number | undefined;
}

/** A record done, or to come again: after `retryAfterSeconds` (none: the queue's timeout); `requeue`: sent again, not handed back. */
export type RecordOutcome =
  | { messageId: string; ok: true; result: RecordResult }
  | { messageId: string; ok: false; retryAfterSeconds: number | undefined; requeue?: true };

/** Each kind a queue carries, with its handler over the queue's deps. A mapped type: a kind without its handler fails `tsc`. */
export type QueueHandlers<Q extends QueueName, D> = { readonly [K in KindsOf<Q>]: KindHandler<MessagePayloads[K], D> };

export interface Queue<Q extends QueueName, D> {
  name: Q;
  handlers: QueueHandlers<Q, D>;
}

/** Different projects of one batch are digested side by side, a few at a time (read-API rate limit). */
const PROJECT_CONCURRENCY = 3;

type Outcomes = Map<string, RecordOutcome>;
type Labelled = Pick<WorkItem<unknown>, 'record' | 'label'>;
type UnusableItem = { record: QueueRecord; reason: string; eventId: string | undefined; type: string | undefined };
type ItemsByKind = { [K in MessageKind]?: WorkItem<MessagePayloads[K]>[] };

/** A batch sorted by kind, and what is not for this queue. */
interface SortedBatch {
  items: ItemsByKind;
  unusable: UnusableItem[];
  ignored: QueueRecord[];
}

export async function processBatch<Q extends QueueName, D>(
  records: readonly QueueRecord[],
  queue: Queue<Q, D>,
  deps: D,
  batch: BatchDeps,
): Promise<RecordOutcome[]> {
  const outcomes: Outcomes = new Map();
  const sorted = sortBatch(records, queue.name, batch);
  for (const record of sorted.ignored) outcomes.set(record.messageId, { messageId: record.messageId, ok: true, result: 'ignored' });
  const settleOne = (item: Labelled, work: () => Promise<RecordResult>) => settle(item, work, batch, outcomes);
  const jobs: Job[] = [];
  for (const item of sorted.unusable) jobs.push(() => quarantine(item, batch, outcomes));
  for (const kind of MESSAGE_KIND_NAMES) jobs.push(...kindJobs(kind, queue, sorted.items, deps, settleOne));
  await runLimited(jobs, PROJECT_CONCURRENCY);
  return records.map(
    (record) => outcomes.get(record.messageId) ?? { messageId: record.messageId, ok: false, retryAfterSeconds: undefined },
  );
}

function kindJobs<K extends MessageKind, Q extends QueueName, D>(
  kind: K,
  queue: Queue<Q, D>,
  items: ItemsByKind,
  deps: D,
  settleOne: (item: Labelled, work: () => Promise<RecordResult>) => Promise<void>,
): Job[] {
  const ofKind = items[kind] ?? [];
  if (ofKind.length === 0) return [];
  // sortBatch files only the queue's own kinds: K is one of KindsOf<Q> here.
  const handler = (queue.handlers as unknown as Record<K, KindHandler<MessagePayloads[K], D>>)[kind];
  return handler(ofKind as WorkItem<MessagePayloads[K]>[], deps, settleOne);
}

/** Parses each message once, into the queue's kinds, the unusable (a kind of another queue among them) and the ignored. */
function sortBatch(records: readonly QueueRecord[], queue: QueueName, deps: BatchDeps): SortedBatch {
  const batch: SortedBatch = { items: {}, unusable: [], ignored: [] };
  for (const record of records) {
    const parsed = parseQueuedMessage(record.body);
    if (parsed.kind === 'unusable') {
      batch.unusable.push({ record, reason: parsed.reason, eventId: parsed.hints.eventId, type: parsed.hints.type });
      continue;
    }
    if (parsed.kind === 'ignored') {
      deps.log.info('replayed delivery ignored', { messageId: record.messageId, reason: parsed.reason });
      batch.ignored.push(record);
      continue;
    }
    const { message } = parsed;
    const carrier: QueueName = MESSAGE_KINDS[message.kind].queue;
    if (carrier !== queue) {
      const reason = `a ${message.kind} message on the ${queue} queue: it belongs on the ${carrier} queue`;
      batch.unusable.push({ record, reason, eventId: parsed.hints.eventId, type: parsed.hints.type });
      continue;
    }
    deps.log.debug('message parsed', { messageId: record.messageId, kind: message.kind, eventId: parsed.hints.eventId });
    file(batch.items, record, message);
  }
  return batch;
}

function file(items: ItemsByKind, record: QueueRecord, message: { kind: MessageKind; payload: unknown }): void {
  const label = (MESSAGE_KINDS[message.kind].label as (payload: unknown) => WorkLabel)(message.payload);
  // The items of message.kind get message.payload: the same kind on both sides, which TypeScript cannot correlate.
  (items[message.kind] ??= []).push({ record, payload: message.payload, label } as never);
}

/**
 * A message this version can never process goes to the DLQ with its reason (never deleted), so a
 * later version can take it with `bridge dlq replay`. If the DLQ can't be reached, the message is
 * handed back and reaches the DLQ by the queue's own redrive.
 */
async function quarantine(item: UnusableItem, deps: BatchDeps, outcomes: Outcomes): Promise<void> {
  const { messageId } = item.record;
  const fields = { messageId, eventId: item.eventId, type: item.type, reason: item.reason };
  try {
    const attributes = {
      source: 'digest',
      quarantined_at: new Date(deps.clock.now()).toISOString(),
      event_id: item.eventId ?? '',
      type: item.type ?? '',
    };
    await deps.deadLetters.quarantine(item.record.body, item.reason, attributes);
    deps.log.error('message quarantined in the DLQ: this version cannot process it', fields);
    deps.metrics.count(DIGEST_METRICS.messageQuarantined);
    outcomes.set(messageId, { messageId, ok: true, result: 'quarantined' });
  } catch (error) {
    deps.log.error('could not quarantine an unusable message; it is handed back', { ...fields, ...describeError(error) });
    outcomes.set(messageId, { messageId, ok: false, retryAfterSeconds: undefined });
  }
}

async function settle(item: Labelled, work: () => Promise<RecordResult>, deps: BatchDeps, outcomes: Outcomes): Promise<void> {
  const { messageId } = item.record;
  if (!timeLeftFor(deps)) {
    // Started now, it could be cut off half-posted; the retry starts it with a whole budget.
    deps.log.warn('record handed back: not enough time left in this invocation', { messageId, eventId: item.label.id });
    outcomes.set(messageId, { messageId, ok: false, retryAfterSeconds: undefined });
    return;
  }
  try {
    outcomes.set(messageId, { messageId, ok: true, result: await work() });
  } catch (error) {
    if (error instanceof ChannelPaceDeferred) {
      deps.log.info("record handed back to keep its channel's pace", {
        messageId,
        eventId: item.label.id,
        channel: error.channel,
        retryAfterMs: error.retryAfterMs,
      });
      // Waiting for the pace is not a failure: sent again, it does not count towards the DLQ.
      outcomes.set(messageId, { messageId, ok: false, retryAfterSeconds: error.retryAfterSeconds, requeue: true });
      return;
    }
    const verdict = classifyFailure(error);
    const fields = {
      messageId,
      eventId: item.label.id,
      type: item.label.type,
      errorName: verdict.errorName,
      errorMessage: verdict.errorMessage,
      retryAfterSeconds: verdict.retryAfterSeconds,
    };
    if (verdict.needsFix)
      deps.log.error(`digest failed and needs a fix: ${verdict.fix ?? verdict.errorMessage}`, { ...fields, fix: verdict.fix });
    else deps.log.warn(retryNote(item.record.receiveCount, deps.maxReceiveCount), { ...fields, fix: verdict.fix });
    deps.metrics.count(DIGEST_METRICS.digestFailed);
    outcomes.set(messageId, { messageId, ok: false, retryAfterSeconds: verdict.retryAfterSeconds });
  }
}

function timeLeftFor(deps: BatchDeps): boolean {
  return deps.deadline() - deps.clock.now() >= deps.recordBudgetMs;
}

async function runLimited(jobs: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++];
      if (job) await job();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
}
