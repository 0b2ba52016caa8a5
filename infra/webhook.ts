/**
 * The webhook: HTTP API (`POST /webhook`, and `POST /webhook/{connection}` for each connection's
 * own webhook) → ingest function, with stage throttling and JSON access logs. 429s are counted from
 * the access log (HTTP APIs publish no 429 metric).
 */
import { Validations } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination, PayloadFormatVersion } from 'aws-cdk-lib/aws-apigatewayv2';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { FilterPattern, LogGroup, MetricFilter, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  CONNECTION_WEBHOOK_ROUTE,
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  ENV,
  HTTP_PATHS,
  INGEST_DEFAULTS,
  METRIC_DIMENSIONS,
  METRICS_NAMESPACE,
  SERVICES,
  TABLE,
  WEBHOOK_API_METRICS,
  WEBHOOK_API_SERVICE,
} from '../shared/contracts';
import { BridgeFunction } from './bridge-function';
import type { BridgeConfig } from './config';
import { allowConnectionSecrets } from './connection-secrets';
import { Store } from './store';
import { SLACK_PATHS } from './slack-app';

export const INGEST_TIMEOUT_SECONDS = 8; // the sender gives up after 10 s

export interface WebhookProps {
  readonly config: BridgeConfig;
  readonly table: Table;
  readonly queue: IQueue;
  readonly dlq: IQueue;
  readonly signingSecrets: ISecret;
}

export class Webhook extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly function: BridgeFunction;
  readonly accessLogs: LogGroup;

  constructor(scope: Construct, id: string, props: WebhookProps) {
    super(scope, id);
    const { config } = props;
    this.function = this.createFunction(props);
    this.api = new HttpApi(this, 'Api', {
      apiName: `visibility-slack-bridge-${config.stage}`,
      description: 'Receives signed webhook deliveries of the visibility service',
      createDefaultStage: false,
      // With a custom domain (custom-domain.ts) the random execute-api host is closed: it is the one
      // address a flood could still aim at the stage throttle.
      disableExecuteApiEndpoint: config.customDomain !== undefined,
    });
    this.addRoute();
    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: config.logRetentionDays as RetentionDays });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: config.apiThrottleRateLimit, burstLimit: config.apiThrottleBurstLimit },
      accessLogSettings: { destination: new LogGroupLogDestination(this.accessLogs), format: accessLogFormat(config.stage) },
    });
    this.countThrottled();
  }

  /** The execute-api endpoint's webhook URL (the stack picks the public one: CloudFront, the custom domain or this). */
  get publicUrl(): string {
    return `${this.stage.url}${HTTP_PATHS.webhook.slice(1)}`;
  }

  private createFunction(props: WebhookProps): BridgeFunction {
    const fn = new BridgeFunction(this, 'Ingest', {
      service: SERVICES.ingest,
      config: props.config,
      description: 'Verifies, de-duplicates and queues webhook deliveries',
      timeoutSeconds: INGEST_TIMEOUT_SECONDS,
      environment: {
        [ENV.tableName]: props.table.tableName,
        [ENV.queueUrl]: props.queue.queueUrl,
        [ENV.dlqUrl]: props.dlq.queueUrl,
        [ENV.signingSecretsSecretArn]: props.signingSecrets.secretArn,
        [ENV.signatureToleranceSeconds]: String(DEFAULT_SIGNATURE_TOLERANCE_SECONDS),
        [ENV.dedupRetentionDays]: String(props.config.dedupRetentionDays),
        [ENV.secretsCacheSeconds]: String(INGEST_DEFAULTS.secretsCacheSeconds),
      },
    });
    const dedupActions = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];
    fn.allow('DeliveryDedupRecords', dedupActions, [props.table.tableArn], Store.leadingKeys(TABLE.prefixes.delivery));
    fn.allow('EnqueueEvents', ['sqs:SendMessage'], [props.queue.queueArn]);
    // Signed deliveries the bridge cannot process are kept (with their reason) and answered 2xx.
    fn.allow('QuarantineDeliveries', ['sqs:SendMessage'], [props.dlq.queueArn]);
    fn.allow('ReadSigningSecrets', ['secretsmanager:GetSecretValue'], [props.signingSecrets.secretArn]);
    // `/webhook/<id>`: the connection's item, then its own secret (and no other connection's item writes).
    fn.allow('ReadConnections', ['dynamodb:GetItem'], [props.table.tableArn], Store.leadingKeys(TABLE.prefixes.connection));
    allowConnectionSecrets(fn, props.config.stage);
    return fn;
  }

  private addRoute(): void {
    const integration = new HttpLambdaIntegration('IngestIntegration', this.function.fn, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
    });
    const routes = [HTTP_PATHS.webhook, CONNECTION_WEBHOOK_ROUTE].flatMap((path) =>
      this.api.addRoutes({ path, methods: [HttpMethod.POST], integration }),
    );
    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'The sender (visibility service webhooks) cannot present credentials an API Gateway authorizer understands; ' +
          'every delivery is authenticated by its HMAC-SHA256 X-Service-Signature over the raw body, verified in the ' +
          'ingest function before anything else (spec section 5).',
      });
    }
  }

  /**
   * WebhookThrottled {service, stage}: requests API Gateway answered 429 (stage throttle). The 4xx
   * metric mixes them with the ingest function's own 401/413 answers, so the access log is the
   * only exact source; the stage and service are written into every log line for the dimensions.
   * The Slack routes have their own throttle (slack-app.ts): their 429s say nothing about the webhook.
   */
  private countThrottled(): void {
    new MetricFilter(this, 'ThrottledFilter', {
      logGroup: this.accessLogs,
      filterPattern: FilterPattern.all(
        FilterPattern.stringValue('$.status', '=', '429'),
        ...SLACK_PATHS.map((path) => FilterPattern.stringValue('$.routeKey', '!=', `POST ${path}`)),
      ),
      metricNamespace: METRICS_NAMESPACE,
      metricName: WEBHOOK_API_METRICS.throttled,
      metricValue: '1',
      dimensions: { [METRIC_DIMENSIONS.service]: '$.service', [METRIC_DIMENSIONS.stage]: '$.bridgeStage' },
    });
  }
}

function accessLogFormat(stage: string): AccessLogFormat {
  return AccessLogFormat.custom(
    JSON.stringify({
      requestId: '$context.requestId',
      requestTime: '$context.requestTime',
      ip: '$context.identity.sourceIp',
      userAgent: '$context.identity.userAgent',
      routeKey: '$context.routeKey',
      status: '$context.status',
      responseLength: '$context.responseLength',
      responseLatency: '$context.responseLatency',
      integrationStatus: '$context.integrationStatus',
      integrationLatency: '$context.integrationLatency',
      integrationError: '$context.integrationErrorMessage',
      error: '$context.error.message',
      service: WEBHOOK_API_SERVICE,
      bridgeStage: stage,
    }),
  );
}
