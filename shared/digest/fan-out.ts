/**
 * One event, every channel its project is routed to (`routeDigest`: the home channel and the
 * subscribed ones). Each channel posts under its own claim (`post#<channel>#<event id>`) with its
 * own progress (top-level ts, replies posted), so a failure in one channel never re-posts to another
 * and a retry does only the channels not yet done. Every post waits for its channel's pace slot.
 * A subscribed channel Slack refuses for good is left out of the run (./refused-channel), not retried.
 */
import { DIGEST_METRICS } from '../contracts';
import type { WebhookEvent } from '../events';
import { describeError } from '../observability';
import type { DigestClaim, Log, Metrics, PostingProgress, SlackMessage, SlackMessageMetadata, SlackPostResult } from '../ports';
import { NATIVE_BLOCK_TYPES } from '../slack-blocks/limits';
import { homeChannel, routeDigest, type SkippedChannel } from '../routing';
import type { DigestMode } from '../contracts';
import type { Subscription, SubscriptionStore } from '../ports';
import { ClaimBusyError } from './failures';
import { channelRefusalCode, handleRefusedChannel } from './refused-channel';
import { PacedChannel } from '../pacing';
import type { ThreadChart } from './chart-step';
import { postReplies, type Handoff, type ThreadDeps } from './thread';

export interface FanOutDeps extends ThreadDeps {
  log: Log;
  metrics: Metrics;
  subscriptions?: Pick<SubscriptionStore, 'forProject' | 'markBroken'> | undefined;
  channels: { defaultChannel: string; byProject: Readonly<Record<string, string>> };
}

/** A channel a digest goes to, with its mode and, when subscribed, its subscription (who changed what). */
export interface ChannelTarget {
  channel: string;
  mode: DigestMode;
  subscription: Subscription | undefined;
  /** The project's configured or default channel: a failure there fails the run, whatever it is. */
  home: boolean;
}

export interface ChannelMessage {
  main: SlackMessage;
  thread: readonly SlackMessage[];
  /** Post the main message as a reply in this thread (a draft notice under the latest digest). */
  threadTs?: string | undefined;
  /** The run's PNG trend chart, uploaded into the thread after the replies when Slack refused the native one (./chart-step); none = no PNG fallback. */
  chart?: ThreadChart | undefined;
}

type Claimed = Extract<DigestClaim, { status: 'claimed' }>;

function fallbackOf(deps: FanOutDeps) {
  return { defaultChannel: deps.channels.defaultChannel, projectChannels: deps.channels.byProject };
}

/** The channels of the project's digest; a muted or broken channel is skipped (logged; a mute counted). */
export async function channelsFor(projectId: string, fallbackMode: DigestMode, deps: FanOutDeps): Promise<ChannelTarget[]> {
  const subscriptions = deps.subscriptions ? await deps.subscriptions.forProject(projectId) : [];
  const route = routeDigest(projectId, subscriptions, fallbackOf(deps), deps.clock.now());
  for (const skipped of route.skipped) logSkipped(projectId, skipped, deps);
  return route.deliveries.map((delivery) => ({
    channel: delivery.channel,
    // Configuration-routed channels keep the deployment's mode; a subscription carries its own.
    mode: delivery.source === 'subscription' ? delivery.mode : fallbackMode,
    subscription: subscriptions.find((s) => s.channel === delivery.channel && s.projectId === projectId),
    home: delivery.home,
  }));
}

function logSkipped(projectId: string, skipped: SkippedChannel, deps: FanOutDeps): void {
  if (skipped.reason === 'broken') {
    // Counted once, when Slack refused it (DigestChannelRefused); subscribing again repairs it.
    deps.log.info('not posted to a channel Slack refused; it waits to be subscribed again', {
      projectId,
      channel: skipped.channel,
      code: skipped.code,
      since: new Date(skipped.sinceMs).toISOString(),
    });
    return;
  }
  deps.log.info('not posted to a channel that muted the project', {
    projectId,
    channel: skipped.channel,
    mutedUntil: new Date(skipped.mutedUntilMs).toISOString(),
  });
  deps.metrics.count(DIGEST_METRICS.digestMutedSkip);
}

/**
 * Posts to every target side by side; resolves to the top-level ts per channel once all are done.
 * A failed channel fails the whole record (after the others finished theirs): its retry finds them done.
 * Except a subscribed (not home) channel Slack refuses for good: it is marked broken and left out.
 */
export async function postToChannels(
  event: WebhookEvent,
  eventClaim: Claimed,
  targets: readonly ChannelTarget[],
  messageFor: (target: ChannelTarget) => ChannelMessage,
  metadata: SlackMessageMetadata,
  deps: FanOutDeps,
): Promise<Map<string, string>> {
  const results = await Promise.allSettled(targets.map((t) => postToChannel(event, eventClaim, t.channel, messageFor(t), metadata, deps)));
  const rejected = results.flatMap((r, i) => {
    const target = targets[i];
    return r.status === 'rejected' && target ? [{ target, channel: target.channel, error: r.reason as unknown }] : [];
  });
  const failures: typeof rejected = [];
  for (const failure of rejected) if (!(await leftOut(failure.target, failure.error, deps))) failures.push(failure);
  const [first, ...others] = failures;
  if (first) {
    // The first is thrown (and logged by the batch); the others are logged here.
    for (const other of others)
      deps.log.warn('digest not posted to a channel; it is retried', {
        eventId: event.id,
        channel: other.channel,
        ...describeError(other.error),
      });
    throw first.error;
  }
  const posted = new Map<string, string>();
  for (const r of results) if (r.status === 'fulfilled' && r.value) posted.set(r.value.channel, r.value.ts);
  return posted;
}

/** True when the channel's failure is a subscribed channel's refusal, now handled (the run goes on without it). */
async function leftOut(target: ChannelTarget, error: unknown, deps: FanOutDeps): Promise<boolean> {
  const code = channelRefusalCode(error);
  if (code === undefined || target.home || !target.subscription) return false;
  const home = homeChannel(target.subscription.projectId, fallbackOf(deps))?.channel;
  await handleRefusedChannel(target.subscription, code, home, deps);
  return true;
}

async function postToChannel(
  event: WebhookEvent,
  eventClaim: Claimed,
  channel: string,
  message: ChannelMessage,
  metadata: SlackMessageMetadata,
  deps: FanOutDeps,
): Promise<{ channel: string; ts: string } | undefined> {
  // The pace first: a record handed back for it has not claimed the channel, so its next attempt is not
  // taken for a retry that must look in Slack for an earlier post. Its whole thread, as on a first attempt,
  // unless its replies can be handed to follow-up records: then only its own post.
  const paced = new PacedChannel(channel, deps);
  await paced.reserveFirst(deps.threads && deps.pacer ? 1 : 1 + message.thread.length);
  const claim = await deps.store.claimChannel(event.id, channel, deps.clock.now());
  if (claim.status === 'busy') throw new ClaimBusyError(claim.retryAfterSeconds);
  // Done by an earlier attempt: nothing to post; its ts still goes into the snapshot's threads.
  if (claim.status === 'done') return claim.mainTs === undefined ? undefined : { channel, ts: claim.mainTs };
  try {
    const progress = withEarlierProgress(claim.progress, eventClaim.progress, channel);
    const posted = await postWithProgress(event, { ...claim, progress }, { channel, paced }, message, metadata, deps, (ts) =>
      markStarted(event, eventClaim, channel, ts, deps),
    );
    if (posted.handoff === undefined) await deps.store.finishChannel(event.id, channel, claim.token);
    else {
      // The follow-ups finish the channel: its claim released, its progress kept, before the first is sent.
      await deps.store.releaseChannel(event.id, channel, claim.token);
      await posted.handoff.send();
    }
    return { channel, ts: posted.ts };
  } catch (error) {
    await releaseQuietly(() => deps.store.releaseChannel(event.id, channel, claim.token, failureText(error)), event, deps);
    throw error;
  }
}

/**
 * Progress kept on the event's own claim for this channel (claims written before the fan-out, or the
 * started mark) counts when the channel's claim has none: its top level is not posted twice.
 */
function withEarlierProgress(own: PostingProgress, ofEvent: PostingProgress, channel: string): PostingProgress {
  if (own.mainTs || !ofEvent.mainTs || ofEvent.channel !== channel) return own;
  return { channel: ofEvent.channel, mainTs: ofEvent.mainTs, repliesPosted: ofEvent.repliesPosted };
}

/**
 * The event's claim records that a top-level message went out somewhere: a retry of a run that was
 * superseded meanwhile still finishes what it started (the newest-run logic stays per event).
 */
async function markStarted(event: WebhookEvent, eventClaim: Claimed, channel: string, ts: string, deps: FanOutDeps): Promise<void> {
  if (eventClaim.progress.mainTs) return;
  eventClaim.progress = { channel, mainTs: ts, repliesPosted: 0 };
  await deps.store.recordProgress(event.id, eventClaim.token, eventClaim.progress);
}

/** Ends a claim's lease after a failure; a release that fails is logged (the lease expires by itself). */
export async function releaseQuietly(release: () => Promise<void>, event: WebhookEvent, deps: { log: Log }): Promise<void> {
  try {
    await release();
  } catch (error) {
    deps.log.warn('could not release a posting claim; it expires with its lease', { eventId: event.id, ...describeError(error) });
  }
}

export function failureText(error: unknown): string {
  const { errorName, errorMessage } = describeError(error);
  return `${errorName}: ${errorMessage}`;
}

/** Allowance for clock skew between Lambda and Slack when looking for an earlier attempt's post. */
const LOOKUP_SKEW_SECONDS = 120;

async function postWithProgress(
  event: WebhookEvent,
  claim: Claimed,
  { channel, paced }: { channel: string; paced: PacedChannel },
  message: ChannelMessage,
  metadata: SlackMessageMetadata,
  deps: FanOutDeps,
  onMainPosted: (ts: string) => Promise<void>,
): Promise<{ ts: string; handoff?: Handoff | undefined }> {
  const progress = { ...claim.progress };
  if (claim.attempt > 1) await reconcileWithSlack(event, claim, channel, progress, deps);
  // The PNG goes into the thread only when Slack refused the native chart in this attempt.
  let chartRefused = false;
  const mainPostedHere = !progress.mainTs;
  if (!progress.mainTs) {
    const posted = await paced.post((retryRateLimited) =>
      deps.slack.post(channel, message.main, { metadata, threadTs: message.threadTs, retryRateLimited }),
    );
    chartRefused = countRefused(message.main, posted, deps);
    progress.channel = posted.channel;
    progress.mainTs = posted.ts;
    progress.repliesPosted = 0;
    await deps.store.recordChannelProgress(event.id, channel, claim.token, progress);
    await onMainPosted(posted.ts);
  }
  const thread = {
    event,
    channel,
    postChannel: progress.channel ?? channel,
    threadTs: progress.mainTs,
    eventType: metadata.event_type,
    replies: message.thread,
  };
  // The PNG chart is uploaded after the last reply by the invocation that knows Slack refused the native one.
  const handoff = !(message.chart && chartRefused);
  const replies = await postReplies(thread, claim, progress, paced, deps, {
    handoff,
    // The slot reserved before the claim is the first reply's when the top level was posted before.
    slotReserved: !mainPostedHere,
    onPosted: (reply, posted) => countRefused(reply, posted, deps),
  });
  if (replies !== 'done') return { ts: progress.mainTs, handoff: replies };
  if (message.chart && chartRefused && progress.repliesPosted <= message.thread.length) {
    // Recorded before the upload: a retry never uploads the chart twice.
    progress.repliesPosted = message.thread.length + 1;
    await deps.store.recordChannelProgress(event.id, channel, claim.token, progress);
    await message.chart.postInThread({
      channel: progress.channel ?? channel,
      threadTs: progress.mainTs,
      paced,
      slack: deps.slack,
      eventId: event.id,
    });
  }
  return { ts: progress.mainTs };
}

/** Counts a message whose native blocks Slack refused (posted with their words instead); true when it was. */
function countRefused(message: SlackMessage, posted: SlackPostResult, deps: FanOutDeps): boolean {
  if (posted.nativeRefused !== true) return false;
  const types = new Set(message.blocks.map((b) => (typeof b === 'object' && b !== null ? (b as { type?: unknown }).type : undefined)));
  for (const block of NATIVE_BLOCK_TYPES) if (types.has(block)) deps.metrics.count(DIGEST_METRICS.nativeBlockRefused, 1, { block });
  deps.log.warn('Slack refused the native chart or table blocks; posted their words instead', { channel: posted.channel });
  return true;
}

/**
 * An earlier attempt may have posted without recording it (a timeout whose post went through, or a
 * crash right after a post): look in Slack, by the event id in the messages' metadata, before posting.
 * If Slack can't be asked (e.g. no channels:history scope), post anyway and say so.
 */
export async function reconcileWithSlack(
  event: WebhookEvent,
  claim: Claimed,
  channel: string,
  progress: PostingProgress,
  deps: FanOutDeps,
): Promise<void> {
  try {
    if (!progress.mainTs) {
      const found = await deps.slack.findPosted(channel, event.id, Math.floor(claim.firstClaimedMs / 1000) - LOOKUP_SKEW_SECONDS);
      if (!found) return;
      progress.channel = channel;
      progress.mainTs = found;
      progress.repliesPosted = 0;
      deps.log.info('found the top-level message an earlier attempt posted; not posting it again', {
        eventId: event.id,
        channel,
        ts: found,
      });
    }
    const replies = await deps.slack.countReplies(progress.channel ?? channel, progress.mainTs, event.id);
    if (replies > progress.repliesPosted) {
      deps.log.info('found replies an earlier attempt posted; continuing after them', {
        eventId: event.id,
        channel,
        replies,
        recorded: progress.repliesPosted,
      });
      progress.repliesPosted = replies;
    }
  } catch (error) {
    deps.log.warn("could not check Slack for an earlier attempt's posts; a message may be posted twice", {
      eventId: event.id,
      channel,
      ...describeError(error),
    });
  }
}
