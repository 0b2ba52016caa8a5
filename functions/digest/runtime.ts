/**
 * Composition root of the digest function: configuration read once at cold start, clients created
 * once per container, secrets re-read through a cache so a rotated key or token takes effect
 * without a redeploy.
 */
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { ConfigError, channelId, channelIdMap, integer, optionalString, requiredString, url, type Env } from '../../shared/config-env';
import {
  DIGEST_DEFAULTS,
  DIGEST_MODES,
  ENV,
  SLACK_APP_DEFAULTS,
  type DigestMode,
  type EnvName,
  type PostRecovery,
} from '../../shared/contracts';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoClient, createSqsClient, readAwsEndpoints, type AwsEndpoints } from '../../shared/adapters/aws-clients';
import { DynamoDigestStore, DIGEST_RETENTION_SECONDS } from '../../shared/adapters/dynamo-digest-store';
import { DynamoPostedLedger } from '../../shared/adapters/dynamo-posted-ledger';
import { readPostRecovery, withPostedLedger } from '../../shared/digest/posted-ledger';
import { SqsMessageVisibility } from '../../shared/adapters/sqs-message-visibility';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DynamoChannelPacer } from '../../shared/adapters/dynamo-channel-pacer';
import { ResponseUrlResponder, responseOriginsFor } from '../../shared/adapters/slack-response-url';
import { SqsDeadLetters } from '../../shared/adapters/sqs-dead-letters';
import { createSecretsProvider, secretsManagerSecret } from '../../shared/adapters/secrets-manager';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import { DynamoWeeklyStore } from '../../shared/adapters/dynamo-weekly-store';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { readStageTimeZone } from '../../shared/weekly/config';
import { createSlackFileUploader } from '../../shared/adapters/slack-files';
import { loadChartRenderer } from '../../shared/charts/load';
import type { ChartDeps } from '../../shared/digest/chart-step';
import { SlackWorkspace } from '../../shared/adapters/slack-workspace';
import { slackAccessPolicyFromEnv, type SlackAccessPolicy } from '../../shared/slack-app/policy';
import { headerValueProblem, readHeaderSecretValue, staticSecret, unusableSecret } from '../../shared/secrets';
import { STACK_TENANT, type Tenant } from '../../shared/tenancy';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { parseConnectionSecret, type Connection } from '../../shared/connections/model';
import { connectionDigests, type InstallationSlack, type SlackClients } from '../../shared/worker/connections';
import { DynamoInstallationStore, DynamoRefreshLease } from '../../shared/adapters/dynamo-installation-store';
import { createTokenRefresher } from '../../shared/adapters/slack-token-refresher';
import type { TokenRefresher } from '../../shared/installations/ports';
import { NeedsOperatorFix } from '../../shared/errors';
import {
  systemClock,
  type Clock,
  type Log,
  type MessageVisibility,
  type Metrics,
  type SecretSource,
  type SlackPoster,
} from '../../shared/ports';
import { handleSqsBatch } from '../../shared/worker/sqs';
import { COMMAND_QUEUE, DIGEST_QUEUE } from '../../shared/worker/queues';
import { commandQueueDeps, digestQueueDeps, type WorkerWiring } from '../../shared/worker/wiring';
import { sleep } from '../../shared/util';
import { dashboardUrlTemplateProblem } from '../../shared/digest/links';
import { parseNoiseMinimums, type NoiseMinimums } from '../../shared/digest/noise';
import { DIGEST_OPTION_DEFAULTS } from '../../shared/digest/deps';
import { readSubscriptionDefaultMode } from '../../shared/slack-app/default-mode';
import { actionValueCodecFrom, readActionSigningKeyRef, type ActionSigningKeyRef } from '../../shared/buttons/value';

export interface DigestConfig {
  tableName: string;
  queueUrl: string;
  /** Deferred slash commands' queue (a second event source); unset where commands share the digest queue. */
  commandsQueueUrl: string | undefined;
  dlqUrl: string;
  readApiBaseUrl: string;
  readApiKey: { secretArn: string } | { value: string };
  slackToken: { secretArn: string } | { value: string };
  slackApiUrl: string | undefined;
  defaultChannel: string;
  projectChannels: Record<string, string>;
  visibilityRange: string;
  gapsPageSize: number;
  secretsCacheSeconds: number;
  leaseSeconds: number;
  recordBudgetSeconds: number;
  paceIntervalMs: number;
  dashboardUrlTemplate: string | undefined;
  digestMode: DigestMode;
  /** Who may change what through the Slack app (deferred `subscribe` checks where). */
  slackAccess: SlackAccessPolicy;
  /** The queues' maxReceiveCount, when the stack says it (the last attempt's log line says "moving to the DLQ"). */
  maxReceiveCount: number | undefined;
  /** The key that signs the digest's button values; none = digests without Mute / Only changes buttons. */
  actionSigningKey: ActionSigningKeyRef | undefined;
  /** The mode `/visibility subscribe` gives a new subscription (stage `subscriptionDefaultMode`). */
  subscriptionDefaultMode: DigestMode;
  /** Per-label minimum changes (stage `noiseMinimums`, JSON in NOISE_MINIMUMS); empty = the defaults. */
  noiseMinimums: NoiseMinimums;
  /** Trend charts in the digest threads; off: the chart code is never loaded. */
  chartsEnabled: boolean;
  /** How a retry learns an earlier attempt's posts (shared/digest/posted-ledger.ts). */
  postRecovery: PostRecovery;
  /** The stage's zone: the weekly reports' default schedule is Monday 09:00 there. */
  timeZone: string;
  /**
   * The app's client id and secret (stage `slackClientId`): refresh the rotating bot tokens of the Slack
   * installations connections are linked to. None: only tokens that do not expire can be used.
   */
  slackClient: { id: string; secret: SecretRef } | undefined;
  aws: AwsEndpoints;
}

function secretRef(env: Env, arnName: EnvName, valueName: EnvName): { secretArn: string } | { value: string } {
  const secretArn = optionalString(env, arnName);
  if (secretArn) return { secretArn };
  const value = optionalString(env, valueName);
  if (value) return { value };
  throw new ConfigError(arnName, `is not set (or ${valueName} for local runs)`);
}

/**
 * A posting lease must outlast one invocation (the stack sets 120 s for its 60 s timeout). The
 * function can't read its own timeout, so only a floor is enforced; the local stack runs shorter.
 */
const MIN_DIGEST_LEASE_SECONDS = 10;

function digestLeaseSeconds(env: Env): number {
  const name = ENV.digestLeaseSeconds;
  try {
    return integer(env, name, DIGEST_DEFAULTS.leaseSeconds, MIN_DIGEST_LEASE_SECONDS, 3600);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Say why: a lease that ends while an invocation still runs lets a retry post the digest twice.
    throw new ConfigError(
      name,
      `must be a whole number of seconds from ${MIN_DIGEST_LEASE_SECONDS} to 3600, longer than the digest function's timeout; got "${env[name]?.trim() ?? ''}"`,
    );
  }
}

export function readDigestConfig(env: Env): DigestConfig {
  return {
    tableName: requiredString(env, ENV.tableName),
    queueUrl: requiredString(env, ENV.queueUrl),
    commandsQueueUrl: optionalString(env, ENV.commandsQueueUrl),
    dlqUrl: requiredString(env, ENV.dlqUrl),
    readApiBaseUrl: url(env, ENV.readApiBaseUrl),
    readApiKey: secretRef(env, ENV.readApiKeySecretArn, ENV.readApiKey),
    slackToken: secretRef(env, ENV.slackBotTokenSecretArn, ENV.slackBotToken),
    slackApiUrl: optionalString(env, ENV.slackApiUrl),
    defaultChannel: channelId(env, ENV.slackDefaultChannel, 'slackDefaultChannel'),
    projectChannels: channelIdMap(env, ENV.slackProjectChannels, 'projectChannels'),
    visibilityRange: optionalString(env, ENV.visibilityRange) ?? DIGEST_DEFAULTS.visibilityRange,
    gapsPageSize: integer(env, ENV.gapsPageSize, DIGEST_DEFAULTS.gapsPageSize, 1, 1000),
    secretsCacheSeconds: integer(env, ENV.secretsCacheSeconds, DIGEST_DEFAULTS.secretsCacheSeconds, 0, 3600),
    leaseSeconds: digestLeaseSeconds(env),
    recordBudgetSeconds: integer(env, ENV.digestRecordBudgetSeconds, DIGEST_DEFAULTS.recordBudgetSeconds, 0, 900),
    paceIntervalMs: integer(env, ENV.slackPaceIntervalMs, SLACK_APP_DEFAULTS.paceIntervalMs, 0, 60_000),
    dashboardUrlTemplate: dashboardUrlTemplate(env),
    digestMode: digestMode(env),
    slackAccess: slackAccessPolicyFromEnv(env),
    maxReceiveCount: optionalString(env, ENV.maxReceiveCount) === undefined ? undefined : integer(env, ENV.maxReceiveCount, 1, 1, 1000),
    actionSigningKey: readActionSigningKeyRef(env),
    subscriptionDefaultMode: readSubscriptionDefaultMode(env),
    noiseMinimums: parseNoiseMinimums(optionalString(env, ENV.noiseMinimums), ENV.noiseMinimums, 'the stage file\'s "noiseMinimums"'),
    chartsEnabled: chartsEnabled(env),
    postRecovery: readPostRecovery(env),
    timeZone: readStageTimeZone(env),
    slackClient: slackClientOf(env),
    aws: readAwsEndpoints(env),
  };
}

function slackClientOf(env: Env): DigestConfig['slackClient'] {
  const id = optionalString(env, ENV.slackClientId);
  return id === undefined ? undefined : { id, secret: secretRef(env, ENV.slackClientSecretSecretArn, ENV.slackClientSecret) };
}

/** Off unless the stack says `true` (it always sets it, from the stage's `chartsEnabled`). */
function chartsEnabled(env: Env): boolean {
  const value = optionalString(env, ENV.chartsEnabled);
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new ConfigError(ENV.chartsEnabled, `must be "true" or "false", got "${value}"`);
}

function dashboardUrlTemplate(env: Env): string | undefined {
  const template = optionalString(env, ENV.dashboardUrlTemplate);
  const problem = template === undefined ? null : dashboardUrlTemplateProblem(template);
  if (problem !== null)
    throw new ConfigError(
      ENV.dashboardUrlTemplate,
      `is not usable: ${problem} (set dashboardUrlTemplate in the stage config, or --dashboard-url locally)`,
    );
  return template;
}

function digestMode(env: Env): DigestMode {
  const mode = optionalString(env, ENV.digestMode) ?? DIGEST_DEFAULTS.mode;
  const known = DIGEST_MODES.find((m) => m === mode);
  if (known === undefined) throw new ConfigError(ENV.digestMode, `must be "full" or "changes", got "${mode}"`);
  return known;
}

/** Time kept back from the Lambda's remaining time so the function returns its batch response. */
const DEADLINE_MARGIN_MS = 3000;

export interface DigestRuntime {
  handle(records: readonly SQSRecord[], remainingMs: number): Promise<SQSBatchResponse>;
}

/** SDK bounds for the digest's DynamoDB and SQS calls (its function timeout is 60 s). */
const DIGEST_CLIENT_BOUNDS = { requestTimeoutMs: 3000, connectionTimeoutMs: 1000, maxAttempts: 3 } as const;

type SecretRef = { secretArn: string } | { value: string };

/** The container's Secrets Manager provider (an SDK client of its own): one for every secret, created at its first use. */
type SecretsProviderOnce = () => ReturnType<typeof createSecretsProvider>;

function secretsProviderOnce(): SecretsProviderOnce {
  let provider: ReturnType<typeof createSecretsProvider> | undefined;
  return () => (provider ??= createSecretsProvider());
}

function secretSources(config: DigestConfig, provider: SecretsProviderOnce): { apiKey: SecretSource; slackToken: SecretSource } {
  // A local value is named by its variable, so an error says which one to fix.
  const source = (ref: SecretRef, valueName: EnvName): SecretSource =>
    'secretArn' in ref
      ? secretsManagerSecret(provider(), ref.secretArn, config.secretsCacheSeconds)
      : staticSecret('value' in ref ? ref.value : '', valueName);
  return { apiKey: source(config.readApiKey, ENV.readApiKey), slackToken: source(config.slackToken, ENV.slackBotToken) };
}

/** The Slack clients of a bot token (the poster and, with charts on, the file uploader), built anew for each token. */
function slackClientsOf(config: DigestConfig, deadline: () => number, clock: Clock): (token: string) => SlackClients {
  const now = () => clock.now();
  return (token) => ({
    slack: createSlackPoster({ token, deadline, now, slackApiUrl: config.slackApiUrl }),
    charts: config.chartsEnabled
      ? { renderer: loadChartRenderer, uploader: createSlackFileUploader({ token, deadline, now, slackApiUrl: config.slackApiUrl }) }
      : undefined,
  });
}

/**
 * The read-API client and Slack poster for the current secret values, rebuilt only when a value
 * changes (rotation). Both read the invocation's deadline on every call.
 */
function clientsForSecrets(config: DigestConfig, deadline: () => number, clock: Clock) {
  let readApi: { key: string; client: ReadApiClient } | undefined;
  let slack: { token: string; clients: SlackClients } | undefined;
  const slackClients = slackClientsOf(config, deadline, clock);
  return (apiKey: string, token: string): { readApi: ReadApiClient; slack: SlackPoster; charts: ChartDeps | undefined } => {
    if (readApi?.key !== apiKey) {
      const client = new ReadApiClient({
        baseUrl: config.readApiBaseUrl,
        apiKey,
        range: config.visibilityRange,
        gapsPageSize: config.gapsPageSize,
        deadline,
        now: () => clock.now(),
      });
      readApi = { key: apiKey, client };
    }
    if (slack?.token !== token) slack = { token, clients: slackClients(token) };
    return { readApi: readApi.client, ...slack.clients };
  };
}

/** A refresh call gives up well within the refresh lease, so a live holder is never taken over. */
const TOKEN_REFRESH_TIMEOUT_MS = 5000;
const TOKEN_REFRESH_LEASE_MS = 15_000;

/** Slack's token refresh with the app's client secret (read through the secrets cache), or an operator fix without one. */
function tokenRefresher(config: DigestConfig, clock: Clock, provider: SecretsProviderOnce): TokenRefresher {
  const client = config.slackClient;
  if (client === undefined)
    return {
      refresh: () =>
        Promise.reject(
          new NeedsOperatorFix(
            `a linked Slack installation's bot token expires, and the digest function has no ${ENV.slackClientId} to refresh it`,
            "deploy the stage with its `slackClientId` (the app's client id), so the digest function can refresh installations' tokens",
          ),
        ),
    };
  const secret =
    'secretArn' in client.secret
      ? secretsManagerSecret(provider(), client.secret.secretArn, config.secretsCacheSeconds)
      : staticSecret(client.secret.value, ENV.slackClientSecret);
  let current: { clientSecret: string; refresher: TokenRefresher } | undefined;
  return {
    async refresh(refreshToken) {
      const clientSecret = await secret.get();
      if (current?.clientSecret !== clientSecret) {
        const refresher = createTokenRefresher({
          clientId: client.id,
          clientSecret,
          slackApiUrl: config.slackApiUrl,
          requestTimeoutMs: TOKEN_REFRESH_TIMEOUT_MS,
          clock,
        });
        current = { clientSecret, refresher };
      }
      return current.refresher.refresh(refreshToken);
    },
  };
}

/**
 * The Slack installations connections are linked to: their tokens refreshed under the lease, and one
 * set of clients (and one channel check, `subscribe`'s) per installation, kept per container and
 * rebuilt only when its token changes.
 */
function installationSlack(
  config: DigestConfig,
  dynamo: DynamoDBClient,
  deadline: () => number,
  clock: Clock,
  log: Log,
  provider: SecretsProviderOnce,
): InstallationSlack {
  const slackClients = slackClientsOf(config, deadline, clock);
  const clients = new Map<string, { token: string; clients: SlackClients }>();
  const workspaces = new Map<string, { token: string; workspace: SlackWorkspace }>();
  return {
    tokens: {
      store: new DynamoInstallationStore(dynamo, { tableName: config.tableName }),
      lease: new DynamoRefreshLease(dynamo, { tableName: config.tableName, leaseMs: TOKEN_REFRESH_LEASE_MS }),
      refresher: tokenRefresher(config, clock, provider),
      clock,
      sleep,
      log,
    },
    clientsFor(installationId, token) {
      let held = clients.get(installationId);
      if (held?.token !== token) {
        held = { token, clients: slackClients(token) };
        clients.set(installationId, held);
      }
      return held.clients;
    },
    channelsFor(installationId, token) {
      let held = workspaces.get(installationId);
      if (held?.token !== token) {
        held = { token, workspace: new SlackWorkspace({ token: staticSecret(token), slackApiUrl: config.slackApiUrl, clock }) };
        workspaces.set(installationId, held);
      }
      return held.workspace;
    },
  };
}

/**
 * A connection's read-API client, its key read from the connection's secret through the secrets cache
 * and the client rebuilt only when the key or base URL changes.
 */
function connectionReadApis(
  config: DigestConfig,
  deadline: () => number,
  clock: Clock,
  provider: SecretsProviderOnce,
): (connection: Connection) => Promise<ReadApiClient> {
  const clients = new Map<string, { key: string; baseUrl: string; client: ReadApiClient }>();
  return async (connection) => {
    const secretName = connection.secretName;
    const text = await secretsManagerSecret(provider(), secretName, config.secretsCacheSeconds).get();
    let key: string;
    try {
      key = parseConnectionSecret(text, secretName).readApiKey;
    } catch (error) {
      const fix = `put the connection's secret again (\`npx bridge connections rotate ${connection.id}\` rewrites it)`;
      throw new NeedsOperatorFix(error instanceof Error ? error.message : String(error), fix);
    }
    const problem = headerValueProblem(key);
    if (problem !== undefined) throw unusableSecret(secretName, problem);
    const cached = clients.get(connection.id);
    if (cached?.key === key && cached.baseUrl === connection.baseUrl) return cached.client;
    const client = new ReadApiClient({
      baseUrl: connection.baseUrl,
      apiKey: key,
      range: config.visibilityRange,
      gapsPageSize: config.gapsPageSize,
      deadline,
      now: () => clock.now(),
    });
    clients.set(connection.id, { key, baseUrl: connection.baseUrl, client });
    return client;
  };
}

/**
 * The queue a batch came from: the commands queue's records go to its kinds (slash commands), the digest
 * queue's to its own; failed records get their retry delay on the queue they came from.
 */
function queueOf(
  sqs: SQSClient,
  config: DigestConfig,
): (records: readonly SQSRecord[]) => { name: 'digest' | 'commands'; visibility: MessageVisibility } {
  const digest = { name: 'digest' as const, visibility: new SqsMessageVisibility(sqs, config.queueUrl) };
  const commandsUrl = config.commandsQueueUrl;
  if (commandsUrl === undefined) return () => digest;
  const commands = { name: 'commands' as const, visibility: new SqsMessageVisibility(sqs, commandsUrl) };
  const commandsArnSuffix = `:${commandsUrl.slice(commandsUrl.lastIndexOf('/') + 1)}`;
  // An event source reads one queue, so every record of a batch has the same ARN (…:<queue name>).
  return (records) => (records[0]?.eventSourceARN.endsWith(commandsArnSuffix) ? commands : digest);
}

/** The button signer through the secret cache, as the Slack function verifies with it. */
function actionValuesFor(config: DigestConfig, observe: { log: Log; metrics: Metrics }, clock: Clock, provider: SecretsProviderOnce) {
  const ref = config.actionSigningKey;
  if (ref === undefined) return undefined;
  const source =
    'secretArn' in ref
      ? secretsManagerSecret(provider(), ref.secretArn, config.secretsCacheSeconds)
      : staticSecret(ref.value, ENV.actionSigningKey);
  return actionValueCodecFrom(source, { clock, ...observe, maxBackoffMs: config.secretsCacheSeconds * 1000 });
}

export function createDigestRuntime(
  config: DigestConfig,
  observe: { log: Log; metrics: Metrics },
  clock: Clock = systemClock,
): DigestRuntime {
  const secretsProvider = secretsProviderOnce();
  const secrets = secretSources(config, secretsProvider);
  // The invocation's deadline; the clients and the store read it on every call.
  let deadlineMs = Number.POSITIVE_INFINITY;
  const dynamo = createDynamoClient({ ...DIGEST_CLIENT_BOUNDS, ...config.aws.dynamodb });
  const digestStoreOptions = {
    tableName: config.tableName,
    leaseMs: config.leaseSeconds * 1000,
    retentionSeconds: DIGEST_RETENTION_SECONDS,
    deadline: () => deadlineMs,
    now: () => clock.now(),
  };
  const store = new DynamoDigestStore(dynamo, digestStoreOptions);
  const sqs = createSqsClient({ ...DIGEST_CLIENT_BOUNDS, ...config.aws.sqs });
  const queue = queueOf(sqs, config);
  // A digest's thread replies not due at once go back to its own queue as follow-ups.
  const digestQueue = new SqsMessageVisibility(sqs, config.queueUrl);
  const deadLetters = new SqsDeadLetters(sqs, config.dlqUrl);
  const clients = clientsForSecrets(config, () => deadlineMs, clock);
  const ledgerOf = (tenant: Tenant) =>
    new DynamoPostedLedger(dynamo, {
      tableName: config.tableName,
      retentionSeconds: DIGEST_RETENTION_SECONDS,
      deadline: () => deadlineMs,
      now: () => clock.now(),
      tenant,
    });
  // Subscriptions and channel paces live in the same table as the claims.
  const subscriptions = new DynamoSubscriptionStore(dynamo, config.tableName, config.subscriptionDefaultMode);
  const pacer = new DynamoChannelPacer(dynamo, {
    tableName: config.tableName,
    params: { intervalMs: config.paceIntervalMs, burst: SLACK_APP_DEFAULTS.paceBurst },
    clock: () => clock.now(),
  });
  const responder = new ResponseUrlResponder({ allowedOrigins: responseOriginsFor(config.slackApiUrl) });
  // Deferred commands: whether the bot can post in a channel (subscribe), with the same token as the poster.
  const workspace = new SlackWorkspace({ token: secrets.slackToken, slackApiUrl: config.slackApiUrl, clock });
  const slackApp = { access: config.slackAccess, groups: workspace, channels: workspace, views: workspace };
  const actionValues = actionValuesFor(config, observe, clock, secretsProvider);
  // Held digests and their catch-ups live in the same table.
  const quietHours = new DynamoQuietHoursStore(dynamo, config.tableName);
  // Each tenant's posts are recorded in, and recovered from, its own ledger.
  const posting = (tenant: Tenant, clients: SlackClients): SlackClients =>
    config.postRecovery === 'ledger'
      ? { ...clients, slack: withPostedLedger(clients.slack, { ledger: ledgerOf(tenant), tenant, clock, sleep, log: observe.log }) }
      : clients;
  const weeklyStore = (tenant: Tenant) =>
    new DynamoWeeklyStore(dynamo, {
      tableName: config.tableName,
      leaseMs: config.leaseSeconds * 1000,
      deadline: () => deadlineMs,
      now: () => clock.now(),
      tenant,
    });
  // A connection's items are keyed under its tenant prefix: its own stores over the same table and clients.
  const connections = connectionDigests(
    new DynamoConnectionStore(dynamo, config.tableName),
    connectionReadApis(config, () => deadlineMs, clock, secretsProvider),
    (tenant) => ({
      store: new DynamoDigestStore(dynamo, { ...digestStoreOptions, tenant }),
      subscriptions: new DynamoSubscriptionStore(dynamo, config.tableName, config.subscriptionDefaultMode, tenant),
      quietHours: new DynamoQuietHoursStore(dynamo, config.tableName, tenant),
      weekly: weeklyStore(tenant),
    }),
    installationSlack(config, dynamo, () => deadlineMs, clock, observe.log, secretsProvider),
  );
  const weekly = {
    store: weeklyStore(STACK_TENANT),
    options: {
      timeZone: config.timeZone,
      defaultChannel: config.defaultChannel,
      projectChannels: config.projectChannels,
      dashboardUrlTemplate: config.dashboardUrlTemplate,
      noiseMinimums: config.noiseMinimums,
    },
  };

  const wiring = async (): Promise<WorkerWiring> => {
    // Both go in an Authorization header: a value fetch would refuse fails here as "fix the secret <name>".
    const [apiKey, token] = await Promise.all([readHeaderSecretValue(secrets.apiKey), readHeaderSecretValue(secrets.slackToken)]);
    const made = clients(apiKey, token);
    return {
      ...made,
      posting,
      store,
      deadLetters,
      subscriptions,
      pacer,
      responder,
      slackApp,
      actionValues,
      weekly,
      quietHours,
      connections,
      digestQueue,
      channels: { defaultChannel: config.defaultChannel, byProject: config.projectChannels },
      digestOptions: {
        ...DIGEST_OPTION_DEFAULTS,
        gapsPageSize: config.gapsPageSize,
        dashboardUrlTemplate: config.dashboardUrlTemplate,
        mode: config.digestMode,
        noiseMinimums: config.noiseMinimums,
      },
      batch: { recordBudgetMs: config.recordBudgetSeconds * 1000, maxReceiveCount: config.maxReceiveCount },
      deadline: () => deadlineMs,
      sleep,
      clock,
      log: observe.log,
      metrics: observe.metrics,
    };
  };

  return {
    handle(records, remainingMs) {
      deadlineMs = clock.now() + remainingMs - DEADLINE_MARGIN_MS;
      const { name, visibility } = queue(records);
      return name === 'commands'
        ? handleSqsBatch(records, COMMAND_QUEUE, async () => commandQueueDeps(await wiring()), visibility, observe.log, observe.metrics)
        : handleSqsBatch(records, DIGEST_QUEUE, async () => digestQueueDeps(await wiring()), visibility, observe.log, observe.metrics);
    },
  };
}
