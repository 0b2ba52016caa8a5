import { describe, expect, it } from 'vitest';
import { fixForSlackError } from '../../shared/adapters/slack-errors';

describe('fixForSlackError: what to do about each Slack error', () => {
  it.each([
    [
      'channel_not_found',
      {},
      /check the channel name\/ID in SLACK_DEFAULT_CHANNEL.*invite the bot first \(\/invite @<bot> in the channel\)/,
    ],
    [
      'channel_not_found',
      { channel: '#digests', method: 'conversations.history' },
      /use the channel ID \(C…\) rather than its name for conversations\.history/,
    ],
    ['channel_not_found', { channel: 'C0123', method: 'conversations.history' }, /check the channel name\/ID/],
    ['not_in_channel', { channel: '#digests' }, /invite the bot: \/invite @<bot> in #digests/],
    ['is_archived', { channel: 'C1' }, /archived: unarchive C1/],
    ['invalid_auth', {}, /valid bot token \(xoxb-…\) in the Slack token secret \(SLACK_BOT_TOKEN_SECRET_ARN/],
    ['token_revoked', {}, /reinstall the Slack app/],
    ['missing_scope', { method: 'conversations.replies' }, /channels:history/],
    ['missing_scope', { method: 'conversations.info' }, /channels:read/],
    ['missing_scope', {}, /chat:write/],
    ['not_allowed_token_type', {}, /use a bot token/],
    ['restricted_action_read_only_channel', { channel: 'C2' }, /does not let the bot post in C2/],
    ['access_denied', {}, /ask a Slack admin to grant it access to the channel/],
    ['invalid_blocks', {}, /\(invalid_blocks\): this is a bridge bug/],
    ['message_not_found', {}, /parent message is gone/],
    ['http_503', {}, /Slack answered HTTP 503: check SLACK_API_URL/],
    [
      'fatal_error',
      { method: 'chat.update' },
      /Slack rejected chat\.update with "fatal_error": see https:\/\/api\.slack\.com\/methods\/chat\.update#errors/,
    ],
  ] as [string, { channel?: string; method?: string }, RegExp][])('%s %j', (code, context, fix) => {
    expect(fixForSlackError(code, context)).toMatch(fix);
  });
});
