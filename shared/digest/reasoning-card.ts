import type { ReadApi } from '../ports';
import type { ReasoningCard } from '../read-api-types';

/**
 * The reasoning card behind a question: the results for `promptId`, the first probe whose
 * reasoning_card_id is not null, and that probe's card. Null when no result of the prompt has a card.
 */
export async function findReasoningCard(
  client: Pick<ReadApi, 'getResults' | 'getReasoning'>,
  projectId: string,
  promptId: string,
): Promise<ReasoningCard | null> {
  const probes = await client.getResults(projectId, promptId);
  const withCard = probes.find((probe) => probe.reasoning_card_id !== null);
  if (withCard === undefined) return null;
  return client.getReasoning(projectId, withCard.id);
}
