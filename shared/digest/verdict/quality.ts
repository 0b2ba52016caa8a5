/**
 * Whether a run measured enough to be judged (docs/DIGEST.md, "Data quality"): no answers, or fewer than
 * half the median answers of the project's last runs, is a data-quality run — ⚠️, never a change, and
 * never learned from. Pure.
 */
import type { SnapshotPoint } from '../../ports';

/** A run under this share of the usual answers is too thin to compare. */
export const LOW_DATA_SHARE = 0.5;

export type DataQuality =
  | { state: 'ok' }
  /** The run ended with a status other than completed. */
  | { state: 'status'; status: string }
  | { state: 'no-answers'; usual: number | null }
  | { state: 'few-answers'; answers: number; usual: number };

function median(values: readonly number[]): number | null {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median answers of the stored runs that had any (null when none did). */
export function usualAnswers(history: readonly SnapshotPoint[]): number | null {
  return median(history.flatMap((p) => (typeof p.answers === 'number' && Number.isFinite(p.answers) && p.answers > 0 ? [p.answers] : [])));
}

export function dataQuality(run: { answers: number | null; status?: string | undefined }, history: readonly SnapshotPoint[]): DataQuality {
  const status = run.status?.trim();
  if (status !== undefined && status.length > 0 && status.toLowerCase() !== 'completed') return { state: 'status', status };
  const usual = usualAnswers(history);
  if (run.answers === 0) return { state: 'no-answers', usual };
  if (run.answers !== null && usual !== null && run.answers < LOW_DATA_SHARE * usual)
    return { state: 'few-answers', answers: run.answers, usual };
  return { state: 'ok' };
}

/** True when the run is judged and learned from. */
export function judgeable(quality: DataQuality): boolean {
  return quality.state === 'ok';
}
