/**
 * `bridge trigger run.completed|draft.ready`: one event to the webhook, like `stripe trigger`. On the
 * local stack the simulator finishes the project's next run and delivers it as the service does (its
 * scripted runs are the gallery's digest cases); with `--fixture FILE` or `--override path=value`, or
 * against a deployed stack, the CLI signs and sends a built-in fixture itself (stack outputs WebhookUrl
 * and SigningSecretsSecretArn), with a fresh id and created_at unless overridden.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { EVENT_TYPES, HANDLED_EVENT_TYPES, type HandledEventType, type WebhookEvent } from '../../shared/events';
import { AWS_OPTIONS, buildContext, didYouMean, eventTypeArgument, str, strs, type CommandContext, type Parsed } from '../args';
import type { LeafDef } from '../command-spec';
import { STACK_OUTPUTS } from '../aws';
import { CliError, UsageError } from '../errors';
import type { CliIo } from '../io';
import { needLocal, readyConnection, type LocalReady } from '../ready-file';
import { connectionWebhookUrl } from '../../shared/connections/model';
import { targetOf } from './connections';
import { liveConnection } from './doctor-connection';
import type { RunInfo } from '../../local/simulator/data';
import { SIMULATED_EVENTS, type DeliveryReport } from '../../local/simulator/webhooks';
import type { CommandResult } from '../result';
import { deliveryHeaders, liveLocalSecret, postDelivery } from './send';
import { defaultProjectId, stackSigningSecret } from '../webhook-target';
import { triggerWeekly } from './weekly';

/** The gallery fixture: a project per digest case, each with scripted runs (local/simulator/fixtures/README.md). */
const GALLERY = 'local/simulator/fixtures/gallery.json';

/** The gallery's projects and their scripted runs, for the help (read from the fixture, so the list cannot drift). */
function galleryCases(): string {
  let projects: unknown;
  try {
    projects = (JSON.parse(readFileSync(fileURLToPath(new URL(`../../${GALLERY}`, import.meta.url)), 'utf8')) as { projects?: unknown })
      .projects;
  } catch {
    return `(${GALLERY} is missing)`;
  }
  if (!Array.isArray(projects)) return `(${GALLERY} lists no projects)`;
  return projects
    .map((project: { id?: unknown; runs?: unknown }) => {
      const runs = Array.isArray(project.runs) ? project.runs.length : 0;
      return `${String(project.id)}${runs > 0 ? ` (${runs} scripted runs)` : ''}`;
    })
    .join(', ');
}

export const TRIGGER: LeafDef = {
  summary: 'sends a run.completed or draft.ready as the service does (local: the simulator finishes a run)',
  synopsis: `${HANDLED_EVENT_TYPES.join('|')} [--connection ID] [--project ID] [--fixture FILE] [--override path=value ...] [options] | weekly [--channel C]`,
  description: `Sends one event to the webhook, signed as the service signs it.
On the local stack the simulator finishes the project's next run (--project ID, default the first)
and delivers it as the service does: what the project's figures then are is what the digest shows.
With --fixture FILE (a whole event {"data": {…}} or only its data) or --override path=value
(repeatable; a path outside id/created_at/data is under data, the value is JSON when it parses:
answers=12, created_at=2026-01-01T00:00:00Z), or on a deployed stack, the CLI sends a built-in
fixture itself, with a fresh id and created_at; --url and --secret name another webhook.
--connection ID sends to that connection's webhook (/webhook/<id>) instead of the stack's: for a
client of a local stack started with clients, its simulator finishes the run of its project (default
its first); for any other connection (deployed, or added with \`connections add\`) the fixture is
signed with its newest signing secret, and --project is required.
Every digest case, scripted (npm start -- --fixture ${GALLERY}; the first trigger of a project
posts its baseline, the next its change, see local/simulator/fixtures/README.md):
  ${galleryCases()}
Exit 1 when the webhook does not answer 2xx.
\`weekly\` runs the weekly report now (every home or opted-in channel, or --channel C) through the
digest queue; a channel gets at most one report a week.`,
  args: [{ name: 'type', choices: [...HANDLED_EVENT_TYPES, 'weekly'] }],
  options: {
    project: { value: 'ID', help: 'the project (default: the first the stack names)' },
    connection: { value: 'ID', help: "a connection's webhook and workspace instead of the stack's own" },
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

/**
 * A connection's webhook and its newest signing secret (the service's current webhook signs with it), from
 * the table and Secrets Manager: a deployed stack's, or one added to the local stack with `connections add`.
 */
async function connectionTarget(parsed: Parsed, io: CliIo, id: string): Promise<{ url: string; secret: string }> {
  const target = await targetOf(parsed, io);
  try {
    const { secret } = await liveConnection(target, id);
    const url =
      str(parsed, 'url') ?? connectionWebhookUrl(target.webhookUrl ?? (await target.ctx.stack.require(STACK_OUTPUTS.webhookUrl)), id);
    return { url, secret: str(parsed, 'secret') ?? secret.signingSecrets.at(-1) ?? '' };
  } finally {
    target.close();
  }
}

async function target(ctx: CommandContext, parsed: Parsed, io: CliIo): Promise<{ url: string; secret: string }> {
  const local = ctx.local;
  const connection = str(parsed, 'connection');
  const client = local?.connections.find((c) => c.id === connection);
  if (client !== undefined)
    return { url: str(parsed, 'url') ?? client.webhookUrl, secret: str(parsed, 'secret') ?? client.secrets[0] ?? '' };
  if (connection !== undefined) return connectionTarget(parsed, io, connection);
  if (local === undefined) return stackTarget(ctx, parsed);
  return {
    url: str(parsed, 'url') ?? needLocal(local, local.webhookUrl, 'webhookUrl'),
    secret: str(parsed, 'secret') ?? (await liveLocalSecret(ctx, local)),
  };
}

/** The service workspace a simulator trigger acts on: the stack's own, or a connection's. */
interface SimulatedWorkspace {
  /** Whose webhook it delivers to, as said in the output. */
  webhook: string;
  simulatorUrl: string;
  apiKey: string;
  projectIds: readonly string[];
}

function simulatedWorkspace(local: LocalReady, connection: string | undefined): SimulatedWorkspace {
  if (connection !== undefined) return { ...readyConnection(local, connection), webhook: `the webhook of ${connection}` };
  return {
    webhook: 'the webhook',
    simulatorUrl: needLocal(local, local.simulatorUrl, 'simulatorUrl'),
    apiKey: needLocal(local, local.apiKey, 'apiKey'),
    projectIds: local.projectIds,
  };
}

/** What the simulator's control route answers with `wait`: the event it sent, the run it finished, and how each delivery went. */
interface SimulatorAnswer {
  event: WebhookEvent;
  run?: RunInfo;
  report: DeliveryReport;
}

/** Whether this trigger goes through the simulator: a local stack running one, and no event given by the command line. */
function bySimulator(ctx: CommandContext, parsed: Parsed): ctx is CommandContext & { local: LocalReady } {
  const given = ['fixture', 'url', 'secret'].some((name) => str(parsed, name) !== undefined) || strs(parsed, 'override').length > 0;
  // A connection without a simulator of its own (not one of the stack's clients) gets a signed fixture.
  const connection = str(parsed, 'connection');
  const simulated = connection === undefined || ctx.local?.connections.some((c) => c.id === connection) === true;
  return ctx.local?.simulatorRuns === true && !given && simulated;
}

/** The simulator finishes the project's next run (or drafts an asset) and delivers the event to the bridge, as the service does. */
async function triggerBySimulator(
  ctx: CommandContext & { local: LocalReady },
  type: HandledEventType,
  project: string | undefined,
  workspace: SimulatedWorkspace,
): Promise<CommandResult> {
  const local = ctx.local;
  const base = workspace.simulatorUrl;
  const projectId = project ?? needLocal(local, workspace.projectIds[0], 'projectIds');
  const url = `${base}/_sim/${SIMULATED_EVENTS[type].route}`;
  let response: Response;
  try {
    response = await ctx.fetch(url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${workspace.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ project_id: projectId, wait: true }),
    });
  } catch (err) {
    throw new CliError(
      `cannot reach the simulator at ${base}: ${err instanceof Error ? err.message : String(err)}`,
      'is `npm start` still running? start it again',
      'unreachable',
    );
  }
  const text = await response.text();
  if (response.status === 404 && !workspace.projectIds.includes(projectId))
    throw new UsageError(
      `the simulator has no project "${projectId}": use one of ${workspace.projectIds.join(', ')}${didYouMean(projectId, [...workspace.projectIds])} (the gallery's: npm start -- --fixture ${GALLERY})`,
      'trigger',
    );
  if (!response.ok)
    throw new CliError(`the simulator answered HTTP ${response.status}: ${text.slice(0, 300)}`, 'restart `npm start`', 'simulator_error');
  const answer = JSON.parse(text) as SimulatorAnswer;
  const delivered = answer.report.results.filter((result) => !result.duplicate);
  const ok = delivered.length > 0 && delivered.every((result) => result.outcome === 'delivered');
  const what =
    answer.run !== undefined
      ? `finished run ${answer.run.run} of ${projectId} (${answer.run.answers} answers)`
      : `sent ${type} for ${projectId}`;
  ctx.out.say(`the simulator ${what} and delivered ${type} ${answer.event.id} to ${workspace.webhook}`);
  for (const result of delivered)
    ctx.out.say(
      `${result.lastStatus ?? 'ERR'}  ${result.outcome} after ${result.attempts} attempt(s)${result.error !== null ? `  ${result.error}` : ''}`,
    );
  if (ok) ctx.out.say(nextLook(ctx));
  return { exitCode: ok ? 0 : 1, json: { simulator: base, event: answer.event, run: answer.run, deliveries: delivered, ok } };
}

/** Where to watch what a delivered run becomes. */
function nextLook(ctx: CommandContext): string {
  const preview = ctx.local?.previewUrl;
  return `follow it: \`${ctx.hint('tail')}\`${preview !== undefined ? `, and see the digest in the preview: ${preview}` : ''}`;
}

async function triggerCommand(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const connection = str(parsed, 'connection');
  if (parsed.positionals[0] === 'weekly') {
    if (connection !== undefined) throw new UsageError('`trigger weekly` takes --channel, not --connection', 'trigger');
    return triggerWeekly(parsed, io);
  }
  const eventType = eventTypeArgument(parsed);
  const overrides = strs(parsed, 'override').map(parseOverride);
  const project = str(parsed, 'project');
  const ctx = await buildContext(parsed, io);
  if (bySimulator(ctx, parsed)) return triggerBySimulator(ctx, eventType, project, simulatedWorkspace(ctx.local, connection));
  const client = ctx.local?.connections.find((c) => c.id === connection);
  if (connection !== undefined && client === undefined && project === undefined)
    throw new UsageError(`--connection ${connection} needs --project: a project of that connection's workspace`, 'trigger');
  const fixturePath = str(parsed, 'fixture');
  // A deployed stack's own project (not proj_example, which its read API doesn't know), unless --url and --secret name the target.
  const explicitTarget = str(parsed, 'url') !== undefined && str(parsed, 'secret') !== undefined;
  const localProjects = client?.projectIds ?? ctx.local?.projectIds;
  const projectId = project ?? (ctx.local !== undefined || explicitTarget ? localProjects?.[0] : await defaultProjectId(ctx));
  let event = fixturePath !== undefined ? await readFixture(fixturePath, eventType, projectId) : defaultFixture(eventType, projectId);
  if (project !== undefined) event = applyOverride(event, { path: ['data', 'project_id'], value: project });
  for (const override of overrides) event = applyOverride(event, override);
  const { url, secret } = await target(ctx, parsed, io);

  const body = JSON.stringify(event);
  const signedAt = Math.floor(ctx.now() / 1000);
  const result = await postDelivery(ctx.fetch, url, body, deliveryHeaders(event, body, secret, signedAt), ctx.now);
  const status = result.status === null ? 'ERR' : String(result.status);
  ctx.out.say(`POST ${url}  ${event.type}  delivery ${event.id}`);
  ctx.out.say(`${status}  ${result.latencyMs} ms  ${result.error ?? ''}${(result.body ?? '').replace(/\s+/g, ' ').trim()}`);
  if (result.ok) ctx.out.say(nextLook(ctx));
  return {
    exitCode: result.ok ? 0 : 1,
    json: { url, event, status: result.status, body: result.body, latencyMs: result.latencyMs, error: result.error, ok: result.ok },
  };
}
