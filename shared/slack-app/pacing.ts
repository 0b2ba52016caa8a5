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

export interface SlotRequest {
  /** Slack's Retry-After after a 429: the channel's slots move past it, for every worker. */
  notBeforeMs?: number | undefined;
  /** Consecutive slots to reserve (a digest and its thread replies go out together); default 1. */
  slots?: number | undefined;
}

/**
 * Reserves the next slot(s) given the stored TAT (undefined: the channel has never been paced). The
 * wait is for the first; slot k goes k intervals later. Deferred when the last would not fit `maxWaitMs`.
 */
export function reserveSlot(
  storedTatMs: number | undefined,
  nowMs: number,
  maxWaitMs: number,
  params: PaceParams,
  request: SlotRequest = {},
): PaceStep {
  const allowanceMs = (Math.max(1, Math.floor(params.burst)) - 1) * params.intervalMs;
  const slots = Math.max(1, Math.floor(request.slots ?? 1));
  const notBefore = request.notBeforeMs === undefined ? nowMs : request.notBeforeMs + allowanceMs;
  const tat = Math.max(storedTatMs ?? nowMs, nowMs, notBefore);
  const waitMs = Math.max(0, tat - allowanceMs - nowMs);
  if (waitMs + (slots - 1) * params.intervalMs > maxWaitMs) return { decision: { status: 'deferred', retryAfterMs: waitMs } };
  return { decision: { status: 'reserved', waitMs }, nextTatMs: tat + slots * params.intervalMs };
}
