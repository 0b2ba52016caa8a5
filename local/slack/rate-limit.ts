/** Slack's per-channel posting limit, as the local Slack server enforces it on `chat.postMessage`. */

export interface ChannelRateLimitOptions {
  /** Slack: about one message per second per channel (1,000 ms). */
  intervalMs: number;
  /** Posts a quiet channel takes back to back ("short bursts are allowed"). */
  burst: number;
}

/**
 * Slack's documented chat.postMessage limit, "about 1 message per second per channel, short bursts
 * allowed", as a token bucket per channel: `burst` tokens, one back every `intervalMs`, one per post.
 * Written here on its own, not with the bridge's pacer, so a test never checks that code against itself.
 */
export class ChannelRateLimit {
  /** Per channel: the time credit (ms) left, and when it was counted. */
  private readonly credit = new Map<string, { ms: number; at: number }>();

  constructor(private readonly limit: ChannelRateLimitOptions) {}

  /** Takes a token for a post to `channel` at `now`; when none is left, the Retry-After seconds instead. */
  take(channel: string, now: number): number | undefined {
    const { intervalMs } = this.limit;
    const fullMs = Math.max(1, this.limit.burst) * intervalMs;
    const last = this.credit.get(channel);
    const ms = last === undefined ? fullMs : Math.min(fullMs, last.ms + (now - last.at));
    if (ms < intervalMs) return Math.max(1, Math.ceil((intervalMs - ms) / 1000));
    this.credit.set(channel, { ms: ms - intervalMs, at: now });
    return undefined;
  }

  clear(): void {
    this.credit.clear();
  }
}
