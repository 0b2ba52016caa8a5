// SQS message move tasks (StartMessageMoveTask and friends): redriving a dead-letter queue's messages
// back to their source queues, or to a given destination, at an optional rate.
import { randomUUID } from 'node:crypto';
import { freshDelivery } from './messages';
import { SqsError, invalidParameter } from './errors';
import { type JsonObject, optInt, optString, reqString } from './input';
import { type Queue, type StoredMessage, dropExpired, redrivePolicy } from './queue';

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

const TASK_TICK_MS = 50;

const notFound = (parameter: string): SqsError =>
  new SqsError('ResourceNotFoundException', `The resource that you specified for the ${parameter} parameter doesn't exist.`);

/** What the tasks need of the engine. */
export interface MoveTaskHost {
  queues(): Iterable<Queue>;
  queueByArn(arn: string): Queue | undefined;
  enqueue(queue: Queue, message: StoredMessage, delaySeconds: number): void;
}

export class MoveTasks {
  private readonly tasks = new Map<string, MoveTask>();
  private closed = false;

  constructor(private readonly host: MoveTaskHost) {}

  /** Fails the running tasks that move messages out of the deleted queue `sourceArn`. */
  sourceDeleted(sourceArn: string): void {
    for (const task of this.tasks.values()) {
      if (task.status === 'RUNNING' && task.sourceArn === sourceArn) this.finish(task, 'FAILED', 'Source queue was deleted.');
    }
  }

  /** Stops every task's timer. */
  close(): void {
    this.closed = true;
    for (const task of this.tasks.values()) {
      if (task.timer) clearTimeout(task.timer);
      task.timer = undefined;
    }
  }

  start(input: JsonObject): JsonObject {
    const sourceArn = reqString(input, 'SourceArn');
    const destinationArn = optString(input, 'DestinationArn');
    const rate = optInt(input, 'MaxNumberOfMessagesPerSecond', 1, 500);
    const source = this.host.queueByArn(sourceArn);
    if (!source) throw notFound('SourceArn');
    const isDeadLetterQueue = [...this.host.queues()].some((queue) => redrivePolicy(queue)?.deadLetterTargetArn === sourceArn);
    if (!isDeadLetterQueue) {
      throw invalidParameter('SourceArn', sourceArn, 'Source queue must be configured as a Dead Letter Queue.');
    }
    if (destinationArn !== undefined && !this.host.queueByArn(destinationArn)) {
      throw notFound('DestinationArn');
    }
    for (const task of this.tasks.values()) {
      if (task.sourceArn === sourceArn && task.status === 'RUNNING') {
        throw new SqsError(
          'UnsupportedOperation',
          'There is already a task running. Only one active task is allowed for a source queue arn at a given time.',
        );
      }
    }
    dropExpired(source, Date.now());
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
    this.schedule(task, 0);
    return { TaskHandle: handle };
  }

  list(input: JsonObject): JsonObject {
    const sourceArn = reqString(input, 'SourceArn');
    const maxResults = optInt(input, 'MaxResults', 1, 10) ?? 1;
    if (!this.host.queueByArn(sourceArn)) throw notFound('SourceArn');
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

  cancel(input: JsonObject): JsonObject {
    const handle = reqString(input, 'TaskHandle');
    const task = this.tasks.get(handle);
    if (!task || task.status !== 'RUNNING') {
      throw new SqsError('ResourceNotFoundException', 'The specified task does not exist or is not running.');
    }
    this.finish(task, 'CANCELLED', undefined);
    return { ApproximateNumberOfMessagesMoved: task.moved };
  }

  private schedule(task: MoveTask, delayMs: number): void {
    if (this.closed) return;
    task.timer = setTimeout(() => this.run(task), delayMs);
    task.timer.unref();
  }

  private run(task: MoveTask): void {
    task.timer = undefined;
    if (task.status !== 'RUNNING' || this.closed) return;
    const source = this.host.queueByArn(task.sourceArn);
    if (!source) {
      this.finish(task, 'FAILED', 'Source queue does not exist.');
      return;
    }
    const now = Date.now();
    dropExpired(source, now);
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
      const destination = destinationArn === undefined ? undefined : this.host.queueByArn(destinationArn);
      if (!destination) {
        this.finish(task, 'FAILED', 'AWS.SimpleQueueService.NonExistentQueue');
        return;
      }
      source.messages.delete(id);
      task.pending.delete(id);
      // A moved message is re-sent: new id, receive count from zero, same body and attributes.
      this.host.enqueue(destination, { ...message, ...freshDelivery(now) }, 0);
      task.moved += 1;
      budget -= 1;
    }
    if (task.pending.size === 0) this.finish(task, 'COMPLETED', undefined);
    else this.schedule(task, TASK_TICK_MS);
  }

  private finish(task: MoveTask, status: TaskStatus, failureReason: string | undefined): void {
    task.status = status;
    task.failureReason = failureReason;
    if (task.timer) clearTimeout(task.timer);
    task.timer = undefined;
  }
}
