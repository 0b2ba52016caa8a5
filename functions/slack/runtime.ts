/**
 * Composition root of the Slack function: reads and validates configuration once (cold start) and
 * wires the adapters into the Slack endpoints. Slack waits 3 s for an answer, so every call is short.
 */
import { ConfigError, integer, optionalString, parseSlackSigningSecret, requiredString, type Env } from '../../shared/config-env';
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS, DIGEST_DEFAULTS, ENV } from '../../shared/contracts';
import { createDynamoClient, createSqsClient, readAwsEndpoints, type AwsEndpoints } from '../../shared/adapters/aws-clients';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { createSecretsProvider, secretsManagerSecret } from '../../shared/adapters/secrets-manager';
import { ResponseUrlResponder, responseOriginsFor } from '../../shared/adapters/slack-response-url';
import { SqsDeferredCommandQueue } from '../../shared/adapters/sqs-slack-command-queue';
import { staticSecret } from '../../shared/secrets';
import { systemClock, type Clock, type Log, type Metrics, type SecretSource } from '../../shared/ports';
import type { SlackEndpointDeps } from '../../shared/slack-app/endpoint';
import { slackVerifierFrom } from '../../shared/slack-app/verifier-source';

export interface SlackConfig {
  tableName: string;
  /** Deferred commands' own queue (not the digest queue: an answer must not wait behind digests). */
  commandsQueueUrl: string;
  signingSecret: { secretArn: string } | { value: string };
  toleranceSeconds: number;
  secretsCacheSeconds: number;
  /** Origins response_url may point at: Slack's hooks host, plus the local Slack server when SLACK_API_URL names one. */
  responseOrigins: string[];
  aws: AwsEndpoints;
}

export function readSlackConfig(env: Env): SlackConfig {
  return {
    tableName: requiredString(env, ENV.tableName),
    commandsQueueUrl: requiredString(env, ENV.commandsQueueUrl),
    signingSecret: readSigningSecret(env),
    toleranceSeconds: integer(env, ENV.signatureToleranceSeconds, DEFAULT_SIGNATURE_TOLERANCE_SECONDS, 1, 3600),
    secretsCacheSeconds: integer(env, ENV.secretsCacheSeconds, DIGEST_DEFAULTS.secretsCacheSeconds, 0, 3600),
    responseOrigins: responseOriginsFor(optionalString(env, ENV.slackApiUrl)),
    aws: readAwsEndpoints(env),
  };
}

function readSigningSecret(env: Env): SlackConfig['signingSecret'] {
  const secretArn = optionalString(env, ENV.slackSigningSecretSecretArn);
  if (secretArn) return { secretArn };
  const value = optionalString(env, ENV.slackSigningSecret);
  if (!value) {
    throw new ConfigError(
      ENV.slackSigningSecretSecretArn,
      `is not set (or ${ENV.slackSigningSecret} for local runs); the Slack function cannot verify Slack's requests`,
    );
  }
  // Parsed now so a malformed local value fails the cold start, not every request.
  parseSlackSigningSecret(value, ENV.slackSigningSecret);
  return { value };
}

/** Each SDK call gives up after under a second and is tried twice: verify + store + queue fit Slack's 3 s. */
export const SLACK_CLIENT_BOUNDS = { requestTimeoutMs: 800, connectionTimeoutMs: 400, maxAttempts: 2 } as const;
/** A button updates its message via response_url inside the same 3 s. */
export const RESPONSE_URL_TIMEOUT_MS = 1500;

export function createSlackDeps(
  config: SlackConfig,
  observe: { log: Log; metrics: Metrics },
  clock: Clock = systemClock,
): SlackEndpointDeps {
  const source: SecretSource =
    'secretArn' in config.signingSecret
      ? secretsManagerSecret(createSecretsProvider(), config.signingSecret.secretArn, config.secretsCacheSeconds)
      : staticSecret(config.signingSecret.value, ENV.slackSigningSecret);
  return {
    verifier: slackVerifierFrom(source, {
      toleranceSeconds: config.toleranceSeconds,
      clock,
      log: observe.log,
      metrics: observe.metrics,
      maxBackoffMs: config.secretsCacheSeconds * 1000,
    }),
    store: new DynamoSubscriptionStore(createDynamoClient({ ...SLACK_CLIENT_BOUNDS, ...config.aws.dynamodb }), config.tableName),
    queue: new SqsDeferredCommandQueue(createSqsClient({ ...SLACK_CLIENT_BOUNDS, ...config.aws.sqs }), config.commandsQueueUrl),
    responder: new ResponseUrlResponder({ allowedOrigins: config.responseOrigins, timeoutMs: RESPONSE_URL_TIMEOUT_MS }),
    clock,
    log: observe.log,
    metrics: observe.metrics,
  };
}
