/**
 * The local stand-in for the visibility service: the five read routes of spec §4 (GET /v1/projects…,
 * matchRoute), Bearer auth, injectable latency, a configurable rate limit, fault injection and a request
 * log; plus the webhook sender (./webhooks.ts) and simulator-only control routes under /_sim/ (control;
 * Bearer auth too, not rate limited, never faulted). Errors answer `{ "error": { "code", "message" } }`.
 *
 * Order of checks per request: latency → auth → route → injected fault → rate limit → handler.
 * Timers are unref'd; `close()` ends every connection, pending delay and webhook delivery.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BodyTooLargeError, closeServer, listen, readBody, send } from '../http';
import { HANDLED_EVENT_TYPES } from '../../shared/events';
import { timingSafeEqual } from 'node:crypto';
import { RANGES, SimulatorData, type RunInfo } from './data';
import type { SimulatorFixture } from './fixture';
import {
  WebhookSender,
  type DeliveryAttempt,
  type SendOptions,
  type SentEvent,
  type SentRun,
  type WebhookInfo,
  type WebhookRegistration,
  type WebhookSenderOptions,
  SIMULATED_EVENTS,
} from './webhooks';
import { isRecord } from '../../shared/util';

export const DEFAULT_API_KEY = 'sim_local_read_key';
export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;
const MAX_CONTROL_BODY_BYTES = 64 * 1024;

export type SimRoute = 'projects' | 'visibility' | 'gaps' | 'results' | 'reasoning';

export interface RateLimit {
  requests: number;
  perSeconds: number;
}

export interface FaultSpec {
  /** Route the fault applies to; every read route when absent. */
  route?: SimRoute;
  /** Status to answer with (default 200 when `body` is given). Without status and body the normal answer follows `delayMs`. */
  status?: number;
  /** Raw body to send (e.g. malformed JSON); a JSON error body with a code derived from the status when absent. */
  body?: string;
  /** Wait before answering (e.g. longer than the client's timeout). */
  delayMs?: number;
  /** Retry-After header value: seconds, or an HTTP date string. Not sent when absent. */
  retryAfter?: number | string;
  headers?: Record<string, string>;
  /** How many requests the fault applies to (default 1; Infinity for all). */
  times?: number;
}

export interface RequestRecord {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Epoch ms when the request arrived. */
  at: number;
  route: SimRoute | 'control' | null;
  /** Status answered (absent while in flight or when the client went away). */
  status?: number;
  /** Epoch ms when the response ended or the connection closed. */
  finishedAt?: number;
}

export interface SimulatorOptions {
  /** Port to listen on (default 0: a free port). */
  port?: number;
  host?: string;
  apiKey?: string;
  /** Delay added to every request. */
  latencyMs?: number | undefined;
  rateLimit?: RateLimit | null;
  /** Serve this fixture instead of generated data (validated; throws FixtureError). */
  fixture?: SimulatorFixture | undefined;
  /** Seed of the generated data (default 1). */
  seed?: number | undefined;
  /** Webhook sender options (retryScale, timeoutMs, failureLimit, …). */
  webhooks?: Omit<WebhookSenderOptions, 'data'>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const STATUS_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'credits_exhausted',
  403: 'forbidden',
  404: 'not_found',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'bad_gateway',
  503: 'unavailable',
  504: 'gateway_timeout',
};

function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

export class VisibilitySimulator {
  readonly url: string;
  readonly apiKey: string;
  readonly port: number;
  readonly data: SimulatorData;
  readonly webhooks: WebhookSender;

  private latencyMs: number;
  private rateLimit: RateLimit | null;
  private faults: { spec: FaultSpec; remaining: number }[] = [];
  private log: RequestRecord[] = [];
  private accepted: number[] = [];
  private inFlight = 0;
  private peak = 0;
  private readonly closing = new AbortController();
  private readonly keyBytes: Buffer;

  private constructor(
    private readonly server: Server,
    listening: { port: number; url: string },
    options: SimulatorOptions,
    data: SimulatorData,
  ) {
    this.port = listening.port;
    this.url = listening.url;
    this.apiKey = options.apiKey ?? DEFAULT_API_KEY;
    this.keyBytes = Buffer.from(`Bearer ${this.apiKey}`);
    this.latencyMs = options.latencyMs ?? 0;
    this.rateLimit = options.rateLimit ?? null;
    this.data = data;
    this.webhooks = new WebhookSender({ ...options.webhooks, data });
  }

  static async start(options: SimulatorOptions = {}): Promise<VisibilitySimulator> {
    const data =
      options.fixture !== undefined ? SimulatorData.fromFixture(options.fixture, options.seed) : SimulatorData.generate(options.seed);
    const server = createServer();
    const listening = await listen(server, options.port, options.host ?? '127.0.0.1');
    const simulator = new VisibilitySimulator(server, listening, options, data);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      void simulator.handle(req, res);
    });
    return simulator;
  }

  projectIds(): string[] {
    return this.data.projectIds();
  }

  // --- Test controls -------------------------------------------------------------------------

  /** Queues a fault; the first queued fault matching a request's route is applied and counted down. */
  injectFault(spec: FaultSpec): void {
    this.faults.push({ spec: { ...spec }, remaining: spec.times ?? 1 });
  }

  clearFaults(): void {
    this.faults = [];
  }

  setLatency(ms: number): void {
    this.latencyMs = ms;
  }

  /** Changes the rate limit (null: none) and forgets the requests counted so far. */
  setRateLimit(limit: RateLimit | null): void {
    this.rateLimit = limit;
    this.accepted = [];
  }

  /** Every request so far, oldest first (copies). */
  requests(): RequestRecord[] {
    return this.log.map((record) => ({ ...record, query: { ...record.query } }));
  }

  /** Forgets the request log and the concurrency peak. */
  clearRequests(): void {
    this.log = [];
    this.peak = this.inFlight;
  }

  /** Most requests in flight at once since start or `clearRequests()`. */
  peakConcurrency(): number {
    return this.peak;
  }

  /** Moves a project to its next run without sending a webhook. */
  advanceRun(projectId: string): RunInfo {
    return this.data.advanceRun(projectId);
  }

  // --- Webhooks (delegates to `webhooks`) ----------------------------------------------------

  addWebhook(registration: WebhookRegistration): string {
    return this.webhooks.addWebhook(registration);
  }

  listWebhooks(): WebhookInfo[] {
    return this.webhooks.listWebhooks();
  }

  deliveryAttempts(webhookId: string): DeliveryAttempt[] {
    return this.webhooks.attempts(webhookId);
  }

  triggerRun(projectId: string, options?: SendOptions): SentRun {
    return this.webhooks.triggerRun(projectId, options);
  }

  sendDraftReady(projectId: string, assetId?: string, version?: unknown, options?: SendOptions): SentEvent {
    return this.webhooks.sendDraftReady(projectId, assetId, version, options);
  }

  triggerRunsOutOfOrder(projectId: string): ReturnType<WebhookSender['triggerRunsOutOfOrder']> {
    return this.webhooks.triggerRunsOutOfOrder(projectId);
  }

  /** Stops deliveries, ends pending delays and closes every connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing.abort();
    this.webhooks.stop();
    await closeServer(this.server);
  }

  // --- Request handling ----------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator.local');
    const record: RequestRecord = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      at: Date.now(),
      route: null,
    };
    this.log.push(record);
    this.inFlight += 1;
    this.peak = Math.max(this.peak, this.inFlight);
    res.on('close', () => {
      this.inFlight -= 1;
      record.finishedAt = Date.now();
    });
    try {
      if (this.latencyMs > 0) await this.sleep(this.latencyMs);
      if (this.closed) return;
      if (!this.authorized(req.headers.authorization)) {
        throw new HttpError(401, 'unauthorized', 'Missing or invalid API key. Send "Authorization: Bearer <API_KEY>".');
      }
      if (url.pathname.startsWith('/_sim/')) {
        record.route = 'control';
        await this.control(req, res, record, url);
        return;
      }
      const match = req.method === 'GET' ? matchRoute(url.pathname) : null;
      if (match === null) throw new HttpError(404, 'not_found', `No route for ${req.method ?? 'GET'} ${url.pathname}`);
      record.route = match.route;

      const fault = this.takeFault(match.route);
      if (fault !== undefined) {
        if (fault.delayMs !== undefined && fault.delayMs > 0) await this.sleep(fault.delayMs);
        if (this.closed) return;
        if (fault.status !== undefined || fault.body !== undefined) {
          const status = fault.status ?? 200;
          const headers: Record<string, string> = { ...fault.headers };
          if (fault.retryAfter !== undefined) headers['Retry-After'] = String(fault.retryAfter);
          const body =
            fault.body ?? errorBody(STATUS_CODES[status] ?? (status >= 500 ? 'internal_error' : 'error'), `Injected fault: ${status}`);
          this.send(res, record, status, body, headers);
          return;
        }
      }

      const retryAfter = this.rateLimited();
      if (retryAfter !== null) {
        this.send(res, record, 429, errorBody('rate_limited', 'Request rate exceeded; wait Retry-After seconds.'), {
          'Retry-After': String(retryAfter),
        });
        return;
      }
      this.send(res, record, 200, JSON.stringify(this.read(match, url.searchParams)));
    } catch (error) {
      const failure = asHttpError(error);
      this.send(res, record, failure.status, errorBody(failure.code, failure.message));
    }
  }

  private read(match: RouteMatch, query: URLSearchParams): unknown {
    if (match.route === 'projects') return { projects: this.data.projects() };
    const { projectId } = match;
    const range = query.get('range') ?? '7d';
    if (match.route === 'visibility' && !(RANGES as readonly string[]).includes(range)) {
      throw new HttpError(400, 'invalid_range', `range must be one of ${RANGES.join(', ')}`);
    }
    const pageSize = match.route === 'gaps' ? pageSizeOf(query.get('page_size')) : 0;
    if (!this.data.hasProject(projectId)) throw new HttpError(404, 'not_found', `Project ${projectId} not found`);
    switch (match.route) {
      case 'visibility':
        return this.data.visibility(projectId, range);
      case 'gaps':
        return this.data.gaps(projectId, pageSize);
      case 'results':
        return { probes: this.data.results(projectId, query.get('prompt_id') ?? undefined) };
      case 'reasoning': {
        const found = this.data.reasoning(projectId, match.resultId);
        if (found.ok) return found.card;
        if (found.reason === 'no_card') throw new HttpError(404, 'no_reasoning_card', `Result ${match.resultId} has no reasoning card`);
        throw new HttpError(404, 'not_found', `Result ${match.resultId} not found`);
      }
    }
  }

  private async control(req: IncomingMessage, res: ServerResponse, record: RequestRecord, url: URL): Promise<void> {
    const [, resource, id, sub, ...rest] = url.pathname.split('/').filter((p) => p !== '');
    const route = `${req.method ?? 'GET'} ${resource}${id === undefined ? '' : '/:id'}${sub === undefined ? '' : `/${sub}`}`;
    const ok = (status: number, body: unknown): void => this.send(res, record, status, body === undefined ? '' : JSON.stringify(body));
    if (rest.length > 0) throw new HttpError(404, 'not_found', `No control route for ${req.method ?? 'GET'} ${url.pathname}`);
    if (route === 'GET webhooks') return ok(200, { webhooks: this.webhooks.listWebhooks() });
    if (route === 'GET webhooks/:id/attempts') return ok(200, { attempts: this.webhooks.attempts(decodeURIComponent(id ?? '')) });
    if (route === 'DELETE webhooks/:id') {
      if (!this.webhooks.removeWebhook(decodeURIComponent(id ?? ''))) throw new HttpError(404, 'not_found', 'No such webhook');
      return ok(204, undefined);
    }
    if (route === 'POST webhooks') {
      const registration = webhookRegistration(await readJson(req));
      try {
        const created = this.webhooks.addWebhookWithSecret(registration);
        return ok(201, { id: created.id, url: registration.url, secret: created.secret, is_active: true });
      } catch (error) {
        throw new HttpError(400, 'invalid_request', error instanceof Error ? error.message : String(error));
      }
    }
    const handled = HANDLED_EVENT_TYPES.find((type) => `POST ${SIMULATED_EVENTS[type].route}` === route);
    if (handled === undefined) throw new HttpError(404, 'not_found', `No control route for ${req.method ?? 'GET'} ${url.pathname}`);
    const body = await readJson(req);
    const projectId = body['project_id'];
    if (typeof projectId !== 'string' || !this.data.hasProject(projectId)) {
      throw new HttpError(404, 'not_found', '"project_id" must name a project of the simulator');
    }
    const wait = body['wait'] === true;
    if (handled === 'run.completed' && body['out_of_order'] === true) {
      const { older, newer, delivered } = this.webhooks.triggerRunsOutOfOrder(projectId);
      const summary = { older: { event: older.event, run: older.run }, newer: { event: newer.event, run: newer.run } };
      return ok(wait ? 200 : 202, wait ? { ...summary, reports: await delivered } : summary);
    }
    const duplicates = typeof body['duplicates'] === 'number' ? body['duplicates'] : 0;
    const sent = SIMULATED_EVENTS[handled].send(this.webhooks, projectId, body, { duplicates });
    const summary = { event: sent.event, ...(sent.run === undefined ? {} : { run: sent.run }) };
    ok(wait ? 200 : 202, wait ? { ...summary, report: await sent.delivered } : summary);
  }

  private authorized(header: string | undefined): boolean {
    if (header === undefined) return false;
    const given = Buffer.from(header.trim());
    return given.length === this.keyBytes.length && timingSafeEqual(given, this.keyBytes);
  }

  private takeFault(route: SimRoute): FaultSpec | undefined {
    const index = this.faults.findIndex((fault) => fault.spec.route === undefined || fault.spec.route === route);
    const fault = this.faults[index];
    if (fault === undefined) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults.splice(index, 1);
    return fault.spec;
  }

  /** Sliding window: null when the request may go ahead, else the seconds until a slot frees up. */
  private rateLimited(): number | null {
    const limit = this.rateLimit;
    if (limit === null) return null;
    const now = Date.now();
    const windowMs = limit.perSeconds * 1000;
    this.accepted = this.accepted.filter((at) => at > now - windowMs);
    if (this.accepted.length < limit.requests) {
      this.accepted.push(now);
      return null;
    }
    const oldest = this.accepted[0] ?? now;
    return Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
  }

  private send(res: ServerResponse, record: RequestRecord, status: number, body: string, headers: Record<string, string> = {}): void {
    if (res.headersSent || res.destroyed) return;
    record.status = status;
    send(res, status, body, { ...(body === '' ? {} : { 'Content-Type': 'application/json; charset=utf-8' }), ...headers });
  }

  private get closed(): boolean {
    return this.closing.signal.aborted;
  }

  private sleep(ms: number): Promise<void> {
    return delay(ms, undefined, { ref: false, signal: this.closing.signal }).catch(() => undefined);
  }
}

type RouteMatch =
  | { route: 'projects' }
  | { route: 'visibility' | 'gaps' | 'results'; projectId: string }
  | { route: 'reasoning'; projectId: string; resultId: string };

const READ_ROUTE = /^\/v1\/projects(?:\/([^/]+)\/(?:(visibility|gaps|results)|results\/([^/]+)\/reasoning))?$/;

/** The read route of a path, or null. Path segments are percent-decoded. */
function matchRoute(pathname: string): RouteMatch | null {
  const match = READ_ROUTE.exec(pathname);
  if (match === null) return null;
  try {
    const [projectId, sub, resultId] = match.slice(1).map((part) => (part === undefined ? undefined : decodeURIComponent(part)));
    if (projectId === undefined) return { route: 'projects' };
    if (resultId !== undefined) return { route: 'reasoning', projectId, resultId };
    return { route: sub as 'visibility' | 'gaps' | 'results', projectId };
  } catch {
    return null;
  }
}

/** `page_size`: default 25, at most 100; anything but a positive integer is refused. */
function pageSizeOf(raw: string | null): number {
  if (raw === null) return DEFAULT_PAGE_SIZE;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new HttpError(400, 'invalid_page_size', 'page_size must be a positive integer');
  return Math.min(Number(raw), MAX_PAGE_SIZE);
}

function asHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof BodyTooLargeError) return new HttpError(413, 'invalid_request', 'Body too large');
  return new HttpError(500, 'internal_error', error instanceof Error ? error.message : String(error));
}

/** The body of `POST /_sim/webhooks`, checked. */
function webhookRegistration(body: Record<string, unknown>): WebhookRegistration {
  const { url, secret, events } = body;
  if (typeof url !== 'string') throw new HttpError(400, 'invalid_request', '"url" must be a string');
  if (secret !== undefined && (typeof secret !== 'string' || secret === '')) {
    throw new HttpError(400, 'invalid_request', '"secret" must be a non-empty string when present');
  }
  if (events !== undefined && !(Array.isArray(events) && events.every((e) => typeof e === 'string'))) {
    throw new HttpError(400, 'invalid_request', '"events" must be an array of strings when present');
  }
  return { url, ...(secret === undefined ? {} : { secret }), ...(events === undefined ? {} : { events }) };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = (await readBody(req, MAX_CONTROL_BODY_BYTES)).toString('utf8');
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'invalid_json', 'Body is not valid JSON');
  }
  if (!isRecord(parsed)) throw new HttpError(400, 'invalid_request', 'Body must be a JSON object');
  return parsed;
}
