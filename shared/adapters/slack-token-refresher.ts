/**
 * Slack's refresh of a rotating bot token (oauth.v2.access, grant_type=refresh_token): the
 * installations' TokenRefresher. Apart from the install flow (./slack-oauth.ts) so the digest function,
 * which refreshes linked installations' tokens, does not bundle @slack/oauth. Tokens never reach a log
 * line or an error message.
 */
import { WebClient } from '@slack/web-api';
import { NeedsOperatorFix } from '../errors';
import type { BotToken } from '../installations/model';
import type { TokenRefresher } from '../installations/ports';
import type { Clock } from '../ports';
import { classifySlackError, SlackUnavailableError } from './slack-errors';
import { redactor, silentLogger } from './slack-poster';

/** Codes of a refresh token Slack will never accept again: only a reinstall gives a new one. */
const DEAD_REFRESH_CODES = new Set(['invalid_grant', 'invalid_refresh_token', 'token_revoked', 'token_expired']);

/** Slack's refresh of a rotating bot token (oauth.v2.access, grant_type=refresh_token). */
export function createTokenRefresher(options: {
  clientId: string;
  clientSecret: string;
  slackApiUrl?: string | undefined;
  /** Shorter than the refresh lease, so a live holder is never taken over mid-call. */
  requestTimeoutMs: number;
  clock: Clock;
}): TokenRefresher {
  const client = new WebClient(undefined, {
    ...(options.slackApiUrl !== undefined ? { slackApiUrl: options.slackApiUrl } : {}),
    retryConfig: { retries: 0 },
    timeout: options.requestTimeoutMs,
    logger: silentLogger,
  });
  return {
    async refresh(refreshToken): Promise<BotToken> {
      try {
        const answer = await client.oauth.v2.access({
          client_id: options.clientId,
          client_secret: options.clientSecret,
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
        });
        if (typeof answer.access_token !== 'string') throw new Error('oauth.v2.access answered without an access_token');
        return {
          token: answer.access_token,
          refreshToken: typeof answer.refresh_token === 'string' ? answer.refresh_token : undefined,
          expiresAtMs: typeof answer.expires_in === 'number' ? options.clock.now() + answer.expires_in * 1000 : undefined,
        };
      } catch (error) {
        throw refreshFailure(error, redactor(refreshToken));
      }
    },
  };
}

function refreshFailure(error: unknown, redact: (text: string) => string): Error {
  const verdict = classifySlackError(error);
  if (verdict.kind === 'permanent') {
    const fix = DEAD_REFRESH_CODES.has(verdict.code)
      ? "the installation's refresh token is spent or revoked: a workspace admin installs the app again from the bridge's /slack/install page"
      : `check the app's client id and secret (oauth.v2.access answered ${verdict.code})`;
    return new NeedsOperatorFix(redact(`Slack refused the bot token refresh: ${verdict.code}`), fix);
  }
  return new SlackUnavailableError(redact(`Slack unavailable for the bot token refresh (${verdict.code})`), {
    reason: verdict.reason,
    retryAfterSeconds: verdict.retryAfterSeconds,
    attempts: 1,
    code: verdict.code,
  });
}
