/**
 * `bridge secrets set read-api-key|slack-token|slack-signing-secret` and `bridge secrets signing
 * add|remove|list`: put the bridge's secrets in Secrets Manager without echoing them. Values come from
 * stdin or a hidden prompt (or --value, except the Slack signing secret), so they stay out of the shell
 * history. The signing secrets secret stays a JSON array of strings (docs/CONTRACTS.md); listing
 * shows fingerprints only.
 */
import { parseSlackSigningSecret } from '../../shared/config-env';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { createHash } from 'node:crypto';
import { SECRET_PLACEHOLDER } from '../../shared/secrets';
import { bool, buildContext, int, str, AWS_OPTIONS, type CommandContext, type Parsed } from '../args';
import { INGEST_DEFAULTS } from '../../shared/contracts';
import { LOCAL_SECRETS_CACHE_SECONDS } from '../../local/local-secrets';
import { endpointFor, secretsClient, STACK_OUTPUTS } from '../aws';
import { aws, CliError, explainError, UsageError, type ErrorContext } from '../errors';
import type { GroupDef, OptionDef } from '../command-spec';
import type { CliIo, Output } from '../io';
import { needLocal, type LocalReady } from '../ready-file';
import type { CommandResult } from '../result';
import { readSecretInput } from '../secret-input';

/** When the functions see a changed secret: the stack's own cache time (the local stack re-reads every few seconds). */
export function pickUpTime(ctx: CommandContext): string {
  return ctx.local !== undefined
    ? `within ${LOCAL_SECRETS_CACHE_SECONDS} s (the local stack re-reads its secrets every ${LOCAL_SECRETS_CACHE_SECONDS} s)`
    : `within its secrets cache time (SECRETS_CACHE_SECONDS, default ${INGEST_DEFAULTS.secretsCacheSeconds / 60} min)`;
}

/** How rotation works, with commands for the same stack. */
export function rotationNote(hint: (words: string) => string): string {
  return (
    'the service signs each webhook with the secret it showed when the webhook was created: to rotate, create a new webhook with the service, ' +
    `\`${hint('secrets signing add --value-stdin')}\` its secret, delete the old webhook, then \`${hint('secrets signing remove --index N')}\` the old secret. ` +
    `The ingest function picks the change up within its secrets cache time (SECRETS_CACHE_SECONDS: ${INGEST_DEFAULTS.secretsCacheSeconds / 60} min deployed, ${LOCAL_SECRETS_CACHE_SECONDS} s on the local stack).`
  );
}

/**
 * "sha256:3f9a1c2b": the first 8 hex digits of the secret's SHA-256. Tells secrets apart even when
 * they share a prefix (every signing secret starts with whsec_), and reveals nothing usable.
 */
export function fingerprint(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 8)}`;
}

export interface SecretRef {
  id: string;
  endpoint?: string | undefined;
}

function ctxFor(ref: SecretRef): ErrorContext {
  return { service: 'Secrets Manager', resource: ref.id, ...(ref.endpoint !== undefined ? { endpoint: ref.endpoint } : {}) };
}

/** The secret's current string, or undefined when it exists but has no value yet. */
export async function readSecret(sm: SecretsManagerClient, ref: SecretRef): Promise<string | undefined> {
  try {
    const result = await sm.send(new GetSecretValueCommand({ SecretId: ref.id }));
    if (result.SecretString !== undefined) return result.SecretString;
    if (result.SecretBinary !== undefined) return Buffer.from(result.SecretBinary).toString('utf8');
    return undefined;
  } catch (err) {
    // A secret created without a value answers ResourceNotFoundException "…secret value for staging label…".
    if (err instanceof ResourceNotFoundException && /secret value/i.test(err.message)) return undefined;
    throw explainError(err, ctxFor(ref));
  }
}

export async function writeSecret(sm: SecretsManagerClient, ref: SecretRef, value: string): Promise<string | undefined> {
  const result = await aws(ctxFor(ref), () => sm.send(new PutSecretValueCommand({ SecretId: ref.id, SecretString: value })));
  return result.VersionId;
}

/** The signing secrets in the secret's text: [] while unset or the placeholder. */
export function parseSigningSecrets(text: string | undefined): string[] {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '' || trimmed === SECRET_PLACEHOLDER) return [];
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new CliError(
        'the signing secrets secret looks like JSON but does not parse',
        'put a JSON array of strings into it by hand, e.g. ["whsec_…"]',
        'bad_secret',
      );
    }
    if (!Array.isArray(parsed) || parsed.some((item) => typeof item !== 'string')) {
      throw new CliError(
        'the signing secrets secret is not a JSON array of strings',
        'put a JSON array of strings into it by hand, e.g. ["whsec_…"]',
        'bad_secret',
      );
    }
    return (parsed as string[]).map((item) => item.trim()).filter((item) => item !== '');
  }
  // Not JSON (an old hand-put value): read leniently so `signing add|remove` can rewrite it as a JSON array.
  return trimmed
    .split(/[\n,]/)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function checkValue(value: string, what: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw new UsageError(`the ${what} is empty`);
  if (trimmed === SECRET_PLACEHOLDER) throw new UsageError(`"${SECRET_PLACEHOLDER}" is the placeholder, not a ${what}`);
  if (/\s/.test(trimmed)) throw new UsageError(`the ${what} contains whitespace; paste it exactly as shown`);
  return trimmed;
}

/**
 * The Slack app's signing secrets in a value, by the parser the Slack function uses (the plain
 * secret as Slack shows it, or a JSON array while it is regenerated), so the CLI never writes a
 * value the function refuses. Throws a message that says what to put (never the value).
 */
export function parseSlackSigningSecretValue(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === SECRET_PLACEHOLDER) {
    throw new Error('not set; put the signing secret as Slack shows it (Basic Information → App Credentials)');
  }
  try {
    return parseSlackSigningSecret(trimmed, 'the Slack signing secret');
  } catch (error) {
    throw new Error(error instanceof Error ? error.message.replace(/^Configuration error: /, '') : String(error), { cause: error });
  }
}

const SINGLE_SECRETS = {
  'read-api-key': { output: STACK_OUTPUTS.readApiKeySecretArn, what: 'read-API key', reader: 'digest function' },
  'slack-token': { output: STACK_OUTPUTS.slackTokenSecretArn, what: 'Slack bot token', reader: 'digest function' },
  'slack-signing-secret': { output: STACK_OUTPUTS.slackSigningSecretSecretArn, what: 'Slack signing secret', reader: 'Slack function' },
} as const;
type SingleSecret = keyof typeof SINGLE_SECRETS;
const SINGLE_NAMES = Object.keys(SINGLE_SECRETS) as SingleSecret[];

/** The id of the secret in the local stack's Secrets Manager server, from its ready file. */
function localSecretId(local: LocalReady, name: SingleSecret | undefined): string {
  if (name === 'slack-signing-secret') {
    throw new CliError(
      `the local stack of ${local.path} keeps its Slack signing secret in its environment (generated at each start, slackSigningSecret in the ready file); there is nothing to set`,
      'to put it in a deployed stack, name the stack with --stack NAME',
      'not_on_local',
    );
  }
  if (local.secretsManagerEndpoint === undefined) {
    throw new CliError(
      `the local stack of ${local.path} runs without a Secrets Manager server`,
      'restart it with the current `npm start` (it serves one), or pass --secret-id and --endpoint-secretsmanager',
      'bad_ready_file',
    );
  }
  const id =
    name === 'read-api-key' ? local.readApiKeySecretId : name === 'slack-token' ? local.slackTokenSecretId : local.signingSecretsSecretId;
  return needLocal(
    local,
    id,
    name === undefined ? 'signingSecretsSecretId' : name === 'read-api-key' ? 'readApiKeySecretId' : 'slackTokenSecretId',
  );
}

function printSigning(out: Output, secrets: readonly string[]): void {
  if (secrets.length === 0) out.say('no signing secret set');
  secrets.forEach((secret, i) => out.say(`[${i + 1}] ${fingerprint(secret)}`));
}

/** The secret named after `secrets set`. */
function secretName(positionals: readonly string[], command: string): SingleSecret {
  const [target, ...extra] = positionals;
  const names = SINGLE_NAMES.join(', ');
  if (target === undefined) throw new UsageError(`secrets set needs one of ${names}`, command);
  if (!(SINGLE_NAMES as readonly string[]).includes(target))
    throw new UsageError(`unknown secret "${target}": use one of ${names} (webhook signing secrets: secrets signing add)`, command);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0] ?? ''}"`, command);
  return target as SingleSecret;
}

/** What `secrets set` stores for a value, and the secret its fingerprint is shown of. */
function singleValue(name: SingleSecret, value: string, command: string): { stored: string; shown: string } {
  if (name !== 'slack-signing-secret') {
    const secret = checkValue(value, SINGLE_SECRETS[name].what);
    return { stored: secret, shown: secret };
  }
  let secrets: string[];
  try {
    secrets = parseSlackSigningSecretValue(value);
  } catch (err) {
    throw new UsageError(`the Slack signing secret ${(err as Error).message}`, command);
  }
  // One secret is stored as Slack shows it (what the stack output's command puts); several as a JSON array.
  const stored = secrets.length === 1 ? (secrets[0] ?? '') : JSON.stringify(secrets);
  return { stored, shown: secrets[0] ?? '' };
}

const SECRET_ID: Record<string, OptionDef> = {
  'secret-id': { value: 'ID', help: "the secret's id or ARN, instead of the stack output (or the ready file's)" },
};
const VALUE: Record<string, OptionDef> = {
  value: { value: 'V', help: 'the value (it lands in your shell history); - reads stdin' },
  'value-stdin': { help: 'read the value from stdin' },
};

export const SECRETS: GroupDef = {
  summary: "the bridge's secrets in Secrets Manager",
  shared: `The value is read from stdin when it is piped (\`pbpaste | npx bridge secrets set read-api-key\`),
or asked for at a prompt that does not echo when stdin is a terminal; either way it stays out of
your shell history. --value V still works for read-api-key, slack-token and signing add (it lands in
the history); --value - and --value-stdin mean stdin. The Slack signing secret is never taken from
the command line: it is the plain secret as Slack shows it (Basic Information → App Credentials),
or a JSON array of them while it is regenerated.
Values are trimmed and never printed: only a fingerprint, the first 8 hex digits of the value's
SHA-256 (sha256:3f9a1c2b), which tells secrets apart without revealing them.
Secret ids come from the stack outputs (ReadApiKeySecretArn, SlackTokenSecretArn,
SlackSigningSecretSecretArn, SigningSecretsSecretArn), or, on the local stack, from its ready file
(\`npm start\` runs a local Secrets Manager; the local functions re-read it every 2 s; its Slack
signing secret is generated per start and not set here), unless --secret-id is given.

Rotating the signing secret: create a new webhook with the service, \`signing add\` its
secret, delete the old webhook, then \`signing remove\` the old secret. The last secret is never removed.`,
  commands: {
    set: {
      summary: 'puts the read-API key, the Slack bot token or the Slack signing secret',
      args: [{ name: 'secret', choices: SINGLE_NAMES }],
      options: { ...SECRET_ID, ...VALUE, ...AWS_OPTIONS },
      run: secretsCommand,
    },
    signing: {
      summary: 'manage the webhook signing secrets',
      commands: {
        add: { summary: 'adds a signing secret', options: { ...SECRET_ID, ...VALUE, ...AWS_OPTIONS }, run: secretsCommand },
        remove: {
          summary: 'removes one, by its place in the list or its value',
          synopsis: '(--index N | --value S | --value -) [options]',
          options: { index: { value: 'N', help: 'the secret at [N] of `secrets signing list`' }, ...SECRET_ID, ...VALUE, ...AWS_OPTIONS },
          run: secretsCommand,
        },
        list: { summary: 'fingerprints of the signing secrets', options: { ...SECRET_ID, ...AWS_OPTIONS }, run: secretsCommand },
      },
    },
  },
};

async function secretsCommand(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const command = parsed.command;
  const valueFlag = str(parsed, 'value');
  const stdinFlag = bool(parsed, 'value-stdin') || valueFlag === '-';
  if (bool(parsed, 'value-stdin') && valueFlag !== undefined) throw new UsageError('give either --value or --value-stdin', command);
  const needsValue = command === 'secrets set' || command === 'secrets signing add';
  const takesValue = needsValue || command === 'secrets signing remove';

  const name = command === 'secrets set' ? secretName(parsed.positionals, command) : undefined;
  if (name === 'slack-signing-secret' && valueFlag !== undefined && !stdinFlag)
    throw new UsageError(
      'the Slack signing secret is never taken from the command line (it would stay in your shell history): pipe it on stdin or paste it at the prompt',
      command,
    );
  const index = int(parsed, 'index', 1, 1000);
  if (command === 'secrets signing remove' && (valueFlag === undefined) === (index === undefined)) {
    throw new UsageError(
      'give either --value S (--value - reads it from stdin) or --index N (as shown by `secrets signing list`)',
      command,
    );
  }

  // The target is found before the value is read: a refusal (no stack named) comes before the prompt.
  const ctx = await buildContext(parsed, io);
  const out = ctx.out;
  const output = name !== undefined ? SINGLE_SECRETS[name].output : STACK_OUTPUTS.signingSecretsSecretArn;
  const ref: SecretRef = {
    id:
      str(parsed, 'secret-id') ??
      (ctx.local !== undefined ? localSecretId(ctx.local, name) : await ctx.stack.require(output, '--secret-id')),
    endpoint: endpointFor(ctx.settings, 'secretsmanager'),
  };
  const what = name !== undefined ? SINGLE_SECRETS[name].what : 'signing secret';
  let value: string | undefined;
  if (takesValue && (stdinFlag || (needsValue && valueFlag === undefined))) value = await readSecretInput(io, what, command);
  else value = valueFlag;

  const sm = secretsClient(ctx.settings);
  try {
    if (name !== undefined) {
      const { stored, shown } = singleValue(name, value ?? '', command);
      if (name === 'slack-token' && !stored.startsWith('xoxb-'))
        out.warn('a bot token starts with xoxb-; user (xoxp-) and app-level (xapp-) tokens will not work');
      const versionId = await writeSecret(sm, ref, stored);
      out.say(`✓ ${what} set in ${ref.id} (${fingerprint(shown)})`);
      out.say(`The ${SINGLE_SECRETS[name].reader} picks it up ${pickUpTime(ctx)}.`);
      return { exitCode: 0, json: { secret: name, secretId: ref.id, versionId: versionId ?? null, fingerprint: fingerprint(shown) } };
    }

    const current = parseSigningSecrets(await readSecret(sm, ref));
    const list = (secrets: readonly string[]) =>
      secrets.map((secret, i) => ({ index: i + 1, fingerprint: fingerprint(secret), length: secret.length }));

    if (command === 'secrets signing list') {
      printSigning(out, current);
      return { exitCode: 0, json: { secretId: ref.id, secrets: list(current) } };
    }

    if (command === 'secrets signing add') {
      const secret = checkValue(value ?? '', 'signing secret');
      if (current.includes(secret)) {
        out.say(`already present: ${fingerprint(secret)}; nothing changed`);
        printSigning(out, current);
        return { exitCode: 0, json: { secretId: ref.id, changed: false, secrets: list(current) } };
      }
      const next = [...current, secret];
      const versionId = await writeSecret(sm, ref, JSON.stringify(next));
      out.say(`✓ added ${fingerprint(secret)}; ${next.length} signing secret(s) live:`);
      printSigning(out, next);
      out.warn(rotationNote(ctx.hint));
      return {
        exitCode: 0,
        json: { secretId: ref.id, changed: true, versionId: versionId ?? null, added: fingerprint(secret), secrets: list(next) },
      };
    }

    // remove
    let position: number;
    if (index !== undefined) {
      if (index > current.length)
        throw new CliError(
          `there is no signing secret [${index}]; ${current.length} are set`,
          `see \`${ctx.hint('secrets signing list')}\``,
          'not_found',
        );
      position = index - 1;
    } else {
      position = current.indexOf((value ?? '').trim());
      if (position < 0)
        throw new CliError(
          'that signing secret is not in the list',
          `see \`${ctx.hint('secrets signing list')}\` for fingerprints, or use --index N`,
          'not_found',
        );
    }
    if (current.length <= 1) {
      throw new CliError(
        'refusing to remove the last signing secret: every delivery would then be rejected',
        `add the new webhook's secret first (\`${ctx.hint('secrets signing add --value-stdin')}\`), then remove the old one`,
        'last_secret',
      );
    }
    const removed = current[position] ?? '';
    const next = current.filter((_, i) => i !== position);
    const versionId = await writeSecret(sm, ref, JSON.stringify(next));
    out.say(`✓ removed ${fingerprint(removed)}; ${next.length} signing secret(s) live:`);
    printSigning(out, next);
    out.warn(rotationNote(ctx.hint));
    return {
      exitCode: 0,
      json: { secretId: ref.id, changed: true, versionId: versionId ?? null, removed: fingerprint(removed), secrets: list(next) },
    };
  } finally {
    sm.destroy();
  }
}
