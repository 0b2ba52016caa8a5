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
  /** Deferred slash commands' own queue (Slack function sends, the digest function's second event source reads). */
  commandsQueueUrl: 'COMMANDS_QUEUE_URL',
  /** Dead-letter queue: where ingest and digest quarantine what they cannot process (reason as an attribute). */
  dlqUrl: 'DLQ_URL',
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
  /** Seconds one record may need: a record is handed back, not started, when less time is left. */
  digestRecordBudgetSeconds: 'DIGEST_RECORD_BUDGET_SECONDS',
  /** Optional https template with {project_id}, {run_id}, {prompt_id}, {asset_id}: links in digests. */
  dashboardUrlTemplate: 'DASHBOARD_URL_TEMPLATE',
  /** 'full' (default) or 'changes': quiet runs post one compact line. */
  digestMode: 'DIGEST_MODE',
  /** Milliseconds between posts to one channel (default SLACK_APP_DEFAULTS.paceIntervalMs); the local Slack, which has no limit, runs faster. */
  slackPaceIntervalMs: 'SLACK_PACE_INTERVAL_MS',
  stage: 'BRIDGE_STAGE',
  powertoolsServiceName: 'POWERTOOLS_SERVICE_NAME',
  powertoolsMetricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  powertoolsLogLevel: 'POWERTOOLS_LOG_LEVEL',
  awsEndpointDynamodb: 'AWS_ENDPOINT_URL_DYNAMODB',
  awsEndpointSqs: 'AWS_ENDPOINT_URL_SQS',
  /** The SDK's own service-specific endpoint variable (read from process.env by every Secrets Manager client). */
  awsEndpointSecretsManager: 'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  awsRegion: 'AWS_REGION',
  /** Secrets Manager ARN of the Slack app's signing secret (verifies /slack/commands and /slack/interactions). */
  slackSigningSecretSecretArn: 'SLACK_SIGNING_SECRET_SECRET_ARN',
  /** Local runs only: the Slack app's signing secret itself. */
  slackSigningSecret: 'SLACK_SIGNING_SECRET',
} as const;
export type EnvName = (typeof ENV)[keyof typeof ENV];

/** The functions, as the `service` metric dimension and Powertools service name. */
export const SERVICES = { ingest: 'ingest', digest: 'digest', slack: 'slack' } as const;
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
  /** The signing secrets secret holds a value that does not parse: the last good verifier stays in use. */
  signingSecretsInvalid: 'SigningSecretsInvalid',
  /** The signing secrets could not be read (placeholder, deleted, AccessDenied, outage): the last good verifier stays in use for a bounded time. */
  signingSecretsUnreadable: 'SigningSecretsUnreadable',
} as const;
export type IngestMetricName = (typeof INGEST_METRICS)[keyof typeof INGEST_METRICS];

/** Count metrics of the digest function. */
export const DIGEST_METRICS = {
  digestPosted: 'DigestPosted',
  draftNoticePosted: 'DraftNoticePosted',
  eventSuperseded: 'EventSuperseded',
  eventDuplicate: 'EventDuplicate',
  digestFailed: 'DigestFailed',
  /** An unusable queued record sent to the DLQ with its reason (never deleted). */
  messageQuarantined: 'MessageQuarantined',
  /** Records handed back in a partial batch response (retried, and DLQ'd after maxReceiveCount). */
  batchItemFailed: 'BatchItemFailed',
  /** A run.completed posted nowhere because every channel of its project muted it: handled, for UndeliveredDigests. */
  runMuted: 'RunMuted',
} as const;
export type DigestMetricName = (typeof DIGEST_METRICS)[keyof typeof DIGEST_METRICS];

/**
 * Metrics of the webhook API that the stack derives from its access log (metric filters), with
 * dimensions {service: WEBHOOK_API_SERVICE, stage}. API Gateway HTTP APIs publish no 429 metric.
 */
export const WEBHOOK_API_SERVICE = 'webhook-api';
export const WEBHOOK_API_METRICS = { throttled: 'WebhookThrottled' } as const;

/** Count metrics of the Slack app endpoints and of the work they hand to the digest worker. */
export const SLACK_APP_METRICS = {
  /** A request to /slack/commands or /slack/interactions refused before anything was done (bad/stale/missing signature). */
  slackRequestRejected: 'SlackRequestRejected',
  slackCommandAnswered: 'SlackCommandAnswered',
  /** A command handed to the queue (read-API work) and answered later via response_url. */
  slackCommandDeferred: 'SlackCommandDeferred',
  slackActionHandled: 'SlackActionHandled',
  /** Deferred work whose answer could not be delivered to response_url. */
  slackResponseFailed: 'SlackResponseFailed',
  /** A post that had to wait for its channel's pace, or was handed back with a delay. */
  slackPostPaced: 'SlackPostPaced',
  /** Slack answered a paced post 429: the channel's slots were moved past its Retry-After. */
  slackRateLimited: 'SlackRateLimited',
  /** A digest not posted to a channel because the channel muted the project. */
  digestMutedSkip: 'DigestMutedSkip',
  /** A subscribed channel Slack refused for good (bot not in it, archived…): marked broken and skipped, the run goes on. */
  digestChannelRefused: 'DigestChannelRefused',
  /** The Slack signing secret holds a value that does not parse: the last good verifier (if any) stays in use. */
  slackSigningSecretInvalid: 'SlackSigningSecretInvalid',
  /** The Slack signing secret could not be read (placeholder, deleted, AccessDenied, outage): the last good verifier serves for a bounded time. */
  slackSigningSecretUnreadable: 'SlackSigningSecretUnreadable',
} as const;
export type SlackAppMetricName = (typeof SLACK_APP_METRICS)[keyof typeof SLACK_APP_METRICS];

export type MetricName = IngestMetricName | DigestMetricName | SlackAppMetricName;

export type AnyMetricName = MetricName | (typeof WEBHOOK_API_METRICS)[keyof typeof WEBHOOK_API_METRICS];

/** Who emits a metric: a function (its `service` dimension) or the webhook API's access log. */
export type MetricEmitter = ServiceName | typeof WEBHOOK_API_SERVICE;

/**
 * What watches a metric: the alarms (stack ids) it feeds, and whether it counts a failure. A failure
 * without an alarm has its reason in docs/DEPLOY.md ("Metrics without an alarm"), quoted in `unalarmed`.
 */
export interface MetricSpec {
  emitters: readonly MetricEmitter[];
  failure: boolean;
  alarms: readonly string[];
  unalarmed?: string | undefined;
}

const { ingest, digest, slack } = SERVICES;

/**
 * The metrics registry: every custom metric, who emits it, and its alarms. A mapped type, so a metric
 * added to *_METRICS fails `tsc` here until it is classified; test/infra/metric-registry.test.ts holds
 * the stack's alarms to it and the deploy rehearsal (local/rehearse/alarm-coverage.ts) the emitted metrics.
 */
export const METRIC_REGISTRY: { readonly [M in AnyMetricName]: MetricSpec } = {
  DeliveryAccepted: { emitters: [ingest], failure: false, alarms: [] },
  DeliveryDuplicate: { emitters: [ingest], failure: false, alarms: [] },
  DeliveryIgnored: { emitters: [ingest], failure: false, alarms: [] },
  DeliveryRejected: { emitters: [ingest], failure: true, alarms: ['NonSignatureRejections'] },
  SignatureRejected: { emitters: [ingest], failure: true, alarms: ['SignatureRejectedSpike', 'NonSignatureRejections'] },
  RunCompletedAccepted: { emitters: [ingest], failure: false, alarms: ['Silence', 'UndeliveredDigests'] },
  IngestUnavailable: {
    emitters: [ingest],
    failure: true,
    alarms: [],
    unalarmed: 'each is also a DeliveryRejected with an *_unavailable reason: NonSignatureRejections fires on the first',
  },
  DeliveryQuarantined: { emitters: [ingest], failure: true, alarms: ['DeliveryQuarantined'] },
  SigningSecretsInvalid: { emitters: [ingest], failure: true, alarms: ['SigningSecretsInvalid'] },
  SigningSecretsUnreadable: { emitters: [ingest], failure: true, alarms: ['SigningSecretsUnreadable'] },
  DigestPosted: { emitters: [digest], failure: false, alarms: ['UndeliveredDigests'] },
  DraftNoticePosted: { emitters: [digest], failure: false, alarms: [] },
  EventSuperseded: { emitters: [digest], failure: false, alarms: ['UndeliveredDigests'] },
  EventDuplicate: { emitters: [digest], failure: false, alarms: ['UndeliveredDigests'] },
  DigestFailed: {
    emitters: [digest],
    failure: true,
    alarms: [],
    unalarmed: 'every failed record is handed back and counted in BatchItemFailed (alarm BatchItemFailures)',
  },
  MessageQuarantined: { emitters: [digest], failure: true, alarms: ['MessageQuarantined'] },
  BatchItemFailed: { emitters: [digest], failure: true, alarms: ['BatchItemFailures'] },
  RunMuted: { emitters: [digest], failure: false, alarms: ['UndeliveredDigests'] },
  SlackRequestRejected: { emitters: [slack], failure: true, alarms: ['SlackRequestRejectedSpike'] },
  SlackCommandAnswered: { emitters: [slack, digest], failure: false, alarms: [] },
  SlackCommandDeferred: { emitters: [slack], failure: false, alarms: [] },
  SlackActionHandled: { emitters: [slack], failure: false, alarms: [] },
  SlackResponseFailed: { emitters: [slack, digest], failure: true, alarms: ['SlackAnswersUndelivered'] },
  SlackPostPaced: { emitters: [digest], failure: false, alarms: [] },
  SlackRateLimited: { emitters: [digest], failure: true, alarms: ['SlackPaceRateLimited'] },
  DigestMutedSkip: { emitters: [digest], failure: false, alarms: [] },
  DigestChannelRefused: {
    emitters: [digest],
    failure: true,
    alarms: [],
    unalarmed: "a member's channel, not the bridge: the run goes on, and whoever subscribed it is told once in the home channel",
  },
  SlackSigningSecretInvalid: { emitters: [slack], failure: true, alarms: ['SlackSigningSecretUnusable'] },
  SlackSigningSecretUnreadable: { emitters: [slack], failure: true, alarms: ['SlackSigningSecretUnusable'] },
  WebhookThrottled: { emitters: [WEBHOOK_API_SERVICE], failure: true, alarms: ['WebhookThrottled'] },
};

/** Whether each custom metric counts a failure (from the registry). */
export const COUNTS_A_FAILURE: Readonly<Record<AnyMetricName, boolean>> = Object.fromEntries(
  Object.entries(METRIC_REGISTRY).map(([name, spec]) => [name, spec.failure]),
) as Record<AnyMetricName, boolean>;

/** HTTP paths of the API (API Gateway routes and the local gateway). */
export const HTTP_PATHS = { webhook: '/webhook', slackCommands: '/slack/commands', slackInteractions: '/slack/interactions' } as const;

/** Kinds of queue message beyond the webhook event envelope (`{event, received_at}`, which has no `kind`). */
export const QUEUE_MESSAGE_KINDS = {
  /** A slash command that needs the read API, answered by the digest worker via response_url. */
  slackCommand: 'slack_command',
  /** A signed delivery ingest could not process, kept in the DLQ with its raw bytes (shared/quarantine.ts). */
  quarantinedDelivery: 'quarantined_delivery',
} as const;

/** Signature timestamps further than this from now are refused (the service's documented window). */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

/** How a channel gets digests: `full` every digest; `changes` one compact line when nothing moved. */
export const DIGEST_MODES = ['full', 'changes'] as const;
export type DigestMode = (typeof DIGEST_MODES)[number];

/** Defaults of the digest configuration, shared by the stack's config and the function's env reader. */
export const DIGEST_DEFAULTS = {
  mode: 'full' as DigestMode,
  visibilityRange: '7d',
  gapsPageSize: 50,
  leaseSeconds: 120,
  recordBudgetSeconds: 32,
  secretsCacheSeconds: 300,
} as const;

/** Defaults of the ingest configuration. */
export const INGEST_DEFAULTS = {
  dedupRetentionDays: 3,
  secretsCacheSeconds: 300,
  /** How long the last good signing verifier stays in use while the secret cannot be read. */
  secretsMaxStaleSeconds: 3600,
} as const;

/** The one DynamoDB table: partition key, TTL attribute, key prefixes and attributes read across modules. */
export const TABLE = {
  partitionKey: 'pk',
  ttlAttribute: 'expires_at',
  prefixes: {
    delivery: 'delivery#',
    digest: 'digest#',
    snapshot: 'snapshot#',
    /** `sub#<project id>`: the project's subscribed channels, one attribute per channel (routing's source of truth). */
    subscriptionsOfProject: 'sub#',
    /** `chan#<channel id>`: index of the projects a channel subscribes (for `list`). */
    subscriptionsOfChannel: 'chan#',
    /** `pace#<channel id>`: the channel's posting pace (GCRA theoretical arrival time). */
    pace: 'pace#',
    /** `post#<channel id>#<event id>`: the claim that posts one event's digest to one channel exactly once. */
    channelPost: 'post#',
  },
  /** On `delivery#` records once enqueued; `bridge doctor` reads the newest. */
  acceptedAtAttribute: 'accepted_at',
  /** On `digest#` claims: the last failure of the event (`bridge dlq peek` shows it). */
  lastFailureAttribute: 'last_failure',
  /** On `digest#` claims: how many times the event was claimed (attempts). */
  attemptsAttribute: 'attempts',
} as const;

/** Defaults of the Slack app: the slash command and the per-channel posting pace (Slack: about 1 message/s/channel). */
export const SLACK_APP_DEFAULTS = {
  command: '/visibility',
  /** 10 % above Slack's 1 s: a Lambda's clock and network jitter never make two posts land closer than Slack allows. */
  paceIntervalMs: 1100,
  /** Posts a channel may take back to back before the pace applies: one, so a burst never meets a 429. */
  paceBurst: 1,
  /** Mute granted by the digest's "Mute 7 days" button. */
  buttonMuteDays: 7,
} as const;

/** Attribute-name prefixes inside `sub#` and `chan#` items (one attribute per channel / per project). */
export const SUBSCRIPTION_ATTRIBUTES = { channelPrefix: 'ch_', projectPrefix: 'pr_' } as const;

/** Key of the per-channel posting claim of an event. Channel ids hold no `#`, so the key splits unambiguously. */
export function channelPostKey(channel: string, eventId: string): string {
  return `${TABLE.prefixes.channelPost}${channel}#${eventId}`;
}

/** CloudFormation output keys the stack writes and `bridge` reads. */
export const STACK_OUTPUTS = {
  webhookUrl: 'WebhookUrl',
  queueUrl: 'QueueUrl',
  dlqUrl: 'DlqUrl',
  /** Queue of deferred slash commands, and its DLQ (answers nobody got). */
  commandsQueueUrl: 'CommandsQueueUrl',
  commandsDlqUrl: 'CommandsDlqUrl',
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
  slackSigningSecretSecretArn: 'SlackSigningSecretSecretArn',
  putSlackSigningSecretCommand: 'PutSlackSigningSecretCommand',
  /** Base URL of the API, for `bridge slack manifest` (request URLs are this plus HTTP_PATHS). */
  apiBaseUrl: 'ApiBaseUrl',
  /** Request URL of the `/visibility` slash command (the API base URL plus HTTP_PATHS.slackCommands). */
  slackCommandsUrl: 'SlackCommandsUrl',
  /** Request URL of the Slack app's interactivity (buttons). */
  slackInteractionsUrl: 'SlackInteractionsUrl',
  slackFunctionName: 'SlackFunctionName',
} as const;
export type StackOutputKey = (typeof STACK_OUTPUTS)[keyof typeof STACK_OUTPUTS];

/** Value a secret created by the stack holds until an operator puts the real one. */
export const SECRET_PLACEHOLDER = 'PLACEHOLDER';

export function stackNameFor(stage: string): string {
  return `VisibilitySlackBridge-${stage}`;
}

export const DEFAULT_STACK = stackNameFor('prod');

/** The `stage` metric dimension when BRIDGE_STAGE is unset (local runs, tests). */
export const DEFAULT_STAGE = 'default';
