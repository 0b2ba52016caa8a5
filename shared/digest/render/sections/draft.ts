/**
 * The draft.ready notice (posted in the thread of the project's latest digest when there is one). The
 * event carries ids and a version only (spec §6), so the title is the project's name and the version;
 * "Open draft" only when the dashboard template names {asset_id} (else it would open some other page).
 */
import type { KnownBlock } from '@slack/web-api';
import type { Project } from '../../../read-api-types';
import { SLACK_LIMITS, truncateText } from '../../../slack-text';
import { fillUrlTemplate, mrkdwnLink } from '../../links';
import { context, linkButton, section, type BlockKitMessage } from '../blocks';
import { formatScalar, inline, LEN, projectName, shortId, slackDate } from '../format';

export interface DraftReadyInput {
  project: Project | null;
  projectId: string;
  assetId: string;
  version: unknown;
  createdAt: string;
  /** Dashboard URL template: an "Open draft" button when it names {asset_id}. */
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

/** The draft's own page: only when the filled template still holds the asset id (a placeholder the event lacks cuts it off). */
function draftUrl(template: string | undefined, projectId: string, assetId: string): string | null {
  if (template === undefined || !template.includes('{asset_id}') || assetId.length === 0) return null;
  const url = fillUrlTemplate(template, { project_id: projectId, asset_id: assetId });
  try {
    return url !== null && url.includes(encodeURIComponent(assetId)) ? url : null;
  } catch {
    return null; // a lone surrogate: encodeURIComponent throws, the link is not worth it
  }
}

export function renderDraftReady(input: DraftReadyInput): BlockKitMessage {
  const name = projectName(input.project?.name ?? null, input.projectId);
  const asset = inline(input.assetId, LEN.id) || '—';
  const version = formatUnknown(input.version);
  const versionText = version === '—' ? '' : ` — version ${version}`;
  const url = draftUrl(input.dashboardUrlTemplate, input.projectId, input.assetId);
  const projectUrl = fillUrlTemplate(input.dashboardUrlTemplate, { project_id: input.projectId });
  const blocks: KnownBlock[] = [
    section(`:memo: *New draft for ${mrkdwnLink(projectUrl, name)}*${versionText}`),
    context(`Asset ${shortId(input.assetId)} · ${slackDate(input.createdAt)}`),
  ];
  if (url !== null) blocks.push(linkButton('Open draft', url, 'open_draft'));
  return { text: truncateText(`New draft for ${name}${versionText} (asset ${asset})`, SLACK_LIMITS.fallbackText), blocks };
}
