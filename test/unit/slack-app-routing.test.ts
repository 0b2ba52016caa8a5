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

  it("posts to the project's home channel: the configured one, else the default", () => {
    expect(routeDigest('p2', [], fallback, NOW)).toEqual({
      deliveries: [{ channel: 'CDEFAULT', mode: 'full', source: 'default', home: true }],
      skipped: [],
    });
    expect(routeDigest('p1', [], fallback, NOW).deliveries).toEqual([{ channel: 'CCONFIG', mode: 'full', source: 'config', home: true }]);
    expect(routeDigest('p2', [], { defaultChannel: ' ', projectChannels: {} }, NOW)).toEqual({ deliveries: [], skipped: [] });
  });

  it('posts to every subscribed channel with its mode, plus the home channel', () => {
    const route = routeDigest('p1', [sub('CA'), sub('CB', { mode: 'changes' })], fallback, NOW);
    expect(route.deliveries).toEqual([
      { channel: 'CA', mode: 'full', source: 'subscription', home: false },
      { channel: 'CB', mode: 'changes', source: 'subscription', home: false },
      { channel: 'CCONFIG', mode: 'full', source: 'config', home: true },
    ]);
  });

  it('skips a muted channel with its reason, and the mute ends on time', () => {
    const muted = sub('CA', { mutedUntilMs: NOW + 1 });
    expect(routeDigest('p1', [muted], { defaultChannel: '', projectChannels: {} }, NOW)).toEqual({
      deliveries: [],
      skipped: [{ channel: 'CA', reason: 'muted', mutedUntilMs: NOW + 1 }],
    });
    expect(routeDigest('p1', [muted], { defaultChannel: '', projectChannels: {} }, NOW + 1).deliveries).toEqual([
      { channel: 'CA', mode: 'full', source: 'subscription', home: false },
    ]);
  });

  it('keeps the default channel whatever another channel subscribes or mutes (no hijack)', () => {
    // `subscribe X` then `mute X 52w` in C1: the default channel still gets X.
    const hijack = [sub('C1', { mutedUntilMs: NOW + 52 * 7 * 86_400_000 })];
    const route = routeDigest(
      'p2',
      hijack.map((s) => ({ ...s, projectId: 'p2' })),
      fallback,
      NOW,
    );
    expect(route.deliveries).toEqual([{ channel: 'CDEFAULT', mode: 'full', source: 'default', home: true }]);
    expect(route.skipped.map((s) => s.channel)).toEqual(['C1']);
    expect(routeDigest('p1', hijack, fallback, NOW).deliveries.map((d) => d.channel)).toEqual(['CCONFIG']);
  });

  it("lets only the home channel's own subscription change or mute it", () => {
    const route = routeDigest('p1', [sub('CCONFIG', { mode: 'changes' }), sub('CDEFAULT', { mutedUntilMs: NOW + 60_000 })], fallback, NOW);
    expect(route.deliveries).toEqual([{ channel: 'CCONFIG', mode: 'changes', source: 'subscription', home: true }]);
    expect(route.skipped.map((s) => s.channel)).toEqual(['CDEFAULT']);
    const mutedHere = routeDigest('p1', [sub('CCONFIG', { mutedUntilMs: NOW + 60_000 })], fallback, NOW);
    expect(mutedHere).toEqual({ deliveries: [], skipped: [{ channel: 'CCONFIG', reason: 'muted', mutedUntilMs: NOW + 60_000 }] });
  });

  it('skips a broken subscription, but never the home channel for it', () => {
    const broken = { code: 'not_in_channel', atMs: NOW - 1 };
    const route = routeDigest('p1', [sub('CA', { broken }), sub('CCONFIG', { broken })], fallback, NOW);
    expect(route.skipped).toEqual([{ channel: 'CA', reason: 'broken', code: 'not_in_channel', sinceMs: NOW - 1 }]);
    expect(route.deliveries).toEqual([{ channel: 'CCONFIG', mode: 'full', source: 'subscription', home: true }]);
  });

  it('names each channel at most once, always delivers to an unmuted home channel, and ignores other projects', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            channel: fc.constantFrom('CA', 'CB', 'CCONFIG', 'CDEFAULT'),
            project: fc.constantFrom('p1', 'p2'),
            muted: fc.boolean(),
            broken: fc.boolean(),
          }),
        ),
        (rows) => {
          const subs = rows.map((r) =>
            sub(r.channel, {
              projectId: r.project,
              ...(r.muted ? { mutedUntilMs: NOW + 1000 } : {}),
              ...(r.broken ? { broken: { code: 'is_archived', atMs: NOW } } : {}),
            }),
          );
          const route = routeDigest('p1', subs, fallback, NOW);
          const channels = [...route.deliveries.map((d) => d.channel), ...route.skipped.map((s) => s.channel)];
          expect(new Set(channels).size).toBe(channels.length);
          const own = subs.filter((s) => s.projectId === 'p1');
          const subscribed = new Set(own.map((s) => s.channel));
          for (const d of route.deliveries) if (d.source === 'subscription') expect(subscribed.has(d.channel)).toBe(true);
          const homeMutedHere = own.find((s) => s.channel === 'CCONFIG')?.mutedUntilMs !== undefined;
          expect(route.deliveries.some((d) => d.channel === 'CCONFIG' && d.home)).toBe(!homeMutedHere);
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

  it("defers a first slot further than the caller's first-wait budget, however long the invocation has left", () => {
    const strict = { intervalMs: 1000, burst: 1 };
    expect(reserveSlot(NOW + 2500, NOW, 60_000, strict, { slots: 3, maxFirstWaitMs: 2000 })).toEqual({
      decision: { status: 'deferred', retryAfterMs: 2500 },
    });
    // Within the budget the whole thread is reserved, its later slots past the budget.
    expect(reserveSlot(NOW + 2000, NOW, 60_000, strict, { slots: 3, maxFirstWaitMs: 2000 })).toEqual({
      decision: { status: 'reserved', waitMs: 2000 },
      nextTatMs: NOW + 5000,
    });
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
