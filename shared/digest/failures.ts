/**
 * The one place that decides what a failed message becomes: retried soon, retried after a wait the
 * service or Slack asked for, or left to reach the DLQ with a log line that says how to fix it.
 * Only the domain's error vocabulary (../errors) is looked at; adapters translate into it.
 */
import { NeedsOperatorFix, RateLimited, UnexpectedResponse, Unavailable } from '../errors';
import { describeError } from '../observability';

/** Another invocation holds the posting claim of this event; try again when its lease ends. */
export class ClaimBusyError extends Error {
  override readonly name = 'ClaimBusyError';
  constructor(readonly retryAfterSeconds: number) {
    super(`another invocation is posting this event; retry in ${retryAfterSeconds}s`);
  }
}

export interface FailureVerdict {
  /** Seconds to keep the message invisible before its next attempt; undefined = the queue's default. */
  retryAfterSeconds: number | undefined;
  /** True when retrying cannot help until someone changes configuration (the DLQ keeps the message). */
  needsFix: boolean;
  /** What to do about it, for the log line. */
  fix: string | undefined;
  errorName: string;
  errorMessage: string;
}

/** SQS allows a visibility timeout of at most 12 hours. */
const MAX_VISIBILITY_SECONDS = 12 * 3600;

function clampDelay(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : Math.min(MAX_VISIBILITY_SECONDS, Math.max(1, Math.ceil(seconds)));
}

/** The failure log line's ending: whether SQS hands the message out again, or this was its last receive. */
export function retryNote(receiveCount: number | undefined, maxReceiveCount: number | undefined): string {
  if (receiveCount === undefined) return 'digest failed; the message will be retried';
  if (maxReceiveCount !== undefined && receiveCount >= maxReceiveCount)
    return `digest failed on its last attempt (${receiveCount} of ${maxReceiveCount}); moving to the DLQ`;
  return `digest failed; the message will be retried (attempt ${receiveCount}${maxReceiveCount === undefined ? '' : ` of ${maxReceiveCount}`})`;
}

export function classifyFailure(error: unknown): FailureVerdict {
  const base = { ...describeError(error), retryAfterSeconds: undefined, needsFix: false, fix: undefined };
  if (error instanceof ClaimBusyError || error instanceof RateLimited || error instanceof Unavailable) {
    return { ...base, retryAfterSeconds: clampDelay(error.retryAfterSeconds) };
  }
  if (error instanceof NeedsOperatorFix) return { ...base, needsFix: true, fix: error.fix };
  if (error instanceof UnexpectedResponse) return { ...base, fix: error.hint };
  return base;
}
