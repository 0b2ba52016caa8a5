/**
 * Alarms (per stage: custom metrics read with {service, stage}), their topic subscription and the
 * dashboard. Built as a production-like stage with an alarm e-mail and custom thresholds.
 */
import { describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { logicalId, ref, synthApp } from './helpers';

const { template } = synthApp(
  {
    development: false,
    alarmEmail: 'ops@example.com',
    signatureRejectedAlarmThreshold: 25,
    silenceAlarmHours: 30,
    undeliveredDigestHours: 4,
    queueAgeAlarmMinutes: 20,
  },
  { stage: 'prod' },
);

const topicId = logicalId(template, 'AWS::SNS::Topic', 'MonitoringAlarmTopic');
const dlqId = logicalId(template, 'AWS::SQS::Queue', 'DigestDlq');
const queueId = logicalId(template, 'AWS::SQS::Queue', 'DigestQueue');

interface MetricStat {
  Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] };
  Period: number;
  Stat: string;
}
interface AlarmProps {
  AlarmName: string;
  Namespace?: string;
  MetricName?: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Metrics?: { Id: string; Expression?: string; MetricStat?: MetricStat; ReturnData?: boolean }[];
  Statistic?: string;
  Period?: number;
  Threshold: number;
  ComparisonOperator: string;
  EvaluationPeriods: number;
  DatapointsToAlarm?: number;
  TreatMissingData: string;
  AlarmActions: unknown[];
  OKActions: unknown[];
}
const all = (): AlarmProps[] =>
  (Object.values(template.findResources('AWS::CloudWatch::Alarm')) as { Properties: AlarmProps }[]).map((a) => a.Properties);
const alarm = (id: string): AlarmProps => {
  const found = all().find((props) => props.AlarmName === `VisibilitySlackBridge-prod-${id}`);
  if (!found) throw new Error(`no alarm ${id}`);
  return found;
};
const STAGE_DIMENSIONS = (service: string): unknown => [
  { Name: 'service', Value: service },
  { Name: 'stage', Value: 'prod' },
];
const expression = (props: AlarmProps): string => props.Metrics?.find((m) => m.Expression !== undefined)?.Expression ?? '';
const metricNames = (props: AlarmProps): string[] =>
  (props.Metrics ?? []).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));

describe('alarms', () => {
  it('are the twenty-four named ones, each notifying the topic on alarm and on recovery', () => {
    expect(
      all()
        .map((props) => props.AlarmName.replace('VisibilitySlackBridge-prod-', ''))
        .sort(),
    ).toEqual(
      [
        'Api5xxRate',
        'BatchItemFailures',
        'CommandsDlqNotEmpty',
        'DeliveryQuarantined',
        'DigestErrors',
        'DigestHoldFailed',
        'DlqNotEmpty',
        'IngestErrors',
        'MessageQuarantined',
        'NonSignatureRejections',
        'QueueOldestMessageAge',
        'SignatureRejectedSpike',
        'SigningSecretsInvalid',
        'SigningSecretsUnreadable',
        'Silence',
        'SlackAnswersUndelivered',
        'SlackErrors',
        'SlackPaceRateLimited',
        'SlackRequestForeign',
        'SlackRequestRejectedSpike',
        'SlackSigningSecretUnusable',
        'UndeliveredDigests',
        'WebhookThrottled',
        'WeeklyReportFailed',
      ].sort(),
    );
    for (const props of all()) {
      expect(props.AlarmActions).toEqual([ref(topicId)]);
      expect(props.OKActions).toEqual([ref(topicId)]);
    }
  });

  it('every custom metric is read with this stage’s dimensions {service, stage}', () => {
    for (const props of all()) {
      const stats = [
        ...(props.Namespace ? [{ Metric: { Namespace: props.Namespace, Dimensions: props.Dimensions ?? [] } }] : []),
        ...(props.Metrics ?? []).flatMap((m) => (m.MetricStat ? [m.MetricStat] : [])),
      ];
      for (const stat of stats.filter((s) => s.Metric.Namespace === 'VisibilitySlackBridge')) {
        expect(stat.Metric.Dimensions.map((d) => d.Name)).toEqual(['service', 'stage']);
        expect(stat.Metric.Dimensions[1]).toEqual({ Name: 'stage', Value: 'prod' });
      }
    }
  });

  it.each([
    ['DeliveryQuarantined', 'DeliveryQuarantined', 'ingest'],
    ['SigningSecretsInvalid', 'SigningSecretsInvalid', 'ingest'],
    ['SigningSecretsUnreadable', 'SigningSecretsUnreadable', 'ingest'],
    ['MessageQuarantined', 'MessageQuarantined', 'digest'],
    ['WebhookThrottled', 'WebhookThrottled', 'webhook-api'],
  ])('%s: any %s in 5 minutes', (id, metricName, service) => {
    expect(alarm(id)).toMatchObject({
      Namespace: 'VisibilitySlackBridge',
      MetricName: metricName,
      Dimensions: STAGE_DIMENSIONS(service),
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('DLQ not empty: ApproximateNumberOfMessagesVisible ≥ 1', () => {
    expect(alarm('DlqNotEmpty')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
      Threshold: 1,
    });
  });

  it('queue age: the oldest digest message waited queueAgeAlarmMinutes', () => {
    expect(alarm('QueueOldestMessageAge')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 20 * 60,
    });
  });

  it('5xx on a rate (≥ 5 % once at least 3 errors in 5 minutes), not on one retried 503', () => {
    const props = alarm('Api5xxRate');
    expect(expression(props)).toBe('IF(FILL(errors, 0) >= 3, 100 * FILL(errors, 0) / FILL(requests, 1), 0)');
    expect(metricNames(props).sort()).toEqual(['5xx', 'Count']);
    expect(props).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: 1 });
  });

  it('non-signature rejections: DeliveryRejected − SignatureRejected ≥ 1', () => {
    const props = alarm('NonSignatureRejections');
    expect(expression(props)).toBe('FILL(rejected, 0) - FILL(signature, 0)');
    expect(metricNames(props).sort()).toEqual(['DeliveryRejected', 'SignatureRejected']);
    expect(props.Threshold).toBe(1);
  });

  it('partial batch failures: BatchItemFailed in each of 3 consecutive 5-minute periods', () => {
    expect(alarm('BatchItemFailures')).toMatchObject({
      MetricName: 'BatchItemFailed',
      Dimensions: STAGE_DIMENSIONS('digest'),
      Threshold: 1,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
  });

  it('undelivered digests: runs accepted a window ago minus digests handled in that window and this one, over two windows of undeliveredDigestHours', () => {
    const props = alarm('UndeliveredDigests');
    const expressions = (props.Metrics ?? []).filter((m) => m.Expression !== undefined);
    const returned = expressions.find((m) => m.ReturnData !== false)!;
    const handled = expressions.find((m) => m.ReturnData === false)!;
    expect(returned.Expression).toBe(`FILL(accepted, 0) - DIFF(FILL(accepted, 0)) - (2 * ${handled.Id} - DIFF(${handled.Id}))`);
    expect(handled.Expression).toBe('FILL(posted, 0) + FILL(superseded, 0) + FILL(duplicate, 0) + FILL(muted, 0)');
    expect(metricNames(props).sort()).toEqual(['DigestPosted', 'EventDuplicate', 'EventSuperseded', 'RunCompletedAccepted', 'RunMuted']);
    for (const metric of props.Metrics ?? []) if (metric.MetricStat) expect(metric.MetricStat.Period).toBe(4 * 3600);
    expect(props).toMatchObject({ Threshold: 1, EvaluationPeriods: 2, DatapointsToAlarm: 1, TreatMissingData: 'notBreaching' });
  });

  it('math uses only functions CloudWatch documents as fit for alarms (no RUNNING_SUM, SUM, AVG, MIN, MAX, …)', () => {
    // using-metric-math.md: "We recommend that you do not use this function in CloudWatch alarms" for these;
    // SEARCH cannot be alarmed on at all.
    const unfit = /\b(RUNNING_SUM|SUM|AVG|MIN|MAX|STDDEV|DATAPOINT_COUNT|REMOVE_EMPTY|SEARCH)\s*\(/;
    const expressions = all().flatMap((props) => (props.Metrics ?? []).flatMap((m) => (m.Expression ? [m.Expression] : [])));
    expect(expressions.length).toBeGreaterThan(3);
    for (const text of expressions) expect(text).not.toMatch(unfit);
  });

  it('signature rejection spike: SignatureRejected ≥ the configured threshold in 5 minutes', () => {
    expect(alarm('SignatureRejectedSpike')).toMatchObject({
      MetricName: 'SignatureRejected',
      Dimensions: STAGE_DIMENSIONS('ingest'),
      Threshold: 25,
      Period: 300,
    });
  });

  it('silence: no RunCompletedAccepted in any hour of silenceAlarmHours, missing data breaching', () => {
    expect(alarm('Silence')).toMatchObject({
      MetricName: 'RunCompletedAccepted',
      Dimensions: STAGE_DIMENSIONS('ingest'),
      Period: 3600,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 30,
      DatapointsToAlarm: 30,
      TreatMissingData: 'breaching',
    });
  });

  it('stay within CloudWatch evaluation limits (≤ 1 day below hourly periods, ≤ 7 days otherwise)', () => {
    for (const props of all()) {
      const period = props.Period ?? props.Metrics?.find((m) => m.MetricStat)?.MetricStat?.Period ?? 0;
      expect(period * props.EvaluationPeriods).toBeLessThanOrEqual(period >= 3600 ? 7 * 86_400 : 86_400);
    }
  });
});

describe('429 count', () => {
  it('a metric filter on the access log counts status 429 as WebhookThrottled {service, stage}, the Slack routes’ own aside', () => {
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      FilterPattern:
        '{ ($.status = "429") && ($.routeKey != "POST /slack/commands") && ($.routeKey != "POST /slack/interactions") && ($.routeKey != "POST /slack/events") }',
      MetricTransformations: [
        {
          MetricNamespace: 'VisibilitySlackBridge',
          MetricName: 'WebhookThrottled',
          MetricValue: '1',
          Dimensions: [
            { Key: 'service', Value: '$.service' },
            { Key: 'stage', Value: '$.bridgeStage' },
          ],
        },
      ],
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      AccessLogSettings: { Format: Match.stringLikeRegexp('"service":"webhook-api","bridgeStage":"prod"') },
    });
  });
});

describe('alarm e-mail', () => {
  it('subscribes alarmEmail to the topic', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: ref(topicId) });
  });
});

describe('dashboard', () => {
  it('is named after the stack and region, and shows the alarms, API, functions, queues and this stage’s metrics', () => {
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: { 'Fn::Join': ['', ['VisibilitySlackBridge-prod-', { Ref: 'AWS::Region' }]] },
    });
    const body = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]);
    for (const name of [
      'alarms',
      'DeliveryQuarantined',
      'SignatureRejected',
      'DigestPosted',
      'MessageQuarantined',
      'BatchItemFailed',
      'WebhookThrottled',
      'AWS/ApiGateway',
      'AWS/SQS',
      'ApproximateAgeOfOldestMessage',
      '\\"stage\\",\\"prod\\"',
    ]) {
      expect(body).toContain(name);
    }
  });
});
