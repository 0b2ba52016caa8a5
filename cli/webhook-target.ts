/**
 * Where a test delivery goes and what it is signed with, for `trigger`, `send` and `smoke`: the local
 * stack's ready file, or a deployed stack's outputs (WebhookUrl, the signing secrets secret), and the
 * project it is about when none is named.
 */
import { ReadApiClient } from '../shared/adapters/read-api';
import type { Project } from '../shared/read-api-types';
import { SECRET_PLACEHOLDER } from '../shared/contracts';
import { type CommandContext } from './args';
import { endpointFor, secretsClient, STACK_OUTPUTS } from './aws';
import { CliError } from './errors';
import { parseSigningSecrets, readSecret } from './commands/secrets';

/** The first live signing secret of a deployed stack (output SigningSecretsSecretArn). */
export async function stackSigningSecret(ctx: CommandContext, flag = '--secret'): Promise<string> {
  const id = await ctx.stack.require(STACK_OUTPUTS.signingSecretsSecretArn, flag);
  const sm = secretsClient(ctx.settings);
  try {
    const secret = parseSigningSecrets(await readSecret(sm, { id, endpoint: endpointFor(ctx.settings, 'secretsmanager') }))[0];
    if (secret === undefined)
      throw new CliError(
        `the signing secrets secret ${id} is empty`,
        `put the secret the service showed for the webhook: \`${ctx.hint('secrets signing add')}\``,
        'no_secret',
      );
    return secret;
  } finally {
    sm.destroy();
  }
}

/** The first project a stack output names a channel for (SlackProjectChannels, a JSON object). */
function firstConfiguredProject(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    return Object.keys(parsed).find((key) => key.trim() !== '');
  } catch {
    return undefined;
  }
}

/** A read-API client with the key the stack uses (the local stack's simulator key, or the stack's secret); undefined when none is set. */
async function readApiOf(ctx: CommandContext): Promise<{ client: ReadApiClient; baseUrl: string } | undefined> {
  const client = (baseUrl: string, apiKey: string) => ({
    baseUrl,
    client: new ReadApiClient({ baseUrl, apiKey, timeoutMs: 10_000, maxRateLimitRetries: 1, maxRateLimitWaitMs: 5_000, fetch: ctx.fetch }),
  });
  if (ctx.local !== undefined)
    return ctx.local.simulatorUrl !== undefined && ctx.local.apiKey !== undefined
      ? client(ctx.local.simulatorUrl, ctx.local.apiKey)
      : undefined;
  const baseUrl = await ctx.stack.optional(STACK_OUTPUTS.readApiBaseUrl);
  const keyId = await ctx.stack.optional(STACK_OUTPUTS.readApiKeySecretArn);
  if (baseUrl === undefined || keyId === undefined) return undefined;
  const sm = secretsClient(ctx.settings);
  try {
    const apiKey = (await readSecret(sm, { id: keyId, endpoint: endpointFor(ctx.settings, 'secretsmanager') }))?.trim();
    return apiKey === undefined || apiKey === '' || apiKey === SECRET_PLACEHOLDER ? undefined : client(baseUrl, apiKey);
  } finally {
    sm.destroy();
  }
}

/** The projects the service lists to the stack (GET /v1/projects), or a CliError saying why they cannot be read. */
export async function serviceProjects(ctx: CommandContext): Promise<Project[]> {
  const api = await readApiOf(ctx);
  if (api === undefined)
    throw new CliError(
      'the read API is not set up, so no project can be looked up by name',
      `set the read-API key (\`${ctx.hint('secrets set read-api-key --value-stdin')}\`) and check with \`${ctx.hint('doctor')}\``,
      'no_read_api',
    );
  try {
    return await api.client.listProjects();
  } catch (err) {
    throw new CliError(
      `cannot list the projects at ${api.baseUrl}: ${err instanceof Error ? err.message : String(err)}`,
      `\`${ctx.hint('doctor')}\` checks the read-API key and URL`,
      'read_api_error',
    );
  }
}

/** The first project the read API lists, with the stack's own read-API key. */
async function firstListedProject(ctx: CommandContext): Promise<string | undefined> {
  try {
    return (await serviceProjects(ctx))[0]?.id;
  } catch {
    // The project is a convenience: without it the caller asks for --project.
    return undefined;
  }
}

/**
 * The project of a test delivery when none is named: the local stack's first, else the first project
 * the stack routes to a channel (SlackProjectChannels), else the first the read API lists.
 */
export async function defaultProjectId(ctx: CommandContext): Promise<string | undefined> {
  if (ctx.local !== undefined) return ctx.local.projectIds[0];
  return firstConfiguredProject(await ctx.stack.optional(STACK_OUTPUTS.slackProjectChannels)) ?? (await firstListedProject(ctx));
}
