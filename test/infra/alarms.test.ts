/**
 * Alarms, their topic subscription and the dashboard. Built with an alarm e-mail and a custom
 * signature-rejection threshold so both context keys are exercised.
 */
import { describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { logicalId, ref, synthApp } from './helpers';

const { template } = synthApp({ alarmEmail: 'ops@example.com', signatureRejectedAlarmThreshold: 25, silenceAlarmHours: '30' });

const topicId = logicalId(template, 'AWS::SNS::Topic', 'MonitoringAlarmTopic');
const apiId = logicalId(template, 'AWS::ApiGatewayV2::Api', 'WebhookApi');
const ingestId = logicalId(template, 'AWS::Lambda::Function', 'IngestFunction');
const digestId = logicalId(template, 'AWS::Lambda::Function', 'DigestFunction');
const dlqId = logicalId(template, 'AWS::SQS::Queue', 'DigestDlq');

interface AlarmProps {
  Namespace: string;
  MetricName: string;
  Dimensions: { Name: string; Value: unknown }[];
  Statistic: string;
  Period: number;
  Threshold: number;
  ComparisonOperator: string;
  EvaluationPeriods: number;
  DatapointsToAlarm?: number;
  TreatMissingData: string;
  AlarmActions: unknown[];
  OKActions: unknown[];
}
const alarm = (prefix: string): AlarmProps =>
  (template.toJSON() as { Resources: Record<string, { Properties: AlarmProps }> }).Resources[logicalId(template, 'AWS::CloudWatch::Alarm', prefix)]!
    .Properties;

describe('alarms', () => {
  it('are six, each notifying the topic on alarm and on recovery', () => {
    const all = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as { Properties: AlarmProps }[];
    expect(all).toHaveLength(6);
    for (const { Properties } of all) {
      expect(Properties.AlarmActions).toEqual([ref(topicId)]);
      expect(Properties.OKActions).toEqual([ref(topicId)]);
    }
  });

  it('DLQ not empty: ApproximateNumberOfMessagesVisible ≥ 1', () => {
    expect(alarm('MonitoringDlqNotEmpty')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('API 5xx: any server error of the webhook API', () => {
    expect(alarm('MonitoringApi5xx')).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Dimensions: [{ Name: 'ApiId', Value: ref(apiId) }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('ingest errors: Lambda Errors ≥ 1', () => {
    expect(alarm('MonitoringIngestErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: ref(ingestId) }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('digest errors: Lambda Errors ≥ 1', () => {
    expect(alarm('MonitoringDigestErrors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: ref(digestId) }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('signature rejection spike: SignatureRejected (service=ingest) ≥ the context threshold in 5 minutes', () => {
    expect(alarm('MonitoringSignatureRejectedSpike')).toMatchObject({
      Namespace: 'VisibilitySlackBridge',
      MetricName: 'SignatureRejected',
      Dimensions: [{ Name: 'service', Value: 'ingest' }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 25,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('silence: no RunCompletedAccepted in any hour of silenceAlarmHours, missing data breaching', () => {
    expect(alarm('MonitoringSilence')).toMatchObject({
      Namespace: 'VisibilitySlackBridge',
      MetricName: 'RunCompletedAccepted',
      Dimensions: [{ Name: 'service', Value: 'ingest' }],
      Statistic: 'Sum',
      Period: 3600,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 30,
      DatapointsToAlarm: 30,
      TreatMissingData: 'breaching',
    });
  });

  it('stay within CloudWatch evaluation limits (≤ 1 day below hourly periods, ≤ 7 days otherwise)', () => {
    for (const { Properties } of Object.values(template.findResources('AWS::CloudWatch::Alarm')) as { Properties: AlarmProps }[]) {
      const range = Properties.Period * Properties.EvaluationPeriods;
      expect(range).toBeLessThanOrEqual(Properties.Period >= 3600 ? 7 * 86_400 : 86_400);
    }
  });
});

describe('alarm e-mail', () => {
  it('subscribes alarmEmail to the topic', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: ref(topicId) });
  });
});

describe('dashboard', () => {
  it('is named after the stage and shows the alarms, API, functions, queues and custom metrics', () => {
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: 'VisibilitySlackBridge-prod',
      DashboardBody: Match.anyValue(),
    });
    const body = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]);
    for (const name of ['alarms', 'DeliveryAccepted', 'SignatureRejected', 'RunCompletedAccepted', 'DigestPosted', 'DigestFailed', 'MessageDropped', 'AWS/ApiGateway', 'AWS/SQS', 'ApproximateAgeOfOldestMessage']) {
      expect(body).toContain(name);
    }
  });
});
