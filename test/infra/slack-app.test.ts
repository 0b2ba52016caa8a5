/** The Slack app's resources: function, routes and their throttle, signing secret, workspace, least-privilege statements, alarms, outputs. */
import { describe, expect, it } from 'vitest';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { DIGEST_METRICS, ENV, HTTP_PATHS, SERVICES, SLACK_APP_METRICS, STACK_OUTPUTS as OUTPUTS, TABLE } from '../../shared/contracts';
import { FOREIGN_REQUESTS_ALARM_THRESHOLD, SLACK_TIMEOUT_SECONDS } from '../../infra/slack-app';
import { actionsOf, arnOf, leadingKeys, logicalId, ref, resourcesOf, roleStatements, statementBySid, synthApp } from './helpers';

const { template, stack } = synthApp();

const tableId = logicalId(template, 'AWS::DynamoDB::Table', 'Table');
const commandsQueueId = logicalId(template, 'AWS::SQS::Queue', 'SlackAppCommandsQueue');
const secretId = logicalId(template, 'AWS::SecretsManager::Secret', 'SlackAppSigningSecret');
const slackLogsId = logicalId(template, 'AWS::Logs::LogGroup', 'SlackAppSlackLogs');
const functionId = logicalId(template, 'AWS::Lambda::Function', 'SlackAppSlackFunction');
const actionKeyId = logicalId(template, 'AWS::SecretsManager::Secret', 'SecretsActionSigningKey');
const slackTokenId = logicalId(template, 'AWS::SecretsManager::Secret', 'SlackToken');
const slack = roleStatements(template, 'SlackAppSlackRole');
const digest = roleStatements(template, 'DigestWorkerDigestRole');
const subscriptionPrefixes = [TABLE.prefixes.subscriptionsOfProject, TABLE.prefixes.subscriptionsOfChannel, TABLE.prefixes.audit];
const subscriptionKeys = leadingKeys(subscriptionPrefixes, subscriptionPrefixes);
type Resources = Record<string, { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] }>;
const resources = (t: typeof template): Resources => (t.toJSON() as { Resources: Resources }).Resources;
const variablesOf = (t: typeof template): Record<string, unknown> =>
  (
    resources(t)[logicalId(t, 'AWS::Lambda::Function', 'SlackAppSlackFunction')]!.Properties['Environment'] as {
      Variables: Record<string, unknown>;
    }
  ).Variables;

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

  it('is routed from POST /slack/commands, /slack/interactions and /slack/events on the webhook API, payload 2.0', () => {
    for (const path of [HTTP_PATHS.slackCommands, HTTP_PATHS.slackInteractions, HTTP_PATHS.slackEvents]) {
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

describe('Slack workspace, app and access policy', () => {
  it('the Slack function gets the stage file’s workspace, app and policy (config/dev.json: the rehearsal’s local Slack)', () => {
    expect(variablesOf(template)).toMatchObject({
      [ENV.slackTeamIds]: 'T0DEV00001',
      [ENV.slackAppId]: 'A0DEV00001',
      [ENV.slackAccessPolicy]: '{"changes":"everyone"}',
      [ENV.actionSigningKeySecretArn]: ref(actionKeyId),
    });
    expect(variablesOf(template)[ENV.slackEnterpriseId]).toBeUndefined();
    // Without a user-group policy the Slack function has no use for the bot token.
    expect(variablesOf(template)[ENV.slackBotTokenSecretArn]).toBeUndefined();
    expect(JSON.stringify(slack)).not.toContain(slackTokenId);
  });

  it('several workspaces go comma-separated, the org id when set', () => {
    const built = synthApp({ slackTeamIds: ['T0AAA', 'T0BBB'], slackEnterpriseId: 'E0CCC', slackAppId: 'A0DDD' });
    expect(variablesOf(built.template)).toMatchObject({
      [ENV.slackTeamIds]: 'T0AAA,T0BBB',
      [ENV.slackEnterpriseId]: 'E0CCC',
      [ENV.slackAppId]: 'A0DDD',
    });
    built.template.hasOutput(OUTPUTS.slackTeamIds, { Value: 'T0AAA,T0BBB' });
    built.template.hasOutput(OUTPUTS.slackEnterpriseId, { Value: 'E0CCC' });
    built.template.hasOutput(OUTPUTS.slackAppId, { Value: 'A0DDD' });
  });

  it('unset (a first deploy): no variables, no outputs, and a synth warning that the app serves nobody', () => {
    const built = synthApp({ slackTeamIds: [], slackAppId: '' });
    const variables = variablesOf(built.template);
    for (const name of [ENV.slackTeamIds, ENV.slackEnterpriseId, ENV.slackAppId]) expect(variables[name]).toBeUndefined();
    const outputs = (built.template.toJSON() as { Outputs: Record<string, unknown> }).Outputs;
    for (const key of [OUTPUTS.slackTeamIds, OUTPUTS.slackEnterpriseId, OUTPUTS.slackAppId]) expect(outputs[key]).toBeUndefined();
    Annotations.fromStack(built.stack).hasWarning(
      '/VisibilitySlackBridge-dev/SlackApp',
      Match.stringLikeRegexp('answers every request 403'),
    );
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('answers every request 403'));
  });

  it('a user-group policy gives the Slack function the bot token, and the right to read it', () => {
    const built = synthApp({ slackAccess: { changes: { userGroup: 'S0614TZR7' }, changeChannels: { p1: ['C0123ABCD'] } } });
    const tokenId = logicalId(built.template, 'AWS::SecretsManager::Secret', 'SlackToken');
    expect(variablesOf(built.template)).toMatchObject({
      [ENV.slackBotTokenSecretArn]: ref(tokenId),
      [ENV.slackAccessPolicy]: '{"changes":{"userGroup":"S0614TZR7"},"changeChannels":{"p1":["C0123ABCD"]}}',
    });
    const statement = statementBySid(roleStatements(built.template, 'SlackAppSlackRole'), 'ReadSlackBotToken');
    expect(actionsOf(statement)).toEqual(['secretsmanager:GetSecretValue']);
    expect(resourcesOf(statement)).toEqual([ref(tokenId)]);
  });

  it('the digest function gets the policy and the action-signing key too (deferred subscribe, signed buttons)', () => {
    const digestId = logicalId(template, 'AWS::Lambda::Function', 'DigestWorkerDigestFunction');
    expect((resources(template)[digestId]!.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables).toMatchObject({
      [ENV.slackAccessPolicy]: '{"changes":"everyone"}',
      [ENV.actionSigningKeySecretArn]: ref(actionKeyId),
    });
    expect(resourcesOf(statementBySid(digest, 'ReadActionSigningKey'))).toEqual([ref(actionKeyId)]);
  });

  it('only the digest and Slack functions may read the action-signing key', () => {
    const readers = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
      JSON.stringify(policy).includes(`"Ref":"${actionKeyId}"`),
    ) as { Properties: { Roles: { Ref: string }[] } }[];
    expect(readers.flatMap((policy) => policy.Properties.Roles.map((role) => role.Ref)).sort()).toEqual(
      [logicalId(template, 'AWS::IAM::Role', 'DigestWorkerDigestRole'), logicalId(template, 'AWS::IAM::Role', 'SlackAppSlackRole')].sort(),
    );
  });
});

describe('Slack routes throttle', () => {
  const stageId = logicalId(template, 'AWS::ApiGatewayV2::Stage', 'DefaultStage');
  const stageResource = (): Resources[string] => resources(template)[stageId]!;

  it('gives POST /slack/commands, /slack/interactions and /slack/events their own throttle, far below the webhook’s', () => {
    const settings = { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 };
    expect(stageResource().Properties['RouteSettings']).toEqual({
      [`POST ${HTTP_PATHS.slackCommands}`]: settings,
      [`POST ${HTTP_PATHS.slackInteractions}`]: settings,
      [`POST ${HTTP_PATHS.slackEvents}`]: settings,
    });
    // The webhook keeps the stage's default throttle.
    expect(stageResource().Properties['DefaultRouteSettings']).toMatchObject({ ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 });
  });

  it('the stage is created after the routes its settings name (CloudFormation refuses an unknown route key)', () => {
    const routeIds = Object.entries(template.findResources('AWS::ApiGatewayV2::Route'))
      .filter(([, route]) => String((route as { Properties: { RouteKey: string } }).Properties.RouteKey).includes('/slack/'))
      .map(([id]) => id);
    expect(routeIds).toHaveLength(3);
    for (const id of routeIds) expect(stageResource().DependsOn).toContain(id);
  });

  it('takes the stage file’s limits', () => {
    const built = synthApp({ slackThrottleRateLimit: 5, slackThrottleBurstLimit: 10 });
    built.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      RouteSettings: { [`POST ${HTTP_PATHS.slackCommands}`]: { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 } },
    });
  });
});

describe('Slack role', () => {
  it('has exactly its logs, subscription items, replay guard, queue and secret statements', () => {
    expect(slack.map((s) => s.Sid).sort()).toEqual([
      'EnqueueDeferredCommands',
      'ProjectSnapshotsRead',
      'QuietHoursWindows',
      'ReadActionSigningKey',
      'ReadConnections',
      'ReadSlackSigningSecret',
      'SlackRequestReplayGuard',
      'SubscriptionsOfProjectsAndChannels',
      'WeeklySchedules',
      'WriteOwnLogs',
    ]);
    expect(resourcesOf(statementBySid(slack, 'WriteOwnLogs'))).toEqual([arnOf(slackLogsId)]);
  });

  it('may only Put slackreq# items (the replay guard)', () => {
    const statement = statementBySid(slack, 'SlackRequestReplayGuard');
    expect(actionsOf(statement)).toEqual(['dynamodb:PutItem']);
    expect(resourcesOf(statement)).toEqual([arnOf(tableId)]);
    expect(statement.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TABLE.prefixes.slackRequest}*`] } });
  });

  it('may only read conn# items (which connections a workspace reaches)', () => {
    const statement = statementBySid(slack, 'ReadConnections');
    expect(actionsOf(statement)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem']);
    expect(statement.Condition).toEqual(leadingKeys([TABLE.prefixes.connection]));
  });

  it('may only Get snapshot# items (filter engines= checks names against them)', () => {
    const statement = statementBySid(slack, 'ProjectSnapshotsRead');
    expect(actionsOf(statement)).toEqual(['dynamodb:GetItem']);
    expect(resourcesOf(statement)).toEqual([arnOf(tableId)]);
    expect(statement.Condition).toEqual(leadingKeys([TABLE.prefixes.snapshot], [TABLE.prefixes.snapshot]));
  });

  it('may Get/Update/BatchGet sub#, chan# and audit# items only', () => {
    const statement = statementBySid(slack, 'SubscriptionsOfProjectsAndChannels');
    expect(actionsOf(statement)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(resourcesOf(statement)).toEqual([arnOf(tableId)]);
    expect(statement.Condition).toEqual(subscriptionKeys);
  });

  it('may send to the commands queue and read its own secrets only', () => {
    expect(actionsOf(statementBySid(slack, 'EnqueueDeferredCommands'))).toEqual(['sqs:SendMessage']);
    expect(resourcesOf(statementBySid(slack, 'EnqueueDeferredCommands'))).toEqual([arnOf(commandsQueueId)]);
    expect(actionsOf(statementBySid(slack, 'ReadSlackSigningSecret'))).toEqual(['secretsmanager:GetSecretValue']);
    expect(resourcesOf(statementBySid(slack, 'ReadSlackSigningSecret'))).toEqual([ref(secretId)]);
    expect(actionsOf(statementBySid(slack, 'ReadActionSigningKey'))).toEqual(['secretsmanager:GetSecretValue']);
    expect(resourcesOf(statementBySid(slack, 'ReadActionSigningKey'))).toEqual([ref(actionKeyId)]);
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
  it('reads and writes subscriptions and their audit trail (deferred subscribe, routing) by sub#/chan#/audit# keys', () => {
    const statement = statementBySid(digest, 'SlackSubscriptions');
    expect(actionsOf(statement)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(statement.Condition).toEqual(subscriptionKeys);
  });

  it('paces and claims per-channel posts by pace#/post# keys', () => {
    const statement = statementBySid(digest, 'SlackPacingAndChannelPosts');
    expect(actionsOf(statement)).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(resourcesOf(statement)).toEqual([arnOf(tableId)]);
    // A channel's pace is the channel's, whoever posts; a post's claim is its tenant's.
    expect(statement.Condition).toEqual(leadingKeys([TABLE.prefixes.pace, TABLE.prefixes.channelPost], [TABLE.prefixes.channelPost]));
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
      MetricName: DIGEST_METRICS.slackRateLimited,
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
      AlarmName: `${stack.stackName}-SlackRequestForeign`,
      MetricName: SLACK_APP_METRICS.slackRequestForeign,
      Dimensions: Match.arrayWith([{ Name: 'service', Value: SERVICES.slack }]),
      Threshold: FOREIGN_REQUESTS_ALARM_THRESHOLD,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: Match.anyValue(),
    });
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
  it('give the request URLs, the API base URL, the secret and its put command, the workspace and app', () => {
    const base = template.toJSON() as { Outputs: Record<string, { Value: unknown }> };
    const apiId = logicalId(template, 'AWS::ApiGatewayV2::Api', 'WebhookApi');
    expect(base.Outputs[OUTPUTS.apiBaseUrl]?.Value).toEqual({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
    template.hasOutput(OUTPUTS.slackTeamIds, { Value: 'T0DEV00001' });
    template.hasOutput(OUTPUTS.slackAppId, { Value: 'A0DEV00001' });
    expect(JSON.stringify(base.Outputs[OUTPUTS.slackCommandsUrl]?.Value)).toContain(HTTP_PATHS.slackCommands);
    expect(JSON.stringify(base.Outputs[OUTPUTS.slackInteractionsUrl]?.Value)).toContain(HTTP_PATHS.slackInteractions);
    expect(JSON.stringify(base.Outputs[OUTPUTS.slackEventsUrl]?.Value)).toContain(HTTP_PATHS.slackEvents);
    expect(base.Outputs[OUTPUTS.apiBaseUrl]).toBeDefined();
    template.hasOutput(OUTPUTS.slackSigningSecretSecretArn, { Value: ref(secretId) });
    expect(JSON.stringify(base.Outputs[OUTPUTS.putSlackSigningSecretCommand]?.Value)).toContain('put-secret-value');
    template.hasOutput(OUTPUTS.slackFunctionName, { Value: ref(functionId) });
  });
});
