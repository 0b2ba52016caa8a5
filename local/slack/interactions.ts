/**
 * The local Slack server playing Slack towards the app: slash commands and button clicks delivered to
 * the bridge signed with the app's signing secret, response_urls handed out, and the answers applied
 * as Slack applies them (ephemeral replies, in-channel posts, replacing or deleting the clicked message).
 *
 * And the Events API and the Home tab: `app_home_opened` when a user opens the app's Home tab (a JSON
 * `event_callback` with a fresh event id; a retry is the same event re-signed with `X-Slack-Retry-Num`),
 * and a `block_actions` from the Home view (container `view`, no response_url), the clicked element
 * found in the view the app published for that user.
 */
import { randomUUID } from 'node:crypto';
import { SLACK_APP_DEFAULTS } from '../../shared/contracts';
import { isRecord } from '../../shared/util';
import {
  blockActionsForm,
  commandForm,
  deliverSigned,
  findButton,
  LOCAL_SLACK_USER,
  readReply,
  type AppAnswer,
  type AppReply,
  type SlackAppTarget,
  type SlackSender,
  type SlackUser,
} from '../slack-app-delivery';
import type { SlackStore } from './store';
import type { SlackAnswer } from './protocol';
import type { HomeTabs } from './views';

/** Where the local server takes response_url answers (`/response_url/<id>`). */
export const RESPONSE_URL_PATH = '/response_url/';

/** What Slack remembers of a response_url it handed out: where its answers go. */
interface ResponseTarget {
  channel: string;
  userId: string;
  /** The message a button was on (answers may replace or delete it). */
  messageTs?: string | undefined;
  /** The button was on an ephemeral message (a read's answer with "Share in channel"). */
  ephemeral?: boolean | undefined;
}

/** The workspace the deliveries come from. */
export interface DeliverySource {
  teamId: string;
  appId: string;
  enterpriseId: string | undefined;
  /** Origin of the response_urls handed out. */
  responseUrlOrigin: string;
}

export interface CommandInput {
  channel: string;
  line: string;
  user?: SlackUser;
  slash?: string;
  /** Another workspace, org or app than the local one (tests of what the bridge refuses). */
  from?: Partial<SlackSender>;
}

export interface ClickInput {
  channel: string;
  ts: string;
  actionId: string;
  user?: SlackUser;
  /** Another workspace, org or app than the local one. */
  from?: Partial<SlackSender>;
  /** Where the click is reported: another channel (a forwarded copy of the message), or null (a payload without `channel`). */
  clickedIn?: string | null;
}

export interface OpenHomeInput {
  userId?: string | undefined;
  /** Another workspace, org or app than the local one (tests of what the bridge refuses). */
  from?: Partial<SlackSender> | undefined;
  /** Deliver this event again (a Slack retry: same event id, new signature, `X-Slack-Retry-Num`). */
  retryOf?: string | undefined;
}

export interface HomeClickInput {
  userId?: string | undefined;
  actionId: string;
  /** For a conversations_select: the channel picked; its block is the one with `blockId`. */
  selectedChannel?: string | undefined;
  blockId?: string | undefined;
}

/** What was delivered: the bridge's answer and the event's id (for a retry). */
export interface EventDelivery extends AppAnswer {
  eventId: string;
}

export class SlackInteractions {
  /** Answers the bridge sent to response_url paths (deferred slash commands), oldest first. */
  readonly responses: { path: string; body: string }[] = [];
  private readonly responseTargets = new Map<string, ResponseTarget>();

  /** `app`: the connected app (throws when none is). */
  constructor(
    private readonly store: SlackStore,
    private readonly source: DeliverySource,
    private readonly app: () => SlackAppTarget,
    private readonly homeTabs: HomeTabs,
  ) {}

  async sendCommand(input: CommandInput): Promise<AppAnswer> {
    const app = this.app();
    const channel = this.store.channelId(input.channel);
    const user = input.user ?? LOCAL_SLACK_USER;
    const responseUrl = this.issueResponseUrl({ channel, userId: user.id });
    const slash = input.slash ?? SLACK_APP_DEFAULTS.command;
    const form = commandForm({ line: input.line, slash, channel, user, ...this.sender(input.from), responseUrl });
    const answer = await deliverSigned(app.commandsUrl, app.signingSecret, form, Date.now());
    const reply = answer.status === 200 ? readReply(answer.body) : undefined;
    if (reply) this.applyReply({ channel, userId: user.id }, reply);
    return answer;
  }

  async clickButton(input: ClickInput): Promise<AppAnswer> {
    const app = this.app();
    const { posted, ephemeral: ephemerals } = this.store;
    const channel = this.store.channelId(input.channel);
    const original = posted.find((m) => m.channel === channel && m.ts === input.ts);
    const ephemeral = original ? undefined : ephemerals.find((m) => m.channel === channel && m.ts === input.ts);
    const message = original ?? ephemeral;
    if (!message) throw new Error(`no message ${input.ts} in #${channel}`);
    const button = findButton(message.blocks ?? [], input.actionId);
    if (!button) throw new Error(`message ${input.ts} in #${channel} has no button ${input.actionId}`);
    const user = input.user ?? LOCAL_SLACK_USER;
    if (ephemeral && ephemeral.userId !== user.id)
      throw new Error(`message ${input.ts} in #${channel} is visible only to ${ephemeral.userId}`);
    const clickedIn = input.clickedIn === undefined ? channel : input.clickedIn === null ? null : this.store.channelId(input.clickedIn);
    // A click elsewhere is on a copy of the message: answers go to that channel, never change the original.
    const responseUrl = this.issueResponseUrl(
      clickedIn === channel
        ? { channel, userId: user.id, messageTs: message.ts, ephemeral: ephemeral !== undefined }
        : { channel: clickedIn ?? channel, userId: user.id },
    );
    const place = { message: { ts: message.ts, text: message.text, blocks: message.blocks ?? [] }, channel: clickedIn, responseUrl };
    const sender = { ...this.sender(input.from), userTeamId: input.from?.userTeamId };
    const form = blockActionsForm({ ...sender, user, place, action: button }, Date.now());
    return deliverSigned(app.interactionsUrl, app.signingSecret, form, Date.now());
  }

  /**
   * A request to a response_url path: POST is the bridge answering a deferred slash command or a click
   * (applied as Slack applies it); GET lists what it answered there so far (`npx bridge slack command`
   * waits for a deferred answer with it).
   */
  answerResponseUrl(method: string | undefined, path: string, raw: string): SlackAnswer | undefined {
    if (method === 'POST') {
      this.responses.push({ path, body: raw });
      const target = this.responseTargets.get(path.slice(RESPONSE_URL_PATH.length));
      const reply = readReply(raw);
      if (target && reply) this.applyReply(target, reply);
      return { status: 200, body: 'ok' };
    }
    if (method === 'GET') {
      const answers = this.responses.filter((r) => r.path === path).map((r) => r.body);
      return { status: 200, body: { ok: true, answers } };
    }
    return undefined;
  }

  /** A user opens the app's Home tab: a signed `app_home_opened`. */
  async openHome(input: OpenHomeInput = {}): Promise<EventDelivery> {
    const userId = input.userId ?? LOCAL_SLACK_USER.id;
    const eventId = input.retryOf ?? `Ev${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;
    const nowS = Math.floor(Date.now() / 1000);
    const { teamId, enterpriseId, appId } = this.sender(input.from);
    const published = this.homeTabs.of(userId);
    const body = JSON.stringify({
      token: 'deprecated-verification-token',
      team_id: teamId,
      ...(enterpriseId !== undefined ? { enterprise_id: enterpriseId } : {}),
      api_app_id: appId,
      event: {
        type: 'app_home_opened',
        user: userId,
        channel: `D${userId}`,
        tab: 'home',
        event_ts: `${nowS}.000100`,
        ...(published !== undefined
          ? { view: { id: `V${userId}`, type: 'home', private_metadata: published.view.private_metadata ?? '' } }
          : {}),
      },
      type: 'event_callback',
      event_id: eventId,
      event_time: nowS,
      authorizations: [{ team_id: teamId, user_id: 'U0LOCALBOT', is_bot: true }],
    });
    const retry = input.retryOf === undefined ? {} : { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' };
    const app = this.app();
    if (app.eventsUrl === undefined) throw new Error('the connected Slack app has no events URL (connectApp eventsUrl)');
    const headers = { 'content-type': 'application/json', ...retry };
    return { ...(await deliverSigned(app.eventsUrl, app.signingSecret, body, Date.now(), headers)), eventId };
  }

  /** A click on the user's Home tab: a button (its value from the published view) or a channel picked in a select. */
  async clickHome(input: HomeClickInput): Promise<AppAnswer> {
    const app = this.app();
    const userId = input.userId ?? LOCAL_SLACK_USER.id;
    const published = this.homeTabs.of(userId);
    if (published === undefined) throw new Error(`the app has published no Home tab for ${userId}`);
    const { blocks } = published.view;
    const action = input.selectedChannel === undefined ? findButton(blocks, input.actionId) : selectAction(blocks, input);
    if (action === undefined) throw new Error(`the Home tab has no button ${input.actionId}`);
    const view = { id: `V${userId}`, blocks, privateMetadata: published.view.private_metadata ?? '' };
    const user = { ...LOCAL_SLACK_USER, id: userId };
    const form = blockActionsForm({ ...this.sender(undefined), user, place: { view }, action }, Date.now());
    return deliverSigned(app.interactionsUrl, app.signingSecret, form, Date.now());
  }

  /** Forgets the response_urls handed out. */
  reset(): void {
    this.responseTargets.clear();
  }

  /** The local workspace and app, or another one a test plays (`from`). */
  private sender(from: Partial<SlackSender> | undefined): SlackSender {
    const { teamId, appId, enterpriseId } = this.source;
    return { teamId: from?.teamId ?? teamId, appId: from?.appId ?? appId, enterpriseId: from?.enterpriseId ?? enterpriseId };
  }

  private issueResponseUrl(target: ResponseTarget): string {
    const id = randomUUID();
    this.responseTargets.set(id, target);
    return `${this.source.responseUrlOrigin}${RESPONSE_URL_PATH}${id}`;
  }

  /** An answer as Slack applies it: delete or replace the clicked message, post in the channel, or show only to its user. */
  private applyReply(target: ResponseTarget, reply: AppReply): void {
    const ephemeral = target.ephemeral === true;
    const clicked: { channel: string; ts: string }[] = ephemeral ? this.store.ephemeral : this.store.posted;
    const index = clicked.findIndex((m) => m.channel === target.channel && m.ts === target.messageTs);
    const original = clicked[index];
    const { text, blocks } = reply;
    const ts = this.store.nextTs();
    if ((reply.deleteOriginal || reply.replaceOriginal) && original) {
      if (reply.deleteOriginal) clicked.splice(index, 1);
      else Object.assign(original, { text, blocks }, ephemeral ? {} : { edited: true });
    } else if ((reply.deleteOriginal || reply.replaceOriginal) && ephemeral) {
      return; // The ephemeral message is gone already: nothing to change, nothing to post.
    } else if (reply.responseType === 'in_channel') {
      this.store.posted.push({ channel: target.channel, ts, thread_ts: undefined, text, blocks, metadata: undefined, edited: false });
    } else {
      this.store.ephemeral.push({ channel: target.channel, ts, userId: target.userId, text, blocks });
    }
    this.store.notify();
  }
}

/** A channel picked in the Home tab's conversations_select of block `blockId`, as Slack reports it. */
function selectAction(blocks: readonly unknown[], input: HomeClickInput): Record<string, unknown> {
  const block = blocks.find(
    (b) =>
      isRecord(b) &&
      b['block_id'] === input.blockId &&
      Array.isArray(b['elements']) &&
      b['elements'].some((e) => isRecord(e) && e['action_id'] === input.actionId),
  );
  if (block === undefined) throw new Error(`the Home tab has no ${input.actionId} in block ${String(input.blockId)}`);
  return { type: 'conversations_select', action_id: input.actionId, block_id: input.blockId, selected_conversation: input.selectedChannel };
}
