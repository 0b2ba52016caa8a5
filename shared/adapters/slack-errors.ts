/**
 * Slack's errors in the domain's vocabulary (../errors): what `@slack/web-api` throws is classified
 * here as transient (`SlackUnavailableError`, an Unavailable: give the message back to the queue) or
 * permanent (`SlackPermanentError`, a NeedsOperatorFix whose `fix` comes from the table below).
 */
import { WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError } from '@slack/web-api';
import { ENV } from '../contracts';
import { NeedsOperatorFix, Unavailable } from '../errors';
import { isChannelId } from '../routing';

export type SlackUnavailableReason = 'ratelimited' | 'server_error' | 'network' | 'timeout' | 'deadline';

export interface SlackUnavailableDetails {
  reason: SlackUnavailableReason;
  /** Slack's Retry-After, when it said one. */
  retryAfterSeconds?: number | undefined;
  /** Requests made for this post. */
  attempts: number;
  /** Slack's error code or `http_<status>` / network error code, when known. */
  code?: string | undefined;
  /**
   * True when the request may have been processed (timeout, 5xx, connection lost mid-request): the
   * message may be in Slack, so the caller must look before posting again.
   */
  outcomeUnknown?: boolean | undefined;
}

/** Slack can't take the message now; the caller should give it back to the queue. */
export class SlackUnavailableError extends Unavailable {
  override readonly name = 'SlackUnavailableError';
  readonly reason: SlackUnavailableReason;
  readonly attempts: number;
  readonly code: string | undefined;
  constructor(message: string, details: SlackUnavailableDetails) {
    super(message, { retryAfterSeconds: details.retryAfterSeconds, outcomeUnknown: details.outcomeUnknown });
    this.reason = details.reason;
    this.attempts = details.attempts;
    this.code = details.code;
  }
}

export interface SlackPermanentDetails {
  /** Slack's error code (e.g. `not_in_channel`) or `http_<status>`. */
  code: string;
  /** What to do about it. */
  fix: string;
  method: string;
  channel?: string | undefined;
  /** Slack's `response_metadata.messages` (e.g. which block is invalid). */
  details?: string[] | undefined;
}

/** Retrying will not help: an operator has to change something (`fix`), or the bridge has a bug. */
export class SlackPermanentError extends NeedsOperatorFix {
  override readonly name = 'SlackPermanentError';
  readonly code: string;
  readonly method: string;
  readonly channel: string | undefined;
  readonly details: string[];
  constructor(message: string, details: SlackPermanentDetails) {
    super(message, details.fix);
    this.code = details.code;
    this.method = details.method;
    this.channel = details.channel;
    this.details = details.details ?? [];
  }
}

export type SlackErrorClass =
  | { kind: 'permanent'; code: string; details: string[] }
  | {
      kind: 'transient';
      reason: Exclude<SlackUnavailableReason, 'deadline'>;
      code: string;
      retryAfterSeconds?: number;
      /** Whether Slack may have processed the request (then a retry could post the message twice). */
      outcome: 'not_processed' | 'unknown';
    };

/** Slack error codes worth retrying (answered with HTTP 200 `ok: false`). */
const TRANSIENT_PLATFORM_CODES = new Set([
  'ratelimited',
  'rate_limited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

/** Decides what a `WebClient` error means: retry (`transient`) or give up (`permanent`). */
export function classifySlackError(err: unknown): SlackErrorClass {
  if (err instanceof WebAPIRateLimitedError) {
    return { kind: 'transient', reason: 'ratelimited', code: 'ratelimited', retryAfterSeconds: err.retryAfter, outcome: 'not_processed' };
  }
  if (err instanceof WebAPIPlatformError) {
    const code = typeof err.data.error === 'string' && err.data.error !== '' ? err.data.error : 'unknown_error';
    if (TRANSIENT_PLATFORM_CODES.has(code)) {
      const retryAfter = err.data.response_metadata?.retryAfter;
      const isRateLimit = code === 'ratelimited' || code === 'rate_limited';
      return {
        kind: 'transient',
        reason: isRateLimit ? 'ratelimited' : 'server_error',
        code,
        ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
        // A rate-limited call was refused; an internal or fatal error may have happened after the write.
        outcome: isRateLimit ? 'not_processed' : 'unknown',
      };
    }
    const messages = err.data.response_metadata?.messages;
    return { kind: 'permanent', code, details: Array.isArray(messages) ? messages.map(String) : [] };
  }
  if (err instanceof WebAPIHTTPError) {
    const code = `http_${err.statusCode}`;
    if (err.statusCode >= 500 || err.statusCode === 408 || err.statusCode === 425) {
      return { kind: 'transient', reason: 'server_error', code, outcome: 'unknown' };
    }
    return { kind: 'permanent', code, details: [] };
  }
  if (err instanceof WebAPIRequestError) {
    const original = err.original;
    if (isTimeout(original)) return { kind: 'transient', reason: 'timeout', code: 'timeout', outcome: 'unknown' };
    return networkFailure(networkCode(original) ?? 'network_error');
  }
  // WebClient rejects a 429 without a usable Retry-After with a plain Error.
  if (err instanceof Error && /retry header|rate limit/i.test(err.message)) {
    return { kind: 'transient', reason: 'ratelimited', code: 'ratelimited', outcome: 'not_processed' };
  }
  if (isTimeout(err)) return { kind: 'transient', reason: 'timeout', code: 'timeout', outcome: 'unknown' };
  return networkFailure(networkCode(err) ?? 'unknown_error');
}

/** Errors raised before a request could reach Slack: safe to send again. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function networkFailure(code: string): SlackErrorClass {
  return { kind: 'transient', reason: 'network', code, outcome: NOT_SENT_CODES.has(code) ? 'not_processed' : 'unknown' };
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
}

/** The first system error code (ECONNREFUSED, ENOTFOUND…) in an error's cause chain. */
function networkCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

const TOKEN_ENV = `the Slack token secret (${ENV.slackBotTokenSecretArn}, or ${ENV.slackBotToken} locally)`;
const CHANNEL_ENV = `${ENV.slackDefaultChannel} / ${ENV.slackProjectChannels}`;

/** What an operator should do about a permanent Slack error. */
export function fixForSlackError(code: string, context: { channel?: string; method?: string } = {}): string {
  const fix = SLACK_FIXES.get(code) ?? unknownCodeFix;
  return fix({
    code,
    channel: context.channel,
    method: context.method ?? 'chat.postMessage',
    where: context.channel !== undefined ? ` ${context.channel}` : ' the channel',
  });
}

interface FixContext {
  code: string;
  channel: string | undefined;
  method: string;
  /** " <channel>" or " the channel", to follow "in". */
  where: string;
}

type Fix = (context: FixContext) => string;

function channelNotFoundFix({ method, channel, where }: FixContext): string {
  if (method !== 'chat.postMessage' && channel !== undefined && !isChannelId(channel))
    return `use the channel ID (C…) rather than its name for ${method}; otherwise check the channel name/ID in ${CHANNEL_ENV}`;
  return `check the channel name/ID in ${CHANNEL_ENV}; for a private channel, invite the bot first (/invite @<bot> in${where})`;
}

function missingScopeFix({ method }: FixContext): string {
  if (method === 'conversations.history' || method === 'conversations.replies')
    return 'add the channels:history scope (groups:history for private channels) to the Slack app and reinstall it; without it a retried digest cannot check what was already posted';
  if (method.startsWith('conversations.'))
    return 'add the channels:read scope (and groups:read for private channels) to the Slack app and reinstall it';
  return 'add the chat:write scope to the Slack app and reinstall it';
}

function unknownCodeFix({ code, method }: FixContext): string {
  if (code.startsWith('http_'))
    return `Slack answered HTTP ${code.slice(5)}: check ${ENV.slackApiUrl} (leave it unset for Slack) and network egress`;
  return `Slack rejected ${method} with "${code}": see https://api.slack.com/methods/${method}#errors`;
}

/** The fix for each Slack error code the bridge can meet; codes with one cause share an entry. */
const SLACK_FIXES: ReadonlyMap<string, Fix> = new Map(
  (
    [
      [['channel_not_found'], channelNotFoundFix],
      [['not_in_channel'], ({ where }) => `invite the bot: /invite @<bot> in${where} (or set ${CHANNEL_ENV} to a channel the bot is in)`],
      [['is_archived'], ({ where }) => `the channel is archived: unarchive${where} or point ${CHANNEL_ENV} at another channel`],
      [['invalid_auth', 'not_authed'], () => `put a valid bot token (xoxb-…) in ${TOKEN_ENV}`],
      [
        ['account_inactive', 'token_revoked', 'token_expired', 'app_uninstalled'],
        () => `the token was revoked or the app uninstalled: reinstall the Slack app and put its new bot token (xoxb-…) in ${TOKEN_ENV}`,
      ],
      [['missing_scope'], missingScopeFix],
      [['not_allowed_token_type'], () => `use a bot token (xoxb-…), not a user or app-level token, in ${TOKEN_ENV}`],
      [
        [
          'restricted_action',
          'restricted_action_read_only_channel',
          'restricted_action_thread_only_channel',
          'restricted_action_non_threadable_channel',
        ],
        ({ where }) => `the workspace does not let the bot post in${where}: allow it, or point ${CHANNEL_ENV} at another channel`,
      ],
      [
        ['ekm_access_denied', 'team_access_not_granted', 'access_denied'],
        ({ where }) => `the workspace denies the app access: ask a Slack admin to grant it access to${where}`,
      ],
      [
        [
          'invalid_blocks',
          'invalid_blocks_format',
          'invalid_metadata_format',
          'invalid_metadata_schema',
          'metadata_too_large',
          'msg_too_long',
          'msg_blocks_too_long',
          'too_many_attachments',
          'no_text',
          'invalid_arguments',
        ],
        ({ code }) =>
          `Slack rejected the message the bridge built (${code}): this is a bridge bug — report it with the event id and Slack's details`,
      ],
      [['thread_not_found', 'message_not_found'], () => 'the parent message is gone (deleted?): the reply cannot be threaded'],
    ] satisfies [string[], Fix][]
  ).flatMap(([codes, fix]) => codes.map((code): [string, Fix] => [code, fix])),
);
