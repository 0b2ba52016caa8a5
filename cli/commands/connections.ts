/**
 * `bridge connections add|list|link|unlink|rotate|remove`: the service workspaces the bridge serves
 * besides its own `/webhook`, each with its webhook URL `/webhook/<id>`, linked to the Slack
 * installations (workspaces T…, or orgs E…) whose bot token posts its digests. A connection's read-API key and signing
 * secrets go into its own Secrets Manager secret (named from its id) from stdin or a hidden prompt,
 * never from the command line; its non-secret fields go into the table. Nothing prints a secret: a
 * signing secret is shown by its fingerprint.
 */
import { randomBytes } from 'node:crypto';
import { CreateSecretCommand, DeleteSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import {
  connectionIdProblem,
  connectionWebhookUrl,
  finishRotation,
  formatConnectionSecret,
  parseConnectionSecret,
  rotationUnderWay,
  routesProblem,
  slackTeamIdProblem,
  startRotation,
  withTeamsLinked,
  withTeamsUnlinked,
  type Connection,
  type ConnectionSecret,
  type RotationStep,
} from '../../shared/connections/model';
import type { ConnectionRecord } from '../../shared/connections/ports';
import { connectionSecretPrefix, SECRET_PLACEHOLDER, STACK_OUTPUTS } from '../../shared/contracts';
import { bool, buildContext, str, strs, AWS_OPTIONS, type CommandContext, type Parsed } from '../args';
import { dynamoClient, endpointFor, secretsClient } from '../aws';
import type { GroupDef, OptionDefs } from '../command-spec';
import { aws, CliError, UsageError } from '../errors';
import type { CliIo } from '../io';
import { needLocal } from '../ready-file';
import type { CommandResult } from '../result';
import { readSecretInput } from '../secret-input';
import { fingerprint, readSecret, writeSecret } from './secrets';

/** The local stack's stage: its connection secrets are named `visibility-bridge/local/connections/<id>`. */
const LOCAL_STAGE = 'local';

export interface Target {
  ctx: CommandContext;
  store: DynamoConnectionStore;
  /** The Slack installations (`inst#`), read to say whether a linked team has installed the app. */
  installations: DynamoInstallationStore;
  sm: SecretsManagerClient;
  tableName: string;
  secretPrefix: string;
  /** The stack's own webhook URL (a connection's is this plus `/<id>`), when known. */
  webhookUrl: string | undefined;
  close(): void;
}

export async function targetOf(parsed: Parsed, io: CliIo): Promise<Target> {
  const ctx = await buildContext(parsed, io);
  const local = ctx.local;
  const tableName = local !== undefined ? needLocal(local, local.tableName, 'tableName') : await ctx.stack.require(STACK_OUTPUTS.tableName);
  const secretPrefix =
    local !== undefined ? connectionSecretPrefix(LOCAL_STAGE) : await ctx.stack.require(STACK_OUTPUTS.connectionSecretPrefix);
  const webhookUrl = local !== undefined ? local.webhookUrl : await ctx.stack.optional(STACK_OUTPUTS.webhookUrl);
  if (local !== undefined && local.secretsManagerEndpoint === undefined)
    throw new CliError(
      `the local stack of ${local.path} runs without a Secrets Manager server`,
      'restart it with the current `npm start` (it serves one)',
      'bad_ready_file',
    );
  const dynamo = dynamoClient(ctx.settings);
  const sm = secretsClient(ctx.settings);
  return {
    ctx,
    store: new DynamoConnectionStore(dynamo, tableName),
    installations: new DynamoInstallationStore(dynamo, { tableName }),
    sm,
    tableName,
    secretPrefix,
    webhookUrl,
    close: () => {
      dynamo.destroy();
      sm.destroy();
    },
  };
}

function table<T>(target: Target, operation: string, run: () => Promise<T>): Promise<T> {
  return aws({ service: 'DynamoDB', resource: `${target.tableName} (${operation})`, ...endpointOf(target, 'dynamodb') }, run);
}

function endpointOf(target: Target, service: 'dynamodb' | 'secretsmanager'): { endpoint?: string } {
  const endpoint = endpointFor(target.ctx.settings, service);
  return endpoint === undefined ? {} : { endpoint };
}

/** The id given, or a generated one (`c-` and 8 hex digits). */
function connectionId(parsed: Parsed, generate: boolean): string {
  const [id, extra] = parsed.positionals;
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, parsed.command);
  if (id === undefined) {
    if (generate) return `c-${randomBytes(4).toString('hex')}`;
    throw new UsageError(`${parsed.command} needs the connection id (see \`connections list\`)`, parsed.command);
  }
  const problem = connectionIdProblem(id);
  if (problem !== undefined) throw new UsageError(`"${id}" is not a connection id: ${problem}`, parsed.command);
  return id;
}

function checkSecret(value: string, what: string, command: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw new UsageError(`the ${what} is empty`, command);
  if (trimmed === SECRET_PLACEHOLDER) throw new UsageError(`"${SECRET_PLACEHOLDER}" is the placeholder, not a ${what}`, command);
  if (/\s/.test(trimmed)) throw new UsageError(`the ${what} contains whitespace; paste it exactly as shown`, command);
  return trimmed;
}

/**
 * The read-API key and the signing secret of a new connection: two hidden prompts on a terminal, else
 * two lines on stdin (the key first).
 */
async function readNewSecrets(io: CliIo, command: string): Promise<ConnectionSecret> {
  if (io.stdin?.isTTY === true) {
    const readApiKey = checkSecret(await readSecretInput(io, 'read-API key', command), 'read-API key', command);
    const signing = checkSecret(await readSecretInput(io, "webhook's signing secret", command), 'signing secret', command);
    return { readApiKey, signingSecrets: [signing] };
  }
  const lines = (await readSecretInput(io, 'read-API key and signing secret', command))
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length !== 2)
    throw new UsageError(
      `stdin must hold two lines, the read-API key then the webhook's signing secret (got ${lines.length}); or run on a terminal to be prompted`,
      command,
    );
  return {
    readApiKey: checkSecret(lines[0] ?? '', 'read-API key', command),
    signingSecrets: [checkSecret(lines[1] ?? '', 'signing secret', command)],
  };
}

/** `--route PROJECT=CHANNEL`, repeated. */
function routesOf(parsed: Parsed): Record<string, string> {
  const routes: Record<string, string> = {};
  for (const route of strs(parsed, 'route')) {
    const at = route.indexOf('=');
    if (at <= 0) throw new UsageError(`--route takes PROJECT_ID=CHANNEL_ID, got "${route}"`, parsed.command);
    routes[route.slice(0, at).trim()] = route.slice(at + 1).trim();
  }
  return routes;
}

/** `--slack-team T…` (or E… for an org-wide install), repeated; each checked, in the order given. */
function slackTeamsOf(parsed: Parsed): string[] {
  const ids = strs(parsed, 'slack-team').map((id) => id.trim());
  for (const id of ids) {
    const problem = slackTeamIdProblem(id);
    if (problem !== undefined) throw new UsageError(`--slack-team takes ${problem}; got "${id.slice(0, 40)}"`, parsed.command);
  }
  return [...new Set(ids)];
}

function baseUrlOf(parsed: Parsed): string {
  const value = str(parsed, 'base-url');
  if (value === undefined) throw new UsageError('--base-url is required: the read-API base URL of the workspace', parsed.command);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--base-url must be an absolute http(s) URL, got "${value}"`, parsed.command);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError(`--base-url must use http or https, got "${url.protocol}"`, parsed.command);
  return value.replace(/\/+$/, '');
}

function webhookOf(target: Target, id: string): string | null {
  return target.webhookUrl === undefined ? null : connectionWebhookUrl(target.webhookUrl, id);
}

async function add(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const command = parsed.command;
  const id = connectionId(parsed, true);
  const channel = str(parsed, 'channel');
  if (channel === undefined) throw new UsageError('--channel is required: the channel id (C…/G…) its digests go to', command);
  const routes = { defaultChannel: channel, byProject: routesOf(parsed) };
  const routeProblem = routesProblem(routes);
  if (routeProblem !== undefined) throw new UsageError(routeProblem, command);
  const baseUrl = baseUrlOf(parsed);
  const slackTeamIds = slackTeamsOf(parsed);
  const target = await targetOf(parsed, io);
  try {
    if ((await table(target, 'get', () => target.store.get(id))) !== undefined)
      throw new CliError(`connection ${id} already exists (or was removed recently)`, 'pick another id', 'exists');
    const secret = await readNewSecrets(io, command);
    const secretName = `${target.secretPrefix}${id}`;
    await aws({ service: 'Secrets Manager', resource: secretName, ...endpointOf(target, 'secretsmanager') }, () =>
      target.sm.send(new CreateSecretCommand({ Name: secretName, SecretString: formatConnectionSecret(secret) })),
    );
    const connection: Connection = { id, baseUrl, secretName, routes, slackTeamIds, status: 'active', createdAtMs: target.ctx.now() };
    const added = await table(target, 'add', () => target.store.add(connection));
    if (added === 'exists') throw new CliError(`connection ${id} was added meanwhile by someone else`, 'pick another id', 'exists');
    const webhookUrl = webhookOf(target, id);
    const out = target.ctx.out;
    out.say(`✓ connection ${id} added (secret ${secretName}, signing secret ${fingerprint(secret.signingSecrets[0] ?? '')})`);
    out.say(`Register this webhook URL in the service's settings: ${webhookUrl ?? `<the stack's WebhookUrl>/${id}`}`);
    if (slackTeamIds.length > 0) out.say(`Linked to ${slackTeamIds.join(', ')}: its digests post with ${slackTeamIds[0]}'s installation.`);
    return {
      exitCode: 0,
      json: { id, webhookUrl, secretName, baseUrl, routes, slackTeamIds, signingSecrets: fingerprints(secret.signingSecrets) },
    };
  } finally {
    target.close();
  }
}

function fingerprints(secrets: readonly string[]): string[] {
  return secrets.map(fingerprint);
}

/** The connection's live signing secrets' fingerprints, or why they cannot be read (never the value). */
async function signingOf(target: Target, connection: Connection): Promise<{ fingerprints: string[] } | { problem: string }> {
  if (connection.status === 'removed') return { fingerprints: [] };
  try {
    const text = await readSecret(target.sm, { id: connection.secretName, endpoint: endpointFor(target.ctx.settings, 'secretsmanager') });
    return { fingerprints: fingerprints(parseConnectionSecret(text ?? '', connection.secretName).signingSecrets) };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

async function list(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const target = await targetOf(parsed, io);
  try {
    const records = await table(target, 'list', () => target.store.list());
    const out = target.ctx.out;
    if (records.length === 0)
      out.say(`no connections; add one with \`${target.ctx.hint('connections add <id> --base-url URL --channel C…')}\``);
    const rows = [];
    for (const record of records) rows.push(await listRow(target, record));
    for (const row of rows) {
      const signing = 'problem' in row.signing ? `secret unreadable: ${row.signing.problem}` : row.signing.fingerprints.join(', ');
      out.say(`${row.id}  ${row.status}  ${row.webhookUrl ?? '-'}`);
      out.say(
        `    read API ${row.baseUrl}; channel ${row.routes.defaultChannel}; ${Object.keys(row.routes.byProject).length} project route(s)`,
      );
      if (row.status === 'active') out.say(`    signing: ${signing}; runs seen: ${row.runsSeen}`);
      if (row.status === 'active') out.say(`    Slack: ${slackLine(row.slackTeams)}`);
    }
    return { exitCode: 0, json: { connections: rows } };
  } finally {
    target.close();
  }
}

async function listRow(target: Target, record: ConnectionRecord) {
  const { connection, cadence } = record;
  return {
    id: connection.id,
    status: connection.status,
    webhookUrl: webhookOf(target, connection.id),
    baseUrl: connection.baseUrl,
    secretName: connection.secretName,
    routes: connection.routes,
    signing: await signingOf(target, connection),
    slackTeams: connection.status === 'active' ? await linkedTeams(target, connection) : [],
    runsSeen: cadence.runTimesMs.length,
    lastRunAt: cadence.runTimesMs.length === 0 ? null : new Date(Math.max(...cadence.runTimesMs)).toISOString(),
  };
}

interface LinkedTeam {
  id: string;
  /** Whether the app is installed there (an `inst#` item): an operator may link before the client installs. */
  installed: boolean;
}

async function linkedTeams(target: Target, connection: Connection): Promise<LinkedTeam[]> {
  const teams: LinkedTeam[] = [];
  for (const id of connection.slackTeamIds) {
    // A linked id is the id its installation is stored under (a workspace's own, or an org's).
    const installation = await table(target, 'get installation', () => target.installations.get(id));
    teams.push({ id, installed: installation !== undefined });
  }
  return teams;
}

function slackLine(teams: readonly LinkedTeam[]): string {
  if (teams.length === 0) return "not linked (posts with the stack's own bot token)";
  const each = teams.map((team) => `${team.id} (${team.installed ? 'installed' : 'not installed'})`);
  return `${each.join(', ')}; digests post with ${teams[0]?.id ?? ''}'s installation`;
}

async function activeConnection(target: Target, id: string): Promise<Connection> {
  const record = await table(target, 'get', () => target.store.get(id));
  if (record === undefined || record.connection.status !== 'active')
    throw new CliError(`no active connection ${id}`, `see \`${target.ctx.hint('connections list')}\``, 'not_found');
  return record.connection;
}

async function rotate(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const command = parsed.command;
  const id = connectionId(parsed, false);
  const finishing = bool(parsed, 'finish');
  const readKey = bool(parsed, 'read-key');
  if (finishing && readKey) throw new UsageError('give either --finish (signing secrets) or --read-key, not both', command);
  const target = await targetOf(parsed, io);
  try {
    const connection = await activeConnection(target, id);
    const ref = { id: connection.secretName, endpoint: endpointFor(target.ctx.settings, 'secretsmanager') };
    let current: ConnectionSecret;
    try {
      current = parseConnectionSecret((await readSecret(target.sm, ref)) ?? '', connection.secretName);
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(
        (error as Error).message,
        `remove the connection and add it again (\`${target.ctx.hint(`connections remove ${id}`)}\`)`,
        'bad_secret',
      );
    }
    const next = readKey ? await replacedReadKey(current, io, command) : await rotatedSigning(current, finishing, io, command, id);
    await writeSecret(target.sm, ref, formatConnectionSecret(next));
    const out = target.ctx.out;
    if (readKey)
      out.say(`✓ ${id}: read-API key replaced (${fingerprint(next.readApiKey)}); the digest uses it within its secrets cache time`);
    else out.say(`✓ ${id}: ${next.signingSecrets.length} signing secret(s) live: ${fingerprints(next.signingSecrets).join(', ')}`);
    if (!readKey && !finishing)
      out.say(`Delete the old webhook in the service's settings, then \`${target.ctx.hint(`connections rotate ${id} --finish`)}\`.`);
    return {
      exitCode: 0,
      json: { id, finished: finishing, readApiKey: fingerprint(next.readApiKey), signingSecrets: fingerprints(next.signingSecrets) },
    };
  } finally {
    target.close();
  }
}

/** The secret with the new webhook's signing secret added, or (finishing) with the old one dropped. */
async function rotatedSigning(
  current: ConnectionSecret,
  finishing: boolean,
  io: CliIo,
  command: string,
  id: string,
): Promise<ConnectionSecret> {
  let step: RotationStep;
  if (finishing) step = finishRotation(current.signingSecrets);
  else {
    // Refused before the prompt when a rotation is already under way.
    const underWay = rotationUnderWay(current.signingSecrets);
    if (underWay !== undefined) throw new CliError(underWay.problem, underWay.fix.replace('<id>', id), 'rotation');
    const added = checkSecret(await readSecretInput(io, "new webhook's signing secret", command), 'signing secret', command);
    step = startRotation(current.signingSecrets, added);
  }
  if (!step.ok) throw new CliError(step.problem, step.fix.replace('<id>', id), 'rotation');
  return { ...current, signingSecrets: step.signingSecrets };
}

/** The secret with a new read-API key (a key is shown once: replacing it is creating a new one). */
async function replacedReadKey(current: ConnectionSecret, io: CliIo, command: string): Promise<ConnectionSecret> {
  return { ...current, readApiKey: checkSecret(await readSecretInput(io, 'new read-API key', command), 'read-API key', command) };
}

/** `link` / `unlink`: the connection's linked installations, set conditional on it being active. */
function relink(operation: 'link' | 'unlink'): (parsed: Parsed, io: CliIo) => Promise<CommandResult> {
  return async (parsed, io) => {
    const id = connectionId(parsed, false);
    const teams = slackTeamsOf(parsed);
    if (teams.length === 0) throw new UsageError('--slack-team is required: the Slack workspace id (T…) or org id (E…)', parsed.command);
    const target = await targetOf(parsed, io);
    try {
      const connection = await activeConnection(target, id);
      const current = connection.slackTeamIds;
      if (operation === 'unlink') {
        const missing = teams.filter((team) => !current.includes(team));
        if (missing.length > 0)
          throw new CliError(
            `connection ${id} is not linked to ${missing.join(', ')}`,
            `see \`${target.ctx.hint('connections list')}\``,
            'not_linked',
          );
      }
      const next = operation === 'link' ? withTeamsLinked(current, teams) : withTeamsUnlinked(current, teams);
      if (!(await table(target, operation, () => target.store.setSlackTeams(id, next))))
        throw new CliError(`connection ${id} was removed meanwhile`, `see \`${target.ctx.hint('connections list')}\``, 'not_found');
      const slackTeams = await linkedTeams(target, { ...connection, slackTeamIds: next });
      target.ctx.out.say(`✓ ${id}: Slack ${slackLine(slackTeams)}`);
      return { exitCode: 0, json: { id, slackTeams } };
    } finally {
      target.close();
    }
  };
}

async function remove(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const id = connectionId(parsed, false);
  const target = await targetOf(parsed, io);
  try {
    const connection = await activeConnection(target, id);
    // Marked first: from now on its webhook answers 410 and its queued events are dropped, so the secret can go.
    await table(target, 'remove', () => target.store.markRemoved(id, target.ctx.now()));
    await aws({ service: 'Secrets Manager', resource: connection.secretName, ...endpointOf(target, 'secretsmanager') }, () =>
      target.sm.send(new DeleteSecretCommand({ SecretId: connection.secretName, RecoveryWindowInDays: 7 })),
    );
    const out = target.ctx.out;
    out.say(
      `✓ connection ${id} removed: its webhook now answers 410 Gone; its secret ${connection.secretName} is deleted (recoverable for 7 days)`,
    );
    out.say("Delete its webhook in the service's settings (otherwise the service switches it off after 15 failed deliveries).");
    return { exitCode: 0, json: { id, removed: true, secretName: connection.secretName } };
  } finally {
    target.close();
  }
}

const ID_ARG = [{ name: 'id' }];

const ADD_OPTIONS: OptionDefs = {
  'base-url': { value: 'URL', help: 'the read-API base URL of the workspace (required)' },
  channel: { value: 'C…', help: 'the channel id its digests go to by default, and its watchdog notices (required)' },
  route: { value: 'PROJECT=CHANNEL', multiple: true, help: "a project's own home channel (repeatable)" },
};

const SLACK_TEAM_OPTION: OptionDefs = {
  'slack-team': {
    value: 'T…',
    multiple: true,
    help: "a Slack installation to link: a workspace id T…, or an org id E… for an org-wide install (repeatable; the first one's bot token posts)",
  },
};

export const CONNECTIONS: GroupDef = {
  summary: 'service workspaces served by this bridge, each with its own webhook URL',
  shared: `A connection is one workspace of the service: its read-API base URL and key, its webhook's
signing secret(s) and its channels. Its webhook URL is the stack's WebhookUrl plus /<id>; a delivery
there is verified with that connection's secrets only, and its runs are read with its own key.
Secrets are read from a hidden prompt on a terminal, or from stdin (for add: two lines, the read-API
key then the signing secret), never from the command line, and never printed (fingerprints only).
Each connection's secret is one Secrets Manager secret, <ConnectionSecretPrefix><id>.

Rotating a webhook (the service shows a secret once; rotating means a new webhook): create the new
webhook, \`connections rotate <id>\` its secret (both are live), delete the old webhook, then
\`connections rotate <id> --finish\`. A third live secret is refused. \`connections rotate <id> --read-key\`
replaces the read-API key.

Linking (\`--slack-team T…\` on add, or \`connections link|unlink <id> --slack-team T…\`): the connection's
digests and its watchdog notice post with the bot token of its first linked installation, so its
channels must be channels of that workspace (or Slack Connect channels shared with it). Not linked: the
stack's own bot token. A linked workspace that uninstalled the app gets nothing posted with another
token: the digest is dropped and counted (ConnectionNotInstalled). A team may be linked before it installs.`,
  commands: {
    add: {
      summary: 'adds a connection and prints its webhook URL',
      synopsis: '[id] --base-url URL --channel C… [--route PROJECT=CHANNEL]... [--slack-team T…]... [options]',
      args: ID_ARG,
      options: { ...ADD_OPTIONS, ...SLACK_TEAM_OPTION, ...AWS_OPTIONS },
      run: add,
    },
    list: {
      summary: 'the connections, their webhook URLs, signing-secret fingerprints and linked Slack installations',
      options: { ...AWS_OPTIONS },
      run: list,
    },
    link: {
      summary: "links a connection to Slack installations: its digests post with the first one's bot token",
      synopsis: '<id> --slack-team T… [--slack-team T…]... [options]',
      args: ID_ARG,
      options: { ...SLACK_TEAM_OPTION, ...AWS_OPTIONS },
      run: relink('link'),
    },
    unlink: {
      summary: "unlinks Slack installations from a connection (none left: the stack's own bot token)",
      synopsis: '<id> --slack-team T… [--slack-team T…]... [options]',
      args: ID_ARG,
      options: { ...SLACK_TEAM_OPTION, ...AWS_OPTIONS },
      run: relink('unlink'),
    },
    rotate: {
      summary: "adds the new webhook's signing secret, or with --finish drops the old one",
      args: ID_ARG,
      options: {
        finish: { help: 'drop the old signing secret (after deleting the old webhook)' },
        'read-key': { help: 'replace the read-API key instead (from stdin or a hidden prompt)' },
        ...AWS_OPTIONS,
      },
      run: rotate,
    },
    remove: {
      summary: 'removes a connection: its webhook answers 410, its secret is deleted',
      args: ID_ARG,
      options: { ...AWS_OPTIONS },
      run: remove,
    },
  },
};
