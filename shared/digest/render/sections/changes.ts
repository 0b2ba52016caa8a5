/** The main message's changes: up to three significant ones, each with its top reason, biggest first. */
import type { SectionBlock } from '@slack/web-api';
import { section } from '../blocks';
import type { DigestModel } from '../model';
import { assess, topReason, type ChangeItem } from '../significance';

/** Changes shown in the main message; the thread lists them all. */
export const MAIN_CHANGES = 3;

/** `• change — _why_` (the reasoning card's top reason, or the engines behind the lead metric). */
export function changeLine(model: DigestModel, item: ChangeItem): string {
  const why = topReason(model, item) ?? item.cause ?? null;
  return `• ${item.line}${why !== null ? ` · _${why}_` : ''}`;
}

export function changesSection(model: DigestModel): SectionBlock[] {
  const { changes } = assess(model);
  if (changes.length === 0) return [];
  const lines = changes.slice(0, MAIN_CHANGES).map((item) => changeLine(model, item));
  const more = changes.length - MAIN_CHANGES;
  return [section(`${lines.join('\n')}${more > 0 ? `\n_+${more} more in the thread_` : ''}`)];
}
