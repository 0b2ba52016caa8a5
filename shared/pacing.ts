/**
 * Slack's pace: about one message per second per channel, for every worker at once.
 *
 * - `reserveSlot`: per-channel pacing as GCRA (a token bucket kept as one number): the channel's
 *   "theoretical arrival time" (TAT) advances by one interval per post; a post may go when TAT − burst
 *   allowance has passed. One number per channel makes the store's update a single conditional write
 *   (the ChannelPacer adapter, shared/adapters/dynamo-channel-pacer.ts, keeps it in DynamoDB).
 * - `PacedChannel`: before every chat.postMessage, slots are reserved with the pacer (a digest's whole
 *   thread at once); a wait that fits the invocation (and a digest's first-post budget) is slept, a
 *   longer one sends the record again with that wait as its delay (see docs/SLACK-APP.md, "Paced posting").
 */
import { DIGEST_METRICS, SLACK_APP_DEFAULTS } from './contracts';
import { ChannelPaceDeferred, Unavailable } from './errors';
import type { ChannelPacer, Clock, Metrics, PaceDecision, SlotRequest } from './ports';
import { sleep } from './util';

// --- GCRA ------------------------------------------------------------------------------------------

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

/**
 * Reserves the next slot(s) given the stored TAT (undefined: the channel has never been paced). The
 * wait is for the first; slot k goes k intervals later. Deferred when the last would not fit `maxWaitMs`,
 * or the first is further than `request.maxFirstWaitMs`.
 */
export function reserveSlot(
  storedTatMs: number | undefined,
  nowMs: number,
  maxWaitMs: number,
  params: PaceParams,
  request: SlotRequest = {},
): PaceStep {
  const allowanceMs = burstAllowanceMs(params);
  const slots = Math.max(1, Math.floor(request.slots ?? 1));
  const notBefore = request.notBeforeMs === undefined ? nowMs : request.notBeforeMs + allowanceMs;
  const tat = Math.max(storedTatMs ?? nowMs, nowMs, notBefore);
  const waitMs = Math.max(0, tat - allowanceMs - nowMs);
  const tooLate = waitMs + (slots - 1) * params.intervalMs > maxWaitMs || waitMs > (request.maxFirstWaitMs ?? Number.POSITIVE_INFINITY);
  if (tooLate) return { decision: { status: 'deferred', retryAfterMs: waitMs } };
  return { decision: { status: 'reserved', waitMs }, nextTatMs: tat + slots * params.intervalMs };
}

/** The wait for the first slot given the stored TAT, reserving nothing. */
export function nextSlotWaitMs(storedTatMs: number | undefined, nowMs: number, params: PaceParams): number {
  return Math.max(0, Math.max(storedTatMs ?? nowMs, nowMs) - burstAllowanceMs(params) - nowMs);
}

/** How far ahead of its TAT a channel may post: the posts of a burst beyond the first. */
function burstAllowanceMs(params: PaceParams): number {
  return (Math.max(1, Math.floor(params.burst)) - 1) * params.intervalMs;
}

// --- Paced posting ---------------------------------------------------------------------------------

export interface PaceDeps {
  pacer?: ChannelPacer | undefined;
  clock: Clock;
  metrics: Metrics;
  deadline?: (() => number) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /**
   * The longest a record's first post waits for its channel's slot (PACE_WAIT_BUDGET_MS); a longer wait
   * hands the record back to come again then, so a client's paced backlog never holds a worker that
   * another client's record waits for. None = as long as the invocation allows.
   */
  paceWaitBudgetMs?: number | undefined;
}

/**
 * A record's first post waits at most this for its channel: one of Slack's intervals. A record that
 * comes while the channel's post goes takes the next slot, so the channel's posts still go back to back;
 * and one record at a time waits for a channel, so a client's paced channel holds one worker at most
 * (with two intervals, two of its records waited side by side, one per worker, and another client's
 * record waited for both: docs/PERFORMANCE.md §11).
 */
export const PACE_WAIT_BUDGET_MS = SLACK_APP_DEFAULTS.paceIntervalMs;

/** Time kept for the post itself and its progress write after a wait. */
export const POST_ALLOWANCE_MS = 5_000;

/**
 * Reserves `slots` consecutive slots in the channel and returns when each may go (epoch ms): a digest
 * and its thread replies take theirs together, so a burst never leaves a worker waiting behind the
 * whole channel for each reply. Throws ChannelPaceDeferred when the last would not fit the invocation.
 */
async function reserveSlots(channel: string, pacer: ChannelPacer, deps: PaceDeps, request: SlotRequest): Promise<number[]> {
  const slots = Math.max(1, request.slots ?? 1);
  const now = deps.clock.now();
  const decision = await pacer.reserve(channel, now, maxWaitMs(deps, now), request);
  if (decision.status === 'deferred') {
    deps.metrics.count(DIGEST_METRICS.slackPostPaced);
    throw new ChannelPaceDeferred(channel, decision.retryAfterMs);
  }
  if (decision.waitMs > 0) deps.metrics.count(DIGEST_METRICS.slackPostPaced);
  // The wait counts from the pacer's winning attempt: from now (after it), never from before it.
  const reservedAt = deps.clock.now();
  const interval = pacer.intervalMs;
  return Array.from({ length: slots }, (_, k) => reservedAt + decision.waitMs + k * interval);
}

async function sleepUntil(atMs: number, deps: PaceDeps): Promise<void> {
  const waitMs = atMs - deps.clock.now();
  if (waitMs > 0) await (deps.sleep ?? sleep)(waitMs);
}

function maxWaitMs(deps: PaceDeps, now: number): number {
  const deadline = deps.deadline?.();
  if (deadline === undefined || !Number.isFinite(deadline)) return Number.POSITIVE_INFINITY;
  // A short invocation keeps half its time for the post rather than a fixed allowance it doesn't have.
  const left = Math.max(0, deadline - now);
  return Math.max(0, left - Math.min(POST_ALLOWANCE_MS, left / 2));
}

/**
 * Before a digest's reads: a channel whose next slot is further than the budget defers the record at
 * once (ChannelPaceDeferred), so a backlog sent back for the pace does not redo its reads each time.
 * Reserves nothing: the posts reserve their slots when rendered.
 */
export async function deferIfPacedOut(channels: readonly string[], deps: PaceDeps): Promise<void> {
  const { pacer, paceWaitBudgetMs } = deps;
  if (!pacer || paceWaitBudgetMs === undefined) return;
  const now = deps.clock.now();
  const waits = await Promise.all(channels.map(async (channel) => ({ channel, waitMs: await pacer.peek(channel, now) })));
  const pacedOut = waits.find((w) => w.waitMs > paceWaitBudgetMs);
  if (!pacedOut) return;
  deps.metrics.count(DIGEST_METRICS.slackPostPaced);
  throw new ChannelPaceDeferred(pacedOut.channel, pacedOut.waitMs);
}

/** How late a post may go after its slot before the slot is given up for a new one (Slack's interval minus the pace's margin). */
const LATE_SLOT_MS = 500;
const MAX_RESLOTS = 3;

/** Attempts of one paced post that Slack answers 429 (each after fresh slots past its Retry-After). */
const PACED_POST_ATTEMPTS = 3;

/**
 * One channel's posts of one digest, in their reserved slots. The poster's own 429 retries are off
 * (`retryRateLimited: false`): a 429 means Slack saw the channel busier than the pace (another app,
 * clock drift), so the rest of the schedule is reserved again past Slack's Retry-After, for every
 * worker, and the post goes in the first of the new slots.
 */
export class PacedChannel {
  private slots: number[] = [];

  constructor(
    private readonly channel: string,
    private readonly deps: PaceDeps,
  ) {}

  /** Reserves the slots of the next `count` posts (none without a pacer: posts go at once). */
  async reserve(count: number, notBeforeMs?: number): Promise<void> {
    await this.reserveWith({ slots: count, notBeforeMs });
  }

  /**
   * Reserves a record's posts before anything of it is posted: a first slot further than the deps'
   * `paceWaitBudgetMs` throws ChannelPaceDeferred at once instead of holding the worker until then.
   */
  async reserveFirst(count: number): Promise<void> {
    await this.reserveWith({ slots: count, maxFirstWaitMs: this.deps.paceWaitBudgetMs });
  }

  /**
   * Reserves the next post's slot if it is due within `maxFirstWaitMs`; otherwise reserves nothing and
   * returns the wait (a thread's next reply is then handed to a follow-up record, ./digest/thread.ts).
   */
  async reserveWithin(maxFirstWaitMs: number): Promise<number | undefined> {
    try {
      await this.reserveWith({ slots: 1, maxFirstWaitMs });
      return undefined;
    } catch (error) {
      if (error instanceof ChannelPaceDeferred) return error.retryAfterMs;
      throw error;
    }
  }

  private async reserveWith(request: SlotRequest): Promise<void> {
    const pacer = this.deps.pacer;
    const count = request.slots ?? 1;
    this.slots = pacer && count > 0 ? await reserveSlots(this.channel, pacer, this.deps, request) : [];
  }

  /** The rest of the schedule past Slack's Retry-After; when that doesn't fit the invocation, Slack's own error goes on (a failure with its wait). */
  private async reserveAfter(retryAfterSeconds: number, slackError: unknown): Promise<void> {
    try {
      await this.reserve(this.slots.length + 1, this.deps.clock.now() + retryAfterSeconds * 1000);
    } catch (error) {
      throw error instanceof ChannelPaceDeferred ? slackError : error;
    }
  }

  /**
   * Sleeps until this post's slot. A slot missed by more than LATE_SLOT_MS (a stalled process, a slow
   * write) is not used: the next post in the channel may be due right after it, so the rest of the
   * schedule is reserved again rather than sending two posts back to back.
   */
  private async awaitSlot(): Promise<void> {
    for (let reslots = 0; ; reslots++) {
      if (this.slots.length === 0) await this.reserve(1);
      const slot = this.slots.shift() ?? this.deps.clock.now();
      await sleepUntil(slot, this.deps);
      if (this.deps.clock.now() - slot <= LATE_SLOT_MS || reslots >= MAX_RESLOTS) return;
      await this.reserve(this.slots.length + 1);
    }
  }

  async post<T>(post: (retryRateLimited: boolean) => Promise<T>): Promise<T> {
    if (!this.deps.pacer) return post(true);
    for (let attempt = 1; ; attempt++) {
      await this.awaitSlot();
      try {
        return await post(false);
      } catch (error) {
        const retryAfterSeconds = error instanceof Unavailable && !error.outcomeUnknown ? error.retryAfterSeconds : undefined;
        if (retryAfterSeconds === undefined || attempt >= PACED_POST_ATTEMPTS) throw error;
        this.deps.metrics.count(DIGEST_METRICS.slackRateLimited);
        await this.reserveAfter(retryAfterSeconds, error);
      }
    }
  }
}
