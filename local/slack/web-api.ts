/**
 * The Web API methods of the local Slack server, the ones the bridge and its CLI call (METHODS below):
 * `chat.postMessage` with Slack's per-channel limit when `channelPace` is set, `conversations.info`
 * (`is_member` only where the bot is a member, `is_archived` for archived channels), the file upload
 * (./files.ts) and `views.publish` (./views.ts). Anything else answers `{ ok: false, error: 'unknown_method' }`.
 */
import { blocksError } from './block-checks';
import { SlackFiles } from './files';
import { fail, ok, optString, rateLimited, type SlackAnswer } from './protocol';
import { ChannelRateLimit, type ChannelRateLimitOptions } from './rate-limit';
import type { PostedMessage, SlackStore } from './store';
import { HomeTabs } from './views';

/** The part of a recorded call a method reads (when it came) and fills in (the message's `ts`). */
export interface CallMark {
  at: number;
  ts: string | undefined;
}

/** Who the workspace and its bot are, as the Web API reports them. */
export interface SlackIdentity {
  /** This server's own `http://host:port`. */
  origin: string;
  team: string;
  teamId: string;
  appId: string;
  enterpriseId: string | undefined;
  botUserId: string;
  botId: string;
  botName: string;
}

export interface WebApiOptions {
  /** Valid tokens. When omitted any non-empty token is accepted. */
  tokens?: string[];
  /** User groups and their members (`usergroups.users.list`), e.g. `{ S0LOCALOPS: ['U0LOCAL'] }`. */
  userGroups?: Record<string, string[]>;
  /**
   * Enforce Slack's per-channel posting limit on `chat.postMessage`, as Slack does: a post that comes
   * sooner than the limit allows answers HTTP 429 `ratelimited` with `Retry-After`. Off when omitted.
   */
  channelPace?: ChannelRateLimitOptions;
  /** Origin of the file upload URLs handed out (default this server's own URL); the rehearsal uses `https://files.slack.com`, routed here. */
  fileUploadOrigin?: string;
}

type Method = (args: Record<string, unknown>, call: CallMark, token: string) => SlackAnswer;

export class SlackWebApi {
  /** Each user's Home tab, as `views.publish` left it. */
  readonly homeTabs: HomeTabs;
  readonly files: SlackFiles;
  private tokens: Set<string> | undefined;
  /** Installed teams' tokens → their team; any other token posts as the server's own workspace. */
  private readonly tokenTeams = new Map<string, string>();
  private readonly userGroups: Map<string, string[]>;
  private readonly rateLimit: ChannelRateLimit | undefined;
  private readonly methods: Readonly<Record<string, Method>> = {
    'auth.test': () => this.authTest(),
    // `bridge doctor` reads the bot's app id here (auth.test's bot_id → bot.app_id).
    'bots.info': (args) => this.botInfo(args),
    'chat.postMessage': (args, call, token) => this.postMessage(args, call, token),
    'chat.update': (args, call) => this.updateMessage(args, call),
    'chat.postEphemeral': (args, call) => this.postEphemeral(args, call),
    'chat.delete': (args, call) => this.deleteMessage(args, call),
    'conversations.info': (args) => this.conversationInfo(args),
    'conversations.history': (args) => this.conversationHistory(args),
    'conversations.replies': (args) => this.conversationReplies(args),
    'usergroups.users.list': (args) => this.userGroupMembers(args),
    'files.getUploadURLExternal': (args) => this.files.uploadUrl(args),
    'files.completeUploadExternal': (args, call) => this.files.complete(args, call),
    'views.publish': (args) => this.homeTabs.publish(args),
  };

  constructor(
    private readonly store: SlackStore,
    private readonly identity: SlackIdentity,
    options: WebApiOptions,
  ) {
    this.setTokens(options.tokens);
    this.userGroups = new Map(Object.entries(options.userGroups ?? {}));
    this.rateLimit = options.channelPace ? new ChannelRateLimit(options.channelPace) : undefined;
    this.files = new SlackFiles(store, identity.origin, options.fileUploadOrigin ?? identity.origin);
    this.homeTabs = new HomeTabs(() => store.notify());
  }

  setTokens(tokens: string[] | undefined): void {
    this.tokens = tokens ? new Set(tokens) : undefined;
  }

  /** A token an install handed out (./oauth.ts): valid from now on, and what it posts is that team's. */
  acceptToken(token: string, teamId: string | undefined): void {
    this.tokens?.add(token);
    if (teamId !== undefined) this.tokenTeams.set(token, teamId);
  }

  /** Forgets the posting limit's per-channel credit and the Home tabs. */
  reset(): void {
    this.rateLimit?.clear();
    this.homeTabs.clear();
  }

  /** Answers one call; `call` is where a created/updated/deleted message's `ts` is noted. */
  dispatch(method: string, token: string | undefined, args: Record<string, unknown>, call: CallMark): SlackAnswer {
    if (token === undefined || token === '') return fail('not_authed');
    if (this.tokens && !this.tokens.has(token)) return fail('invalid_auth');
    const answer = Object.hasOwn(this.methods, method) ? this.methods[method] : undefined;
    return answer === undefined ? fail('unknown_method') : answer(args, call, token);
  }

  private authTest(): SlackAnswer {
    const { origin, team, teamId, botName, botUserId, botId, enterpriseId } = this.identity;
    return ok({
      url: `${origin}/`,
      team,
      user: botName,
      team_id: teamId,
      user_id: botUserId,
      bot_id: botId,
      ...(enterpriseId !== undefined ? { enterprise_id: enterpriseId } : {}),
      is_enterprise_install: false,
    });
  }

  private botInfo(args: Record<string, unknown>): SlackAnswer {
    const { botId, appId, botUserId, botName } = this.identity;
    if (optString(args.bot) !== botId) return fail('bot_not_found');
    return ok({ bot: { id: botId, app_id: appId, user_id: botUserId, name: botName, deleted: false } });
  }

  /** What Slack refuses in a message's blocks, and a message without text or blocks (`update`: it may change either alone). */
  private contentError(args: Record<string, unknown>, update = false): SlackAnswer | undefined {
    if (typeof args.blocks === 'string') return fail('invalid_blocks_format');
    const invalid = blocksError(args.blocks);
    if (invalid || update) return invalid;
    const text = optString(args.text);
    const blocks = Array.isArray(args.blocks) ? args.blocks : [];
    return (text === undefined || text.trim() === '') && blocks.length === 0 ? fail('no_text') : undefined;
  }

  private postMessage(args: Record<string, unknown>, call: CallMark, token: string): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    if (channel === '' || !this.store.channelExists(channel)) return fail('channel_not_found');
    if (this.store.archived.has(channel)) return fail('is_archived');
    if (!this.store.isMember(channel)) return fail('not_in_channel');
    const retryAfterSeconds = this.rateLimit?.take(channel, call.at);
    if (retryAfterSeconds !== undefined) return rateLimited(retryAfterSeconds);
    if (typeof args.metadata === 'string') return fail('invalid_metadata_format');
    const refused = this.contentError(args);
    if (refused) return refused;
    if ((optString(args.text)?.length ?? 0) > 40_000) return fail('msg_too_long');
    const message: PostedMessage = {
      channel,
      ts: this.store.nextTs(),
      thread_ts: optString(args.thread_ts),
      text: optString(args.text),
      blocks: Array.isArray(args.blocks) ? (args.blocks as unknown[]) : undefined,
      metadata: args.metadata,
      edited: false,
      ...(this.tokenTeams.has(token) ? { team: this.tokenTeams.get(token) } : {}),
    };
    this.store.posted.push(message);
    call.ts = message.ts;
    return ok({ channel, ts: message.ts, message: this.messageBody(message) });
  }

  private updateMessage(args: Record<string, unknown>, call: CallMark): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    const ts = optString(args.ts);
    const message = this.store.posted.find((m) => m.channel === channel && m.ts === ts);
    if (!message) return fail(this.store.channelExists(channel) ? 'message_not_found' : 'channel_not_found');
    const refused = this.contentError(args, true);
    if (refused) return refused;
    if (args.blocks !== undefined) message.blocks = args.blocks as unknown[];
    if (args.text !== undefined) message.text = optString(args.text);
    message.edited = true;
    call.ts = message.ts;
    return ok({ channel, ts: message.ts, text: message.text, message: this.messageBody(message) });
  }

  /** A reply only `user` sees in `channel` (kept with the command answers, shown "Only visible to you"). */
  private postEphemeral(args: Record<string, unknown>, call: CallMark): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    const refused = this.store.accessError(channel);
    if (refused) return fail(refused);
    const userId = optString(args.user);
    if (userId === undefined || userId === '') return fail('user_not_found');
    const invalid = this.contentError(args);
    if (invalid) return invalid;
    call.ts = this.store.nextTs();
    const blocks = Array.isArray(args.blocks) ? (args.blocks as unknown[]) : undefined;
    this.store.ephemeral.push({ channel, ts: call.ts, userId, text: optString(args.text), blocks });
    this.store.notify();
    return ok({ message_ts: call.ts });
  }

  private deleteMessage(args: Record<string, unknown>, call: CallMark): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    const ts = optString(args.ts);
    const index = this.store.posted.findIndex((m) => m.channel === channel && m.ts === ts);
    if (index < 0) return fail(this.store.channelExists(channel) ? 'message_not_found' : 'channel_not_found');
    this.store.posted.splice(index, 1);
    call.ts = ts;
    return ok({ channel, ts });
  }

  private conversationInfo(args: Record<string, unknown>): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    if (channel === '' || !this.store.channelExists(channel)) return fail('channel_not_found');
    const { archived } = this.store;
    const name = this.store.channelName(channel);
    const is_member = this.store.isMember(channel);
    return ok({ channel: { id: channel, name, is_channel: true, is_private: false, is_archived: archived.has(channel), is_member } });
  }

  /** The members of a user group (`usergroups.users.list`); `no_such_subgroup` for a group the options don't name. */
  private userGroupMembers(args: Record<string, unknown>): SlackAnswer {
    const members = this.userGroups.get(optString(args.usergroup) ?? '');
    return members === undefined ? fail('no_such_subgroup') : ok({ users: [...members] });
  }

  /** Top-level messages, newest first, from `oldest` on. */
  private conversationHistory(args: Record<string, unknown>): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    const oldest = Number(optString(args.oldest) ?? args.oldest ?? 0) || 0;
    const limit = Math.min(999, Number(args.limit ?? 100) || 100);
    const top = this.store.posted.filter(
      (m) => m.channel === channel && (m.thread_ts === undefined || m.thread_ts === m.ts) && Number(m.ts) >= oldest,
    );
    return this.listed(channel, args, top.reverse().slice(0, limit));
  }

  /** The parent and its replies, oldest first. */
  private conversationReplies(args: Record<string, unknown>): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    const ts = optString(args.ts);
    const thread = this.store.posted.filter((m) => m.channel === channel && (m.ts === ts || m.thread_ts === ts));
    if (this.store.accessError(channel) === undefined && !thread.some((m) => m.ts === ts)) return fail('thread_not_found');
    return this.listed(channel, args, thread);
  }

  /** Messages as a history call lists them, metadata only with include_all_metadata (as Slack does). */
  private listed(channel: string, args: Record<string, unknown>, messages: PostedMessage[]): SlackAnswer {
    const refused = this.store.accessError(channel);
    if (refused) return fail(refused);
    const withMetadata = args.include_all_metadata === true || args.include_all_metadata === 'true';
    const bodies = messages.map((m) => {
      const body = this.messageBody(m);
      if (!withMetadata) delete body['metadata'];
      return body;
    });
    return ok({ messages: bodies, has_more: false, response_metadata: { next_cursor: '' } });
  }

  private messageBody(message: PostedMessage): Record<string, unknown> {
    return {
      type: 'message',
      subtype: 'bot_message',
      user: this.identity.botUserId,
      bot_id: this.identity.botId,
      team: message.team ?? this.identity.teamId,
      ts: message.ts,
      ...(message.thread_ts !== undefined ? { thread_ts: message.thread_ts } : {}),
      text: message.text ?? '',
      ...(message.blocks !== undefined ? { blocks: message.blocks } : {}),
      ...(message.metadata !== undefined ? { metadata: message.metadata } : {}),
      ...(message.files !== undefined ? { files: message.files } : {}),
    };
  }
}
