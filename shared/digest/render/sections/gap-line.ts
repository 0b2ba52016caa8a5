/** One gap as a line: reference, question (linked to its prompt), engines, competitor, trend. */
import type { Gap, Scalar } from '../../../read-api-types';
import { gapTrend, TREND_MARKS } from '../../gap-trend';
import { mrkdwnLink } from '../../links';
import type { SnapshotGap } from '../../snapshot';
import { inline, LEN } from '../format';
import type { DigestModel } from '../model';

const ENGINES_SHOWN = 5;

function refText(ref: Scalar): string {
  if (ref === null) return '';
  if (typeof ref === 'number') return Number.isFinite(ref) ? String(ref) : '';
  if (typeof ref === 'boolean') return String(ref);
  return inline(ref.replace(/^\s*#/, ''), LEN.ref);
}

/** "*#12* question" (question linked to its prompt when a template is set). */
export function gapTitle(model: DigestModel, gap: SnapshotGap, maxText: number = LEN.promptText): string {
  const ref = refText(gap.prompt_ref);
  const text = inline(gap.prompt_text, maxText) || '(no question text)';
  return [ref.length > 0 ? `*#${ref}*` : '', mrkdwnLink(model.promptUrl(gap.prompt_id), text)].filter((p) => p.length > 0).join(' ');
}

export function enginesText(engines: readonly string[]): string {
  const shown = engines.map((e) => inline(e, LEN.platform)).filter((e) => e.length > 0);
  const hidden = shown.length - ENGINES_SHOWN;
  return shown.slice(0, ENGINES_SHOWN).join(', ') + (hidden > 0 ? ` +${hidden} more` : '');
}

/** `prefix #ref question — losing on A, B to Rival · ↘ worse`. */
export function gapLine(model: DigestModel, gap: Gap, prefix: string): string {
  const engines = enginesText(gap.platforms_losing);
  const competitor = inline(gap.top_competitor, LEN.competitor);
  const losing = [engines.length > 0 ? `on ${engines}` : '', competitor.length > 0 ? `to ${competitor}` : '']
    .filter((p) => p.length > 0)
    .join(' ');
  const trend = gapTrend(gap);
  return `${prefix}${gapTitle(model, gap)}${losing.length > 0 ? ` — losing ${losing}` : ''}${trend !== null ? ` · ${TREND_MARKS[trend]}` : ''}`;
}
