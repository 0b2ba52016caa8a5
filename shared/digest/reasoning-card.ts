import type { ReadApi } from '../ports';
import type { Gap, ReasoningCard } from '../read-api-types';
import { chooseReasoningResult } from './reasoning-choice';

/**
 * The reasoning card behind a gap: the results of its prompt, the one that explains it best (a result
 * with a card on an engine where the gap is lost, else the first with a card), and that result's card,
 * carrying the engine it was taken on. Null when no result of the prompt has a card.
 */
export async function findReasoningCard(
  client: Pick<ReadApi, 'getResults' | 'getReasoning'>,
  projectId: string,
  gap: Pick<Gap, 'prompt_id' | 'platforms_losing'>,
): Promise<ReasoningCard | null> {
  const probes = await client.getResults(projectId, gap.prompt_id);
  const chosen = chooseReasoningResult(probes, gap);
  if (chosen === null) return null;
  const card = await client.getReasoning(projectId, chosen.id);
  return { ...card, engine: chosen.engine ?? card.engine ?? null };
}
