/**
 * Client for the service's read API (spec §4): projects, visibility overview, gaps, results and
 * reasoning cards. Uses the global `fetch` of Node 20 (injectable).
 *
 * Time: every call ends by `deadline()` when one is given (e.g. Lambda's remaining time minus a
 * margin): the per-call timeout is min(timeoutMs, deadline - now), and a call with no time left
 * throws `ReadApiDeadlineError` before any request is made.
 *
 * Errors (each one of the domain's vocabulary in ../errors, and each carries `path`, the route path
 * without query, key or base URL):
 * - `RateLimitedError`: 429 whose Retry-After wait would not end before the deadline (or would be
 *   longer than `maxRateLimitWaitMs`, or 429 came back more than `maxRateLimitRetries` times).
 *   Carries `retryAfterSeconds`. 429 is the only status retried (spec §7), always with the same request.
 * - `ReadApiError`: any other non-2xx, with `status` and the service's error `code` when the body has one:
 *   `ReadApiRefusedError` (4xx, NeedsOperatorFix) or `ReadApiServerError` (5xx, Unavailable).
 *   Redirects are not followed (a 3xx is a `ReadApiError`), so the key never goes to another host.
 * - `ReadApiUnavailableError`: network failure or timeout (`cause` set). `ReadApiDeadlineError` is
 *   the no-time-left case of it.
 * - `ReadApiResponseError`: 2xx whose body is not JSON or lacks what the route must return.
 *
 * Parsing is tolerant (unknown fields ignored, optional fields defaulted) and never throws a
 * TypeError. Choices for what the spec leaves "not shown":
 * - Metric values that are objects or arrays become their JSON text; a missing value is null; a
 *   missing caption is null. A metric without a string label is skipped.
 * - Engine rows: the first array field of the overview whose key matches /engine|platform/i
 *   (an object keyed by engine name is accepted too: each entry becomes a row starting ['engine', key]).
 *   Alerts: the first array field whose key matches /alert/i; a string alert becomes [['message', s]].
 * - Rows (`GenericRow`) keep scalar fields in the order sent. A nested object is flattened one level
 *   as `parent.child` (its scalar children only; deeper objects dropped). An array of scalars becomes
 *   one string joined with ", "; any other array is dropped.
 * - Gaps without a usable prompt_id or prompt_text are skipped and counted (`getGapsWithSkipped`);
 *   a missing prompt_ref is null, platforms_losing [] and top_competitor ''. Other fields go to `extra`
 *   (same flattening as rows).
 * - Probes without an id are skipped; a reasoning_card_id that isn't a non-empty string/number is null.
 * - Reasons: missing impact/category/detail become ''; entries that aren't objects or have none of
 *   the three are skipped.
 */
import { DIGEST_DEFAULTS, ENV } from '../contracts';
import { AFTER_FIX_REPLAY, NeedsOperatorFix, RateLimited, UnexpectedResponse, Unavailable } from '../errors';
import type { GapsResult, ReadApi } from '../ports';
import { headerValueProblem, unusableSecret } from '../secrets';
import { isRecord, sleep as defaultSleep } from '../util';
import type { Gap, GenericRow, Metric, Probe, Project, Reason, ReasoningCard, Scalar, VisibilityOverview } from '../read-api-types';

export const DEFAULT_RANGE = DIGEST_DEFAULTS.visibilityRange;
export const DEFAULT_GAPS_PAGE_SIZE = DIGEST_DEFAULTS.gapsPageSize;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RATE_LIMIT_RETRIES = 5;
export const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 60_000;
/** Wait used when a 429 carries no usable Retry-After. */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

// ---------------------------------------------------------------------------------------------
// Errors: each is one of the domain's (../errors), with the route `path` (no base URL, query or key)
// ---------------------------------------------------------------------------------------------

/** 4xx other than a retried 429: the key, base URL or project id needs fixing. */
export class ReadApiRefusedError extends NeedsOperatorFix {
  override name = 'ReadApiError';
  constructor(
    message: string,
    readonly path: string,
    readonly status: number,
    /** The service's error code when the body carried one (`code`, `error.code` or `error`), else null. */
    readonly code: string | null,
  ) {
    super(message, refusalFix(path, status, code));
  }
}

/** 5xx: the service failed; the message is retried. */
export class ReadApiServerError extends Unavailable {
  override name = 'ReadApiError';
  constructor(
    message: string,
    readonly path: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/**
 * Any non-2xx answer other than a retried 429: a refusal (4xx, needs a fix) or a server error (5xx,
 * retried). `isReadApiError` tells either.
 */
export type ReadApiError = ReadApiRefusedError | ReadApiServerError;

export function isReadApiError(value: unknown): value is ReadApiError {
  return value instanceof ReadApiRefusedError || value instanceof ReadApiServerError;
}

function readApiError(message: string, path: string, status: number, code: string | null): ReadApiError {
  return status >= 500 ? new ReadApiServerError(message, path, status, code) : new ReadApiRefusedError(message, path, status, code);
}

function refusalFix(path: string, status: number, code: string | null): string {
  if (status === 401 || status === 403) {
    return `the read-API key is wrong or lacks access to this project: put a valid key in the read-API key secret; ${AFTER_FIX_REPLAY}`;
  }
  return `the read API refused ${path} (${status}${code ? ` ${code}` : ''}); check ${ENV.readApiBaseUrl} and the project id`;
}

/** 429 that can't be waited out within the deadline: hand the work back and retry after `retryAfterSeconds`. */
export class RateLimitedError extends RateLimited {
  override name = 'RateLimitedError';
  readonly status = 429;
  constructor(
    message: string,
    readonly path: string,
    retryAfterSeconds: number,
    readonly code: string | null,
  ) {
    super(message, retryAfterSeconds);
  }
}

/** The service could not be reached, or did not answer in time. `cause` holds the underlying error. */
export class ReadApiUnavailableError extends Unavailable {
  override name = 'ReadApiUnavailableError';
  constructor(
    message: string,
    readonly path: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
  }
}

/** No time was left before the caller's deadline; no request was made. */
export class ReadApiDeadlineError extends ReadApiUnavailableError {
  override name = 'ReadApiDeadlineError';
}

/** A 2xx answer whose body is not JSON or lacks what the route returns. */
export class ReadApiResponseError extends UnexpectedResponse {
  override name = 'ReadApiResponseError';
  constructor(
    message: string,
    readonly path: string,
    problem: string,
  ) {
    super(message, problem, `the read API answered ${path} with an unexpected shape (${problem})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

export interface ReadApiClientOptions {
  /** Service base URL, e.g. https://api.example.com (paths below it start with /v1). */
  baseUrl: string;
  apiKey: string;
  /** The secret the key came from, named in the error when the key can't go in a header (default "read-API key"). */
  apiKeySecretName?: string;
  /** Visibility range query value (default '7d'). */
  range?: string;
  /** page_size sent to the gaps route (default 50). */
  gapsPageSize?: number;
  /** Per-call timeout (default 30 s), further bounded by the deadline. */
  timeoutMs?: number;
  /** Epoch ms by which every call must have ended, e.g. Lambda's remaining time minus a margin. */
  deadline?: () => number;
  /** Clock in epoch ms (default Date.now). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  fetch?: typeof fetch;
  /** How many times a 429 is waited out and the request repeated before giving up (default 5). */
  maxRateLimitRetries?: number;
  /** Longest single Retry-After wait when no deadline bounds it (default 60 s). */
  maxRateLimitWaitMs?: number;
}

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export class ReadApiClient implements ReadApi {
  private readonly base: string;
  private readonly apiKey: string;
  private readonly range: string;
  private readonly gapsPageSize: number;
  private readonly timeoutMs: number;
  private readonly deadline: (() => number) | undefined;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly fetchFn: typeof fetch;
  private readonly maxRateLimitRetries: number;
  private readonly maxRateLimitWaitMs: number;

  constructor(options: ReadApiClientOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.baseUrl);
    } catch {
      throw new Error(`Read API base URL is not a valid URL; set ${ENV.readApiBaseUrl} to e.g. https://api.example.com`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new Error(`Read API base URL must use http or https, got ${parsed.protocol}`);
    }
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new Error('Read API key is empty; set the read-API key secret');
    }
    // Checked once here: fetch would throw a TypeError quoting "Bearer <key>" on every call.
    const problem = headerValueProblem(options.apiKey.trim());
    if (problem !== undefined) throw unusableSecret(options.apiKeySecretName ?? 'read-API key', problem);
    this.base = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
    this.apiKey = options.apiKey.trim();
    this.range = options.range ?? DEFAULT_RANGE;
    this.gapsPageSize = options.gapsPageSize ?? DEFAULT_GAPS_PAGE_SIZE;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.deadline = options.deadline;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? defaultSleep;
    this.fetchFn = options.fetch ?? globalThis.fetch;
    this.maxRateLimitRetries = options.maxRateLimitRetries ?? DEFAULT_MAX_RATE_LIMIT_RETRIES;
    this.maxRateLimitWaitMs = options.maxRateLimitWaitMs ?? DEFAULT_MAX_RATE_LIMIT_WAIT_MS;
  }

  async listProjects(): Promise<Project[]> {
    const path = '/v1/projects';
    const body = await this.get(path, {});
    const list = listField(body, 'projects');
    if (list === undefined) throw shapeError(path, 'no "projects" array');
    const projects: Project[] = [];
    for (const item of list) {
      if (!isRecord<Json>(item)) continue;
      const id = idString(item['id']);
      if (id === undefined) continue;
      const name = nonEmptyString(item['name']) ?? id;
      projects.push({ id, name, industry: nonEmptyString(item['industry']) ?? null });
    }
    return projects;
  }

  async getVisibility(projectId: string): Promise<VisibilityOverview> {
    const path = `/v1/projects/${seg(projectId)}/visibility`;
    const body = await this.get(path, { range: this.range });
    const overview = findOverview(body);
    if (overview === undefined) throw shapeError(path, 'no "metrics" array in the overview');
    const metricsRaw = overview['metrics'];
    const metrics: Metric[] = [];
    if (Array.isArray(metricsRaw)) {
      for (const item of metricsRaw) {
        if (!isRecord<Json>(item)) continue;
        const label = typeof item['label'] === 'string' ? item['label'] : undefined;
        if (label === undefined) continue;
        metrics.push({ label, value: toScalar(item['value']), caption: captionOf(item['caption']) });
      }
    }
    return {
      metrics,
      engines: rowsOf(findCollection(overview, /engine|platform/i), 'engine', 'engine'),
      alerts: rowsOf(findCollection(overview, /alert/i), 'message', 'alert'),
    };
  }

  async getGaps(projectId: string): Promise<Gap[]> {
    return (await this.getGapsWithSkipped(projectId)).gaps;
  }

  async getGapsWithSkipped(projectId: string): Promise<GapsResult> {
    const path = `/v1/projects/${seg(projectId)}/gaps`;
    const body = await this.get(path, { page_size: String(this.gapsPageSize) });
    const list = listField(body, 'gaps');
    if (list === undefined) throw shapeError(path, 'no "gaps" array');
    const gaps: Gap[] = [];
    let skipped = 0;
    for (const item of list) {
      const gap = isRecord<Json>(item) ? parseGap(item) : undefined;
      if (gap === undefined) skipped += 1;
      else gaps.push(gap);
    }
    return { gaps, skipped };
  }

  async getResults(projectId: string, promptId: string): Promise<Probe[]> {
    const path = `/v1/projects/${seg(projectId)}/results`;
    const body = await this.get(path, { prompt_id: promptId });
    const list = listField(body, 'probes');
    if (list === undefined) throw shapeError(path, 'no "probes" array');
    const probes: Probe[] = [];
    for (const item of list) {
      if (!isRecord<Json>(item)) continue;
      const id = idString(item['id']);
      if (id === undefined) continue;
      probes.push({ id, reasoning_card_id: idString(item['reasoning_card_id']) ?? null, engine: engineOf(item) });
    }
    return probes;
  }

  async getReasoning(projectId: string, resultId: string): Promise<ReasoningCard> {
    // `engine` is filled by the caller from the result it chose (the card itself names none).
    const path = `/v1/projects/${seg(projectId)}/results/${seg(resultId)}/reasoning`;
    const body = await this.get(path, {});
    let card: Json = body;
    if (isRecord<Json>(body) && !Array.isArray(body['reasons'])) {
      // Tolerate one wrapping object, e.g. {"reasoning_card": {"reasons": [...]}}.
      const inner = Object.values(body).find((v) => isRecord<Json>(v) && Array.isArray(v['reasons']));
      if (inner !== undefined) card = inner;
    }
    const list = isRecord<Json>(card) ? card['reasons'] : undefined;
    if (!Array.isArray(list)) throw shapeError(path, 'no "reasons" array');
    const reasons: Reason[] = [];
    for (const item of list) {
      if (!isRecord<Json>(item)) continue;
      const impact = textOf(item['impact']);
      const category = textOf(item['category']);
      const detail = textOf(item['detail']);
      if (impact === undefined && category === undefined && detail === undefined) continue;
      reasons.push({ impact: impact ?? '', category: category ?? '', detail: detail ?? '' });
    }
    return { reasons };
  }

  /** One GET with the deadline, timeout and 429 rules; resolves with the parsed JSON body. */
  private async get(path: string, query: Record<string, string>): Promise<Json> {
    const search = new URLSearchParams(query).toString();
    const url = `${this.base}${path}${search === '' ? '' : `?${search}`}`;
    for (let attempt = 0; ; attempt += 1) {
      const response = await this.send(url, path);
      const text = await this.readBody(response, path);
      if (response.status >= 200 && response.status < 300) return parseJson(text, path);
      const { code, message } = errorDetails(text);
      if (response.status === 429) {
        const waitMs = this.retryAfterMs(response.headers.get('retry-after'));
        const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
        const deadline = this.deadline?.();
        const tooLong = deadline !== undefined ? this.now() + waitMs >= deadline : waitMs > this.maxRateLimitWaitMs;
        if (tooLong || attempt >= this.maxRateLimitRetries) {
          const why = tooLong ? 'the wait does not fit in the time left' : `still limited after ${attempt + 1} tries`;
          throw new RateLimitedError(
            `Read API rate limited GET ${path} (retry after ${retryAfterSeconds} s; ${why})`,
            path,
            retryAfterSeconds,
            code,
          );
        }
        await this.sleep(waitMs);
        continue;
      }
      throw readApiError(describeStatus(response.status, path, code, message), path, response.status, code);
    }
  }

  private timeLeft(path: string): number {
    let ms = this.timeoutMs;
    if (this.deadline !== undefined) ms = Math.min(ms, this.deadline() - this.now());
    if (!(ms > 0)) {
      throw new ReadApiDeadlineError(`No time left to call the read API (GET ${path}) before the deadline`, path);
    }
    return Math.ceil(ms);
  }

  private async send(url: string, path: string): Promise<Response> {
    const ms = this.timeLeft(path);
    const signal = AbortSignal.timeout(ms);
    try {
      return await this.fetchFn(url, {
        method: 'GET',
        headers: { Authorization: `Bearer ${this.apiKey}`, Accept: 'application/json' },
        redirect: 'manual',
        signal,
      });
    } catch (error) {
      throw unavailable(error, path, ms, this.apiKey);
    }
  }

  private async readBody(response: Response, path: string): Promise<string> {
    try {
      return await response.text();
    } catch (error) {
      throw unavailable(error, path, undefined, this.apiKey);
    }
  }

  /** Retry-After as delta seconds or an HTTP date; missing or unusable → DEFAULT_RETRY_AFTER_SECONDS. */
  private retryAfterMs(header: string | null): number {
    const value = header?.trim() ?? '';
    if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
    if (value !== '') {
      const at = Date.parse(value);
      if (!Number.isNaN(at)) return Math.max(0, at - this.now());
    }
    return DEFAULT_RETRY_AFTER_SECONDS * 1000;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function seg(value: string): string {
  return encodeURIComponent(value);
}

function nonEmptyString(value: Json | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** An identifier: a non-empty string, or a finite number given as one. */
function idString(value: Json | undefined): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return nonEmptyString(value);
}

/** A text field: strings as sent, other scalars as text, anything else missing. */
function textOf(value: Json | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function captionOf(value: Json | undefined): string | null {
  const text = textOf(value);
  return text === undefined || text === '' ? null : text;
}

function isScalar(value: Json | undefined): value is Scalar {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** Scalars as sent (non-finite numbers can't come from JSON); objects and arrays as JSON text; missing → null. */
function toScalar(value: Json | undefined): Scalar {
  if (value === undefined) return null;
  if (isScalar(value)) return value;
  return JSON.stringify(value);
}

/** The array under `key`, or the body itself when the service sent a bare array. */
function listField(body: Json, key: string): Json[] | undefined {
  if (Array.isArray(body)) return body;
  if (!isRecord<Json>(body)) return undefined;
  const value = body[key];
  return Array.isArray(value) ? value : undefined;
}

/** The overview object: the body, or one object field of it that holds the metrics array. */
function findOverview(body: Json): JsonObject | undefined {
  if (!isRecord<Json>(body)) return undefined;
  if (Array.isArray(body['metrics'])) return body;
  for (const value of Object.values(body)) {
    if (isRecord<Json>(value) && Array.isArray(value['metrics'])) return value;
  }
  return undefined;
}

type Collection = { kind: 'array'; items: Json[] } | { kind: 'keyed'; entries: [string, Json][] };

/** The first field (in body order) whose key matches: an array, or an object whose values are all objects. */
function findCollection(overview: JsonObject, pattern: RegExp): Collection | undefined {
  for (const [key, value] of Object.entries(overview)) {
    if (key === 'metrics' || !pattern.test(key)) continue;
    if (Array.isArray(value)) return { kind: 'array', items: value };
    if (isRecord<Json>(value)) {
      const entries = Object.entries(value);
      if (entries.length > 0 && entries.every(([, v]) => isRecord<Json>(v))) return { kind: 'keyed', entries };
    }
  }
  return undefined;
}

function rowsOf(collection: Collection | undefined, scalarField: string, keyField: string): GenericRow[] {
  if (collection === undefined) return [];
  const rows: GenericRow[] = [];
  if (collection.kind === 'array') {
    for (const item of collection.items) {
      if (isRecord<Json>(item)) {
        const row = flatten(item, new Set());
        if (row.length > 0) rows.push(row);
      } else if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') {
        rows.push([[scalarField, item]]);
      }
    }
  } else {
    for (const [key, value] of collection.entries) {
      if (!isRecord<Json>(value)) continue;
      const inner = flatten(value, new Set());
      const hasKeyField = inner.some(([field]) => field === keyField);
      rows.push(hasKeyField ? inner : [[keyField, key], ...inner]);
    }
  }
  return rows;
}

/**
 * Scalar fields of an object in order. Nested objects are flattened one level as `parent.child`
 * (scalar children only); arrays of scalars become one ", "-joined string; other values are dropped.
 */
function flatten(object: JsonObject, skip: ReadonlySet<string>): GenericRow {
  const row: (readonly [string, Scalar])[] = [];
  for (const [key, value] of Object.entries(object)) {
    if (skip.has(key)) continue;
    if (isScalar(value)) {
      row.push([key, value]);
    } else if (Array.isArray(value)) {
      if (value.every((v) => isScalar(v) && v !== null)) row.push([key, value.map((v) => String(v)).join(', ')]);
    } else {
      for (const [child, inner] of Object.entries(value)) {
        if (isScalar(inner)) row.push([`${key}.${child}`, inner]);
      }
    }
  }
  return row;
}

const GAP_FIELDS: ReadonlySet<string> = new Set(['prompt_id', 'prompt_ref', 'prompt_text', 'platforms_losing', 'top_competitor']);

function parseGap(item: JsonObject): Gap | undefined {
  const promptId = idString(item['prompt_id']);
  const promptText = nonEmptyString(item['prompt_text']);
  if (promptId === undefined || promptText === undefined) return undefined;
  const ref = item['prompt_ref'];
  const platformsRaw = item['platforms_losing'];
  let platforms: string[] = [];
  if (Array.isArray(platformsRaw)) {
    platforms = platformsRaw.map((p) => textOf(p)).filter((p): p is string => p !== undefined && p !== '');
  } else if (typeof platformsRaw === 'string') {
    platforms = platformsRaw
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '');
  }
  return {
    prompt_id: promptId,
    prompt_ref: isScalar(ref) ? ref : null,
    prompt_text: promptText,
    platforms_losing: platforms,
    top_competitor: textOf(item['top_competitor']) ?? '',
    extra: flatten(item, GAP_FIELDS),
  };
}

function parseJson(text: string, path: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new ReadApiResponseError(
      `Read API answered GET ${path} with a body that is not JSON (${text.length} bytes)`,
      path,
      'body is not JSON',
    );
  }
}

function shapeError(path: string, problem: string): ReadApiResponseError {
  return new ReadApiResponseError(`Read API answered GET ${path} with an unexpected shape: ${problem}`, path, problem);
}

/** The error code and message of an error body, whatever its shape. */
function errorDetails(text: string): { code: string | null; message: string | null } {
  let body: Json;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    return { code: null, message: null };
  }
  if (!isRecord<Json>(body)) return { code: null, message: null };
  const error = body['error'];
  const code =
    nonEmptyString(body['code']) ?? (isRecord<Json>(error) ? nonEmptyString(error['code']) : undefined) ?? nonEmptyString(error) ?? null;
  const message =
    (isRecord<Json>(error) ? nonEmptyString(error['message']) : undefined) ??
    nonEmptyString(body['message']) ??
    nonEmptyString(body['error_description']) ??
    null;
  return { code, message: message === null ? null : message.slice(0, 200) };
}

function describeStatus(status: number, path: string, code: string | null, message: string | null): string {
  const detail = `${code === null ? '' : ` ${code}`}${message === null ? '' : `: ${message}`}`;
  const base = `Read API answered GET ${path} with ${status}${detail}`;
  if (status === 401 || status === 403) {
    return `${base}. The read-API key is wrong or lacks access to this project; fix: set the read-API key secret to a valid key of the workspace`;
  }
  if (status === 404) return `${base}. The project or result does not exist or this key cannot see it`;
  return base;
}

function unavailable(error: unknown, path: string, timeoutMs: number | undefined, apiKey: string): ReadApiUnavailableError {
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') {
    const after = timeoutMs === undefined ? '' : ` after ${timeoutMs} ms`;
    return new ReadApiUnavailableError(`Read API did not answer GET ${path} in time${after}`, path, { cause: error });
  }
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const message = `${error instanceof Error ? error.message : String(error)}${cause}`;
  // fetch's own errors may quote the request's headers: never pass the key on, in the text or the cause.
  const leaks = message.includes(apiKey);
  return new ReadApiUnavailableError(`Read API unreachable for GET ${path} (${message.split(apiKey).join('[redacted]')})`, path, {
    cause: leaks ? undefined : error,
  });
}

/** The engine a result names, if any: the spec shows none, so any of the usual field names counts. */
function engineOf(item: Record<string, Json>): string | null {
  for (const key of ['engine', 'platform', 'model', 'engine_name']) {
    const value = item[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return null;
}
