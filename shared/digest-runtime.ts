/**
 * Composition root of the digest function: configuration read once at cold start, clients created
 * once per container, secrets re-read through a cache so a rotated key or token takes effect
 * without a redeploy.
 */
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { ConfigError, integer, optionalString, requiredString, stringMap, url, type Env } from './config-env';
import { createDynamoClient, createSqsClient, readAwsEndpoints, type AwsEndpoints } from './adapters/aws-clients';
import { DynamoDigestStore, DIGEST_RETENTION_SECONDS } from './adapters/dynamo-digest-store';
import { SqsMessageVisibility } from './adapters/sqs-message-visibility';
import { createSecretsProvider, readSecretValue, secretsManagerSecret, staticSecret, type SecretSource } from './secrets';
import { ReadApiClient } from './read-api';
import { createSlackPoster, type SlackPoster } from './slack-poster';
import { systemClock, type Clock } from './ports';
import type { Log, Metrics } from './observability';
import { handleSqsBatch } from './digest/sqs-batch';
import type { DigestDeps } from './digest/process';

export interface DigestConfig {
  tableName: string;
  queueUrl: string;
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
  aws: AwsEndpoints;
}

function secretRef(env: Env, arnName: string, valueName: string): { secretArn: string } | { value: string } {
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
  const name = 'DIGEST_LEASE_SECONDS';
  try {
    return integer(env, name, 120, MIN_DIGEST_LEASE_SECONDS, 3600);
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
    tableName: requiredString(env, 'TABLE_NAME'),
    queueUrl: requiredString(env, 'QUEUE_URL'),
    readApiBaseUrl: url(env, 'READ_API_BASE_URL'),
    readApiKey: secretRef(env, 'READ_API_KEY_SECRET_ARN', 'READ_API_KEY'),
    slackToken: secretRef(env, 'SLACK_BOT_TOKEN_SECRET_ARN', 'SLACK_BOT_TOKEN'),
    slackApiUrl: optionalString(env, 'SLACK_API_URL'),
    defaultChannel: requiredString(env, 'SLACK_DEFAULT_CHANNEL'),
    projectChannels: stringMap(env, 'SLACK_PROJECT_CHANNELS'),
    visibilityRange: optionalString(env, 'VISIBILITY_RANGE') ?? '7d',
    gapsPageSize: integer(env, 'GAPS_PAGE_SIZE', 50, 1, 1000),
    secretsCacheSeconds: integer(env, 'SECRETS_CACHE_SECONDS', 300, 0, 3600),
    leaseSeconds: digestLeaseSeconds(env),
    aws: readAwsEndpoints(env),
  };
}

/** Time kept back from the Lambda's remaining time so the function returns its batch response. */
const DEADLINE_MARGIN_MS = 3000;

export interface DigestRuntime {
  handle(records: readonly SQSRecord[], remainingMs: number): Promise<SQSBatchResponse>;
}

export function createDigestRuntime(config: DigestConfig, observe: { log: Log; metrics: Metrics }, clock: Clock = systemClock): DigestRuntime {
  const provider = 'secretArn' in config.readApiKey || 'secretArn' in config.slackToken ? createSecretsProvider() : undefined;
  const source = (ref: { secretArn: string } | { value: string }): SecretSource =>
    'secretArn' in ref && provider ? secretsManagerSecret(provider, ref.secretArn, config.secretsCacheSeconds) : staticSecret('value' in ref ? ref.value : '');
  const apiKeySource = source(config.readApiKey);
  const slackTokenSource = source(config.slackToken);
  const store = new DynamoDigestStore(createDynamoClient({ requestTimeoutMs: 3000, connectionTimeoutMs: 1000, maxAttempts: 3, ...config.aws.dynamodb }), {
    tableName: config.tableName,
    leaseMs: config.leaseSeconds * 1000,
    retentionSeconds: DIGEST_RETENTION_SECONDS,
  });
  const visibility = new SqsMessageVisibility(createSqsClient({ requestTimeoutMs: 3000, connectionTimeoutMs: 1000, maxAttempts: 3, ...config.aws.sqs }), config.queueUrl);

  // The invocation's deadline; the clients read it on every call.
  let deadlineMs = Number.POSITIVE_INFINITY;
  const deadline = () => deadlineMs;
  // Clients are rebuilt only when a secret's value changes (rotation).
  let readApi: { key: string; client: ReadApiClient } | undefined;
  let slack: { token: string; poster: SlackPoster } | undefined;

  const resolveDeps = async (): Promise<DigestDeps> => {
    const [apiKey, token] = await Promise.all([readSecretValue(apiKeySource), readSecretValue(slackTokenSource)]);
    if (readApi?.key !== apiKey) {
      readApi = {
        key: apiKey,
        client: new ReadApiClient({ baseUrl: config.readApiBaseUrl, apiKey, range: config.visibilityRange, gapsPageSize: config.gapsPageSize, deadline, now: () => clock.now() }),
      };
    }
    if (slack?.token !== token) {
      slack = { token, poster: createSlackPoster({ token, deadline, now: () => clock.now(), ...(config.slackApiUrl ? { slackApiUrl: config.slackApiUrl } : {}) }) };
    }
    return {
      readApi: readApi.client,
      slack: slack.poster,
      store,
      channels: { defaultChannel: config.defaultChannel, byProject: config.projectChannels },
      clock,
      log: observe.log,
      metrics: observe.metrics,
    };
  };

  return {
    handle(records, remainingMs) {
      deadlineMs = clock.now() + remainingMs - DEADLINE_MARGIN_MS;
      return handleSqsBatch(records, resolveDeps, visibility, observe.log);
    },
  };
}
