/**
 * The run's context line, who last changed the channel's settings, and the buttons. The buttons show
 * the channel's state and toggle it ("Mute 7 days" ↔ "Unmute", "Only changes" ↔ "Full digests"); a
 * click re-renders them with `settingsButtons` (slack-app/actions.ts), so both agree.
 */
import type { ActionsBlock, Button, ContextBlock, KnownBlock } from '@slack/web-api';
import type { DigestMode } from '../../../contracts';
import { ACTION_IDS } from '../../../buttons/ids';
import { actionButton, context, linkButton } from '../blocks';
import { inline, LEN, plural, shortId, slackDate } from '../format';
import type { ChannelContext, DigestModel } from '../model';

/** The block ids a click looks for: the bridge's own note (replaced, never added twice) and the buttons. */
export const DIGEST_BLOCK_IDS = { settingsNote: 'bridge_settings_note', actions: 'bridge_digest_actions' } as const;

/** What the buttons show: the channel's settings for the project. */
export interface ChannelSettingsState {
  muted: boolean;
  mode: DigestMode;
}

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
  if (note !== null) blocks.push(settingsNoteBlock(note));
  const actions = actionsBlock(model, channel);
  if (actions !== null) blocks.push(actions);
  return blocks;
}

/** The bridge's note on a digest, with the id a later note replaces it by. */
export function settingsNoteBlock(text: string): ContextBlock {
  return { ...context(text), block_id: DIGEST_BLOCK_IDS.settingsNote };
}

/** Slack's confirm dialog on "Mute 7 days": a mis-tap would silence the channel for a week. Plain text: nothing to escape. */
const MUTE_CONFIRM = {
  title: { type: 'plain_text', text: 'Mute for 7 days?' },
  text: { type: 'plain_text', text: 'This channel gets no digests of this project for 7 days. Unmute on the digest ends it sooner.' },
  confirm: { type: 'plain_text', text: 'Mute 7 days' },
  deny: { type: 'plain_text', text: 'Cancel' },
} as const;

/** The two settings buttons for the channel's state, each carrying the same signed value. */
export function settingsButtons(state: ChannelSettingsState, value: string): Button[] {
  const mute = state.muted
    ? actionButton('Unmute', ACTION_IDS.unmute, value)
    : { ...actionButton('Mute 7 days', ACTION_IDS.mute7d, value), confirm: MUTE_CONFIRM };
  const mode =
    state.mode === 'changes'
      ? actionButton('Full digests', ACTION_IDS.fullDigests, value)
      : actionButton('Only changes', ACTION_IDS.onlyChanges, value);
  return [mute, mode];
}

/**
 * "Open dashboard" when a template is set; the settings buttons when the channel and its signed value
 * are known. A digest is posted only to a channel that has not muted the project, so it starts unmuted.
 */
function actionsBlock(model: DigestModel, channel: ChannelContext | undefined): ActionsBlock | null {
  const link = model.projectUrl === null ? [] : linkButton('Open dashboard', model.projectUrl, ACTION_IDS.openDashboard).elements;
  const settings = channel?.actionValue === undefined ? [] : settingsButtons({ muted: false, mode: channel.mode }, channel.actionValue);
  const elements = [...link, ...settings];
  return elements.length === 0 ? null : { type: 'actions', block_id: DIGEST_BLOCK_IDS.actions, elements };
}

/** The store's change summaries (`last_change`) as the note says them. */
function noteWording(what: string): string {
  if (what === 'mode changes') return 'Set to only changes';
  if (what === 'mode full') return 'Set to full digests';
  if (what === 'unmuted') return 'Unmuted';
  const muted = /^muted for (\S+)$/.exec(what);
  if (muted) return `Muted for ${inline(muted[1] ?? '', LEN.label)}`;
  const text = inline(what, LEN.label);
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

/** A Slack user id only: anything else would be markup in the note. */
const USER_ID = /^[UW][A-Z0-9]{2,20}$/;

/** e.g. "Set to only changes by <@U123> on <date>" — small, so everyone sees why the digest looks this way. */
function settingsNote(change: NonNullable<ChannelContext['change']>): string | null {
  if (!USER_ID.test(change.by) || !Number.isFinite(change.atMs)) return null;
  const iso = new Date(change.atMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const when = `<!date^${Math.floor(change.atMs / 1000)}^{date_short_pretty}|${iso}>`;
  return `${noteWording(change.what)} by <@${change.by}> on ${when}`;
}
