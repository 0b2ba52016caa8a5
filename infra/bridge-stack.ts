/**
 * The deployable bridge: HTTP API → ingest Lambda → SQS (+ DLQ) → digest Lambda → Slack, one
 * DynamoDB table, three secrets, alarms and a dashboard.
 *
 * Bundling: esbuild runs locally (never Docker), output CommonJS (`index.js`), minified with
 * source maps and the AWS SDK bundled, so the deployed code uses the SDK versions of the lockfile.
 * CommonJS is used because every dependency (AWS SDK v3, Powertools) ships it and it needs no
 * `createRequire` banner; handler code must therefore not use top-level await or `import.meta`.
 */
import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination, PayloadFormatVersion } from 'aws-cdk-lib/aws-apigatewayv2';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { BridgeConfig } from './config';
import { METRICS_NAMESPACE, Monitoring } from './monitoring';
import { BridgeSecret } from './secrets';
import { STACK_OUTPUTS, stackNameFor } from '../shared/contracts';

/** Repository root: entries, lockfile and tsconfig are resolved from here. */
const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Lambda runtime of both functions (the newest Node.js runtime in this aws-cdk-lib). */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;
export const INGEST_TIMEOUT_SECONDS = 8; // the sender gives up after 10 s
export const DIGEST_TIMEOUT_SECONDS = 60;
/** A digest claim's lease must outlive one invocation, or a retry could post twice. */
export const DIGEST_LEASE_SECONDS = 2 * DIGEST_TIMEOUT_SECONDS;
export const QUEUE_RETENTION_DAYS = 4;
export const DLQ_RETENTION_DAYS = 14;
/** Seconds the ingest function accepts between a signature's t and now (spec default). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;
export const SECRETS_CACHE_SECONDS = 300;

/** CloudFormation output keys (stable: the CLI reads them). */
/** Output keys: one list shared with the CLI. */
export const OUTPUTS = STACK_OUTPUTS;

export { stackNameFor };

export interface BridgeStackProps extends StackProps {
  readonly config: BridgeConfig;
}

export class BridgeStack extends Stack {
  readonly table: Table;
  readonly queue: Queue;
  readonly dlq: Queue;
  readonly ingestFunction: NodejsFunction;
  readonly digestFunction: NodejsFunction;
  readonly api: HttpApi;
  readonly monitoring: Monitoring;
  readonly secrets: { readonly readApiKey: ISecret; readonly slackToken: ISecret; readonly signingSecrets: ISecret };

  constructor(scope: Construct, id: string, props: BridgeStackProps) {
    super(scope, id, {
      description: `Webhook-to-Slack bridge for the AI-visibility monitoring service (${props.config.stage})`,
      ...props,
    });
    const config = props.config;
    Tags.of(this).add('project', 'visibility-slack-bridge');
    Tags.of(this).add('stage', config.stage);

    // --- Storage -------------------------------------------------------------------------------
    this.table = new Table(this, 'Table', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: 'expires_at',
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: config.tableDeletionProtection,
      removalPolicy: config.tableRemovalPolicy === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
    });

    this.dlq = new Queue(this, 'DigestDlq', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(DLQ_RETENTION_DAYS),
    });
    // AWS guidance: visibility timeout ≥ 6 × function timeout (+ batching window), so a message is
    // not handed to a second poller while the first batch is still being retried by Lambda.
    this.queue = new Queue(this, 'DigestQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(QUEUE_RETENTION_DAYS),
      visibilityTimeout: Duration.seconds(6 * DIGEST_TIMEOUT_SECONDS + config.digestBatchWindowSeconds),
      deadLetterQueue: { queue: this.dlq, maxReceiveCount: config.maxReceiveCount },
    });

    // --- Secrets -------------------------------------------------------------------------------
    const readApiKey = new BridgeSecret(this, 'ReadApiKey', {
      existingArn: config.readApiKeySecretArn,
      description: `Read-API key of the visibility service, sent as "Authorization: Bearer" by the digest function (${config.stage}).`,
      exampleValue: "'<read-API key>'",
    });
    const slackToken = new BridgeSecret(this, 'SlackToken', {
      existingArn: config.slackTokenSecretArn,
      description: `Slack bot token (xoxb-...) the digest function posts with (${config.stage}).`,
      exampleValue: "'<xoxb-... Slack bot token>'",
    });
    const signingSecrets = new BridgeSecret(this, 'SigningSecrets', {
      existingArn: config.signingSecretsSecretArn,
      description:
        `Webhook signing secrets as a JSON array of strings; several may be live during a rotation (${config.stage}).`,
      exampleValue: `'["<webhook signing secret>"]'`,
    });
    this.secrets = { readApiKey: readApiKey.secret, slackToken: slackToken.secret, signingSecrets: signingSecrets.secret };

    // --- Functions -----------------------------------------------------------------------------
    const common = (service: 'ingest' | 'digest'): Partial<NodejsFunctionProps> => ({
      entry: `${PROJECT_ROOT}functions/${service}/handler.ts`,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.CJS,
        target: 'node24',
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        bundleAwsSDK: true,
      },
    });
    const powertools = (service: 'ingest' | 'digest'): Record<string, string> => ({
      POWERTOOLS_SERVICE_NAME: service,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      POWERTOOLS_LOG_LEVEL: config.logLevel,
      NODE_OPTIONS: '--enable-source-maps',
    });

    const ingestLogs = this.logGroup('IngestLogs', config);
    const ingestRole = this.functionRole('IngestRole', 'ingest', ingestLogs);
    this.ingestFunction = new NodejsFunction(this, 'IngestFunction', {
      ...common('ingest'),
      description: 'Verifies, de-duplicates and queues webhook deliveries',
      memorySize: 512,
      timeout: Duration.seconds(INGEST_TIMEOUT_SECONDS),
      logGroup: ingestLogs,
      role: ingestRole,
      environment: {
        TABLE_NAME: this.table.tableName,
        QUEUE_URL: this.queue.queueUrl,
        SIGNING_SECRETS_SECRET_ARN: signingSecrets.secret.secretArn,
        SIGNATURE_TOLERANCE_SECONDS: String(SIGNATURE_TOLERANCE_SECONDS),
        DEDUP_RETENTION_DAYS: String(config.dedupRetentionDays),
        SECRETS_CACHE_SECONDS: String(SECRETS_CACHE_SECONDS),
        ...powertools('ingest'),
      },
    });
    // Explicit statements: the grant* helpers add actions the function does not use
    // (BatchWriteItem, DescribeTable, GetQueueAttributes, DescribeSecret, ...).
    ingestRole.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'DeliveryDedupRecords',
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        resources: [this.table.tableArn],
      }),
    );
    ingestRole.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'EnqueueEvents', actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }),
    );
    ingestRole.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadSigningSecrets',
        actions: ['secretsmanager:GetSecretValue'],
        resources: [signingSecrets.secret.secretArn],
      }),
    );

    const digestLogs = this.logGroup('DigestLogs', config);
    const digestRole = this.functionRole('DigestRole', 'digest', digestLogs);
    this.digestFunction = new NodejsFunction(this, 'DigestFunction', {
      ...common('digest'),
      description: 'Reads the visibility figures of queued events and posts Slack digests',
      memorySize: 512,
      timeout: Duration.seconds(DIGEST_TIMEOUT_SECONDS),
      logGroup: digestLogs,
      role: digestRole,
      environment: {
        TABLE_NAME: this.table.tableName,
        // Failed messages get their retry delay with ChangeMessageVisibility (granted by the event source).
        QUEUE_URL: this.queue.queueUrl,
        READ_API_BASE_URL: config.readApiBaseUrl,
        READ_API_KEY_SECRET_ARN: readApiKey.secret.secretArn,
        SLACK_BOT_TOKEN_SECRET_ARN: slackToken.secret.secretArn,
        SLACK_DEFAULT_CHANNEL: config.slackDefaultChannel,
        SLACK_PROJECT_CHANNELS: JSON.stringify(config.projectChannels),
        VISIBILITY_RANGE: config.visibilityRange,
        GAPS_PAGE_SIZE: String(config.gapsPageSize),
        SECRETS_CACHE_SECONDS: String(SECRETS_CACHE_SECONDS),
        DIGEST_LEASE_SECONDS: String(DIGEST_LEASE_SECONDS),
        ...powertools('digest'),
      },
    });
    digestRole.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'DigestClaimsAndSnapshots',
        // Claims, progress, snapshots and the newest-run mark are all conditional updates.
        actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
      }),
    );
    digestRole.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadApiKeyAndSlackToken',
        actions: ['secretsmanager:GetSecretValue'],
        resources: [readApiKey.secret.secretArn, slackToken.secret.secretArn],
      }),
    );
    // The event source grants the consume actions (ReceiveMessage, DeleteMessage,
    // ChangeMessageVisibility, GetQueueAttributes, GetQueueUrl) on this queue only.
    this.digestFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: config.digestBatchSize,
        maxBatchingWindow: Duration.seconds(config.digestBatchWindowSeconds),
        reportBatchItemFailures: true,
        // Caps parallel digests so the read API's rate limit is not exhausted by a burst.
        maxConcurrency: config.digestMaxConcurrency,
      }),
    );

    // --- HTTP API ------------------------------------------------------------------------------
    this.api = new HttpApi(this, 'WebhookApi', {
      apiName: `visibility-slack-bridge-${config.stage}`,
      description: 'Receives signed webhook deliveries of the visibility service',
      createDefaultStage: false,
    });
    const routes = this.api.addRoutes({
      path: '/webhook',
      methods: [HttpMethod.POST],
      integration: new HttpLambdaIntegration('IngestIntegration', this.ingestFunction, {
        payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      }),
    });
    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'The sender (visibility service webhooks) cannot present credentials an API Gateway authorizer understands; ' +
          'every delivery is authenticated by its HMAC-SHA256 X-Service-Signature over the raw body, verified in the ' +
          'ingest function before anything else (spec section 5).',
      });
    }
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: config.logRetentionDays as RetentionDays });
    const stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: config.apiThrottleRateLimit, burstLimit: config.apiThrottleBurstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
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
          }),
        ),
      },
    });

    // --- Monitoring ----------------------------------------------------------------------------
    this.monitoring = new Monitoring(this, 'Monitoring', {
      stage: config.stage,
      alarmEmail: config.alarmEmail,
      alarmTopicArn: config.alarmTopicArn,
      silenceAlarmHours: config.silenceAlarmHours,
      signatureRejectedAlarmThreshold: config.signatureRejectedAlarmThreshold,
      api: this.api,
      ingestFunction: this.ingestFunction,
      digestFunction: this.digestFunction,
      queue: this.queue,
      dlq: this.dlq,
    });

    // --- Outputs -------------------------------------------------------------------------------
    const output = (key: string, value: string, description: string): void => {
      new CfnOutput(this, key, { value, description });
    };
    output(OUTPUTS.webhookUrl, `${stage.url}webhook`, 'URL to register as the webhook endpoint (events run.completed and draft.ready)');
    output(OUTPUTS.queueUrl, this.queue.queueUrl, 'Digest queue');
    output(OUTPUTS.dlqUrl, this.dlq.queueUrl, 'Dead-letter queue of the digest queue');
    output(OUTPUTS.tableName, this.table.tableName, 'DynamoDB table (dedup records, digest claims, snapshots)');
    output(OUTPUTS.readApiKeySecretArn, readApiKey.secret.secretArn, 'Secret with the read-API key');
    output(OUTPUTS.slackTokenSecretArn, slackToken.secret.secretArn, 'Secret with the Slack bot token');
    output(OUTPUTS.signingSecretsSecretArn, signingSecrets.secret.secretArn, 'Secret with the webhook signing secrets (JSON array)');
    output(OUTPUTS.putReadApiKeyCommand, readApiKey.putValueCommand(), 'Puts the read-API key');
    output(OUTPUTS.putSlackTokenCommand, slackToken.putValueCommand(), 'Puts the Slack bot token');
    output(
      OUTPUTS.putSigningSecretsCommand,
      signingSecrets.putValueCommand(),
      'Puts the webhook signing secrets; list the old and the new secret while rotating',
    );
    output(OUTPUTS.ingestFunctionName, this.ingestFunction.functionName, 'Ingest function');
    output(OUTPUTS.digestFunctionName, this.digestFunction.functionName, 'Digest function');
    output(OUTPUTS.alarmTopicArn, this.monitoring.topic.topicArn, 'SNS topic the alarms notify');
    output(OUTPUTS.dashboardName, this.monitoring.dashboard.dashboardName, 'CloudWatch dashboard');
    // Read by `bridge doctor` to check the key against the right API and the bot's channel membership.
    output(OUTPUTS.readApiBaseUrl, config.readApiBaseUrl, 'Read API base URL');
    output(OUTPUTS.slackDefaultChannel, config.slackDefaultChannel, 'Default Slack channel');
    output(OUTPUTS.slackProjectChannels, JSON.stringify(config.projectChannels), 'Project id → Slack channel (JSON)');
  }

  private logGroup(id: string, config: BridgeConfig): LogGroup {
    return new LogGroup(this, id, { retention: config.logRetentionDays as RetentionDays });
  }

  /** A role that may only write to its own log group; the function's statements are added later. */
  private functionRole(id: string, service: string, logGroup: LogGroup): Role {
    const role = new Role(this, id, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${service} function`,
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'WriteOwnLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    return role;
  }
}
