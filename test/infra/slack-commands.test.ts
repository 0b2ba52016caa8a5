/**
 * Deferred slash commands apart from digests: their own queue and DLQ, a second event source into
 * the digest function (batch 1, no batching window), least privilege, an alarm and the outputs.
 */
import { describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { ENV, STACK_OUTPUTS as OUTPUTS } from '../../shared/contracts';
import { actionsOf, arnOf, logicalId, ref, resourcesOf, roleStatements, synthApp } from './helpers';

const { template, stack } = synthApp();

const queueId = logicalId(template, 'AWS::SQS::Queue', 'SlackAppCommandsQueue');
const dlqId = logicalId(template, 'AWS::SQS::Queue', 'SlackAppCommandsDlq');
const digestQueueId = logicalId(template, 'AWS::SQS::Queue', 'DigestQueue');
const digestId = logicalId(template, 'AWS::Lambda::Function', 'DigestWorkerDigestFunction');
const slack = roleStatements(template, 'SlackAppSlackRole');
const digest = roleStatements(template, 'DigestWorkerDigestRole');

type Resources = Record<string, { Properties: Record<string, unknown> }>;
const resources = (template.toJSON() as { Resources: Resources }).Resources;
const queueProps = (id: string): Record<string, unknown> => resources[id]!.Properties;
const digestTimeout = resources[digestId]!.Properties['Timeout'] as number;
const mentions = (statement: unknown, id: string): boolean => JSON.stringify(resourcesOf(statement as never)).includes(id);

describe('commands queue', () => {
  it('is encrypted, refuses requests without TLS and redrives to its own DLQ after maxReceiveCount receives', () => {
    for (const id of [queueId, dlqId]) {
      expect(queueProps(id)['SqsManagedSseEnabled']).toBe(true);
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [ref(id)],
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    }
    expect(queueProps(queueId)['RedrivePolicy']).toEqual({ deadLetterTargetArn: arnOf(dlqId), maxReceiveCount: 5 });
  });

  it('keeps a command an hour (a response_url works for 30 minutes), its DLQ 14 days', () => {
    expect(queueProps(queueId)['MessageRetentionPeriod']).toBe(3600);
    expect(queueProps(dlqId)['MessageRetentionPeriod']).toBe(14 * 86_400);
  });

  it('retries a failed answer after the digest function’s timeout, the least an event source accepts', () => {
    expect(queueProps(queueId)['VisibilityTimeout']).toBe(digestTimeout);
  });
});

describe('commands event source', () => {
  it('feeds the digest function one command at a time, with no batching window and no concurrency cap', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(queueId),
      FunctionName: ref(digestId),
      BatchSize: 1,
      MaximumBatchingWindowInSeconds: 0,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: Match.absent(),
    });
  });

  it('is a second mapping: digests keep their own', () => {
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')) as {
      Properties: { EventSourceArn: unknown };
    }[];
    expect(mappings.map((m) => m.Properties.EventSourceArn)).toEqual(expect.arrayContaining([arnOf(queueId), arnOf(digestQueueId)]));
    expect(mappings).toHaveLength(2);
  });

  it('tells the digest function the commands queue (a failed command’s retry delay goes there)', () => {
    const variables = (resources[digestId]!.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
    expect(variables[ENV.commandsQueueUrl]).toEqual(ref(queueId));
  });
});

describe('least privilege on the commands queue', () => {
  it('the Slack function may only send to it, and to no other queue', () => {
    const onQueue = slack.filter((s) => mentions(s, queueId));
    expect(onQueue.flatMap(actionsOf)).toEqual(['sqs:SendMessage']);
    expect(slack.filter((s) => mentions(s, digestQueueId))).toEqual([]);
  });

  it('the digest function consumes it through its event source, and never sends to it', () => {
    const onQueue = digest.filter((s) => mentions(s, queueId));
    const actions = onQueue.flatMap(actionsOf);
    expect(actions).toEqual(expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility']));
    expect(actions).not.toContain('sqs:SendMessage');
  });

  it('nothing may touch the commands DLQ but SQS’s redrive', () => {
    expect([...slack, ...digest].filter((s) => mentions(s, dlqId))).toEqual([]);
  });
});

describe('commands alarm and outputs', () => {
  it('alarms on the first command in the DLQ, to the alarm topic, on alarm and on recovery', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: `${stack.stackName}-CommandsDlqNotEmpty`,
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [Match.anyValue()],
      OKActions: [Match.anyValue()],
    });
  });

  it('outputs the commands queue and its DLQ, beside the digest queue’s outputs', () => {
    template.hasOutput(OUTPUTS.commandsQueueUrl, { Value: ref(queueId) });
    template.hasOutput(OUTPUTS.commandsDlqUrl, { Value: ref(dlqId) });
    template.hasOutput(OUTPUTS.queueUrl, { Value: ref(digestQueueId) });
    template.hasOutput(OUTPUTS.dlqUrl, Match.anyValue());
  });
});
