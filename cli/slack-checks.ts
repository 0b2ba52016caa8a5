/**
 * Slack checks for `bridge doctor`: is the token valid, is the bot in the channel. They never throw;
 * a failure comes back with Slack's code and what to fix.
 */
import { createSlackClient, DEFAULT_REQUEST_TIMEOUT_MS, redactor } from '../shared/adapters/slack-poster';
import { classifySlackError, fixForSlackError } from '../shared/adapters/slack-errors';

export { fixForSlackError };

export type SlackCheckFailure = { ok: false; error: string; fix: string };

export type SlackAuthCheck =
  | {
      ok: true;
      team: string;
      teamId: string;
      /** The Enterprise Grid org, when the workspace is in one. */
      enterpriseId: string | undefined;
      user: string;
      userId: string;
      botId: string | undefined;
      url: string;
    }
  | SlackCheckFailure;

export type SlackAppIdCheck = { ok: true; appId: string } | SlackCheckFailure;

export type SlackMembershipCheck = { ok: true; isMember: boolean; channelId: string; name: string | undefined } | SlackCheckFailure;

/** `auth.test`: is the token valid, and which workspace and bot does it belong to. Never throws. */
export async function checkSlackAuth(token: string, slackApiUrl?: string, options: { timeoutMs?: number } = {}): Promise<SlackAuthCheck> {
  const client = createSlackClient(token, slackApiUrl, options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, () => Number.POSITIVE_INFINITY);
  try {
    const result = await client.auth.test();
    return {
      ok: true,
      team: result.team ?? '',
      teamId: result.team_id ?? '',
      enterpriseId: typeof result.enterprise_id === 'string' && result.enterprise_id !== '' ? result.enterprise_id : undefined,
      user: result.user ?? '',
      userId: result.user_id ?? '',
      botId: result.bot_id,
      url: result.url ?? '',
    };
  } catch (err) {
    return checkFailure(err, token, 'auth.test', undefined);
  }
}

/** `bots.info` of the token's bot (auth.test's `bot_id`): the app it belongs to (scope `users:read`). Never throws. */
export async function botAppId(
  token: string,
  botId: string,
  slackApiUrl?: string,
  options: { timeoutMs?: number } = {},
): Promise<SlackAppIdCheck> {
  const client = createSlackClient(token, slackApiUrl, options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, () => Number.POSITIVE_INFINITY);
  try {
    const appId = (await client.bots.info({ bot: botId })).bot?.app_id;
    if (appId === undefined || appId === '')
      return { ok: false, error: 'no_app_id', fix: 'copy the App ID from the app’s Basic Information page' };
    return { ok: true, appId };
  } catch (err) {
    return checkFailure(err, token, 'bots.info', undefined);
  }
}

/**
 * `conversations.info`: is the bot a member of `channel` (needs channels:read, and groups:read for
 * private channels; real Slack wants a channel ID here). Never throws.
 */
export async function isBotInChannel(
  token: string,
  channel: string,
  slackApiUrl?: string,
  options: { timeoutMs?: number } = {},
): Promise<SlackMembershipCheck> {
  const client = createSlackClient(token, slackApiUrl, options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, () => Number.POSITIVE_INFINITY);
  try {
    const result = await client.conversations.info({ channel });
    return {
      ok: true,
      isMember: result.channel?.is_member === true,
      channelId: result.channel?.id ?? channel,
      name: result.channel?.name,
    };
  } catch (err) {
    return checkFailure(err, token, 'conversations.info', channel);
  }
}

function checkFailure(err: unknown, token: string, method: string, channel: string | undefined): SlackCheckFailure {
  const verdict = classifySlackError(err);
  if (verdict.kind === 'permanent') {
    return {
      ok: false,
      error: verdict.code,
      fix: fixForSlackError(verdict.code, { method, ...(channel !== undefined ? { channel } : {}) }),
    };
  }
  return {
    ok: false,
    error: redactor(token)(verdict.code),
    fix: `Slack did not answer ${method} (${verdict.reason}): check network egress and SLACK_API_URL, then try again`,
  };
}
