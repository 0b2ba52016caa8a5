/**
 * formatNumber writes numbers without Intl (ICU start-up stays out of the digest's cold start); its
 * output must be exactly what the two Intl formatters it replaces write.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatNumber } from '../../shared/digest/render/format';

const usual = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const small = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 2 });
/** What formatNumber wrote with Intl: 2 fraction digits, or 2 significant ones when that shows "0". */
function intlFormat(n: number): string {
  const shown = usual.format(n);
  return shown === '0' && n !== 0 ? small.format(n) : shown;
}

const signed = (magnitude: fc.Arbitrary<number>): fc.Arbitrary<number> =>
  fc.tuple(magnitude, fc.boolean()).map(([m, negative]) => (negative ? -m : m));

describe('formatNumber', () => {
  it('writes the edge cases as Intl does', () => {
    const edges = [
      0,
      -0,
      1,
      -1,
      0.5,
      0.125,
      1.005,
      1.015,
      2.675,
      0.995,
      9.995,
      999.995,
      -99.995,
      0.005,
      0.0049999,
      0.00995,
      0.000995,
      -0.001,
      0.001,
      1e-7,
      5e-324,
      1234.5,
      -1234.567,
      1e6,
      1e21,
      -1e21,
      123456789012345680000,
      Number.MAX_VALUE,
      Number.MAX_SAFE_INTEGER,
      Number.EPSILON,
      Number.NaN,
      Infinity,
      -Infinity,
    ];
    for (const n of edges) expect(formatNumber(n), String(n)).toBe(intlFormat(n));
    expect(formatNumber(1.005)).toBe('1.01');
    expect(formatNumber(-0)).toBe('-0');
    expect(formatNumber(0.0012345)).toBe('0.0012');
    expect(formatNumber(1e21)).toBe('1,000,000,000,000,000,000,000');
  });

  it('matches Intl on integers, decimals, halves, huge and tiny values of either sign', () => {
    const values = fc.oneof(
      fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }),
      signed(fc.nat(10_000_000).map((cents) => cents / 100)),
      // Ties at the rounding digit: x.xx5 and 0.00x5 (the shortest decimal is what gets rounded).
      signed(fc.nat(1_000_000).map((k) => (k * 10 + 5) / 1000)),
      signed(fc.nat(1_000).map((k) => (k * 10 + 5) / 1_000_000)),
      signed(fc.double({ min: 0, max: 0.01, noNaN: true })),
      signed(fc.tuple(fc.double({ min: 1, max: 10, noNaN: true }), fc.integer({ min: -330, max: 308 })).map(([m, e]) => m * 10 ** e)),
      fc.double(),
    );
    fc.assert(
      fc.property(values, (n) => formatNumber(n) === intlFormat(n)),
      { numRuns: 20_000 },
    );
  });
});
