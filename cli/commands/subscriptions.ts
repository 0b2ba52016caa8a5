/**
 * `bridge subscriptions list|add|remove`: the Slack app's project ↔ channel subscriptions, in the
 * same table and through the same store the `/visibility` command uses (DynamoSubscriptionStore).
 */
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DIGEST_MODES, type DigestMode } from '../../shared/contracts';
import { isHomeChannelId } from '../../shared/routing';
import { readSubscriptionDefaultMode } from '../../shared/slack-app/default-mode';
import type { Subscription } from '../../shared/ports';
import { STACK_TENANT, tenantLabel, tenantOf, type Tenant } from '../../shared/tenancy';
import { buildContext, str, AWS_OPTIONS, type CommandContext, type Parsed } from '../args';
import type { GroupDef } from '../command-spec';
import { dynamoClient, endpointFor, STACK_OUTPUTS } from '../aws';
import { aws, CliError, UsageError } from '../errors';
import { LOCAL_SLACK_TOKEN } from '../ready-file';
import { isBotInChannel } from '../slack-checks';
import { serviceProjects } from '../webhook-target';
import { matchProject, type NamedProject } from '../../shared/slack-app/project-match';
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
digests. \`list\` reads the whole table (a scan), for operators only: every tenant's subscriptions (the stack's own,
and each connection's, marked [<connection id>]). Changes are recorded as made by "cli".`,
  commands: {
    list: {
      summary: 'the subscriptions, all or of a project, channel or connection',
      synopsis: '[--project ID] [--channel C] [--connection ID|stack] [options]',
      options: {
        project: PROJECT,
        channel: CHANNEL,
        connection: { value: 'ID', help: "only that connection's subscriptions (stack: the stack's own)" },
        ...TABLE_OPTIONS,
      },
      run: (parsed, io) => withStore(parsed, io, (_store, ctx, tenants) => list(parsed, tenants, ctx.out)),
    },
    add: {
      summary: 'subscribes a channel to a project, as /visibility subscribe does',
      synopsis: '--project NAME|ID --channel C [--mode full|changes] [options]',
      description: `Subscribes the channel to the project, as \`/visibility subscribe\` does: the project is found by its id
or its name (whole, then a part of it) among the projects the service lists; none or several
matching is an error that names them. On the local stack the channel must be one of its Slack's.`,
      options: {
        project: { value: 'NAME|ID', help: "the project's name or id, as /visibility subscribe takes it" },
        channel: CHANNEL,
        mode: { value: 'MODE', help: `${DIGEST_MODES.join(' or ')} (default ${DEFAULT_MODE}, as /visibility subscribe)` },
        ...TABLE_OPTIONS,
      },
      run: (parsed, io) => {
        const channel = channelIdOf(parsed, need(parsed, 'channel'));
        const query = need(parsed, 'project');
        const mode = modeOf(parsed);
        return withStore(parsed, io, async (store, ctx) => {
          const project = await projectNamed(query, ctx);
          await checkLocalChannel(channel, ctx);
          return add({ projectId: project.id, projectName: project.name, channel, mode }, store, ctx);
        });
      },
    },
    remove: {
      summary: 'unsubscribes a channel from a project',
      synopsis: '--project NAME|ID --channel C [options]',
      description: `Unsubscribes the channel from the project, found by its id or its name (whole, then a part of it)
among the channel's own subscriptions, so a project the service no longer lists can still be removed.`,
      options: {
        project: { value: 'NAME|ID', help: "the project's name or id, as the channel's subscription shows it" },
        channel: CHANNEL,
        ...TABLE_OPTIONS,
      },
      run: (parsed, io) => {
        const channel = channelIdOf(parsed, need(parsed, 'channel'));
        const query = need(parsed, 'project');
        return withStore(parsed, io, (store, ctx) => remove({ query, channel }, store, ctx.out));
      },
    },
  },
};

/** Runs `body` with the subscription store of the stack; arguments are checked before, so a bad one is a usage error. */
async function withStore(
  parsed: Parsed,
  io: CliIo,
  body: (store: DynamoSubscriptionStore, ctx: CommandContext, tenants: () => Promise<TenantSubscriptions[]>) => Promise<CommandResult>,
): Promise<CommandResult> {
  const ctx = await buildContext(parsed, io);
  const client = dynamoClient(ctx.settings);
  try {
    const table = await tableName(parsed, ctx);
    const store = new DynamoSubscriptionStore(client, table, DEFAULT_MODE);
    // Each connection's subscriptions are its tenant's items (t#<id>#sub#…), read through its own store.
    const tenants = async (): Promise<TenantSubscriptions[]> => [
      { tenant: STACK_TENANT, store },
      ...(await new DynamoConnectionStore(client, table).list()).map(({ connection }) => {
        const tenant = tenantOf(connection.id);
        return { tenant, store: new DynamoSubscriptionStore(client, table, DEFAULT_MODE, tenant) };
      }),
    ];
    return await aws({ service: 'DynamoDB', resource: 'subscriptions', ...endpointOf(ctx) }, () => body(store, ctx, tenants));
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

interface TenantSubscriptions {
  tenant: Tenant;
  store: DynamoSubscriptionStore;
}

async function list(parsed: Parsed, tenants: () => Promise<TenantSubscriptions[]>, out: Output): Promise<CommandResult> {
  const project = str(parsed, 'project');
  const channel = str(parsed, 'channel');
  const connection = str(parsed, 'connection');
  const reached = (await tenants()).filter(({ tenant }) => connection === undefined || tenantLabel(tenant) === connection);
  if (connection !== undefined && reached.length === 0)
    throw new CliError(`no connection "${connection}" in this table`, 'list the connections with `npx bridge connections list`');
  const shown: (Subscription & { tenant: string })[] = [];
  for (const { tenant, store } of reached)
    for (const s of await store.listAll())
      if ((project === undefined || s.projectId === project) && (channel === undefined || s.channel === channel))
        shown.push({ ...s, tenant: tenantLabel(tenant) });
  if (shown.length === 0) out.say('no subscriptions');
  for (const s of shown) out.say(s.tenant === tenantLabel(STACK_TENANT) ? describe(s) : `[${s.tenant}] ${describe(s)}`);
  return { exitCode: 0, json: { subscriptions: shown } };
}

function describe(s: Subscription): string {
  const muted = s.mutedUntilMs !== undefined ? `, muted until ${new Date(s.mutedUntilMs).toISOString()}` : '';
  return `${s.channel}  ${s.projectName} (${s.projectId})  mode ${s.mode}${muted}  — ${s.lastChange} by ${s.changedBy}`;
}

interface AddArgs {
  projectId: string;
  channel: string;
  projectName: string;
  mode: DigestMode | undefined;
}

/** The project `query` names among the service's, found as \`/visibility subscribe\` finds it (shared/slack-app/project-match.ts). */
async function projectNamed(query: string, ctx: CommandContext): Promise<NamedProject> {
  const projects = await serviceProjects(ctx);
  const match = matchProject(query, projects);
  if (match.status === 'found') return match.project;
  const listed = listedProjects;
  if (match.status === 'ambiguous')
    throw new CliError(
      `"${query}" matches ${match.candidates.length} projects: ${listed(match.candidates)}`,
      'pass the id of the one you mean to --project',
      'ambiguous_project',
    );
  throw new CliError(
    `no project matches "${query}"${match.suggestions.length > 0 ? `; did you mean ${listed(match.suggestions)}?` : ''}`,
    `pass a project's name or id to --project (the service lists ${projects.length}: ${listed(projects.slice(0, 5))}${projects.length > 5 ? ', …' : ''})`,
    'no_project',
  );
}

/**
 * On the local stack's own Slack the channel must be one of its workspace's (a channel with a name,
 * as the preview lists them) with the bot in it; a real Slack is checked by the first digest.
 */
async function checkLocalChannel(channel: string, ctx: CommandContext): Promise<void> {
  const slackApiUrl = ctx.local?.slackApiUrl;
  if (slackApiUrl === undefined) return;
  const info = await isBotInChannel(ctx.local?.slackToken ?? LOCAL_SLACK_TOKEN, channel, slackApiUrl);
  const home = ctx.local?.slackDefaultChannel;
  const pick = `pick a channel of the local Slack (the preview's sidebar lists them${home !== undefined ? `; the home channel is ${home}` : ''})`;
  if (!info.ok) throw new CliError(`the local Slack refuses channel ${channel} (${info.error})`, pick, 'bad_channel');
  if (info.name === undefined || info.name === info.channelId)
    throw new CliError(`the local Slack has no channel ${channel}: digests to it would go nowhere anyone looks`, pick, 'bad_channel');
  if (!info.isMember)
    throw new CliError(`the bot is not in channel ${channel} (#${info.name})`, `/invite the bot into #${info.name}`, 'bad_channel');
}

async function add(args: AddArgs, store: DynamoSubscriptionStore, ctx: CommandContext): Promise<CommandResult> {
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
      ? `✓ subscribed ${s.channel} to ${s.projectName} (${s.projectId}), mode ${s.mode}`
      : `already subscribed (kept its settings): ${describe(s)}`,
  );
  return { exitCode: 0, json: result };
}

/** Finds the project among the channel's subscriptions (as `add` finds it among the service's) and removes it. */
async function remove(args: { query: string; channel: string }, store: DynamoSubscriptionStore, out: Output): Promise<CommandResult> {
  const { query, channel } = args;
  const subscribed = (await store.listAll()).filter((s) => s.channel === channel).map((s) => ({ id: s.projectId, name: s.projectName }));
  const match = matchProject(query, subscribed);
  if (match.status === 'ambiguous')
    throw new CliError(
      `"${query}" matches ${match.candidates.length} of ${channel}'s subscriptions: ${listedProjects(match.candidates)}`,
      'pass the id of the one you mean to --project',
      'ambiguous_project',
    );
  if (match.status !== 'found') {
    const has = subscribed.length > 0 ? `it has ${listedProjects(subscribed)}` : 'it has none';
    out.say(`${channel} was not subscribed to "${query}" (${has}); nothing changed`);
    return { exitCode: 0, json: { removed: false, query, channel } };
  }
  const { id: projectId, name } = match.project;
  const removed = await store.unsubscribe(projectId, channel);
  out.say(removed ? `✓ unsubscribed ${channel} from ${name} (${projectId})` : `${channel} was not subscribed to ${name}; nothing changed`);
  return { exitCode: 0, json: { removed, projectId, channel } };
}

function listedProjects(projects: readonly NamedProject[]): string {
  return projects.map((p) => `${p.name} (${p.id})`).join(', ');
}
