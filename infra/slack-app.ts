/**
 * The Slack app: the Slack function behind `POST /slack/commands`, `POST /slack/interactions` and `POST /slack/events` (App Home)
 * on the webhook's HTTP API (with a throttle of their own), its signing secret, the queue of
 * deferred commands (./slack-commands), the stage's workspace, app and access policy, least-privilege
 * roles (its own, and the table statements the digest worker needs for subscriptions, their audit
 * trail, pacing and per-channel claims), its alarms and the values the stack outputs for
 * `bridge slack manifest` and `bridge doctor`.
 */
import { Annotations, Validations } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import {
  HttpMethod,
  PayloadFormatVersion,
  type CfnStage,
  type HttpApi,
  type HttpRoute,
  type HttpStage,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import {
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  DIGEST_DEFAULTS,
  DIGEST_METRICS,
  ENV,
  HTTP_PATHS,
  METRIC_DIMENSIONS,
  METRICS_NAMESPACE,
  SERVICES,
  SLACK_APP_METRICS,
  type SlackAppMetricName,
  STACK_OUTPUTS,
  TABLE,
} from '../shared/contracts';
import { digestMetric, FIVE_MINUTES } from './metrics';
import type { AlarmSpec } from './alarms';
import { BridgeFunction } from './bridge-function';
import { slackAccessJson, type BridgeConfig } from './config';
import { BridgeSecret } from './secrets';
import { SlackCommands } from './slack-commands';
import { Store } from './store';

/** Slack waits 3 s for the answer; a slower function is of no use to anyone. */
export const SLACK_TIMEOUT_SECONDS = 5;

/** Slack's request URLs: each gets the stage file's Slack throttle instead of the webhook's. */
export const SLACK_PATHS = [HTTP_PATHS.slackCommands, HTTP_PATHS.slackInteractions, HTTP_PATHS.slackEvents] as const;

/** SlackRequestForeign in 5 minutes that raise the alarm: one stray request is noise, a few are someone (or a reinstall). */
export const FOREIGN_REQUESTS_ALARM_THRESHOLD = 3;

export interface SlackAppProps {
  readonly config: BridgeConfig;
  readonly api: HttpApi;
  /** The API's stage: the Slack routes' throttle goes in its route settings. */
  readonly stage: HttpStage;
  readonly table: Table;
  /** The digest worker's function: answers deferred commands (from their own queue), fans digests out, paces posts. */
  readonly digestFunction: BridgeFunction;
  /** The bot token: the Slack function reads it only when `slackAccess.changes` is a user group (usergroups.users.list). */
  readonly slackToken: ISecret;
  /** Signs and verifies the values on the bridge's buttons (digest function signs, Slack function verifies). */
  readonly actionSigningKey: ISecret;
}

export class SlackApp extends Construct {
  readonly function: BridgeFunction;
  readonly signingSecret: BridgeSecret;
  /** Deferred commands' queue and DLQ, read by the digest function's second event source. */
  readonly commands: SlackCommands;
  private readonly api: HttpApi;
  private readonly config: BridgeConfig;

  constructor(scope: Construct, id: string, props: SlackAppProps) {
    super(scope, id);
    this.api = props.api;
    this.config = props.config;
    this.signingSecret = new BridgeSecret(this, 'SigningSecret', {
      existingArn: props.config.slackSigningSecretArn,
      description: `Signing secret of the Slack app (Basic Information → App Credentials); verifies Slack's requests (${props.config.stage}).`,
      exampleValue: "'<Slack app signing secret>'",
    });
    this.commands = new SlackCommands(this, 'Commands', { config: props.config, digestFunction: props.digestFunction });
    this.function = this.createFunction(props);
    throttleRoutes(props.stage, this.addRoutes(), props.config);
    grantDigestWorker(props);
    if (props.config.slackTeamIds.length === 0 && props.config.slackEnterpriseId === undefined) {
      Annotations.of(this).addWarningV2(
        'bridge:slackWorkspaceUnset',
        `${props.config.source} names no Slack workspace ("slackTeamIds") or app ("slackAppId"): the Slack app answers every request 403 until they are set and deployed (docs/DEPLOY.md, runbook step 9).`,
      );
    }
  }

  /** Alarms of the new paths, handed to Monitoring (its topic accepts only the alarms it is told about). */
  alarmSpecs(): AlarmSpec[] {
    const threshold = this.config.signatureRejectedAlarmThreshold;
    return [
      {
        id: 'SlackRequestRejectedSpike',
        description: `At least ${threshold} requests to /slack/* in 5 minutes failed Slack's signature check: a wrong or regenerated Slack signing secret, clock skew, or someone probing the endpoints.`,
        metric: slackMetric(SLACK_APP_METRICS.slackRequestRejected, this.config.stage),
        threshold,
      },
      {
        id: 'SlackAnswersUndelivered',
        description:
          'An answer to a slash command or a button (via its response_url) could not be delivered to Slack: someone in Slack got no answer. The digest and Slack function logs say why (an expired response_url after 30 minutes, Slack down).',
        metric: new MathExpression({
          expression: 'digest + slack',
          usingMetrics: {
            digest: slackMetric(SLACK_APP_METRICS.slackResponseFailed, this.config.stage, SERVICES.digest),
            slack: slackMetric(SLACK_APP_METRICS.slackResponseFailed, this.config.stage),
          },
          period: FIVE_MINUTES,
          label: 'Slack answers not delivered',
        }),
        threshold: 1,
      },
      {
        id: 'SlackPaceRateLimited',
        description:
          "Slack answered at least 5 paced digest posts with 429 in 5 minutes: something else posts in those channels, or Slack's limit is tighter than the pace (SLACK_PACE_INTERVAL_MS). Digests are delayed past Slack's Retry-After, not lost.",
        metric: digestMetric(DIGEST_METRICS.slackRateLimited, this.config.stage),
        threshold: 5,
      },
      {
        id: 'SlackSigningSecretUnusable',
        description:
          'The Slack signing secret could not be used: it holds an invalid value, or it could not be read (placeholder, deleted, AccessDenied, Secrets Manager failing). Slack requests are verified with the last good value for up to an hour, or answered 503 when there is none. Put the signing secret as Slack shows it (Basic Information → App Credentials), or a JSON array while it is regenerated; the Slack function log says what is wrong.',
        // FILL: a period with only one of the two counts still sums to a number.
        metric: new MathExpression({
          expression: 'FILL(invalid, 0) + FILL(unreadable, 0)',
          usingMetrics: {
            invalid: slackMetric(SLACK_APP_METRICS.slackSigningSecretInvalid, this.config.stage),
            unreadable: slackMetric(SLACK_APP_METRICS.slackSigningSecretUnreadable, this.config.stage),
          },
          period: FIVE_MINUTES,
          label: 'Slack signing secret unusable',
        }),
        threshold: 1,
      },
      {
        id: 'SlackErrors',
        description: 'The Slack function failed (uncaught error or timeout): a slash command or button got an error in Slack.',
        metric: this.function.fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
        threshold: 1,
      },
      {
        id: 'SlackRequestForeign',
        description: `At least ${FOREIGN_REQUESTS_ALARM_THRESHOLD} correctly signed Slack requests in 5 minutes came from another workspace, org or app than the stage file names (or the stage names none yet), and were refused (403): someone else's workspace is using this app's URLs, or the app was reinstalled or recreated and "slackTeamIds" / "slackAppId" are stale. \`npx bridge doctor\` prints the ids Slack reports.`,
        metric: slackMetric(SLACK_APP_METRICS.slackRequestForeign, this.config.stage),
        threshold: FOREIGN_REQUESTS_ALARM_THRESHOLD,
      },
      ...this.commands.alarmSpecs(),
    ];
  }

  /**
   * [output key, value, description] of the Slack app's stack outputs. `baseUrl` is the API's public
   * base (CloudFront, the custom domain or execute-api), without a trailing slash.
   */
  outputs(baseUrl: string): [string, string, string][] {
    const secret = this.signingSecret;
    const { slackTeamIds, slackEnterpriseId, slackAppId } = this.config;
    // Set ones only: CloudFormation refuses an output with an empty value.
    const ids: [string, string | undefined, string][] = [
      [STACK_OUTPUTS.slackTeamIds, slackTeamIds.join(',') || undefined, 'Slack workspaces (T…) the app serves'],
      [STACK_OUTPUTS.slackEnterpriseId, slackEnterpriseId, 'Enterprise Grid org (E…) the requests must come from'],
      [STACK_OUTPUTS.slackAppId, slackAppId, 'The Slack app (A…) the requests must be for'],
    ];
    return [
      [STACK_OUTPUTS.apiBaseUrl, baseUrl, 'Base URL of the API (`bridge slack manifest` builds the Slack request URLs from it)'],
      [STACK_OUTPUTS.slackCommandsUrl, `${baseUrl}${HTTP_PATHS.slackCommands}`, 'Request URL of the /visibility slash command'],
      [
        STACK_OUTPUTS.slackInteractionsUrl,
        `${baseUrl}${HTTP_PATHS.slackInteractions}`,
        'Request URL of the Slack app interactivity (buttons)',
      ],
      [STACK_OUTPUTS.slackEventsUrl, `${baseUrl}${HTTP_PATHS.slackEvents}`, 'Request URL of the Slack app event subscriptions (App Home)'],
      [STACK_OUTPUTS.slackSigningSecretSecretArn, secret.secret.secretArn, 'Secret with the Slack app signing secret'],
      [STACK_OUTPUTS.putSlackSigningSecretCommand, secret.putValueCommand(), 'Puts the Slack app signing secret'],
      [STACK_OUTPUTS.slackFunctionName, this.function.fn.functionName, 'Slack function'],
      ...ids.flatMap(([key, value, description]): [string, string, string][] => (value === undefined ? [] : [[key, value, description]])),
      ...this.commands.outputs(),
    ];
  }

  private createFunction(props: SlackAppProps): BridgeFunction {
    const { config } = props;
    const needsBotToken = usesUserGroup(config);
    const fn = new BridgeFunction(this, 'Slack', {
      service: SERVICES.slack,
      config,
      description: 'Verifies and answers the Slack app (/visibility commands, digest buttons, App Home events)',
      timeoutSeconds: SLACK_TIMEOUT_SECONDS,
      environment: {
        [ENV.tableName]: props.table.tableName,
        [ENV.commandsQueueUrl]: this.commands.queue.queueUrl,
        [ENV.slackSigningSecretSecretArn]: this.signingSecret.secret.secretArn,
        [ENV.signatureToleranceSeconds]: String(DEFAULT_SIGNATURE_TOLERANCE_SECONDS),
        [ENV.secretsCacheSeconds]: String(DIGEST_DEFAULTS.secretsCacheSeconds),
        [ENV.actionSigningKeySecretArn]: props.actionSigningKey.secretArn,
        ...workspaceEnvironment(config),
        ...(needsBotToken ? { [ENV.slackBotTokenSecretArn]: props.slackToken.secretArn } : {}),
        // Only when it differs from the function's default ('history'): a single-workspace stack is unchanged.
        ...(config.slackPostRecovery === 'ledger' ? { [ENV.slackPostRecovery]: config.slackPostRecovery } : {}),
        // "Add to Slack": workspaces' channels are noted, and purged when a workspace removes the app.
        ...(config.slackClientId === undefined ? {} : { [ENV.slackClientId]: config.slackClientId }),
      },
    });
    fn.allow(
      'SubscriptionsOfProjectsAndChannels',
      ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'],
      [props.table.tableArn],
      Store.leadingKeys(TABLE.prefixes.subscriptionsOfProject, TABLE.prefixes.subscriptionsOfChannel, TABLE.prefixes.audit),
    );
    // `filter engines=` reads the project's snapshot for its engine names (read only).
    fn.allow('ProjectSnapshotsRead', ['dynamodb:GetItem'], [props.table.tableArn], Store.leadingKeys(TABLE.prefixes.snapshot));
    // Which tenants a workspace reaches: the connections linked to it (read only; docs/AGENCIES.md).
    fn.allow(
      'ReadConnections',
      ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
      [props.table.tableArn],
      Store.leadingKeys(TABLE.prefixes.connection),
    );
    // The replay guard: one conditional put per request acted on; the item expires with the request's tolerance.
    fn.allow('SlackRequestReplayGuard', ['dynamodb:PutItem'], [props.table.tableArn], Store.leadingKeys(TABLE.prefixes.slackRequest));
    // The posted ledger learns the bot's own posts from message_metadata_posted: one update of a `posted#` item, never a read.
    if (config.slackPostRecovery === 'ledger')
      fn.allow('PostedLedgerRecord', ['dynamodb:UpdateItem'], [props.table.tableArn], Store.leadingKeys(TABLE.prefixes.posted));
    if (config.slackClientId !== undefined) allowUninstallPurge(fn, props.table.tableArn);
    this.commands.grantSend(fn);
    fn.allow('ReadSlackSigningSecret', ['secretsmanager:GetSecretValue'], [this.signingSecret.secret.secretArn]);
    fn.allow('ReadActionSigningKey', ['secretsmanager:GetSecretValue'], [props.actionSigningKey.secretArn]);
    // Only a user-group policy needs the token (to read the group's members): otherwise the role can't read it.
    if (needsBotToken) fn.allow('ReadSlackBotToken', ['secretsmanager:GetSecretValue'], [props.slackToken.secretArn]);
    return fn;
  }

  private addRoutes(): HttpRoute[] {
    const integration = new HttpLambdaIntegration('SlackIntegration', this.function.fn, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
    });
    const routes = SLACK_PATHS.flatMap((path) => this.api.addRoutes({ path, methods: [HttpMethod.POST], integration }));
    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Slack cannot present credentials an API Gateway authorizer understands; every request is authenticated by ' +
          'its X-Slack-Signature (HMAC-SHA256 with the app signing secret over the timestamp and raw body), verified ' +
          'in the Slack function before anything else.',
      });
    }
    return routes;
  }
}

function usesUserGroup(config: BridgeConfig): boolean {
  return config.slackAccess.changes.kind === 'userGroup';
}

/** The stage's workspace, org, app and access policy, as the Slack function reads them (unset ones absent). */
function workspaceEnvironment(config: BridgeConfig): Record<string, string> {
  return {
    ...(config.slackTeamIds.length > 0 ? { [ENV.slackTeamIds]: config.slackTeamIds.join(',') } : {}),
    ...(config.slackEnterpriseId !== undefined ? { [ENV.slackEnterpriseId]: config.slackEnterpriseId } : {}),
    ...(config.slackAppId !== undefined ? { [ENV.slackAppId]: config.slackAppId } : {}),
    [ENV.slackAccessPolicy]: JSON.stringify(slackAccessJson(config.slackAccess)),
    // A settings button on a configuration-routed digest subscribes the channel.
    [ENV.subscriptionDefaultMode]: config.subscriptionDefaultMode,
  };
}

/**
 * The Slack routes' own throttle (route settings of the stage): a flood of unsigned requests on them
 * is answered 429 there and never takes the webhook's share of the stage throttle. CloudFormation
 * needs the routes to exist before a stage names them in its route settings, hence the dependency.
 */
function throttleRoutes(stage: HttpStage, routes: readonly HttpRoute[], config: BridgeConfig): void {
  const cfnStage = stage.node.defaultChild as CfnStage;
  const settings = { ThrottlingRateLimit: config.slackThrottleRateLimit, ThrottlingBurstLimit: config.slackThrottleBurstLimit };
  cfnStage.routeSettings = Object.fromEntries(SLACK_PATHS.map((path) => [`POST ${path}`, settings]));
  for (const route of routes) stage.node.addDependency(route);
}

/**
 * The digest worker's share of the Slack app: it answers deferred commands (subscribe writes both
 * subscription items and the channel's audit trail), routes digests by the subscriptions, paces and
 * claims each channel's post, and signs the values on the digest's buttons.
 */
function grantDigestWorker(props: SlackAppProps): void {
  const { digestFunction: fn, table, config } = props;
  fn.allow(
    'SlackSubscriptions',
    ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'],
    [table.tableArn],
    Store.leadingKeys(TABLE.prefixes.subscriptionsOfProject, TABLE.prefixes.subscriptionsOfChannel, TABLE.prefixes.audit),
  );
  fn.allow(
    'SlackPacingAndChannelPosts',
    ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
    [table.tableArn],
    Store.leadingKeys(TABLE.prefixes.pace, TABLE.prefixes.channelPost),
  );
  fn.allow('ReadActionSigningKey', ['secretsmanager:GetSecretValue'], [props.actionSigningKey.secretArn]);
  fn.fn.addEnvironment(ENV.actionSigningKeySecretArn, props.actionSigningKey.secretArn);
  // Deferred subscribe checks the channel rule of the policy once the project is known.
  fn.fn.addEnvironment(ENV.slackAccessPolicy, JSON.stringify(slackAccessJson(config.slackAccess)));
  // Deferred subscribe creates subscriptions in the stage's default mode.
  fn.fn.addEnvironment(ENV.subscriptionDefaultMode, config.subscriptionDefaultMode);
}

/** A count metric of the Slack app, as its Powertools EMF records carry it: {service (default slack), stage}. */
export function slackMetric(name: SlackAppMetricName, stage: string, service: string = SERVICES.slack): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { [METRIC_DIMENSIONS.service]: service, [METRIC_DIMENSIONS.stage]: stage },
    statistic: 'Sum',
    period: FIVE_MINUTES,
  });
}

/**
 * "Add to Slack": the channels a workspace runs commands in are noted on `team#` items, and its uninstall
 * deletes its installation, then what the table keeps for those channels (shared/adapters/dynamo-team-data.ts):
 * deletes and attribute removals only (sub# / chan# updates are the subscriptions' grant).
 */
function allowUninstallPurge(fn: BridgeFunction, tableArn: string): void {
  const { prefixes } = TABLE;
  fn.allow(
    'TeamChannels',
    ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    [tableArn],
    Store.leadingKeys(prefixes.team),
  );
  fn.allow('UninstallDeletesInstallation', ['dynamodb:DeleteItem'], [tableArn], Store.leadingKeys(prefixes.installation));
  // The workspace gate serves the workspaces that installed the app (shared/slack-app/workspace-gate.ts).
  fn.allow('GateReadsInstallations', ['dynamodb:GetItem'], [tableArn], Store.leadingKeys(prefixes.installation));
  fn.allow(
    'UninstallPurgesChannels',
    ['dynamodb:DeleteItem'],
    [tableArn],
    Store.leadingKeys(prefixes.subscriptionsOfChannel, prefixes.audit, prefixes.quiet, prefixes.held),
  );
  fn.allow('UninstallPurgesSchedules', ['dynamodb:UpdateItem'], [tableArn], Store.leadingKeys(prefixes.held, prefixes.weeklySettings));
}
