/**
 * Slack's pace (about one message per second per channel) before every chat.postMessage: a slot is
 * reserved with the channel pacer; a wait that fits the invocation is slept, a longer one hands the
 * record back with that wait as its visibility delay (see docs/SLACK-APP.md, "Paced posting").
 */
import { SLACK_APP_METRICS } from '../contracts';
import type { Clock, Metrics } from '../ports';
import type { ChannelPacer } from '../slack-app/ports';
import { ChannelPaceDeferred } from './failures';

export interface PaceDeps {
  pacer?: ChannelPacer | undefined;
  clock: Clock;
  metrics: Metrics;
  deadline?: (() => number) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

/** Time kept for the post itself and its progress write after a wait. */
export const POST_ALLOWANCE_MS = 5_000;

export async function waitForSlot(channel: string, deps: PaceDeps): Promise<void> {
  if (!deps.pacer) return;
  const now = deps.clock.now();
  const decision = await deps.pacer.reserve(channel, now, maxWaitMs(deps, now));
  if (decision.status === 'deferred') {
    deps.metrics.count(SLACK_APP_METRICS.slackPostPaced);
    throw new ChannelPaceDeferred(channel, decision.retryAfterMs);
  }
  if (decision.waitMs <= 0) return;
  deps.metrics.count(SLACK_APP_METRICS.slackPostPaced);
  await (deps.sleep ?? sleep)(decision.waitMs);
}

function maxWaitMs(deps: PaceDeps, now: number): number {
  const deadline = deps.deadline?.();
  if (deadline === undefined || !Number.isFinite(deadline)) return Number.POSITIVE_INFINITY;
  // A short invocation keeps half its time for the post rather than a fixed allowance it doesn't have.
  const left = Math.max(0, deadline - now);
  return Math.max(0, left - Math.min(POST_ALLOWANCE_MS, left / 2));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
