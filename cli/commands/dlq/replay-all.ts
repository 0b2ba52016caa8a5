/** Replays the whole DLQ with an SQS message move task, polling it until it ends. */
import {
  ListMessageMoveTasksCommand,
  StartMessageMoveTaskCommand,
  type ListMessageMoveTasksResultEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { aws, CliError, explainError } from '../../errors';
import { ctxFor, queueDepth, type QueueRef } from './queue';

export interface MoveProgress {
  status: string;
  moved: number;
  toMove: number | undefined;
}

export interface ReplayAllResult {
  mode: 'all';
  dryRun: boolean;
  status: string;
  moved: number;
  toMove: number;
  failureReason?: string;
  /** The move task's handle (for `npx bridge dlq cancel` and the SQS console). */
  taskHandle?: string;
  dlq: string;
  destination: string;
}

export interface ReplayAllOptions {
  rate?: number | undefined;
  dryRun: boolean;
  pollIntervalMs: number;
  sleep: (ms: number) => Promise<void>;
  onProgress?: (progress: MoveProgress) => void;
  /** Aborted (e.g. Ctrl-C): stop waiting and report INTERRUPTED; the task itself keeps running. */
  signal?: AbortSignal | undefined;
}

/** Sleeps, but wakes early when `signal` aborts. */
function pause(options: ReplayAllOptions): Promise<void> {
  const signal = options.signal;
  if (signal === undefined) return options.sleep(options.pollIntervalMs);
  return new Promise((resolve) => {
    const wake = (): void => resolve();
    signal.addEventListener('abort', wake, { once: true });
    void options.sleep(options.pollIntervalMs).then(() => {
      signal.removeEventListener('abort', wake);
      resolve();
    });
  });
}

export async function replayAll(sqs: SQSClient, dlq: QueueRef, source: QueueRef, options: ReplayAllOptions): Promise<ReplayAllResult> {
  const dlqDepth = await queueDepth(sqs, dlq);
  const sourceDepth = await queueDepth(sqs, source);
  const pending = dlqDepth.visible + dlqDepth.inFlight + dlqDepth.delayed;
  const base = { mode: 'all' as const, dryRun: options.dryRun, dlq: dlq.url, destination: source.url };
  if (options.dryRun) return { ...base, status: 'DRY_RUN', moved: 0, toMove: pending };
  if (pending === 0) return { ...base, status: 'EMPTY', moved: 0, toMove: 0 };

  let handle: string;
  try {
    const started = await sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: dlqDepth.arn,
        DestinationArn: sourceDepth.arn,
        ...(options.rate !== undefined ? { MaxNumberOfMessagesPerSecond: options.rate } : {}),
      }),
    );
    handle = started.TaskHandle ?? '';
  } catch (err) {
    if (err instanceof Error && /already a task running/i.test(err.message)) {
      throw new CliError(
        'a message move task is already running for this DLQ',
        'wait for it to finish (`npx bridge dlq stats` shows the DLQ draining) or stop it with `npx bridge dlq cancel`, then run replay again',
        'task_running',
      );
    }
    throw explainError(err, ctxFor(dlq));
  }

  for (;;) {
    if (options.signal?.aborted === true) return { ...base, status: 'INTERRUPTED', moved: 0, toMove: pending, taskHandle: handle };
    const listed = await aws(ctxFor(dlq), () => sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqDepth.arn, MaxResults: 10 })));
    const results: ListMessageMoveTasksResultEntry[] = listed.Results ?? [];
    // Only one task may run per DLQ: ours while it runs (listed with its handle), else the latest finished one.
    const task = results.find((entry) => entry.TaskHandle === handle) ?? results.find((entry) => entry.Status !== 'RUNNING');
    const status = task?.Status ?? 'RUNNING';
    const moved = task?.ApproximateNumberOfMessagesMoved ?? 0;
    const toMove = task?.ApproximateNumberOfMessagesToMove;
    options.onProgress?.({ status, moved, toMove });
    if (task !== undefined && status !== 'RUNNING') {
      return {
        ...base,
        status,
        moved,
        toMove: toMove ?? moved,
        taskHandle: handle,
        ...(task.FailureReason !== undefined ? { failureReason: task.FailureReason } : {}),
      };
    }
    await pause(options);
  }
}
