/**
 * The direction of a gap as the service reports it. The spec names no field ("one that says whether it is
 * getting worse: not shown"), so a gap's extra fields are read by meaning: a text field called trend,
 * direction or change, or a yes/no field called worsening / getting_worse.
 */
import type { Gap, Scalar } from '../read-api-types';

export type GapTrend = 'worse' | 'new' | 'stable' | 'improving';

const TREND_FIELDS = new Set(['trend', 'direction', 'change', 'status']);
const WORSENING_FLAGS = new Set(['worsening', 'getting_worse', 'is_worsening', 'worse']);

const TREND_WORDS: ReadonlyArray<readonly [RegExp, GapTrend]> = [
  [/^(worse|worsening|declin|down|drop|getting worse)/, 'worse'],
  [/^new/, 'new'],
  [/^(better|improv|up|rising)/, 'improving'],
  [/^(stable|flat|same|unchanged|steady)/, 'stable'],
];

function trendFromText(value: Scalar): GapTrend | null {
  if (typeof value !== 'string') return null;
  const text = value.trim().toLowerCase();
  for (const [pattern, trend] of TREND_WORDS) if (pattern.test(text)) return trend;
  return null;
}

/** The gap's trend, or null when it sends none this code can read. */
export function gapTrend(gap: Pick<Gap, 'extra'>): GapTrend | null {
  for (const [field, value] of gap.extra) {
    const key = field.trim().toLowerCase();
    if (TREND_FIELDS.has(key)) {
      const trend = trendFromText(value);
      if (trend !== null) return trend;
    }
    if (WORSENING_FLAGS.has(key) && typeof value === 'boolean') return value ? 'worse' : null;
  }
  return null;
}

/** The trend as a short marker for a gap line. */
export const TREND_MARKS: Readonly<Record<GapTrend, string>> = {
  worse: '↘ worse',
  new: '✦ new',
  stable: '→ stable',
  improving: '↗ improving',
};
