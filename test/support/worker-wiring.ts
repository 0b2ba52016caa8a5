/**
 * The digest function's worker as a test wires it: the pieces a test gives, the rest as tests run it
 * (no deadline, real waits, the default options), split into each queue's deps by the function's own
 * wiring (shared/worker/wiring.ts).
 */
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import type { MessageVisibility, Log, Metrics } from '../../shared/ports';
import type { QueueRecord } from '../../shared/queue-work';
import { DIGEST_OPTION_DEFAULTS, type DigestOptions } from '../../shared/digest/deps';
import { processBatch, type BatchDeps, type RecordOutcome } from '../../shared/worker/batch';
import { COMMAND_QUEUE, DIGEST_QUEUE } from '../../shared/worker/queues';
import { handleSqsBatch } from '../../shared/worker/sqs';
import { commandQueueDeps, digestQueueDeps, type WorkerWiring } from '../../shared/worker/wiring';
import { sleep } from '../../shared/util';

/** What a test gives: the function's wiring, with the deadline, waits and options optional. */
export type TestWiring = Omit<WorkerWiring, 'deadline' | 'sleep' | 'digestOptions' | 'batch'> & {
  deadline?: (() => number) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  options?: Partial<DigestOptions & Pick<BatchDeps, 'recordBudgetMs' | 'maxReceiveCount'>> | undefined;
};

export function testWiring(parts: TestWiring): WorkerWiring {
  const { deadline, sleep: wait, options = {}, ...rest } = parts;
  const { recordBudgetMs = 0, maxReceiveCount, ...digestOptions } = options;
  return {
    ...rest,
    deadline: deadline ?? (() => Number.POSITIVE_INFINITY),
    sleep: wait ?? sleep,
    digestOptions: { ...DIGEST_OPTION_DEFAULTS, ...digestOptions },
    batch: { recordBudgetMs, maxReceiveCount },
  };
}

export type TestQueue = 'digest' | 'commands';

/** One batch of `queue` through the worker's loop (no SQS). */
export function processTestBatch(
  records: readonly QueueRecord[],
  parts: TestWiring,
  queue: TestQueue = 'digest',
): Promise<RecordOutcome[]> {
  const wiring = testWiring(parts);
  if (queue === 'commands') {
    const { deps, batch } = commandQueueDeps(wiring);
    return processBatch(records, COMMAND_QUEUE, deps, batch);
  }
  const { deps, batch } = digestQueueDeps(wiring);
  return processBatch(records, DIGEST_QUEUE, deps, batch);
}

/** One SQS batch of `queue` as the function handles it: the partial batch response. */
export function handleTestBatch(
  records: readonly SQSRecord[],
  parts: () => TestWiring | Promise<TestWiring>,
  visibility: MessageVisibility,
  observer: Log & Metrics,
  queue: TestQueue = 'digest',
): Promise<SQSBatchResponse> {
  return queue === 'commands'
    ? handleSqsBatch(records, COMMAND_QUEUE, async () => commandQueueDeps(testWiring(await parts())), visibility, observer, observer)
    : handleSqsBatch(records, DIGEST_QUEUE, async () => digestQueueDeps(testWiring(await parts())), visibility, observer, observer);
}
