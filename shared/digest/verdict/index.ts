/**
 * The verdict model: every claim the digest makes about a run — a share, a position, a count, an
 * engine's move, prompts a rival took, gaps worse or resolved — is decided here, once, and renderers only
 * say what it decided (docs/DIGEST.md, "The verdict"). A figure is a change or within normal variation,
 * never both. The state it learns (levels, spreads, CUSUMs, usual churn) is carried in the snapshot,
 * bounded; a data-quality run is not judged and teaches nothing. Pure.
 */
import type { VerdictState } from '../../ports';
import type { SnapshotGap } from '../../ports';
import type { Gap } from '../../read-api-types';
import type { GapShift } from '../rivals';
import { judgeChurn, learnChurn, usualChurn, type ChurnCall, type ChurnKind } from './churn';
import { judgeFigure, THRESHOLDS, type FigureCall, type FigureInput, type Thresholds } from './figure';
import { judgeable, type DataQuality } from './quality';

export type { ChurnCall } from './churn';
export type { FigureCall, FigureInput, FigureKind, Thresholds } from './figure';
export { THRESHOLDS } from './figure';
export { dataQuality, type DataQuality } from './quality';
export { judgeCountChange, judgeMeanChange, judgeShareChange, judgeSpreadChange, type PairJudgement } from './stats';

/** Figures whose state is kept (metrics, then engines). */
export const VERDICT_MAX_FIGURES = 40;

/** Prompts a rival took this run: new gaps it wins, and prompts it won from another rival. */
export interface Take {
  /** As the service sends it, trimmed; '' for gaps without a named winner. */
  rival: string;
  gaps: Gap[];
  engineLosses: number;
}

/** What changed among the gaps, as the verdict weighs it (engine losses). */
export interface GapNews {
  takes: Take[];
  /** Gaps worse (lost on more engines, or the service says so) that no rival took this run. */
  worse: { gaps: Gap[]; engineLosses: number };
  resolved: { gaps: SnapshotGap[]; engineLosses: number };
}

/** Engine losses of a gap: at least one (a gap is lost somewhere). */
function losses(gap: { platforms_losing?: readonly string[] | undefined }): number {
  return Math.max(1, gap.platforms_losing?.length ?? 1);
}

/** The gap news of a run compared with the last one. */
export function gapNewsOf(
  diff: { newGaps: readonly Gap[]; worseningGaps: readonly Gap[]; resolvedGaps: readonly SnapshotGap[] },
  gaps: readonly Gap[],
  shifts: ReadonlyMap<string, GapShift>,
): GapNews {
  const fresh = new Set(diff.newGaps.map((g) => g.prompt_id));
  const taken = new Map<string, Gap[]>();
  for (const gap of gaps) {
    if (!fresh.has(gap.prompt_id) && !shifts.get(gap.prompt_id)?.previousWinner) continue;
    const rival = gap.top_competitor.trim();
    taken.set(rival, [...(taken.get(rival) ?? []), gap]);
  }
  const covered = new Set([...taken.values()].flat().map((g) => g.prompt_id));
  const worse = diff.worseningGaps.filter((g) => !covered.has(g.prompt_id));
  return {
    takes: [...taken].map(([rival, list]) => ({ rival, gaps: list, engineLosses: list.reduce((n, g) => n + losses(g), 0) })),
    worse: { gaps: worse, engineLosses: worse.reduce((n, g) => n + Math.max(1, shifts.get(g.prompt_id)?.newEngines.length ?? 1), 0) },
    resolved: { gaps: [...diff.resolvedGaps], engineLosses: diff.resolvedGaps.reduce((n, g) => n + losses(g), 0) },
  };
}

export interface RunObservations {
  quality: DataQuality;
  /** Metrics first, then engines; keys unique. */
  figures: readonly FigureInput[];
  /** null on a first digest. */
  gapNews: GapNews | null;
  /** The state the last judged run left (null: none yet). */
  state: VerdictState | null;
  thresholds?: Thresholds | undefined;
  /** The smallest gap news called, in prompts or gaps (a channel's min-change). */
  minCount?: number | undefined;
  /** Runs the gap news spans: 1, plus the data-quality runs since the last judged one. */
  span?: number | undefined;
}

export interface Verdict {
  quality: DataQuality;
  /** By figure key; empty for a data-quality run. */
  figures: ReadonlyMap<string, FigureCall>;
  /** By rival (as in `GapNews.takes`). */
  takes: ReadonlyMap<string, ChurnCall>;
  worse: ChurnCall | null;
  resolved: ChurnCall | null;
  /** The state to store for the next run (unchanged after a data-quality run). */
  next: VerdictState;
}

const EMPTY_STATE: VerdictState = { figures: {}, churn: {} };

function churnOf(state: VerdictState | null, kind: ChurnKind) {
  const stored = state !== null && Object.hasOwn(state.churn, kind) ? state.churn[kind] : undefined;
  return usualChurn(stored);
}

/** Judges every figure and every kind of gap news of the run; gives the state to carry on. */
export function judgeRun(observations: RunObservations): Verdict {
  const { quality, state } = observations;
  const thresholds = observations.thresholds ?? THRESHOLDS;
  if (!judgeable(quality))
    return { quality, figures: new Map(), takes: new Map(), worse: null, resolved: null, next: state ?? EMPTY_STATE };
  const figures = new Map<string, FigureCall>();
  for (const input of observations.figures.slice(0, VERDICT_MAX_FIGURES)) {
    if (figures.has(input.key)) continue;
    const stored = state !== null && Object.hasOwn(state.figures, input.key) ? state.figures[input.key] : undefined;
    figures.set(input.key, judgeFigure(input, stored, thresholds));
  }
  // Figures absent this run keep their state (an engine missing once is not forgotten), within the bound.
  const kept = Object.entries(state?.figures ?? {}).filter(([key]) => !figures.has(key));
  const nextFigures = Object.fromEntries(
    [...[...figures].map(([key, call]) => [key, call.next] as const), ...kept].slice(0, VERDICT_MAX_FIGURES),
  );
  const news = observations.gapNews;
  if (news === null)
    return { quality, figures, takes: new Map(), worse: null, resolved: null, next: { figures: nextFigures, churn: state?.churn ?? {} } };

  const minCount = observations.minCount ?? 0;
  const span = observations.span ?? 1;
  const usualTaken = churnOf(state, 'taken');
  const judge = (amount: number, kind: ChurnKind, gaps: number) =>
    judgeChurn(amount, kind === 'taken' ? usualTaken : churnOf(state, kind), thresholds.zCount, gaps >= minCount, span);
  const takes = new Map(news.takes.map((t) => [t.rival, judge(t.engineLosses, 'taken', t.gaps.length)]));
  const worse = judge(news.worse.engineLosses, 'worse', news.worse.gaps.length);
  const resolved = judge(news.resolved.engineLosses, 'resolved', news.resolved.gaps.length);
  // A called amount is news, not the usual churn: only what was not called is learned.
  const steadyTaken = news.takes.reduce((n, t) => n + (takes.get(t.rival)?.called ? 0 : t.engineLosses), 0);
  const churn = {
    ...state?.churn,
    taken: learnChurn(usualTaken, steadyTaken),
    worse: worse.called ? churnOf(state, 'worse') : learnChurn(churnOf(state, 'worse'), worse.amount),
    resolved: resolved.called ? churnOf(state, 'resolved') : learnChurn(churnOf(state, 'resolved'), resolved.amount),
  };
  return { quality, figures, takes, worse, resolved, next: { figures: nextFigures, churn } };
}
