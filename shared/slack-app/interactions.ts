/**
 * Buttons on digests. The renderer puts the project and channel in each button's value, signed by
 * the bridge (`encodeActionValue`, ../buttons/value.ts); `/slack/interactions` parses the `payload`
 * form field once into a typed action, or a refusal when the value is not the bridge's or the click
 * is not in the value's channel. Never throws.
 */
import type { Actor } from '../ports';
import { isRecord, parseJsonOrUndefined } from '../util';
import { isChannelId } from '../routing';
import type { ActionTarget, ActionValueCodec } from '../buttons/value';
import { ACTION_IDS, SETTINGS_ACTION_IDS, type SettingsActionId } from '../buttons/ids';
import type { ShareTarget, ShareValues, SlackTeam } from './ports';
import { isHomeAction, parseHomeAction, teamOf, type HomeAction } from './home/actions';

export type { ActionTarget } from '../buttons/value';

export type ButtonAction =
  | ({ kind: SettingsActionId } & ActionTarget)
  /** A link button: Slack opens the URL itself and still reports the click, which needs only a 200. */
  | { kind: 'open_dashboard' }
  /** "Share in channel" on a read's ephemeral answer: its signed value, clicked in the channel it names. */
  | { kind: 'share_in_channel'; target: ShareTarget };

export interface BlockActionInteraction {
  actor: Actor;
  responseUrl: string;
  action: ButtonAction;
  /** The blocks of the message the button was on, to re-post it with a note of the change. */
  messageBlocks: unknown[];
  /** The workspace clicked in (`team.id`, `enterprise.id`): its tenants are what the click reaches; none when Slack sent no team. */
  team?: SlackTeam | undefined;
}

/**
 * Why a click on a digest button is refused: its value is not one the bridge signed, it was not
 * clicked in the value's channel, or it was clicked in a DM (settings are a channel's, never a DM's).
 */
export type ButtonRefusalReason = 'unsigned' | 'no_channel' | 'other_channel' | 'direct_message';

/** A refused click: nothing is changed, and its user is told via `responseUrl`. */
export interface ButtonRefusal {
  reason: ButtonRefusalReason;
  actionId: string;
  actor: Actor;
  responseUrl: string;
}

export type InteractionParse =
  { ok: true; interaction: BlockActionInteraction } | { ok: false; problem: string; refusal?: ButtonRefusal | undefined };

/** An interaction request: a click on the app's Home tab (no message, no response_url: its answer is the tab re-published), or on a message. */
export type InteractionRequest = { kind: 'home'; action: HomeAction } | { kind: 'message'; parse: InteractionParse };

/** Parses the form body of an interaction request once: a Home tab action, or a message's (see `parseInteractionForm`). */
export function parseInteractionRequest(rawBody: string, codec: ActionValueCodec): InteractionRequest {
  const payload = parseJsonOrUndefined(new URLSearchParams(rawBody).get('payload'));
  if (isRecord(payload) && payload['type'] === 'block_actions' && isHomeAction(payload)) {
    const action = parseHomeAction(payload);
    return typeof action === 'string' ? { kind: 'message', parse: { ok: false, problem: action } } : { kind: 'home', action };
  }
  return { kind: 'message', parse: parsePayload(payload, codec) };
}

/** The value of a digest button for `target`, signed with the stage's newest action-signing key. */
export function encodeActionValue(target: ActionTarget, codec: ActionValueCodec): string {
  return codec.encode(target);
}

/** The target of a button value the bridge signed; null for an unsigned, forged or cut one. */
export function decodeActionValue(value: unknown, codec: ActionValueCodec): ActionTarget | null {
  return codec.decode(value);
}

/** Parses the form body of an interaction request (`payload=<JSON>`), verifying a digest button's value with `codec`. */
export function parseInteractionForm(rawBody: string, codec: ActionValueCodec): InteractionParse {
  const request = parseInteractionRequest(rawBody, codec);
  return request.kind === 'message' ? request.parse : { ok: false, problem: 'a Home tab action, not a message button' };
}

function parsePayload(payload: unknown, codec: ActionValueCodec): InteractionParse {
  if (!isRecord(payload)) return { ok: false, problem: 'interaction body has no JSON `payload` field' };
  if (payload['type'] !== 'block_actions') return { ok: false, problem: `interaction type "${String(payload['type'])}" is not handled` };
  const user = isRecord(payload['user']) ? payload['user'] : {};
  const responseUrl = payload['response_url'];
  if (!isNonEmptyString(user['id']) || !isNonEmptyString(responseUrl))
    return { ok: false, problem: 'block_actions payload lacks user.id or response_url' };
  const userName = user['username'] ?? user['name'];
  const actor: Actor = { userId: user['id'], ...(typeof userName === 'string' ? { userName } : {}) };
  const action = parseAction(payload, codec);
  if (typeof action === 'string') return { ok: false, problem: action };
  if ('refused' in action) {
    const refusal = { reason: action.refused, actionId: action.actionId, actor, responseUrl };
    return { ok: false, problem: `action ${action.actionId} refused: ${action.refused}`, refusal };
  }
  return {
    ok: true,
    interaction: {
      actor,
      responseUrl,
      action,
      messageBlocks: messageBlocks(payload['message']),
      ...teamOf(payload),
    },
  };
}

type Refused = { refused: ButtonRefusalReason; actionId: string };

function parseAction(payload: Record<string, unknown>, codec: ActionValueCodec): ButtonAction | Refused | string {
  const actions = payload['actions'];
  const first: unknown = Array.isArray(actions) ? actions[0] : undefined;
  if (!isRecord(first)) return 'block_actions payload has no action';
  const actionId = first['action_id'];
  if (actionId === ACTION_IDS.openDashboard) return { kind: 'open_dashboard' };
  if (actionId === ACTION_IDS.shareInChannel) return shareAction(payload, first['value'], codec);
  const settings = SETTINGS_ACTION_IDS.find((id) => id === actionId);
  if (settings === undefined) return `action "${String(actionId)}" is not handled`;
  const target = decodeActionValue(first['value'], codec);
  if (target === null) return { refused: 'unsigned', actionId: settings };
  // Without the channel clicked in, nothing says the click is where the digest was posted.
  const clickedIn = isRecord(payload['channel']) ? payload['channel']['id'] : undefined;
  if (!isNonEmptyString(clickedIn)) return { refused: 'no_channel', actionId: settings };
  // Whatever the value names: a DM has no subscriptions to change (a value naming one was never a digest's).
  if (isDirectMessage(clickedIn)) return { refused: 'direct_message', actionId: settings };
  // A digest routed by configuration may name its channel (`#digests`); Slack reports the id, so the
  // change applies to the channel clicked in, keyed by its id as `/visibility subscribe` keys it.
  if (!isChannelId(target.channel)) return { kind: settings, ...target, channel: clickedIn };
  // The value names the channel the digest was posted to; a click elsewhere (a forwarded copy) must not change that channel.
  if (clickedIn !== target.channel) return { refused: 'other_channel', actionId: settings };
  return { kind: settings, ...target };
}

/** A share is a read, but only of the channel its answer was given in: the value must be signed and name the channel clicked in. */
function shareAction(payload: Record<string, unknown>, value: unknown, codec: ActionValueCodec): ButtonAction | Refused {
  const actionId = ACTION_IDS.shareInChannel;
  const target = decodeShareValue(value, codec);
  if (target === null) return { refused: 'unsigned', actionId };
  const clickedIn = isRecord(payload['channel']) ? payload['channel']['id'] : undefined;
  if (!isNonEmptyString(clickedIn)) return { refused: 'no_channel', actionId };
  if (clickedIn !== target.channel) return { refused: 'other_channel', actionId };
  return { kind: 'share_in_channel', target };
}

const SHARE_VERBS: readonly ShareTarget['verb'][] = ['status', 'projects', 'list'];

/** The value of a "Share in channel" button, signed like the digest buttons' (../buttons/value.ts). */
export function encodeShareValue(target: ShareTarget, codec: Pick<ActionValueCodec, 'sign'>): string {
  const fields: Record<string, string> = { v: target.verb, c: target.channel };
  if (target.projectId !== undefined) fields['p'] = target.projectId;
  return codec.sign(fields);
}

/** The target of a share value the bridge signed; null for anything else. */
export function decodeShareValue(value: unknown, codec: Pick<ActionValueCodec, 'verify'>): ShareTarget | null {
  const fields = codec.verify(value);
  if (fields === null) return null;
  const verb = SHARE_VERBS.find((v) => v === fields['v']);
  const channel = fields['c'];
  const projectId = fields['p'];
  if (verb === undefined || !isNonEmptyString(channel)) return null;
  if (verb !== 'status') return { verb, channel };
  return isNonEmptyString(projectId) ? { verb, channel, projectId } : null;
}

/**
 * Share values as the domain signs them, over the stage's action-signing key (resolved through the
 * secret cache); without a key (`codec` undefined) reads are answered without the button.
 */
export function shareValuesFrom(codec: (() => Promise<Pick<ActionValueCodec, 'sign'>>) | undefined): ShareValues {
  return { encode: async (target) => (codec === undefined ? undefined : encodeShareValue(target, await codec())) };
}

function messageBlocks(message: unknown): unknown[] {
  if (!isRecord(message)) return [];
  const blocks = message['blocks'];
  return Array.isArray(blocks) ? blocks : [];
}

/** Slack's ids of direct messages (D…); channels and private channels are C… and G…. */
function isDirectMessage(channel: string): boolean {
  return channel.startsWith('D');
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}
