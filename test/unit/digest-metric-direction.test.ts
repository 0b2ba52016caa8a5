import { describe, expect, it } from 'vitest';
import { changeTone, metricDirection } from '../../shared/digest/metric-direction';

describe('metricDirection', () => {
  it.each(['Average position', 'avg_position', 'Rank', 'Open gaps', 'Alerts', 'Errors (24h)', 'Prompts lost', 'Missing citations'])(
    '"%s": lower is better',
    (label) => expect(metricDirection(label)).toBe('lower-is-better'),
  );

  it.each(['Visibility score', 'Mentions', 'Share of voice', 'Positioning score', 'Rankings coverage x', 'Gapless answers'])(
    '"%s": higher is better (whole words only)',
    (label) => {
      // "Rankings" is not "ranking"; "Positioning" is not "position"; "Gapless" is not "gap".
      expect(metricDirection(label)).toBe('higher-is-better');
    },
  );

  it('a per-label override wins, matched trimmed and case-insensitively', () => {
    expect(metricDirection('Cost per answer', { ' cost PER answer ': 'lower-is-better' })).toBe('lower-is-better');
    expect(metricDirection('Open gaps', { 'open gaps': 'higher-is-better' })).toBe('higher-is-better');
    expect(metricDirection('Open gaps', { 'Open gap': 'higher-is-better' })).toBe('lower-is-better');
  });
});

describe('changeTone', () => {
  it('a rise is better for higher-is-better and worse for lower-is-better, and the other way round', () => {
    expect(changeTone('Visibility', 2)).toBe('better');
    expect(changeTone('Visibility', -2)).toBe('worse');
    expect(changeTone('Average position', 0.4)).toBe('worse');
    expect(changeTone('Average position', -0.4)).toBe('better');
    expect(changeTone('Cost', 1, { Cost: 'lower-is-better' })).toBe('worse');
  });

  it('no change is "same"; no number to judge is null', () => {
    expect(changeTone('Visibility', 0)).toBe('same');
    expect(changeTone('Visibility', -0)).toBe('same');
    expect(changeTone('Visibility', null)).toBeNull();
    expect(changeTone('Visibility', undefined)).toBeNull();
    expect(changeTone('Visibility', Number.NaN)).toBeNull();
    expect(changeTone('Visibility', Number.POSITIVE_INFINITY)).toBeNull();
  });
});
