/**
 * Where a test delivery goes and what it is signed with, for `trigger`, `send` and `smoke`: the local
 * stack's ready file, or a deployed stack's outputs (WebhookUrl, the signing secrets secret), and the
 * project it is about when none is named.
 */
import { ReadApiClient } from '../shared/adapters/read-api';
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

/** The first project the read API lists, with the stack's own read-API key. */
async function firstListedProject(ctx: CommandContext): Promise<string | undefined> {
  const baseUrl = await ctx.stack.optional(STACK_OUTPUTS.readApiBaseUrl);
  const keyId = await ctx.stack.optional(STACK_OUTPUTS.readApiKeySecretArn);
  if (baseUrl === undefined || keyId === undefined) return undefined;
  const sm = secretsClient(ctx.settings);
  try {
    const apiKey = (await readSecret(sm, { id: keyId, endpoint: endpointFor(ctx.settings, 'secretsmanager') }))?.trim();
    if (apiKey === undefined || apiKey === '' || apiKey === SECRET_PLACEHOLDER) return undefined;
    const client = new ReadApiClient({
      baseUrl,
      apiKey,
      timeoutMs: 10_000,
      maxRateLimitRetries: 1,
      maxRateLimitWaitMs: 5_000,
      fetch: ctx.fetch,
    });
    return (await client.listProjects())[0]?.id;
  } catch {
    // The project is a convenience: without it the caller asks for --project.
    return undefined;
  } finally {
    sm.destroy();
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
