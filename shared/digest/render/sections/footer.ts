/** The run's context line, who last changed the channel's settings, and the buttons. */
import type { ActionsBlock, KnownBlock } from '@slack/web-api';
import { ACTION_IDS } from '../../../slack-app/interactions';
import { actionButton, context, linkButton } from '../blocks';
import { inline, LEN, plural, shortId, slackDate } from '../format';
import type { ChannelContext, DigestModel } from '../model';

export function footerBlocks(model: DigestModel): KnownBlock[] {
  const { run } = model.input;
  const parts = [`Run ${shortId(run.runId)}`];
  const status = run.status?.trim();
  if (status !== undefined && status.length > 0 && status.toLowerCase() !== 'completed')
    parts.push(`status *${inline(status, LEN.status)}*`);
  if (run.answers !== null && Number.isFinite(run.answers))
    parts.push(run.answers === 0 ? 'no answers in this run' : plural(run.answers, 'answer', 'answers'));
  parts.push(slackDate(run.createdAt));
  const blocks: KnownBlock[] = [context(parts.join(' · '))];
  const channel = model.input.options?.channel;
  const note = channel?.change ? settingsNote(channel.change) : null;
  if (note !== null) blocks.push(context(note));
  const actions = actionsBlock(model, channel);
  if (actions !== null) blocks.push(actions);
  return blocks;
}

/** "Open dashboard" when a template is set; "Mute 7 days" and "Only changes" when the channel and its signed value are known. */
function actionsBlock(model: DigestModel, channel: ChannelContext | undefined): ActionsBlock | null {
  const link = model.projectUrl === null ? [] : linkButton('Open dashboard', model.projectUrl, ACTION_IDS.openDashboard).elements;
  if (channel?.actionValue === undefined) return link.length > 0 ? { type: 'actions', elements: link } : null;
  const value = channel.actionValue;
  const elements = [...link, actionButton('Mute 7 days', ACTION_IDS.mute7d, value)];
  if (channel.mode !== 'changes') elements.push(actionButton('Only changes', ACTION_IDS.onlyChanges, value));
  return { type: 'actions', elements };
}

/** The store's change summaries as the note says them. */
const NOTE_WORDING: Readonly<Record<string, string>> = { 'mode changes': 'Only changes', 'mode full': 'Full digests' };

/** A Slack user id only: anything else would be markup in the note. */
const USER_ID = /^[UW][A-Z0-9]{2,20}$/;

/** e.g. "Mode changes set by <@U123> on <date>" — small, so everyone sees why the digest looks this way. */
function settingsNote(change: NonNullable<ChannelContext['change']>): string | null {
  if (!USER_ID.test(change.by) || !Number.isFinite(change.atMs)) return null;
  const what = inline(NOTE_WORDING[change.what] ?? change.what, LEN.label);
  const iso = new Date(change.atMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const when = `<!date^${Math.floor(change.atMs / 1000)}^{date_short_pretty}|${iso}>`;
  return `${what.charAt(0).toUpperCase()}${what.slice(1)} set by <@${change.by}> on ${when}`;
}
