/**
 * A local stand-in for API Gateway HTTP API in front of a Lambda integration (payload format 2.0).
 *
 * Each request on a configured route becomes an `APIGatewayProxyEventV2` as API Gateway builds it:
 * header names lower-cased, repeated headers comma-joined, cookies moved to `cookies`, repeated
 * query parameters comma-joined, the raw body as text — or base64 with `isBase64Encoded` when the
 * bytes are not valid UTF-8 — and `requestContext.http` / `stage` / `routeKey` / `requestId`.
 * The function's answer becomes the HTTP response (a structured result, or any other value as a
 * 200 JSON body, as payload 2.0 infers). Any other route answers 404 `{"message":"Not Found"}`
 * without invoking anything; a function error answers 500 `{"message":"Internal Server Error"}`;
 * no answer within the integration timeout answers 503 `{"message":"Service Unavailable"}`.
 *
 * Like Lambda, concurrent requests run on separate handler instances ("containers"), created on
 * demand with `createHandler` and reused once free.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { BodyTooLargeError, listen, readBody } from './http';
import { SlackPreview } from './preview/server';
import type { LocalSlackServer } from './slack/server';
import { withTimeout } from './timeout';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export type HttpApiHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>;

export interface GatewayRoute {
  method: string;
  path: string;
  /** The function behind this route, when not the gateway's default `createHandler` (one API, several functions). */
  createHandler?: (() => HttpApiHandler) | undefined;
  /** The route's own throttle (the stage's route settings): its requests take tokens from it, never the stage default's. */
  throttle?: Throttle | undefined;
}

/** API Gateway's throttle: a bucket of `burstLimit` tokens refilled at `rateLimit` per second. */
export interface Throttle {
  rateLimit: number;
  burstLimit: number;
}

export interface GatewayRequestInfo {
  method: string;
  path: string;
  /** `POST /webhook` when a route matched (also for a request its throttle refused), else undefined. */
  routeKey: string | undefined;
  status: number;
  durationMs: number;
  /** The event given to the function (absent when no route matched or the body was too large). */
  event: APIGatewayProxyEventV2 | undefined;
  /** The function's answer, when it gave one. */
  result: APIGatewayProxyStructuredResultV2 | undefined;
  /** Why the function gave no answer (it threw, or timed out). */
  error: unknown;
}

export interface HttpGatewayOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Routes that invoke the function (default `POST /webhook`). */
  routes?: readonly GatewayRoute[];
  /** Builds one handler instance; called again whenever all existing ones are busy. */
  createHandler: () => HttpApiHandler;
  /**
   * The stage's default route throttle (token bucket: `rateLimit` per second, `burstLimit` tokens); 429
   * past it. It covers every request but those of a route with its own `throttle`. Default: none.
   */
  throttle?: Throttle | undefined;
  /** The function's own timeout (e.g. 8 000 ms): a Lambda timeout is a function error, 500. Default: none. */
  functionTimeoutMs?: number;
  apiId?: string;
  accountId?: string;
  /** Called after each request is answered (not for preview pages). */
  onRequest?: (info: GatewayRequestInfo) => void;
  /** Serves the Slack preview (`GET /slack`, see local/preview/server.ts) from these messages. */
  preview?: LocalSlackServer | undefined;
}

/** HTTP API's integration timeout (503 when it passes) and payload limit. */
const INTEGRATION_TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 10 * 1024 * 1024;

export class HttpGateway {
  /** Idle instances per route's function (each function keeps its own warm instances, as Lambda does). */
  private readonly idleHandlers = new Map<(() => HttpApiHandler) | undefined, HttpApiHandler[]>();
  private readonly running = new Set<Promise<unknown>>();
  private closed = false;
  private readonly preview: SlackPreview | undefined;

  private constructor(
    private readonly server: Server,
    private readonly options: HttpGatewayOptions,
    readonly url: string,
    readonly port: number,
  ) {
    this.preview = options.preview ? new SlackPreview(options.preview) : undefined;
  }

  /** The Slack preview page's URL; undefined when the gateway serves none. */
  get previewUrl(): string | undefined {
    return this.preview ? `${this.url}/slack` : undefined;
  }

  /** Listens; rejects with the listen error (e.g. EADDRINUSE) when the port can't be had. */
  static async start(options: HttpGatewayOptions): Promise<HttpGateway> {
    const server = createServer();
    const { port, url } = await listen(server, options.port, options.host ?? '127.0.0.1');
    const gateway = new HttpGateway(server, options, url, port);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => gateway.track(gateway.handle(req, res)));
    return gateway;
  }

  /** Requests being served right now. */
  get inFlight(): number {
    return this.running.size;
  }

  /** Stops accepting requests, lets the ones in flight finish (at most `graceMs`), then drops every connection. */
  async close(graceMs = 5000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.preview?.close();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    if (this.running.size > 0) await Promise.race([Promise.allSettled([...this.running]), delay(graceMs, undefined, { ref: false })]);
    this.server.closeAllConnections();
    await closed;
  }

  private track(promise: Promise<void>): void {
    this.running.add(promise);
    promise
      .catch(() => undefined) // handle() answers every failure itself; never an unhandled rejection
      .finally(() => this.running.delete(promise))
      .catch(() => undefined);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.closed && this.preview?.handle(req, res)) return;
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://gateway.local');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname;
    const requestId = `${randomBytes(10).toString('base64').replace(/=+$/, '')}=`;
    const route = (this.options.routes ?? [{ method: 'POST', path: '/webhook' }]).find(
      (r) => r.method.toUpperCase() === method && routeMatches(r.path, path),
    );
    const routeKey = route ? `${route.method.toUpperCase()} ${route.path}` : undefined;
    const info: GatewayRequestInfo = {
      method,
      path,
      routeKey,
      status: 0,
      durationMs: 0,
      event: undefined,
      result: undefined,
      error: undefined,
    };
    const finish = (status: number, headers: Record<string, string | string[]>, body: Buffer): void => {
      info.status = status;
      info.durationMs = performance.now() - started;
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(status, { ...headers, 'content-length': String(body.length), 'apigw-requestid': requestId });
        res.end(method === 'HEAD' ? undefined : body);
      }
      try {
        this.options.onRequest?.(info);
      } catch {
        // A logging callback must not break the gateway.
      }
    };
    const message = (status: number, text: string): void =>
      finish(status, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ message: text })));

    let body: Buffer;
    try {
      body = await readBody(req, MAX_BODY_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) message(413, 'Request Entity Too Large');
      else res.destroy();
      return;
    }
    if (!this.takeToken(route)) {
      message(429, 'Too Many Requests');
      return;
    }
    if (!route || this.closed) {
      message(this.closed ? 503 : 404, this.closed ? 'Service Unavailable' : 'Not Found');
      return;
    }

    const event = toHttpApiEvent(req, body, {
      routeKey: routeKey ?? '$default',
      // The `$default` stage: no path prefix.
      stage: '$default',
      requestId,
      apiId: this.options.apiId ?? 'local',
      accountId: this.options.accountId ?? '000000000000',
    });
    info.event = event;

    const functionMs = this.options.functionTimeoutMs ?? Number.POSITIVE_INFINITY;
    const instance: { handler?: HttpApiHandler } = {};
    const outcome = await withTimeout(
      () => {
        // Building an instance can fail like a Lambda init error: a function error for this request.
        instance.handler = this.idleFor(route).pop() ?? (route.createHandler ?? this.options.createHandler)();
        return instance.handler(event);
      },
      Math.min(INTEGRATION_TIMEOUT_MS, functionMs),
    );
    // A timed-out instance may still be running: like Lambda, never hand it another request.
    const reusable = outcome.ok || !outcome.timedOut;
    if (instance.handler && reusable && !this.closed) this.idleFor(route).push(instance.handler);

    if (!outcome.ok) {
      info.error = outcome.error;
      // A Lambda timeout is a function error (500); API Gateway giving up first is a 503.
      if (outcome.timedOut && INTEGRATION_TIMEOUT_MS < functionMs) message(503, 'Service Unavailable');
      else message(500, 'Internal Server Error');
      return;
    }
    info.result = toStructuredResult(outcome.result);
    const { status, headers, body: responseBody } = fromStructuredResult(info.result);
    finish(status, headers, responseBody);
  }

  /** Token buckets: the stage default's (key undefined) and each throttled route's. */
  private readonly buckets = new Map<GatewayRoute | undefined, { count: number; atMs: number }>();

  /** A token from the route's own throttle when it has one, else from the stage default's (throttling comes before the 404). */
  private takeToken(route: GatewayRoute | undefined): boolean {
    const own = route?.throttle !== undefined;
    const throttle = own ? route.throttle : this.options.throttle;
    if (!throttle) return true;
    const key = own ? route : undefined;
    const now = Date.now();
    const bucket = this.buckets.get(key) ?? { count: throttle.burstLimit, atMs: now };
    bucket.count = Math.min(throttle.burstLimit, bucket.count + ((now - bucket.atMs) / 1000) * throttle.rateLimit);
    bucket.atMs = now;
    this.buckets.set(key, bucket);
    if (bucket.count < 1) return false;
    bucket.count -= 1;
    return true;
  }

  private idleFor(route: GatewayRoute): HttpApiHandler[] {
    const idle = this.idleHandlers.get(route.createHandler) ?? [];
    this.idleHandlers.set(route.createHandler, idle);
    return idle;
  }
}

/** Builds the payload 2.0 event API Gateway would give the function for this request. */
export function toHttpApiEvent(
  req: IncomingMessage,
  body: Buffer,
  context: { routeKey: string; stage: string; requestId: string; apiId: string; accountId: string; now?: number },
): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://gateway.local');
  const rawQueryString = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?') + 1) : '';
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values === undefined) continue;
    if (name === 'cookie') {
      cookies = values
        .flatMap((v) => v.split(';'))
        .map((c) => c.trim())
        .filter((c) => c !== '');
      continue;
    }
    headers[name] = values.join(',');
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;

  const host = headers['host'] ?? 'localhost';
  const domainName = host.replace(/:\d+$/, '');
  const now = context.now ?? Date.now();
  const method = (req.method ?? 'GET').toUpperCase();
  const text = body.length === 0 ? undefined : decodeUtf8(body);
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: context.routeKey,
    rawPath: url.pathname,
    rawQueryString,
    headers,
    requestContext: {
      accountId: context.accountId,
      apiId: context.apiId,
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: context.requestId,
      routeKey: context.routeKey,
      stage: context.stage,
      time: apiGatewayTime(now),
      timeEpoch: now,
    },
    isBase64Encoded: body.length > 0 && text === undefined,
  };
  if (cookies && cookies.length > 0) event.cookies = cookies;
  if (Object.keys(query).length > 0) event.queryStringParameters = query;
  if (body.length > 0) event.body = text ?? body.toString('base64');
  return event;
}

/** The bytes as text when they are valid UTF-8 (a BOM is kept: the signature covers it); otherwise undefined. */
function decodeUtf8(body: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return undefined;
  }
}

/** Payload 2.0: a result without `statusCode` is a 200 JSON body (a string is sent as is). */
function toStructuredResult(result: APIGatewayProxyResultV2): APIGatewayProxyStructuredResultV2 {
  if (typeof result === 'object' && result !== null && 'statusCode' in result && typeof result.statusCode === 'number') {
    return result;
  }
  const body = typeof result === 'string' ? result : (JSON.stringify(result) ?? '');
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body };
}

function fromStructuredResult(result: APIGatewayProxyStructuredResultV2): {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
} {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (result.cookies && result.cookies.length > 0) headers['set-cookie'] = result.cookies;
  const raw = result.body ?? '';
  const body = result.isBase64Encoded === true ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  return { status: result.statusCode ?? 200, headers, body };
}

/** `12/Mar/2020:19:03:58 +0000`, the format of `requestContext.time`. */
function apiGatewayTime(epochMs: number): string {
  // toUTCString: `Thu, 12 Mar 2020 19:03:58 GMT`.
  const [, day, month, year, time] = new Date(epochMs).toUTCString().split(' ');
  return `${day}/${month}/${year}:${time} +0000`;
}

/** A route's path as API Gateway matches it: literal segments, and `{name}` standing for one non-empty segment. */
export function routeMatches(routePath: string, path: string): boolean {
  const want = routePath.split('/');
  const got = path.split('/');
  return want.length === got.length && want.every((segment, i) => (/^\{[^/{}]+\}$/.test(segment) ? got[i] !== '' : segment === got[i]));
}
