/**
 * Every path that loses or delays a digest has an alarm. Each alarm is named `<stack>-<id>` (unique
 * per account and region, since the stack name holds the stage) so the alarm topic's key policy
 * can name exactly these alarms without depending on them.
 */
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DIGEST_METRICS, INGEST_METRICS } from '../shared/contracts';
import type { BridgeConfig } from './config';
import { digestMetric, FIVE_MINUTES, ingestMetric, nonSignatureRejections, throttledMetric, undeliveredDigests } from './metrics';

export interface AlarmSources {
  readonly config: BridgeConfig;
  readonly api: HttpApi;
  readonly ingestFunction: IFunction;
  readonly digestFunction: IFunction;
  readonly queue: IQueue;
  readonly dlq: IQueue;
  /** Alarms of further parts (the Slack app), raised and routed like the others. */
  readonly extraAlarms?: readonly AlarmSpec[] | undefined;
}

export interface AlarmSpec {
  readonly id: string;
  readonly description: string;
  readonly metric: IMetric;
  readonly threshold: number;
  /** Default: ≥ threshold. */
  readonly below?: boolean;
  /** Default 1 (and all of them must breach). */
  readonly periods?: number;
  /** Breaching periods that raise it; default all of them. */
  readonly datapoints?: number;
  /** Default: missing data is fine. */
  readonly missingBreaches?: boolean;
}

/** An alarm on any occurrence in a 5-minute period. */
function any(id: string, description: string, metric: IMetric): AlarmSpec {
  return { id, description, metric, threshold: 1 };
}

const REPLAY = 'Inspect with `npx bridge dlq peek`, fix the cause, then `npx bridge dlq replay`.';

function queueAlarms({ config, queue, dlq }: AlarmSources): AlarmSpec[] {
  const maximum = { statistic: 'Maximum', period: FIVE_MINUTES };
  return [
    any('DlqNotEmpty', `Messages are parked in the dead-letter queue. ${REPLAY}`, dlq.metricApproximateNumberOfMessagesVisible(maximum)),
    {
      id: 'QueueOldestMessageAge',
      description: `A queued event has waited ${config.queueAgeAlarmMinutes} minutes for its digest: the digest function is failing, throttled or rate-limited.`,
      metric: queue.metricApproximateAgeOfOldestMessage(maximum),
      threshold: config.queueAgeAlarmMinutes * 60,
    },
  ];
}

function ingestAlarms({ config, ingestFunction }: AlarmSources): AlarmSpec[] {
  const { stage } = config;
  return [
    any(
      'IngestErrors',
      'The ingest function failed (uncaught error or timeout); the delivery got a 5xx.',
      ingestFunction.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
    ),
    any(
      'DeliveryQuarantined',
      `A signed delivery could not be processed (unknown schema, unstorable id) and was kept in the DLQ. ${REPLAY}`,
      ingestMetric(INGEST_METRICS.deliveryQuarantined, stage),
    ),
    any(
      'NonSignatureRejections',
      'The webhook refused deliveries for a reason other than the signature (size, body): each counts toward the sender’s 15-failure switch-off.',
      nonSignatureRejections(stage),
    ),
    {
      id: 'SignatureRejectedSpike',
      description: `At least ${config.signatureRejectedAlarmThreshold} deliveries in 5 minutes failed signature verification: a wrong or rotated signing secret, clock skew, or someone probing the endpoint.`,
      metric: ingestMetric(INGEST_METRICS.signatureRejected, stage),
      threshold: config.signatureRejectedAlarmThreshold,
    },
    ...signingSecretAlarms(stage),
    // Hourly periods: CloudWatch allows period × evaluation periods up to 7 days for periods of an hour or more.
    {
      id: 'Silence',
      description: `No run.completed delivery accepted for ${config.silenceAlarmHours} hours: the webhook may be switched off (is_active false after 15 failures), deleted, or pointing elsewhere.`,
      metric: ingestMetric(INGEST_METRICS.runCompletedAccepted, stage, Duration.hours(1)),
      threshold: 1,
      below: true,
      periods: config.silenceAlarmHours,
      missingBreaches: true,
    },
  ];
}

/** Ingest keeps the last good signing secrets through both, so deliveries still pass: only an alarm tells. */
function signingSecretAlarms(stage: string): AlarmSpec[] {
  return [
    any(
      'SigningSecretsInvalid',
      'The webhook signing secrets secret holds a value that does not parse (not a JSON array of strings): ingest keeps the last good secrets, or answers 503 to every delivery if it has none. Put a valid value with `npx bridge secrets signing add`.',
      ingestMetric(INGEST_METRICS.signingSecretsInvalid, stage),
    ),
    any(
      'SigningSecretsUnreadable',
      'The webhook signing secrets could not be read (still the placeholder, deleted, AccessDenied, Secrets Manager outage): ingest serves the last good secrets for up to an hour, then answers 503. Check with `npx bridge doctor`.',
      ingestMetric(INGEST_METRICS.signingSecretsUnreadable, stage),
    ),
  ];
}

function digestAlarms({ config, digestFunction }: AlarmSources): AlarmSpec[] {
  const { stage } = config;
  return [
    any(
      'DigestErrors',
      'The digest function failed as a whole (uncaught error or timeout); the batch will be retried.',
      digestFunction.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
    ),
    any(
      'MessageQuarantined',
      `A queued record was unusable and was moved to the DLQ with its reason. ${REPLAY}`,
      digestMetric(DIGEST_METRICS.messageQuarantined, stage),
    ),
    // A Slack or read-API rate limit hands records back now and then; 15 minutes of it is a fault.
    {
      id: 'BatchItemFailures',
      description:
        'Digest records were handed back (partial batch response) in every 5 minutes for 15 minutes: the read API, Slack or the digest secrets keep failing. They reach the DLQ after maxReceiveCount receives; the digest log says why.',
      metric: digestMetric(DIGEST_METRICS.batchItemFailed, stage),
      threshold: 1,
      periods: 3,
    },
    {
      id: 'UndeliveredDigests',
      description: `A run.completed accepted ${config.undeliveredDigestHours}–${2 * config.undeliveredDigestHours} hours ago has no digest posted, superseded, recognised as a duplicate or muted in every channel.`,
      metric: undeliveredDigests(stage, config.undeliveredDigestHours),
      threshold: 1,
      periods: 2,
      datapoints: 1,
    },
  ];
}

function apiAlarms({ config, api }: AlarmSources): AlarmSpec[] {
  const usingMetrics = {
    errors: api.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
    requests: api.metricCount({ statistic: 'Sum', period: FIVE_MINUTES }),
  };
  return [
    {
      id: 'Api5xxRate',
      description: `At least ${config.api5xxMinCount} webhook requests and ${config.api5xxRatePercent}% of all answered 5xx in 5 minutes; 15 failures switch the webhook off. A single retried 503 does not count.`,
      metric: new MathExpression({
        // Per-timestamp functions only (no MAX/SUM/RUNNING_SUM: see infra/metrics.ts). A 5xx is also a
        // request, so `requests` is at least 1 wherever the IF takes the division.
        expression: `IF(FILL(errors, 0) >= ${config.api5xxMinCount}, 100 * FILL(errors, 0) / FILL(requests, 1), 0)`,
        usingMetrics,
        period: FIVE_MINUTES,
        label: '5xx %',
      }),
      threshold: config.api5xxRatePercent,
    },
    any(
      'WebhookThrottled',
      'API Gateway answered 429 (stage throttle): a flood is crowding out the service’s deliveries. Consider clientRateLimitEnabled.',
      throttledMetric(config.stage),
    ),
  ];
}

export function alarmSpecs(sources: AlarmSources): AlarmSpec[] {
  return [
    ...queueAlarms(sources),
    ...apiAlarms(sources),
    ...ingestAlarms(sources),
    ...digestAlarms(sources),
    ...(sources.extraAlarms ?? []),
  ];
}

export function alarmName(scope: Construct, id: string): string {
  return `${Stack.of(scope).stackName}-${id}`;
}

/** The ARN an alarm named by alarmName will have (no reference to the alarm resource). */
export function alarmArn(scope: Construct, id: string): string {
  return Stack.of(scope).formatArn({
    service: 'cloudwatch',
    resource: 'alarm',
    resourceName: alarmName(scope, id),
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}

export function createAlarm(scope: Construct, spec: AlarmSpec): Alarm {
  const periods = spec.periods ?? 1;
  return new Alarm(scope, spec.id, {
    alarmName: alarmName(scope, spec.id),
    alarmDescription: spec.description,
    metric: spec.metric,
    threshold: spec.threshold,
    comparisonOperator: spec.below ? ComparisonOperator.LESS_THAN_THRESHOLD : ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: periods,
    datapointsToAlarm: spec.datapoints ?? periods,
    treatMissingData: spec.missingBreaches ? TreatMissingData.BREACHING : TreatMissingData.NOT_BREACHING,
  });
}
