import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { routeDigest } from '../../shared/routing';
import { reserveSlot } from '../../shared/pacing';
import type { Subscription } from '../../shared/ports';

const NOW = Date.parse('2026-03-01T12:00:00Z');

function sub(channel: string, extra: Partial<Subscription> = {}): Subscription {
  return {
    projectId: 'p1',
    projectName: 'Northwind',
    channel,
    mode: 'full',
    createdBy: 'U1',
    createdAtMs: 0,
    changedBy: 'U1',
    changedAtMs: 0,
    lastChange: 'subscribed',
    ...extra,
  };
}

describe('digest routing', () => {
  const fallback = { defaultChannel: 'CDEFAULT', projectChannels: { p1: 'CCONFIG' } };

  it('posts to the default channel only when nothing else names one', () => {
    expect(routeDigest('p2', [], fallback, NOW)).toEqual({
      deliveries: [{ channel: 'CDEFAULT', mode: 'full', source: 'default' }],
      skipped: [],
    });
    expect(routeDigest('p2', [], { defaultChannel: ' ', projectChannels: {} }, NOW)).toEqual({ deliveries: [], skipped: [] });
  });

  it('posts to every subscribed channel with its mode, plus the configured channel', () => {
    const route = routeDigest('p1', [sub('CA'), sub('CB', { mode: 'changes' })], fallback, NOW);
    expect(route.deliveries).toEqual([
      { channel: 'CA', mode: 'full', source: 'subscription' },
      { channel: 'CB', mode: 'changes', source: 'subscription' },
      { channel: 'CCONFIG', mode: 'full', source: 'config' },
    ]);
  });

  it('skips a muted channel with its reason, and the mute ends on time', () => {
    const muted = sub('CA', { mutedUntilMs: NOW + 1 });
    expect(routeDigest('p1', [muted], { defaultChannel: 'CDEFAULT', projectChannels: {} }, NOW)).toEqual({
      deliveries: [],
      skipped: [{ channel: 'CA', reason: 'muted', mutedUntilMs: NOW + 1 }],
    });
    expect(routeDigest('p1', [muted], { defaultChannel: '', projectChannels: {} }, NOW + 1).deliveries).toEqual([
      { channel: 'CA', mode: 'full', source: 'subscription' },
    ]);
  });

  it("lets a subscription's settings win over the configuration of the same channel", () => {
    const route = routeDigest('p1', [sub('CCONFIG', { mode: 'changes' }), sub('CDEFAULT', { mutedUntilMs: NOW + 60_000 })], fallback, NOW);
    expect(route.deliveries).toEqual([{ channel: 'CCONFIG', mode: 'changes', source: 'subscription' }]);
    expect(route.skipped.map((s) => s.channel)).toEqual(['CDEFAULT']);
  });

  it('names each channel at most once and ignores other projects', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            channel: fc.constantFrom('CA', 'CB', 'CCONFIG', 'CDEFAULT'),
            project: fc.constantFrom('p1', 'p2'),
            muted: fc.boolean(),
          }),
        ),
        (rows) => {
          const subs = rows.map((r) => sub(r.channel, { projectId: r.project, ...(r.muted ? { mutedUntilMs: NOW + 1000 } : {}) }));
          const route = routeDigest('p1', subs, fallback, NOW);
          const channels = [...route.deliveries.map((d) => d.channel), ...route.skipped.map((s) => s.channel)];
          expect(new Set(channels).size).toBe(channels.length);
          const subscribed = new Set(subs.filter((s) => s.projectId === 'p1').map((s) => s.channel));
          for (const d of route.deliveries) if (d.source === 'subscription') expect(subscribed.has(d.channel)).toBe(true);
        },
      ),
    );
  });
});

describe('pacing (GCRA)', () => {
  const params = { intervalMs: 1000, burst: 2 };

  it('lets a burst go at once, then spaces posts one interval apart', () => {
    let tat: number | undefined;
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const step = reserveSlot(tat, NOW, 60_000, params);
      expect(step.decision.status).toBe('reserved');
      if (step.decision.status === 'reserved') waits.push(step.decision.waitMs);
      tat = step.nextTatMs;
    }
    expect(waits).toEqual([0, 0, 1000, 2000, 3000]);
  });

  it('hands the work back when the wait exceeds the budget, reserving nothing', () => {
    const step = reserveSlot(NOW + 5000, NOW, 2000, params);
    expect(step).toEqual({ decision: { status: 'deferred', retryAfterMs: 4000 } });
  });

  it("reserves a digest's posts together: the next caller waits for all of them; deferred when the last would not fit", () => {
    const strict = { intervalMs: 1000, burst: 1 };
    const thread = reserveSlot(undefined, NOW, 60_000, strict, { slots: 3 });
    expect(thread).toEqual({ decision: { status: 'reserved', waitMs: 0 }, nextTatMs: NOW + 3000 });
    expect(reserveSlot(thread.nextTatMs, NOW, 60_000, strict).decision).toEqual({ status: 'reserved', waitMs: 3000 });
    expect(reserveSlot(undefined, NOW, 1999, strict, { slots: 3 })).toEqual({ decision: { status: 'deferred', retryAfterMs: 0 } });
    expect(reserveSlot(undefined, NOW, 2000, strict, { slots: 3 }).decision.status).toBe('reserved');
  });

  it("never gives a slot before Slack's Retry-After", () => {
    const strict = { intervalMs: 1000, burst: 1 };
    expect(reserveSlot(NOW + 500, NOW, 60_000, strict, { notBeforeMs: NOW + 3000 })).toEqual({
      decision: { status: 'reserved', waitMs: 3000 },
      nextTatMs: NOW + 4000,
    });
    expect(reserveSlot(NOW + 5000, NOW, 60_000, strict, { notBeforeMs: NOW + 3000 }).decision).toEqual({
      status: 'reserved',
      waitMs: 5000,
    });
  });

  it('never lets more than `burst` posts start within one interval', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 5000 }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 4 }), (gaps, burst) => {
        let tat: number | undefined;
        let now = NOW;
        const starts: number[] = [];
        for (const gap of gaps) {
          now += gap;
          const step = reserveSlot(tat, now, Number.MAX_SAFE_INTEGER, { intervalMs: 1000, burst });
          if (step.decision.status !== 'reserved') throw new Error('unbounded budget must reserve');
          starts.push(now + step.decision.waitMs);
          tat = step.nextTatMs;
        }
        starts.sort((a, b) => a - b);
        for (let i = burst; i < starts.length; i++) expect(starts[i]! - starts[i - burst]!).toBeGreaterThanOrEqual(1000);
      }),
    );
  });
});
