/**
 * A local stand-in for Slack's Web API, for the local stack and integration tests.
 *
 * `new WebClient(token, { slackApiUrl: server.apiUrl })` from `@slack/web-api` talks to it unchanged:
 * the client POSTs `application/x-www-form-urlencoded` bodies to `<apiUrl><method>` with nested fields
 * (`blocks`, `metadata`) JSON-encoded, and the token in `Authorization: Bearer …`. JSON bodies and a
 * `token` body field are accepted as well.
 *
 * Implemented methods, the ones the bridge and its CLI call: `auth.test`, `chat.postMessage`,
 * `chat.update`, `chat.delete`, `conversations.info` (`is_member` true only where the bot is a member,
 * `is_archived` for `archivedChannels`), `conversations.history`, `conversations.replies`,
 * `usergroups.users.list` (the `userGroups` option).
 * Anything else answers `{ ok: false, error: 'unknown_method' }`.
 *
 * Every call is recorded (`calls()`), successful posts are kept (`messages()`), and faults can be
 * injected per method and channel (`injectFault`). With `channelPace` it enforces Slack's per-channel
 * posting limit (429 `ratelimited` with `Retry-After`).
 *
 * It also plays Slack towards the app: with `connectApp`, `sendCommand` and `clickButton` deliver a
 * slash command or a button click to the bridge signed with the app's signing secret, hand out a
 * response_url, and apply the answers as Slack does (ephemeral replies in `ephemerals()`, in-channel
 * posts, replacing or deleting the clicked message). The preview page uses them.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SLACK_APP_DEFAULTS } from '../shared/contracts';
import { closeServer, listen, readBody, send, sendJson } from './http';
import {
  blockActionsForm,
  commandForm,
  deliverSigned,
  findButton,
  readReply,
  LOCAL_SLACK_APP_ID,
  LOCAL_SLACK_TEAM_ID,
  type AppAnswer,
  type AppReply,
  type SlackAppTarget,
  type SlackSender,
  type SlackUser,
} from './slack-app-delivery';
import { isRecord, sleep } from '../shared/util';

// ---------------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------------

/** Path of the fault control endpoint (local testing: `bridge slack outage on|off`). */
export const FAULTS_PATH = '/_faults';
/** Where the local server takes response_url answers (`/response_url/<id>`). */
export const RESPONSE_URL_PATH = '/response_url/';

export type FaultKind =
  /** HTTP 429 with a `Retry-After` header and `{ ok: false, error: 'ratelimited' }`. */
  | 'ratelimited'
  /** HTTP 500 with a non-JSON body. */
  | 'server_error'
  /** HTTP 200 `{ ok: false, error: <error> }`, e.g. `channel_not_found`. */
  | 'slack_error'
  /** Waits `latencyMs` (default 1000) and then answers normally: for client timeout tests. */
  | 'delay';

export interface FaultSpec {
  /** Only calls of this method (e.g. `chat.postMessage`); any method when omitted. */
  method?: string;
  /** Only calls for this channel (a leading `#` is ignored); any channel when omitted. */
  channel?: string;
  /** How many matching calls the fault hits; until `clearFaults()` when omitted. */
  times?: number;
  kind: FaultKind;
  /** The error code for `slack_error` (default `internal_error`). */
  error?: string;
  /** The `Retry-After` seconds for `ratelimited` (default 1). */
  retryAfterSeconds?: number;
  /** Extra latency before this faulty answer (and the whole wait for `delay`). */
  latencyMs?: number;
}

export interface RecordedCall {
  method: string;
  /** The token the call carried (header or body); `undefined` when none. */
  token: string | undefined;
  channel: string | undefined;
  text: string | undefined;
  blocks: unknown[] | undefined;
  thread_ts: string | undefined;
  unfurl_links: boolean | undefined;
  unfurl_media: boolean | undefined;
  parse: string | undefined;
  link_names: boolean | string | undefined;
  metadata: unknown;
  /** Epoch ms when the call arrived. */
  at: number;
  /** Every decoded argument except the token. */
  args: Record<string, unknown>;
  /** The HTTP status answered. */
  status: number;
  /** Whether the answer was `ok: true`. */
  ok: boolean;
  /** The Slack error code answered, if any. */
  error: string | undefined;
  /** The `ts` of the message created/updated/deleted, when there is one. */
  ts: string | undefined;
}

/** A reply only its user sees (Slack's ephemeral message): command answers and ephemeral response_url answers. */
export interface EphemeralMessage {
  channel: string;
  ts: string;
  userId: string;
  text: string | undefined;
  blocks: unknown[] | undefined;
}

/** What Slack remembers of a response_url it handed out: where its answers go. */
interface ResponseTarget {
  channel: string;
  userId: string;
  /** The message a button was on (answers may replace or delete it). */
  messageTs?: string | undefined;
  /** The button was on an ephemeral message (a read's answer with "Share in channel"). */
  ephemeral?: boolean | undefined;
}

export interface PostedMessage {
  channel: string;
  ts: string;
  thread_ts: string | undefined;
  text: string | undefined;
  blocks: unknown[] | undefined;
  metadata: unknown;
  /** Set when `chat.update` changed the message. */
  edited: boolean;
  /** Files shared with the message (files.completeUploadExternal). */
  files?: LocalSlackFile[] | undefined;
}

/** A file as Slack lists it on its message; `url_private` serves the bytes from this server. */
export interface LocalSlackFile {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  size: number;
  alt_txt: string | undefined;
  url_private: string;
}

export interface LocalSlackServerOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Valid tokens. When omitted any non-empty token is accepted. */
  tokens?: string[];
  /** Channels the bot is a member of; `'all'` (default) means every channel. A leading `#` is ignored. */
  memberChannels?: string[] | 'all';
  /**
   * Channels that exist. When given, any other channel (not also in `memberChannels`) answers
   * `channel_not_found`. When omitted every channel exists.
   */
  knownChannels?: string[];
  /** Channels that are archived: `conversations.info` says `is_archived`, posts answer `is_archived`. */
  archivedChannels?: string[];
  /**
   * Channel id → name, as a workspace has them: a post to `#name` (or `name`) lands in the channel's id,
   * commands and clicks report the id, `conversations.info` and the preview show the name. Any other
   * channel is its own id.
   */
  channelNames?: Record<string, string>;
  /** User groups and their members (`usergroups.users.list`), e.g. `{ S0LOCALOPS: ['U0LOCAL'] }`. */
  userGroups?: Record<string, string[]>;
  /** Latency added to every call (ms). */
  latencyMs?: number;
  /**
   * Enforce Slack's per-channel posting limit on `chat.postMessage`, as Slack does: a post that comes
   * sooner than the limit allows answers HTTP 429 `ratelimited` with `Retry-After`. Off when omitted.
   */
  channelPace?: ChannelRateLimitOptions;
  /** Called after each successful `chat.postMessage` with a terminal rendering of the message. */
  onMessage?: (rendered: string, call: RecordedCall) => void;
  /** Appends one JSON line per API call: `{ at, method, channel, text, blocks, thread_ts, ok, error, ts }`. */
  logFile?: string;
  /**
   * Origin of the response_urls handed out (default this server's own URL). The deploy rehearsal
   * uses Slack's `https://hooks.slack.com`, which the deployed function accepts, and routes it here.
   */
  responseUrlOrigin?: string;
  /** Origin of the file upload URLs handed out (default this server's own URL); the rehearsal uses `https://files.slack.com`, routed here. */
  fileUploadOrigin?: string;
  team?: string;
  teamId?: string;
  /** The app's id (`api_app_id`) the commands and clicks carry; default LOCAL_SLACK_APP_ID. */
  appId?: string;
  /** Enterprise Grid org of the workspace (auth.test's `enterprise_id`, the `enterprise_id` of what it sends); none by default. */
  enterpriseId?: string;
  botUserId?: string;
  botId?: string;
  botName?: string;
}

interface ActiveFault {
  spec: FaultSpec;
  remaining: number;
}

interface SlackAnswer {
  status: number;
  body: Record<string, unknown> | string;
  headers?: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------------

const MAX_BODY_BYTES = 5 * 1024 * 1024;
/** Who types commands and clicks buttons in the local workspace. */
const LOCAL_USER: SlackUser = { id: 'U0LOCAL', name: 'you' };

export class LocalSlackServer {
  readonly host: string;
  readonly port: number;
  /** Pass as `slackApiUrl` to `WebClient` (ends with a slash). */
  readonly apiUrl: string;
  readonly team: string;
  readonly teamId: string;
  readonly appId: string;
  private readonly responseUrlOrigin: string | undefined;
  private readonly fileUploadOrigin: string | undefined;
  readonly botUserId: string;
  readonly botId: string;
  readonly botName: string;

  private readonly recorded: RecordedCall[] = [];
  private readonly posted: PostedMessage[] = [];
  private faults: ActiveFault[] = [];
  /** Answers the bridge sent to response_url paths (deferred slash commands), oldest first. */
  readonly responses: { path: string; body: string }[] = [];
  private tokens: Set<string> | undefined;
  private members: Set<string> | 'all';
  private readonly archived: Set<string>;
  private readonly userGroups: Map<string, string[]>;
  private readonly known: Set<string> | undefined;
  /** Channel id → name (`channelNames`), and back. */
  private readonly channelNames: Map<string, string>;
  private readonly idsByName: Map<string, string>;
  private latencyMs: number;
  private lastTsMicros = 0;
  private app: SlackAppTarget | undefined;
  private readonly responseTargets = new Map<string, ResponseTarget>();
  private readonly ephemeral: EphemeralMessage[] = [];
  private readonly rateLimit: ChannelRateLimit | undefined;
  private closed = false;
  private readonly listeners = new Set<() => void>();

  private constructor(
    private readonly server: http.Server,
    address: AddressInfo,
    private readonly options: LocalSlackServerOptions,
  ) {
    this.host = address.address.includes(':') ? `[${address.address}]` : address.address;
    this.port = address.port;
    this.apiUrl = `http://${this.host}:${this.port}/api/`;
    this.team = options.team ?? 'Local Workspace';
    this.teamId = options.teamId ?? LOCAL_SLACK_TEAM_ID;
    this.appId = options.appId ?? LOCAL_SLACK_APP_ID;
    this.responseUrlOrigin = options.responseUrlOrigin;
    this.fileUploadOrigin = options.fileUploadOrigin;
    this.botUserId = options.botUserId ?? 'U0LOCALBOT';
    this.botId = options.botId ?? 'B0LOCALBOT';
    this.botName = options.botName ?? 'visibility-bridge';
    this.tokens = options.tokens ? new Set(options.tokens) : undefined;
    this.channelNames = new Map(Object.entries(options.channelNames ?? {}));
    this.idsByName = new Map([...this.channelNames].map(([id, name]) => [name, id]));
    const members = options.memberChannels ?? 'all';
    this.members = members === 'all' ? 'all' : new Set(members.map((c) => this.channelId(c)));
    this.known = options.knownChannels ? new Set(options.knownChannels.map((c) => this.channelId(c))) : undefined;
    this.archived = new Set((options.archivedChannels ?? []).map((c) => this.channelId(c)));
    this.userGroups = new Map(Object.entries(options.userGroups ?? {}));
    this.latencyMs = options.latencyMs ?? 0;
    this.rateLimit = options.channelPace ? new ChannelRateLimit(options.channelPace) : undefined;
  }

  static async start(options: LocalSlackServerOptions = {}): Promise<LocalSlackServer> {
    const server = http.createServer();
    const host = options.host ?? '127.0.0.1';
    await listen(server, options.port, host);
    server.unref();
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('LocalSlackServer: no TCP address');
    const instance = new LocalSlackServer(server, address, options);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      instance.handle(req, res).catch((err: unknown) => {
        const text = `local slack server error: ${err instanceof Error ? err.message : String(err)}`;
        send(res, 500, text, { 'content-type': 'text/plain' });
      });
    });
    return instance;
  }

  /** Stops listening and closes every open connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await closeServer(this.server);
  }

  // -- inspection --------------------------------------------------------------------------------

  /** Every call received, oldest first (copies). */
  calls(method?: string): RecordedCall[] {
    return this.recorded.filter((c) => method === undefined || c.method === method).map((c) => ({ ...c }));
  }

  /** The channel's id: `#name` or `name` of a channel in `channelNames` is its id, as Slack resolves it; else the bare value. */
  channelId(channel: string): string {
    const bare = normalizeChannel(channel);
    return this.idsByName.get(bare) ?? bare;
  }

  /** The channel's name as the workspace shows it (its id when it has none). */
  channelName(channel: string): string {
    const id = this.channelId(channel);
    return this.channelNames.get(id) ?? id;
  }

  /** Every channel with a name (`channelNames`), as id → name. */
  namedChannels(): Record<string, string> {
    return Object.fromEntries(this.channelNames);
  }

  /** Messages currently posted (deleted ones removed), oldest first (copies). */
  messages(channel?: string): PostedMessage[] {
    const wanted = channel === undefined ? undefined : this.channelId(channel);
    return this.posted.filter((m) => wanted === undefined || m.channel === wanted).map((m) => ({ ...m }));
  }

  /** All posted messages rendered as text, replies indented under their parents. */
  transcript(channel?: string): string {
    return renderConversation(this.messages(channel));
  }

  /** Calls `listener` after every change to `messages()` (post, update, delete, reset); returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Ephemeral replies (only their user sees them), oldest first (copies). */
  ephemerals(channel?: string): EphemeralMessage[] {
    const wanted = channel === undefined ? undefined : this.channelId(channel);
    return this.ephemeral.filter((m) => wanted === undefined || m.channel === wanted).map((m) => ({ ...m }));
  }

  // -- the Slack app: deliveries to the bridge, as Slack makes them ---------------------------------

  /** Where slash commands and button clicks go, and the signing secret (the app's settings in Slack). */
  connectApp(target: SlackAppTarget): void {
    this.app = target;
  }

  /**
   * A user types `line` in `channel`: the command is signed and POSTed to the app's commands URL, and
   * its answer shown as Slack shows it (ephemeral unless `in_channel`); later answers to its
   * response_url too.
   */
  async sendCommand(input: {
    channel: string;
    line: string;
    user?: SlackUser;
    slash?: string;
    /** Another workspace, org or app than the local one (tests of what the bridge refuses). */
    from?: Partial<SlackSender>;
  }): Promise<AppAnswer> {
    const app = this.requireApp();
    const channel = this.channelId(input.channel);
    const user = input.user ?? LOCAL_USER;
    const responseUrl = this.issueResponseUrl({ channel, userId: user.id });
    const form = commandForm({
      line: input.line,
      slash: input.slash ?? SLACK_APP_DEFAULTS.command,
      channel,
      user,
      teamId: input.from?.teamId ?? this.teamId,
      appId: input.from?.appId ?? this.appId,
      enterpriseId: input.from?.enterpriseId ?? this.options.enterpriseId,
      responseUrl,
    });
    const answer = await deliverSigned(app.commandsUrl, app.signingSecret, form, Date.now());
    const reply = answer.status === 200 ? readReply(answer.body) : undefined;
    if (reply) this.applyReply({ channel, userId: user.id }, reply);
    return answer;
  }

  /**
   * A user clicks the button `actionId` on the message `ts` (posted, or an ephemeral one such as a
   * read's answer with "Share in channel"): a signed `block_actions` to the interactions URL.
   */
  async clickButton(input: {
    channel: string;
    ts: string;
    actionId: string;
    user?: SlackUser;
    /** Another workspace, org or app than the local one. */
    from?: Partial<SlackSender>;
    /** Where the click is reported: another channel (a forwarded copy of the message), or null (a payload without `channel`). */
    clickedIn?: string | null;
  }): Promise<AppAnswer> {
    const app = this.requireApp();
    const channel = this.channelId(input.channel);
    const posted = this.posted.find((m) => m.channel === channel && m.ts === input.ts);
    const ephemeral = posted ? undefined : this.ephemeral.find((m) => m.channel === channel && m.ts === input.ts);
    const message = posted ?? ephemeral;
    if (!message) throw new Error(`no message ${input.ts} in #${channel}`);
    const button = findButton(message.blocks ?? [], input.actionId);
    if (!button) throw new Error(`message ${input.ts} in #${channel} has no button ${input.actionId}`);
    const user = input.user ?? LOCAL_USER;
    if (ephemeral && ephemeral.userId !== user.id)
      throw new Error(`message ${input.ts} in #${channel} is visible only to ${ephemeral.userId}`);
    const clickedIn = input.clickedIn === undefined ? channel : input.clickedIn === null ? null : this.channelId(input.clickedIn);
    // A click elsewhere is on a copy of the message: answers go to that channel, never change the original.
    const responseUrl = this.issueResponseUrl(
      clickedIn === channel
        ? { channel, userId: user.id, messageTs: message.ts, ephemeral: ephemeral !== undefined }
        : { channel: clickedIn ?? channel, userId: user.id },
    );
    const delivery = {
      channel: clickedIn,
      user,
      teamId: input.from?.teamId ?? this.teamId,
      userTeamId: input.from?.userTeamId,
      appId: input.from?.appId ?? this.appId,
      enterpriseId: input.from?.enterpriseId ?? this.options.enterpriseId,
      responseUrl,
      button,
    };
    const form = blockActionsForm(
      { ...delivery, message: { ts: message.ts, text: message.text, blocks: message.blocks ?? [] } },
      Date.now(),
    );
    return deliverSigned(app.interactionsUrl, app.signingSecret, form, Date.now());
  }

  private requireApp(): SlackAppTarget {
    if (!this.app) throw new Error('no Slack app is connected to the local Slack server (connectApp)');
    return this.app;
  }

  private issueResponseUrl(target: ResponseTarget): string {
    const id = randomUUID();
    this.responseTargets.set(id, target);
    return `${this.responseUrlOrigin ?? `http://${this.host}:${this.port}`}${RESPONSE_URL_PATH}${id}`;
  }

  /** An answer as Slack applies it: delete or replace the clicked message, post in the channel, or show only to its user. */
  private applyReply(target: ResponseTarget, reply: AppReply): void {
    if (target.ephemeral && this.applyToEphemeral(target, reply)) return;
    const index =
      target.messageTs === undefined || target.ephemeral
        ? -1
        : this.posted.findIndex((m) => m.channel === target.channel && m.ts === target.messageTs);
    const original = this.posted[index];
    if (reply.deleteOriginal && original) {
      this.posted.splice(index, 1);
    } else if (reply.replaceOriginal && original) {
      original.text = reply.text;
      original.blocks = reply.blocks;
      original.edited = true;
    } else if (reply.responseType === 'in_channel') {
      const message = {
        channel: target.channel,
        ts: this.nextTs(),
        thread_ts: undefined,
        text: reply.text,
        blocks: reply.blocks,
        metadata: undefined,
        edited: false,
      };
      this.posted.push(message);
    } else {
      this.ephemeral.push({ channel: target.channel, ts: this.nextTs(), userId: target.userId, text: reply.text, blocks: reply.blocks });
    }
    this.notify();
  }

  /** An answer to a click on an ephemeral message that deletes or replaces it; false when the answer does neither. */
  private applyToEphemeral(target: ResponseTarget, reply: AppReply): boolean {
    if (!reply.deleteOriginal && !reply.replaceOriginal) return false;
    const index = this.ephemeral.findIndex((m) => m.channel === target.channel && m.ts === target.messageTs);
    const original = this.ephemeral[index];
    if (original === undefined) return true;
    if (reply.deleteOriginal) this.ephemeral.splice(index, 1);
    else Object.assign(original, { text: reply.text, blocks: reply.blocks });
    this.notify();
    return true;
  }

  /** `/invite @bot` in `channel`: the bot becomes a member (it already is of every channel when `memberChannels` is `'all'`). */
  inviteBot(channel: string): void {
    if (this.members !== 'all') this.members.add(this.channelId(channel));
  }

  /** Forgets recorded calls and messages and clears faults. Tokens and memberships stay. */
  reset(): void {
    this.recorded.length = 0;
    this.posted.length = 0;
    this.faults = [];
    this.rateLimit?.clear();
    this.ephemeral.length = 0;
    this.responseTargets.clear();
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // A watcher (the browser preview) must not break the API.
      }
    }
  }

  // -- configuration -----------------------------------------------------------------------------

  injectFault(spec: FaultSpec): void {
    this.faults.push({ spec: { ...spec }, remaining: spec.times ?? Number.POSITIVE_INFINITY });
  }

  clearFaults(): void {
    this.faults = [];
  }

  setLatencyMs(ms: number): void {
    this.latencyMs = Math.max(0, ms);
  }

  setTokens(tokens: string[] | undefined): void {
    this.tokens = tokens ? new Set(tokens) : undefined;
  }

  // -- request handling --------------------------------------------------------------------------

  /**
   * `POST /_faults {kind, method?, channel?, times?, error?}` makes Slack fail from outside the process
   * (`bridge slack outage on`); `DELETE /_faults` heals it. Local testing only, like the rest of this server.
   */
  private controlFaults(method: string, raw: string, res: http.ServerResponse): void {
    if (method === 'DELETE') {
      this.clearFaults();
      respond(res, { status: 200, body: { ok: true } });
      return;
    }
    let spec: unknown;
    try {
      spec = JSON.parse(raw);
    } catch {
      spec = undefined;
    }
    const kind = (spec as { kind?: unknown } | undefined)?.kind;
    if (method !== 'POST' || (kind !== 'ratelimited' && kind !== 'server_error' && kind !== 'slack_error' && kind !== 'delay')) {
      respond(res, { status: 400, body: { ok: false, error: 'POST a JSON fault such as {"kind":"server_error"}, or DELETE to clear' } });
      return;
    }
    this.injectFault(spec as FaultSpec);
    respond(res, { status: 200, body: { ok: true } });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/api\/([A-Za-z0-9_.]+)$/.exec(url.pathname);
    if (await this.serveFiles(req, res, url)) return;
    const raw = (await readBody(req, MAX_BODY_BYTES)).toString('utf8');
    if (url.pathname === FAULTS_PATH) {
      this.controlFaults(req.method ?? 'GET', raw, res);
      return;
    }
    if (url.pathname.startsWith(RESPONSE_URL_PATH) && req.method === 'POST') {
      // Slack's response_url: the bridge answers deferred slash commands and button clicks here.
      this.responses.push({ path: url.pathname, body: raw });
      const target = this.responseTargets.get(url.pathname.slice(RESPONSE_URL_PATH.length));
      const reply = readReply(raw);
      if (target && reply) this.applyReply(target, reply);
      respond(res, { status: 200, body: 'ok' });
      return;
    }
    if (url.pathname.startsWith(RESPONSE_URL_PATH) && req.method === 'GET') {
      // What the bridge answered on this response_url so far: `npx bridge slack command` waits for a deferred answer here.
      const answers = this.responses.filter((r) => r.path === url.pathname).map((r) => r.body);
      respond(res, { status: 200, body: { ok: true, answers } });
      return;
    }
    if (!match?.[1]) {
      respond(res, { status: 404, body: 'not found' });
      return;
    }
    const method = match[1];
    const at = Date.now();

    let args: Record<string, unknown>;
    try {
      args = decodeArgs(req.headers['content-type'], raw, url.searchParams);
    } catch {
      const call = this.record(method, undefined, {}, at);
      this.finish(res, call, { status: 200, body: { ok: false, error: 'invalid_form_data' } });
      return;
    }
    const token = bearer(req.headers.authorization) ?? (typeof args.token === 'string' ? args.token : undefined);
    delete args.token;
    const call = this.record(method, token, args, at);

    if (this.latencyMs > 0) await sleep(this.latencyMs);

    const fault = this.takeFault(method, call.channel);
    if (fault) {
      if (fault.latencyMs !== undefined && fault.latencyMs > 0) await sleep(fault.latencyMs);
      else if (fault.kind === 'delay') await sleep(1000);
      const answer = faultAnswer(fault);
      if (answer) {
        this.finish(res, call, answer);
        return;
      }
    }

    this.finish(res, call, this.dispatch(method, token, args, call));
  }

  private record(method: string, token: string | undefined, args: Record<string, unknown>, at: number): RecordedCall {
    const call: RecordedCall = {
      method,
      token,
      channel: optString(args.channel),
      text: optString(args.text),
      blocks: Array.isArray(args.blocks) ? (args.blocks as unknown[]) : undefined,
      thread_ts: optString(args.thread_ts),
      unfurl_links: optBool(args.unfurl_links),
      unfurl_media: optBool(args.unfurl_media),
      parse: optString(args.parse),
      link_names:
        args.link_names === undefined
          ? undefined
          : (optBool(args.link_names) ?? optString(args.link_names) ?? JSON.stringify(args.link_names)),
      metadata: args.metadata,
      at,
      args,
      status: 0,
      ok: false,
      error: undefined,
      ts: undefined,
    };
    this.recorded.push(call);
    return call;
  }

  private takeFault(method: string, channel: string | undefined): FaultSpec | undefined {
    const normalized = channel === undefined ? undefined : this.channelId(channel);
    for (const fault of this.faults) {
      if (fault.remaining <= 0) continue;
      if (fault.spec.method !== undefined && fault.spec.method !== method) continue;
      if (fault.spec.channel !== undefined && this.channelId(fault.spec.channel) !== normalized) continue;
      fault.remaining -= 1;
      this.faults = this.faults.filter((f) => f.remaining > 0);
      return fault.spec;
    }
    return undefined;
  }

  private finish(res: http.ServerResponse, call: RecordedCall, answer: SlackAnswer): void {
    call.status = answer.status;
    if (typeof answer.body === 'object') {
      call.ok = answer.body.ok === true;
      call.error = typeof answer.body.error === 'string' ? answer.body.error : undefined;
    } else {
      call.ok = false;
      call.error = `http_${answer.status}`;
    }
    this.writeLog(call);
    if (call.ok && (call.method === 'chat.postMessage' || call.method === 'chat.update' || call.method === 'chat.delete')) this.notify();
    if (call.ok && call.method === 'chat.postMessage' && this.options.onMessage) {
      const message = this.posted.find((m) => m.ts === call.ts);
      if (message) {
        try {
          this.options.onMessage(renderMessageAsText(message), { ...call });
        } catch {
          // A printing callback must not break the API.
        }
      }
    }
    respond(res, answer);
  }

  private writeLog(call: RecordedCall): void {
    if (!this.options.logFile) return;
    const line = {
      at: new Date(call.at).toISOString(),
      method: call.method,
      channel: call.channel,
      text: call.text,
      blocks: call.blocks,
      thread_ts: call.thread_ts,
      ok: call.ok,
      error: call.error,
      ts: call.ts,
    };
    try {
      appendFileSync(this.options.logFile, `${JSON.stringify(line)}\n`);
    } catch {
      // Logging is best effort.
    }
  }

  private dispatch(method: string, token: string | undefined, args: Record<string, unknown>, call: RecordedCall): SlackAnswer {
    const authError = this.checkToken(token);
    if (authError) return fail(authError);
    switch (method) {
      case 'auth.test':
        return ok({
          url: `http://${this.host}:${this.port}/`,
          team: this.team,
          user: this.botName,
          team_id: this.teamId,
          user_id: this.botUserId,
          bot_id: this.botId,
          ...(this.options.enterpriseId !== undefined ? { enterprise_id: this.options.enterpriseId } : {}),
          is_enterprise_install: false,
        });
      case 'bots.info':
        // `bridge doctor` reads the bot's app id here (auth.test's bot_id → bot.app_id).
        return optString(args.bot) === this.botId
          ? ok({ bot: { id: this.botId, app_id: this.appId, user_id: this.botUserId, name: this.botName, deleted: false } })
          : fail('bot_not_found');
      case 'chat.postMessage':
        return this.postMessage(args, call);
      case 'chat.update':
        return this.updateMessage(args, call);
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
      default:
        return fail('unknown_method');
    }
  }

  private checkToken(token: string | undefined): string | undefined {
    if (token === undefined || token === '') return 'not_authed';
    if (this.tokens && !this.tokens.has(token)) return 'invalid_auth';
    return undefined;
  }

  private channelExists(channel: string): boolean {
    if (!this.known) return true;
    return this.known.has(channel) || (this.members !== 'all' && this.members.has(channel));
  }

  private isMember(channel: string): boolean {
    return this.members === 'all' || this.members.has(channel);
  }

  private postMessage(args: Record<string, unknown>, call: RecordedCall): SlackAnswer {
    const rawChannel = optString(args.channel);
    if (!rawChannel) return fail('channel_not_found');
    const channel = this.channelId(rawChannel);
    if (!this.channelExists(channel)) return fail('channel_not_found');
    if (this.archived.has(channel)) return fail('is_archived');
    if (!this.isMember(channel)) return fail('not_in_channel');
    const retryAfterSeconds = this.rateLimit?.take(channel, call.at);
    if (retryAfterSeconds !== undefined) return rateLimited(retryAfterSeconds);
    if (typeof args.blocks === 'string') return fail('invalid_blocks_format');
    if (typeof args.metadata === 'string') return fail('invalid_metadata_format');
    const text = optString(args.text);
    const blocks = args.blocks;
    if (blocks !== undefined) {
      const problems = validateBlocks(blocks);
      if (problems.length > 0) return fail('invalid_blocks', { response_metadata: { messages: problems.map((p) => `[ERROR] ${p}`) } });
    }
    if ((text === undefined || text.trim() === '') && (blocks === undefined || (Array.isArray(blocks) && blocks.length === 0))) {
      return fail('no_text');
    }
    if (text !== undefined && text.length > 40_000) return fail('msg_too_long');

    const ts = this.nextTs();
    const threadTs = optString(args.thread_ts);
    const message: PostedMessage = {
      channel,
      ts,
      thread_ts: threadTs,
      text,
      blocks: Array.isArray(blocks) ? (blocks as unknown[]) : undefined,
      metadata: args.metadata,
      edited: false,
    };
    this.posted.push(message);
    call.ts = ts;
    return ok({ channel, ts, message: this.messageBody(message) });
  }

  private updateMessage(args: Record<string, unknown>, call: RecordedCall): SlackAnswer {
    const channel = this.channelId(optString(args.channel) ?? '');
    const ts = optString(args.ts);
    const message = this.posted.find((m) => m.channel === channel && m.ts === ts);
    if (!message) return fail(this.channelExists(channel) ? 'message_not_found' : 'channel_not_found');
    if (typeof args.blocks === 'string') return fail('invalid_blocks_format');
    if (args.blocks !== undefined) {
      const problems = validateBlocks(args.blocks);
      if (problems.length > 0) return fail('invalid_blocks', { response_metadata: { messages: problems.map((p) => `[ERROR] ${p}`) } });
      message.blocks = args.blocks as unknown[];
    }
    if (args.text !== undefined) message.text = optString(args.text);
    message.edited = true;
    call.ts = message.ts;
    return ok({ channel, ts: message.ts, text: message.text, message: this.messageBody(message) });
  }

  private deleteMessage(args: Record<string, unknown>, call: RecordedCall): SlackAnswer {
    const channel = this.channelId(optString(args.channel) ?? '');
    const ts = optString(args.ts);
    const index = this.posted.findIndex((m) => m.channel === channel && m.ts === ts);
    if (index < 0) return fail(this.channelExists(channel) ? 'message_not_found' : 'channel_not_found');
    this.posted.splice(index, 1);
    call.ts = ts;
    return ok({ channel, ts });
  }

  private conversationInfo(args: Record<string, unknown>): SlackAnswer {
    const raw = optString(args.channel);
    if (!raw) return fail('channel_not_found');
    const channel = this.channelId(raw);
    if (!this.channelExists(channel)) return fail('channel_not_found');
    return ok({
      channel: {
        id: channel,
        name: this.channelName(channel),
        is_channel: true,
        is_private: false,
        is_archived: this.archived.has(channel),
        is_member: this.isMember(channel),
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
    const channel = this.channelId(optString(args.channel) ?? '');
    if (!this.channelExists(channel)) return fail('channel_not_found');
    if (!this.isMember(channel)) return fail('not_in_channel');
    const oldest = Number(optString(args.oldest) ?? args.oldest ?? 0) || 0;
    const limit = Math.min(999, Number(args.limit ?? 100) || 100);
    const withMetadata = args.include_all_metadata === true || args.include_all_metadata === 'true';
    const messages = this.posted
      .filter((m) => m.channel === channel && (m.thread_ts === undefined || m.thread_ts === m.ts) && Number(m.ts) >= oldest)
      .reverse()
      .slice(0, limit)
      .map((m) => this.listedBody(m, withMetadata));
    return ok({ messages, has_more: false, response_metadata: { next_cursor: '' } });
  }

  /** The parent and its replies, oldest first. */
  private conversationReplies(args: Record<string, unknown>): SlackAnswer {
    const channel = this.channelId(optString(args.channel) ?? '');
    if (!this.channelExists(channel)) return fail('channel_not_found');
    if (!this.isMember(channel)) return fail('not_in_channel');
    const ts = optString(args.ts);
    const parent = this.posted.find((m) => m.channel === channel && m.ts === ts);
    if (!parent) return fail('thread_not_found');
    const withMetadata = args.include_all_metadata === true || args.include_all_metadata === 'true';
    const thread = this.posted.filter((m) => m.channel === channel && (m.ts === ts || m.thread_ts === ts));
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
      user: this.botUserId,
      bot_id: this.botId,
      team: this.teamId,
      ts: message.ts,
      ...(message.thread_ts !== undefined ? { thread_ts: message.thread_ts } : {}),
      text: message.text ?? '',
      ...(message.blocks !== undefined ? { blocks: message.blocks } : {}),
      ...(message.metadata !== undefined ? { metadata: message.metadata } : {}),
      ...(message.files !== undefined ? { files: message.files } : {}),
    };
  }

  // -- files (the trend charts): files.getUploadURLExternal, the upload URL, files.completeUploadExternal --

  /** Where the bytes of an upload go (`POST /_upload/<file id>`), and where they are served (`GET /_files/<file id>/<name>`). */
  static readonly FILE_UPLOAD_PATH = '/_upload/';
  static readonly FILE_DOWNLOAD_PATH = '/_files/';
  private readonly fileUploads = new Map<
    string,
    { name: string; length: number; altText: string | undefined; bytes?: Buffer; withToken?: boolean }
  >();

  /** An upload's bytes (undefined until sent), and whether they came with an Authorization header (they need none). */
  fileUpload(fileId: string): { bytes: Buffer | undefined; withToken: boolean } | undefined {
    const upload = this.fileUploads.get(fileId);
    return upload && { bytes: upload.bytes, withToken: upload.withToken === true };
  }

  /** Takes the bytes of an upload and serves uploaded files; false for any other path. */
  private async serveFiles(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<boolean> {
    const { FILE_UPLOAD_PATH, FILE_DOWNLOAD_PATH } = LocalSlackServer;
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
    const origin = this.fileUploadOrigin ?? `http://${this.host}:${this.port}`;
    return ok({ upload_url: `${origin}${LocalSlackServer.FILE_UPLOAD_PATH}${id}`, file_id: id });
  }

  /** Shares uploaded files into a channel (or thread) as one message carrying a `files` list, as Slack shows it. */
  private completeFileUpload(args: Record<string, unknown>, call: RecordedCall): SlackAnswer {
    let listed: unknown = args.files;
    try {
      if (typeof listed === 'string') listed = JSON.parse(listed);
    } catch {
      return fail('invalid_arguments');
    }
    const entries = Array.isArray(listed) ? listed.filter(isRecord) : [];
    if (entries.length === 0) return fail('invalid_arguments');
    const channel = this.channelId(optString(args.channel_id) ?? '');
    if (channel === '' || !this.channelExists(channel)) return fail('channel_not_found');
    if (!this.isMember(channel)) return fail('not_in_channel');
    const threadTs = optString(args.thread_ts);
    if (threadTs !== undefined && !this.posted.some((m) => m.channel === channel && m.ts === threadTs)) return fail('thread_not_found');
    const files: LocalSlackFile[] = [];
    for (const entry of entries) {
      const id = optString(entry.id) ?? '';
      const stored = this.fileUploads.get(id);
      if (stored?.bytes === undefined) return fail('file_not_found');
      const name = stored.name;
      const url_private = `http://${this.host}:${this.port}${LocalSlackServer.FILE_DOWNLOAD_PATH}${id}/${encodeURIComponent(name)}`;
      const title = optString(entry.title) ?? name;
      files.push({ id, name, title, mimetype: mimetypeOf(name), size: stored.bytes.length, alt_txt: stored.altText, url_private });
    }
    const message: PostedMessage = {
      channel,
      ts: this.nextTs(),
      thread_ts: threadTs,
      text: optString(args.initial_comment) ?? '',
      blocks: undefined,
      metadata: undefined,
      edited: false,
      files,
    };
    this.posted.push(message);
    call.ts = message.ts;
    this.notify();
    return ok({ files: files.map((f) => ({ id: f.id, title: f.title })) });
  }

  /** Unique, strictly increasing Slack-style timestamps (`seconds.micros`). */
  private nextTs(): string {
    const micros = Math.max(Date.now() * 1000, this.lastTsMicros + 100);
    this.lastTsMicros = micros;
    const seconds = Math.floor(micros / 1_000_000);
    return `${seconds}.${String(micros % 1_000_000).padStart(6, '0')}`;
  }
}

// ---------------------------------------------------------------------------------------------------
// Slack's posting limit
// ---------------------------------------------------------------------------------------------------

export interface ChannelRateLimitOptions {
  /** Slack: about one message per second per channel (1,000 ms). */
  intervalMs: number;
  /** Posts a quiet channel takes back to back ("short bursts are allowed"). */
  burst: number;
}

/**
 * Slack's documented chat.postMessage limit, "about 1 message per second per channel, short bursts
 * allowed", as a token bucket per channel: `burst` tokens, one back every `intervalMs`, one per post.
 * Written here on its own, not with the bridge's pacer, so a test never checks that code against itself.
 */
export class ChannelRateLimit {
  /** Per channel: the time credit (ms) left, and when it was counted. */
  private readonly credit = new Map<string, { ms: number; at: number }>();

  constructor(private readonly limit: ChannelRateLimitOptions) {}

  /** Takes a token for a post to `channel` at `now`; when none is left, the Retry-After seconds instead. */
  take(channel: string, now: number): number | undefined {
    const { intervalMs } = this.limit;
    const fullMs = Math.max(1, this.limit.burst) * intervalMs;
    const last = this.credit.get(channel);
    const ms = last === undefined ? fullMs : Math.min(fullMs, last.ms + (now - last.at));
    if (ms < intervalMs) return Math.max(1, Math.ceil((intervalMs - ms) / 1000));
    this.credit.set(channel, { ms: ms - intervalMs, at: now });
    return undefined;
  }

  clear(): void {
    this.credit.clear();
  }
}

// ---------------------------------------------------------------------------------------------------
// HTTP helpers
// ---------------------------------------------------------------------------------------------------

function ok(fields: Record<string, unknown>): SlackAnswer {
  return { status: 200, body: { ok: true, ...fields } };
}

function fail(error: string, extra: Record<string, unknown> = {}): SlackAnswer {
  return { status: 200, body: { ok: false, error, ...extra } };
}

/** Slack's answer to a call over its rate limit. */
function rateLimited(retryAfterSeconds: number): SlackAnswer {
  return { status: 429, body: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': String(retryAfterSeconds) } };
}

function faultAnswer(fault: FaultSpec): SlackAnswer | undefined {
  switch (fault.kind) {
    case 'ratelimited':
      return rateLimited(fault.retryAfterSeconds ?? 1);
    case 'server_error':
      return { status: 500, body: 'Internal Server Error' };
    case 'slack_error':
      return fail(fault.error ?? 'internal_error');
    case 'delay':
      return undefined;
  }
}

function respond(res: http.ServerResponse, answer: SlackAnswer): void {
  if (typeof answer.body === 'object') sendJson(res, answer.status, answer.body, answer.headers);
  else send(res, answer.status, answer.body, { 'content-type': 'text/plain; charset=utf-8', ...answer.headers });
}

/** Nested fields WebClient JSON-encodes in form bodies. */
const JSON_FIELDS = new Set(['blocks', 'attachments', 'metadata']);

function decodeArgs(contentType: string | undefined, raw: string, query: URLSearchParams): Record<string, unknown> {
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

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match?.[1];
}

function normalizeChannel(channel: string): string {
  return channel.trim().replace(/^#/, '');
}

function mimetypeOf(name: string): string {
  return /\.png$/i.test(name) ? 'image/png' : 'application/octet-stream';
}

function optString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function optBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === '1' || value === 1) return true;
  if (value === 'false' || value === '0' || value === 0) return false;
  return undefined;
}

/** A light version of Slack's Block Kit validation: the limits a bridge bug is likely to hit. */
function validateBlocks(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return ['blocks must be an array [json-pointer:/blocks]'];
  const problems: string[] = [];
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

// ---------------------------------------------------------------------------------------------------
// Terminal rendering
// ---------------------------------------------------------------------------------------------------

export interface RenderableMessage {
  channel?: string | undefined;
  ts?: string | undefined;
  thread_ts?: string | undefined;
  text?: string | undefined;
  blocks?: unknown[] | undefined;
}

const DIVIDER = '─'.repeat(40);
const REPLY_FIRST = '  ↳ ';
const REPLY_REST = '    ';

/**
 * Renders a Slack message as plain readable text. A top-level message starts with a `#channel  ts`
 * line (when the channel is known); a thread reply is indented with `  ↳ ` instead.
 */
export function renderMessageAsText(message: RenderableMessage): string {
  const body = renderBody(message);
  const isReply = message.thread_ts !== undefined && message.thread_ts !== message.ts;
  if (isReply) {
    return body.map((line, i) => `${i === 0 ? REPLY_FIRST : REPLY_REST}${line}`.trimEnd()).join('\n');
  }
  const heading = message.channel !== undefined ? [`#${normalizeChannel(message.channel)}${message.ts ? `  ${message.ts}` : ''}`] : [];
  return [...heading, ...body].join('\n');
}

/** Renders messages in conversation order: each top-level message followed by its replies. */
export function renderConversation(messages: RenderableMessage[]): string {
  const isReply = (m: RenderableMessage): boolean => m.thread_ts !== undefined && m.thread_ts !== m.ts;
  const parents = messages.filter((m) => !isReply(m));
  const parentTs = new Set(parents.map((m) => m.ts));
  const out: string[] = [];
  for (const parent of parents) {
    out.push(renderMessageAsText(parent));
    for (const reply of messages.filter((m) => isReply(m) && m.thread_ts === parent.ts)) out.push(renderMessageAsText(reply));
  }
  for (const orphan of messages.filter((m) => isReply(m) && !parentTs.has(m.thread_ts))) out.push(renderMessageAsText(orphan));
  return out.join('\n');
}

function renderBody(message: RenderableMessage): string[] {
  const blocks = message.blocks ?? [];
  const lines = blocks.flatMap(renderBlock);
  if (lines.length === 0) return mrkdwnToPlain(message.text ?? '').split('\n');
  return lines;
}

function renderBlock(block: unknown): string[] {
  if (!isRecord(block)) return [];
  switch (block.type) {
    case 'header':
      return [`# ${textOf(block.text)}`];
    case 'section': {
      const lines: string[] = [];
      const text = textOf(block.text);
      if (text) lines.push(...text.split('\n'));
      if (Array.isArray(block.fields)) {
        for (const field of block.fields as unknown[]) {
          const value = textOf(field)
            .split('\n')
            .map((s) => s.trim())
            .filter((s) => s !== '')
            .join(' ');
          if (value) lines.push(`  • ${value}`);
        }
      }
      const accessory = renderElement(block.accessory);
      if (accessory) lines.push(`  ${accessory}`);
      return lines;
    }
    case 'context': {
      const parts = (Array.isArray(block.elements) ? (block.elements as unknown[]) : []).map(renderElement).filter((s) => s !== '');
      return parts.length > 0 ? [`  ${parts.join(' · ')}`] : [];
    }
    case 'divider':
      return [DIVIDER];
    case 'rich_text':
      return (Array.isArray(block.elements) ? (block.elements as unknown[]) : []).flatMap(renderRichTextElement);
    case 'markdown':
      return typeof block.text === 'string' ? block.text.split('\n') : [];
    case 'image':
      return [renderElement(block)];
    case 'actions': {
      const parts = (Array.isArray(block.elements) ? (block.elements as unknown[]) : []).map(renderElement).filter((s) => s !== '');
      return parts.length > 0 ? [parts.join(' ')] : [];
    }
    default:
      return [`[${typeof block.type === 'string' ? block.type : 'unknown'} block]`];
  }
}

/** A text object (`plain_text` / `mrkdwn`) as plain text. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return mrkdwnToPlain(value);
  if (!isRecord(value) || typeof value.text !== 'string') return '';
  return value.type === 'mrkdwn' ? mrkdwnToPlain(value.text) : value.text;
}

function renderElement(element: unknown): string {
  if (!isRecord(element)) return '';
  switch (element.type) {
    case 'mrkdwn':
    case 'plain_text':
      return textOf(element);
    case 'image':
      return `[image: ${typeof element.alt_text === 'string' ? element.alt_text : ''}]`;
    case 'button': {
      const label = `[${textOf(element.text)}]`;
      return typeof element.url === 'string' ? `${label} ${element.url}` : label;
    }
    default:
      return '';
  }
}

function renderRichTextElement(element: unknown): string[] {
  if (!isRecord(element)) return [];
  const children = Array.isArray(element.elements) ? (element.elements as unknown[]) : [];
  switch (element.type) {
    case 'rich_text_section':
      return renderInline(children).split('\n');
    case 'rich_text_list': {
      const indent = '  '.repeat(typeof element.indent === 'number' ? element.indent : 0);
      const ordered = element.style === 'ordered';
      const offset = typeof element.offset === 'number' ? element.offset : 0;
      return children.map((item, i) => {
        const inline = isRecord(item) && Array.isArray(item.elements) ? renderInline(item.elements as unknown[]) : '';
        return `${indent}${ordered ? `${offset + i + 1}.` : '•'} ${inline.replace(/\n/g, ' ')}`;
      });
    }
    case 'rich_text_quote':
      return renderInline(children)
        .split('\n')
        .map((line) => `> ${line}`);
    case 'rich_text_preformatted':
      return ['```', ...renderInline(children).split('\n'), '```'];
    default:
      return [];
  }
}

function renderInline(elements: unknown[]): string {
  return elements
    .map((el) => {
      if (!isRecord(el)) return '';
      switch (el.type) {
        case 'text': {
          const text = typeof el.text === 'string' ? el.text : '';
          return isRecord(el.style) && el.style.code === true ? `\`${text}\`` : text;
        }
        case 'link': {
          const url = typeof el.url === 'string' ? el.url : '';
          return typeof el.text === 'string' && el.text !== '' ? `${el.text} (${url})` : url;
        }
        case 'emoji':
          return typeof el.unicode === 'string' ? hexToEmoji(el.unicode) : `:${String(el.name)}:`;
        case 'user':
          return `@${String(el.user_id)}`;
        case 'usergroup':
          return `@${String(el.usergroup_id)}`;
        case 'channel':
          return `#${String(el.channel_id)}`;
        case 'broadcast':
          return `@${String(el.range)}`;
        case 'date':
          return typeof el.fallback === 'string' ? el.fallback : String(el.timestamp);
        default:
          return '';
      }
    })
    .join('');
}

function hexToEmoji(unicode: string): string {
  try {
    return String.fromCodePoint(...unicode.split('-').map((h) => Number.parseInt(h, 16)));
  } catch {
    return '';
  }
}

/** Turns Slack mrkdwn escapes and angle-bracket references into readable text; keeps *bold* / _italic_. */
export function mrkdwnToPlain(text: string): string {
  return text
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, '$2 ($1)')
    .replace(/<((?:https?|mailto):[^>]+)>/g, '$1')
    .replace(/<#([A-Z0-9]+)\|([^>]*)>/g, (_m, id: string, name: string) => `#${name || id}`)
    .replace(/<#([A-Z0-9]+)>/g, '#$1')
    .replace(/<@([A-Z0-9]+)\|([^>]+)>/g, '@$2')
    .replace(/<@([A-Z0-9]+)>/g, '@$1')
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<![^|>]+\|([^>]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
