/**
 * The local Slack server playing Slack towards the app: slash commands and button clicks delivered to
 * the bridge signed with the app's signing secret, response_urls handed out, and the answers applied
 * as Slack applies them (ephemeral replies, in-channel posts, replacing or deleting the clicked message).
 */
import { randomUUID } from 'node:crypto';
import { SLACK_APP_DEFAULTS } from '../../shared/contracts';
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

export class SlackInteractions {
  /** Answers the bridge sent to response_url paths (deferred slash commands), oldest first. */
  readonly responses: { path: string; body: string }[] = [];
  private readonly responseTargets = new Map<string, ResponseTarget>();

  /** `app`: the connected app (throws when none is). */
  constructor(
    private readonly store: SlackStore,
    private readonly source: DeliverySource,
    private readonly app: () => SlackAppTarget,
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
