/**
 * Alarms (to an SNS topic) and a dashboard with the bridge's key figures.
 *
 * Custom metrics come from Powertools EMF in namespace VisibilitySlackBridge with the `service`
 * dimension (docs/CONTRACTS.md).
 */
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  Metric,
  type IMetric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export const METRICS_NAMESPACE = 'VisibilitySlackBridge';

export const INGEST_METRICS = [
  'DeliveryAccepted',
  'DeliveryDuplicate',
  'DeliveryRejected',
  'SignatureRejected',
  'RunCompletedAccepted',
  'IngestUnavailable',
] as const;
export const DIGEST_METRICS = [
  'DigestPosted',
  'DraftNoticePosted',
  'EventSuperseded',
  'EventDuplicate',
  'DigestFailed',
  'MessageDropped',
] as const;

export interface MonitoringProps {
  readonly stage: string;
  readonly alarmEmail: string | undefined;
  readonly alarmTopicArn: string | undefined;
  readonly silenceAlarmHours: number;
  readonly signatureRejectedAlarmThreshold: number;
  readonly api: HttpApi;
  readonly ingestFunction: IFunction;
  readonly digestFunction: IFunction;
  readonly queue: IQueue;
  readonly dlq: IQueue;
}

export function bridgeMetric(service: 'ingest' | 'digest', metricName: string, period: Duration): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service },
    statistic: 'Sum',
    period,
  });
}

export class Monitoring extends Construct {
  readonly topic: ITopic;
  readonly dlqNotEmpty: Alarm;
  readonly api5xx: Alarm;
  readonly ingestErrors: Alarm;
  readonly digestErrors: Alarm;
  readonly signatureRejectedSpike: Alarm;
  readonly silence: Alarm;
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.topic = props.alarmTopicArn !== undefined ? Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn) : this.createTopic(props);

    const fiveMinutes = Duration.minutes(5);

    this.dlqNotEmpty = this.anyInFiveMinutes('DlqNotEmpty', 'Digest messages failed maxReceiveCount times and are parked in the DLQ. Inspect them, fix the cause, then replay them (npx bridge dlq peek, then npx bridge dlq replay).', props.dlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: fiveMinutes }));

    this.api5xx = this.anyInFiveMinutes('Api5xx', 'The webhook endpoint answered 5xx; the sender retries, but repeated 5xx switch the webhook off after 15 failures.', props.api.metricServerError({ statistic: 'Sum', period: fiveMinutes }));

    this.ingestErrors = this.anyInFiveMinutes('IngestErrors', 'The ingest function failed (uncaught error or timeout); the delivery got a 5xx.', props.ingestFunction.metricErrors({ statistic: 'Sum', period: fiveMinutes }));

    this.digestErrors = this.anyInFiveMinutes('DigestErrors', 'The digest function failed as a whole (uncaught error or timeout); the batch will be retried.', props.digestFunction.metricErrors({ statistic: 'Sum', period: fiveMinutes }));

    this.signatureRejectedSpike = new Alarm(this, 'SignatureRejectedSpike', {
      alarmDescription:
        `At least ${props.signatureRejectedAlarmThreshold} deliveries in 5 minutes failed signature verification: ` +
        'a wrong or rotated signing secret, clock skew, or someone probing the endpoint.',
      metric: bridgeMetric('ingest', 'SignatureRejected', fiveMinutes),
      threshold: props.signatureRejectedAlarmThreshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // Hourly periods: CloudWatch allows period × evaluation periods up to 7 days when the period
    // is at least one hour (one day for shorter periods). Every hour of the window must be silent.
    this.silence = new Alarm(this, 'Silence', {
      alarmDescription:
        `No run.completed delivery accepted for ${props.silenceAlarmHours} hours: the webhook may be switched off ` +
        '(is_active false after 15 failures), deleted, or pointing elsewhere.',
      metric: bridgeMetric('ingest', 'RunCompletedAccepted', Duration.hours(1)),
      threshold: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: props.silenceAlarmHours,
      datapointsToAlarm: props.silenceAlarmHours,
      treatMissingData: TreatMissingData.BREACHING,
    });

    const action = new SnsAction(this.topic);
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }

    this.dashboard = this.createDashboard(props);
  }

  get alarms(): Alarm[] {
    return [this.dlqNotEmpty, this.api5xx, this.ingestErrors, this.digestErrors, this.signatureRejectedSpike, this.silence];
  }

  private createTopic(props: MonitoringProps): Topic {
    const stack = Stack.of(this);
    // CloudWatch can only publish to an encrypted topic whose key it may use, so the AWS managed
    // SNS key will not do: a customer managed key with rotation. It protects only notifications in
    // flight, so it is deleted (after the pending window) with the stack.
    const key = new Key(this, 'AlarmTopicKey', {
      description: `Encrypts the alarm topic of the Slack bridge (${props.stage})`,
      enableKeyRotation: true,
      pendingWindow: Duration.days(7),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const cloudwatch = new ServicePrincipal('cloudwatch.amazonaws.com');
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToUseTheKey',
        principals: [cloudwatch],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: `Visibility Slack bridge alarms (${props.stage})`,
      masterKey: key,
      enforceSSL: true,
    });
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToPublish',
        principals: [cloudwatch],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
        },
      }),
    );
    if (props.alarmEmail !== undefined) topic.addSubscription(new EmailSubscription(props.alarmEmail));
    return topic;
  }

  private createDashboard(props: MonitoringProps): Dashboard {
    const fiveMinutes = Duration.minutes(5);
    const dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `VisibilitySlackBridge-${props.stage}`,
      defaultInterval: Duration.days(1),
    });
    const sum = (metric: Metric, label: string): Metric => metric.with({ statistic: 'Sum', period: fiveMinutes, label });
    const p99 = (metric: Metric, label: string): Metric => metric.with({ statistic: 'p99', period: fiveMinutes, label });
    const max = (metric: Metric, label: string): Metric => metric.with({ statistic: 'Maximum', period: fiveMinutes, label });

    dashboard.addWidgets(
      new TextWidget({
        markdown: `# Visibility Slack bridge (${props.stage})\nWebhook → ingest → SQS → digest → Slack. Alarms go to the alarm topic.`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 3 }));
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Webhook API: requests and errors',
        left: [
          sum(props.api.metricCount(), 'Requests'),
          sum(props.api.metricClientError(), '4xx'),
          sum(props.api.metricServerError(), '5xx'),
        ],
        width: 12,
      }),
      new GraphWidget({
        title: 'Webhook API: latency p99 (ms)',
        left: [p99(props.api.metricLatency(), 'Latency'), p99(props.api.metricIntegrationLatency(), 'Integration latency')],
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Ingest deliveries',
        left: INGEST_METRICS.map((name) => bridgeMetric('ingest', name, fiveMinutes)),
        width: 12,
      }),
      new GraphWidget({
        title: 'Digest outcomes',
        left: DIGEST_METRICS.map((name) => bridgeMetric('digest', name, fiveMinutes)),
        width: 12,
      }),
    );
    for (const [name, fn] of [
      ['Ingest', props.ingestFunction],
      ['Digest', props.digestFunction],
    ] as const) {
      dashboard.addWidgets(
        new GraphWidget({
          title: `${name} function: invocations, errors, throttles`,
          left: [
            sum(fn.metricInvocations(), 'Invocations'),
            sum(fn.metricErrors(), 'Errors'),
            sum(fn.metricThrottles(), 'Throttles'),
          ],
          width: 12,
        }),
        new GraphWidget({
          title: `${name} function: duration p99 (ms)`,
          left: [p99(fn.metricDuration(), 'Duration p99')],
          width: 12,
        }),
      );
    }
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Digest queue',
        left: [
          max(props.queue.metricApproximateNumberOfMessagesVisible(), 'Visible'),
          max(props.queue.metricApproximateNumberOfMessagesNotVisible(), 'In flight'),
        ],
        right: [max(props.queue.metricApproximateAgeOfOldestMessage(), 'Age of oldest (s)')],
        width: 12,
      }),
      new GraphWidget({
        title: 'Dead-letter queue',
        left: [max(props.dlq.metricApproximateNumberOfMessagesVisible(), 'Visible')],
        width: 12,
      }),
    );
    return dashboard;
  }
  /** An alarm on any occurrence in a 5-minute period; quiet periods (no data) are fine. */
  private anyInFiveMinutes(id: string, alarmDescription: string, metric: IMetric): Alarm {
    return new Alarm(this, id, {
      alarmDescription,
      metric,
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
