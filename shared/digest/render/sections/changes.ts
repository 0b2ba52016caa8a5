/** "What changed": new and worsening gaps first (top 3), and what left the list, before anything else. */
import type { SectionBlock } from '@slack/web-api';
import { section } from '../blocks';
import { formatNumber, plural } from '../format';
import type { DigestModel } from '../model';
import { gapLine } from './gap-line';

const SHOWN = 3;

function goneLine(model: DigestModel): string | null {
  const { resolvedGaps, leftTopGaps } = model.diff;
  const parts: string[] = [];
  if (resolvedGaps.length > 0) parts.push(`${formatNumber(resolvedGaps.length)} resolved`);
  if (leftTopGaps.length > 0)
    parts.push(
      `${formatNumber(leftTopGaps.length)} left the top ${formatNumber(model.input.pageSize ?? model.gaps.length)} (still open or unknown, not resolved)`,
    );
  return parts.length > 0 ? `${parts.join(' · ')} — list in the thread` : null;
}

export function changesSection(model: DigestModel): SectionBlock[] {
  const { diff } = model;
  if (diff.firstDigest) return [section('*What changed*\nFirst digest for this project: changes are shown from the next run on.')];
  const changed = [...diff.newGaps.map((g) => ({ g, tag: 'New' })), ...diff.worseningGaps.map((g) => ({ g, tag: 'Worse' }))];
  const lines = changed.slice(0, SHOWN).map(({ g, tag }) => gapLine(model, g, `• _${tag}:_ `));
  if (changed.length > SHOWN) lines.push(`+${plural(changed.length - SHOWN, 'more changed gap', 'more changed gaps')} in the thread`);
  const gone = goneLine(model);
  if (gone !== null) lines.push(gone);
  if (lines.length === 0) lines.push('No new, worsening or resolved gaps.');
  const newHead = model.input.previous?.gapsTruncated === true ? 'new in the top list' : 'new';
  return [
    section(
      `*What changed* (${formatNumber(diff.newGaps.length)} ${newHead} · ${formatNumber(diff.worseningGaps.length)} worse)\n${lines.join('\n')}`,
    ),
  ];
}
