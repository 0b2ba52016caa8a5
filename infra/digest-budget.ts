/**
 * The digest worker's time budget, derived in one place: a full batch must fit one invocation, a
 * message must stay invisible while Lambda may still be working on it, and a digest claim's lease
 * must outlive the invocation that holds it (or a retry could post twice).
 *
 *   per record  = read-API calls × call budget + Slack posts × Slack pace
 *   timeout     = batch size × per record + margin          (≤ Lambda's 900 s)
 *   lease       = timeout + lease margin                    (> timeout)
 *   visibility  = 6 × timeout + batching window             (AWS guidance for SQS event sources)
 */

/** What one record may cost. The functions bound every call by the invocation deadline; these size it. */
export const DIGEST_RECORD_COST = {
  /** Visibility figures, one gaps page and one reasoning card. */
  readApiCalls: 3,
  /** Seconds one read-API call may take (timeout), including a short 429 wait. */
  readApiCallSeconds: 10,
  /** The digest and, at most, one thread reply. */
  slackPosts: 2,
  /** Slack allows about one chat.postMessage per second per channel. */
  slackPaceSeconds: 1,
} as const;

/** Start-up, secrets and DynamoDB claims of the invocation as a whole. */
export const INVOCATION_MARGIN_SECONDS = 10;
/** A claim outlives the invocation by this much (clock skew, the DynamoDB write after the deadline check). */
export const LEASE_MARGIN_SECONDS = 30;
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
/** SQS's maximum visibility timeout (12 hours). */
const SQS_MAX_VISIBILITY_SECONDS = 43_200;

export interface DigestBudget {
  readonly perRecordSeconds: number;
  readonly timeoutSeconds: number;
  readonly leaseSeconds: number;
  readonly visibilityTimeoutSeconds: number;
}

export function perRecordSeconds(cost: typeof DIGEST_RECORD_COST = DIGEST_RECORD_COST): number {
  return cost.readApiCalls * cost.readApiCallSeconds + cost.slackPosts * cost.slackPaceSeconds;
}

/** The largest batch that fits one invocation. */
export function maxDigestBatchSize(): number {
  return Math.floor((LAMBDA_MAX_TIMEOUT_SECONDS - INVOCATION_MARGIN_SECONDS) / perRecordSeconds());
}

/** Throws (naming the config key) when a full batch cannot fit Lambda's 900 s. */
export function digestBudget(batchSize: number, batchWindowSeconds: number): DigestBudget {
  const perRecord = perRecordSeconds();
  const timeoutSeconds = Math.ceil(batchSize * perRecord + INVOCATION_MARGIN_SECONDS);
  if (timeoutSeconds > LAMBDA_MAX_TIMEOUT_SECONDS) {
    throw new RangeError(
      `"digestBatchSize" ${batchSize} needs ${timeoutSeconds} s per invocation (${perRecord} s per record), more than Lambda's ` +
        `${LAMBDA_MAX_TIMEOUT_SECONDS} s: use at most ${maxDigestBatchSize()}`,
    );
  }
  return {
    perRecordSeconds: perRecord,
    timeoutSeconds,
    leaseSeconds: timeoutSeconds + LEASE_MARGIN_SECONDS,
    visibilityTimeoutSeconds: Math.min(SQS_MAX_VISIBILITY_SECONDS, 6 * timeoutSeconds + batchWindowSeconds),
  };
}
