/** One gap as text: reference and question (linked to its prompt when the template can), engines, winner, trend. */
import type { Gap, Scalar } from '../../../read-api-types';
import { gapTrend, TREND_MARKS } from '../../gap-trend';
import { mrkdwnLink } from '../../links';
import type { SnapshotGap } from '../../snapshot';
import { inline, LEN } from '../format';
import { engineTotal, type DigestModel } from '../model';

const ENGINES_SHOWN = 5;

function refText(ref: Scalar): string {
  if (ref === null) return '';
  if (typeof ref === 'number') return Number.isFinite(ref) ? String(ref) : '';
  if (typeof ref === 'boolean') return String(ref);
  return inline(ref.replace(/^\s*#/, ''), LEN.ref);
}

/** "*#12* question" (question linked to its prompt when the template names {prompt_id}). */
export function gapTitle(model: DigestModel, gap: SnapshotGap, maxText: number = LEN.promptText): string {
  const ref = refText(gap.prompt_ref);
  const text = inline(gap.prompt_text, maxText) || '(no question text)';
  return [ref.length > 0 ? `*#${ref}*` : '', mrkdwnLink(model.promptUrl(gap.prompt_id), text)].filter((p) => p.length > 0).join(' ');
}

/** A short reference to a gap inside a sentence ("#12 question", the question cut to `maxText`). */
export function gapRef(model: DigestModel, gap: SnapshotGap, maxText: number): string {
  return gapTitle(model, gap, maxText);
}

export function enginesText(engines: readonly string[]): string {
  const shown = engines.map((e) => inline(e, LEN.platform)).filter((e) => e.length > 0);
  const hidden = shown.length - ENGINES_SHOWN;
  return shown.slice(0, ENGINES_SHOWN).join(', ') + (hidden > 0 ? ` +${hidden} more` : '');
}

/** Where a gap is lost: "all 5 engines" when it is every engine measured, else the engines' names. */
export function enginesWhere(model: DigestModel, engines: readonly string[]): string {
  const total = engineTotal(model);
  return total > 1 && new Set(engines.map((e) => e.trim().toLowerCase())).size >= total ? `all ${total} engines` : enginesText(engines);
}

/** The service's trend of the gap as a short mark (" · ↘ worse"), or '' (also for "stable": nothing to say). */
export function trendMark(gap: Gap): string {
  const trend = gapTrend(gap);
  return trend !== null && trend !== 'stable' ? ` · ${TREND_MARKS[trend]}` : '';
}
