/**
 * Responder over Slack's response_url: a JSON POST. Only URLs under the allowed origins are called
 * (Slack's hooks host in production, the local Slack server locally), so a forged queue message
 * cannot make the worker POST elsewhere.
 */
import { ConfigError } from '../config-env';
import { ENV } from '../contracts';
import type { Responder, SlackReply } from '../slack-app/ports';

export const SLACK_RESPONSE_ORIGINS = ['https://hooks.slack.com'] as const;

/**
 * Where answers may go, for the Slack and digest functions alike: Slack's hooks host, plus the local
 * Slack server's origin when SLACK_API_URL points at one (its response_urls are on that server).
 * A SLACK_API_URL that is not a URL fails the cold start.
 */
export function responseOriginsFor(slackApiUrl: string | undefined): string[] {
  const origins: string[] = [...SLACK_RESPONSE_ORIGINS];
  if (slackApiUrl === undefined || slackApiUrl === '') return origins;
  if (!URL.canParse(slackApiUrl)) throw new ConfigError(ENV.slackApiUrl, `must be an absolute URL, got "${slackApiUrl}"`);
  const local = new URL(slackApiUrl).origin;
  return origins.includes(local) ? origins : [...origins, local];
}

export interface ResponseUrlResponderOptions {
  allowedOrigins?: readonly string[] | undefined;
  timeoutMs?: number | undefined;
  fetch?: typeof fetch | undefined;
}

export class ResponseUrlError extends Error {
  override name = 'ResponseUrlError';
}

export class ResponseUrlResponder implements Responder {
  private readonly origins: readonly string[];
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: ResponseUrlResponderOptions = {}) {
    this.origins = options.allowedOrigins ?? SLACK_RESPONSE_ORIGINS;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  async respond(responseUrl: string, reply: SlackReply): Promise<void> {
    const origin = originOf(responseUrl);
    if (origin === null || !this.origins.includes(origin))
      throw new ResponseUrlError(`response_url origin ${origin ?? '(not a URL)'} is not allowed`);
    let response: Response;
    try {
      response = await this.fetch(responseUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(reply),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new ResponseUrlError('response_url did not answer', { cause: error });
    }
    // Slack answers 404 "expired_url" after 30 minutes / 5 uses: retrying cannot help, but the caller decides.
    if (!response.ok) throw new ResponseUrlError(`response_url answered ${response.status}`);
  }
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}
