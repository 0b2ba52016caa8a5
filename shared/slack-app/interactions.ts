/**
 * Buttons on digests. The renderer puts the project and channel in each button's value
 * (`encodeActionValue`); `/slack/interactions` parses the `payload` form field once into a typed
 * action. Never throws.
 */
import type { Actor } from '../ports';
import { isRecord } from '../util';
import { isChannelId } from '../routing';

export const ACTION_IDS = { mute7d: 'mute_7d', onlyChanges: 'only_changes', openDashboard: 'open_dashboard' } as const;

export interface ActionTarget {
  projectId: string;
  projectName: string;
  channel: string;
}

export type ButtonAction =
  | ({ kind: 'mute_7d' } & ActionTarget)
  | ({ kind: 'only_changes' } & ActionTarget)
  /** A link button: Slack opens the URL itself and still reports the click, which needs only a 200. */
  | { kind: 'open_dashboard' };

export interface BlockActionInteraction {
  actor: Actor;
  responseUrl: string;
  action: ButtonAction;
  /** The blocks of the message the button was on, to re-post it with a note of the change. */
  messageBlocks: unknown[];
}

export type InteractionParse = { ok: true; interaction: BlockActionInteraction } | { ok: false; problem: string };

/** Slack caps a button value at 2000 characters; project names are cut so the value always fits. */
const MAX_NAME_IN_VALUE = 500;

export function encodeActionValue(target: ActionTarget): string {
  return JSON.stringify({ p: target.projectId, n: target.projectName.slice(0, MAX_NAME_IN_VALUE), c: target.channel });
}

export function decodeActionValue(value: unknown): ActionTarget | null {
  const parsed = parseJson(value);
  if (!isRecord(parsed)) return null;
  const { p, n, c } = parsed;
  if (!isNonEmptyString(p) || !isNonEmptyString(c)) return null;
  return { projectId: p, projectName: typeof n === 'string' && n !== '' ? n : p, channel: c };
}

/** Parses the form body of an interaction request (`payload=<JSON>`). */
export function parseInteractionForm(rawBody: string): InteractionParse {
  const payload = parseJson(new URLSearchParams(rawBody).get('payload'));
  if (!isRecord(payload)) return { ok: false, problem: 'interaction body has no JSON `payload` field' };
  if (payload['type'] !== 'block_actions') return { ok: false, problem: `interaction type "${String(payload['type'])}" is not handled` };
  const user = isRecord(payload['user']) ? payload['user'] : {};
  const responseUrl = payload['response_url'];
  if (!isNonEmptyString(user['id']) || !isNonEmptyString(responseUrl))
    return { ok: false, problem: 'block_actions payload lacks user.id or response_url' };
  const action = parseAction(payload);
  if (typeof action === 'string') return { ok: false, problem: action };
  const userName = user['username'] ?? user['name'];
  return {
    ok: true,
    interaction: {
      actor: { userId: user['id'], ...(typeof userName === 'string' ? { userName } : {}) },
      responseUrl,
      action,
      messageBlocks: messageBlocks(payload['message']),
    },
  };
}

function parseAction(payload: Record<string, unknown>): ButtonAction | string {
  const actions = payload['actions'];
  const first: unknown = Array.isArray(actions) ? actions[0] : undefined;
  if (!isRecord(first)) return 'block_actions payload has no action';
  const actionId = first['action_id'];
  if (actionId === ACTION_IDS.openDashboard) return { kind: 'open_dashboard' };
  if (actionId !== ACTION_IDS.mute7d && actionId !== ACTION_IDS.onlyChanges) return `action "${String(actionId)}" is not handled`;
  const target = decodeActionValue(first['value']);
  if (target === null) return `action ${actionId} has no project and channel in its value`;
  const clickedIn = isRecord(payload['channel']) ? payload['channel']['id'] : undefined;
  if (!isNonEmptyString(clickedIn)) return { kind: actionId, ...target };
  // A digest routed by configuration may name its channel (`#digests`); Slack reports the id, so the
  // change applies to the channel clicked in, keyed by its id as `/visibility subscribe` keys it.
  if (!isChannelId(target.channel)) return { kind: actionId, ...target, channel: clickedIn };
  // The value names the channel the digest was posted to; a click elsewhere (a forwarded copy) must not change that channel.
  if (clickedIn !== target.channel) return `action ${actionId} was clicked in ${clickedIn}, not in the digest's channel`;
  return { kind: actionId, ...target };
}

function messageBlocks(message: unknown): unknown[] {
  if (!isRecord(message)) return [];
  const blocks = message['blocks'];
  return Array.isArray(blocks) ? blocks : [];
}

function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}
