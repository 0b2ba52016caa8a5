/** The Slack app's resources: function, routes, signing secret, least-privilege statements, alarms, outputs. */
import { describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { ENV, HTTP_PATHS, SERVICES, SLACK_APP_METRICS, STACK_OUTPUTS as OUTPUTS, TABLE } from '../../shared/contracts';
import { SLACK_TIMEOUT_SECONDS } from '../../infra/slack-app';
import { actionsOf, arnOf, logicalId, ref, resourcesOf, roleStatements, statementBySid, synthApp } from './helpers';

const { template, stack } = synthApp();

const tableId = logicalId(template, 'AWS::DynamoDB::Table', 'Table');
const commandsQueueId = logicalId(template, 'AWS::SQS::Queue', 'SlackAppCommandsQueue');
const secretId = logicalId(template, 'AWS::SecretsManager::Secret', 'SlackAppSigningSecret');
const slackLogsId = logicalId(template, 'AWS::Logs::LogGroup', 'SlackAppSlackLogs');
const functionId = logicalId(template, 'AWS::Lambda::Function', 'SlackAppSlackFunction');
const slack = roleStatements(template, 'SlackAppSlackRole');
const digest = roleStatements(template, 'DigestWorkerDigestRole');
const subscriptionKeys = {
  'ForAllValues:StringLike': {
    'dynamodb:LeadingKeys': [`${TABLE.prefixes.subscriptionsOfProject}*`, `${TABLE.prefixes.subscriptionsOfChannel}*`],
  },
};

describe('Slack function', () => {
  it('runs the slack entry with the table, the commands queue and signing secret ARN, within Slack’s 3 s', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: SLACK_TIMEOUT_SECONDS,
      Environment: {
        Variables: Match.objectLike({
          [ENV.tableName]: ref(tableId),
          [ENV.commandsQueueUrl]: ref(commandsQueueId),
          [ENV.slackSigningSecretSecretArn]: ref(secretId),
          [ENV.powertoolsServiceName]: SERVICES.slack,
        }),
      },
    });
    const variables = (
      template.toJSON() as { Resources: Record<string, { Properties: { Environment: { Variables: Record<string, unknown> } } }> }
    ).Resources[functionId]!.Properties.Environment.Variables;
    expect(variables[ENV.slackSigningSecret]).toBeUndefined();
    // Deferred commands never go on the digest queue, where they would wait behind digests.
    expect(variables[ENV.queueUrl]).toBeUndefined();
  });

  it('is routed from POST /slack/commands and POST /slack/interactions on the webhook API, payload 2.0', () => {
    for (const path of [HTTP_PATHS.slackCommands, HTTP_PATHS.slackInteractions]) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: `POST ${path}` });
    }
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      PayloadFormatVersion: '2.0',
      IntegrationUri: { 'Fn::GetAtt': [functionId, 'Arn'] },
    });
  });

  it('creates its signing secret holding the placeholder', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Description: Match.stringLikeRegexp('Slack app'),
      SecretString: 'PLACEHOLDER',
    });
  });

  it('imports the signing secret from slackSigningSecretArn instead', () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:slack-signing-AbC123';
    const imported = synthApp({ slackSigningSecretArn: arn }).template;
    expect(Object.keys(imported.findResources('AWS::SecretsManager::Secret')).filter((id) => id.startsWith('SlackApp'))).toEqual([]);
    imported.hasOutput(OUTPUTS.slackSigningSecretSecretArn, { Value: arn });
  });
});

describe('Slack role', () => {
  it('has exactly its logs, subscription items, queue and secret statements', () => {
    expect(slack.map((s) => s.Sid).sort()).toEqual([
      'EnqueueDeferredCommands',
      'ReadSlackSigningSecret',
      'SubscriptionsOfProjectsAndChannels',
      'WriteOwnLogs',
    ]);
    expect(resourcesOf(statementBySid(slack, 'WriteOwnLogs'))).toEqual([arnOf(slackLogsId)]);
  });

  it('may Get/Update/BatchGet sub# and chan# items only', () => {
    const statement = statementBySid(slack, 'SubscriptionsOfProjectsAndChannels');
    expect(actionsOf(statement)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(resourcesOf(statement)).toEqual([arnOf(tableId)]);
    expect(statement.Condition).toEqual(subscriptionKeys);
  });

  it('may send to the commands queue and read its own secret only', () => {
    expect(actionsOf(statementBySid(slack, 'EnqueueDeferredCommands'))).toEqual(['sqs:SendMessage']);
    expect(resourcesOf(statementBySid(slack, 'EnqueueDeferredCommands'))).toEqual([arnOf(commandsQueueId)]);
    expect(actionsOf(statementBySid(slack, 'ReadSlackSigningSecret'))).toEqual(['secretsmanager:GetSecretValue']);
    expect(resourcesOf(statementBySid(slack, 'ReadSlackSigningSecret'))).toEqual([ref(secretId)]);
  });

  it('uses no wildcards and cannot consume the queue', () => {
    for (const statement of slack) {
      for (const action of actionsOf(statement)) expect(action).not.toContain('*');
      for (const resource of resourcesOf(statement)) expect(JSON.stringify(resource)).not.toContain('*');
    }
    expect(slack.flatMap(actionsOf).filter((a) => a.startsWith('sqs:'))).toEqual(['sqs:SendMessage']);
  });
});

describe('digest role, Slack app share', () => {
  it('reads and writes subscriptions (deferred subscribe, routing) by sub#/chan# keys', () => {
    const statement = statementBySid(digest, 'SlackSubscriptions');
    expect(actionsOf(statement)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(statement.Condition).toEqual(subscriptionKeys);
  });

  it('paces and claims per-channel posts by pace#/post# keys', () => {
    const statement = statementBySid(digest, 'SlackPacingAndChannelPosts');
    expect(actionsOf(statement)).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(resourcesOf(statement)).toEqual([arnOf(tableId)]);
    expect(statement.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TABLE.prefixes.pace}*`, `${TABLE.prefixes.channelPost}*`] },
    });
  });
});

describe('Slack alarms', () => {
  it('alarm on a spike of rejected Slack signatures and on function errors, to the alarm topic', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: `${stack.stackName}-SlackRequestRejectedSpike`,
      MetricName: SLACK_APP_METRICS.slackRequestRejected,
      Dimensions: Match.arrayWith([{ Name: 'service', Value: SERVICES.slack }]),
      AlarmActions: Match.anyValue(),
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: `${stack.stackName}-SlackPaceRateLimited`,
      MetricName: SLACK_APP_METRICS.slackRateLimited,
      Dimensions: Match.arrayWith([{ Name: 'service', Value: SERVICES.digest }]),
      Threshold: 5,
      AlarmActions: Match.anyValue(),
    });
    const undelivered = template.findResources('AWS::CloudWatch::Alarm', {
      Properties: { AlarmName: `${stack.stackName}-SlackAnswersUndelivered` },
    });
    type Stat = { Metric: { MetricName: string; Dimensions: { Name: string; Value: unknown }[] } };
    const metrics = (Object.values(undelivered)[0]?.Properties as { Metrics?: { MetricStat?: Stat }[] } | undefined)?.Metrics ?? [];
    // Deferred answers come from the digest worker, button answers from the Slack function: both count.
    const services = metrics
      .flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []))
      .filter((metric) => metric.MetricName === SLACK_APP_METRICS.slackResponseFailed)
      .map((metric) => metric.Dimensions.find((d) => d.Name === 'service')?.Value);
    expect(services.sort()).toEqual([SERVICES.digest, SERVICES.slack].sort());
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: `${stack.stackName}-SlackErrors`,
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: ref(functionId) }],
      AlarmActions: Match.anyValue(),
    });
  });
});

describe('Slack signing secret alarm', () => {
  type Stat = { Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] } };
  type AlarmProps = {
    Threshold: number;
    ComparisonOperator: string;
    AlarmActions?: unknown[];
    Metrics?: { Id: string; Expression?: string; MetricStat?: Stat }[];
  };
  const alarms = template.findResources('AWS::CloudWatch::Alarm', {
    Properties: { AlarmName: `${stack.stackName}-SlackSigningSecretUnusable` },
  });
  const unusable = Object.values(alarms)[0]?.Properties as AlarmProps | undefined;

  it('fires on the first invalid or unreadable Slack signing secret in 5 minutes, to the alarm topic', () => {
    expect(unusable).toBeDefined();
    expect(unusable!.Threshold).toBe(1);
    expect(unusable!.ComparisonOperator).toBe('GreaterThanOrEqualToThreshold');
    expect(unusable!.AlarmActions).toHaveLength(1);
    const expression = unusable!.Metrics?.find((m) => m.Expression !== undefined)?.Expression ?? '';
    const stats = (unusable!.Metrics ?? []).flatMap((m) => (m.MetricStat ? [{ id: m.Id, metric: m.MetricStat.Metric }] : []));
    // Both counts, from the Slack function, each in the expression (a period with only one of them still sums).
    expect(stats.map((s) => s.metric.MetricName).sort()).toEqual(
      [SLACK_APP_METRICS.slackSigningSecretInvalid, SLACK_APP_METRICS.slackSigningSecretUnreadable].sort(),
    );
    for (const { id, metric } of stats) {
      expect(metric.Namespace).toBe('VisibilitySlackBridge');
      expect(metric.Dimensions).toContainEqual({ Name: 'service', Value: SERVICES.slack });
      expect(expression).toContain(`FILL(${id}, 0)`);
    }
  });
});

describe('Slack outputs', () => {
  it('give the request URLs, the API base URL, the secret and its put command', () => {
    const base = template.toJSON() as { Outputs: Record<string, { Value: unknown }> };
    expect(JSON.stringify(base.Outputs[OUTPUTS.slackCommandsUrl]?.Value)).toContain(HTTP_PATHS.slackCommands);
    expect(JSON.stringify(base.Outputs[OUTPUTS.slackInteractionsUrl]?.Value)).toContain(HTTP_PATHS.slackInteractions);
    expect(base.Outputs[OUTPUTS.apiBaseUrl]).toBeDefined();
    template.hasOutput(OUTPUTS.slackSigningSecretSecretArn, { Value: ref(secretId) });
    expect(JSON.stringify(base.Outputs[OUTPUTS.putSlackSigningSecretCommand]?.Value)).toContain('put-secret-value');
    template.hasOutput(OUTPUTS.slackFunctionName, { Value: ref(functionId) });
  });
});
