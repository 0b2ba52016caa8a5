import { describe, expect, it } from 'vitest';
import { chooseReasoningResult, orderReasonsByImpact } from '../../shared/digest/reasoning-choice';

const gap = { platforms_losing: ['Gemini', 'Claude'] };

describe('chooseReasoningResult', () => {
  it('prefers a result with a card on an engine where the gap is lost (names compared trimmed, any case)', () => {
    const results = [
      { id: 'r1', reasoning_card_id: 'c1', engine: 'ChatGPT' },
      { id: 'r2', reasoning_card_id: 'c2', engine: ' claude ' },
      { id: 'r3', reasoning_card_id: 'c3', engine: 'Gemini' },
    ];
    expect(chooseReasoningResult(results, gap)?.id).toBe('r2');
  });

  it('skips results without a card, even on a losing engine', () => {
    const results = [
      { id: 'r1', reasoning_card_id: null, engine: 'Gemini' },
      { id: 'r2', reasoning_card_id: 'c2', engine: 'ChatGPT' },
    ];
    expect(chooseReasoningResult(results, gap)?.id).toBe('r2');
  });

  it('falls back to the first result with a card when none names a losing engine; null when none has a card', () => {
    expect(
      chooseReasoningResult(
        [
          { id: 'r0', reasoning_card_id: null },
          { id: 'r1', reasoning_card_id: 'c1' },
          { id: 'r2', reasoning_card_id: 'c2', engine: null },
        ],
        gap,
      )?.id,
    ).toBe('r1');
    expect(chooseReasoningResult([{ id: 'r0', reasoning_card_id: null, engine: 'Gemini' }], gap)).toBeNull();
    expect(chooseReasoningResult([], gap)).toBeNull();
  });
});

describe('orderReasonsByImpact', () => {
  const reason = (impact: string, detail: string) => ({ impact, category: 'c', detail });

  it('most impact first, unknown words last, card order kept among equals', () => {
    const ordered = orderReasonsByImpact([
      reason('low', 'l1'),
      reason('whatever', 'u1'),
      reason('High', 'h1'),
      reason('medium', 'm1'),
      reason('Critical', 'c1'),
      reason('high', 'h2'),
      reason('minor', 'l2'),
      reason('highest', 'c2'),
    ]);
    expect(ordered.map((r) => r.detail)).toEqual(['c1', 'c2', 'h1', 'h2', 'm1', 'l1', 'l2', 'u1']);
  });

  it('does not change the card it was given', () => {
    const reasons = [reason('low', 'a'), reason('high', 'b')];
    orderReasonsByImpact(reasons);
    expect(reasons.map((r) => r.detail)).toEqual(['a', 'b']);
  });
});
