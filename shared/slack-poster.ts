/**
 * The bridge's Slack adapter: posts Block Kit messages with `@slack/web-api`, with retries bounded by
 * the caller's deadline, and turns Slack's error codes into two outcomes the caller can act on:
 *
 * - `SlackUnavailableError` — Slack is rate limiting, failing or unreachable, and the wait does not
 *   fit before the deadline (or the attempts ran out). Give the message back to the queue.
 * - `SlackPermanentError` — retrying will not help (bad channel, bad token, missing scope, bad
 *   blocks…). It carries Slack's `code` and a `fix` that says what the operator should change.
 *
 * The token never appears in an error message or log line.
 */
import { LogLevel, WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError, WebClient } from '@slack/web-api';
import type { ChatPostMessageArguments, FetchFunction, Logger } from '@slack/web-api';

// ---------------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------------

export interface SlackMessage {
  /** Notification / accessibility fallback. Replaced by a summary of the blocks when blank. */
  text: string;
  /** Block Kit blocks. */
  blocks: unknown[];
}

export interface SlackMessageMetadata {
  event_type: string;
  event_payload: Record<string, string | number | boolean>;
}

export interface SlackPostOptions {
  /** Post as a reply in this thread. */
  threadTs?: string;
  metadata?: SlackMessageMetadata;
}

export interface SlackPostResult {
  ts: string;
  channel: string;
}

export interface SlackPoster {
  post(channel: string, message: SlackMessage, options?: SlackPostOptions): Promise<SlackPostResult>;
  /**
   * The ts of a top-level message posted since `oldestEpochSeconds` whose metadata names `eventId`
   * (conversations.history; needs channels:history). Used before posting again after an attempt
   * whose outcome is unknown.
   */
  findPosted(channel: string, eventId: string, oldestEpochSeconds: number): Promise<string | undefined>;
  /** How many replies in the thread carry `eventId` in their metadata (conversations.replies). */
  countReplies(channel: string, threadTs: string, eventId: string): Promise<number>;
}

export interface SlackPosterOptions {
  token: string;
  /** Base URL of the Web API (e.g. the local Slack server's `apiUrl`). Default `https://slack.com/api/`. */
  slackApiUrl?: string;
  /** Epoch ms by which posting must end (e.g. Lambda deadline minus a margin). No deadline when omitted. */
  deadline?: () => number;
  /** Attempts per post, the first one included. Default 3. */
  maxAttempts?: number;
  /** Clock for deadline arithmetic. Default `Date.now`. */
  now?: () => number;
  /** How to wait between attempts. Default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Upper bound of one HTTP request (also capped by the time left before the deadline). Default 10 000. */
  requestTimeoutMs?: number;
  /** A retry is only started when at least this much time is left after its wait. Default 1 000. */
  minAttemptMs?: number;
  /** Longest single wait (Retry-After or backoff) without a deadline. Default 30 000. */
  maxRetryWaitMs?: number;
  /** First backoff for 5xx / network errors, doubled each time (capped at 4× this). Default 500. */
  backoffBaseMs?: number;
}

export type SlackUnavailableReason = 'ratelimited' | 'server_error' | 'network' | 'timeout' | 'deadline';

/** Slack can't take the message now; the caller should give it back to the queue. */
export class SlackUnavailableError extends Error {
  override readonly name = 'SlackUnavailableError';
  constructor(
    message: string,
    readonly reason: SlackUnavailableReason,
    /** Slack's Retry-After, when it said one. */
    readonly retryAfterSeconds: number | undefined,
    /** Requests made for this post. */
    readonly attempts: number,
    /** Slack's error code or `http_<status>` / network error code, when known. */
    readonly code?: string,
    /**
     * True when the request may have been processed (timeout, 5xx, connection lost mid-request): the
     * message may be in Slack, so the caller must look before posting again.
     */
    readonly outcomeUnknown = false,
  ) {
    super(message);
  }
}

/** Retrying will not help: an operator has to change something (`fix`), or the bridge has a bug. */
export class SlackPermanentError extends Error {
  override readonly name = 'SlackPermanentError';
  constructor(
    message: string,
    /** Slack's error code (e.g. `not_in_channel`) or `http_<status>`. */
    readonly code: string,
    /** What to do about it. */
    readonly fix: string,
    readonly method: string,
    readonly channel?: string,
    /** Slack's `response_metadata.messages` (e.g. which block is invalid). */
    readonly details: string[] = [],
  ) {
    super(message);
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

// ---------------------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------------------

/** Slack error codes worth retrying (answered with HTTP 200 `ok: false`). */
const TRANSIENT_PLATFORM_CODES = new Set(['ratelimited', 'rate_limited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

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

const TOKEN_ENV = 'the Slack token secret (SLACK_BOT_TOKEN_SECRET_ARN, or SLACK_BOT_TOKEN locally)';
const CHANNEL_ENV = 'SLACK_DEFAULT_CHANNEL / SLACK_PROJECT_CHANNELS';

/** What an operator should do about a permanent Slack error. */
export function fixForSlackError(code: string, context: { channel?: string; method?: string } = {}): string {
  const where = context.channel !== undefined ? ` ${context.channel}` : ' the channel';
  const method = context.method ?? 'chat.postMessage';
  switch (code) {
    case 'channel_not_found':
      if (method !== 'chat.postMessage' && context.channel !== undefined && !/^[CGD][A-Z0-9]+$/.test(context.channel)) {
        return `use the channel ID (C…) rather than its name for ${method}; otherwise check the channel name/ID in ${CHANNEL_ENV}`;
      }
      return `check the channel name/ID in ${CHANNEL_ENV}; for a private channel, invite the bot first (/invite @<bot> in${where})`;
    case 'not_in_channel':
      return `invite the bot: /invite @<bot> in${where} (or set ${CHANNEL_ENV} to a channel the bot is in)`;
    case 'is_archived':
      return `the channel is archived: unarchive${where} or point ${CHANNEL_ENV} at another channel`;
    case 'invalid_auth':
    case 'not_authed':
      return `put a valid bot token (xoxb-…) in ${TOKEN_ENV}`;
    case 'account_inactive':
    case 'token_revoked':
    case 'token_expired':
    case 'app_uninstalled':
      return `the token was revoked or the app uninstalled: reinstall the Slack app and put its new bot token (xoxb-…) in ${TOKEN_ENV}`;
    case 'missing_scope':
      if (method === 'conversations.history' || method === 'conversations.replies') {
        return 'add the channels:history scope (groups:history for private channels) to the Slack app and reinstall it; without it a retried digest cannot check what was already posted';
      }
      if (method.startsWith('conversations.')) {
        return 'add the channels:read scope (and groups:read for private channels) to the Slack app and reinstall it';
      }
      return 'add the chat:write scope to the Slack app and reinstall it';
    case 'not_allowed_token_type':
      return `use a bot token (xoxb-…), not a user or app-level token, in ${TOKEN_ENV}`;
    case 'restricted_action':
    case 'restricted_action_read_only_channel':
    case 'restricted_action_thread_only_channel':
    case 'restricted_action_non_threadable_channel':
      return `the workspace does not let the bot post in${where}: allow it, or point ${CHANNEL_ENV} at another channel`;
    case 'ekm_access_denied':
    case 'team_access_not_granted':
    case 'access_denied':
      return `the workspace denies the app access: ask a Slack admin to grant it access to${where}`;
    case 'invalid_blocks':
    case 'invalid_blocks_format':
    case 'invalid_metadata_format':
    case 'invalid_metadata_schema':
    case 'metadata_too_large':
    case 'msg_too_long':
    case 'msg_blocks_too_long':
    case 'too_many_attachments':
    case 'no_text':
    case 'invalid_arguments':
      return `Slack rejected the message the bridge built (${code}): this is a bridge bug — report it with the event id and Slack's details`;
    case 'thread_not_found':
    case 'message_not_found':
      return 'the parent message is gone (deleted?): the reply cannot be threaded';
    default:
      if (code.startsWith('http_')) {
        return `Slack answered HTTP ${code.slice(5)}: check SLACK_API_URL (leave it unset for Slack) and network egress`;
      }
      return `Slack rejected ${method} with "${code}": see https://api.slack.com/methods/${method}#errors`;
  }
}

// ---------------------------------------------------------------------------------------------------
// Poster
// ---------------------------------------------------------------------------------------------------

type PostMessageBlocks = Extract<ChatPostMessageArguments, { blocks: unknown }>['blocks'];

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

export function createSlackPoster(options: SlackPosterOptions): SlackPoster {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 3));
  const requestTimeoutMs = Math.max(1, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
  const minAttemptMs = Math.max(0, options.minAttemptMs ?? 1_000);
  const maxRetryWaitMs = options.maxRetryWaitMs ?? 30_000;
  const backoffBaseMs = Math.max(0, options.backoffBaseMs ?? 500);
  const deadline = options.deadline;
  const remainingMs = (): number => (deadline ? deadline() - now() : Number.POSITIVE_INFINITY);
  const redact = redactor(options.token);

  const client = createClient(options.token, options.slackApiUrl, requestTimeoutMs, remainingMs);

  const lookupFailure = (err: unknown, method: string, channel: string): Error => {
    const verdict = classifySlackError(err);
    if (verdict.kind === 'permanent') {
      const fix = fixForSlackError(verdict.code, { channel, method });
      return new SlackPermanentError(redact(`Slack ${method} in ${channel} failed: ${verdict.code}. Fix: ${fix}`), verdict.code, fix, method, channel);
    }
    return new SlackUnavailableError(redact(`Slack unavailable for ${method} in ${channel} (${verdict.code})`), verdict.reason, verdict.retryAfterSeconds, 1, verdict.code);
  };

  return {
    async findPosted(channel, eventId, oldestEpochSeconds) {
      try {
        const result = await client.conversations.history({ channel, oldest: String(oldestEpochSeconds), limit: 200, include_all_metadata: true });
        return (result.messages ?? []).find((m) => metadataEventId(m.metadata) === eventId)?.ts;
      } catch (err) {
        throw lookupFailure(err, 'conversations.history', channel);
      }
    },

    async countReplies(channel, threadTs, eventId) {
      try {
        const result = await client.conversations.replies({ channel, ts: threadTs, limit: 1000, include_all_metadata: true });
        return (result.messages ?? []).filter((m) => m.ts !== threadTs && metadataEventId(m.metadata) === eventId).length;
      } catch (err) {
        throw lookupFailure(err, 'conversations.replies', channel);
      }
    },

    async post(channel, message, postOptions = {}) {
      const args: ChatPostMessageArguments = {
        channel,
        text: fallbackText(message),
        blocks: message.blocks as PostMessageBlocks,
        unfurl_links: false,
        unfurl_media: false,
        ...(postOptions.threadTs !== undefined ? { thread_ts: postOptions.threadTs } : {}),
        ...(postOptions.metadata !== undefined ? { metadata: postOptions.metadata } : {}),
      };

      let attempts = 0;
      for (;;) {
        if (remainingMs() <= 0) {
          throw new SlackUnavailableError(
            `Slack post to ${channel} not attempted: the posting deadline has passed (after ${attempts} attempt(s))`,
            'deadline',
            undefined,
            attempts,
          );
        }
        attempts += 1;
        let failure: unknown;
        try {
          const result = await client.chat.postMessage(args);
          return { ts: result.ts ?? '', channel: result.channel ?? channel };
        } catch (err) {
          failure = err;
        }

        const verdict = classifySlackError(failure);
        if (verdict.kind === 'permanent') {
          const fix = fixForSlackError(verdict.code, { channel, method: 'chat.postMessage' });
          const detail = verdict.details.length > 0 ? ` (${verdict.details.join('; ')})` : '';
          throw new SlackPermanentError(
            redact(`Slack chat.postMessage to ${channel} failed: ${verdict.code}${detail}. Fix: ${fix}`),
            verdict.code,
            fix,
            'chat.postMessage',
            channel,
            verdict.details.map(redact),
          );
        }

        const retryAfterMs = verdict.retryAfterSeconds !== undefined ? Math.max(0, verdict.retryAfterSeconds * 1000) : undefined;
        const waitMs = retryAfterMs ?? backoffMs(attempts, backoffBaseMs);
        const describe = (why: string): string =>
          redact(`Slack unavailable for chat.postMessage to ${channel} (${verdict.reason}: ${verdict.code}) after ${attempts} attempt(s): ${why}`);
        if (verdict.outcome === 'unknown') {
          // Posting again blindly could duplicate the message; the caller looks it up first.
          throw new SlackUnavailableError(describe('the post may have gone through'), verdict.reason, verdict.retryAfterSeconds, attempts, verdict.code, true);
        }
        if (attempts >= maxAttempts) {
          throw new SlackUnavailableError(describe('no attempts left'), verdict.reason, verdict.retryAfterSeconds, attempts, verdict.code);
        }
        if (waitMs > maxRetryWaitMs) {
          throw new SlackUnavailableError(describe(`wait of ${waitMs} ms is too long`), verdict.reason, verdict.retryAfterSeconds, attempts, verdict.code);
        }
        if (remainingMs() < waitMs + minAttemptMs) {
          throw new SlackUnavailableError(
            describe(`wait of ${waitMs} ms does not fit before the deadline`),
            verdict.reason,
            verdict.retryAfterSeconds,
            attempts,
            verdict.code,
          );
        }
        await sleep(waitMs);
      }
    },
  };
}

/** Exponential backoff with a little jitter: base, 2×base, 4×base (cap). */
function backoffMs(attempt: number, base: number): number {
  const exp = Math.min(base * 2 ** (attempt - 1), base * 4);
  return Math.round(exp * (0.8 + Math.random() * 0.2));
}

function metadataEventId(metadata: unknown): string | undefined {
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const payload = (metadata as { event_payload?: unknown }).event_payload;
  if (typeof payload !== 'object' || payload === null) return undefined;
  const id = (payload as { event_id?: unknown }).event_id;
  return typeof id === 'string' ? id : undefined;
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Slack wants a non-empty `text` with blocks (notifications, screen readers). */
function fallbackText(message: SlackMessage): string {
  const text = message.text.trim();
  if (text !== '') return message.text;
  for (const block of message.blocks) {
    if (typeof block !== 'object' || block === null) continue;
    const candidate = (block as { text?: unknown }).text;
    if (typeof candidate === 'object' && candidate !== null) {
      const value = (candidate as { text?: unknown }).text;
      if (typeof value === 'string' && value.trim() !== '') return value.trim().slice(0, 3000);
    }
  }
  return 'AI visibility update';
}

/** Removes the token (and anything token-shaped) from text bound for errors and logs. */
function redactor(token: string): (text: string) => string {
  return (text) => {
    const withoutToken = token.length >= 8 ? text.split(token).join('[redacted]') : text;
    return withoutToken.replace(/xox[a-z]-[A-Za-z0-9-]+/g, 'xox?-[redacted]');
  };
}

const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  setLevel: () => undefined,
  getLevel: () => LogLevel.ERROR,
  setName: () => undefined,
};

/**
 * A WebClient with its own retries off (we retry, bounded by the deadline), 429s surfaced, and each
 * request cut off at `requestTimeoutMs` or the time left before the deadline, whichever is sooner.
 */
function createClient(token: string, slackApiUrl: string | undefined, requestTimeoutMs: number, remainingMs: () => number): WebClient {
  const boundedFetch: FetchFunction = (url, init) => {
    const budget = Math.floor(Math.min(requestTimeoutMs, remainingMs()));
    const timeout = AbortSignal.timeout(Math.max(1, budget));
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    return globalThis.fetch(url, { ...init, signal });
  };
  return new WebClient(token, {
    ...(slackApiUrl !== undefined ? { slackApiUrl } : {}),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: requestTimeoutMs,
    fetch: boundedFetch,
    logger: silentLogger,
  });
}

// ---------------------------------------------------------------------------------------------------
// Doctor helpers
// ---------------------------------------------------------------------------------------------------

export type SlackCheckFailure = { ok: false; error: string; fix: string };

export type SlackAuthCheck =
  | { ok: true; team: string; teamId: string; user: string; userId: string; botId: string | undefined; url: string }
  | SlackCheckFailure;

export type SlackMembershipCheck = { ok: true; isMember: boolean; channelId: string; name: string | undefined } | SlackCheckFailure;

/** `auth.test`: is the token valid, and which workspace and bot does it belong to. Never throws. */
export async function checkSlackAuth(token: string, slackApiUrl?: string, options: { timeoutMs?: number } = {}): Promise<SlackAuthCheck> {
  const client = createClient(token, slackApiUrl, options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, () => Number.POSITIVE_INFINITY);
  try {
    const result = await client.auth.test();
    return {
      ok: true,
      team: result.team ?? '',
      teamId: result.team_id ?? '',
      user: result.user ?? '',
      userId: result.user_id ?? '',
      botId: result.bot_id,
      url: result.url ?? '',
    };
  } catch (err) {
    return checkFailure(err, token, 'auth.test', undefined);
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
  const client = createClient(token, slackApiUrl, options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, () => Number.POSITIVE_INFINITY);
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
    return { ok: false, error: verdict.code, fix: fixForSlackError(verdict.code, { method, ...(channel !== undefined ? { channel } : {}) }) };
  }
  return {
    ok: false,
    error: redactor(token)(verdict.code),
    fix: `Slack did not answer ${method} (${verdict.reason}): check network egress and SLACK_API_URL, then try again`,
  };
}
