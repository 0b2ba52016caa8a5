/**
 * Whether a rise of a metric is good news. Higher is better unless the label means a position, a rank
 * or a count of problems (gaps, alerts, errors…), where lower is better. Deployments can override per
 * label (`MetricDirections`: exact label, case-insensitive).
 */
export type MetricDirection = 'higher-is-better' | 'lower-is-better';

/** Per-label overrides, e.g. `{ 'Open gaps': 'lower-is-better', 'Cost per answer': 'lower-is-better' }`. */
export type MetricDirections = Readonly<Record<string, MetricDirection>>;

/** Label words that mean lower is better (matched as whole words, case-insensitive). */
export const LOWER_IS_BETTER_WORDS: readonly string[] = [
  'position',
  'rank',
  'ranking',
  'gap',
  'gaps',
  'alert',
  'alerts',
  'error',
  'errors',
  'issue',
  'issues',
  'problem',
  'problems',
  'loss',
  'losses',
  'lost',
  'missing',
];

const LOWER_IS_BETTER = new RegExp(`(^|[^a-z])(${LOWER_IS_BETTER_WORDS.join('|')})([^a-z]|$)`, 'i');

export function metricDirection(label: string, overrides: MetricDirections = {}): MetricDirection {
  const wanted = label.trim().toLowerCase();
  for (const [key, direction] of Object.entries(overrides)) if (key.trim().toLowerCase() === wanted) return direction;
  return LOWER_IS_BETTER.test(label.replace(/_/g, ' ')) ? 'lower-is-better' : 'higher-is-better';
}

export type ChangeTone = 'better' | 'worse' | 'same';

/** What a change means for the project; null when there is no change to judge. */
export function changeTone(label: string, delta: number | null | undefined, overrides: MetricDirections = {}): ChangeTone | null {
  if (delta === null || delta === undefined || !Number.isFinite(delta)) return null;
  if (delta === 0) return 'same';
  const up = delta > 0;
  return up === (metricDirection(label, overrides) === 'higher-is-better') ? 'better' : 'worse';
}
