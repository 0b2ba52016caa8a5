// The local Slack's own model of Slack's posting limit (a token bucket per channel), checked by hand-counted cases.
import { describe, expect, it } from 'vitest';
import { ChannelRateLimit } from '../../local/slack/server';

describe('ChannelRateLimit', () => {
  it('lets a burst through at once, then one post per interval', () => {
    const limit = new ChannelRateLimit({ intervalMs: 1000, burst: 2 });
    expect(limit.take('c', 0)).toBeUndefined();
    expect(limit.take('c', 0)).toBeUndefined();
    expect(limit.take('c', 0)).toBe(1);
    expect(limit.take('c', 999)).toBe(1);
    expect(limit.take('c', 1000)).toBeUndefined();
    expect(limit.take('c', 1500)).toBe(1);
    expect(limit.take('c', 2000)).toBeUndefined();
  });

  it('refills no more than the burst after a quiet spell', () => {
    const limit = new ChannelRateLimit({ intervalMs: 1000, burst: 2 });
    expect(limit.take('c', 0)).toBeUndefined();
    expect(limit.take('c', 60_000)).toBeUndefined();
    expect(limit.take('c', 60_000)).toBeUndefined();
    expect(limit.take('c', 60_000)).toBe(1);
  });

  it('keeps one bucket per channel, answers Retry-After in whole seconds, and forgets on clear', () => {
    const limit = new ChannelRateLimit({ intervalMs: 60_000, burst: 1 });
    expect(limit.take('busy', 0)).toBeUndefined();
    expect(limit.take('busy', 1)).toBe(60);
    expect(limit.take('busy', 30_000)).toBe(30);
    expect(limit.take('quiet', 30_000)).toBeUndefined();
    limit.clear();
    expect(limit.take('busy', 30_001)).toBeUndefined();
  });

  it('never lets a sustained stream beat one post per interval', () => {
    const limit = new ChannelRateLimit({ intervalMs: 1000, burst: 3 });
    let posted = 0;
    for (let at = 0; at < 60_000; at += 100) if (limit.take('c', at) === undefined) posted += 1;
    expect(posted).toBe(3 + 59); // the burst, then one per second after the first
  });
});
