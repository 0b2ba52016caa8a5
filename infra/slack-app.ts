/**
 * The Slack app: the Slack function behind `POST /slack/commands` and `POST /slack/interactions`
 * on the webhook's HTTP API, its signing secret, the queue of deferred commands (./slack-commands),
 * least-privilege roles (its own, and the table statements the digest worker needs for
 * subscriptions, pacing and per-channel claims), its alarms and the values the stack outputs for
 * `bridge slack manifest`.
 */
import { Validations } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { HttpMethod, PayloadFormatVersion, type HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import {
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  DIGEST_DEFAULTS,
  ENV,
  HTTP_PATHS,
  METRIC_DIMENSIONS,
  METRICS_NAMESPACE,
  SERVICES,
  SLACK_APP_METRICS,
  STACK_OUTPUTS,
  TABLE,
  type SlackAppMetricName,
} from '../shared/contracts';
import { FIVE_MINUTES } from './metrics';
import type { AlarmSpec } from './alarms';
import { BridgeFunction } from './bridge-function';
import type { BridgeConfig } from './config';
import { BridgeSecret } from './secrets';
import { SlackCommands } from './slack-commands';
import { Store } from './store';

/** Slack waits 3 s for the answer; a slower function is of no use to anyone. */
export const SLACK_TIMEOUT_SECONDS = 5;

export interface SlackAppProps {
  readonly config: BridgeConfig;
  readonly api: HttpApi;
  readonly table: Table;
  /** The digest worker's function: answers deferred commands (from their own queue), fans digests out, paces posts. */
  readonly digestFunction: BridgeFunction;
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
    this.addRoutes();
    grantDigestWorker(props);
  }

  /** Base URL of the API, without a trailing slash (the manifest's request URLs are this plus HTTP_PATHS). */
  get baseUrl(): string {
    return this.api.apiEndpoint;
  }

  get commandsUrl(): string {
    return `${this.baseUrl}${HTTP_PATHS.slackCommands}`;
  }

  get interactionsUrl(): string {
    return `${this.baseUrl}${HTTP_PATHS.slackInteractions}`;
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
        metric: slackMetric(SLACK_APP_METRICS.slackRateLimited, this.config.stage, SERVICES.digest),
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
      ...this.commands.alarmSpecs(),
    ];
  }

  /** [output key, value, description] of the Slack app's stack outputs. */
  outputs(): [string, string, string][] {
    const secret = this.signingSecret;
    return [
      [STACK_OUTPUTS.apiBaseUrl, this.baseUrl, 'Base URL of the API (`bridge slack manifest` builds the Slack request URLs from it)'],
      [STACK_OUTPUTS.slackCommandsUrl, this.commandsUrl, 'Request URL of the /visibility slash command'],
      [STACK_OUTPUTS.slackInteractionsUrl, this.interactionsUrl, 'Request URL of the Slack app interactivity (buttons)'],
      [STACK_OUTPUTS.slackSigningSecretSecretArn, secret.secret.secretArn, 'Secret with the Slack app signing secret'],
      [STACK_OUTPUTS.putSlackSigningSecretCommand, secret.putValueCommand(), 'Puts the Slack app signing secret'],
      [STACK_OUTPUTS.slackFunctionName, this.function.fn.functionName, 'Slack function'],
      ...this.commands.outputs(),
    ];
  }

  private createFunction(props: SlackAppProps): BridgeFunction {
    const fn = new BridgeFunction(this, 'Slack', {
      service: SERVICES.slack,
      config: props.config,
      description: 'Verifies and answers the Slack app (/visibility commands and digest buttons)',
      timeoutSeconds: SLACK_TIMEOUT_SECONDS,
      environment: {
        [ENV.tableName]: props.table.tableName,
        [ENV.commandsQueueUrl]: this.commands.queue.queueUrl,
        [ENV.slackSigningSecretSecretArn]: this.signingSecret.secret.secretArn,
        [ENV.signatureToleranceSeconds]: String(DEFAULT_SIGNATURE_TOLERANCE_SECONDS),
        [ENV.secretsCacheSeconds]: String(DIGEST_DEFAULTS.secretsCacheSeconds),
      },
    });
    fn.allow(
      'SubscriptionsOfProjectsAndChannels',
      ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'],
      [props.table.tableArn],
      Store.leadingKeys(TABLE.prefixes.subscriptionsOfProject, TABLE.prefixes.subscriptionsOfChannel),
    );
    this.commands.grantSend(fn);
    fn.allow('ReadSlackSigningSecret', ['secretsmanager:GetSecretValue'], [this.signingSecret.secret.secretArn]);
    return fn;
  }

  private addRoutes(): void {
    const integration = new HttpLambdaIntegration('SlackIntegration', this.function.fn, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
    });
    for (const path of [HTTP_PATHS.slackCommands, HTTP_PATHS.slackInteractions]) {
      for (const route of this.api.addRoutes({ path, methods: [HttpMethod.POST], integration })) {
        Validations.of(route).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            'Slack cannot present credentials an API Gateway authorizer understands; every request is authenticated by ' +
            'its X-Slack-Signature (HMAC-SHA256 with the app signing secret over the timestamp and raw body), verified ' +
            'in the Slack function before anything else.',
        });
      }
    }
  }
}

/**
 * The digest worker's share of the Slack app: it answers deferred commands (subscribe writes both
 * subscription items), routes digests by the subscriptions, and paces and claims each channel's post.
 */
function grantDigestWorker(props: SlackAppProps): void {
  const { digestFunction: fn, table } = props;
  fn.allow(
    'SlackSubscriptions',
    ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'],
    [table.tableArn],
    Store.leadingKeys(TABLE.prefixes.subscriptionsOfProject, TABLE.prefixes.subscriptionsOfChannel),
  );
  fn.allow(
    'SlackPacingAndChannelPosts',
    ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
    [table.tableArn],
    Store.leadingKeys(TABLE.prefixes.pace, TABLE.prefixes.channelPost),
  );
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
