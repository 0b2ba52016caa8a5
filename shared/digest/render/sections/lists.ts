/** The standing lists of the main message (engines, alerts, worst gaps); whatever does not fit goes to the thread. */
import type { SectionBlock } from '@slack/web-api';
import { packLines } from '../blocks';
import { formatNumber, plural } from '../format';
import { gapCountText, type DigestModel } from '../model';
import { gapLine } from './gap-line';
import { alertLine, engineLine } from './rows';

export interface MainList {
  blocks: SectionBlock[];
  /** Lines left for the thread. */
  overflow: string[];
}

function mainList(head: string, lines: readonly string[], empty: string, maxLines: number, maxChars: number, noun: string): MainList {
  if (lines.length === 0) return { blocks: packLines([head, empty], { maxBlocks: 1, maxChars }).blocks, overflow: [] };
  const packed = packLines([head, ...lines.slice(0, maxLines)], { maxBlocks: 2, maxChars });
  const shown = Math.max(0, packed.included - 1);
  const overflow = lines.slice(shown);
  const tail =
    overflow.length > 0
      ? packLines([`+${plural(overflow.length, `more ${noun}`, `more ${noun}s`)} in the thread`], { maxBlocks: 1, maxChars: 200 }).blocks
      : [];
  return { blocks: [...packed.blocks, ...tail], overflow };
}

export function enginesList(model: DigestModel): MainList {
  const lines = model.input.overview.engines.map((row) => engineLine(model, row));
  return mainList('*AI engines*', lines, 'No per-engine rows in this run.', 8, 1_400, 'engine');
}

export function alertsList(model: DigestModel): MainList {
  const lines = model.alerts.map(alertLine);
  const head = `*Alerts*${lines.length > 0 ? ` (${formatNumber(lines.length)}, most severe first)` : ''}`;
  return mainList(head, lines, 'No alerts.', 5, 2_000, 'alert');
}

export function worstGapsList(model: DigestModel, topGaps: number): MainList {
  const unreadable = model.unreadable > 0 ? ` · ${plural(model.unreadable, 'gap entry', 'gap entries')} could not be read` : '';
  const head = `*Worst gaps* (${gapCountText(model)}${model.truncated ? `, the service's top ${formatNumber(model.input.pageSize ?? 0)} read` : ''}${unreadable})`;
  const lines = model.gaps.map((gap, i) => gapLine(model, gap, `${i + 1}. `));
  const empty =
    model.emptyReason !== null ? 'No gaps to report for this run.' : "No gaps — the project isn't losing any tracked question in this run.";
  return mainList(head, lines, empty, topGaps, 2_400, 'gap');
}
