/**
 * Composition root of the Slack function: reads and validates configuration once (cold start) and
 * wires the adapters into the Slack endpoints. Slack waits 3 s for an answer, so every call is short.
 */
import { ConfigError, integer, optionalString, parseSlackSigningSecret, requiredString, type Env } from '../../shared/config-env';
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS, DIGEST_DEFAULTS, ENV, type DigestMode, type PostRecovery } from '../../shared/contracts';
import { createDynamoClient, createSqsClient, readAwsEndpoints, type AwsEndpoints } from '../../shared/adapters/aws-clients';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { createSecretsProvider, secretsManagerSecret } from '../../shared/adapters/secrets-manager';
import { ResponseUrlResponder, responseOriginsFor } from '../../shared/adapters/slack-response-url';
import { SqsDeferredCommandQueue } from '../../shared/adapters/sqs-slack-command-queue';
import { DynamoReplayGuard } from '../../shared/adapters/dynamo-replay-guard';
import { SlackWorkspace } from '../../shared/adapters/slack-workspace';
import { NeedsOperatorFix } from '../../shared/errors';
import { staticSecret } from '../../shared/secrets';
import { systemClock, type Clock, type Log, type Metrics, type SecretSource } from '../../shared/ports';
import { actionValueCodecFrom, readActionSigningKeyRef, type ActionSigningKeyRef } from '../../shared/buttons/value';
import type { SlackEndpointDeps } from '../../shared/slack-app/endpoint';
import { shareValuesFrom } from '../../shared/slack-app/interactions';
import { parseSlackAccessPolicy } from '../../shared/slack-app/policy';
import type { SlackAccessPolicy, UserGroupMembers } from '../../shared/slack-app/ports';
import { slackVerifierFrom } from '../../shared/slack-app/verifier-source';
import { enginesFromSnapshots } from '../../shared/slack-app/channel-settings';
import { DIGEST_RETENTION_SECONDS, DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { DynamoPostedLedger } from '../../shared/adapters/dynamo-posted-ledger';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { DynamoTeamData } from '../../shared/adapters/dynamo-team-data';
import { readPostRecovery } from '../../shared/digest/posted-ledger';
import { InstalledTeamsCache, readWorkspaceAllowList, type WorkspaceAllowList } from '../../shared/slack-app/workspace-gate';
import { readSubscriptionDefaultMode } from '../../shared/slack-app/default-mode';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { STACK_TENANT, tenantOf, type Tenant } from '../../shared/tenancy';
import { teamTenants } from '../../shared/slack-app/tenant-scope';
import { DynamoWeeklyStore } from '../../shared/adapters/dynamo-weekly-store';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { readStageTimeZone } from '../../shared/weekly/config';

export interface SlackConfig {
  tableName: string;
  /** Deferred commands' own queue (not the digest queue: an answer must not wait behind digests). */
  commandsQueueUrl: string;
  signingSecret: { secretArn: string } | { value: string };
  toleranceSeconds: number;
  secretsCacheSeconds: number;
  /** Origins response_url may point at: Slack's hooks host, plus the local Slack server when SLACK_API_URL names one. */
  responseOrigins: string[];
  /** The workspaces (or Grid org) and the app served; a stage naming none serves nobody (403). */
  workspace: WorkspaceAllowList;
  /** The key that signs the bridge's button values (required: every click is verified with it). */
  actionSigningKey: ActionSigningKeyRef;
  /** Who may change subscriptions, and where (the stage's `slackAccess`). */
  access: SlackAccessPolicy;
  /** The bot token: only a user-group policy needs it here (to read the group's members). */
  slackToken: { secretArn: string } | { value: string } | undefined;
  slackApiUrl: string | undefined;
  /** The mode of a subscription a button creates when the digest doesn't show one (stage `subscriptionDefaultMode`). */
  subscriptionDefaultMode: DigestMode;
  /** The stage's zone: `/visibility weekly` without one uses it. */
  timeZone: string;
  /** Installed through "Add to Slack" (the stage's `slackClientId`): workspaces' channels are noted, and purged on uninstall. */
  distributed: boolean;
  /** 'ledger': `message_metadata_posted` events record the bot's posts in the posted ledger (stage `slackPostRecovery`). */
  postRecovery: PostRecovery;
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
    workspace: readWorkspaceAllowList(env),
    actionSigningKey: requiredActionSigningKey(env),
    access: readSlackAccessPolicy(env),
    slackToken: readSlackToken(env),
    slackApiUrl: optionalString(env, ENV.slackApiUrl),
    subscriptionDefaultMode: readSubscriptionDefaultMode(env),
    timeZone: readStageTimeZone(env),
    distributed: optionalString(env, ENV.slackClientId) !== undefined,
    postRecovery: readPostRecovery(env),
    aws: readAwsEndpoints(env),
  };
}

function requiredActionSigningKey(env: Env): ActionSigningKeyRef {
  const ref = readActionSigningKeyRef(env);
  if (ref === undefined)
    throw new ConfigError(
      ENV.actionSigningKeySecretArn,
      `is not set (or ${ENV.actionSigningKey} for local runs); the Slack function cannot verify the values of its buttons`,
    );
  return ref;
}

/** The stage's `slackAccess` as the stack passes it (JSON); unset: the default policy. */
export function readSlackAccessPolicy(env: Env): SlackAccessPolicy {
  const name = ENV.slackAccessPolicy;
  const text = optionalString(env, name);
  let value: unknown;
  try {
    value = text === undefined ? undefined : JSON.parse(text);
  } catch {
    throw new ConfigError(name, 'is not JSON; it must be the stage\'s "slackAccess" object as JSON, e.g. {"changes":"everyone"}');
  }
  return parseSlackAccessPolicy(value, name, `the environment variable ${name}`);
}

function readSlackToken(env: Env): SlackConfig['slackToken'] {
  const secretArn = optionalString(env, ENV.slackBotTokenSecretArn);
  if (secretArn) return { secretArn };
  const value = optionalString(env, ENV.slackBotToken);
  return value ? { value } : undefined;
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
/**
 * A secret read (signing secret, action-signing key) that takes longer is given up on: the last good
 * value answers, or a 503 does, at most 1 s into the request, leaving the rest of Slack's 3 s to the
 * replay guard, the store and the queue (SLACK_CLIENT_BOUNDS) even in a Secrets Manager brown-out.
 */
export const SLACK_SECRET_READ_TIMEOUT_MS = 1000;
/** A button updates its message via response_url inside the same 3 s. */
export const RESPONSE_URL_TIMEOUT_MS = 1500;

export function createSlackDeps(
  config: SlackConfig,
  observe: { log: Log; metrics: Metrics },
  clock: Clock = systemClock,
): SlackEndpointDeps {
  let provider: ReturnType<typeof createSecretsProvider> | undefined; // only when a secret is read by ARN
  // One secret cache for every secret: Secrets Manager by ARN when deployed, the value itself locally.
  const secret = (ref: { secretArn: string } | { value: string }, valueName: string): SecretSource =>
    'secretArn' in ref
      ? secretsManagerSecret((provider ??= createSecretsProvider()), ref.secretArn, config.secretsCacheSeconds)
      : staticSecret(ref.value, valueName);
  const cache = {
    clock,
    log: observe.log,
    metrics: observe.metrics,
    maxBackoffMs: config.secretsCacheSeconds * 1000,
    readTimeoutMs: SLACK_SECRET_READ_TIMEOUT_MS,
  };
  const actionValues = actionValueCodecFrom(secret(config.actionSigningKey, ENV.actionSigningKey), cache);
  const dynamo = createDynamoClient({ ...SLACK_CLIENT_BOUNDS, ...config.aws.dynamodb });
  const store = new DynamoSubscriptionStore(dynamo, config.tableName, config.subscriptionDefaultMode);
  // A connection's items are keyed under its tenant prefix: its own stores over the same table and client.
  const storeOf = (tenant: Tenant) =>
    tenant.kind === 'stack' ? store : new DynamoSubscriptionStore(dynamo, config.tableName, config.subscriptionDefaultMode, tenant);
  const snapshotsOf = (tenant: Tenant) =>
    new DynamoDigestStore(dynamo, { tableName: config.tableName, leaseMs: 0, retentionSeconds: 0, tenant });
  const connections = new DynamoConnectionStore(dynamo, config.tableName);
  const tenants = teamTenants(config.workspace, connections, (tenant) => ({
    tenant,
    store: storeOf(tenant),
    snapshots: snapshotsOf(tenant),
  }));
  const everyTenant = async () => [STACK_TENANT, ...(await connections.list()).map((record) => tenantOf(record.connection.id))];
  const teams = config.distributed ? new DynamoTeamData(dynamo, config.tableName, storeOf, everyTenant) : undefined;
  const installations = config.distributed ? new DynamoInstallationStore(dynamo, { tableName: config.tableName }) : undefined;
  return {
    verifier: slackVerifierFrom(secret(config.signingSecret, ENV.slackSigningSecret), {
      ...cache,
      toleranceSeconds: config.toleranceSeconds,
    }),
    workspace: config.workspace,
    // Distributed: the workspaces that installed the app are served too (looked up in `inst#`, cached per container).
    installedTeams: installations && new InstalledTeamsCache(installations, config.workspace.appId, () => clock.now()),
    replays: new DynamoReplayGuard(dynamo, config.tableName, config.toleranceSeconds),
    // Kept as long as the digest function's records of the same posts (a retry of the event reads them).
    postedLedger:
      config.postRecovery === 'ledger'
        ? (tenant: Tenant) =>
            new DynamoPostedLedger(dynamo, {
              tableName: config.tableName,
              retentionSeconds: DIGEST_RETENTION_SECONDS,
              now: () => clock.now(),
              tenant,
            })
        : undefined,
    teams,
    installations: teams && installations && { store: installations, teamData: teams },
    actionValues,
    shares: shareValuesFrom(actionValues),
    access: config.access,
    groups: userGroups(config, secret, clock),
    store,
    // `/visibility weekly` reads and sets the channels' schedules only (no claim here: leaseMs unused).
    weekly: { store: new DynamoWeeklyStore(dynamo, { tableName: config.tableName, leaseMs: 0 }), timeZone: config.timeZone },
    // `/visibility filter engines=` checks the names against the project's stored snapshot (one GetItem; nothing claimed).
    engines: enginesFromSnapshots(snapshotsOf(STACK_TENANT)),
    // Every answer, button and Home tab reaches only the projects of its workspace's tenants.
    tenants,
    // `/visibility quiet` without a zone uses the stage's.
    quietHours: { store: new DynamoQuietHoursStore(dynamo, config.tableName), defaultTimeZone: config.timeZone },
    queue: new SqsDeferredCommandQueue(createSqsClient({ ...SLACK_CLIENT_BOUNDS, ...config.aws.sqs }), config.commandsQueueUrl),
    responder: new ResponseUrlResponder({ allowedOrigins: config.responseOrigins, timeoutMs: RESPONSE_URL_TIMEOUT_MS }),
    clock,
    log: observe.log,
    metrics: observe.metrics,
  };
}

/** A user-group policy reads the group with the bot token; without a token (no such policy) a read says what to set. */
function userGroups(
  config: SlackConfig,
  secret: (ref: { secretArn: string } | { value: string }, valueName: string) => SecretSource,
  clock: Clock,
): UserGroupMembers {
  if (config.slackToken !== undefined)
    return new SlackWorkspace({ token: secret(config.slackToken, ENV.slackBotToken), slackApiUrl: config.slackApiUrl, clock });
  const fix = `set ${ENV.slackBotTokenSecretArn} (the stack does for a "userGroup" policy) so the Slack function can read the group`;
  return {
    membersOf: () => Promise.reject(new NeedsOperatorFix(`the Slack function has no bot token to read a user group; ${fix}`, fix)),
  };
}
