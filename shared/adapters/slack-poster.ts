/**
 * The bridge's Slack adapter: posts Block Kit messages with `@slack/web-api`, with retries bounded by
 * the caller's deadline. Failures leave it as the domain's vocabulary (see ./slack-errors):
 * `SlackUnavailableError` (an Unavailable: Slack is rate limiting, failing or unreachable and the
 * wait does not fit) or `SlackPermanentError` (a NeedsOperatorFix with Slack's `code` and a `fix`).
 *
 * The token never appears in an error message or log line; a token that can't go in an HTTP header
 * (a line break, a character outside Latin-1) fails at once as "fix the secret <name>" (a
 * NeedsOperatorFix), before @slack/web-api's fetch could quote it in a TypeError.
 */
import { LogLevel, WebClient } from '@slack/web-api';
import type { ChatPostMessageArguments, FetchFunction, Logger } from '@slack/web-api';
import type { SlackMessage, SlackPoster } from '../ports';
import { headerValueProblem, unusableSecret } from '../secrets';
import { asRecord, sleep as defaultSleep } from '../util';
import { classifySlackError, fixForSlackError, SlackPermanentError, SlackUnavailableError, type SlackErrorClass } from './slack-errors';

export interface SlackPosterOptions {
  token: string;
  /** The secret the token came from, named in the error when the token can't go in a header (default "Slack bot token"). */
  tokenSecretName?: string;
  /** Base URL of the Web API (e.g. the local Slack server's `apiUrl`). Default `https://slack.com/api/`. */
  slackApiUrl?: string | undefined;
  /** Epoch ms by which posting must end (e.g. Lambda deadline minus a margin). No deadline when omitted. */
  deadline?: (() => number) | undefined;
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

/**
 * chat.postMessage's arguments with the blocks already JSON: Slack receives the same form body (@slack/web-api
 * JSON-encodes an object argument itself), but the client's debug line copies an object argument key by key
 * whatever the log level, a first digest's largest cost in that library (docs/PERFORMANCE.md §3).
 */
type PostMessageArgs = {
  channel: string;
  text: string;
  blocks: string;
  unfurl_links: boolean;
  unfurl_media: boolean;
  thread_ts?: string;
  metadata?: ChatPostMessageArguments['metadata'];
};

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** How Slack refuses a block it does not know or accept: a message with `fallbackBlocks` is sent again with them. */
const NATIVE_REFUSAL_CODES: ReadonlySet<string> = new Set(['invalid_blocks', 'invalid_blocks_format']);

/** What every Slack Web API adapter (the poster, the file uploader) starts from. */
export interface SlackConnection {
  client: WebClient;
  /** Time left before the deadline (infinite without one). */
  remainingMs: () => number;
  requestTimeoutMs: number;
  redact: (text: string) => string;
}

/** Checks the token can go in a header (else "fix the secret"), then builds the deadline-bounded client. */
export function slackConnection(
  options: Pick<SlackPosterOptions, 'token' | 'tokenSecretName' | 'slackApiUrl' | 'deadline' | 'now' | 'requestTimeoutMs'>,
): SlackConnection {
  const problem = headerValueProblem(options.token);
  if (problem !== undefined) throw unusableSecret(options.tokenSecretName ?? 'Slack bot token', problem);
  const now = options.now ?? Date.now;
  const deadline = options.deadline;
  const remainingMs = (): number => (deadline ? deadline() - now() : Number.POSITIVE_INFINITY);
  const requestTimeoutMs = Math.max(1, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
  return {
    client: createSlackClient(options.token, options.slackApiUrl, requestTimeoutMs, remainingMs),
    remainingMs,
    requestTimeoutMs,
    redact: redactor(options.token),
  };
}

/** The poster's settings with defaults applied, shared by its methods. */
interface PosterContext extends SlackConnection {
  sleep: (ms: number) => Promise<void>;
  maxAttempts: number;
  minAttemptMs: number;
  maxRetryWaitMs: number;
  backoffBaseMs: number;
}

function posterContext(options: SlackPosterOptions): PosterContext {
  return {
    ...slackConnection(options),
    sleep: options.sleep ?? defaultSleep,
    maxAttempts: Math.max(1, Math.floor(options.maxAttempts ?? 3)),
    minAttemptMs: Math.max(0, options.minAttemptMs ?? 1_000),
    maxRetryWaitMs: options.maxRetryWaitMs ?? 30_000,
    backoffBaseMs: Math.max(0, options.backoffBaseMs ?? 500),
  };
}

export function createSlackPoster(options: SlackPosterOptions): SlackPoster {
  const ctx = posterContext(options);
  const { client } = ctx;
  return {
    async findPosted(channel, eventId, oldestEpochSeconds) {
      try {
        const result = await client.conversations.history({
          channel,
          oldest: String(oldestEpochSeconds),
          limit: 200,
          include_all_metadata: true,
        });
        return (result.messages ?? []).find((m) => metadataEventId(m.metadata) === eventId)?.ts;
      } catch (err) {
        throw lookupFailure(err, 'conversations.history', channel, ctx.redact);
      }
    },

    async countReplies(channel, threadTs, eventId) {
      try {
        const result = await client.conversations.replies({ channel, ts: threadTs, limit: 1000, include_all_metadata: true });
        return (result.messages ?? []).filter((m) => m.ts !== threadTs && metadataEventId(m.metadata) === eventId).length;
      } catch (err) {
        throw lookupFailure(err, 'conversations.replies', channel, ctx.redact);
      }
    },

    post(channel, message, postOptions = {}) {
      const args: PostMessageArgs = {
        channel,
        text: fallbackText(message),
        blocks: JSON.stringify(message.blocks),
        unfurl_links: false,
        unfurl_media: false,
        ...(postOptions.threadTs !== undefined ? { thread_ts: postOptions.threadTs } : {}),
        ...(postOptions.metadata !== undefined ? { metadata: postOptions.metadata } : {}),
      };
      const retryRateLimited = postOptions.retryRateLimited ?? true;
      const fallback = message.fallbackBlocks;
      if (fallback === undefined) return postWithRetries(args, channel, ctx, retryRateLimited);
      return postWithRetries(args, channel, ctx, retryRateLimited).catch(async (error: unknown) => {
        // A workspace or client without the chart or table block yet: the same message with their words, once.
        if (!(error instanceof SlackPermanentError) || !NATIVE_REFUSAL_CODES.has(error.code)) throw error;
        const posted = await postWithRetries({ ...args, blocks: JSON.stringify(fallback) }, channel, ctx, retryRateLimited);
        return { ...posted, nativeRefused: true };
      });
    },
  };
}

/** A failed look-up (history, replies) in the domain's vocabulary; look-ups are not retried here. */
function lookupFailure(err: unknown, method: string, channel: string, redact: (text: string) => string): Error {
  const verdict = classifySlackError(err);
  if (verdict.kind === 'permanent') {
    const fix = fixForSlackError(verdict.code, { channel, method });
    return new SlackPermanentError(redact(`Slack ${method} in ${channel} failed: ${verdict.code}. Fix: ${fix}`), {
      code: verdict.code,
      fix,
      method,
      channel,
    });
  }
  return new SlackUnavailableError(redact(`Slack unavailable for ${method} in ${channel} (${verdict.code})`), {
    reason: verdict.reason,
    retryAfterSeconds: verdict.retryAfterSeconds,
    attempts: 1,
    code: verdict.code,
  });
}

/** chat.postMessage, retried while the waits fit before the deadline and the outcome is known. */
async function postWithRetries(
  args: PostMessageArgs,
  channel: string,
  ctx: PosterContext,
  retryRateLimited: boolean,
): Promise<{ ts: string; channel: string }> {
  for (let attempts = 1; ; attempts++) {
    if (ctx.remainingMs() <= 0) {
      throw new SlackUnavailableError(
        `Slack post to ${channel} not attempted: the posting deadline has passed (after ${attempts - 1} attempt(s))`,
        {
          reason: 'deadline',
          attempts: attempts - 1,
        },
      );
    }
    let failure: unknown;
    try {
      const result = asRecord(await ctx.client.apiCall('chat.postMessage', args));
      return { ts: stringOr(result['ts'], ''), channel: stringOr(result['channel'], channel) };
    } catch (err) {
      failure = err;
    }
    const verdict = classifySlackError(failure);
    if (verdict.kind === 'permanent') throw permanentPostError(verdict, channel, ctx.redact);
    const waitMs =
      verdict.retryAfterSeconds !== undefined ? Math.max(0, verdict.retryAfterSeconds * 1000) : backoffMs(attempts, ctx.backoffBaseMs);
    const giveUp =
      verdict.reason === 'ratelimited' && !retryRateLimited
        ? 'the caller paces the retry'
        : reasonToGiveUp(verdict, attempts, waitMs, { ...ctx, remainingMs: ctx.remainingMs() });
    if (giveUp !== undefined) {
      throw new SlackUnavailableError(
        ctx.redact(
          `Slack unavailable for chat.postMessage to ${channel} (${verdict.reason}: ${verdict.code}) after ${attempts} attempt(s): ${giveUp}`,
        ),
        {
          reason: verdict.reason,
          retryAfterSeconds: verdict.retryAfterSeconds,
          attempts,
          code: verdict.code,
          outcomeUnknown: verdict.outcome === 'unknown',
        },
      );
    }
    await ctx.sleep(waitMs);
  }
}

type TransientClass = Extract<SlackErrorClass, { kind: 'transient' }>;

/** Why a transient failure ends the post now (said in the error), or undefined to wait `waitMs` and retry. */
function reasonToGiveUp(
  verdict: TransientClass,
  attempts: number,
  waitMs: number,
  limits: { maxAttempts: number; maxRetryWaitMs: number; minAttemptMs: number; remainingMs: number },
): string | undefined {
  // Posting again blindly could duplicate the message; the caller looks it up first.
  if (verdict.outcome === 'unknown') return 'the post may have gone through';
  if (attempts >= limits.maxAttempts) return 'no attempts left';
  if (waitMs > limits.maxRetryWaitMs) return `wait of ${waitMs} ms is too long`;
  if (limits.remainingMs < waitMs + limits.minAttemptMs) return `wait of ${waitMs} ms does not fit before the deadline`;
  return undefined;
}

function permanentPostError(
  verdict: Extract<SlackErrorClass, { kind: 'permanent' }>,
  channel: string,
  redact: (text: string) => string,
): SlackPermanentError {
  const fix = fixForSlackError(verdict.code, { channel, method: 'chat.postMessage' });
  const detail = verdict.details.length > 0 ? ` (${verdict.details.join('; ')})` : '';
  return new SlackPermanentError(redact(`Slack chat.postMessage to ${channel} failed: ${verdict.code}${detail}. Fix: ${fix}`), {
    code: verdict.code,
    fix,
    method: 'chat.postMessage',
    channel,
    details: verdict.details.map(redact),
  });
}

/** Exponential backoff with a little jitter: base, 2×base, 4×base (cap). */
function backoffMs(attempt: number, base: number): number {
  const exp = Math.min(base * 2 ** (attempt - 1), base * 4);
  return Math.round(exp * (0.8 + Math.random() * 0.2));
}

function stringOr(value: unknown, otherwise: string): string {
  return typeof value === 'string' ? value : otherwise;
}

function metadataEventId(metadata: unknown): string | undefined {
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const payload = (metadata as { event_payload?: unknown }).event_payload;
  if (typeof payload !== 'object' || payload === null) return undefined;
  const id = (payload as { event_id?: unknown }).event_id;
  return typeof id === 'string' ? id : undefined;
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
export function redactor(token: string): (text: string) => string {
  return (text) => {
    const withoutToken = token.length >= 8 ? text.split(token).join('[redacted]') : text;
    return withoutToken.replace(/xox[a-z]-[A-Za-z0-9-]+/g, 'xox?-[redacted]');
  };
}

/** A Logger that says nothing: Slack's libraries would log requests with their tokens. */
export const silentLogger: Logger = {
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
export function createSlackClient(
  token: string,
  slackApiUrl: string | undefined,
  requestTimeoutMs: number,
  remainingMs: () => number,
): WebClient {
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
