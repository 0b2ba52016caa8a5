/**
 * Serves the Slack preview: the page (`GET /slack`), its stylesheet and script, the rendered
 * workspace as an HTML fragment (`GET /slack/timeline`) and a server-sent event stream
 * (`GET /slack/events`) that says `change` whenever a message is posted, edited or deleted, so the
 * page re-fetches the fragment without a reload.
 *
 * With a Slack app connected, the page also acts as the user: `POST /slack/preview/command` types a
 * slash command in a channel and `POST /slack/preview/click` clicks a button on a message (and the
 * Home tab's two, ./home.ts, open it and click on it); the local Slack server delivers them to the
 * bridge signed, as Slack does, and the answers appear on the page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRecord } from '../../shared/util';
import { readBody, send, sendJson } from '../http';
import { PREVIEW_CSS, PREVIEW_JS } from './assets';
import { pageHtml, PREVIEW_PATHS } from './page';
import type { HomeClickInput } from '../slack/interactions';
import type { LocalSlackServer } from '../slack/server';
import { workspaceHtml } from './timeline';
import { HOME_PATHS, homeViewHtml } from './home';

/** What the page does as the user, each through its own path. */
const ACTION_PATHS: readonly string[] = [PREVIEW_PATHS.command, PREVIEW_PATHS.click, HOME_PATHS.open, HOME_PATHS.click];

/** JSON bodies only: a cross-site form can't send one without a CORS preflight, which is never granted. */
const ACTION_BODY_LIMIT = 16 * 1024;

/** Scripts and styles only from the gateway itself: even a rendering bug can't run injected script. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

const HEARTBEAT_MS = 15_000;

export class SlackPreview {
  private readonly streams = new Set<ServerResponse>();

  /** `source`: where the messages are, and what the page does as the user through. */
  constructor(private readonly source: LocalSlackServer) {}

  /** Answers a preview request; false when the request is not one (the caller routes it elsewhere). */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = new URL(req.url ?? '/', 'http://preview.local').pathname.replace(/\/+$/, '') || '/';
    if (method === 'POST' && ACTION_PATHS.includes(path)) {
      void this.act(path, req, res);
      return true;
    }
    if (method !== 'GET' && method !== 'HEAD') return false;
    if (path.startsWith(PREVIEW_PATHS.files)) {
      this.file(path.slice(PREVIEW_PATHS.files.length), res);
      return true;
    }
    const page = Object.hasOwn(this.pages, path) ? this.pages[path] : undefined;
    if (page !== undefined) {
      const [type, body] = page();
      send(res, 200, body, { ...SECURITY_HEADERS, 'content-type': `${type}; charset=utf-8` });
      return true;
    }
    if (path !== PREVIEW_PATHS.events) return false;
    this.stream(req, res);
    return true;
  }

  /** The pages, their parts and assets, by path: content type and body. */
  private readonly pages: Readonly<Record<string, () => [type: string, body: string]>> = {
    [PREVIEW_PATHS.page]: () => [
      'text/html',
      pageHtml(this.source.team, { tab: 'messages', html: this.timeline(), composer: this.composer() }),
    ],
    [PREVIEW_PATHS.css]: () => ['text/css', PREVIEW_CSS],
    [PREVIEW_PATHS.js]: () => ['text/javascript', PREVIEW_JS],
    [PREVIEW_PATHS.timeline]: () => ['text/html', this.timeline()],
    [HOME_PATHS.page]: () => ['text/html', pageHtml(this.source.team, { tab: 'home', html: homeViewHtml(this.source) })],
    [HOME_PATHS.view]: () => ['text/html', homeViewHtml(this.source)],
  };

  /**
   * A shared file's bytes, from this origin (the page's CSP allows images from 'self' only). Only PNGs
   * are shown as images; anything else is a download, so an uploaded file can never run as a page.
   */
  private file(fileId: string, res: ServerResponse): void {
    const bytes = /^[A-Za-z0-9_-]{1,64}$/.test(fileId) ? this.source.fileUpload(fileId)?.bytes : undefined;
    if (bytes === undefined) {
      send(res, 404, 'no such file', { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
      return;
    }
    const png = bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    send(res, 200, bytes, {
      ...SECURITY_HEADERS,
      'content-type': png ? 'image/png' : 'application/octet-stream',
      ...(png ? {} : { 'content-disposition': 'attachment' }),
    });
  }

  /** Ends every open event stream (before the HTTP server closes, or it would wait for them). */
  close(): void {
    for (const res of this.streams) res.end();
    this.streams.clear();
  }

  /** The composer's channel, by name: where the bridge posted last (else `general`). */
  private composer(): { channel: string } {
    const last = this.source.messages().at(-1)?.channel;
    return { channel: last === undefined ? 'general' : (this.source.namedChannels()[last] ?? last) };
  }

  private timeline(): string {
    return workspaceHtml(this.source.messages(), {
      botName: this.source.botName,
      workspace: this.source.team,
      ephemerals: this.source.ephemerals(),
      channelNames: this.source.namedChannels(),
    });
  }

  /** An action of the page (a command, a click, the Home tab's): validated, delivered through the source, the bridge's status answered. */
  private async act(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number, body: Record<string, unknown>): void => sendJson(res, status, body, SECURITY_HEADERS);
    try {
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
        answer(415, { error: 'send application/json' });
        return;
      }
      const input = parseAction(path, (await readBody(req, ACTION_BODY_LIMIT)).toString('utf8'));
      if (typeof input === 'string') {
        answer(400, { error: input });
        return;
      }
      answer(200, { status: (await this.deliver(input)).status });
    } catch (error) {
      answer(502, { error: error instanceof Error ? error.message : String(error) });
    }
  }

  private deliver(action: PreviewAction): Promise<{ status: number }> {
    const { source } = this;
    switch (action.kind) {
      case 'command':
        return source.sendCommand({ channel: action.channel, line: action.line });
      case 'click':
        return source.clickButton({ channel: action.channel, ts: action.ts, actionId: action.actionId });
      case 'home-open':
        return source.openHome();
      case 'home-click':
        return source.clickHome(action.click);
    }
  }

  private stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    res.write('retry: 1000\n\n');
    let version = 0;
    const unsubscribe = this.source.subscribe(() => {
      version += 1;
      res.write(`event: change\ndata: ${version}\n\n`);
    });
    // A comment now and then keeps proxies and idle timers from closing a quiet stream.
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    this.streams.add(res);
    const stop = (): void => {
      clearInterval(heartbeat);
      unsubscribe();
      this.streams.delete(res);
    };
    req.on('close', stop);
    res.on('close', stop);
  }
}

type PreviewAction =
  | { kind: 'command'; channel: string; line: string }
  | { kind: 'click'; channel: string; ts: string; actionId: string }
  | { kind: 'home-open' }
  | { kind: 'home-click'; click: HomeClickInput };

/** The page's JSON body → an action, or what is wrong with it. */
function parseAction(path: string, raw: string): PreviewAction | string {
  if (path === HOME_PATHS.open) return { kind: 'home-open' };
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return 'the body is not JSON';
  }
  if (!isRecord(body)) return 'the body is not a JSON object';
  const field = (name: string): string | undefined => {
    const value = body[name];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  const actionId = field('actionId');
  if (path === HOME_PATHS.click) {
    if (actionId === undefined) return 'actionId is required';
    return { kind: 'home-click', click: { actionId, blockId: field('blockId'), selectedChannel: field('selectedChannel') } };
  }
  const channel = field('channel')?.replace(/^#/, '');
  if (channel === undefined) return 'channel is required';
  if (path === PREVIEW_PATHS.command) {
    const line = field('line');
    return line === undefined ? 'line is required (e.g. "/visibility help")' : { kind: 'command', channel, line };
  }
  const ts = field('ts');
  if (ts === undefined || actionId === undefined) return 'ts and actionId are required';
  return { kind: 'click', channel, ts, actionId };
}
