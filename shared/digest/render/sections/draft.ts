/** The draft.ready notice (posted in the thread of the project's latest digest when there is one). */
import type { KnownBlock } from '@slack/web-api';
import type { Project } from '../../../read-api-types';
import { SLACK_LIMITS, truncateText } from '../../../slack-text';
import { fillUrlTemplate, mrkdwnLink } from '../../links';
import { context, linkButton, mrkdwn, section, type BlockKitMessage } from '../blocks';
import { formatEventTime, formatScalar, inline, LEN, projectName } from '../format';

export interface DraftReadyInput {
  project: Project | null;
  projectId: string;
  assetId: string;
  version: unknown;
  createdAt: string;
  /** Dashboard URL template: an "Open draft" button ({asset_id}) when set. */
  dashboardUrlTemplate?: string | undefined;
}

/** A value of a type the spec does not fix (draft version): scalars as usual, objects as short JSON. */
function formatUnknown(value: unknown): string {
  if (value === undefined) return '—';
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return formatScalar(value, LEN.version);
  if (typeof value === 'bigint') return value.toString();
  try {
    const json = JSON.stringify(value);
    return typeof json === 'string' ? inline(json, LEN.version) : '—';
  } catch {
    return '—';
  }
}

export function renderDraftReady(input: DraftReadyInput): BlockKitMessage {
  const name = projectName(input.project?.name ?? null, input.projectId);
  const asset = inline(input.assetId, LEN.id) || '—';
  const version = formatUnknown(input.version);
  const ids = { project_id: input.projectId, asset_id: input.assetId };
  const draftUrl = fillUrlTemplate(input.dashboardUrlTemplate, ids);
  const projectUrl = fillUrlTemplate(input.dashboardUrlTemplate, { project_id: input.projectId });
  const blocks: KnownBlock[] = [
    section(`:memo: *Draft ready* for *${mrkdwnLink(projectUrl, name)}*`),
    { type: 'section', fields: [mrkdwn(`*Asset*\n${asset}`), mrkdwn(`*Version*\n${version}`)] },
    context(`Project ${inline(input.projectId, LEN.id)} · ${formatEventTime(input.createdAt)}`),
  ];
  if (draftUrl !== null) blocks.push(linkButton('Open draft', draftUrl, 'open_draft'));
  return { text: truncateText(`Draft ready for ${name}: asset ${asset}, version ${version}`, SLACK_LIMITS.fallbackText), blocks };
}
