/**
 * The one place that decides what a failed message becomes: retried soon, retried after a wait the
 * service or Slack asked for, or left to reach the DLQ with a log line that says how to fix it.
 */
import { RateLimitedError, ReadApiError, ReadApiResponseError, ReadApiUnavailableError } from '../read-api';
import { SlackPermanentError, SlackUnavailableError } from '../slack-poster';
import { SecretNotSetError } from '../secrets';
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

function clampDelay(seconds: number): number {
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(1, Math.ceil(seconds)));
}

export function classifyFailure(error: unknown): FailureVerdict {
  const base = describeError(error);
  if (error instanceof ClaimBusyError || error instanceof RateLimitedError) {
    return { ...base, retryAfterSeconds: clampDelay(error.retryAfterSeconds), needsFix: false, fix: undefined };
  }
  if (error instanceof SlackUnavailableError) {
    return {
      ...base,
      retryAfterSeconds: error.retryAfterSeconds === undefined ? undefined : clampDelay(error.retryAfterSeconds),
      needsFix: false,
      fix: undefined,
    };
  }
  if (error instanceof SlackPermanentError) {
    return { ...base, retryAfterSeconds: undefined, needsFix: true, fix: error.fix };
  }
  if (error instanceof SecretNotSetError) {
    return { ...base, retryAfterSeconds: undefined, needsFix: true, fix: 'put the secret value (stack outputs list the commands), then replay the DLQ with `bridge dlq replay`' };
  }
  if (error instanceof ReadApiError) {
    const auth = error.status === 401 || error.status === 403;
    return {
      ...base,
      retryAfterSeconds: undefined,
      needsFix: error.status < 500,
      fix: auth
        ? 'the read-API key is wrong or lacks access to this project: put a valid key in the read-API key secret, then replay the DLQ'
        : error.status < 500
          ? `the read API refused ${error.path} (${error.status}${error.code ? ` ${error.code}` : ''}); check READ_API_BASE_URL and the project id`
          : undefined,
    };
  }
  if (error instanceof ReadApiResponseError) {
    return { ...base, retryAfterSeconds: undefined, needsFix: false, fix: `the read API answered ${error.path} with an unexpected shape (${error.problem})` };
  }
  if (error instanceof ReadApiUnavailableError) {
    return { ...base, retryAfterSeconds: undefined, needsFix: false, fix: undefined };
  }
  return { ...base, retryAfterSeconds: undefined, needsFix: false, fix: undefined };
}
