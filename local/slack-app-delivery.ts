/**
 * What Slack sends to an app, built and signed as Slack does, for the local Slack server to deliver
 * slash commands and button clicks to the bridge (`/slack/commands`, `/slack/interactions`):
 * - a slash command is a form body (`command`, `text`, `channel_id`, `user_id`, `response_url`, …);
 * - a click (on a message, or on the Home tab) is a form body with one field, `payload`: the `block_actions` JSON;
 * - both carry `X-Slack-Signature: v0=HMAC-SHA256(signing secret, "v0:<timestamp>:<body>")`, as an event does.
 */
import { randomUUID } from 'node:crypto';
import { signSlackRequest } from '../shared/slack-request-signature';
import { isRecord, parseJsonOrUndefined } from '../shared/util';

/** The local Slack's workspace and app: the only ones the local stack's Slack function serves. */
export const LOCAL_SLACK_TEAM_ID = 'T0LOCAL';
export const LOCAL_SLACK_APP_ID = 'A0LOCALAPP';

/**
 * Who sends, as Slack would tell the app: by default a member of the local workspace through the
 * local app. Tests set another team, org or app to play a request the bridge must refuse.
 */
export interface SlackSender {
  /** The workspace the request comes from (`team_id`, a click's `team.id`). */
  teamId: string;
  /** A click's `user.team_id` (the clicker's own workspace, another one in a Slack Connect channel); default `teamId`. */
  userTeamId?: string | undefined;
  /** Enterprise Grid org (`enterprise_id`, a click's `enterprise.id`); none by default. */
  enterpriseId?: string | undefined;
  /** `api_app_id`; default the local app's. */
  appId?: string | undefined;
}

/** Where the bridge's Slack endpoints are and the secret Slack signs with (the app's settings in Slack). */
export interface SlackAppTarget {
  commandsUrl: string;
  interactionsUrl: string;
  /** The Events API request URL (App Home); none: the Home tab can't be opened (local/slack/interactions.ts). */
  eventsUrl?: string | undefined;
  signingSecret: string;
}

export interface SlackUser {
  id: string;
  name: string;
}

/** Who types commands, clicks and opens the Home tab in the local workspace (the preview's user). */
export const LOCAL_SLACK_USER: SlackUser = { id: 'U0LOCAL', name: 'you' };

export interface CommandDelivery {
  /** `/visibility subscribe Northwind`; a line without a leading slash is the text of `slash`. */
  line: string;
  /** The slash command a line without one is sent as. */
  slash: string;
  channel: string;
  user: SlackUser;
  teamId: string;
  responseUrl: string;
  enterpriseId?: string | undefined;
  appId?: string | undefined;
}

/** Where a click was: on a message (in `channel`; null: a payload without one) with its response_url, or on the user's Home tab. */
export type ClickPlace =
  | { message: { ts: string; text: string | undefined; blocks: unknown[] }; channel: string | null; responseUrl: string }
  | { view: { id: string; blocks: unknown[]; privateMetadata: string } };

export interface ClickDelivery extends SlackSender {
  user: SlackUser;
  place: ClickPlace;
  /** The element's action as Slack reports it (a button's from `findButton`, or a select's choice). */
  action: Record<string, unknown>;
}

/** What the bridge answered: HTTP status and the body (JSON when it parses). */
export interface AppAnswer {
  status: number;
  body: unknown;
}

/** "/visibility subscribe X" → its slash and text. */
export function splitSlashLine(line: string, slash: string): { command: string; text: string } {
  const trimmed = line.trim();
  if (!trimmed.startsWith('/')) return { command: slash, text: trimmed };
  const space = trimmed.search(/\s/);
  return space < 0 ? { command: trimmed, text: '' } : { command: trimmed.slice(0, space), text: trimmed.slice(space + 1).trim() };
}

export function commandForm(delivery: CommandDelivery): string {
  const { command, text } = splitSlashLine(delivery.line, delivery.slash);
  return new URLSearchParams({
    token: 'deprecated-verification-token',
    team_id: delivery.teamId,
    channel_id: delivery.channel,
    channel_name: delivery.channel,
    user_id: delivery.user.id,
    user_name: delivery.user.name,
    command,
    text,
    response_url: delivery.responseUrl,
    trigger_id: randomUUID(),
    api_app_id: delivery.appId ?? LOCAL_SLACK_APP_ID,
    ...(delivery.enterpriseId !== undefined ? { enterprise_id: delivery.enterpriseId } : {}),
  }).toString();
}

export function blockActionsForm(delivery: ClickDelivery, nowMs: number): string {
  const { place, user } = delivery;
  const where =
    'view' in place
      ? {
          container: { type: 'view', view_id: place.view.id },
          view: { id: place.view.id, type: 'home', blocks: place.view.blocks, private_metadata: place.view.privateMetadata },
        }
      : {
          container: {
            type: 'message',
            message_ts: place.message.ts,
            ...(place.channel !== null ? { channel_id: place.channel } : {}),
            is_ephemeral: false,
          },
          ...(place.channel !== null ? { channel: { id: place.channel, name: place.channel } } : {}),
          message: { type: 'message', ts: place.message.ts, text: place.message.text ?? '', blocks: place.message.blocks },
          response_url: place.responseUrl,
        };
  const payload = {
    type: 'block_actions',
    user: { id: user.id, username: user.name, name: user.name, team_id: delivery.userTeamId ?? delivery.teamId },
    api_app_id: delivery.appId ?? LOCAL_SLACK_APP_ID,
    team: { id: delivery.teamId },
    ...(delivery.enterpriseId !== undefined ? { enterprise: { id: delivery.enterpriseId } } : {}),
    trigger_id: randomUUID(),
    ...where,
    actions: [{ ...delivery.action, action_ts: (nowMs / 1000).toFixed(6) }],
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/**
 * POSTs a signed body to the app, as Slack does (Slack gives up after 3 s; so does this): a form unless
 * `headers` name another content type (an event's JSON), and Slack's retry headers when it retries.
 */
export async function deliverSigned(
  url: string,
  signingSecret: string,
  body: string,
  nowMs: number,
  headers: Record<string, string> = {},
): Promise<AppAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...signSlackRequest(signingSecret, Math.floor(nowMs / 1000), body),
      ...headers,
    },
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(3_000),
  });
  const text = await response.text();
  return { status: response.status, body: text.trim() === '' ? undefined : (parseJsonOrUndefined(text) ?? text) };
}

/** The click on the button `actionId` of a message's `actions` blocks (or a section accessory), as Slack reports it. */
export function findButton(blocks: readonly unknown[], actionId: string): Record<string, unknown> | undefined {
  for (const block of blocks) {
    if (!isRecord(block)) continue;
    const elements = Array.isArray(block['elements']) ? (block['elements'] as unknown[]) : [];
    const button = [...elements, block['accessory']].find((e) => isRecord(e) && e['type'] === 'button' && e['action_id'] === actionId);
    if (!isRecord(button)) continue;
    const label = isRecord(button['text']) && typeof button['text']['text'] === 'string' ? button['text']['text'] : actionId;
    return {
      type: 'button',
      action_id: actionId,
      ...(typeof block['block_id'] === 'string' ? { block_id: block['block_id'] } : {}),
      ...(typeof button['value'] === 'string' ? { value: button['value'] } : {}),
      text: { type: 'plain_text', text: label, emoji: true },
    };
  }
  return undefined;
}

/** An answer to a command or a response_url, as Slack reads it. */
export interface AppReply {
  text: string | undefined;
  blocks: unknown[] | undefined;
  responseType: 'ephemeral' | 'in_channel';
  replaceOriginal: boolean;
  deleteOriginal: boolean;
}

/** Reads a reply body as Slack does; undefined when there is nothing to show (an empty acknowledgement). */
export function readReply(body: unknown): AppReply | undefined {
  const parsed = typeof body === 'string' ? (parseJsonOrUndefined(body) ?? body) : body;
  if (typeof parsed === 'string' && parsed.trim() !== '')
    return { text: parsed, blocks: undefined, responseType: 'ephemeral', replaceOriginal: false, deleteOriginal: false };
  if (!isRecord(parsed)) return undefined;
  const text = typeof parsed['text'] === 'string' ? parsed['text'] : undefined;
  const blocks = Array.isArray(parsed['blocks']) ? (parsed['blocks'] as unknown[]) : undefined;
  const deleteOriginal = parsed['delete_original'] === true || parsed['delete_original'] === 'true';
  if (text === undefined && blocks === undefined && !deleteOriginal) return undefined;
  return {
    text,
    blocks,
    responseType: parsed['response_type'] === 'in_channel' ? 'in_channel' : 'ephemeral',
    replaceOriginal: parsed['replace_original'] === true || parsed['replace_original'] === 'true',
    deleteOriginal,
  };
}
