/**
 * Composition root of the ingest function: reads and validates configuration once (cold start)
 * and wires the AWS adapters into the ingest domain.
 */
import { integer, optionalString, parseSecretList, requiredString, ConfigError, type Env } from '../../shared/config-env';
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS, ENV, INGEST_DEFAULTS } from '../../shared/contracts';
import { createDynamoClient, createSqsClient, readAwsEndpoints, type AwsEndpoints } from '../../shared/adapters/aws-clients';
import { DynamoDeliveryStore, DEFAULT_LEASE_MS } from '../../shared/adapters/dynamo-delivery-store';
import { SqsEventQueue } from '../../shared/adapters/sqs-event-queue';
import { createSecretsProvider, secretsManagerSecret } from '../../shared/adapters/secrets-manager';
import { signingVerifierFrom, staticSecret } from '../../shared/secrets';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { connectionWebhooks } from '../../shared/connections/verifiers';
import { systemClock, type Log, type Metrics, type SecretSource } from '../../shared/ports';
import type { IngestDeps } from '../../shared/ingest';

export interface IngestConfig {
  tableName: string;
  queueUrl: string;
  /** The DLQ, where signed deliveries ingest can't process are quarantined. */
  dlqUrl: string;
  signingSecrets: { secretArn: string } | { values: string };
  toleranceSeconds: number;
  retentionSeconds: number;
  secretsCacheSeconds: number;
  aws: AwsEndpoints;
}

export function readIngestConfig(env: Env): IngestConfig {
  const secretArn = optionalString(env, ENV.signingSecretsSecretArn);
  const values = optionalString(env, ENV.signingSecrets);
  if (!secretArn && !values) {
    throw new ConfigError(
      ENV.signingSecretsSecretArn,
      `is not set (or ${ENV.signingSecrets} for local runs); the ingest function cannot verify deliveries`,
    );
  }
  // Parsed now so a malformed local value fails the cold start, not every delivery with a 503.
  if (!secretArn && values) parseSecretList(values, ENV.signingSecrets);
  return {
    tableName: requiredString(env, ENV.tableName),
    queueUrl: requiredString(env, ENV.queueUrl),
    dlqUrl: requiredString(env, ENV.dlqUrl),
    signingSecrets: secretArn ? { secretArn } : { values: values ?? '' },
    toleranceSeconds: integer(env, ENV.signatureToleranceSeconds, DEFAULT_SIGNATURE_TOLERANCE_SECONDS, 1, 3600),
    retentionSeconds: integer(env, ENV.dedupRetentionDays, INGEST_DEFAULTS.dedupRetentionDays, 1, 365) * 24 * 3600,
    secretsCacheSeconds: integer(env, ENV.secretsCacheSeconds, INGEST_DEFAULTS.secretsCacheSeconds, 0, 3600),
    aws: readAwsEndpoints(env),
  };
}

/**
 * SDK bounds for ingest: each call gives up after about a second and is tried twice, so claim +
 * send + complete stay within the 8 s function timeout and the sender's 10 s.
 */
export const INGEST_CLIENT_BOUNDS = { requestTimeoutMs: 1000, connectionTimeoutMs: 500, maxAttempts: 2 } as const;

export function createIngestDeps(config: IngestConfig, observe: { log: Log; metrics: Metrics }): IngestDeps {
  const provider = createSecretsProvider();
  const source: SecretSource =
    'secretArn' in config.signingSecrets
      ? secretsManagerSecret(provider, config.signingSecrets.secretArn, config.secretsCacheSeconds)
      : staticSecret(config.signingSecrets.values, ENV.signingSecrets);
  const verifierOptions = {
    toleranceSeconds: config.toleranceSeconds,
    clock: systemClock,
    log: observe.log,
    metrics: observe.metrics,
    maxBackoffMs: config.secretsCacheSeconds * 1000,
  };
  const dynamo = createDynamoClient({ ...INGEST_CLIENT_BOUNDS, ...config.aws.dynamodb });
  const deliveryOptions = { tableName: config.tableName, leaseMs: DEFAULT_LEASE_MS, retentionSeconds: config.retentionSeconds };
  return {
    verifier: signingVerifierFrom(source, verifierOptions),
    connections: connectionWebhooks(
      new DynamoConnectionStore(dynamo, config.tableName),
      (secretName) => secretsManagerSecret(provider, secretName, config.secretsCacheSeconds),
      verifierOptions,
    ),
    toleranceSeconds: config.toleranceSeconds,
    store: new DynamoDeliveryStore(dynamo, deliveryOptions),
    // A connection's deliveries are keyed under its tenant prefix.
    storeOf: (tenant) => new DynamoDeliveryStore(dynamo, { ...deliveryOptions, tenant }),
    queue: new SqsEventQueue(createSqsClient({ ...INGEST_CLIENT_BOUNDS, ...config.aws.sqs }), config.queueUrl, config.dlqUrl),
    clock: systemClock,
    log: observe.log,
    metrics: observe.metrics,
  };
}
