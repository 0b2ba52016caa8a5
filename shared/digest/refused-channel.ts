/**
 * A subscribed channel that Slack refuses for good (the bot isn't in it, it was archived or deleted):
 * the run goes on without it. Its subscription is marked broken, so later runs skip it without asking
 * Slack, until someone subscribes the channel again. The one caller that marks it tells whoever
 * subscribed it, in the project's home channel (or, with none, a log line); the metric counts each.
 * The home channel is never handled here: its failure fails the run (an operator's fix).
 */
import { DIGEST_METRICS } from '../contracts';
import { NeedsOperatorFix } from '../errors';
import { describeError } from '../observability';
import type { Log, Metrics, SlackMessage, SlackPoster, Subscription, SubscriptionStore } from '../ports';
import { PacedChannel, type PaceDeps } from '../pacing';
import { isChannelId } from '../routing';
import { serviceName, serviceText } from '../slack-text';

/**
 * Slack's codes for "this channel can't take the bridge's posts", with what its members can do about
 * it. Token-wide codes (invalid_auth, missing_scope…) and refused messages (invalid_blocks…) are not
 * here: they fail every channel alike, and the run.
 */
const CHANNEL_REFUSALS = {
  not_in_channel: 'the bot is not a member: invite it there with `/invite`',
  channel_not_found: 'the channel is gone, or private without the bot: invite the bot there',
  is_archived: 'the channel is archived: unarchive it',
  restricted_action: 'the workspace does not let the bot post there',
  restricted_action_read_only_channel: 'the channel is read-only for the bot',
  restricted_action_thread_only_channel: 'the channel takes thread replies only',
  restricted_action_non_threadable_channel: 'the channel does not take the bot’s messages',
  team_access_not_granted: 'the channel’s workspace has not granted the app access',
} as const satisfies Record<string, string>;

export type ChannelRefusalCode = keyof typeof CHANNEL_REFUSALS;

/**
 * Slack's code when `error` says the channel itself refuses posts for good, else undefined. The Slack
 * adapter raises a NeedsOperatorFix carrying Slack's `code` (../adapters/slack-errors), read by shape.
 */
export function channelRefusalCode(error: unknown): ChannelRefusalCode | undefined {
  if (!(error instanceof NeedsOperatorFix)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && Object.hasOwn(CHANNEL_REFUSALS, code) ? (code as ChannelRefusalCode) : undefined;
}

export interface RefusedChannelDeps extends PaceDeps {
  slack: SlackPoster;
  log: Log;
  metrics: Metrics;
  subscriptions?: Pick<SubscriptionStore, 'markBroken'> | undefined;
}

/** Marks the subscription broken and, when this call marked it, tells its subscriber; never throws. */
export async function handleRefusedChannel(
  subscription: Subscription,
  code: ChannelRefusalCode,
  home: string | undefined,
  deps: RefusedChannelDeps,
): Promise<void> {
  const { projectId, channel } = subscription;
  deps.metrics.count(DIGEST_METRICS.digestChannelRefused);
  deps.log.warn('digest not posted to a subscribed channel Slack refuses; it is skipped until subscribed again', {
    projectId,
    channel,
    code,
  });
  let marked: Subscription | null;
  try {
    marked = deps.subscriptions ? await deps.subscriptions.markBroken(projectId, channel, code, deps.clock.now()) : null;
  } catch (error) {
    // Unmarked, the next run meets the same refusal and tries again: nothing is lost.
    deps.log.warn('could not mark the subscription broken', { projectId, channel, ...describeError(error) });
    return;
  }
  if (marked) await notify(marked, code, home, deps);
}

/** The one notice, in the home channel; a log line when there is none or Slack won't take it. */
async function notify(subscription: Subscription, code: ChannelRefusalCode, home: string | undefined, deps: RefusedChannelDeps) {
  const notice = refusalNotice(subscription, code);
  const fields = { projectId: subscription.projectId, channel: subscription.channel, code, notice: notice.text };
  if (home === undefined) {
    deps.log.error('a subscribed channel refuses digests and no home channel can say so', fields);
    return;
  }
  try {
    const paced = new PacedChannel(home, deps);
    await paced.reserve(1);
    await paced.post((retryRateLimited) => deps.slack.post(home, notice, { retryRateLimited }));
  } catch (error) {
    deps.log.error('a subscribed channel refuses digests; the notice could not be posted', { ...fields, home, ...describeError(error) });
  }
}

/** Only ids Slack issued become mentions; anything else is shown as plain safe text. */
function userMention(userId: string): string {
  return /^[UW][A-Z0-9]{2,}$/.test(userId) ? `<@${userId}>` : '';
}

function channelMention(channel: string): string {
  return isChannelId(channel) ? `<#${channel}>` : serviceText(channel, 80);
}

/** Notice text: every stored string through the digest's text safety, the project name never in a code span. */
export function refusalNotice(subscription: Subscription, code: ChannelRefusalCode): SlackMessage {
  const who = userMention(subscription.createdBy);
  const project = serviceName(subscription.projectName, subscription.projectId, 150);
  const text =
    `⚠️ ${who ? `${who}: ` : ''}digests of *${project}* can no longer be posted in ${channelMention(subscription.channel)} ` +
    `(Slack: \`${code}\`; ${CHANNEL_REFUSALS[code]}). That channel is skipped until someone runs ` +
    '`/visibility subscribe` for the project there again.';
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
}
