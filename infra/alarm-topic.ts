/**
 * Where alarms go: an existing topic (alarmTopicArn), or a topic the stack creates, encrypted with
 * a key only these alarms may use, with an optional e-mail subscription.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import type { BridgeConfig } from './config';

/**
 * Created in the caller's scope (ids AlarmTopic, AlarmTopicKey) so the topic and its confirmed
 * e-mail subscription keep their logical ids across versions of the stack.
 */
export function alarmTopic(scope: Construct, config: BridgeConfig, alarmArns: string[]): ITopic {
  if (config.alarmTopicArn !== undefined) return Topic.fromTopicArn(scope, 'AlarmTopic', config.alarmTopicArn);
  const key = alarmTopicKey(scope, config, alarmArns);
  const topic = new Topic(scope, 'AlarmTopic', {
    displayName: `Visibility Slack bridge alarms (${config.stage})`,
    masterKey: key,
    enforceSSL: true,
  });
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'AllowCloudWatchAlarmsToPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: fromTheseAlarms(scope, alarmArns),
    }),
  );
  if (config.alarmEmail !== undefined) topic.addSubscription(new EmailSubscription(config.alarmEmail));
  return topic;
}

/**
 * CloudWatch can only publish to an encrypted topic whose key it may use, so the AWS managed SNS
 * key will not do: a customer managed key with rotation. It protects only notifications in flight,
 * so it is deleted (after the pending window) with the stack.
 */
function alarmTopicKey(scope: Construct, config: BridgeConfig, alarmArns: string[]): Key {
  const key = new Key(scope, 'AlarmTopicKey', {
    description: `Encrypts the alarm topic of the Slack bridge (${config.stage})`,
    enableKeyRotation: true,
    pendingWindow: Duration.days(7),
    removalPolicy: RemovalPolicy.DESTROY,
  });
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'AllowCloudWatchAlarmsToUseTheKey',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: fromTheseAlarms(scope, alarmArns),
    }),
  );
  return key;
}

/** Only this stack's alarms (ARNs built from their names, so the key does not depend on the alarms). */
function fromTheseAlarms(scope: Construct, alarmArns: string[]): Record<string, unknown> {
  return { StringEquals: { 'aws:SourceAccount': Stack.of(scope).account }, ArnEquals: { 'aws:SourceArn': alarmArns } };
}
