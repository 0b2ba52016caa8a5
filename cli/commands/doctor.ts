/**
 * `bridge doctor`: checks the deployment end to end and prints a checklist, each failure with its
 * fix. Exit 1 when any check fails (warnings don't fail).
 *
 * Checks: the stack exists; each secret is set (not the placeholder; signing secrets a JSON array
 * of non-empty strings; the Slack signing secret plain or a JSON array); the read-API key works (GET /v1/projects); the Slack token is valid
 * (auth.test) and the bot is in every configured channel; the stage's Slack workspace, org and app ids are the
 * token's (auth.test, bots.info: else the stage-file lines to add); the DLQ is empty; the last accepted
 * delivery is recent (max `accepted_at` of the `delivery#` records).
 *
 * On the local stack the same checks run on the live values: the secrets as its functions read them
 * (its Secrets Manager server, by the ids in the ready file), not the ready file's copies.
 */
import { ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SECRET_PLACEHOLDER } from '../../shared/secrets';
import { botAppId, checkSlackAuth, fixForSlackError, isBotInChannel } from '../slack-checks';
import { LOCAL_SLACK_APP_ID, LOCAL_SLACK_TEAM_ID } from '../../local/slack-app-delivery';
import { buildContext, formatAge, positiveNumber, str, AWS_OPTIONS, type CommandContext, type Parsed } from '../args';
import type { LeafDef } from '../command-spec';
import { dynamoClient, endpointFor, secretsClient, sqsClient, STACK_OUTPUTS } from '../aws';
import { HTTP_PATHS, TABLE } from '../../shared/contracts';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { aws, explainError, UsageError } from '../errors';
import type { CliIo } from '../io';
import { LOCAL_SLACK_TOKEN, type LocalReady } from '../ready-file';
import type { CommandResult } from '../result';
import { queueDepth } from './dlq/queue';
import { parseSlackSigningSecretValue, readSecret } from './secrets';
import { localSlackFields } from './slack';
import { doctorConnection } from './doctor-connection';
import {
  doctorResult,
  fail,
  HTTP_TIMEOUT_MS,
  ok,
  plainHint,
  say as sayCheck,
  skip,
  warn,
  checkReadApi,
  type Check,
  type Hint,
} from './doctor-checks';

export type { Check, Hint } from './doctor-checks';

export const DEFAULT_SILENCE_HOURS = 26;
const MAX_SCAN_PAGES = 1_000;

function errorText(err: unknown): { detail: string; fix?: string } {
  const cli = explainError(err);
  return { detail: cli.message, ...(cli.fix !== undefined ? { fix: cli.fix } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Individual checks (exported for reuse and tests)
// ---------------------------------------------------------------------------------------------

export interface SecretValues {
  readApiKey: string | undefined;
  slackToken: string | undefined;
  signingSecrets: string[] | undefined;
}

/** Validates a single-valued secret's text. */
export function checkSingleSecret(
  id: string,
  title: string,
  text: string | undefined,
  setCommand: string,
): { check: Check; value: string | undefined } {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return { check: fail(id, title, 'not set (no value)', setCommand), value: undefined };
  if (trimmed === SECRET_PLACEHOLDER)
    return { check: fail(id, title, `not set (still ${SECRET_PLACEHOLDER})`, setCommand), value: undefined };
  return { check: ok(id, title, 'set'), value: trimmed };
}

/** Signing secrets must be a JSON array of non-empty strings. */
export function checkSigningSecret(text: string | undefined, hint: Hint = plainHint): { check: Check; value: string[] | undefined } {
  const id = 'secret.signing';
  const title = 'signing secrets';
  const setCommand = `${hint('secrets signing add --value-stdin')}   (the secret the service showed when the webhook was created)`;
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return { check: fail(id, title, 'not set (no value)', setCommand), value: undefined };
  if (trimmed === SECRET_PLACEHOLDER)
    return { check: fail(id, title, `not set (still ${SECRET_PLACEHOLDER})`, setCommand), value: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed)) {
    return {
      check: fail(
        id,
        title,
        'not a JSON array of strings',
        `put e.g. ["whsec_…"] in it (\`${hint('secrets signing add --value-stdin')}\` writes the right format)`,
      ),
      value: undefined,
    };
  }
  if (parsed.length === 0) return { check: fail(id, title, 'empty list', setCommand), value: undefined };
  if (parsed.some((item) => typeof item !== 'string' || item.trim() === '')) {
    return {
      check: fail(
        id,
        title,
        'holds an empty or non-string entry',
        `rewrite it as a JSON array of non-empty strings (\`${hint('secrets signing list')}\`, then \`${hint('secrets signing remove --index N')}\`)`,
      ),
      value: undefined,
    };
  }
  const secrets = (parsed as string[]).map((item) => item.trim());
  return { check: ok(id, title, `${secrets.length} secret(s) set`), value: secrets };
}

/**
 * The Slack app's signing secret: set, not the placeholder, and in a format the Slack function takes
 * (the plain secret as Slack shows it, or a JSON array while regenerating). A bad one answers 503 to
 * every slash command and button.
 */
export function checkSlackSigningSecret(text: string | undefined, hint: Hint = plainHint): Check {
  const id = 'secret.slack-signing';
  const title = 'Slack signing secret';
  const setCommand = `${hint('secrets set slack-signing-secret')}   (Slack app → Basic Information → App Credentials → Signing Secret)`;
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return fail(id, title, 'not set (no value)', setCommand);
  if (trimmed === SECRET_PLACEHOLDER) return fail(id, title, `not set (still ${SECRET_PLACEHOLDER})`, setCommand);
  try {
    const secrets = parseSlackSigningSecretValue(trimmed);
    return ok(id, title, secrets.length === 1 ? 'set' : `set (${secrets.length} secrets, while regenerating)`);
  } catch (err) {
    return fail(id, title, (err as Error).message, setCommand);
  }
}

/** What the events check needs: the app's events request URL and the Slack signing secret to sign Slack's URL check with. */
export interface SlackEventsProbe {
  url: string;
  signingSecret: string;
}

/**
 * The Home tab's event route: a signed `url_verification`, as Slack sends it when the app's Event
 * Subscriptions are saved, must come back with its challenge. Slack enables the subscription (and so
 * `app_home_opened`, which publishes the Home tab) only after that answer; the app's Home tab and bot
 * event themselves are settings of the app (the manifest has them), which no bot token can read.
 */
export async function checkSlackEvents(probe: SlackEventsProbe, fetchFn: typeof fetch, nowMs: number): Promise<Check> {
  const id = 'slack.events';
  const title = 'App Home events URL answers Slack';
  const settings = `in the app's settings: App Home → Home Tab on; Event Subscriptions → Request URL ${probe.url} and the bot events \`bridge slack manifest\` lists (or paste it again)`;
  const challenge = `doctor-${nowMs}`;
  const body = JSON.stringify({ type: 'url_verification', token: 'doctor', challenge });
  try {
    const response = await fetchFn(probe.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signSlackRequest(probe.signingSecret, Math.floor(nowMs / 1000), body) },
      body,
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.ok && text.includes(challenge)) return ok(id, title, `${probe.url} echoes the challenge; ${settings}`);
    const why = response.status === 401 ? 'the Slack signing secret does not verify there' : `answered ${response.status}`;
    return fail(
      id,
      title,
      `${probe.url} ${why}`,
      response.status === 404 ? `deploy the stack with the ${HTTP_PATHS.slackEvents} route, then ${settings}` : settings,
    );
  } catch (err) {
    return fail(id, title, `cannot reach ${probe.url}: ${err instanceof Error ? err.message : String(err)}`, settings);
  }
}

export async function checkSlack(token: string, slackApiUrl: string | undefined, channels: string[]): Promise<Check[]> {
  const checks: Check[] = [];
  const auth = await checkSlackAuth(token, slackApiUrl, { timeoutMs: HTTP_TIMEOUT_MS });
  if (!auth.ok) {
    checks.push(fail('slack.auth', 'Slack token valid', `auth.test failed: ${auth.error}`, auth.fix));
    checks.push(skip('slack.channels', 'bot in channels', 'needs a valid Slack token'));
    return checks;
  }
  checks.push(ok('slack.auth', 'Slack token valid', `workspace ${auth.team} as ${auth.user}`));
  if (channels.length === 0) {
    checks.push(
      warn(
        'slack.channels',
        'bot in channels',
        'no channel configured',
        'set SlackDefaultChannel (stack config) so digests have somewhere to go',
      ),
    );
    return checks;
  }
  for (const channel of channels) {
    const title = `bot in ${channel}`;
    const member = await isBotInChannel(token, channel, slackApiUrl, { timeoutMs: HTTP_TIMEOUT_MS });
    if (!member.ok) checks.push(fail(`slack.channel:${channel}`, title, `conversations.info failed: ${member.error}`, member.fix));
    else if (!member.isMember)
      checks.push(fail(`slack.channel:${channel}`, title, 'the bot is not a member', fixForSlackError('not_in_channel', { channel })));
    else checks.push(ok(`slack.channel:${channel}`, title, 'member'));
  }
  return checks;
}

/** The Slack ids the stage serves (its stage file's `slackTeamIds`, `slackEnterpriseId`, `slackAppId`, as deployed). */
export interface StageSlackIds {
  teamIds: readonly string[];
  enterpriseId: string | undefined;
  appId: string | undefined;
}

/** What the bot token says about its workspace and app (the app id unknown when bots.info could not say). */
export interface TokenSlackIds {
  teamId: string;
  enterpriseId: string | undefined;
  appId: string | undefined;
  /** Why the app id is unknown (e.g. bots.info's missing_scope). */
  appIdProblem?: string | undefined;
}

/** Where the stage's ids are fixed: the file, and the deploy that applies it. */
export interface StageFileHint {
  file: string;
  deploy: string;
}

/**
 * The stage serves the token's workspace (or its whole Grid org) and app; otherwise the exact stage-file
 * lines to add or change. Until they are set the Slack app answers every request 403.
 */
export function checkWorkspaceIds(stage: StageSlackIds, token: TokenSlackIds, where: StageFileHint): Check {
  const id = 'slack.workspace';
  const title = 'Slack workspace and app allowed';
  const lines: string[] = [];
  const orgWide = stage.teamIds.length === 0 && stage.enterpriseId !== undefined && stage.enterpriseId === token.enterpriseId;
  if (!orgWide && !stage.teamIds.includes(token.teamId)) lines.push(`"slackTeamIds": ${JSON.stringify([...stage.teamIds, token.teamId])}`);
  if (stage.enterpriseId !== token.enterpriseId && (stage.enterpriseId !== undefined || stage.teamIds.length === 0)) {
    lines.push(
      token.enterpriseId === undefined
        ? 'no "slackEnterpriseId" (the workspace is in no Grid org)'
        : `"slackEnterpriseId": "${token.enterpriseId}"`,
    );
  }
  if (token.appId !== undefined && stage.appId !== token.appId) lines.push(`"slackAppId": "${token.appId}"`);
  if (token.appId === undefined && stage.appId === undefined)
    lines.push(`"slackAppId": "A…" (the App ID on the app's Basic Information page; bots.info: ${token.appIdProblem ?? 'no answer'})`);
  if (lines.length > 0) {
    const fix = `in ${where.file} set ${lines.join(', ')}; then ${where.deploy}`;
    return fail(
      id,
      title,
      `the stage does not name the token's workspace ${token.teamId}${token.appId !== undefined ? ` and app ${token.appId}` : ''}: Slack requests are answered 403`,
      fix,
    );
  }
  const app = token.appId ?? stage.appId ?? '';
  const detail = `${orgWide ? `every workspace of ${stage.enterpriseId ?? ''}` : token.teamId}, app ${app}`;
  return token.appId === undefined
    ? warn(
        id,
        title,
        `${detail} (not confirmed: bots.info ${token.appIdProblem ?? 'did not answer'})`,
        'add the users:read scope to confirm the app id, or compare it with Basic Information',
      )
    : ok(id, title, detail);
}

/** Reads the token's ids (auth.test, bots.info) and compares them with the stage's. */
export async function checkSlackWorkspace(
  token: string,
  slackApiUrl: string | undefined,
  stage: StageSlackIds,
  where: StageFileHint,
): Promise<Check> {
  const auth = await checkSlackAuth(token, slackApiUrl, { timeoutMs: HTTP_TIMEOUT_MS });
  if (!auth.ok) return skip('slack.workspace', 'Slack workspace and app allowed', 'needs a valid Slack token');
  const app = auth.botId === undefined ? undefined : await botAppId(token, auth.botId, slackApiUrl, { timeoutMs: HTTP_TIMEOUT_MS });
  return checkWorkspaceIds(
    stage,
    {
      teamId: auth.teamId,
      enterpriseId: auth.enterpriseId,
      appId: app?.ok === true ? app.appId : undefined,
      appIdProblem: app === undefined ? 'no bot id' : app.ok ? undefined : app.error,
    },
    where,
  );
}

export async function checkDlq(sqs: SQSClient, dlqUrl: string, endpoint: string | undefined, hint: Hint = plainHint): Promise<Check> {
  const id = 'dlq';
  const title = 'DLQ empty';
  try {
    const depth = await queueDepth(sqs, { url: dlqUrl, endpoint });
    const total = depth.visible + depth.inFlight + depth.delayed;
    if (total === 0) return ok(id, title, 'no message');
    return fail(
      id,
      title,
      `${total} message(s) waiting (${depth.visible} visible, ${depth.inFlight} in flight)`,
      `look with \`${hint('dlq peek')}\`, fix the cause (see the digest logs), then \`${hint('dlq replay')}\``,
    );
  } catch (err) {
    const { detail, fix } = errorText(err);
    return fail(id, title, detail, fix);
  }
}

/** Newest `accepted_at` among the `delivery#` records (one Scan, paginated, projection only). */
export async function lastAcceptedAt(
  dynamo: DynamoDBClient,
  tableName: string,
  onPage?: (pages: number) => void,
): Promise<string | undefined> {
  let latest: string | undefined;
  let latestMs = Number.NEGATIVE_INFINITY;
  let startKey: Record<string, AttributeValue> | undefined;
  for (let page = 0; page < MAX_SCAN_PAGES; page++) {
    const result = await dynamo.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(#pk, :prefix) AND attribute_exists(#accepted)',
        ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#accepted': TABLE.acceptedAtAttribute },
        ExpressionAttributeValues: { ':prefix': { S: TABLE.prefixes.delivery } },
        ProjectionExpression: '#pk, #accepted',
        ...(startKey !== undefined ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    for (const item of result.Items ?? []) {
      const value = item[TABLE.acceptedAtAttribute]?.S;
      const ms = value === undefined ? Number.NaN : Date.parse(value);
      if (!Number.isNaN(ms) && ms > latestMs) {
        latestMs = ms;
        latest = value;
      }
    }
    onPage?.(page + 1);
    startKey = result.LastEvaluatedKey;
    if (startKey === undefined || Object.keys(startKey).length === 0) break;
  }
  return latest;
}

export async function checkLastDelivery(
  dynamo: DynamoDBClient,
  tableName: string,
  silenceHours: number,
  now: number,
  endpoint: string | undefined,
  onPage?: (pages: number) => void,
  hint: Hint = plainHint,
): Promise<Check> {
  const id = 'last-delivery';
  const title = 'recent delivery';
  try {
    const latest = await aws({ service: 'DynamoDB', resource: tableName, ...(endpoint !== undefined ? { endpoint } : {}) }, () =>
      lastAcceptedAt(dynamo, tableName, onPage),
    );
    if (latest === undefined) {
      return warn(
        id,
        title,
        'no accepted delivery on record (records expire after DEDUP_RETENTION_DAYS, default 3)',
        `check the webhook is registered with the service and active; send one with \`${hint('trigger run.completed')}\``,
      );
    }
    const ageMs = now - Date.parse(latest);
    const detail = `last accepted ${formatAge(ageMs)} ago (${latest})`;
    if (ageMs > silenceHours * 3_600_000) {
      return warn(
        id,
        title,
        `${detail}: older than ${silenceHours} h`,
        'check the webhook is still active with the service (it switches off after 15 consecutive failures) and the ingest logs',
      );
    }
    return ok(id, title, detail);
  } catch (err) {
    const { detail, fix } = errorText(err);
    return fail(id, title, detail, fix);
  }
}

// ---------------------------------------------------------------------------------------------
// Command
// ---------------------------------------------------------------------------------------------

export const DOCTOR: LeafDef = {
  summary: 'checks the deployment end to end',
  description: `Checks, each with its fix when it fails:
  the stack exists · each secret is set (not PLACEHOLDER; signing secrets a JSON array; the Slack
  signing secret as Slack shows it, or a JSON array of them) ·
  the read-API key works (GET /v1/projects) · the Slack token is valid (auth.test) · the bot is in
  every configured channel · the DLQ is empty · the last accepted delivery is recent.
With --connection ID, that connection's checks instead: it is active, its secret is well formed, its
read-API key works on its base URL, its webhook accepts a probe signed with its secret (an event type
the bridge acknowledges and ignores), and each Slack workspace it is linked to has an installation.
Exit 1 when any check fails (an old last delivery is a warning).`,
  options: {
    'silence-hours': { value: 'H', help: `warn when the last accepted delivery is older (default ${DEFAULT_SILENCE_HOURS})` },
    'slack-api-url': { value: 'URL', help: 'Slack Web API base (default https://slack.com/api/; SLACK_API_URL)' },
    'read-api-url': { value: 'URL', help: 'instead of the stack output ReadApiBaseUrl' },
    connection: {
      value: 'ID',
      help: 'checks that connection instead: its secret, its read-API key, its webhook (a signed probe it ignores), its Slack installs',
    },
    ...AWS_OPTIONS,
  },
  run: doctorCommand,
};

function channelsFrom(defaultChannel: string | undefined, projectChannels: Record<string, string>): string[] {
  const all = [defaultChannel, ...Object.values(projectChannels)]
    .filter((c): c is string => c !== undefined && c.trim() !== '')
    .map((c) => c.trim());
  return [...new Set(all)];
}

function parseChannelMap(text: string | undefined): Record<string, string> | string {
  if (text === undefined || text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'SlackProjectChannels is not a JSON object';
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(parsed)) if (typeof value === 'string') out[key] = value;
    return out;
  } catch {
    return 'SlackProjectChannels is not JSON';
  }
}

interface Plan {
  ready: true;
  checks: Check[];
  secrets: SecretValues;
  readApiBaseUrl: string | undefined;
  channels: string[];
  dlqUrl: string | undefined;
  tableName: string | undefined;
  /** The Slack ids the stage serves and where to fix them; undefined: not checked (a local stack on a real Slack). */
  slackIds: { stage: StageSlackIds; where: StageFileHint } | undefined;
  /** The events URL and the Slack signing secret to probe it with; undefined: not known (the check says why). */
  slackEvents: SlackEventsProbe | string;
}

/**
 * The local stack's secrets as its functions read them: from its Secrets Manager server, by the ids in
 * the ready file (the ready file's own copies are what the stack started with, not what it uses now).
 * Undefined for a local stack without that server.
 */
async function localLiveSecrets(ctx: CommandContext, local: LocalReady): Promise<LiveSecrets | undefined> {
  const endpoint = local.secretsManagerEndpoint;
  if (endpoint === undefined) return undefined;
  const source = (id: string | undefined, field: string): SecretSource =>
    id !== undefined ? { id } : fail(`ready.${field}`, field, `no ${field} in the ready file`, 'restart `npm start`');
  const sm = secretsClient(ctx.settings);
  try {
    return await checkLiveSecrets(
      ctx,
      sm,
      endpoint,
      {
        readApiKey: source(local.readApiKeySecretId, 'readApiKeySecretId'),
        slackToken: source(local.slackTokenSecretId, 'slackTokenSecretId'),
        signing: source(local.signingSecretsSecretId, 'signingSecretsSecretId'),
      },
      'local Secrets Manager',
    );
  } finally {
    sm.destroy();
  }
}

/** A local stack without a Secrets Manager server: its functions use the values it was started with, the ready file's. */
function readyFileSecrets(ctx: CommandContext, local: LocalReady, checks: Check[]): SecretValues {
  const signing = local.signingSecrets.length > 0 ? local.signingSecrets : undefined;
  checks.push(
    signing !== undefined
      ? ok('secret.signing', 'signing secrets', `${signing.length} secret(s) in the ready file`)
      : fail('secret.signing', 'signing secrets', 'none in the ready file', 'restart `npm start`'),
  );
  checks.push(
    local.apiKey !== undefined
      ? ok('secret.read-api-key', 'read-API key', 'set (ready file)')
      : fail('secret.read-api-key', 'read-API key', 'no apiKey in the ready file', 'restart `npm start`'),
  );
  const slackToken =
    local.slackToken ?? (local.slackApiUrl === undefined ? ctx.env['SLACK_BOT_TOKEN']?.trim() || undefined : LOCAL_SLACK_TOKEN);
  return { readApiKey: local.apiKey, slackToken, signingSecrets: signing };
}

/** Where a secret the functions read lives (its id), or the check saying why that is not known. */
type SecretSource = { id: string } | Check;

interface LiveSecrets {
  checks: Check[];
  secrets: SecretValues;
}

/** One secret's text, or the failed check (under the secret's own id and title) when it cannot be read. */
async function readChecked(
  sm: SecretsManagerClient,
  source: SecretSource,
  endpoint: string | undefined,
  id: string,
  title: string,
): Promise<{ text: string | undefined } | Check> {
  if ('status' in source) return { ...source, id, title };
  try {
    return { text: await readSecret(sm, { id: source.id, endpoint }) };
  } catch (err) {
    const { detail, fix } = errorText(err);
    return fail(id, title, detail, fix);
  }
}

/** The three secrets the functions read, read from where they read them, each checked. */
async function checkLiveSecrets(
  ctx: CommandContext,
  sm: SecretsManagerClient,
  endpoint: string | undefined,
  sources: Record<'readApiKey' | 'slackToken' | 'signing', SecretSource>,
  where?: string,
): Promise<LiveSecrets> {
  const checks: Check[] = [];
  const secrets: SecretValues = { readApiKey: undefined, slackToken: undefined, signingSecrets: undefined };
  const from = (check: Check): Check =>
    where !== undefined && check.status === 'ok' ? { ...check, detail: `${check.detail} (${where})` } : check;
  const singles: ['readApiKey' | 'slackToken', string, string, string][] = [
    ['readApiKey', 'secret.read-api-key', 'read-API key', ctx.hint('secrets set read-api-key --value-stdin')],
    ['slackToken', 'secret.slack-token', 'Slack token', `${ctx.hint('secrets set slack-token --value-stdin')}   (the bot token, xoxb-…)`],
  ];
  for (const [key, id, title, setCommand] of singles) {
    const got = await readChecked(sm, sources[key], endpoint, id, title);
    if ('status' in got) {
      checks.push(got);
      continue;
    }
    const { check, value } = checkSingleSecret(id, title, got.text, setCommand);
    checks.push(from(check));
    secrets[key] = value;
  }
  const signing = await readChecked(sm, sources.signing, endpoint, 'secret.signing', 'signing secrets');
  if ('status' in signing) checks.push(signing);
  else {
    const { check, value } = checkSigningSecret(signing.text, ctx.hint);
    checks.push(from(check));
    secrets.signingSecrets = value;
  }
  return { checks, secrets };
}

async function planLocal(ctx: CommandContext): Promise<Plan> {
  const local = ctx.local;
  if (local === undefined) throw new Error('unreachable: planLocal without --local');
  const checks: Check[] = [ok('stack', 'local stack', `ready file ${local.path}`)];
  // With the local Slack server (slackApiUrl set) the stack uses its fixed local token; with a real
  // Slack (slackApiUrl null) the token the stack was started with (SLACK_BOT_TOKEN).
  const realSlack = local.slackApiUrl === undefined;
  const live = await localLiveSecrets(ctx, local);
  const secrets: SecretValues = live?.secrets ?? readyFileSecrets(ctx, local, checks);
  checks.push(...(live?.checks ?? []));
  const slackToken = secrets.slackToken;
  if (live === undefined) {
    if (slackToken === undefined)
      checks.push(
        fail(
          'secret.slack-token',
          'Slack token',
          'the local stack posts to a real Slack and no token is known',
          'set SLACK_BOT_TOKEN to the bot token the local stack was started with',
        ),
      );
    else checks.push(ok('secret.slack-token', 'Slack token', realSlack ? 'set (SLACK_BOT_TOKEN)' : 'local Slack server token'));
  }
  const localSlack = await localSlackFields(local);
  const slackSigning = localSlack.signingSecret;
  checks.push(
    slackSigning !== undefined
      ? ok('secret.slack-signing', 'Slack signing secret', 'set (ready file)')
      : fail('secret.slack-signing', 'Slack signing secret', 'no slackSigningSecret in the ready file', 'restart `npm start`'),
  );
  return {
    ready: true,
    checks,
    secrets,
    readApiBaseUrl: local.simulatorUrl,
    channels: channelsFrom(local.slackDefaultChannel, local.slackProjectChannels),
    dlqUrl: local.dlqUrl,
    tableName: local.tableName,
    slackEvents:
      slackSigning === undefined
        ? 'no slackSigningSecret in the ready file'
        : { url: `${localSlack.baseUrl}${HTTP_PATHS.slackEvents}`, signingSecret: slackSigning },
    // The local stack serves only its local Slack's workspace and app (local/stack.ts).
    slackIds: realSlack
      ? undefined
      : {
          stage: { teamIds: [LOCAL_SLACK_TEAM_ID], enterpriseId: undefined, appId: LOCAL_SLACK_APP_ID },
          where: { file: 'local/stack.ts', deploy: 'restart `npm start`' },
        },
  };
}

async function planStack(ctx: CommandContext): Promise<Plan | { ready: false; checks: Check[] }> {
  const checks: Check[] = [];
  let outputs: Record<string, string>;
  try {
    const info = await ctx.stack.load();
    outputs = info.outputs;
    const status = info.status ?? 'unknown status';
    if (/FAILED|ROLLBACK/.test(status) && status !== 'UPDATE_ROLLBACK_COMPLETE') {
      checks.push(fail('stack', `stack ${ctx.stack.stackName}`, status, 'see the stack events in the CloudFormation console and redeploy'));
    } else {
      checks.push(ok('stack', `stack ${ctx.stack.stackName}`, status));
    }
  } catch (err) {
    // No stack to check at all: the refusal says how to name one.
    if (err instanceof UsageError) throw err;
    const { detail, fix } = errorText(err);
    checks.push(fail('stack', `stack ${ctx.stack.stackName}`, detail, fix));
    return { ready: false, checks };
  }

  const sm = secretsClient(ctx.settings);
  const endpoint = endpointFor(ctx.settings, 'secretsmanager');
  const source = (output: string): SecretSource => {
    const id = outputs[output];
    return id === undefined || id === '' ? fail(`output.${output}`, output, `stack has no output ${output}`, 'redeploy the stack') : { id };
  };
  let secrets: SecretValues;
  let slackEvents: SlackEventsProbe | string = 'needs the Slack signing secret';
  try {
    const live = await checkLiveSecrets(ctx, sm, endpoint, {
      readApiKey: source(STACK_OUTPUTS.readApiKeySecretArn),
      slackToken: source(STACK_OUTPUTS.slackTokenSecretArn),
      signing: source(STACK_OUTPUTS.signingSecretsSecretArn),
    });
    checks.push(...live.checks);
    secrets = live.secrets;
    const slackSigning = await readChecked(
      sm,
      source(STACK_OUTPUTS.slackSigningSecretSecretArn),
      endpoint,
      'secret.slack-signing',
      'Slack signing secret',
    );
    const signingCheck = 'status' in slackSigning ? slackSigning : checkSlackSigningSecret(slackSigning.text, ctx.hint);
    checks.push(signingCheck);
    const eventsUrl = outputs[STACK_OUTPUTS.slackEventsUrl];
    if (eventsUrl === undefined || eventsUrl === '')
      slackEvents = `the stack has no output ${STACK_OUTPUTS.slackEventsUrl} (deploy this version)`;
    else if (signingCheck.status === 'ok' && !('status' in slackSigning))
      slackEvents = { url: eventsUrl, signingSecret: parseSlackSigningSecretValue(slackSigning.text?.trim() ?? '')[0] ?? '' };
  } finally {
    sm.destroy();
  }

  const channelMap = parseChannelMap(outputs[STACK_OUTPUTS.slackProjectChannels]);
  if (typeof channelMap === 'string')
    checks.push(fail('output.SlackProjectChannels', 'project channels', channelMap, 'fix the stack config and redeploy'));
  return {
    ready: true,
    checks,
    secrets,
    readApiBaseUrl: outputs[STACK_OUTPUTS.readApiBaseUrl],
    channels: channelsFrom(outputs[STACK_OUTPUTS.slackDefaultChannel], typeof channelMap === 'string' ? {} : channelMap),
    dlqUrl: outputs[STACK_OUTPUTS.dlqUrl],
    tableName: outputs[STACK_OUTPUTS.tableName],
    slackIds: { stage: stageSlackIds(outputs), where: stageFileHint(ctx.stack.stackName) },
    slackEvents,
  };
}

/** The stage's Slack ids from the stack outputs (absent when the stage file leaves them unset). */
function stageSlackIds(outputs: Record<string, string>): StageSlackIds {
  const value = (name: string) => (outputs[name]?.trim() ? outputs[name].trim() : undefined);
  const teams = value(STACK_OUTPUTS.slackTeamIds);
  return {
    teamIds:
      teams === undefined
        ? []
        : teams
            .split(',')
            .map((t) => t.trim())
            .filter((t) => t !== ''),
    enterpriseId: value(STACK_OUTPUTS.slackEnterpriseId),
    appId: value(STACK_OUTPUTS.slackAppId),
  };
}

function stageFileHint(stackName: string): StageFileHint {
  const stage = /^VisibilitySlackBridge-(.+)$/.exec(stackName)?.[1] ?? '<stage>';
  return { file: `config/${stage}.json`, deploy: `npx cdk deploy -c stage=${stage}` };
}

async function doctorCommand(parsed: Parsed, io: CliIo): Promise<CommandResult> {
  const silenceHours = positiveNumber(parsed, 'silence-hours') ?? DEFAULT_SILENCE_HOURS;
  const connection = str(parsed, 'connection');
  if (connection !== undefined) return doctorConnection(parsed, io, connection);
  const ctx = await buildContext(parsed, io);
  const out = ctx.out;
  const progress = out.progress();
  const say = (check: Check): void => {
    progress.done();
    sayCheck(out, check);
  };

  progress.update(ctx.local !== undefined ? 'reading the ready file…' : 'reading the stack…');
  const planned = ctx.local !== undefined ? await planLocal(ctx) : await planStack(ctx);
  const checks: Check[] = [...planned.checks];
  planned.checks.forEach(say);
  const add = (check: Check): void => {
    checks.push(check);
    say(check);
  };

  if (!planned.ready) {
    for (const title of ['secrets set', 'read-API key works', 'Slack token valid', 'DLQ empty', 'recent delivery'])
      add(skip(title, title, 'needs the stack outputs'));
  } else {
    const plan = planned;
    const slackApiUrl = str(parsed, 'slack-api-url') ?? ctx.local?.slackApiUrl ?? (ctx.env['SLACK_API_URL']?.trim() || undefined);
    const readApiBaseUrl = str(parsed, 'read-api-url') ?? plan.readApiBaseUrl;

    progress.update('checking the read API…');
    if (plan.secrets.readApiKey === undefined) add(skip('read-api', 'read-API key works', 'needs the read-API key'));
    else if (readApiBaseUrl === undefined)
      add(
        fail(
          'read-api',
          'read-API key works',
          `no read-API base URL (stack output ${STACK_OUTPUTS.readApiBaseUrl}, or simulatorUrl in the ready file)`,
          'pass --read-api-url or redeploy the stack with the output',
        ),
      );
    else add(await checkReadApi(readApiBaseUrl, plan.secrets.readApiKey, ctx.fetch, ctx.hint));

    progress.update('checking Slack…');
    if (plan.secrets.slackToken === undefined) {
      add(skip('slack.auth', 'Slack token valid', 'needs the Slack token'));
      add(skip('slack.channels', 'bot in channels', 'needs the Slack token'));
    } else if (ctx.local !== undefined && plan.channels.length === 0) {
      for (const check of await checkSlack(plan.secrets.slackToken, slackApiUrl, [])) {
        add(check.id === 'slack.channels' ? skip('slack.channels', 'bot in channels', 'the ready file names no channel') : check);
      }
    } else {
      for (const check of await checkSlack(plan.secrets.slackToken, slackApiUrl, plan.channels)) add(check);
    }
    if (plan.secrets.slackToken !== undefined && plan.slackIds !== undefined)
      add(await checkSlackWorkspace(plan.secrets.slackToken, slackApiUrl, plan.slackIds.stage, plan.slackIds.where));

    progress.update('checking the App Home events URL…');
    add(
      typeof plan.slackEvents === 'string'
        ? skip('slack.events', 'App Home events URL answers Slack', plan.slackEvents)
        : await checkSlackEvents(plan.slackEvents, ctx.fetch, ctx.now()),
    );

    progress.update('checking the DLQ…');
    if (plan.dlqUrl === undefined)
      add(
        fail(
          'dlq',
          'DLQ empty',
          `no DLQ URL (stack output ${STACK_OUTPUTS.dlqUrl}, or dlqUrl in the ready file)`,
          ctx.local !== undefined ? 'restart `npm start`' : 'redeploy the stack',
        ),
      );
    else {
      const sqs = sqsClient(ctx.settings);
      try {
        add(await checkDlq(sqs, plan.dlqUrl, endpointFor(ctx.settings, 'sqs'), ctx.hint));
      } finally {
        sqs.destroy();
      }
    }

    progress.update('scanning delivery records…');
    if (plan.tableName === undefined)
      add(
        fail(
          'last-delivery',
          'recent delivery',
          `no table name (stack output ${STACK_OUTPUTS.tableName}, or tableName in the ready file)`,
          ctx.local !== undefined ? 'restart `npm start`' : 'redeploy the stack',
        ),
      );
    else {
      const dynamo = dynamoClient(ctx.settings);
      try {
        add(
          await checkLastDelivery(
            dynamo,
            plan.tableName,
            silenceHours,
            ctx.now(),
            endpointFor(ctx.settings, 'dynamodb'),
            (pages) => progress.update(`scanning delivery records… page ${pages}`),
            ctx.hint,
          ),
        );
      } finally {
        dynamo.destroy();
      }
    }
  }
  progress.done();
  return doctorResult(out, checks);
}
