/**
 * Serves the Slack preview: the page (`GET /slack`), its stylesheet and script, the rendered
 * workspace as an HTML fragment (`GET /slack/timeline`) and a server-sent event stream
 * (`GET /slack/events`) that says `change` whenever a message is posted, edited or deleted, so the
 * page re-fetches the fragment without a reload.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PREVIEW_CSS, PREVIEW_JS } from './assets';
import { pageHtml, PREVIEW_PATHS } from './page';
import { workspaceHtml, type PreviewMessage } from './timeline';

/** Where the preview reads messages from; the local Slack server (`LocalSlackServer`) is one. */
export interface PreviewSource {
  messages(): PreviewMessage[];
  /** Calls `listener` after every change to the messages; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  readonly botName?: string;
  readonly team?: string;
}

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

  constructor(private readonly source: PreviewSource) {}

  /** Answers a preview request; false when the request is not one (the caller routes it elsewhere). */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = new URL(req.url ?? '/', 'http://preview.local').pathname.replace(/\/+$/, '') || '/';
    if (method !== 'GET' && method !== 'HEAD') return false;
    switch (path) {
      case PREVIEW_PATHS.page:
        this.send(res, 'text/html', pageHtml(this.workspace(), this.timeline()));
        return true;
      case PREVIEW_PATHS.css:
        this.send(res, 'text/css', PREVIEW_CSS);
        return true;
      case PREVIEW_PATHS.js:
        this.send(res, 'text/javascript', PREVIEW_JS);
        return true;
      case PREVIEW_PATHS.timeline:
        this.send(res, 'text/html', this.timeline());
        return true;
      case PREVIEW_PATHS.events:
        this.stream(req, res);
        return true;
      default:
        return false;
    }
  }

  /** Ends every open event stream (before the HTTP server closes, or it would wait for them). */
  close(): void {
    for (const res of this.streams) res.end();
    this.streams.clear();
  }

  private workspace(): string {
    return this.source.team ?? 'Local Workspace';
  }

  private timeline(): string {
    return workspaceHtml(this.source.messages(), { botName: this.source.botName ?? 'visibility-bridge', workspace: this.workspace() });
  }

  private send(res: ServerResponse, type: string, body: string): void {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': `${type}; charset=utf-8`,
      'content-length': String(Buffer.byteLength(body)),
    });
    res.end(body);
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
