/**
 * The Web API methods of the local Slack server, the ones the bridge and its CLI call: `auth.test`,
 * `bots.info`, `chat.postMessage` (with Slack's per-channel limit when `channelPace` is set),
 * `chat.update`, `chat.postEphemeral`, `chat.delete`, `conversations.info` (`is_member` true only where the bot is a member,
 * `is_archived` for archived channels), `conversations.history`, `conversations.replies`,
 * `usergroups.users.list`, and the file upload (`files.getUploadURLExternal`, the upload URL,
 * `files.completeUploadExternal`), `views.publish` (./views.ts). Anything else answers `{ ok: false, error: 'unknown_method' }`.
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { readBody, send } from '../http';
import { nativeBlockProblems } from '../../shared/slack-blocks/check';
import { isRecord } from '../../shared/util';
import { ChannelRateLimit, type ChannelRateLimitOptions } from './rate-limit';
import type { LocalSlackFile, PostedMessage, SlackStore } from './store';
import { HomeTabs } from './views';

/** Where the bytes of an upload go (`POST /_upload/<file id>`), and where they are served (`GET /_files/<file id>/<name>`). */
const FILE_UPLOAD_PATH = '/_upload/';
const FILE_DOWNLOAD_PATH = '/_files/';
export const MAX_BODY_BYTES = 5 * 1024 * 1024;

/** The part of a recorded call a method reads (when it came) and fills in (the message's `ts`). */
export interface CallMark {
  at: number;
  ts: string | undefined;
}

export interface SlackAnswer {
  status: number;
  body: Record<string, unknown> | string;
  headers?: Record<string, string>;
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

export class SlackWebApi {
  /** Each user's Home tab, as `views.publish` left it. */
  readonly homeTabs: HomeTabs;
  private tokens: Set<string> | undefined;
  /** Installed teams' tokens → their team; any other token posts as the server's own workspace. */
  private readonly tokenTeams = new Map<string, string>();
  private readonly userGroups: Map<string, string[]>;
  private readonly rateLimit: ChannelRateLimit | undefined;
  private readonly fileUploadOrigin: string | undefined;
  private readonly fileUploads = new Map<
    string,
    { name: string; length: number; altText: string | undefined; bytes?: Buffer; withToken?: boolean }
  >();

  constructor(
    private readonly store: SlackStore,
    private readonly identity: SlackIdentity,
    options: WebApiOptions,
  ) {
    this.setTokens(options.tokens);
    this.userGroups = new Map(Object.entries(options.userGroups ?? {}));
    this.rateLimit = options.channelPace ? new ChannelRateLimit(options.channelPace) : undefined;
    this.fileUploadOrigin = options.fileUploadOrigin;
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

  /** Forgets the posting limit's per-channel credit. */
  reset(): void {
    this.rateLimit?.clear();
    this.homeTabs.clear();
  }

  /** Answers one call; `call` is where a created/updated/deleted message's `ts` is noted. */
  dispatch(method: string, token: string | undefined, args: Record<string, unknown>, call: CallMark): SlackAnswer {
    const authError = this.checkToken(token);
    if (authError) return fail(authError);
    switch (method) {
      case 'auth.test':
        return ok({
          url: `${this.identity.origin}/`,
          team: this.identity.team,
          user: this.identity.botName,
          team_id: this.identity.teamId,
          user_id: this.identity.botUserId,
          bot_id: this.identity.botId,
          ...(this.identity.enterpriseId !== undefined ? { enterprise_id: this.identity.enterpriseId } : {}),
          is_enterprise_install: false,
        });
      case 'bots.info':
        // `bridge doctor` reads the bot's app id here (auth.test's bot_id → bot.app_id).
        return optString(args.bot) === this.identity.botId
          ? ok({
              bot: {
                id: this.identity.botId,
                app_id: this.identity.appId,
                user_id: this.identity.botUserId,
                name: this.identity.botName,
                deleted: false,
              },
            })
          : fail('bot_not_found');
      case 'chat.postMessage':
        return this.postMessage(args, call, token);
      case 'chat.update':
        return this.updateMessage(args, call);
      case 'chat.postEphemeral':
        return this.postEphemeral(args, call);
      case 'chat.delete':
        return this.deleteMessage(args, call);
      case 'conversations.info':
        return this.conversationInfo(args);
      case 'conversations.history':
        return this.conversationHistory(args);
      case 'conversations.replies':
        return this.conversationReplies(args);
      case 'usergroups.users.list':
        return this.userGroupMembers(args);
      case 'files.getUploadURLExternal':
        return this.fileUploadUrl(args);
      case 'files.completeUploadExternal':
        return this.completeFileUpload(args, call);
      case 'views.publish':
        return this.homeTabs.publish(args);
      default:
        return fail('unknown_method');
    }
  }
  /** Why the bot cannot read or write `channel` (it does not exist, or the bot is not in it); undefined when it can. */
  private unreadable(channel: string): SlackAnswer | undefined {
    if (!this.store.channelExists(channel)) return fail('channel_not_found');
    return this.store.isMember(channel) ? undefined : fail('not_in_channel');
  }

  private checkToken(token: string | undefined): string | undefined {
    if (token === undefined || token === '') return 'not_authed';
    if (this.tokens && !this.tokens.has(token)) return 'invalid_auth';
    return undefined;
  }

  private postMessage(args: Record<string, unknown>, call: CallMark, token: string | undefined): SlackAnswer {
    const rawChannel = optString(args.channel);
    if (!rawChannel) return fail('channel_not_found');
    const channel = this.store.channelId(rawChannel);
    if (!this.store.channelExists(channel)) return fail('channel_not_found');
    if (this.store.archived.has(channel)) return fail('is_archived');
    if (!this.store.isMember(channel)) return fail('not_in_channel');
    const retryAfterSeconds = this.rateLimit?.take(channel, call.at);
    if (retryAfterSeconds !== undefined) return rateLimited(retryAfterSeconds);
    if (typeof args.blocks === 'string') return fail('invalid_blocks_format');
    if (typeof args.metadata === 'string') return fail('invalid_metadata_format');
    const text = optString(args.text);
    const blocks = args.blocks;
    const invalid = blocksError(blocks);
    if (invalid) return invalid;
    if ((text === undefined || text.trim() === '') && (blocks === undefined || (Array.isArray(blocks) && blocks.length === 0))) {
      return fail('no_text');
    }
    if (text !== undefined && text.length > 40_000) return fail('msg_too_long');

    const ts = this.store.nextTs();
    const threadTs = optString(args.thread_ts);
    const message: PostedMessage = {
      channel,
      ts,
      thread_ts: threadTs,
      text,
      blocks: Array.isArray(blocks) ? (blocks as unknown[]) : undefined,
      metadata: args.metadata,
      edited: false,
      ...(token !== undefined && this.tokenTeams.has(token) ? { team: this.tokenTeams.get(token) } : {}),
    };
    this.store.posted.push(message);
    call.ts = ts;
    return ok({ channel, ts, message: this.messageBody(message) });
  }

  private updateMessage(args: Record<string, unknown>, call: CallMark): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    const ts = optString(args.ts);
    const message = this.store.posted.find((m) => m.channel === channel && m.ts === ts);
    if (!message) return fail(this.store.channelExists(channel) ? 'message_not_found' : 'channel_not_found');
    if (typeof args.blocks === 'string') return fail('invalid_blocks_format');
    const invalid = blocksError(args.blocks);
    if (invalid) return invalid;
    if (args.blocks !== undefined) message.blocks = args.blocks as unknown[];
    if (args.text !== undefined) message.text = optString(args.text);
    message.edited = true;
    call.ts = message.ts;
    return ok({ channel, ts: message.ts, text: message.text, message: this.messageBody(message) });
  }

  /** A reply only `user` sees in `channel` (kept with the command answers, shown "Only visible to you"). */
  private postEphemeral(args: Record<string, unknown>, call: CallMark): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    const unreadable = this.unreadable(channel);
    if (unreadable) return unreadable;
    const userId = optString(args.user);
    if (userId === undefined || userId === '') return fail('user_not_found');
    if (typeof args.blocks === 'string') return fail('invalid_blocks_format');
    const invalid = blocksError(args.blocks);
    if (invalid) return invalid;
    const text = optString(args.text);
    const blocks = Array.isArray(args.blocks) ? (args.blocks as unknown[]) : undefined;
    if ((text === undefined || text.trim() === '') && (blocks === undefined || blocks.length === 0)) return fail('no_text');
    const ts = this.store.nextTs();
    this.store.ephemeral.push({ channel, ts, userId, text, blocks });
    call.ts = ts;
    this.store.notify();
    return ok({ message_ts: ts });
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
    const raw = optString(args.channel);
    if (!raw) return fail('channel_not_found');
    const channel = this.store.channelId(raw);
    if (!this.store.channelExists(channel)) return fail('channel_not_found');
    return ok({
      channel: {
        id: channel,
        name: this.store.channelName(channel),
        is_channel: true,
        is_private: false,
        is_archived: this.store.archived.has(channel),
        is_member: this.store.isMember(channel),
      },
    });
  }

  /** The members of a user group (`usergroups.users.list`); `no_such_subgroup` for a group the options don't name. */
  private userGroupMembers(args: Record<string, unknown>): SlackAnswer {
    const members = this.userGroups.get(optString(args.usergroup) ?? '');
    return members === undefined ? fail('no_such_subgroup') : ok({ users: [...members] });
  }

  /** Top-level messages, newest first, from `oldest` on (metadata only with include_all_metadata, as Slack does). */
  private conversationHistory(args: Record<string, unknown>): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    const unreadable = this.unreadable(channel);
    if (unreadable) return unreadable;
    const oldest = Number(optString(args.oldest) ?? args.oldest ?? 0) || 0;
    const limit = Math.min(999, Number(args.limit ?? 100) || 100);
    const withMetadata = args.include_all_metadata === true || args.include_all_metadata === 'true';
    const messages = this.store.posted
      .filter((m) => m.channel === channel && (m.thread_ts === undefined || m.thread_ts === m.ts) && Number(m.ts) >= oldest)
      .reverse()
      .slice(0, limit)
      .map((m) => this.listedBody(m, withMetadata));
    return ok({ messages, has_more: false, response_metadata: { next_cursor: '' } });
  }

  /** The parent and its replies, oldest first. */
  private conversationReplies(args: Record<string, unknown>): SlackAnswer {
    const channel = this.store.channelId(optString(args.channel) ?? '');
    const unreadable = this.unreadable(channel);
    if (unreadable) return unreadable;
    const ts = optString(args.ts);
    const parent = this.store.posted.find((m) => m.channel === channel && m.ts === ts);
    if (!parent) return fail('thread_not_found');
    const withMetadata = args.include_all_metadata === true || args.include_all_metadata === 'true';
    const thread = this.store.posted.filter((m) => m.channel === channel && (m.ts === ts || m.thread_ts === ts));
    return ok({ messages: thread.map((m) => this.listedBody(m, withMetadata)), has_more: false, response_metadata: { next_cursor: '' } });
  }

  private listedBody(message: PostedMessage, withMetadata: boolean): Record<string, unknown> {
    const body = this.messageBody(message);
    if (!withMetadata) delete body['metadata'];
    return body;
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

  // -- files (the trend charts): files.getUploadURLExternal, the upload URL, files.completeUploadExternal --

  /** An upload's bytes (undefined until sent), and whether they came with an Authorization header (they need none). */
  fileUpload(fileId: string): { bytes: Buffer | undefined; withToken: boolean } | undefined {
    const upload = this.fileUploads.get(fileId);
    return upload && { bytes: upload.bytes, withToken: upload.withToken === true };
  }

  /** Takes the bytes of an upload and serves uploaded files; false for any other path. */
  async serveFiles(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<boolean> {
    if (url.pathname.startsWith(FILE_UPLOAD_PATH) && req.method === 'POST') {
      const upload = this.fileUploads.get(url.pathname.slice(FILE_UPLOAD_PATH.length));
      const bytes = await readBody(req, MAX_BODY_BYTES);
      // Slack checks the size announced in files.getUploadURLExternal; a mismatch is a client bug.
      if (upload === undefined) send(res, 404, 'no such upload');
      else if (bytes.length !== upload.length) send(res, 400, `length ${bytes.length} is not the ${upload.length} announced`);
      else {
        Object.assign(upload, { bytes, withToken: req.headers.authorization !== undefined });
        send(res, 200, `OK - ${bytes.length}`);
      }
      return true;
    }
    if (url.pathname.startsWith(FILE_DOWNLOAD_PATH) && req.method === 'GET') {
      const stored = this.fileUploads.get(url.pathname.slice(FILE_DOWNLOAD_PATH.length).split('/')[0] ?? '');
      if (stored?.bytes === undefined) send(res, 404, 'no such file');
      else send(res, 200, stored.bytes, { 'content-type': mimetypeOf(stored.name), 'cache-control': 'no-store' });
      return true;
    }
    return false;
  }

  private fileUploadUrl(args: Record<string, unknown>): SlackAnswer {
    const name = optString(args.filename);
    const length = Number(optString(args.length));
    if (name === undefined || name.trim() === '' || !Number.isInteger(length) || length <= 0) return fail('invalid_arguments');
    const altText = optString(args.alt_txt);
    if (altText !== undefined && altText.length > 1000) return fail('alt_txt_too_large');
    const id = `F${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`;
    this.fileUploads.set(id, { name, length, altText });
    const origin = this.fileUploadOrigin ?? this.identity.origin;
    return ok({ upload_url: `${origin}${FILE_UPLOAD_PATH}${id}`, file_id: id });
  }

  /** Shares uploaded files into a channel (or thread) as one message carrying a `files` list, as Slack shows it. */
  private completeFileUpload(args: Record<string, unknown>, call: CallMark): SlackAnswer {
    let listed: unknown = args.files;
    try {
      if (typeof listed === 'string') listed = JSON.parse(listed);
    } catch {
      return fail('invalid_arguments');
    }
    const entries = Array.isArray(listed) ? listed.filter(isRecord) : [];
    if (entries.length === 0) return fail('invalid_arguments');
    const channel = this.store.channelId(optString(args.channel_id) ?? '');
    if (channel === '') return fail('channel_not_found');
    const unreadable = this.unreadable(channel);
    if (unreadable) return unreadable;
    const threadTs = optString(args.thread_ts);
    if (threadTs !== undefined && !this.store.posted.some((m) => m.channel === channel && m.ts === threadTs))
      return fail('thread_not_found');
    const files: LocalSlackFile[] = [];
    for (const entry of entries) {
      const id = optString(entry.id) ?? '';
      const stored = this.fileUploads.get(id);
      if (stored?.bytes === undefined) return fail('file_not_found');
      const name = stored.name;
      const url_private = `${this.identity.origin}${FILE_DOWNLOAD_PATH}${id}/${encodeURIComponent(name)}`;
      const title = optString(entry.title) ?? name;
      files.push({ id, name, title, mimetype: mimetypeOf(name), size: stored.bytes.length, alt_txt: stored.altText, url_private });
    }
    const message: PostedMessage = {
      channel,
      ts: this.store.nextTs(),
      thread_ts: threadTs,
      text: optString(args.initial_comment) ?? '',
      blocks: undefined,
      metadata: undefined,
      edited: false,
      files,
    };
    this.store.posted.push(message);
    call.ts = message.ts;
    this.store.notify();
    return ok({ files: files.map((f) => ({ id: f.id, title: f.title })) });
  }
}

export function ok(fields: Record<string, unknown>): SlackAnswer {
  return { status: 200, body: { ok: true, ...fields } };
}

export function fail(error: string, extra: Record<string, unknown> = {}): SlackAnswer {
  return { status: 200, body: { ok: false, error, ...extra } };
}

/** Slack's answer to a call over its rate limit. */
export function rateLimited(retryAfterSeconds: number): SlackAnswer {
  return { status: 429, body: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': String(retryAfterSeconds) } };
}

/** Nested fields WebClient JSON-encodes in form bodies. */
const JSON_FIELDS = new Set(['blocks', 'attachments', 'metadata']);

export function decodeArgs(contentType: string | undefined, raw: string, query: URLSearchParams): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [key, value] of query) args[key] = value;
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json') {
    if (raw.trim() === '') return args;
    const parsed: unknown = JSON.parse(raw);
    if (!isRecord(parsed)) throw new Error('JSON body is not an object');
    return { ...args, ...parsed };
  }
  if (type === '' || type === 'application/x-www-form-urlencoded') {
    for (const [key, value] of new URLSearchParams(raw)) {
      if (JSON_FIELDS.has(key)) {
        try {
          args[key] = JSON.parse(value) as unknown;
        } catch {
          args[key] = value; // left as a string: the method answers invalid_*_format
        }
      } else {
        args[key] = value;
      }
    }
    return args;
  }
  throw new Error(`unsupported content type ${type}`);
}

export function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match?.[1];
}

function mimetypeOf(name: string): string {
  return /\.png$/i.test(name) ? 'image/png' : 'application/octet-stream';
}

export function optString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

export function optBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === '1' || value === 1) return true;
  if (value === 'false' || value === '0' || value === 0) return false;
  return undefined;
}

/** Slack's answer to blocks it will not take: the problems in `errors` and, as `[ERROR]` lines, in `response_metadata`. */
export function invalidBlocks(problems: readonly string[]): SlackAnswer {
  return fail('invalid_blocks', { errors: [...problems], response_metadata: { messages: problems.map((p) => `[ERROR] ${p}`) } });
}

/** The blocks a call carries: its `blocks`, or its view's (`views.publish`); none when it has neither. */
export function blocksOfCall(args: Record<string, unknown>): readonly unknown[] {
  if (Array.isArray(args.blocks)) return args.blocks as unknown[];
  let view = args.view;
  try {
    if (typeof view === 'string') view = JSON.parse(view);
  } catch {
    return [];
  }
  return isRecord(view) && Array.isArray(view.blocks) ? (view.blocks as unknown[]) : [];
}

/** Slack's `invalid_blocks` answer for blocks that break its limits; undefined for valid or absent blocks. */
export function blocksError(blocks: unknown): SlackAnswer | undefined {
  const problems = blocks === undefined ? [] : validateBlocks(blocks);
  return problems.length > 0 ? invalidBlocks(problems) : undefined;
}

/** A light version of Slack's Block Kit validation: the limits a bridge bug is likely to hit, and every limit of the chart and table blocks. */
function validateBlocks(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return ['blocks must be an array [json-pointer:/blocks]'];
  const problems: string[] = nativeBlockProblems(blocks);
  if (blocks.length > 50) problems.push('no more than 50 items allowed [json-pointer:/blocks]');
  blocks.forEach((block: unknown, i) => {
    const at = `[json-pointer:/blocks/${i}]`;
    if (!isRecord(block) || typeof block.type !== 'string') {
      problems.push(`missing required field: type ${at}`);
      return;
    }
    const text = isRecord(block.text) ? block.text : undefined;
    const textValue = text && typeof text.text === 'string' ? text.text : undefined;
    switch (block.type) {
      case 'header':
        if (!textValue) problems.push(`must be more than 0 characters [json-pointer:/blocks/${i}/text/text]`);
        else if (textValue.length > 150) problems.push(`must be less than 151 characters [json-pointer:/blocks/${i}/text/text]`);
        if (text && text.type !== 'plain_text') problems.push(`must be plain_text [json-pointer:/blocks/${i}/text/type]`);
        break;
      case 'section': {
        const fields = Array.isArray(block.fields) ? (block.fields as unknown[]) : undefined;
        if (textValue === undefined && !fields) problems.push(`must provide text or fields ${at}`);
        if (textValue !== undefined && textValue.length === 0)
          problems.push(`must be more than 0 characters [json-pointer:/blocks/${i}/text/text]`);
        if (textValue !== undefined && textValue.length > 3000)
          problems.push(`must be less than 3001 characters [json-pointer:/blocks/${i}/text/text]`);
        if (fields && fields.length > 10) problems.push(`no more than 10 items allowed [json-pointer:/blocks/${i}/fields]`);
        fields?.forEach((field: unknown, j) => {
          const value = isRecord(field) && typeof field.text === 'string' ? field.text : '';
          if (value.length === 0) problems.push(`must be more than 0 characters [json-pointer:/blocks/${i}/fields/${j}/text]`);
          if (value.length > 2000) problems.push(`must be less than 2001 characters [json-pointer:/blocks/${i}/fields/${j}/text]`);
        });
        break;
      }
      case 'context': {
        const elements = Array.isArray(block.elements) ? (block.elements as unknown[]) : [];
        if (elements.length === 0) problems.push(`must provide elements [json-pointer:/blocks/${i}/elements]`);
        if (elements.length > 10) problems.push(`no more than 10 items allowed [json-pointer:/blocks/${i}/elements]`);
        break;
      }
      default:
        break;
    }
  });
  return problems;
}
