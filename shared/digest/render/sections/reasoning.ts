/** Reasoning cards of the top gaps, one thread reply each: which engine, reasons by impact. */
import type { Reason } from '../../../read-api-types';
import { orderReasonsByImpact } from '../../reasoning-choice';
import { packLines, type BlockKitMessage, MESSAGE_TEXT_BUDGET } from '../blocks';
import { inline, LEN, plural } from '../format';
import type { DigestModel } from '../model';
import { gapTitle } from './gap-line';
import { SLACK_LIMITS, truncateText } from '../../../slack-text';

function part(text: string, max: number): string {
  return inline(text, max) || '—';
}

export function reasonLine(reason: Reason): string {
  return `• *${part(reason.impact, LEN.impact)}* · ${part(reason.category, LEN.category)} · ${part(reason.detail, LEN.detail)}`;
}

export function reasoningReplies(model: DigestModel, count: number): BlockKitMessage[] {
  return model.gaps.slice(0, count).map((gap, i) => {
    const card = model.input.reasoning.get(gap.prompt_id) ?? null;
    const engine =
      card?.engine !== undefined && card.engine !== null && inline(card.engine, LEN.platform).length > 0
        ? ` on ${inline(card.engine, LEN.platform)}`
        : '';
    const reasons = card === null ? [] : orderReasonsByImpact(card.reasons);
    const head = `*Why gap ${i + 1} is lost${engine}:* ${gapTitle(model, gap, 200)}${reasons.length > 0 ? ` (${plural(reasons.length, 'reason', 'reasons')}, highest impact first)` : ''}`;
    const lines =
      card === null
        ? ['No reasoning card for this gap.']
        : reasons.length === 0
          ? ['The reasoning card lists no reasons.']
          : reasons.map(reasonLine);
    const packed = packLines([head, ...lines], { maxBlocks: SLACK_LIMITS.blocksPerMessage - 1, maxChars: MESSAGE_TEXT_BUDGET - 200 });
    const hidden = lines.length + 1 - packed.included;
    const blocks =
      hidden > 0
        ? [
            ...packed.blocks,
            ...packLines([`+${plural(hidden, 'more reason', 'more reasons')} (too long for one message)`], { maxBlocks: 1, maxChars: 200 })
              .blocks,
          ]
        : packed.blocks;
    return { text: truncateText(`Reasoning for gap ${i + 1} of ${model.name}`, SLACK_LIMITS.fallbackText), blocks };
  });
}
