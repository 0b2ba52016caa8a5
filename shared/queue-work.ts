/**
 * What a kind of queued message's handler works with (the worker in ./worker/ runs them): a record,
 * its parsed payload, and `settle`, which runs one record's work under the batch's rules (deadline
 * budget, failure → retry) and records its outcome. A leaf, so each feature owns its handler without
 * importing the worker.
 */

export interface QueueRecord {
  messageId: string;
  body: string;
  /** How many times SQS has handed this message out, this time included (ApproximateReceiveCount). */
  receiveCount?: number | undefined;
}

export type RecordResult = 'posted' | 'duplicate' | 'superseded' | 'quarantined' | 'ignored' | 'muted' | 'answered' | 'expired' | 'swept';

/** What a record is, for log lines. */
export interface WorkLabel {
  id: string;
  type: string;
}

/** One record of a kind, its payload parsed. */
export interface WorkItem<P> {
  record: QueueRecord;
  payload: P;
  label: WorkLabel;
}

/** Runs one record's work under the batch's rules and records its outcome; never throws. */
export type Settle = (item: Pick<WorkItem<unknown>, 'record' | 'label'>, work: () => Promise<RecordResult>) => Promise<void>;

export type Job = () => Promise<void>;

/** A kind's handler: the batch's records of that kind in, the jobs that settle them out (run a few at a time). */
export type KindHandler<P, D> = (items: readonly WorkItem<P>[], deps: D, settle: Settle) => Job[];

/** The handler of a kind whose records are each handled alone. */
export function eachAlone<P, D>(work: (payload: P, deps: D) => Promise<RecordResult>): KindHandler<P, D> {
  return (items, deps, settle) => items.map((item) => () => settle(item, () => work(item.payload, deps)));
}
