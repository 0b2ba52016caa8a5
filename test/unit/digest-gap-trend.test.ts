import { describe, expect, it } from 'vitest';
import type { Gap } from '../../shared/read-api-types';
import { gapTrend, TREND_MARKS } from '../../shared/digest/gap-trend';

const trendOf = (extra: Gap['extra']) => gapTrend({ extra });

describe('gapTrend', () => {
  it.each([
    ['worse', 'worse'],
    ['Worsening', 'worse'],
    [' declining ', 'worse'],
    ['getting worse', 'worse'],
    ['NEW', 'new'],
    ['improving', 'improving'],
    ['better', 'improving'],
    ['steady', 'stable'],
    ['unchanged', 'stable'],
  ] as const)('reads trend "%s" as %s', (word, trend) => {
    expect(trendOf([['trend', word]])).toBe(trend);
  });

  it('reads the trend from direction, change or status fields, names trimmed and case-insensitive', () => {
    expect(trendOf([['Direction ', 'down']])).toBe('worse');
    expect(trendOf([['change', 'up']])).toBe('improving');
    expect(trendOf([['STATUS', 'new']])).toBe('new');
  });

  it('reads a yes/no worsening flag: true is worse, false says nothing', () => {
    expect(trendOf([['worsening', true]])).toBe('worse');
    expect(trendOf([['getting_worse', false]])).toBeNull();
    expect(trendOf([['worsening', 'yes']])).toBeNull();
  });

  it('skips unreadable values and goes on to the next field', () => {
    expect(
      trendOf([
        ['trend', 'sideways'],
        ['trend', 7],
        ['direction', 'worse'],
      ]),
    ).toBe('worse');
  });

  it('is null without a trend field; other fields with trend words do not count', () => {
    expect(trendOf([])).toBeNull();
    expect(
      trendOf([
        ['note', 'worse'],
        ['first_seen_run', 3],
      ]),
    ).toBeNull();
  });

  it('has a distinct mark per trend', () => {
    expect(new Set(Object.values(TREND_MARKS)).size).toBe(4);
    expect(TREND_MARKS.worse).toMatch(/worse/);
  });
});
