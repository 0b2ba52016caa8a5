/**
 * The Web API's wire format as the local Slack server speaks it: a call's arguments read as
 * `@slack/web-api`'s WebClient sends them (form bodies with nested fields JSON-encoded, or JSON; the
 * token in `Authorization: Bearer …` or a `token` field), and Slack's `{ ok, … }` answers.
 */
import { isRecord, parseJsonOrUndefined } from '../../shared/util';

export const MAX_BODY_BYTES = 5 * 1024 * 1024;

export interface SlackAnswer {
  status: number;
  body: Record<string, unknown> | string;
  headers?: Record<string, string>;
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

/** Slack's answer to blocks it will not take: the problems in `errors` and, as `[ERROR]` lines, in `response_metadata`. */
export function invalidBlocks(problems: readonly string[]): SlackAnswer {
  return fail('invalid_blocks', { errors: [...problems], response_metadata: { messages: problems.map((p) => `[ERROR] ${p}`) } });
}

/** Nested fields WebClient JSON-encodes in form bodies. */
const JSON_FIELDS = new Set(['blocks', 'attachments', 'metadata']);

export function decodeArgs(contentType: string | undefined, raw: string, query: URLSearchParams): Record<string, unknown> {
  const args: Record<string, unknown> = Object.fromEntries(query);
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'application/json') {
    if (raw.trim() === '') return args;
    const parsed: unknown = JSON.parse(raw);
    if (!isRecord(parsed)) throw new Error('JSON body is not an object');
    return { ...args, ...parsed };
  }
  if (type !== '' && type !== 'application/x-www-form-urlencoded') throw new Error(`unsupported content type ${type}`);
  // A nested field that is not JSON stays a string: the method answers invalid_*_format.
  for (const [key, value] of new URLSearchParams(raw)) args[key] = JSON_FIELDS.has(key) ? (parseJsonOrUndefined(value) ?? value) : value;
  return args;
}

export function bearer(header: string | undefined): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(header?.trim() ?? '')?.[1];
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
