/**
 * Which result's reasoning card explains a gap best, and in what order its reasons are read.
 * Pure: run-completed.ts calls these with what the read API returned.
 */
import type { Gap, Reason } from '../read-api-types';

/** A result as far as the choice needs it; `engine` when the result names one (any of its name fields). */
export interface ReasoningCandidate {
  id: string;
  reasoning_card_id: string | null;
  engine?: string | null | undefined;
}

function sameEngine(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/**
 * The result to read the card of: one with a card on an engine where the gap is lost, else the first
 * with a card (API order); null when no result has a card.
 */
export function chooseReasoningResult<T extends ReasoningCandidate>(results: readonly T[], gap: Pick<Gap, 'platforms_losing'>): T | null {
  const withCard = results.filter((r) => r.reasoning_card_id !== null);
  const onLosingEngine = withCard.find((r) => {
    const engine = r.engine;
    return typeof engine === 'string' && gap.platforms_losing.some((p) => sameEngine(p, engine));
  });
  return onLosingEngine ?? withCard[0] ?? null;
}

const IMPACT_RANK: ReadonlyArray<readonly [RegExp, number]> = [
  [/^(critical|very high|highest|major)/, 0],
  [/^high/, 1],
  [/^(medium|moderate|mid)/, 2],
  [/^(low|minor)/, 3],
];

/** 0 (most) … 4 (unknown impact words). */
function impactRank(impact: string): number {
  const text = impact.trim().toLowerCase();
  return IMPACT_RANK.find(([pattern]) => pattern.test(text))?.[1] ?? 4;
}

/** Reasons, highest impact first; the card's order is kept among equals. */
export function orderReasonsByImpact(reasons: readonly Reason[]): Reason[] {
  return reasons
    .map((reason, i) => ({ reason, i, rank: impactRank(reason.impact) }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map(({ reason }) => reason);
}
