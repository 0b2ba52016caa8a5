/** One line of figures (the position now), and one naming what moved only within its normal variation. */
import type { ContextBlock } from '@slack/web-api';
import { context } from '../blocks';
import { inline, LEN } from '../format';
import type { DigestModel } from '../model';
import { usualChurnText, withinNoise } from '../significance';
import { valueText } from '../units';
import { openGapsText, topRivalText } from './headline';

/** Metrics on the figures line (the first numeric ones in API order). */
const FIGURES_SHOWN = 3;
/** Figures named on the normal-variation line; the rest are counted. */
const NOISE_SHOWN = 4;

/** `Visibility score 50.5 % · Average position 3.6 · 12 open gaps · top rival TrailForge (5 prompts)`. */
export function figuresText(model: DigestModel): string {
  const metrics = model.metrics
    .filter((m) => m.value !== null && !/\bgaps?\b/i.test(m.label.replace(/_/g, ' ')))
    .slice(0, FIGURES_SHOWN)
    .map((m) => `${inline(m.label, LEN.label) || '—'} ${valueText(m.reading, m.value, m.raw)}`);
  const rival = topRivalText(model);
  return [...metrics, openGapsText(model), ...(rival !== null ? [rival] : [])].join(' · ');
}

export function figuresLine(model: DigestModel): ContextBlock[] {
  return [context(figuresText(model))];
}

/**
 * `Small moves within normal variation: Gemini, ChatGPT · usual gap churn: 1 gap resolved` — said once, in
 * plain words; each figure's band is in the thread's engines reply.
 */
export function noiseLine(model: DigestModel): ContextBlock[] {
  const moves = withinNoise(model).map((m) => m.name);
  const churn = usualChurnText(model);
  const named = moves.slice(0, NOISE_SHOWN).join(', ') + (moves.length > NOISE_SHOWN ? ` and ${moves.length - NOISE_SHOWN} more` : '');
  const parts = [
    moves.length > 0 ? `Small moves within normal variation: ${named}` : '',
    churn !== null ? `usual gap churn: ${churn}` : '',
  ];
  const text = parts.filter((p) => p.length > 0).join(' · ');
  return text.length > 0 ? [context(`_${text.charAt(0).toUpperCase()}${text.slice(1)}_`)] : [];
}
