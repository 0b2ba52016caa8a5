/**
 * How a metric is read, and its minimum change (docs/DIGEST.md, "The verdict"). Whether a change is
 * beyond chance is the verdict model's call (./verdict); this module only says what a figure is and the
 * smallest change worth naming.
 *
 * Every metric is read as one of the kinds in `METRIC_KINDS` (by its label and value): a *share* (a
 * percentage, or a 0–1 value whose label says share/visibility/coverage…), a position, a count, or other.
 * Each has a minimum change by label (`DEFAULT_NOISE_MINIMUMS`, overridable per label with
 * `parseNoiseMinimums`), since the spec says nothing about how the service measures them.
 * Pure: no I/O, no clock.
 */
import { ConfigError } from '../config-env';
import type { Scalar } from '../read-api-types';
import { parseNumericValue } from './numeric';

export type MetricKind = 'share' | 'position' | 'count' | 'other';

interface KindSpec {
  /** Label words (whole words, case-insensitive, `_` read as a space) that mark the kind. */
  readonly words: readonly string[];
  /** The minimum change of a metric of this kind when no label-specific minimum applies. */
  readonly minimum: number;
}

/** Every metric kind, how it is recognised and its fallback minimum; a new kind fails `tsc` until it has its entry. */
export const METRIC_KINDS: { readonly [K in MetricKind]: KindSpec } = {
  // A share without a sample size (no `answers`) falls back to 1 point.
  share: { words: ['visibility', 'share', 'sov', 'coverage', 'rate', 'percent', 'percentage', 'ratio'], minimum: 1 },
  position: { words: ['position', 'rank', 'ranking'], minimum: 0.3 },
  count: { words: ['gaps', 'gap', 'alerts', 'alert', 'mentions', 'citations', 'prompts', 'answers', 'count', 'errors'], minimum: 0.5 },
  other: { words: [], minimum: 0.5 },
};

/** Checked in this order: "Share of voice rank" is a position, "Open gaps" a count. */
const KIND_ORDER: readonly MetricKind[] = ['position', 'count', 'share', 'other'];

/** Minimum changes by label word, before the kind's fallback (absolute, in the metric's unit). */
export const DEFAULT_NOISE_MINIMUMS: Readonly<Record<string, number>> = {
  position: 0.3,
  rank: 0.5,
  gaps: 0.5,
  alerts: 0.5,
  mentions: 10,
  citations: 10,
};

/** Per-label minimums from the stage file (exact label, case-insensitive), e.g. `{ "Mentions": 25 }`. */
export type NoiseMinimums = Readonly<Record<string, number>>;

function words(label: string): string[] {
  return label
    .replace(/_/g, ' ')
    .toLowerCase()
    .split(/[^a-z%]+/)
    .filter((w) => w.length > 0);
}

/** How a value is scaled: a share in percent (0–100) or as a fraction (0–1); null for other kinds. */
export type ShareScale = 'percent' | 'fraction';

export interface MetricReading {
  kind: MetricKind;
  scale: ShareScale | null;
}

/**
 * The kind of a metric from its label and values (now and before): a value written with `%` is a share;
 * a share-like label is a share when its values fit 0–100 (0–1: a fraction).
 */
export function readMetric(label: string, values: readonly Scalar[]): MetricReading {
  const numbers = values.map(parseNumericValue).filter((v): v is number => v !== null);
  const percentText = values.some((v) => typeof v === 'string' && v.trim().endsWith('%'));
  const labelWords = words(label);
  const kind = KIND_ORDER.find((k) => METRIC_KINDS[k].words.some((w) => labelWords.includes(w))) ?? 'other';
  if (percentText || (kind === 'share' && numbers.length > 0 && numbers.every((v) => v >= 0 && v <= 100))) {
    const fraction = !percentText && numbers.every((v) => v <= 1);
    return { kind: 'share', scale: fraction ? 'fraction' : 'percent' };
  }
  return { kind: kind === 'share' ? 'other' : kind, scale: null };
}

/** How big a change must be to be called, and why. */
export type NoiseBand =
  /** Sampling error of a share at `answers`: ± `halfWidth` (in points for a percent share). */
  | { basis: 'sample'; halfWidth: number; answers: number }
  /** A fixed minimum change (label-specific, or the kind's). */
  | { basis: 'minimum'; halfWidth: number };

/** The minimum change configured for `label` in the stage file (case-insensitive), if any. */
export function configuredMinimum(label: string, minimums: NoiseMinimums): number | undefined {
  const wanted = label.trim().toLowerCase();
  for (const [key, value] of Object.entries(minimums)) if (key.trim().toLowerCase() === wanted) return value;
  return undefined;
}

/** A metric's minimum change: configured for its label, else by label word, else its kind's. */
export function minimumFor(label: string, kind: MetricKind, minimums: NoiseMinimums): number {
  const configured = configuredMinimum(label, minimums);
  if (configured !== undefined) return configured;
  const labelWords = words(label);
  for (const [word, value] of Object.entries(DEFAULT_NOISE_MINIMUMS)) if (labelWords.includes(word)) return value;
  return METRIC_KINDS[kind].minimum;
}

/**
 * The stage file's per-label minimum changes: a JSON object (or its text) of label → non-negative number.
 * Throws a `ConfigError` naming `key` and where to fix it.
 */
export function parseNoiseMinimums(value: unknown, key: string, where: string): NoiseMinimums {
  const example = `{"Mentions": 25, "Average position": 0.2}`;
  let parsed = value;
  if (typeof value === 'string') {
    if (value.trim() === '') return {};
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new ConfigError(key, `must be a JSON object of label → minimum change such as ${example} (fix it in ${where})`);
    }
  }
  if (parsed === undefined || parsed === null) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError(key, `must be an object of label → minimum change such as ${example} (fix it in ${where})`);
  const out: Record<string, number> = {};
  for (const [label, minimum] of Object.entries(parsed)) {
    if (label.trim() === '') throw new ConfigError(key, `has an empty label (fix it in ${where})`);
    if (typeof minimum !== 'number' || !Number.isFinite(minimum) || minimum < 0)
      throw new ConfigError(
        key,
        `"${label}" must be a number ≥ 0 (the smallest change reported), got ${JSON.stringify(minimum)} (fix it in ${where})`,
      );
    out[label] = minimum;
  }
  return Object.freeze(out);
}
