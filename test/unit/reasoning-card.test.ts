import { describe, expect, it } from 'vitest';
import { findReasoningCard } from '../../shared/digest/reasoning-card';
import type { Probe, ReasoningCard } from '../../shared/read-api-types';

/** The two read-API calls the look-up makes, answering from fixed results; records which card was read. */
function readApiWith(probes: Probe[]) {
  const read: string[] = [];
  return {
    read,
    api: {
      getResults: () => Promise.resolve(probes),
      getReasoning: (_project: string, resultId: string): Promise<ReasoningCard> => {
        read.push(resultId);
        return Promise.resolve({ reasons: [{ impact: 'high', category: 'c', detail: `from ${resultId}` }] });
      },
    },
  };
}

describe('findReasoningCard', () => {
  it('prefers a result with a card on an engine where the gap is lost, and names that engine', async () => {
    const { api, read } = readApiWith([
      { id: 'r1', reasoning_card_id: 'c1', engine: 'ChatGPT' },
      { id: 'r2', reasoning_card_id: null, engine: 'Gemini' },
      { id: 'r3', reasoning_card_id: 'c3', engine: 'gemini' },
    ]);
    const card = await findReasoningCard(api, 'p', { prompt_id: 'q', platforms_losing: ['Gemini'] });
    expect(read).toEqual(['r3']);
    expect(card?.engine).toBe('gemini');
  });

  it('falls back to the first result with a card when none is on a losing engine', async () => {
    const { api, read } = readApiWith([
      { id: 'r1', reasoning_card_id: null, engine: 'Gemini' },
      { id: 'r2', reasoning_card_id: 'c2', engine: 'ChatGPT' },
    ]);
    const card = await findReasoningCard(api, 'p', { prompt_id: 'q', platforms_losing: ['Gemini'] });
    expect(read).toEqual(['r2']);
    expect(card?.engine).toBe('ChatGPT');
  });

  it('reads no card when no result has one', async () => {
    const { api, read } = readApiWith([{ id: 'r1', reasoning_card_id: null }]);
    expect(await findReasoningCard(api, 'p', { prompt_id: 'q', platforms_losing: ['Gemini'] })).toBeNull();
    expect(read).toEqual([]);
  });
});
