/**
 * Which held runs of a channel are kept by line, one policy for the store (a hold past `HELD_RUNS_KEPT`)
 * and the catch-up (at most as many lines): the newest run of each project is always kept; past the limit
 * the oldest runs of projects that have a newer one are folded into that project's newest as a count
 * (`earlier`), so nothing held is lost from the catch-up's tally. Pure.
 */
import type { HeldRun } from '../ports';

/** Oldest first: by the run's created_at, then when it was held, then its id (a stable order). */
export function byAge(a: HeldRun, b: HeldRun): number {
  return (Date.parse(a.createdAt) || 0) - (Date.parse(b.createdAt) || 0) || a.heldAtMs - b.heldAtMs || a.eventId.localeCompare(b.eventId);
}

/** The runs this one stands for: itself and the earlier ones folded into it. */
export function heldCount(run: HeldRun): number {
  return 1 + (run.earlier ?? 0);
}

export interface Folded {
  /** The runs kept, oldest first, their `earlier` counts including what was folded into them. */
  kept: HeldRun[];
  /** The runs folded away (each counted on its project's newest). */
  dropped: HeldRun[];
  /** The kept runs whose `earlier` changed (as kept). */
  grown: HeldRun[];
}

/** Folds the oldest runs of projects with a newer one until at most `limit` are left (or every one left is its project's newest). */
export function foldHeld(runs: readonly HeldRun[], limit: number): Folded {
  const ordered = [...runs].sort(byAge);
  const newest = new Map<string, HeldRun>();
  for (const run of ordered) newest.set(run.projectId, run);
  let excess = ordered.length - limit;
  const dropped = new Set<HeldRun>();
  for (const run of ordered) {
    if (excess <= 0) break;
    if (newest.get(run.projectId) === run) continue;
    dropped.add(run);
    excess--;
  }
  const folded = new Map<string, number>();
  for (const run of dropped) folded.set(run.projectId, (folded.get(run.projectId) ?? 0) + heldCount(run));
  const grown: HeldRun[] = [];
  const kept = ordered
    .filter((run) => !dropped.has(run))
    .map((run) => {
      const extra = newest.get(run.projectId) === run ? (folded.get(run.projectId) ?? 0) : 0;
      if (extra === 0) return run;
      const bigger = { ...run, earlier: (run.earlier ?? 0) + extra };
      grown.push(bigger);
      return bigger;
    });
  return { kept, dropped: [...dropped], grown };
}
