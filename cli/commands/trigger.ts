/**
 * `bridge trigger run.completed|draft.ready`: sends one correctly signed event to the webhook, like
 * `stripe trigger`: the body comes from a built-in fixture (or `--fixture FILE`), `--override
 * path=value` changes fields, and a fresh id and created_at are used unless overridden. Against the
 * local stack (ready file) or a deployed one (stack outputs WebhookUrl and SigningSecretsSecretArn).
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { EVENT_TYPES, HANDLED_EVENT_TYPES, type HandledEventType, type WebhookEvent } from '../../shared/events';
import { AWS_OPTIONS, buildContext, eventTypeArgument, str, strs, type CommandContext, type Parsed } from '../args';
import type { LeafDef } from '../command-spec';
import { STACK_OUTPUTS } from '../aws';
import { CliError, UsageError } from '../errors';
import type { CliIo } from '../io';
import { needLocal } from '../ready-file';
import type { CommandResult } from '../result';
import { deliveryHeaders, liveLocalSecret, postDelivery } from './send';
import { defaultProjectId, stackSigningSecret } from '../webhook-target';
import { triggerWeekly } from './weekly';

export const TRIGGER: LeafDef = {
  summary: 'sends a signed event from a fixture, with overrides',
  synopsis: `${HANDLED_EVENT_TYPES.join('|')} [--fixture FILE] [--override path=value ...] [options] | weekly [--channel C]`,
  description: `Sends one correctly signed event to the webhook, like \`stripe trigger\`: the body is a built-in
fixture (or FILE: a whole event {"data": {…}} or only its data), with a fresh id and created_at.
--override path=value (repeatable) sets a field; a path outside id/created_at/data is under data,
the value is JSON when it parses (answers=12, data.project_id=p1, created_at=2026-01-01T00:00:00Z).
The URL and the signing secret come from the local stack's ready file (its live Secrets Manager),
or the stack outputs WebhookUrl / SigningSecretsSecretArn; --url and --secret override them.
Exit 1 when the webhook does not answer 2xx.
\`weekly\` runs the weekly report now (every home or opted-in channel, or --channel C) through the
digest queue; a channel gets at most one report a week.`,
  args: [{ name: 'type', choices: [...HANDLED_EVENT_TYPES, 'weekly'] }],
  options: {
    fixture: { value: 'FILE', help: 'the event (or only its data) to send instead of the built-in one' },
    override: { value: 'path=value', multiple: true, help: 'sets a field (repeatable)' },
    url: { value: 'URL', help: "the webhook URL instead of the stack's" },
    secret: { value: 'S', help: "the signing secret instead of the stack's" },
    channel: { value: 'C', help: '`weekly` only: this channel only' },
    ...AWS_OPTIONS,
  },
  run: triggerCommand,
};

const EVENT_KEYS = new Set(['id', 'type', 'created_at', 'data']);

/** The built-in fixture of each type: what the service sends, with fresh ids. */
export function defaultFixture(type: HandledEventType, projectId: string | undefined): WebhookEvent {
  const data = EVENT_TYPES[type].exampleData(projectId ?? 'proj_example', randomUUID);
  return { id: randomUUID(), type, created_at: new Date().toISOString(), data };
}

/** A fixture file: a whole event ({id, type, created_at, data}) or only its `data`. */
async function readFixture(path: string, type: HandledEventType, projectId: string | undefined): Promise<WebhookEvent> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new CliError(
      `cannot read the fixture ${path}: ${err instanceof Error ? err.message : String(err)}`,
      'pass a JSON file: a whole event {"type", "data": {…}} or only the data object',
      'bad_fixture',
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new CliError(`the fixture ${path} is not a JSON object`, 'pass {"data": {…}} or the data object itself', 'bad_fixture');
  const record = raw as Record<string, unknown>;
  const base = defaultFixture(type, projectId);
  if (!('data' in record)) return { ...base, data: record };
  if (record['type'] !== undefined && record['type'] !== type)
    throw new UsageError(`the fixture is a ${JSON.stringify(record['type'])} event, not ${type}`, 'trigger');
  // A fixed id would be a duplicate on the second run: fresh id and time unless the fixture pins them.
  return { ...base, ...record, type };
}

/** "data.answers=12" → the path and the value (JSON when it parses, else the text). A path not under the event's own keys is under data. */
export function parseOverride(text: string): { path: string[]; value: unknown } {
  const at = text.indexOf('=');
  if (at <= 0) throw new UsageError(`--override must be path=value (e.g. answers=12 or data.project_id=p1), got "${text}"`, 'trigger');
  const path = text
    .slice(0, at)
    .split('.')
    .filter((part) => part !== '');
  if (path.length === 0) throw new UsageError(`--override has an empty path: "${text}"`, 'trigger');
  if (!EVENT_KEYS.has(path[0] ?? '')) path.unshift('data');
  const rawValue = text.slice(at + 1);
  let value: unknown = rawValue;
  try {
    value = JSON.parse(rawValue);
  } catch {
    // Plain text.
  }
  return { path, value };
}

export function applyOverride(event: WebhookEvent, override: { path: string[]; value: unknown }): WebhookEvent {
  if (override.path[0] === 'type')
    throw new UsageError('the event type is the command argument; --override type=… does not apply', 'trigger');
  const copy = JSON.parse(JSON.stringify(event)) as Record<string, unknown>;
  let node: Record<string, unknown> = copy;
  override.path.slice(0, -1).forEach((key) => {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  });
  node[override.path[override.path.length - 1] ?? ''] = override.value;
  return copy as unknown as WebhookEvent;
}

/** The deployed stack's webhook URL and its first live signing secret. */
async function stackTarget(ctx: CommandContext, parsed: Parsed): Promise<{ url: string; secret: string }> {
  const url = str(parsed, 'url') ?? (await ctx.stack.require(STACK_OUTPUTS.webhookUrl, '--url'));
  return { url, secret: str(parsed, 'secret') ?? (await stackSigningSecret(ctx)) };
}

async function target(ctx: CommandContext, parsed: Parsed): Promise<{ url: string; secret: string }> {
  const local = ctx.local;
  if (local === undefined) return stackTarget(ctx, parsed);
  return {
    url: str(parsed, 'url') ?? needLocal(local, local.webhookUrl, 'webhookUrl'),
    secret: str(parsed, 'secret') ?? (await liveLocalSecret(ctx, local)),
  };
}

async function triggerCommand(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  if (parsed.positionals[0] === 'weekly') return triggerWeekly(parsed, io);
  const eventType = eventTypeArgument(parsed);
  const overrides = strs(parsed, 'override').map(parseOverride);
  const ctx = await buildContext(parsed, io);
  const fixturePath = str(parsed, 'fixture');
  // A deployed stack's own project (not proj_example, which its read API doesn't know), unless --url and --secret name the target.
  const explicitTarget = str(parsed, 'url') !== undefined && str(parsed, 'secret') !== undefined;
  const projectId = ctx.local !== undefined || explicitTarget ? ctx.local?.projectIds[0] : await defaultProjectId(ctx);
  let event = fixturePath !== undefined ? await readFixture(fixturePath, eventType, projectId) : defaultFixture(eventType, projectId);
  for (const override of overrides) event = applyOverride(event, override);
  const { url, secret } = await target(ctx, parsed);

  const body = JSON.stringify(event);
  const signedAt = Math.floor(ctx.now() / 1000);
  const result = await postDelivery(ctx.fetch, url, body, deliveryHeaders(event, body, secret, signedAt), ctx.now);
  const status = result.status === null ? 'ERR' : String(result.status);
  ctx.out.say(`POST ${url}  ${event.type}  delivery ${event.id}`);
  ctx.out.say(`${status}  ${result.latencyMs} ms  ${result.error ?? ''}${(result.body ?? '').replace(/\s+/g, ' ').trim()}`);
  if (result.ok) ctx.out.say(`follow it: \`${ctx.hint('tail')}\``);
  return {
    exitCode: result.ok ? 0 : 1,
    json: { url, event, status: result.status, body: result.body, latencyMs: result.latencyMs, error: result.error, ok: result.ok },
  };
}
