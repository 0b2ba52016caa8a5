/**
 * Who takes the project's prompts: the competitors that win its gaps (`top_competitor`), how many prompts
 * and engine losses each holds, how that moved since the last run and the last week, and what changed
 * per gap (a new winner, engines newly lost or won back). Pure; read from the gaps and the snapshot.
 */
import type { Gap } from '../read-api-types';
import type { SnapshotGap } from '../ports';

/** Rivals kept per history point: enough for "vs last week" of the ones shown. */
export const SNAPSHOT_HISTORY_RIVALS = 10;
/** Engines kept per stored gap; a stored list this long may have been cut, so no engine is called newly lost. */
export const SNAPSHOT_MAX_GAP_ENGINES = 15;

export interface RivalStanding {
  /** As the service sends it (not escaped). */
  name: string;
  /** Prompts it wins among the gaps read. */
  prompts: number;
  /** Engine losses on those prompts (a prompt lost on 3 engines counts 3). */
  engineLosses: number;
  /** Change of `prompts` since the last run / the run a week ago; null when unknown. */
  sinceLastRun: number | null;
  sinceLastWeek: number | null;
}

/** One current gap compared with the same prompt in the last run. */
export interface GapShift {
  /** The winner before, when a different one wins now. */
  previousWinner: string | null;
  /** Engines it is lost on now and was not (in current order). */
  newEngines: string[];
  /** Engines it was lost on and is not any more. */
  wonBack: string[];
}

const key = (name: string): string => name.trim();

/** Prompts and engine losses per rival, most prompts first (ties: most engine losses, then name). */
/** What rival counting reads of a gap (a current one or a stored one). */
type RivalGap = { top_competitor?: string | undefined; platforms_losing?: readonly string[] | undefined };

export function rivalCounts(gaps: readonly RivalGap[]): Map<string, { prompts: number; engineLosses: number }> {
  const counts = new Map<string, { prompts: number; engineLosses: number }>();
  for (const gap of gaps) {
    const name = key(gap.top_competitor ?? '');
    if (name.length === 0) continue;
    const entry = counts.get(name) ?? { prompts: 0, engineLosses: 0 };
    entry.prompts += 1;
    entry.engineLosses += gap.platforms_losing?.length ?? 0;
    counts.set(name, entry);
  }
  return new Map([...counts].sort(([an, a], [bn, b]) => b.prompts - a.prompts || b.engineLosses - a.engineLosses || an.localeCompare(bn)));
}

/** The top rivals by prompts as a bounded record (for the snapshot's history). */
export function rivalRecord(gaps: readonly RivalGap[]): Record<string, number> {
  return Object.fromEntries([...rivalCounts(gaps)].slice(0, SNAPSHOT_HISTORY_RIVALS).map(([name, c]) => [name, c.prompts]));
}

/** True when the stored gaps know their winners (snapshots before digest v3 do not). */
function knowsWinners(gaps: readonly SnapshotGap[]): boolean {
  return gaps.length === 0 || gaps.some((g) => typeof g.top_competitor === 'string');
}

/**
 * The rivals of the current gaps with their changes. `previousGaps` null: no last run; `weekAgo` null:
 * no point a week ago. A rival absent before counts from 0 (when the earlier list knew its winners).
 */
export function rivalStandings(
  gaps: readonly Gap[],
  previousGaps: readonly SnapshotGap[] | null,
  weekAgo: Readonly<Record<string, number>> | null,
): RivalStanding[] {
  const before = previousGaps !== null && knowsWinners(previousGaps) ? rivalCounts(previousGaps) : null;
  return [...rivalCounts(gaps)].map(([name, now]) => ({
    name,
    prompts: now.prompts,
    engineLosses: now.engineLosses,
    sinceLastRun: before === null ? null : now.prompts - (before.get(name)?.prompts ?? 0),
    sinceLastWeek: weekAgo === null ? null : now.prompts - (Object.hasOwn(weekAgo, name) ? (weekAgo[name] ?? 0) : 0),
  }));
}

function sameEngine(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** What changed per prompt that is in both lists (by prompt_id); prompts without a change are left out. */
export function gapShifts(gaps: readonly Gap[], previousGaps: readonly SnapshotGap[] | null): Map<string, GapShift> {
  const shifts = new Map<string, GapShift>();
  if (previousGaps === null) return shifts;
  const before = new Map(previousGaps.map((g) => [g.prompt_id, g]));
  for (const gap of gaps) {
    const then = before.get(gap.prompt_id);
    if (then === undefined || shifts.has(gap.prompt_id)) continue;
    const thenWinner = typeof then.top_competitor === 'string' ? key(then.top_competitor) : '';
    const nowWinner = key(gap.top_competitor);
    const previousWinner = thenWinner.length > 0 && nowWinner.length > 0 && thenWinner !== nowWinner ? thenWinner : null;
    const thenEngines = (then.platforms_losing?.length ?? 0) >= SNAPSHOT_MAX_GAP_ENGINES ? undefined : then.platforms_losing;
    const newEngines = thenEngines === undefined ? [] : gap.platforms_losing.filter((e) => !thenEngines.some((t) => sameEngine(t, e)));
    const wonBack = thenEngines === undefined ? [] : thenEngines.filter((t) => !gap.platforms_losing.some((e) => sameEngine(t, e)));
    if (previousWinner !== null || newEngines.length > 0 || wonBack.length > 0)
      shifts.set(gap.prompt_id, { previousWinner, newEngines, wonBack });
  }
  return shifts;
}
