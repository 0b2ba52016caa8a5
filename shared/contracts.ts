/**
 * Every name that crosses the deploy boundary, in one module: environment variables the stack and
 * the local stack set and the functions read, metric names the code emits and the alarms read, the
 * HTTP paths, table key prefixes and attributes the CLI reads, stack output keys, and the defaults
 * both sides must agree on. Import from here; a renamed entry then fails `tsc`, not an alarm.
 *
 * Kept free of imports so infra, functions, local and cli can all load it cheaply.
 */

/** Environment variables of the two functions (set by infra/ and local/, read by functions/). */
export const ENV = {
  tableName: 'TABLE_NAME',
  queueUrl: 'QUEUE_URL',
  signingSecretsSecretArn: 'SIGNING_SECRETS_SECRET_ARN',
  /** Local runs only: the signing secrets themselves (JSON array). */
  signingSecrets: 'SIGNING_SECRETS',
  signatureToleranceSeconds: 'SIGNATURE_TOLERANCE_SECONDS',
  dedupRetentionDays: 'DEDUP_RETENTION_DAYS',
  secretsCacheSeconds: 'SECRETS_CACHE_SECONDS',
  readApiBaseUrl: 'READ_API_BASE_URL',
  readApiKeySecretArn: 'READ_API_KEY_SECRET_ARN',
  /** Local runs only. */
  readApiKey: 'READ_API_KEY',
  slackBotTokenSecretArn: 'SLACK_BOT_TOKEN_SECRET_ARN',
  /** Local runs only. */
  slackBotToken: 'SLACK_BOT_TOKEN',
  slackApiUrl: 'SLACK_API_URL',
  slackDefaultChannel: 'SLACK_DEFAULT_CHANNEL',
  slackProjectChannels: 'SLACK_PROJECT_CHANNELS',
  visibilityRange: 'VISIBILITY_RANGE',
  gapsPageSize: 'GAPS_PAGE_SIZE',
  digestLeaseSeconds: 'DIGEST_LEASE_SECONDS',
  stage: 'BRIDGE_STAGE',
  powertoolsServiceName: 'POWERTOOLS_SERVICE_NAME',
  powertoolsMetricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  powertoolsLogLevel: 'POWERTOOLS_LOG_LEVEL',
  awsEndpointDynamodb: 'AWS_ENDPOINT_URL_DYNAMODB',
  awsEndpointSqs: 'AWS_ENDPOINT_URL_SQS',
  /** The SDK's own service-specific endpoint variable (read from process.env by every Secrets Manager client). */
  awsEndpointSecretsManager: 'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  awsRegion: 'AWS_REGION',
} as const;
export type EnvName = (typeof ENV)[keyof typeof ENV];

/** The two functions, as the `service` metric dimension and Powertools service name. */
export const SERVICES = { ingest: 'ingest', digest: 'digest' } as const;
export type ServiceName = (typeof SERVICES)[keyof typeof SERVICES];

/** CloudWatch namespace of the custom metrics (Powertools EMF). */
export const METRICS_NAMESPACE = 'VisibilitySlackBridge';

/** Metric dimensions. `service` is on every metric; `reason` on a rejection breakdown; `stage` per deployment. */
export const METRIC_DIMENSIONS = { service: 'service', reason: 'reason', stage: 'stage' } as const;

/** Count metrics of the ingest function. */
export const INGEST_METRICS = {
  deliveryAccepted: 'DeliveryAccepted',
  deliveryDuplicate: 'DeliveryDuplicate',
  deliveryIgnored: 'DeliveryIgnored',
  deliveryRejected: 'DeliveryRejected',
  signatureRejected: 'SignatureRejected',
  runCompletedAccepted: 'RunCompletedAccepted',
  ingestUnavailable: 'IngestUnavailable',
  /** Signed but not processable (unknown schema, unstorable id): kept in the DLQ with its reason, answered 2xx. */
  deliveryQuarantined: 'DeliveryQuarantined',
} as const;
export type IngestMetricName = (typeof INGEST_METRICS)[keyof typeof INGEST_METRICS];

/** Count metrics of the digest function. */
export const DIGEST_METRICS = {
  digestPosted: 'DigestPosted',
  draftNoticePosted: 'DraftNoticePosted',
  eventSuperseded: 'EventSuperseded',
  eventDuplicate: 'EventDuplicate',
  digestFailed: 'DigestFailed',
  messageDropped: 'MessageDropped',
  /** An unusable queued record sent to the DLQ with its reason (never deleted). */
  messageQuarantined: 'MessageQuarantined',
  /** Records handed back in a partial batch response (retried, and DLQ'd after maxReceiveCount). */
  batchItemFailed: 'BatchItemFailed',
} as const;
export type DigestMetricName = (typeof DIGEST_METRICS)[keyof typeof DIGEST_METRICS];

export type MetricName = IngestMetricName | DigestMetricName;

/** HTTP paths of the API (API Gateway routes and the local gateway). */
export const HTTP_PATHS = { webhook: '/webhook' } as const;

/** Signature timestamps further than this from now are refused (the service's documented window). */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

/** Defaults of the digest configuration, shared by the stack's config and the function's env reader. */
export const DIGEST_DEFAULTS = {
  visibilityRange: '7d',
  gapsPageSize: 50,
  leaseSeconds: 120,
  secretsCacheSeconds: 300,
} as const;

/** Defaults of the ingest configuration. */
export const INGEST_DEFAULTS = {
  dedupRetentionDays: 3,
  secretsCacheSeconds: 300,
} as const;

/** The one DynamoDB table: partition key, TTL attribute, key prefixes and attributes read across modules. */
export const TABLE = {
  partitionKey: 'pk',
  ttlAttribute: 'expires_at',
  prefixes: { delivery: 'delivery#', digest: 'digest#', snapshot: 'snapshot#' },
  /** On `delivery#` records once enqueued; `bridge doctor` reads the newest. */
  acceptedAtAttribute: 'accepted_at',
} as const;

/** CloudFormation output keys the stack writes and `bridge` reads. */
export const STACK_OUTPUTS = {
  webhookUrl: 'WebhookUrl',
  queueUrl: 'QueueUrl',
  dlqUrl: 'DlqUrl',
  tableName: 'TableName',
  readApiKeySecretArn: 'ReadApiKeySecretArn',
  slackTokenSecretArn: 'SlackTokenSecretArn',
  signingSecretsSecretArn: 'SigningSecretsSecretArn',
  putReadApiKeyCommand: 'PutReadApiKeyCommand',
  putSlackTokenCommand: 'PutSlackTokenCommand',
  putSigningSecretsCommand: 'PutSigningSecretsCommand',
  ingestFunctionName: 'IngestFunctionName',
  digestFunctionName: 'DigestFunctionName',
  alarmTopicArn: 'AlarmTopicArn',
  dashboardName: 'DashboardName',
  readApiBaseUrl: 'ReadApiBaseUrl',
  slackDefaultChannel: 'SlackDefaultChannel',
  slackProjectChannels: 'SlackProjectChannels',
} as const;
export type StackOutputKey = (typeof STACK_OUTPUTS)[keyof typeof STACK_OUTPUTS];

/** Value a secret created by the stack holds until an operator puts the real one. */
export const SECRET_PLACEHOLDER = 'PLACEHOLDER';

export function stackNameFor(stage: string): string {
  return `VisibilitySlackBridge-${stage}`;
}

export const DEFAULT_STACK = stackNameFor('prod');
