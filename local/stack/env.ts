/**
 * The functions' environment on the local stack, built as the CDK stack builds it, and checked as
 * each function checks it at cold start, so a bad value fails the start in one line.
 */
import { DIGEST_DEFAULTS, ENV, METRICS_NAMESPACE, SERVICES } from '../../shared/contracts';
import { readIngestConfig } from '../../functions/ingest/runtime';
import { readDigestConfig } from '../../functions/digest/runtime';
import { readSlackConfig } from '../../functions/slack/runtime';
import type { LocalSlackServer } from '../slack/server';
import type { LocalSecrets } from '../local-secrets';
import { LOCAL_SLACK_APP_ID, LOCAL_SLACK_TEAM_ID } from '../slack-app-delivery';
import { LOCAL_TOPOLOGY } from '../topology';
import type { StartedSqs } from './queues';
import { LOCAL_DEFAULTS, LOCAL_STAGE, type LocalStackOptions, type StackKeys } from './types';

export interface EnvInputs {
  options: LocalStackOptions;
  region: string;
  sqs: StartedSqs;
  dynamoEndpoint: string;
  readApiBaseUrl: string;
  /** Plain values, used when there is no local Secrets Manager. */
  secrets: { signing: readonly string[]; readApiKey: string; slackToken: string };
  localSecrets: LocalSecrets | undefined;
  slack: LocalSlackServer | undefined;
  slackChannel: string;
  keys: StackKeys;
  functionTimeoutMs: number;
  maxReceiveCount: number;
  /** With clients (`--connections`): "Add to Slack" is served, and the Slack function is told the app's client id, as deployed. */
  slackClientId: string | undefined;
}

/** Ingest's and digest's environment (`env`) and the Slack function's (`slackEnv`: theirs plus its signing secret). */
export function functionEnvironments(input: EnvInputs): { env: Record<string, string>; slackEnv: Record<string, string> } {
  const { options, sqs, slack, localSecrets, secrets, functionTimeoutMs } = input;
  const leaseSeconds = Math.ceil(functionTimeoutMs / 1000) + 60;
  const env: Record<string, string> = {
    [ENV.tableName]: LOCAL_DEFAULTS.tableName,
    [LOCAL_TOPOLOGY.queues.digest.urlEnv]: sqs.queueUrl,
    [LOCAL_TOPOLOGY.queues.commands.urlEnv]: sqs.commandsQueueUrl,
    [LOCAL_TOPOLOGY.queues.digestDlq.urlEnv]: sqs.dlqUrl,
    [ENV.readApiBaseUrl]: input.readApiBaseUrl,
    ...(localSecrets
      ? localSecrets.env
      : {
          [ENV.signingSecrets]: JSON.stringify(secrets.signing),
          [ENV.readApiKey]: secrets.readApiKey,
          [ENV.slackBotToken]: secrets.slackToken,
        }),
    ...(slack ? { [ENV.slackApiUrl]: slack.apiUrl } : {}),
    [ENV.slackDefaultChannel]: input.slackChannel,
    ...(options.projectChannels ? { [ENV.slackProjectChannels]: JSON.stringify(options.projectChannels) } : {}),
    // The posting lease must outlast one invocation (the default 120 s does for the default 60 s).
    ...(leaseSeconds > DIGEST_DEFAULTS.leaseSeconds ? { [ENV.digestLeaseSeconds]: String(Math.min(3600, leaseSeconds)) } : {}),
    // The local Slack server has no rate limit: pace it lightly so paced threads never outlast the visibility timeout.
    ...(slack ? { [ENV.slackPaceIntervalMs]: '20' } : {}),
    // A record's budget scales with the (often short) local function timeout, as the stack derives it.
    [ENV.digestRecordBudgetSeconds]: String(Math.floor(functionTimeoutMs / 8000)),
    [ENV.maxReceiveCount]: String(input.maxReceiveCount),
    // The Slack app serves only the local Slack's workspace and app; the digest signs its buttons with the stack's own key.
    [ENV.slackTeamIds]: slack?.teamId ?? LOCAL_SLACK_TEAM_ID,
    [ENV.slackAppId]: slack?.appId ?? LOCAL_SLACK_APP_ID,
    [ENV.actionSigningKey]: input.keys.actionSigningKey,
    // A distributed stage's digest refreshes linked installations' rotating tokens with the app's client id and secret.
    ...(input.slackClientId !== undefined
      ? { [ENV.slackClientId]: input.slackClientId, ...(slack ? { [ENV.slackClientSecret]: slack.oauth.clientSecret } : {}) }
      : {}),
    [ENV.awsEndpointDynamodb]: input.dynamoEndpoint,
    [ENV.awsEndpointSqs]: sqs.server.url,
    [ENV.awsRegion]: input.region,
    [ENV.powertoolsMetricsNamespace]: METRICS_NAMESPACE,
    [ENV.stage]: LOCAL_STAGE,
    ...options.env,
  };
  // The Slack endpoints run as their own function beside ingest, on the same API (as in the stack).
  const slackEnv = {
    ...env,
    [ENV.slackSigningSecret]: JSON.stringify([input.keys.slackSigningSecret]),
    [ENV.powertoolsServiceName]: SERVICES.slack,
  };
  // A bad value's ConfigError is said by toStackError (./problems), where every start error is.
  readIngestConfig(env);
  readDigestConfig(env);
  readSlackConfig(slackEnv);
  return { env, slackEnv };
}
