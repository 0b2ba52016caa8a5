/**
 * A local stand-in for Slack, for the local stack and integration tests; this module composes its parts.
 *
 * `new WebClient(token, { slackApiUrl: server.apiUrl })` from `@slack/web-api` talks to it unchanged:
 * the client POSTs `application/x-www-form-urlencoded` bodies to `<apiUrl><method>` with nested fields
 * (`blocks`, `metadata`) JSON-encoded, and the token in `Authorization: Bearer …`. JSON bodies and a
 * `token` body field are accepted as well. The methods are in `web-api.ts`.
 *
 * Every call is recorded (`calls()`), successful posts are kept (`messages()`, `store.ts`), and faults
 * can be injected per method and channel (`injectFault`, `faults.ts`). With `channelPace` it enforces
 * Slack's per-channel posting limit (429 `ratelimited` with `Retry-After`). Chart and data table blocks
 * past Slack's limits answer `invalid_blocks`, and with `refuseNativeBlocks` every one does.
 *
 * It also plays Slack towards the app (`interactions.ts`): with `connectApp`, `sendCommand` and
 * `clickButton` deliver a slash command or a button click to the bridge and apply the answers as Slack
 * does. The preview page uses them.
 */
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import { sleep } from '../../shared/util';
import { closeServer, listen, readBody, send, sendJson, urlHost } from '../http';
import { LOCAL_SLACK_APP_ID, LOCAL_SLACK_TEAM_ID, LOCAL_SLACK_USER, type AppAnswer, type SlackAppTarget } from '../slack-app-delivery';
import { FAULTS_PATH, faultAnswer, SlackFaults, type FaultSpec } from './faults';
import { LocalSlackOAuth, type LocalSlackOAuthOptions } from './oauth';
import {
  RESPONSE_URL_PATH,
  SlackInteractions,
  type ClickInput,
  type CommandInput,
  type EventDelivery,
  type HomeClickInput,
  type OpenHomeInput,
} from './interactions';
import { renderConversation, renderMessageAsText } from './render-text';
import type { PublishedHome } from './views';
import { SlackStore, type EphemeralMessage, type PostedMessage, type WorkspaceChannels } from './store';
import { blocksOfCall } from './block-checks';
import { bearer, decodeArgs, MAX_BODY_BYTES, optBool, optString, type SlackAnswer } from './protocol';
import { SlackWebApi, type WebApiOptions } from './web-api';

export type { FaultKind, FaultSpec } from './faults';
export { RESPONSE_URL_PATH } from './interactions';
export { ChannelRateLimit } from './rate-limit';
export { mrkdwnToPlain, renderConversation, renderMessageAsText } from './render-text';
export type { EphemeralMessage, PostedMessage } from './store';
export type { PublishedHome } from './views';

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

export interface LocalSlackServerOptions extends WorkspaceChannels, WebApiOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Latency added to every call (ms). */
  latencyMs?: number;
  /** Called after each successful `chat.postMessage` with a terminal rendering of the message. */
  onMessage?: (rendered: string, call: RecordedCall) => void;
  /** Appends one JSON line per API call: `{ at, method, channel, text, blocks, thread_ts, ok, error, ts }`. */
  logFile?: string;
  /**
   * Origin of the response_urls handed out (default this server's own URL). The deploy rehearsal
   * uses Slack's `https://hooks.slack.com`, which the deployed function accepts, and routes it here.
   */
  responseUrlOrigin?: string;
  team?: string;
  teamId?: string;
  /** The app's id (`api_app_id`) the commands and clicks carry; default LOCAL_SLACK_APP_ID. */
  appId?: string;
  /** Enterprise Grid org of the workspace (auth.test's `enterprise_id`, the `enterprise_id` of what it sends); none by default. */
  enterpriseId?: string;
  botUserId?: string;
  botId?: string;
  botName?: string;
  /**
   * Answer `invalid_blocks` to every call carrying a chart (`data_visualization`) or `data_table` block, as a
   * workspace the blocks' rollout has not reached does (the bridge then falls back to text and the PNG).
   */
  refuseNativeBlocks?: boolean;
  /** The OAuth v2 install flow's client and token rotation (./oauth.ts). */
  oauth?: LocalSlackOAuthOptions;
}

/** Methods whose success changes `messages()`. */
const MESSAGE_METHODS = new Set(['chat.postMessage', 'chat.update', 'chat.delete']);

export class LocalSlackServer {
  /** Pass as `slackApiUrl` to `WebClient` (ends with a slash). */
  readonly apiUrl: string;
  readonly team: string;
  readonly teamId: string;
  readonly appId: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly botName: string;
  /** Answers the bridge sent to response_url paths (deferred slash commands), oldest first. */
  readonly responses: { path: string; body: string }[];
  /** The install page and `oauth.v2.access` (./oauth.ts). */
  readonly oauth: LocalSlackOAuth;

  private readonly recorded: RecordedCall[] = [];
  private readonly store: SlackStore;
  private readonly webApi: SlackWebApi;
  private readonly interactions: SlackInteractions;
  private app: SlackAppTarget | undefined;
  private readonly faults: SlackFaults;
  private latencyMs: number;
  private closed = false;

  private constructor(
    private readonly server: http.Server,
    readonly host: string,
    readonly port: number,
    private readonly options: LocalSlackServerOptions,
  ) {
    const origin = `http://${this.host}:${this.port}`;
    this.apiUrl = `${origin}/api/`;
    this.team = options.team ?? 'Local Workspace';
    this.teamId = options.teamId ?? LOCAL_SLACK_TEAM_ID;
    this.appId = options.appId ?? LOCAL_SLACK_APP_ID;
    this.botUserId = options.botUserId ?? 'U0LOCALBOT';
    this.botId = options.botId ?? 'B0LOCALBOT';
    this.botName = options.botName ?? 'visibility-bridge';
    this.latencyMs = options.latencyMs ?? 0;
    const { teamId, appId, botUserId, botId, botName, team } = this;
    const enterpriseId = options.enterpriseId;
    this.store = new SlackStore(options);
    this.faults = new SlackFaults((channel) => this.store.channelId(channel), options.refuseNativeBlocks === true);
    this.webApi = new SlackWebApi(this.store, { origin, team, teamId, appId, enterpriseId, botUserId, botId, botName }, options);
    const connected = (): SlackAppTarget => {
      if (this.app === undefined) throw new Error('no Slack app is connected to the local Slack server (connectApp)');
      return this.app;
    };
    const responseUrlOrigin = options.responseUrlOrigin ?? origin;
    this.interactions = new SlackInteractions(
      this.store,
      { teamId, appId, enterpriseId, responseUrlOrigin },
      connected,
      this.webApi.homeTabs,
    );
    this.responses = this.interactions.responses;
    this.oauth = new LocalSlackOAuth({ teamId, team, appId, botUserId }, options.oauth, (token, tokenTeam) =>
      this.webApi.acceptToken(token, tokenTeam),
    );
  }

  static async start(options: LocalSlackServerOptions = {}): Promise<LocalSlackServer> {
    const server = http.createServer();
    const host = options.host ?? '127.0.0.1';
    const { port } = await listen(server, options.port, host);
    server.unref();
    const instance = new LocalSlackServer(server, urlHost(host), port, options);
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

  // The workspace's channels and memberships, as ./store.ts documents them.
  readonly channelId = (channel: string): string => this.store.channelId(channel);
  readonly channelName = (channel: string): string => this.store.channelName(channel);
  readonly namedChannels = (): Record<string, string> => this.store.namedChannels();
  readonly inviteBot = (channel: string): void => this.store.inviteBot(channel);

  /** Messages currently posted (deleted ones removed), oldest first (copies). */
  messages(channel?: string): PostedMessage[] {
    return this.inChannel(this.store.posted, channel);
  }

  /** All posted messages rendered as text, replies indented under their parents. */
  transcript(channel?: string): string {
    return renderConversation(this.messages(channel));
  }

  /** Calls `listener` after every change to `messages()` (post, update, delete, reset); returns the unsubscribe function. */
  readonly subscribe = (listener: () => void): (() => void) => this.store.subscribe(listener);

  /** Ephemeral replies (only their user sees them), oldest first (copies). */
  ephemerals(channel?: string): EphemeralMessage[] {
    return this.inChannel(this.store.ephemeral, channel);
  }

  private inChannel<T extends { channel: string }>(messages: readonly T[], channel: string | undefined): T[] {
    const wanted = channel === undefined ? undefined : this.channelId(channel);
    return messages.filter((m) => wanted === undefined || m.channel === wanted).map((m) => ({ ...m }));
  }

  /** An upload's bytes (undefined until sent), and whether they came with an Authorization header (they need none). */
  readonly fileUpload = (fileId: string): { bytes: Buffer | undefined; withToken: boolean } | undefined => this.webApi.files.upload(fileId);

  // -- the Slack app: deliveries to the bridge, as Slack makes them ---------------------------------

  /** Where slash commands and button clicks go, and the signing secret (the app's settings in Slack). */
  connectApp(target: SlackAppTarget): void {
    this.app = target;
  }

  /** A user opens the app's Home tab: a signed `app_home_opened` to the events URL (`retryOf`: Slack's retry of that event). */
  readonly openHome = (input?: OpenHomeInput): Promise<EventDelivery> => this.interactions.openHome(input);

  /** A click on the user's published Home tab: a page button, "Open latest digest", or a channel picked to subscribe. */
  readonly clickHome = (input: HomeClickInput): Promise<AppAnswer> => this.interactions.clickHome(input);

  /** The Home tab the app last published for `userId` (`views.publish`); undefined before one. */
  homeView(userId = LOCAL_SLACK_USER.id): PublishedHome | undefined {
    return this.webApi.homeTabs.of(userId);
  }

  /**
   * A user types `line` in `channel`: the command is signed and POSTed to the app's commands URL, and
   * its answer shown as Slack shows it (ephemeral unless `in_channel`); later answers to its
   * response_url too.
   */
  readonly sendCommand = (input: CommandInput): Promise<AppAnswer> => this.interactions.sendCommand(input);

  /**
   * A user clicks the button `actionId` on the message `ts` (posted, or an ephemeral one such as a
   * read's answer with "Share in channel"): a signed `block_actions` to the interactions URL.
   */
  readonly clickButton = (input: ClickInput): Promise<AppAnswer> => this.interactions.clickButton(input);

  /** Forgets recorded calls and messages and clears faults. Tokens and memberships stay. */
  reset(): void {
    this.recorded.length = 0;
    this.store.clear();
    this.faults.clear();
    this.webApi.reset();
    this.interactions.reset();
    this.store.notify();
  }

  // -- configuration -----------------------------------------------------------------------------

  readonly injectFault = (spec: FaultSpec): void => this.faults.inject(spec);
  readonly clearFaults = (): void => this.faults.clear();

  setLatencyMs(ms: number): void {
    this.latencyMs = Math.max(0, ms);
  }

  readonly setTokens = (tokens: string[] | undefined): void => this.webApi.setTokens(tokens);

  // -- request handling --------------------------------------------------------------------------

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (await this.webApi.files.serve(req, res, url)) return;
    const raw = (await readBody(req, MAX_BODY_BYTES)).toString('utf8');
    if (url.pathname === FAULTS_PATH) {
      respond(res, this.faults.control(req.method ?? 'GET', raw));
      return;
    }
    const answer =
      (url.pathname.startsWith(RESPONSE_URL_PATH) ? this.interactions.answerResponseUrl(req.method, url.pathname, raw) : undefined) ??
      this.oauth.serve(url.pathname, url.searchParams, () => decodeArgs(req.headers['content-type'], raw, url.searchParams));
    if (answer) {
      respond(res, answer);
      return;
    }
    const method = /^\/api\/([A-Za-z0-9_.]+)$/.exec(url.pathname)?.[1];
    if (!method) {
      respond(res, { status: 404, body: 'not found' });
      return;
    }
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

    const blocks = blocksOfCall(args);
    const fault = this.faults.take({ method, channel: call.channel, blocks });
    if (fault) {
      if (fault.latencyMs !== undefined && fault.latencyMs > 0) await sleep(fault.latencyMs);
      else if (fault.kind === 'delay') await sleep(1000);
      const answer = faultAnswer(fault, blocks);
      if (answer) {
        this.finish(res, call, answer);
        return;
      }
    }

    this.finish(res, call, this.webApi.dispatch(method, token, args, call));
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
    if (call.ok && MESSAGE_METHODS.has(call.method)) this.store.notify();
    if (call.ok && call.method === 'chat.postMessage' && this.options.onMessage) {
      const message = this.store.posted.find((m) => m.ts === call.ts);
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

  private writeLog({ at, method, channel, text, blocks, thread_ts, ok, error, ts }: RecordedCall): void {
    if (!this.options.logFile) return;
    const line = { at: new Date(at).toISOString(), method, channel, text, blocks, thread_ts, ok, error, ts };
    try {
      appendFileSync(this.options.logFile, `${JSON.stringify(line)}\n`);
    } catch {
      // Logging is best effort.
    }
  }
}

function respond(res: http.ServerResponse, answer: SlackAnswer): void {
  if (typeof answer.body === 'object') sendJson(res, answer.status, answer.body, answer.headers);
  else send(res, answer.status, answer.body, { 'content-type': 'text/plain; charset=utf-8', ...answer.headers });
}
