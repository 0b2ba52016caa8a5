/**
 * `bridge send run.completed|draft.ready`: a signed test delivery built exactly as the service
 * sends one (spec §6 "Delivery format", §5 "Webhook signature"): body `{id, type, created_at, data}`,
 * five headers, POST without following redirects, 10 s timeout. `--duplicate N` repeats the same
 * delivery (same id, same body bytes, signed again at each send, as the service's retries are).
 */
import { randomUUID } from 'node:crypto';
import { HANDLED_EVENT_TYPES, type HandledEventType, type WebhookEvent } from '../../shared/events';
import { signPayload } from '../../shared/signature';
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS } from '../../shared/contracts';
import { AWS_OPTIONS, buildContext, eventTypeArgument, int, str, type CommandContext, type Parsed } from '../args';
import type { LeafDef } from '../command-spec';
import { secretsClient, STACK_OUTPUTS } from '../aws';
import { defaultProjectId, stackSigningSecret } from '../webhook-target';
import { parseSigningSecrets, readSecret } from './secrets';
import { networkCode, UsageError } from '../errors';
import type { CliIo } from '../io';
import { needLocal, type LocalReady } from '../ready-file';
import type { CommandResult } from '../result';

export const USER_AGENT = 'Service-Webhooks/1';
export const DELIVERY_TIMEOUT_MS = 10_000;
const MAX_BODY_SHOWN = 2_000;

export interface DeliveryInput {
  type: HandledEventType;
  projectId: string;
  runId?: string | undefined;
  assetId?: string | undefined;
  /** draft.ready version: a number when it looks like one, else the string. */
  version?: string | undefined;
  answers?: number | undefined;
  deliveryId?: string | undefined;
  /** created_at; default now. */
  createdAt?: Date;
}

export interface Delivery {
  event: WebhookEvent;
  /** The exact body bytes sent on every attempt. */
  body: string;
}

/** Per event type: the flags that fill its data, and its data as the service sends it (a new type is a compile error until it has an entry). */
export const SEND_DATA: {
  readonly [T in HandledEventType]: { readonly flags: readonly string[]; data(input: DeliveryInput): Record<string, unknown> };
} = {
  'run.completed': {
    flags: ['run', 'answers'],
    data: (input) => ({
      project_id: input.projectId,
      run_id: input.runId ?? randomUUID(),
      status: 'completed',
      answers: input.answers ?? 0,
    }),
  },
  'draft.ready': {
    flags: ['asset', 'version'],
    data: (input) => ({ project_id: input.projectId, asset_id: input.assetId ?? randomUUID(), version: parseVersion(input.version) }),
  },
};

export function buildDelivery(input: DeliveryInput): Delivery {
  const id = input.deliveryId ?? randomUUID();
  const data = SEND_DATA[input.type].data(input);
  const event: WebhookEvent = { id, type: input.type, created_at: (input.createdAt ?? new Date()).toISOString(), data };
  return { event, body: JSON.stringify(event) };
}

function parseVersion(version: string | undefined): unknown {
  if (version === undefined) return 1;
  return /^-?\d+(\.\d+)?$/.test(version) ? Number(version) : version;
}

/** The five headers of spec §6, signed for `timestampSeconds`. */
export function deliveryHeaders(event: WebhookEvent, body: string, secret: string, timestampSeconds: number): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Service-Event': event.type,
    'X-Service-Delivery': event.id,
    'X-Service-Signature': signPayload(secret, timestampSeconds, body),
  };
}

export interface Attempt {
  attempt: number;
  /** Unix seconds the signature carries. */
  signedAt: number;
  status: number | null;
  body: string | null;
  latencyMs: number;
  error: string | null;
  ok: boolean;
}

export async function postDelivery(
  fetchFn: typeof fetch,
  url: string,
  body: string,
  headers: Record<string, string>,
  now: () => number,
  timeoutMs = DELIVERY_TIMEOUT_MS,
): Promise<Omit<Attempt, 'attempt' | 'signedAt'>> {
  const started = now();
  try {
    const response = await fetchFn(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    const status = response.status;
    // redirect: 'manual' in Node gives the 3xx itself; never followed (spec §6 rule 6).
    return {
      status,
      body: text,
      latencyMs: now() - started,
      error: status >= 300 && status < 400 ? 'redirect not followed' : null,
      ok: status >= 200 && status < 300,
    };
  } catch (err) {
    const code = networkCode(err);
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    const reason =
      code === 'timeout'
        ? `timed out after ${timeoutMs} ms`
        : code !== undefined
          ? `cannot connect (${code})`
          : err instanceof Error
            ? `${err.message}${cause}`
            : String(err);
    return { status: null, body: null, latencyMs: now() - started, error: reason, ok: false };
  }
}

export const SEND: LeafDef = {
  summary: 'sends a signed test delivery built from flags',
  synopsis: `${HANDLED_EVENT_TYPES.join('|')} [--stack NAME | --local READY_FILE | --url URL --secret S] [options]`,
  description: `Builds a delivery exactly as the service does (body {id, type, created_at, data}; headers
Content-Type, User-Agent Service-Webhooks/1, X-Service-Event, X-Service-Delivery, X-Service-Signature),
POSTs it without following redirects (10 s timeout) and prints each attempt's status, body and latency.
Exit 1 when any attempt is not answered 2xx.

The URL, the signing secret and the project come from the running \`npm start\` (or --local), or
from --stack NAME (outputs WebhookUrl and SigningSecretsSecretArn; the project: the first in
SlackProjectChannels, else the first the read API lists); --url, --secret and --project override them.`,
  args: [{ name: 'type', choices: HANDLED_EVENT_TYPES }],
  options: {
    url: { value: 'URL', help: 'the webhook URL (stack output WebhookUrl)' },
    secret: { value: 'S', help: 'the signing secret' },
    project: { value: 'P', help: 'data.project_id (required with --url and --secret)' },
    run: { value: 'R', help: 'run.completed data.run_id (default: a new UUID)' },
    answers: { value: 'N', help: 'run.completed data.answers (default 0)' },
    asset: { value: 'A', help: 'draft.ready data.asset_id (default: a new UUID)' },
    version: { value: 'V', help: 'draft.ready data.version (default 1)' },
    'delivery-id': { value: 'ID', help: 'the event id, in the header and the body (default: a new UUID)' },
    duplicate: { value: 'N', preset: '1', help: 'send the same delivery N more times (same id and body); alone: once more' },
    age: { value: 'SECONDS', help: 'sign with a timestamp this old (stale test); negative for the future' },
    ...AWS_OPTIONS,
  },
  run: sendCommand,
};

/**
 * The signing secret of the local stack: the first one its Secrets Manager holds now (so a rotation
 * with `bridge secrets signing …` is followed), else the one in the ready file.
 */
export async function liveLocalSecret(ctx: CommandContext, local: LocalReady): Promise<string> {
  if (local.secretsManagerEndpoint !== undefined && local.signingSecretsSecretId !== undefined) {
    const sm = secretsClient(ctx.settings);
    try {
      const live = parseSigningSecrets(await readSecret(sm, { id: local.signingSecretsSecretId, endpoint: local.secretsManagerEndpoint }));
      if (live[0] !== undefined) return live[0];
    } finally {
      sm.destroy();
    }
  }
  return needLocal(local, local.signingSecrets[0], 'secrets (signing secret)');
}

function checkUrl(url: string): void {
  try {
    const parsedUrl = new URL(url);
    if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new UsageError(`--url must be an http(s) URL, got "${url}"`, 'send');
  }
}

/** `--version` is the draft's version number: a whole number from 1, like `--answers`. */
function versionOption(parsed: Parsed): string | undefined {
  const version = int(parsed, 'version', 1, Number.MAX_SAFE_INTEGER);
  return version === undefined ? undefined : String(version);
}

/** "signed 400 s in the future", plus whether the default tolerance refuses it. */
function ageNote(ageSeconds: number): string {
  if (ageSeconds === 0) return '';
  const when = ageSeconds > 0 ? 'ago' : 'in the future';
  const outside =
    Math.abs(ageSeconds) > DEFAULT_SIGNATURE_TOLERANCE_SECONDS
      ? ` (outside the default ${DEFAULT_SIGNATURE_TOLERANCE_SECONDS} s tolerance: expect 401)`
      : '';
  return `  signed ${Math.abs(ageSeconds)} s ${when}${outside}`;
}

/** URL, secret and project of the delivery: the flags, else the local stack, else the named deployed stack. */
async function sendTarget(parsed: Parsed, ctx: CommandContext): Promise<{ url: string; secret: string; projectId: string }> {
  const local = ctx.local;
  const urlFlag = str(parsed, 'url');
  const secretFlag = str(parsed, 'secret');
  const url =
    urlFlag ??
    (local !== undefined ? needLocal(local, local.webhookUrl, 'webhookUrl') : await ctx.stack.require(STACK_OUTPUTS.webhookUrl, '--url'));
  const secret = secretFlag ?? (local !== undefined ? await liveLocalSecret(ctx, local) : await stackSigningSecret(ctx));
  // With --url and --secret nothing else names a project; otherwise the stack's first one.
  const projectId =
    str(parsed, 'project') ??
    (urlFlag !== undefined && secretFlag !== undefined && local === undefined ? undefined : await defaultProjectId(ctx));
  if (projectId === undefined) throw new UsageError('--project is required (the stack names none, and the read API listed none)', 'send');
  return { url, secret, projectId };
}

async function sendCommand(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const eventType = eventTypeArgument(parsed);
  for (const type of HANDLED_EVENT_TYPES) {
    const { flags } = SEND_DATA[type];
    if (type !== eventType && flags.some((flag) => parsed.values[flag] !== undefined)) {
      throw new UsageError(`${flags.map((flag) => `--${flag}`).join(' and ')} apply to ${type}`, 'send');
    }
  }

  const version = versionOption(parsed);
  const duplicates = int(parsed, 'duplicate', 0, 100) ?? 0;
  const ageSeconds = int(parsed, 'age', -10 * 365 * 86_400, 10 * 365 * 86_400) ?? 0;
  const answers = int(parsed, 'answers', 0, Number.MAX_SAFE_INTEGER);
  const urlFlag = str(parsed, 'url');
  if (urlFlag !== undefined) checkUrl(urlFlag);
  const ctx = await buildContext(parsed, io);
  const { url, secret, projectId } = await sendTarget(parsed, ctx);
  checkUrl(url);

  const signedAtFor = (): number => Math.floor(ctx.now() / 1000) - ageSeconds;
  const delivery = buildDelivery({
    type: eventType,
    projectId,
    runId: str(parsed, 'run'),
    assetId: str(parsed, 'asset'),
    version,
    answers,
    deliveryId: str(parsed, 'delivery-id'),
    createdAt: new Date(signedAtFor() * 1000),
  });

  const out = ctx.out;
  out.say(`POST ${url}  ${delivery.event.type}  delivery ${delivery.event.id}${ageNote(ageSeconds)}`);
  const attempts: Attempt[] = [];
  for (let i = 0; i <= duplicates; i++) {
    const signedAt = signedAtFor();
    const headers = deliveryHeaders(delivery.event, delivery.body, secret, signedAt);
    const result = await postDelivery(ctx.fetch, url, delivery.body, headers, ctx.now);
    const attempt: Attempt = { attempt: i + 1, signedAt, ...result };
    attempts.push(attempt);
    const shown =
      attempt.body === null ? '' : attempt.body.length > MAX_BODY_SHOWN ? `${attempt.body.slice(0, MAX_BODY_SHOWN)}…` : attempt.body;
    const status = attempt.status === null ? 'ERR' : String(attempt.status);
    out.say(
      `#${attempt.attempt}  ${status}  ${attempt.latencyMs} ms  ${attempt.error !== null ? `${attempt.error}  ` : ''}${shown.replace(/\s+/g, ' ').trim()}`,
    );
  }
  const failed = attempts.filter((a) => !a.ok).length;
  if (failed > 0 && attempts.every((a) => a.status === null)) {
    // Nothing answered at all: say so the way other commands report an unreachable endpoint.
    ctx.out.warn(`no answer from ${url}: ${attempts[0]?.error ?? 'unreachable'}`);
  }
  out.say(failed === 0 ? `all ${attempts.length} attempt(s) answered 2xx` : `${failed} of ${attempts.length} attempt(s) not accepted`);
  return { exitCode: failed === 0 ? 0 : 1, json: { url, event: delivery.event, body: delivery.body, attempts } };
}
