/**
 * The error vocabulary the domain decides on. Adapters translate their library's errors into these
 * (usually by subclassing one), so the domain never looks at an adapter's own error classes:
 *
 * - `RateLimited`: the peer asked for a wait; retry after `retryAfterSeconds`.
 * - `Unavailable`: the peer failed or could not be reached; retry (after `retryAfterSeconds` when it
 *   said). `outcomeUnknown` when the request may have been processed anyway.
 * - `NeedsOperatorFix`: retrying cannot help until someone changes configuration; `fix` says what.
 * - `SecretNotSet`: a secret is empty or still the placeholder (an operator fix).
 * - `UnexpectedResponse`: the peer answered with a shape the bridge cannot use.
 */

export class RateLimited extends Error {
  override name = 'RateLimited';
  constructor(
    message: string,
    /** Whole seconds to wait before repeating the request (at least 1). */
    readonly retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface UnavailableDetails {
  /** The wait the peer asked for, when it said one. */
  retryAfterSeconds?: number | undefined;
  /** True when the request may have been processed: look before doing it again. */
  outcomeUnknown?: boolean | undefined;
  cause?: unknown;
}

export class Unavailable extends Error {
  override name = 'Unavailable';
  readonly retryAfterSeconds: number | undefined;
  readonly outcomeUnknown: boolean;
  constructor(message: string, details: UnavailableDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.outcomeUnknown = details.outcomeUnknown ?? false;
  }
}

export class NeedsOperatorFix extends Error {
  override name = 'NeedsOperatorFix';
  constructor(
    message: string,
    /** What the operator should change. */
    readonly fix: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * What to do once a secret has been put. The failed message is still being retried when this is logged, so
 * the DLQ step is conditional: a retry after the fix succeeds on its own; only what already reached the DLQ
 * needs a replay.
 */
export const AFTER_FIX_REPLAY =
  'messages still being retried then succeed; any already in the DLQ (`bridge dlq peek`) need `bridge dlq replay`';
export const SECRET_NOT_SET_FIX = `put the secret value (stack outputs list the commands); ${AFTER_FIX_REPLAY}`;

export class SecretNotSet extends NeedsOperatorFix {
  override name = 'SecretNotSet';
  constructor(readonly secret: string) {
    super(`Secret ${secret} is empty or still the placeholder; put its value (see the stack outputs for the command)`, SECRET_NOT_SET_FIX);
  }
}

/** A secret read that did not finish within the caller's budget (`SecretReadOptions.timeoutMs`): the cache falls back. */
export class SecretReadTimedOut extends Error {
  override name = 'SecretReadTimedOut';
  constructor(secretName: string, timeoutMs: number) {
    super(`Secret ${secretName} was not read within ${timeoutMs} ms`);
  }
}

export class UnexpectedResponse extends Error {
  override name = 'UnexpectedResponse';
  constructor(
    message: string,
    /** What was missing or wrong, e.g. 'body is not JSON' or 'no "gaps" array'. */
    readonly problem: string,
    /** A hint for the log line (retrying may still help: the peer may answer normally next time). */
    readonly hint: string,
  ) {
    super(message);
  }
}

/**
 * The channel's posting pace would make this record wait longer than its invocation can: it goes
 * back to the queue for that wait (a RateLimited, so the batch sets the visibility) — not a failure.
 */
export class ChannelPaceDeferred extends RateLimited {
  override name = 'ChannelPaceDeferred';
  constructor(
    readonly channel: string,
    readonly retryAfterMs: number,
  ) {
    super(`channel ${channel} is at Slack's pace; posting resumes in ${retryAfterMs} ms`, Math.max(1, Math.ceil(retryAfterMs / 1000)));
  }
}

/** A store operation failed for a reason other than the data (throttling, network, permissions); `cause` has the SDK error. */
export class SlackAppStoreError extends Error {
  override name = 'SlackAppStoreError';
  constructor(operation: string, options: { cause: unknown }) {
    super(`${operation} failed: ${options.cause instanceof Error ? options.cause.name : 'unknown error'}`, options);
  }
}
