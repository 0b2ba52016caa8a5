/**
 * Buttons: the digest's settings buttons ("Mute 7 days" ↔ "Unmute", "Only changes" ↔ "Full digests")
 * change the channel's settings for the project and re-render the digest in place: the buttons show
 * the new state and the bridge's one note says who changed what (a second click replaces it, never
 * adds another); "Open dashboard" is a link (nothing to do); "Share in channel" on a read's ephemeral
 * answer posts it in the channel for everyone.
 * A digest routed by the configuration (no subscription yet) gets a subscription carrying the new
 * setting, so the buttons work on every digest. The digest buttons are changes: the `slackAccess`
 * policy decides who and where at once (the project is in the button's value).
 */
import type { Button } from '@slack/web-api';
import { QUEUE_MESSAGE_KINDS, SLACK_APP_DEFAULTS, type DigestMode } from '../contracts';
import { DIGEST_BLOCK_IDS, settingsButtons, settingsNoteBlock, type ChannelSettingsState } from '../digest/render/sections/footer';
import { SLACK_LIMITS, truncateText } from '../slack-text';
import { isRecord } from '../util';
import { describeChange, recordChange, refuse } from './access';
import { answerList } from './handlers';
import { ACTION_IDS, SETTINGS_ACTION_IDS } from '../buttons/ids';
import type { BlockActionInteraction, ButtonAction } from './interactions';
import type { Actor, SettingsChange, Subscription, SubscriptionStore } from '../ports';
import { authorize } from './policy';
import type { CommandContext, DeferredCommand, InlineDeps, Responder, ShareDeps, SlackReply } from './ports';
import { buttonNote, notFoundReply, NOT_RECORDED_NOTE } from './replies';
import { shareAnswer } from './service';
import { ProjectNotReached, scopedInlineDeps } from './tenant-scope';
import type { Tenant } from '../tenancy';

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

type ChangeAction = Extract<ButtonAction, { kind: (typeof SETTINGS_ACTION_IDS)[number] }>;

const DAY_MS = 24 * 3600_000;

export async function handleButtonAction(interaction: BlockActionInteraction, unscoped: ActionDeps): Promise<ActionResult> {
  const { action } = interaction;
  if (action.kind === 'open_dashboard') return { status: 'acknowledged' };
  // A click reaches only its workspace's tenants, as a command does (./tenant-scope.ts).
  const tenants = unscoped.tenants === undefined ? undefined : await unscoped.tenants.of(interaction.team ?? { teamId: '' });
  const deps =
    tenants === undefined || unscoped.tenants === undefined ? unscoped : await scopedInlineDeps(unscoped, tenants, unscoped.tenants);
  if (action.kind === 'share_in_channel') return shareInChannel(interaction, action, deps, tenants);
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
  let subscription: Subscription;
  try {
    subscription = await applyOrSubscribe(action, change, actor, nowMs, deps.store, shownMode(interaction.messageBlocks));
  } catch (error) {
    if (!(error instanceof ProjectNotReached)) throw error;
    // Not a project of the workspace's tenants: answered as any unknown project is, nothing changed.
    await tellClicker(interaction, notFoundReply(action.projectName, [], 'service'), deps);
    return { status: 'refused' };
  }
  const recorded = await recordChange(deps, action.channel, {
    actor,
    whenMs: nowMs,
    what: `${describeChange(change)} (button)`,
    project: { id: action.projectId, name: action.projectName },
  });
  const note = `${buttonNote(subscription, actor, change)}${recorded ? '' : NOT_RECORDED_NOTE}`;
  await deps.responder.respond(interaction.responseUrl, annotated(interaction.messageBlocks, note, stateOf(subscription, nowMs)));
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
async function shareInChannel(
  interaction: BlockActionInteraction,
  action: ShareAction,
  deps: ActionDeps,
  tenants: readonly Tenant[] | undefined,
): Promise<ActionResult> {
  const { target } = action;
  const context: CommandContext = {
    channel: target.channel,
    actor: interaction.actor,
    responseUrl: interaction.responseUrl,
    ...(tenants === undefined ? {} : { tenants }),
  };
  if (target.verb === 'list') {
    await shareAnswer(await answerList(context, deps), context, deps.responder);
    return { status: 'shared' };
  }
  const command: DeferredCommand = target.verb === 'status' ? { kind: 'status', project: target.projectId ?? '' } : { kind: 'projects' };
  await deps.queue.send({ kind: QUEUE_MESSAGE_KINDS.slackCommand, command, context, receivedAtMs: deps.clock.now(), share: true });
  return { status: 'shared' };
}

export function buttonChange(action: ChangeAction, nowMs: number): SettingsChange {
  if (action.kind === ACTION_IDS.onlyChanges) return { kind: 'mode', mode: 'changes' };
  if (action.kind === ACTION_IDS.fullDigests) return { kind: 'mode', mode: 'full' };
  if (action.kind === ACTION_IDS.unmute) return { kind: 'unmute' };
  const days = SLACK_APP_DEFAULTS.buttonMuteDays;
  return { kind: 'mute', untilMs: nowMs + days * DAY_MS, label: `${days}d` };
}

async function applyOrSubscribe(
  action: ChangeAction,
  change: SettingsChange,
  actor: Actor,
  nowMs: number,
  store: SubscriptionStore,
  mode: DigestMode | undefined,
): Promise<Subscription> {
  const changed = await store.change(action.projectId, action.channel, change, actor, nowMs);
  if (changed !== null) return changed;
  const created = await store.subscribe({
    projectId: action.projectId,
    projectName: action.projectName,
    channel: action.channel,
    actor,
    nowMs,
    // The mode the digest was rendered with, so a mute doesn't also change it (the store's default is for `subscribe`).
    ...(mode === undefined ? {} : { mode }),
    ...(change.kind === 'mute' ? { mutedUntilMs: change.untilMs } : {}),
    ...(change.kind === 'mode' ? { mode: change.mode } : {}),
    ...(change.kind === 'unmute' ? {} : { lastChange: describeChange(change) }),
  });
  // Subscribed meanwhile by someone else: apply the change to theirs.
  if (created.status === 'subscribed') return created.subscription;
  return (await store.change(action.projectId, action.channel, change, actor, nowMs)) ?? created.subscription;
}

/** The mode a digest's buttons were rendered for: "Full digests" is shown in `changes` mode, "Only changes" in `full`. */
export function shownMode(messageBlocks: readonly unknown[]): DigestMode | undefined {
  const ids = new Set(buttonsOf(messageBlocks).map((b) => b['action_id']));
  if (ids.has(ACTION_IDS.fullDigests)) return 'changes';
  if (ids.has(ACTION_IDS.onlyChanges)) return 'full';
  return undefined;
}

function stateOf(subscription: Subscription, nowMs: number): ChannelSettingsState {
  return { muted: subscription.mutedUntilMs !== undefined && subscription.mutedUntilMs > nowMs, mode: subscription.mode };
}

function buttonsOf(messageBlocks: readonly unknown[]): Record<string, unknown>[] {
  return messageBlocks.flatMap((block) =>
    isRecord(block) && block['type'] === 'actions' && Array.isArray(block['elements']) ? block['elements'].filter(isRecord) : [],
  );
}

function isSettingsButton(element: unknown): element is Record<string, unknown> {
  return isRecord(element) && SETTINGS_ACTION_IDS.some((id) => id === element['action_id']);
}

/**
 * The original message with its settings buttons showing `state` and the bridge's note (the one
 * already there replaced, so a second click never adds a second note); everything else kept. A plain
 * in-channel note when the blocks are unknown. The note is cut to one text object, so a refused update
 * can't leave a saved change unannounced.
 */
export function annotated(messageBlocks: readonly unknown[], fullNote: string, state: ChannelSettingsState): SlackReply {
  const note = truncateText(fullNote, SLACK_LIMITS.textObject);
  if (messageBlocks.length === 0) return { response_type: 'in_channel', text: note };
  const blocks = messageBlocks.map((block) => withState(block, state));
  const noteBlock = settingsNoteBlock(note);
  const at = blocks.findIndex((block) => isRecord(block) && block['block_id'] === DIGEST_BLOCK_IDS.settingsNote);
  if (at >= 0) blocks[at] = noteBlock;
  else {
    // Just above the buttons, as the digest renders it; at the end on a message without them.
    const buttons = blocks.findIndex(
      (block) => isRecord(block) && Array.isArray(block['elements']) && block['elements'].some(isSettingsButton),
    );
    blocks.splice(buttons >= 0 ? buttons : blocks.length, 0, noteBlock);
  }
  // Slack allows 50 blocks per message: drop blocks before the note's rather than fail the update.
  const kept = blocks.length <= SLACK_LIMITS.blocksPerMessage ? blocks : trimmed(blocks);
  return { response_type: 'in_channel', replace_original: true, text: note, blocks: kept };
}

/** An actions block with settings buttons gets the buttons of `state`, carrying the value they had. */
function withState(block: unknown, state: ChannelSettingsState): unknown {
  if (!isRecord(block) || block['type'] !== 'actions' || !Array.isArray(block['elements'])) return block;
  const elements: unknown[] = block['elements'];
  const first = elements.findIndex(isSettingsButton);
  const value = first >= 0 ? (elements[first] as Record<string, unknown>)['value'] : undefined;
  if (typeof value !== 'string') return block;
  const others = elements.filter((element) => !isSettingsButton(element));
  const buttons: Button[] = settingsButtons(state, value);
  return { ...block, elements: [...others.slice(0, first), ...buttons, ...others.slice(first)] };
}

/** At most 50 blocks: the last ones before the bridge's note and the buttons go first. */
function trimmed(blocks: readonly unknown[]): unknown[] {
  const tailFrom = blocks.findIndex((block) => isRecord(block) && block['block_id'] === DIGEST_BLOCK_IDS.settingsNote);
  const tail = blocks.slice(tailFrom);
  return [...blocks.slice(0, SLACK_LIMITS.blocksPerMessage - tail.length), ...tail];
}
