/**
 * `bridge subscriptions list|add|remove`: the Slack app's project ↔ channel subscriptions, in the
 * same table and through the same store the `/visibility` command uses (DynamoSubscriptionStore).
 */
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DIGEST_MODES, type DigestMode } from '../../shared/contracts';
import { isHomeChannelId } from '../../shared/routing';
import { readSubscriptionDefaultMode } from '../../shared/slack-app/default-mode';
import type { Subscription } from '../../shared/ports';
import { buildContext, str, AWS_OPTIONS, type CommandContext, type Parsed } from '../args';
import type { GroupDef } from '../command-spec';
import { dynamoClient, endpointFor, STACK_OUTPUTS } from '../aws';
import { aws, UsageError } from '../errors';
import type { CliIo, Output } from '../io';
import type { CommandResult } from '../result';

/** Who the store records for changes made from the CLI. */
export const CLI_ACTOR = { userId: 'cli', userName: 'bridge CLI' };

const TABLE_OPTIONS = {
  'table-name': { value: 'NAME', help: "instead of the stack output TableName (or the ready file's tableName)" },
  ...AWS_OPTIONS,
} as const;
const PROJECT = { value: 'ID', help: 'the project id' } as const;
const CHANNEL = { value: 'C', help: 'the Slack channel id (C… or G…; not its name)' } as const;
/** What `/visibility subscribe` starts a channel in when the stage sets nothing else (shared/slack-app/default-mode.ts). */
const DEFAULT_MODE = readSubscriptionDefaultMode({});

export const SUBSCRIPTIONS: GroupDef = {
  summary: "the Slack app's project ↔ channel subscriptions",
  shared: `The Slack app's routing (what \`/visibility subscribe\` writes): which channels get which project's
digests. \`list\` reads the whole table (a scan), for operators only. Changes are recorded as made by "cli".`,
  commands: {
    list: {
      summary: 'the subscriptions, all or of a project or channel',
      synopsis: '[--project ID] [--channel C] [options]',
      options: { project: PROJECT, channel: CHANNEL, ...TABLE_OPTIONS },
      run: (parsed, io) => withStore(parsed, io, (store, ctx) => list(parsed, store, ctx.out)),
    },
    add: {
      summary: 'subscribes a channel to a project',
      synopsis: '--project ID --name NAME --channel C [--mode full|changes] [options]',
      options: {
        project: PROJECT,
        name: { value: 'NAME', help: "the project's name, as digests show it (default: its id)" },
        channel: CHANNEL,
        mode: { value: 'MODE', help: `${DIGEST_MODES.join(' or ')} (default ${DEFAULT_MODE}, as /visibility subscribe)` },
        ...TABLE_OPTIONS,
      },
      run: (parsed, io) => {
        const change = changeArgs(parsed);
        return withStore(parsed, io, (store, ctx) => add(change, store, ctx));
      },
    },
    remove: {
      summary: 'unsubscribes a channel from a project',
      synopsis: '--project ID --channel C [options]',
      options: { project: PROJECT, channel: CHANNEL, ...TABLE_OPTIONS },
      run: (parsed, io) => {
        const change = changeArgs(parsed);
        return withStore(parsed, io, (store, ctx) => remove(change, store, ctx.out));
      },
    },
  },
};

/** Runs `body` with the subscription store of the stack; arguments are checked before, so a bad one is a usage error. */
async function withStore(
  parsed: Parsed,
  io: CliIo,
  body: (store: DynamoSubscriptionStore, ctx: CommandContext) => Promise<CommandResult>,
): Promise<CommandResult> {
  const ctx = await buildContext(parsed, io);
  const client = dynamoClient(ctx.settings);
  try {
    const store = new DynamoSubscriptionStore(client, await tableName(parsed, ctx), DEFAULT_MODE);
    return await aws({ service: 'DynamoDB', resource: 'subscriptions', ...endpointOf(ctx) }, () => body(store, ctx));
  } finally {
    client.destroy();
  }
}

function endpointOf(ctx: CommandContext): { endpoint?: string } {
  const endpoint = endpointFor(ctx.settings, 'dynamodb');
  return endpoint === undefined ? {} : { endpoint };
}

async function tableName(parsed: Parsed, ctx: CommandContext): Promise<string> {
  const flag = str(parsed, 'table-name');
  if (flag !== undefined) return flag;
  if (ctx.local?.tableName !== undefined) return ctx.local.tableName;
  return ctx.stack.require(STACK_OUTPUTS.tableName, '--table-name');
}

function need(parsed: Parsed, name: string): string {
  const value = str(parsed, name);
  if (value === undefined) throw new UsageError(`--${name} is required`, parsed.command);
  return value;
}

/**
 * Subscriptions are keyed by the channel's id, as Slack reports it for commands and clicks: a name
 * would be a second key for the same channel (and a second copy of every digest there).
 */
function channelIdOf(parsed: Parsed, channel: string): string {
  if (isHomeChannelId(channel)) return channel;
  throw new UsageError(
    `--channel takes the channel's id (C… or G…), not a name such as "${channel.slice(0, 80)}": in Slack, click the channel's name and copy the Channel ID at the bottom of the About tab`,
    parsed.command,
  );
}

function modeOf(parsed: Parsed): DigestMode | undefined {
  const raw = str(parsed, 'mode');
  if (raw === undefined) return undefined;
  const mode = DIGEST_MODES.find((m) => m === raw.toLowerCase());
  if (mode === undefined) throw new UsageError(`--mode must be full or changes, got "${raw}"`, parsed.command);
  return mode;
}

async function list(parsed: Parsed, store: DynamoSubscriptionStore, out: Output): Promise<CommandResult> {
  const project = str(parsed, 'project');
  const channel = str(parsed, 'channel');
  const all = await store.listAll();
  const shown = all.filter((s) => (project === undefined || s.projectId === project) && (channel === undefined || s.channel === channel));
  if (shown.length === 0) out.say('no subscriptions');
  for (const s of shown) out.say(describe(s));
  return { exitCode: 0, json: { subscriptions: shown } };
}

function describe(s: Subscription): string {
  const muted = s.mutedUntilMs !== undefined ? `, muted until ${new Date(s.mutedUntilMs).toISOString()}` : '';
  return `${s.channel}  ${s.projectName} (${s.projectId})  mode ${s.mode}${muted}  — ${s.lastChange} by ${s.changedBy}`;
}

interface ChangeArgs {
  projectId: string;
  channel: string;
  projectName: string;
  mode: DigestMode | undefined;
}

function changeArgs(parsed: Parsed): ChangeArgs {
  const projectId = need(parsed, 'project');
  const channel = channelIdOf(parsed, need(parsed, 'channel'));
  return { projectId, channel, projectName: str(parsed, 'name') ?? projectId, mode: modeOf(parsed) };
}

async function add(args: ChangeArgs, store: DynamoSubscriptionStore, ctx: CommandContext): Promise<CommandResult> {
  const { mode } = args;
  const result = await store.subscribe({
    projectId: args.projectId,
    projectName: args.projectName,
    channel: args.channel,
    actor: CLI_ACTOR,
    nowMs: ctx.now(),
    ...(mode !== undefined ? { mode, lastChange: `subscribed, mode ${mode}` } : {}),
  });
  const s = result.subscription;
  ctx.out.say(
    result.status === 'subscribed'
      ? `✓ subscribed ${s.channel} to ${s.projectName}`
      : `already subscribed (kept its settings): ${describe(s)}`,
  );
  return { exitCode: 0, json: result };
}

async function remove(args: ChangeArgs, store: DynamoSubscriptionStore, out: Output): Promise<CommandResult> {
  const { projectId: project, channel } = args;
  const removed = await store.unsubscribe(project, channel);
  out.say(removed ? `✓ unsubscribed ${channel} from ${project}` : `${channel} was not subscribed to ${project}; nothing changed`);
  return { exitCode: 0, json: { removed, projectId: project, channel } };
}
