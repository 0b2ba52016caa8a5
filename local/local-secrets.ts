/**
 * The local stack's Secrets Manager: the local server holding the three secrets the deployed stack
 * keeps in Secrets Manager, so the functions read them exactly as deployed (by ARN, through
 * Powertools' SecretsProvider, with a short cache) and `bridge secrets …` can change them.
 *
 * The functions' Secrets Manager client is created without an endpoint (shared/secrets.ts), so the
 * SDK takes it from AWS_ENDPOINT_URL_SECRETS_MANAGER in process.env: one such server per process.
 */
import { ENV } from '../shared/contracts';
import { LocalSecretsManagerServer } from './secrets-manager-server';

/** How long the local functions keep a secret: short, so `bridge secrets …` takes effect at once. */
export const LOCAL_SECRETS_CACHE_SECONDS = 2;

export const LOCAL_SECRET_NAMES = {
  signing: 'visibility-bridge/local/signing-secrets',
  readApiKey: 'visibility-bridge/local/read-api-key',
  slackToken: 'visibility-bridge/local/slack-bot-token',
} as const;

export interface LocalSecrets {
  server: LocalSecretsManagerServer;
  signingSecretsSecretId: string;
  readApiKeySecretId: string;
  slackTokenSecretId: string;
  /** The functions' environment: the secret ARNs and the cache time (replacing the plain values). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export interface LocalSecretValues {
  signing: readonly string[];
  readApiKey: string;
  slackToken: string;
}

export class SecretsEndpointTakenError extends Error {
  override readonly name = 'SecretsEndpointTakenError';
}

export async function startLocalSecrets(options: {
  host: string;
  port: number;
  region: string;
  values: LocalSecretValues;
}): Promise<LocalSecrets> {
  const taken = process.env[ENV.awsEndpointSecretsManager];
  if (taken !== undefined && taken !== '') {
    throw new SecretsEndpointTakenError(
      `${ENV.awsEndpointSecretsManager} is already set (${taken}): one local stack with a Secrets Manager server per process; unset it or start this stack without one`,
    );
  }
  const server = await LocalSecretsManagerServer.start({ host: options.host, port: options.port, region: options.region });
  const signing = server.createSecret(LOCAL_SECRET_NAMES.signing, JSON.stringify(options.values.signing));
  const readApiKey = server.createSecret(LOCAL_SECRET_NAMES.readApiKey, options.values.readApiKey);
  const slackToken = server.createSecret(LOCAL_SECRET_NAMES.slackToken, options.values.slackToken);
  process.env[ENV.awsEndpointSecretsManager] = server.url;
  // The SDK needs a region from the process (the functions' env object is not process.env).
  process.env[ENV.awsRegion] ??= options.region;
  return {
    server,
    signingSecretsSecretId: signing,
    readApiKeySecretId: readApiKey,
    slackTokenSecretId: slackToken,
    env: {
      [ENV.signingSecretsSecretArn]: signing,
      [ENV.readApiKeySecretArn]: readApiKey,
      [ENV.slackBotTokenSecretArn]: slackToken,
      [ENV.secretsCacheSeconds]: String(LOCAL_SECRETS_CACHE_SECONDS),
      [ENV.awsEndpointSecretsManager]: server.url,
    },
    close: async () => {
      if (process.env[ENV.awsEndpointSecretsManager] === server.url) delete process.env[ENV.awsEndpointSecretsManager];
      await server.close();
    },
  };
}
