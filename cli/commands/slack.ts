/**
 * `bridge slack manifest`: the Slack app manifest with this bridge's request URLs, to paste at
 * api.slack.com/apps → Create New App → From an app manifest.
 * `bridge slack command "/visibility …" --channel C`: a slash command signed as Slack signs it,
 * POSTed to the bridge's /slack/commands, and the reply printed (the local stack by default); a
 * deferred command's answer too, once the bridge posts it to the local Slack's response_url.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { HTTP_PATHS, SLACK_APP_DEFAULTS } from '../../shared/contracts';
import { buildSlackAppManifest } from '../../shared/slack-app/manifest';
import { CONFIG_DEFAULTS, loadStageConfig } from '../../infra/config';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { commandForm, readReply, type AppReply } from '../../local/slack-app-delivery';
import { RESPONSE_URL_PATH, renderMessageAsText } from '../../local/slack/server';
import { COMMANDS, parseCommandText } from '../../shared/slack-app/commands';
import { bool, buildContext, duration, str, AWS_OPTIONS, type CommandContext, type Parsed } from '../args';
import type { GroupDef, Handler } from '../command-spec';
import { endpointFor, secretsClient, STACK_OUTPUTS } from '../aws';
import { parseSlackSigningSecretValue, readSecret } from './secrets';
import { CliError, UsageError } from '../errors';
import type { LocalReady } from '../ready-file';
import type { CommandResult } from '../result';

const BY_DEFAULT_LOCAL = 'the local stack by default';

export const SLACK: GroupDef = {
  summary: 'the Slack app: its manifest, a signed test command, a local outage',
  commands: {
    manifest: {
      summary: 'prints the Slack app manifest with the request URLs of the stack',
      synopsis: '[--base-url URL | --local READY_FILE | --stack NAME] [--stage S] [--app-name N] [--private-channels] [options]',
      description: `Prints the Slack app manifest (JSON; Slack accepts it as is) with the request URLs of
the stack (output ApiBaseUrl), of the local stack, or of --base-url. With --stage, the scopes follow
config/<S>.json: files:write only when its chartsEnabled uploads the PNG chart Slack may refuse natively.`,
      options: {
        'base-url': { value: 'URL', help: "the bridge's API base URL (request URLs are this plus /slack/…)" },
        'app-name': { value: 'N', help: "the app's name in Slack" },
        'private-channels': { help: 'ask for the scopes of private channels too' },
        stage: { value: 'S', help: 'the stage file (config/<S>.json) whose chartsEnabled decides files:write (default: off)' },
        ...AWS_OPTIONS,
      },
      run: withContext(manifest),
    },
    command: {
      summary: `signs a slash command as Slack does and POSTs it to the bridge (${BY_DEFAULT_LOCAL})`,
      synopsis: '"/visibility <text>" --channel C [--local READY_FILE | --stack NAME | --url URL --secret S] [--user U] [options]',
      description: `Signs a slash command with the Slack app's signing secret (the ready file's
slackSigningSecret, or --secret), POSTs it to /slack/commands and prints the reply.
Deferred commands (subscribe, status, projects) answer later via response_url: against the
local stack the command waits for that answer (up to --wait) and prints it too.`,
      args: [{ name: 'line', variadic: true }],
      options: {
        channel: { value: 'C', help: 'the Slack channel id the command is sent from (required)' },
        user: { value: 'U', help: 'the Slack user id sending the command (default U0LOCAL)' },
        url: { value: 'URL', help: "the commands URL instead of the ready file's (or the stack output SlackCommandsUrl)" },
        secret: {
          value: 'S',
          help: "the Slack app signing secret instead of the ready file's (or the stack's secret SlackSigningSecretSecretArn)",
        },
        'response-url': { value: 'URL', help: "where deferred answers go (default: the local Slack server's)" },
        wait: {
          value: 'DURATION',
          help: "how long to wait for a deferred command's answer on the local Slack (default 20s; 0s: don't wait)",
        },
        ...AWS_OPTIONS,
      },
      run: withContext(command),
    },
    outage: {
      summary: 'local stack only: makes its Slack fail every call (on) or heals it (off)',
      synopsis: 'on|off [--kind server_error|ratelimited] [options]',
      description: `Local stack only: makes its Slack fail every call (on) or heals it (off), to watch a
digest be retried, reach the DLQ, and be replayed with \`npx bridge dlq replay\`.`,
      args: [{ name: 'state', choices: ['on', 'off'] }],
      options: { kind: { value: 'KIND', help: 'server_error (default) or ratelimited' }, ...AWS_OPTIONS },
      run: withContext(outage),
    },
  },
};

/** A handler that needs the command context. */
function withContext(body: (parsed: Parsed, ctx: CommandContext) => Promise<CommandResult>): Handler {
  return async (parsed, io) => body(parsed, await buildContext(parsed, io));
}

// --- manifest ----------------------------------------------------------------------------------

async function manifest(parsed: Parsed, ctx: CommandContext): Promise<CommandResult> {
  const baseUrl = await apiBaseUrl(parsed, ctx);
  let built;
  try {
    built = buildSlackAppManifest({
      baseUrl,
      appName: str(parsed, 'app-name'),
      privateChannels: bool(parsed, 'private-channels'),
      pngFallback: stagePngFallback(str(parsed, 'stage')),
    });
  } catch (error) {
    throw new CliError((error as Error).message, 'pass the API base URL with --base-url', 'bad_url');
  }
  ctx.out.say(JSON.stringify(built, null, 2));
  // On stderr, so the manifest on stdout stays pasteable: the app serves nobody until the stage names it.
  if (ctx.local === undefined)
    ctx.io.stderr.write(
      'once the app is installed, put its ids in the stage file (config/<stage>.json) and redeploy: "slackTeamIds": ["T…"] ' +
        '(the workspace), "slackAppId": "A…" (Basic Information → App ID), and "slackEnterpriseId": "E…" on an Enterprise Grid; ' +
        `until then every command and button is answered 403. ${ctx.hint('doctor')} prints the exact lines.\n`,
    );
  return { exitCode: 0, json: built };
}

/** Whether the stage uploads the PNG chart (its `chartsEnabled`); off without a stage, as the default stage is. */
function stagePngFallback(stage: string | undefined): boolean {
  if (stage === undefined) return CONFIG_DEFAULTS.chartsEnabled;
  try {
    return loadStageConfig(stage).chartsEnabled;
  } catch (error) {
    throw new CliError((error as Error).message, `fix config/${stage}.json or pass another --stage`, 'bad_stage');
  }
}

/** --base-url, else the local stack's gateway, else the stack output ApiBaseUrl. */
async function apiBaseUrl(parsed: Parsed, ctx: CommandContext): Promise<string> {
  const flag = str(parsed, 'base-url');
  if (flag !== undefined) return flag;
  if (ctx.local !== undefined) return (await localSlackFields(ctx.local)).baseUrl;
  return ctx.stack.require(STACK_OUTPUTS.apiBaseUrl, '--base-url');
}

interface LocalSlackFields {
  baseUrl: string;
  signingSecret: string | undefined;
}

/**
 * The Slack app's fields of the ready file: `slackSigningSecret`, and the base URL (`apiBaseUrl`,
 * else the webhook URL without its path). Read here so the shared ready-file reader stays as it is.
 */
export async function localSlackFields(ready: LocalReady): Promise<LocalSlackFields> {
  const raw = JSON.parse(await readFile(ready.path, 'utf8')) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  const base = text(raw['apiBaseUrl']) ?? baseOfWebhook(ready.webhookUrl);
  if (base === undefined) {
    throw new CliError(
      `ready file ${ready.path} has no apiBaseUrl or webhookUrl`,
      'restart the local stack (`npm start`) so it writes a complete ready file',
      'bad_ready_file',
    );
  }
  return { baseUrl: base, signingSecret: text(raw['slackSigningSecret']) };
}

function baseOfWebhook(webhookUrl: string | undefined): string | undefined {
  if (webhookUrl === undefined) return undefined;
  return webhookUrl.endsWith(HTTP_PATHS.webhook) ? webhookUrl.slice(0, -HTTP_PATHS.webhook.length) : new URL(webhookUrl).origin;
}

// --- outage ------------------------------------------------------------------------------------

const OUTAGE_KINDS = ['server_error', 'ratelimited'] as const;

/** Turns the local Slack server's failure on or off (its `/_faults` control endpoint). */
async function outage(parsed: Parsed, ctx: CommandContext): Promise<CommandResult> {
  const [state, ...extra] = parsed.positionals;
  if ((state !== 'on' && state !== 'off') || extra.length > 0)
    throw new UsageError('say `on` or `off`, e.g. npx bridge slack outage on', parsed.command);
  const kind = str(parsed, 'kind') ?? 'server_error';
  if (!(OUTAGE_KINDS as readonly string[]).includes(kind))
    throw new UsageError(`--kind must be one of ${OUTAGE_KINDS.join(', ')}, got "${kind}"`, parsed.command);
  const apiUrl = ctx.local?.slackApiUrl;
  if (apiUrl === undefined) {
    // Nothing of a deployed stack is touched: like every changing command without a target, a usage error.
    throw new UsageError(
      ctx.local === undefined
        ? 'no local stack running: an outage is simulated on the local stack only; start `npm start` (without SLACK_BOT_TOKEN), then `npx bridge slack outage on`'
        : `the local stack of ${ctx.local.path} posts to a real Slack: an outage is simulated only with its local Slack (\`npm start\` without SLACK_BOT_TOKEN)`,
      parsed.command,
    );
  }
  const url = `${new URL(apiUrl).origin}/_faults`;
  const response = await fetch(
    url,
    state === 'on' ? { method: 'POST', body: JSON.stringify({ kind, method: 'chat.postMessage' }) } : { method: 'DELETE' },
  );
  if (!response.ok)
    throw new CliError(
      `the local Slack server answered ${response.status} at ${url}`,
      'restart the local stack with `npm start`',
      'slack_control_failed',
    );
  ctx.out.say(
    state === 'on'
      ? `local Slack now fails every chat.postMessage (${kind}); heal it with ${ctx.hint('slack outage off')}`
      : 'local Slack is healthy again',
  );
  return { exitCode: 0, json: { outage: state === 'on', kind } };
}

// --- command -----------------------------------------------------------------------------------

interface Target {
  url: string;
  secret: string;
  responseUrl: string;
}

async function command(parsed: Parsed, ctx: CommandContext): Promise<CommandResult> {
  const [line, ...extra] = parsed.positionals;
  if (line === undefined) throw new UsageError('give the command line, e.g. "/visibility subscribe Northwind"', parsed.command);
  if (extra.length > 0) throw new UsageError('quote the whole command line as one argument', parsed.command);
  const channel = str(parsed, 'channel');
  if (channel === undefined) throw new UsageError('--channel is required (the Slack channel id the command is sent from)', parsed.command);
  const target = await commandTarget(parsed, ctx);
  const form = commandForm({
    line,
    slash: SLACK_APP_DEFAULTS.command,
    channel,
    user: { id: str(parsed, 'user') ?? 'U0LOCAL', name: 'bridge-cli' },
    teamId: 'T0LOCAL',
    responseUrl: target.responseUrl,
  });
  const posted = await post(target, form, ctx);
  const waitMs = duration(parsed, 'wait') ?? DEFERRED_WAIT_MS;
  if (posted.exitCode !== 0 || !isDeferred(line) || waitMs <= 0 || !readableResponseUrl(target.responseUrl, ctx.local)) return posted;
  return withDeferredAnswer(posted, await waitForDeferredAnswer(target.responseUrl, waitMs, ctx), waitMs, ctx);
}

/** Long enough for a read-API look-up behind a queue poll on a loaded machine; --wait changes it. */
const DEFERRED_WAIT_MS = 20_000;
const DEFERRED_POLL_MS = 250;

/** Whether the bridge answers this command line later, on the response_url (subscribe, status, projects). */
function isDeferred(line: string): boolean {
  const command = parseCommandText(line.trim().replace(/^\/\S+\s*/, ''));
  return Object.hasOwn(COMMANDS, command.kind) && COMMANDS[command.kind as keyof typeof COMMANDS].deferred;
}

/** Only the local Slack server keeps what was posted to its response_urls (Slack itself shows it in the channel). */
function readableResponseUrl(responseUrl: string, local: LocalReady | undefined): boolean {
  if (local?.slackApiUrl === undefined) return false;
  const url = new URL(responseUrl);
  return url.origin === new URL(local.slackApiUrl).origin && url.pathname.startsWith(RESPONSE_URL_PATH);
}

type Waited = { answer: AppReply } | { unreadable: string } | { timedOut: true };

/** Polls the local Slack for the first answer posted to `responseUrl`, until `waitMs` has passed. */
async function waitForDeferredAnswer(responseUrl: string, waitMs: number, ctx: CommandContext): Promise<Waited> {
  const until = ctx.now() + waitMs;
  for (;;) {
    let answers: unknown;
    try {
      const response = await ctx.fetch(responseUrl, { signal: AbortSignal.timeout(5_000) });
      if (!response.ok) return { unreadable: `the local Slack answered HTTP ${response.status} at ${responseUrl}` };
      answers = ((await response.json()) as { answers?: unknown }).answers;
    } catch (error) {
      return { unreadable: `the local Slack did not answer at ${responseUrl} (${(error as Error).message})` };
    }
    const answer = Array.isArray(answers) ? answers.map((a) => readReply(a)).find((r) => r !== undefined) : undefined;
    if (answer !== undefined) return { answer };
    if (ctx.now() >= until) return { timedOut: true };
    await ctx.sleep(DEFERRED_POLL_MS);
  }
}

/** The deferred answer printed as Slack would show it (as text), or why there is none. */
function withDeferredAnswer(posted: CommandResult, waited: Waited, waitMs: number, ctx: CommandContext): CommandResult {
  if ('unreadable' in waited) {
    // The command itself went through; only its later answer can't be shown here.
    ctx.out.warn(`${waited.unreadable}: the deferred answer is not shown`);
    return posted;
  }
  if ('timedOut' in waited) {
    ctx.out.warn(
      `no answer on the response_url within ${Math.round(waitMs / 1000)}s: \`${ctx.hint('tail')}\` shows what the digest function did with the command (--wait to wait longer)`,
    );
    return { exitCode: 1, json: { ...(posted.json as object), deferred: null } };
  }
  const { answer } = waited;
  const where = answer.responseType === 'in_channel' ? 'in the channel' : 'only visible to you';
  ctx.out.say(`answer (${where}):`);
  ctx.out.say(renderMessageAsText({ text: answer.text, blocks: answer.blocks }));
  return { exitCode: 0, json: { ...(posted.json as object), deferred: answer } };
}

async function commandTarget(parsed: Parsed, ctx: CommandContext): Promise<Target> {
  const local = ctx.local === undefined ? undefined : await localSlackFields(ctx.local);
  const url =
    str(parsed, 'url') ??
    (local !== undefined
      ? `${local.baseUrl}${HTTP_PATHS.slackCommands}`
      : await ctx.stack.require(STACK_OUTPUTS.slackCommandsUrl, '--url'));
  const secret =
    str(parsed, 'secret') ?? local?.signingSecret ?? (ctx.local === undefined ? await stackSlackSigningSecret(ctx) : undefined);
  if (secret === undefined) {
    throw new CliError(
      'no Slack signing secret to sign with',
      ctx.local !== undefined
        ? `restart the local stack so its ready file ${ctx.local.path} has slackSigningSecret, or pass --secret`
        : 'pass --secret',
      'bad_ready_file',
    );
  }
  return { url, secret, responseUrl: str(parsed, 'response-url') ?? defaultResponseUrl(ctx.local) };
}

/** The first Slack signing secret of a deployed stack (output SlackSigningSecretSecretArn). */
async function stackSlackSigningSecret(ctx: CommandContext): Promise<string> {
  const id = await ctx.stack.require(STACK_OUTPUTS.slackSigningSecretSecretArn, '--secret');
  const sm = secretsClient(ctx.settings);
  try {
    const text = await readSecret(sm, { id, endpoint: endpointFor(ctx.settings, 'secretsmanager') });
    const [first] = parseSlackSigningSecretValue(text ?? '');
    if (first !== undefined) return first;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(
      `the Slack signing secret ${id} ${(err as Error).message}`,
      `\`${ctx.hint('secrets set slack-signing-secret')}\``,
      'bad_secret',
    );
  } finally {
    sm.destroy();
  }
  throw new CliError(`the Slack signing secret ${id} is empty`, `\`${ctx.hint('secrets set slack-signing-secret')}\``, 'bad_secret');
}

/** Deferred answers go to the local Slack server's response_url path; without one, to a Slack hooks URL that ends nowhere. */
function defaultResponseUrl(local: LocalReady | undefined): string {
  const id = randomUUID();
  if (local?.slackApiUrl !== undefined) return `${new URL(local.slackApiUrl).origin}/response_url/${id}`;
  return `https://hooks.slack.com/commands/bridge-cli/${id}`;
}

async function post(target: Target, form: string, ctx: CommandContext): Promise<CommandResult> {
  const headers = {
    'content-type': 'application/x-www-form-urlencoded',
    ...signSlackRequest(target.secret, Math.floor(ctx.now() / 1000), form),
  };
  let response: Response;
  try {
    response = await ctx.fetch(target.url, {
      method: 'POST',
      headers,
      body: form,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new CliError(
      `${target.url} did not answer (${(error as Error).message})`,
      'is the local stack running (`npm start`)? is the URL right?',
      'network',
    );
  }
  const body = await response.text();
  const reply = parseReply(body);
  const shown = response.ok ? readReply(body) : undefined;
  // As Slack shows it: mentions, dates and links as text, blocks included.
  ctx.out.say(`${response.status} ${shown ? renderMessageAsText({ text: shown.text, blocks: shown.blocks }) : (reply?.text ?? body)}`);
  return { exitCode: response.ok ? 0 : 1, json: { status: response.status, reply: reply ?? body } };
}

function parseReply(body: string): { text?: string } | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}
