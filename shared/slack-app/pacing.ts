/**
 * Per-channel pacing as GCRA (a token bucket kept as one number): the channel's "theoretical
 * arrival time" (TAT) advances by one interval per post; a post may go when TAT - burst allowance
 * has passed. One number per channel makes the DynamoDB update a single conditional write.
 */
import type { PaceDecision } from './ports';

export interface PaceParams {
  /** Time a post occupies (Slack: about 1,000 ms per channel). */
  intervalMs: number;
  /** Posts that may go back to back before the interval applies (≥ 1). */
  burst: number;
}

export interface PaceStep {
  decision: PaceDecision;
  /** The TAT to store when the decision reserved a slot. */
  nextTatMs?: number | undefined;
}

/** Reserves the next slot given the stored TAT (undefined: the channel has never been paced). */
export function reserveSlot(storedTatMs: number | undefined, nowMs: number, maxWaitMs: number, params: PaceParams): PaceStep {
  const allowanceMs = (Math.max(1, Math.floor(params.burst)) - 1) * params.intervalMs;
  const tat = Math.max(storedTatMs ?? nowMs, nowMs);
  const waitMs = Math.max(0, tat - allowanceMs - nowMs);
  if (waitMs > maxWaitMs) return { decision: { status: 'deferred', retryAfterMs: waitMs } };
  return { decision: { status: 'reserved', waitMs }, nextTatMs: tat + params.intervalMs };
}
