/**
 * `bridge subscriptions list|add|remove`: the Slack app's project ↔ channel subscriptions, in the
 * same table and through the same store the `/visibility` command uses (DynamoSubscriptionStore).
 */
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DIGEST_MODES, type DigestMode, type Subscription } from '../../shared/slack-app/ports';
import { buildContext, parse, str, AWS_OPTIONS, type CommandContext, type OptionSpec, type Parsed } from '../args';
import { dynamoClient, endpointFor, STACK_OUTPUTS } from '../aws';
import { aws, UsageError } from '../errors';
import type { CliIo, Output } from '../io';
import type { CommandResult } from '../result';

export const SUBSCRIPTIONS_HELP: Record<string, string> = {
  subscriptions: `Usage:
  npx bridge subscriptions list [--project ID] [--channel C] [options]
  npx bridge subscriptions add --project ID --name NAME --channel C [--mode full|changes] [options]
  npx bridge subscriptions remove --project ID --channel C [options]

The Slack app's routing (what \`/visibility subscribe\` writes): which channels get which project's
digests. \`list\` reads the whole table (a scan), for operators only. Changes are recorded as made by "cli".

  --table-name NAME      instead of the stack output TableName (or the ready file's tableName)
  --stack NAME, --region REGION, --local READY_FILE, --endpoint-dynamodb URL, --json`,
};

/** Who the store records for changes made from the CLI. */
export const CLI_ACTOR = { userId: 'cli', userName: 'bridge CLI' };

const OPTIONS: OptionSpec = {
  ...AWS_OPTIONS,
  'table-name': { type: 'string' },
  project: { type: 'string' },
  name: { type: 'string' },
  channel: { type: 'string' },
  mode: { type: 'string' },
};

const SUBCOMMANDS = ['list', 'add', 'remove'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

export async function subscriptionsCommand(argv: readonly string[], io: CliIo): Promise<CommandResult> {
  const [sub] = argv;
  if (!SUBCOMMANDS.includes(sub as Subcommand)) {
    throw new UsageError(
      sub === undefined ? 'subscriptions needs list, add or remove' : `unknown subscriptions subcommand "${sub}"`,
      'subscriptions',
    );
  }
  const command = `subscriptions ${sub}`;
  const parsed = parse(command, argv.slice(1), OPTIONS);
  if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0] ?? ''}"`, command);
  // Arguments are checked before any call, so a bad one is a usage error, not a DynamoDB failure.
  const change = sub === 'list' ? undefined : changeArgs(parsed, sub === 'add');
  const ctx = await buildContext(parsed, io, {}, sub === 'list' ? 'read' : 'change');
  const client = dynamoClient(ctx.settings);
  try {
    const store = new DynamoSubscriptionStore(client, await tableName(parsed, ctx));
    const context = { service: 'DynamoDB', resource: 'subscriptions', ...endpointOf(ctx) };
    if (change === undefined) return await aws(context, () => list(parsed, store, ctx.out));
    if (sub === 'add') return await aws(context, () => add(change, store, ctx));
    return await aws(context, () => remove(change, store, ctx.out));
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

function changeArgs(parsed: Parsed, adding: boolean): ChangeArgs {
  const projectId = need(parsed, 'project');
  const channel = need(parsed, 'channel');
  if (!adding && (parsed.values['name'] !== undefined || parsed.values['mode'] !== undefined))
    throw new UsageError('--name and --mode apply to add only', parsed.command);
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
