/**
 * Quiet hours, the durable half: a digest that falls inside a channel's quiet window is held (one item
 * per channel, one entry per event: a retried run holds once; at most `HELD_RUNS_KEPT` by line, older runs
 * of a project counted on its newest, ./held-runs.ts) with the time its window ends (`catchUpAfterMs`),
 * and from then the catch-up sweep posts one message per channel listing the held runs, oldest first,
 * newest last — whether or not the channel is quiet again by then (a window stored as 00:00–23:59 still
 * comes out).
 *
 * What triggers the catch-up: a sweep every `QUIET_SWEEP_MINUTES` (an EventBridge Scheduler schedule putting
 * `{"kind":"quiet_catch_up"}` on the digest queue; locally the stack calls the same handler on an interval).
 * The sweep reads the index of channels with held runs and when each is first due (one item), so a quiet
 * table costs one read.
 *
 * Exactly once, nothing lost:
 * - a channel's catch-up is taken under a claim with a lease (conditional write); a second sweep at the
 *   same time finds it busy and leaves it;
 * - the runs a catch-up covers are those held before its first claim (`since`) and due by then (all of them
 *   when the channel's quiet hours were turned off), so a retry covers the same;
 * - a retry after an attempt whose outcome is unknown looks in Slack for the catch-up's metadata first;
 * - only the runs posted are removed, in the same conditional write that ends the claim; runs held
 *   meanwhile stay for the next sweep.
 */
import { DIGEST_METRICS } from '../contracts';
import { describeError } from '../observability';
import type { Clock, HeldClaim, Log, Metrics, QuietHoursStore, QuietSetting, SlackPoster } from '../ports';
import { HELD_RUNS_KEPT, type HeldRun, type QuietWindow } from '../ports';
import { PacedChannel, type PaceDeps } from '../pacing';
import { findUnescapedMarkup, escapeSlackText, SLACK_LIMITS, stripInvisible, truncateText } from '../slack-text';
import { foldHeld, heldCount } from './held-runs';
import { describeWindow, isQuietAt } from './quiet-hours';

export type { HeldRun, QuietHoursStore, QuietSetting } from '../ports';

// --- Holding -------------------------------------------------------------------------------------

/** The channel's window when `nowMs` is inside it. */
export function quietNow(setting: QuietSetting | undefined, nowMs: number): QuietWindow | undefined {
  return setting !== undefined && isQuietAt(setting.window, nowMs) ? setting.window : undefined;
}

// --- Catching up ---------------------------------------------------------------------------------

export interface CatchUpDeps extends PaceDeps {
  quietHours: QuietHoursStore;
  slack: Pick<SlackPoster, 'post' | 'findPosted'>;
  clock: Clock;
  log: Log;
  metrics: Metrics;
}

/** How long a sweep holds a channel's catch-up: longer than one invocation, short enough that a crash costs one sweep or two. */
export const CATCH_UP_LEASE_MS = 5 * 60_000;
/** A catch-up lists at most this many runs by line (or one per project); the rest as counts per project. */
export const CATCH_UP_LINES = HELD_RUNS_KEPT;
/** Allowance for clock skew when looking for an earlier attempt's catch-up in Slack. */
const LOOKUP_SKEW_SECONDS = 120;

export interface SweepResult {
  posted: string[];
  /** Channels whose held runs are not due yet. */
  notDue: string[];
  busy: string[];
  failed: string[];
}

/**
 * The queue's `quiet_catch_up` message: one sweep. A channel's failure is its own (counted, retried by the
 * next sweep), so the message itself succeeds; only the index failing to read fails it (and it is retried).
 */
export async function catchUpSweep(
  deps: Omit<CatchUpDeps, 'quietHours'> & { quietHours?: QuietHoursStore | undefined },
): Promise<'swept' | 'ignored'> {
  const { quietHours } = deps;
  if (quietHours === undefined) {
    deps.log.warn('quiet-hours catch-up ignored: quiet hours are not set up in this runtime');
    return 'ignored';
  }
  const result = await sweepCatchUps({ ...deps, quietHours });
  if (result.posted.length + result.failed.length + result.busy.length > 0) deps.log.info('quiet-hours sweep', { ...result });
  return 'swept';
}

/**
 * One sweep: every channel with held runs due (their own window ended) gets its catch-up; a channel whose
 * quiet hours were turned off gets everything held. A channel's failure never stops the others.
 */
export async function sweepCatchUps(deps: CatchUpDeps): Promise<SweepResult> {
  const result: SweepResult = { posted: [], notDue: [], busy: [], failed: [] };
  const held = await deps.quietHours.channelsWithHeld();
  if (held.length === 0) return result;
  const settings = await deps.quietHours.windowsOf(held.map((h) => h.channel));
  for (const { channel, dueMs } of held) {
    const setting = settings.get(channel);
    // A changed window does not move what was held: each run keeps the end of the window it was held in.
    const dueOnly = setting !== undefined;
    if (dueOnly && dueMs > deps.clock.now()) {
      result.notDue.push(channel);
      continue;
    }
    try {
      const outcome = await catchUp(channel, setting, dueOnly, deps);
      if (outcome === 'busy') result.busy.push(channel);
      else if (outcome === 'posted') result.posted.push(channel);
    } catch (error) {
      result.failed.push(channel);
      deps.metrics.count(DIGEST_METRICS.quietCatchUpFailed);
      deps.log.warn('quiet-hours catch-up not posted; the held digests stay for the next sweep', { channel, ...describeError(error) });
    }
  }
  return result;
}

async function catchUp(
  channel: string,
  setting: QuietSetting | undefined,
  dueOnly: boolean,
  deps: CatchUpDeps,
): Promise<'posted' | 'busy' | 'empty'> {
  const taken = await deps.quietHours.claimHeld(channel, deps.clock.now(), CATCH_UP_LEASE_MS, dueOnly);
  if (taken.status === 'busy') return 'busy';
  if (taken.status === 'none') return 'empty';
  const { claim } = taken;
  try {
    if (claim.runs.length > 0) await postOnce(channel, claim, setting, deps);
    await deps.quietHours.finishHeld(
      channel,
      claim.token,
      claim.runs.map((r) => r.eventId),
    );
  } catch (error) {
    await deps.quietHours.releaseHeld(channel, claim.token).catch((releaseError: unknown) => {
      deps.log.warn('could not release a catch-up claim; it expires with its lease', { channel, ...describeError(releaseError) });
    });
    throw error;
  }
  if (claim.runs.length === 0) return 'empty';
  deps.log.info('quiet-hours catch-up posted', {
    channel,
    runs: claim.runs.length,
    held: claim.runs.reduce((n, r) => n + heldCount(r), 0),
  });
  deps.metrics.count(DIGEST_METRICS.quietCatchUpPosted);
  return 'posted';
}

/** The catch-up's id in its message metadata: the channel and its first claim. */
export function catchUpId(channel: string, sinceMs: number): string {
  return `catchup:${channel}:${sinceMs}`;
}

async function postOnce(channel: string, claim: HeldClaim, setting: QuietSetting | undefined, deps: CatchUpDeps): Promise<void> {
  const id = catchUpId(channel, claim.sinceMs);
  if (claim.attempt > 1) {
    try {
      const found = await deps.slack.findPosted(channel, id, Math.floor(claim.sinceMs / 1000) - LOOKUP_SKEW_SECONDS);
      if (found !== undefined) {
        deps.log.info('found the catch-up an earlier attempt posted; not posting it again', { channel, ts: found });
        return;
      }
    } catch (error) {
      deps.log.warn("could not check Slack for an earlier attempt's catch-up; it may be posted twice", {
        channel,
        ...describeError(error),
      });
    }
  }
  const message = renderCatchUp(claim.runs, setting?.window);
  const paced = new PacedChannel(channel, deps);
  await paced.reserve(1);
  await paced.post((retryRateLimited) =>
    deps.slack.post(channel, message, {
      metadata: { event_type: 'visibility_quiet_catch_up', event_payload: { event_id: id, runs: claim.runs.length } },
      retryRateLimited,
    }),
  );
}

/** A stored headline is the renderer's own escaped text; anything that is not (an edited item) is escaped again. */
function safeHeadline(headline: string): string {
  const text = stripInvisible(headline).replace(/\s+/g, ' ').trim();
  const safe = findUnescapedMarkup(text) === null ? text : escapeSlackText(text);
  return truncateText(safe, 300);
}

function safeLink(link: string | undefined): string | undefined {
  return link !== undefined && /^https:\/\/[^\s<>|]+$/.test(link) ? link : undefined;
}

function runLine(run: HeldRun): string {
  const seconds = Math.floor(Date.parse(run.createdAt) / 1000);
  const when = Number.isFinite(seconds) ? `<!date^${seconds}^{date_short_pretty} {time}|${new Date(seconds * 1000).toISOString()}>` : '';
  const link = safeLink(run.link);
  const earlier = run.earlier === undefined || run.earlier === 0 ? '' : ` _(and ${run.earlier} earlier of this project, not listed)_`;
  const line = `• ${when}${when === '' ? '' : ' '}${safeHeadline(run.headline)}${link === undefined ? '' : ` · <${link}|open>`}${earlier}`;
  return truncateText(line, SLACK_LIMITS.sectionText);
}

/** Lines into section texts within Slack's limits (a message of one title and at most 49 of them). */
function sections(lines: readonly string[]): string[] {
  const texts: string[] = [];
  for (const line of lines) {
    const last = texts.length - 1;
    if (last >= 0 && (texts[last] ?? '').length + 1 + line.length <= SLACK_LIMITS.sectionText) texts[last] = `${texts[last]}\n${line}`;
    else texts.push(line);
  }
  return texts.slice(0, SLACK_LIMITS.blocksPerMessage - 1);
}

/**
 * One message: what was held and when, each run a line (headline + link), oldest first, newest last. Past
 * `CATCH_UP_LINES` the newest run of each project is still listed and the older ones are counted on it.
 */
export function renderCatchUp(runs: readonly HeldRun[], window: QuietWindow | undefined): { text: string; blocks: unknown[] } {
  const { kept } = foldHeld(runs, CATCH_UP_LINES);
  const total = runs.reduce((n, run) => n + heldCount(run), 0);
  const during = window === undefined ? 'during quiet hours' : `during quiet hours (${escapeSlackText(describeWindow(window))})`;
  const title = `🌙 ${total === 1 ? '1 digest was' : `${total} digests were`} held ${during}:`;
  return {
    text: truncateText(`${title} ${kept.map((r) => safeHeadline(r.headline)).join(' · ')}`, SLACK_LIMITS.fallbackText),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: title, verbatim: true } },
      ...sections(kept.map(runLine)).map((text) => ({ type: 'section', text: { type: 'mrkdwn', text, verbatim: true } })),
    ],
  };
}
