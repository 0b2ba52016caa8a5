/**
 * Composition root of the "Add to Slack" function: configuration read and validated once (cold start),
 * the installation store on the bridge's table, and the client secret through the secret cache (read
 * on the first request, so a secret put after the deploy is picked up).
 */
import { createHmac } from 'node:crypto';
import { ConfigError, integer, optionalString, requiredString, url, type Env } from '../../shared/config-env';
import { DIGEST_DEFAULTS, ENV } from '../../shared/contracts';
import { createDynamoClient, readAwsEndpoints, type AwsEndpoints } from '../../shared/adapters/aws-clients';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { createSecretsProvider, secretsManagerSecret } from '../../shared/adapters/secrets-manager';
import { createSlackOAuth, type SlackOAuth } from '../../shared/adapters/slack-oauth';
import { readPostRecovery } from '../../shared/digest/posted-ledger';
import { staticSecret } from '../../shared/secrets';
import { botScopes } from '../../shared/slack-app/manifest';
import type { Clock, Log, SecretSource } from '../../shared/ports';

export interface SlackOAuthConfig {
  tableName: string;
  clientId: string;
  clientSecret: { secretArn: string } | { value: string };
  redirectUrl: string;
  authorizeUrl: string | undefined;
  slackApiUrl: string | undefined;
  /** What the install asks for: the manifest's bot scopes for the stage's post recovery. */
  scopes: string[];
  secretsCacheSeconds: number;
  aws: AwsEndpoints;
}

export function readSlackOAuthConfig(env: Env): SlackOAuthConfig {
  return {
    tableName: requiredString(env, ENV.tableName),
    clientId: requiredString(env, ENV.slackClientId),
    clientSecret: clientSecretRef(env),
    redirectUrl: url(env, ENV.slackOAuthRedirectUrl),
    authorizeUrl: optionalString(env, ENV.slackAuthorizeUrl),
    slackApiUrl: optionalString(env, ENV.slackApiUrl),
    scopes: botScopes({ postRecovery: readPostRecovery(env) }),
    secretsCacheSeconds: integer(env, ENV.secretsCacheSeconds, DIGEST_DEFAULTS.secretsCacheSeconds, 0, 3600),
    aws: readAwsEndpoints(env),
  };
}

function clientSecretRef(env: Env): { secretArn: string } | { value: string } {
  const secretArn = optionalString(env, ENV.slackClientSecretSecretArn);
  if (secretArn) return { secretArn };
  const value = optionalString(env, ENV.slackClientSecret);
  if (value) return { value };
  throw new ConfigError(
    ENV.slackClientSecretSecretArn,
    `is not set (or ${ENV.slackClientSecret} for local runs): "Add to Slack" needs the app's client secret (Basic Information in the app's settings)`,
  );
}

/** A browser waits for the install, not Slack's 3 s: the SDK's calls may retry. */
const OAUTH_CLIENT_BOUNDS = { requestTimeoutMs: 3000, connectionTimeoutMs: 1000, maxAttempts: 3 } as const;

/** The OAuth handlers for the current client secret, rebuilt only when the secret changes (rotation). */
export function createSlackOAuthRuntime(config: SlackOAuthConfig, log: Log, clock: Clock): () => Promise<SlackOAuth> {
  const secret: SecretSource =
    'secretArn' in config.clientSecret
      ? secretsManagerSecret(createSecretsProvider(), config.clientSecret.secretArn, config.secretsCacheSeconds)
      : staticSecret(config.clientSecret.value, ENV.slackClientSecret);
  const store = new DynamoInstallationStore(createDynamoClient({ ...OAUTH_CLIENT_BOUNDS, ...config.aws.dynamodb }), {
    tableName: config.tableName,
  });
  let current: { clientSecret: string; oauth: SlackOAuth } | undefined;
  return async () => {
    const clientSecret = await secret.get();
    if (current?.clientSecret !== clientSecret) {
      const oauth = createSlackOAuth({
        clientId: config.clientId,
        clientSecret,
        stateSecret: stateSecretFrom(clientSecret),
        redirectUri: config.redirectUrl,
        scopes: config.scopes,
        slackApiUrl: config.slackApiUrl,
        authorizationUrl: config.authorizeUrl,
        store,
        clock,
        log,
      });
      current = { clientSecret, oauth };
    }
    return current.oauth;
  };
}

/** The state's signing key, derived from the client secret: one secret less to keep, and it rotates with it. */
function stateSecretFrom(clientSecret: string): string {
  return createHmac('sha256', clientSecret).update('slack-oauth-state').digest('base64url');
}
