/** Where the project stands (a baseline digest, and `status`): who takes its prompts and its worst gaps. */
import type { SectionBlock } from '@slack/web-api';
import type { Gap } from '../../../read-api-types';
import { section } from '../blocks';
import { inline, LEN, plural } from '../format';
import { worstGaps, type DigestModel } from '../model';
import { enginesWhere, gapTitle } from './gap-line';

/** Rivals named on the position's rival line. */
const RIVALS_SHOWN = 3;
/** Worst gaps named (one line each). */
const GAPS_SHOWN = 3;

/** `Who takes your prompts: AmpRoute 18 · Kilowatt Hub 11 · PlugPath 11`, or null without rivals. */
export function rivalsLine(model: DigestModel): string | null {
  const shown = model.rivals.slice(0, RIVALS_SHOWN).map((r) => `${inline(r.name, LEN.competitor)} ${r.prompts}`);
  if (shown.length === 0) return null;
  const more = model.rivals.length > RIVALS_SHOWN ? ` · +${model.rivals.length - RIVALS_SHOWN} more` : '';
  return `*Who takes your prompts:* ${shown.join(' · ')}${more}`;
}

/** `1. #3 question — all 5 engines, to TrailForge`. */
function worstGapLine(model: DigestModel, gap: Gap, index: number): string {
  const rival = inline(gap.top_competitor, LEN.competitor);
  const engines = enginesWhere(model, gap.platforms_losing);
  const where = [engines.length > 0 ? `on ${engines}` : '', rival.length > 0 ? `to ${rival}` : ''].filter((p) => p.length > 0).join(' ');
  return `${index + 1}. ${gapTitle(model, gap, 100)}${where.length > 0 ? ` — ${where}` : ''}`;
}

export function positionSection(model: DigestModel, gapsShown: number = GAPS_SHOWN): SectionBlock[] {
  const gaps = worstGaps(model)
    .slice(0, Math.min(gapsShown, GAPS_SHOWN))
    .map((gap, i) => worstGapLine(model, gap, i));
  const rivals = rivalsLine(model);
  const lines = [
    ...(rivals !== null ? [rivals] : []),
    ...(gaps.length > 0
      ? [
          `*Worst gaps* (by engines lost, of ${plural(model.gaps.length, 'gap', 'gaps')} read${model.truncated ? ', more behind them' : ''}):`,
          ...gaps,
        ]
      : ['No open gaps in this run.']),
  ];
  return [section(lines.join('\n'))];
}

/** The baseline's note: what the next digests will report. */
export function baselineNote(): string {
  return '_First digest of this project: the position above is the baseline; from the next run on, only changes beyond normal variation are reported._';
}
