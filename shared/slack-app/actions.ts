/**
 * Digest buttons: "Mute 7 days" and "Only changes" change the channel's settings for the project
 * and re-post the digest with a note of who changed what; "Open dashboard" is a link (nothing to do).
 * A digest routed by the configuration (no subscription yet) gets a subscription carrying the new
 * setting, so the button works on every digest.
 */
import { SLACK_APP_DEFAULTS } from '../contracts';
import { SLACK_LIMITS, truncateText } from '../slack-text';
import type { Clock } from '../ports';
import type { BlockActionInteraction, ButtonAction } from './interactions';
import type { Actor, SettingsChange, Subscription, SubscriptionStore } from '../ports';
import type { Responder, SlackReply } from './ports';
import { changeAnnouncement } from './replies';

export interface ActionDeps {
  store: SubscriptionStore;
  responder: Responder;
  clock: Clock;
}

export type ActionResult = { status: 'acknowledged' } | { status: 'changed'; subscription: Subscription };

const DAY_MS = 24 * 3600_000;

export async function handleButtonAction(interaction: BlockActionInteraction, deps: ActionDeps): Promise<ActionResult> {
  const { action, actor } = interaction;
  if (action.kind === 'open_dashboard') return { status: 'acknowledged' };
  const nowMs = deps.clock.now();
  const change = buttonChange(action, nowMs);
  const subscription = await applyOrSubscribe(action, change, actor, nowMs, deps.store);
  await deps.responder.respond(
    interaction.responseUrl,
    annotated(interaction.messageBlocks, changeAnnouncement(subscription, actor, change)),
  );
  return { status: 'changed', subscription };
}

export function buttonChange(action: Exclude<ButtonAction, { kind: 'open_dashboard' }>, nowMs: number): SettingsChange {
  if (action.kind === 'only_changes') return { kind: 'mode', mode: 'changes' };
  const days = SLACK_APP_DEFAULTS.buttonMuteDays;
  return { kind: 'mute', untilMs: nowMs + days * DAY_MS, label: `${days}d` };
}

async function applyOrSubscribe(
  action: Exclude<ButtonAction, { kind: 'open_dashboard' }>,
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
