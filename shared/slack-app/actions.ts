/**
 * Buttons: "Mute 7 days" and "Only changes" on digests change the channel's settings for the project
 * and re-post the digest with a note of who changed what; "Open dashboard" is a link (nothing to do);
 * "Share in channel" on a read's ephemeral answer posts it in the channel for everyone.
 * A digest routed by the configuration (no subscription yet) gets a subscription carrying the new
 * setting, so the button works on every digest. The digest buttons are changes: the `slackAccess`
 * policy decides who and where at once (the project is in the button's value).
 */
import { QUEUE_MESSAGE_KINDS, SLACK_APP_DEFAULTS } from '../contracts';
import { SLACK_LIMITS, truncateText } from '../slack-text';
import { describeChange, recordChange, refuse } from './access';
import { answerList } from './handlers';
import type { BlockActionInteraction, ButtonAction } from './interactions';
import type { Actor, SettingsChange, Subscription, SubscriptionStore } from '../ports';
import { authorize } from './policy';
import type { CommandContext, DeferredCommand, InlineDeps, Responder, ShareDeps, SlackReply } from './ports';
import { changeAnnouncement, NOT_RECORDED_NOTE } from './replies';
import { shareAnswer } from './service';

export interface ActionDeps extends InlineDeps, ShareDeps {
  responder: Responder;
}

export type ActionResult =
  | { status: 'acknowledged' }
  | { status: 'changed'; subscription: Subscription }
  /** Shared in the channel (a list), or queued to be (status, projects). */
  | { status: 'shared' }
  /** Not allowed by the policy: the clicker was told who can. */
  | { status: 'refused' };

type ChangeAction = Extract<ButtonAction, { kind: 'mute_7d' | 'only_changes' }>;

const DAY_MS = 24 * 3600_000;

export async function handleButtonAction(interaction: BlockActionInteraction, deps: ActionDeps): Promise<ActionResult> {
  const { action } = interaction;
  if (action.kind === 'open_dashboard') return { status: 'acknowledged' };
  if (action.kind === 'share_in_channel') return shareInChannel(interaction, action, deps);
  return changeByButton(interaction, action, deps);
}

async function changeByButton(interaction: BlockActionInteraction, action: ChangeAction, deps: ActionDeps): Promise<ActionResult> {
  const { actor } = interaction;
  const request = { userId: actor.userId, access: 'change' as const, channel: action.channel, projectId: action.projectId };
  const decision = await authorize(request, deps.access, deps.groups);
  if (!decision.allowed) {
    await tellClicker(interaction, refuse(decision.refusal, deps, { id: action.projectId, name: action.projectName }), deps);
    return { status: 'refused' };
  }
  const nowMs = deps.clock.now();
  const change = buttonChange(action, nowMs);
  const subscription = await applyOrSubscribe(action, change, actor, nowMs, deps.store);
  const recorded = await recordChange(deps, action.channel, {
    actor,
    whenMs: nowMs,
    what: `${describeChange(change)} (button)`,
    project: { id: action.projectId, name: action.projectName },
  });
  const note = `${changeAnnouncement(subscription, actor, change)}${recorded ? '' : NOT_RECORDED_NOTE}`;
  await deps.responder.respond(interaction.responseUrl, annotated(interaction.messageBlocks, note));
  return { status: 'changed', subscription };
}

/** A new ephemeral message to the clicker; the message the button was on stays as it is. */
async function tellClicker(interaction: BlockActionInteraction, answer: SlackReply, deps: ActionDeps): Promise<void> {
  await deps.responder.respond(interaction.responseUrl, { ...answer, response_type: 'ephemeral', replace_original: false });
}

type ShareAction = Extract<ButtonAction, { kind: 'share_in_channel' }>;

/**
 * "Share in channel" (its value verified, and clicked in its channel, when the click was parsed):
 * `list` is answered here (DynamoDB only); `status` and `projects` need the read API, so they go
 * back through the deferred queue with the share flag and the click's response_url.
 */
async function shareInChannel(interaction: BlockActionInteraction, action: ShareAction, deps: ActionDeps): Promise<ActionResult> {
  const { target } = action;
  const context: CommandContext = { channel: target.channel, actor: interaction.actor, responseUrl: interaction.responseUrl };
  if (target.verb === 'list') {
    await shareAnswer(await answerList(context, deps), context, deps.responder);
    return { status: 'shared' };
  }
  const command: DeferredCommand = target.verb === 'status' ? { kind: 'status', project: target.projectId ?? '' } : { kind: 'projects' };
  await deps.queue.send({ kind: QUEUE_MESSAGE_KINDS.slackCommand, command, context, receivedAtMs: deps.clock.now(), share: true });
  return { status: 'shared' };
}

export function buttonChange(action: ChangeAction, nowMs: number): SettingsChange {
  if (action.kind === 'only_changes') return { kind: 'mode', mode: 'changes' };
  const days = SLACK_APP_DEFAULTS.buttonMuteDays;
  return { kind: 'mute', untilMs: nowMs + days * DAY_MS, label: `${days}d` };
}

async function applyOrSubscribe(
  action: ChangeAction,
  change: SettingsChange,
  actor: Actor,
  nowMs: number,
  store: SubscriptionStore,
): Promise<Subscription> {
  const changed = await store.change(action.projectId, action.channel, change, actor, nowMs);
  if (changed !== null) return changed;
  const created = await store.subscribe({
    projectId: action.projectId,
    projectName: action.projectName,
    channel: action.channel,
    actor,
    nowMs,
    ...(change.kind === 'mute' ? { mutedUntilMs: change.untilMs, lastChange: `muted for ${change.label}` } : {}),
    ...(change.kind === 'mode' ? { mode: change.mode, lastChange: `mode ${change.mode}` } : {}),
  });
  // Subscribed meanwhile by someone else: apply the change to theirs.
  if (created.status === 'subscribed') return created.subscription;
  return (await store.change(action.projectId, action.channel, change, actor, nowMs)) ?? created.subscription;
}

/**
 * The original message with the note as a context block; a plain in-channel note when the blocks are
 * unknown. The note is cut to one text object, so a refused update can't leave a saved change unannounced.
 */
export function annotated(messageBlocks: readonly unknown[], fullNote: string): SlackReply {
  const note = truncateText(fullNote, SLACK_LIMITS.textObject);
  if (messageBlocks.length === 0) return { response_type: 'in_channel', text: note };
  const context = { type: 'context', elements: [{ type: 'mrkdwn', text: note }] };
  // Slack allows 50 blocks per message: drop the last ones before the note rather than fail the update.
  const kept = messageBlocks.slice(0, 49);
  return { response_type: 'in_channel', replace_original: true, text: note, blocks: [...kept, context] };
}
