/**
 * The local stack's live event stream (`bridge tail`): `GET /events` answers NDJSON, one line per
 * log entry of the functions and the stack (deliveries accepted or rejected, digests posted,
 * warnings and errors), as they happen, until the client goes away. `?history=1` first replays
 * the entries kept so far.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { closeServer, listen, sendJson } from './http';
import type { LocalLogEntry, LocalObservabilityHub } from './local-observability';

export const EVENTS_PATH = '/events';

/** One line of the stream: the log entry with its time as ISO text. */
function toLocalEvent(entry: LocalLogEntry): Omit<LocalLogEntry, 'at'> & { at: string } {
  return { ...entry, at: new Date(entry.at).toISOString() };
}

export class EventsServer {
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** The stream's URL (`…/events`). */
  get eventsUrl(): string {
    return `${this.url}${EVENTS_PATH}`;
  }

  static async start(hub: LocalObservabilityHub, options: { host: string; port: number }): Promise<EventsServer> {
    const server = createServer((req, res) => serve(hub, req, res));
    const { url } = await listen(server, options.port, options.host);
    return new EventsServer(server, url);
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }
}

function serve(hub: LocalObservabilityHub, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://local');
  if (req.method !== 'GET' || url.pathname !== EVENTS_PATH) {
    sendJson(res, 404, { error: `GET ${EVENTS_PATH} streams the events` });
    return;
  }
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  res.flushHeaders();
  const send = (entry: LocalLogEntry): void => {
    if (!res.writableEnded) res.write(`${JSON.stringify(toLocalEvent(entry))}\n`);
  };
  if (url.searchParams.get('history') === '1') hub.entries().forEach(send);
  const unsubscribe = hub.subscribe(send);
  res.on('close', unsubscribe);
}
