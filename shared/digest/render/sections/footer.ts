/** The run's context line and the "Open dashboard" button. */
import type { KnownBlock } from '@slack/web-api';
import { context, linkButton } from '../blocks';
import { formatEventTime, inline, LEN, plural } from '../format';
import type { DigestModel } from '../model';

export function footerBlocks(model: DigestModel): KnownBlock[] {
  const { run } = model.input;
  const parts = [`Run ${inline(run.runId, LEN.id) || '—'}`];
  const status = run.status?.trim();
  if (status !== undefined && status.length > 0 && status.toLowerCase() !== 'completed')
    parts.push(`status *${inline(status, LEN.status)}*`);
  if (run.answers !== null && Number.isFinite(run.answers))
    parts.push(run.answers === 0 ? 'no answers in this run' : plural(run.answers, 'answer', 'answers'));
  parts.push(formatEventTime(run.createdAt));
  const blocks: KnownBlock[] = [context(parts.join(' · '))];
  if (model.projectUrl !== null) blocks.push(linkButton('Open dashboard', model.projectUrl, 'open_dashboard'));
  return blocks;
}
