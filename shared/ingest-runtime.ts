/**
 * Composition root of the ingest function: reads and validates configuration once (cold start)
 * and wires the AWS adapters into the ingest domain.
 */
import { integer, optionalString, parseSecretList, requiredString, ConfigError, type Env } from './config-env';
import { createDynamoClient, createSqsClient } from './adapters/aws-clients';
import { DynamoDeliveryStore, DEFAULT_LEASE_MS } from './adapters/dynamo-delivery-store';
import { SqsEventQueue } from './adapters/sqs-event-queue';
import { createSecretsProvider, secretsManagerSecret, signingVerifierFrom, staticSecret, type SecretSource } from './secrets';
import { DEFAULT_TOLERANCE_SECONDS } from './signature';
import { systemClock } from './ports';
import type { IngestDeps } from './ingest';
import type { Log, Metrics } from './observability';
import { readAwsEndpoints, type AwsEndpoints } from './adapters/aws-clients';

export interface IngestConfig {
  tableName: string;
  queueUrl: string;
  signingSecrets: { secretArn: string } | { values: string };
  toleranceSeconds: number;
  retentionSeconds: number;
  secretsCacheSeconds: number;
  aws: AwsEndpoints;
}

export function readIngestConfig(env: Env): IngestConfig {
  const secretArn = optionalString(env, 'SIGNING_SECRETS_SECRET_ARN');
  const values = optionalString(env, 'SIGNING_SECRETS');
  if (!secretArn && !values) {
    throw new ConfigError('SIGNING_SECRETS_SECRET_ARN', 'is not set (or SIGNING_SECRETS for local runs); the ingest function cannot verify deliveries');
  }
  // Parsed now so a malformed local value fails the cold start, not every delivery with a 503.
  if (!secretArn && values) parseSecretList(values, 'SIGNING_SECRETS');
  return {
    tableName: requiredString(env, 'TABLE_NAME'),
    queueUrl: requiredString(env, 'QUEUE_URL'),
    signingSecrets: secretArn ? { secretArn } : { values: values ?? '' },
    toleranceSeconds: integer(env, 'SIGNATURE_TOLERANCE_SECONDS', DEFAULT_TOLERANCE_SECONDS, 1, 3600),
    retentionSeconds: integer(env, 'DEDUP_RETENTION_DAYS', 3, 1, 365) * 24 * 3600,
    secretsCacheSeconds: integer(env, 'SECRETS_CACHE_SECONDS', 300, 0, 3600),
    aws: readAwsEndpoints(env),
  };
}

/**
 * SDK bounds for ingest: each call gives up after about a second and is tried twice, so claim +
 * send + complete stay within the 8 s function timeout and the sender's 10 s.
 */
export const INGEST_CLIENT_BOUNDS = { requestTimeoutMs: 1000, connectionTimeoutMs: 500, maxAttempts: 2 } as const;

export function createIngestDeps(config: IngestConfig, observe: { log: Log; metrics: Metrics }): IngestDeps {
  const source: SecretSource =
    'secretArn' in config.signingSecrets
      ? secretsManagerSecret(createSecretsProvider(), config.signingSecrets.secretArn, config.secretsCacheSeconds)
      : staticSecret(config.signingSecrets.values);
  return {
    verifier: signingVerifierFrom(source, config.toleranceSeconds),
    toleranceSeconds: config.toleranceSeconds,
    store: new DynamoDeliveryStore(createDynamoClient({ ...INGEST_CLIENT_BOUNDS, ...config.aws.dynamodb }), {
      tableName: config.tableName,
      leaseMs: DEFAULT_LEASE_MS,
      retentionSeconds: config.retentionSeconds,
    }),
    queue: new SqsEventQueue(createSqsClient({ ...INGEST_CLIENT_BOUNDS, ...config.aws.sqs }), config.queueUrl),
    clock: systemClock,
    log: observe.log,
    metrics: observe.metrics,
  };
}
