/**
 * What the Slack app reads about its workspace, over `@slack/web-api` with the bot token:
 * - `UserGroupMembers`: `usergroups.users.list` (scope `usergroups:read`), each group's members
 *   cached for `cacheMs` (default 5 minutes): the method is Slack tier 2 (about 20 calls a minute),
 *   and a policy by user group asks on every change;
 * - `ChannelAccess`: `conversations.info` (scope `channels:read`, `groups:read` for private ones):
 *   `is_member` / `is_archived`, `channel_not_found` (a private channel or DM the bot is not in
 *   looks like that to it), with the bot's user id from `auth.test` so the answer can name it.
 * - `HomeViews`: `views.publish` of a user's App Home tab (no scope beyond the bot's; the Home tab
 *   must be enabled in the app, `bridge doctor` checks it).
 * Errors leave as the domain's vocabulary (./slack-errors): `SlackUnavailableError` (retry later),
 * `SlackPermanentError` (a NeedsOperatorFix: a missing scope, a revoked token). The token is read
 * through the one secret cache on every call, so a rotated token takes effect without a redeploy.
 */
import type { WebClient } from '@slack/web-api';
import type { Clock, SecretSource } from '../ports';
import { systemClock } from '../ports';
import { readHeaderSecretValue } from '../secrets';
import type { ChannelAccess, PostingAccess, UserGroupMembers } from '../slack-app/ports';
import type { HomeView, HomeViews } from '../slack-app/home/ports';
import { classifySlackError, fixForSlackError, SlackPermanentError, SlackUnavailableError } from './slack-errors';
import { createSlackClient, redactor } from './slack-poster';

export interface SlackWorkspaceOptions {
  /** The bot token (xoxb-…), through the secret cache. */
  token: SecretSource;
  /** Base URL of the Web API (the local Slack server's `apiUrl`); Slack's when omitted. */
  slackApiUrl?: string | undefined;
  /** How long a group's members are kept. Default 5 minutes. */
  cacheMs?: number | undefined;
  /** Upper bound of one call. Default 1,000 ms: the Slack function answers within Slack's 3 s. */
  requestTimeoutMs?: number | undefined;
  clock?: Clock | undefined;
}

export const USER_GROUP_CACHE_MS = 5 * 60_000;
/** Pages of usergroups.users.list are not a thing: it returns every member at once. */
const DEFAULT_REQUEST_TIMEOUT_MS = 1_000;

export class SlackWorkspace implements UserGroupMembers, ChannelAccess, HomeViews {
  private readonly clock: Clock;
  private readonly cacheMs: number;
  private readonly requestTimeoutMs: number;
  private readonly groups = new Map<string, { members: ReadonlySet<string>; untilMs: number }>();
  private client: { token: string; web: WebClient } | undefined;
  private botUserId: string | undefined;

  constructor(private readonly options: SlackWorkspaceOptions) {
    this.clock = options.clock ?? systemClock;
    this.cacheMs = options.cacheMs ?? USER_GROUP_CACHE_MS;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  async membersOf(groupId: string): Promise<ReadonlySet<string>> {
    const nowMs = this.clock.now();
    const cached = this.groups.get(groupId);
    if (cached !== undefined && cached.untilMs > nowMs) return cached.members;
    const { web, redact } = await this.web();
    let users: string[];
    try {
      users = (await web.usergroups.users.list({ usergroup: groupId })).users ?? [];
    } catch (error) {
      throw slackFailure(error, 'usergroups.users.list', groupId, redact);
    }
    const members: ReadonlySet<string> = new Set(users);
    this.groups.set(groupId, { members, untilMs: nowMs + this.cacheMs });
    return members;
  }

  async postingAccess(channel: string): Promise<PostingAccess> {
    const { web, redact } = await this.web();
    let info: { is_member?: boolean; is_archived?: boolean } | undefined;
    try {
      info = (await web.conversations.info({ channel })).channel;
    } catch (error) {
      const verdict = classifySlackError(error);
      if (verdict.kind === 'permanent' && verdict.code === 'channel_not_found')
        return { canPost: false, reason: 'not_found', ...(await this.bot(web)) };
      throw slackFailure(error, 'conversations.info', channel, redact);
    }
    if (info?.is_archived === true) return { canPost: false, reason: 'archived' };
    if (info?.is_member !== true) return { canPost: false, reason: 'not_member', ...(await this.bot(web)) };
    return { canPost: true };
  }

  async publish(userId: string, view: HomeView): Promise<void> {
    const { web, redact } = await this.web();
    try {
      // The SDK's view type lists known blocks only; the view is Block Kit JSON built by ../slack-app/home/view.ts.
      await web.views.publish({ user_id: userId, view: view as unknown as Parameters<WebClient['views']['publish']>[0]['view'] });
    } catch (error) {
      throw slackFailure(error, 'views.publish', userId, redact);
    }
  }

  /** The bot's user id (auth.test), once; nothing when Slack won't say (the answer then names no one). */
  private async bot(web: WebClient): Promise<{ botUserId?: string }> {
    if (this.botUserId === undefined) {
      try {
        this.botUserId = (await web.auth.test()).user_id;
      } catch {
        return {};
      }
    }
    return this.botUserId === undefined ? {} : { botUserId: this.botUserId };
  }

  /** A client for the current token, rebuilt when it rotates. */
  private async web(): Promise<{ web: WebClient; redact: (text: string) => string }> {
    const token = await readHeaderSecretValue(this.options.token);
    if (this.client?.token !== token) {
      const web = createSlackClient(token, this.options.slackApiUrl, this.requestTimeoutMs, () => Number.POSITIVE_INFINITY);
      this.client = { token, web };
      this.botUserId = undefined;
    }
    return { web: this.client.web, redact: redactor(token) };
  }
}

/** A failed look-up in the domain's vocabulary (look-ups are not retried here: the caller answers the user now). */
function slackFailure(error: unknown, method: string, subject: string, redact: (text: string) => string): Error {
  const verdict = classifySlackError(error);
  if (verdict.kind === 'permanent') {
    const fix = method.startsWith('usergroups.')
      ? "add the usergroups:read scope to the Slack app and reinstall it, and check the group id in the stage's slackAccess.changes.userGroup"
      : fixForSlackError(verdict.code, { channel: subject, method });
    return new SlackPermanentError(redact(`Slack ${method} for ${subject} failed: ${verdict.code}. Fix: ${fix}`), {
      code: verdict.code,
      fix,
      method,
    });
  }
  return new SlackUnavailableError(redact(`Slack unavailable for ${method} for ${subject} (${verdict.code})`), {
    reason: verdict.reason,
    retryAfterSeconds: verdict.retryAfterSeconds,
    attempts: 1,
    code: verdict.code,
  });
}
