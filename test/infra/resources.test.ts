/**
 * The resources of the stack built from the committed development stage, config/dev.json (one
 * synth for the whole file).
 */
import { describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { SECRET_PLACEHOLDER as RUNTIME_PLACEHOLDER } from '../../shared/secrets';
import { SECRET_PLACEHOLDER, STACK_OUTPUTS as OUTPUTS } from '../../shared/contracts';
import { digestBudget } from '../../infra/digest-budget';
import { HANDLED_EVENT_TYPES } from '../../shared/events';
import { arnOf, logicalId, ref, synthApp } from './helpers';

const { stack, template } = synthApp();
const budget = digestBudget(10, 5);

const ingestId = logicalId(template, 'AWS::Lambda::Function', 'WebhookIngestFunction');
const digestId = logicalId(template, 'AWS::Lambda::Function', 'DigestWorkerDigestFunction');
const tableId = logicalId(template, 'AWS::DynamoDB::Table', 'Table');
const queueId = logicalId(template, 'AWS::SQS::Queue', 'DigestQueue');
const dlqId = logicalId(template, 'AWS::SQS::Queue', 'DigestDlq');
const commandsQueueId = logicalId(template, 'AWS::SQS::Queue', 'SlackAppCommandsQueue');
const apiId = logicalId(template, 'AWS::ApiGatewayV2::Api', 'WebhookApi');
const readApiKeyId = logicalId(template, 'AWS::SecretsManager::Secret', 'ReadApiKey');
const slackTokenId = logicalId(template, 'AWS::SecretsManager::Secret', 'SlackToken');
const signingId = logicalId(template, 'AWS::SecretsManager::Secret', 'SigningSecrets');
const actionKeyId = logicalId(template, 'AWS::SecretsManager::Secret', 'SecretsActionSigningKey');

interface FunctionProps {
  Runtime: string;
  Architectures: string[];
  Timeout: number;
  MemorySize: number;
  Handler: string;
  Environment: { Variables: Record<string, unknown> };
  LoggingConfig: { LogGroup: { Ref: string } };
  ReservedConcurrentExecutions?: number;
}
const fn = (id: string): FunctionProps =>
  (template.toJSON() as { Resources: Record<string, { Properties: FunctionProps }> }).Resources[id]!.Properties;
const queueProps = (id: string): Record<string, unknown> =>
  (template.toJSON() as { Resources: Record<string, { Properties: Record<string, unknown> }> }).Resources[id]!.Properties;

describe('stack', () => {
  it('a development stage has no termination protection', () => {
    expect(stack.terminationProtection).toBe(false);
  });

  it('is named after the stage', () => {
    expect(stack.stackName).toBe('VisibilitySlackBridge-dev');
  });
});

describe('HTTP API', () => {
  it('is one HTTP (not REST/WebSocket) API', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    template.resourceCountIs('AWS::ApiGateway::RestApi', 0);
  });

  it("has only the POST /webhook route, each connection's POST /webhook/{connection} and the three Slack app routes", () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')) as { Properties: { RouteKey: string } }[];
    expect(routes.map((route) => route.Properties.RouteKey).sort()).toEqual([
      'POST /slack/commands',
      'POST /slack/events',
      'POST /slack/interactions',
      'POST /webhook',
      'POST /webhook/{connection}',
    ]);
  });

  it('proxies the route to the ingest function with payload format 2.0', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      ApiId: ref(apiId),
      IntegrationType: 'AWS_PROXY',
      IntegrationUri: arnOf(ingestId),
      PayloadFormatVersion: '2.0',
    });
  });

  it('lets API Gateway invoke the ingest function for that route only', () => {
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: arnOf(ingestId),
      Principal: 'apigateway.amazonaws.com',
      SourceArn: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('/\\*/\\*/webhook$')])] }),
    });
  });

  it('throttles the $default stage well above the expected peak (500 rps, burst 1000)', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 },
    });
  });

  it('writes JSON access logs to a log group with retention', () => {
    const logGroupId = logicalId(template, 'AWS::Logs::LogGroup', 'ApiAccessLogs');
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 14 });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      AccessLogSettings: { DestinationArn: arnOf(logGroupId), Format: Match.stringLikeRegexp('"requestId":"\\$context.requestId"') },
    });
  });
});

describe('DynamoDB table', () => {
  it('is the only table', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
  });

  it('has partition key pk (String) and no sort key', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    });
  });

  it('is on-demand', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { BillingMode: 'PAY_PER_REQUEST' });
  });

  it('expires items by expires_at', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
    });
  });

  it('has point-in-time recovery', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('is destroyable in the development stage (config/dev.json: destroy, false)', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: Match.objectLike({ DeletionProtectionEnabled: false }),
      DeletionPolicy: 'Delete',
    });
  });
});

describe('queues', () => {
  it('are exactly the digest queue, the slash commands queue and their DLQs', () => {
    template.resourceCountIs('AWS::SQS::Queue', 4);
  });

  it('both use SQS-managed server-side encryption', () => {
    expect(queueProps(queueId)['SqsManagedSseEnabled']).toBe(true);
    expect(queueProps(dlqId)['SqsManagedSseEnabled']).toBe(true);
  });

  it('both deny requests without TLS', () => {
    for (const id of [queueId, dlqId]) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [ref(id)],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 'sqs:*',
              Principal: { AWS: '*' },
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
  });

  it('digest queue visibility timeout is at least 6 × the digest function timeout', () => {
    expect(queueProps(queueId)['VisibilityTimeout']).toBeGreaterThanOrEqual(6 * fn(digestId).Timeout);
  });

  it('digest queue redrives to the DLQ after maxReceiveCount receives', () => {
    expect(queueProps(queueId)['RedrivePolicy']).toEqual({ deadLetterTargetArn: arnOf(dlqId), maxReceiveCount: 5 });
  });

  it('DLQ is retained when the stack is destroyed (quarantined events wait for a replay)', () => {
    template.hasResource('AWS::SQS::Queue', {
      Properties: Match.objectLike({ MessageRetentionPeriod: 14 * 86_400 }),
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('DLQ keeps messages 14 days, longer than the digest queue (4 days)', () => {
    expect(queueProps(dlqId)['MessageRetentionPeriod']).toBe(14 * 86_400);
    expect(queueProps(queueId)['MessageRetentionPeriod']).toBe(4 * 86_400);
  });
});

describe('ingest function', () => {
  it('runs Node.js 24 on ARM64', () => {
    expect(fn(ingestId)).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler' });
  });

  it('times out within the sender’s 10 s and has 256–512 MB', () => {
    expect(fn(ingestId).Timeout).toBeLessThanOrEqual(8);
    expect(fn(ingestId).MemorySize).toBeGreaterThanOrEqual(256);
    expect(fn(ingestId).MemorySize).toBeLessThanOrEqual(512);
  });

  it('has exactly the environment of docs/CONTRACTS.md', () => {
    expect(fn(ingestId).Environment.Variables).toEqual({
      TABLE_NAME: ref(tableId),
      QUEUE_URL: ref(queueId),
      DLQ_URL: ref(dlqId),
      SIGNING_SECRETS_SECRET_ARN: ref(signingId),
      SIGNATURE_TOLERANCE_SECONDS: '300',
      DEDUP_RETENTION_DAYS: '3',
      SECRETS_CACHE_SECONDS: '300',
      BRIDGE_STAGE: 'dev',
      POWERTOOLS_SERVICE_NAME: 'ingest',
      POWERTOOLS_METRICS_NAMESPACE: 'VisibilitySlackBridge',
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      NODE_OPTIONS: '--enable-source-maps',
    });
  });

  it('has no reserved concurrency', () => {
    expect(fn(ingestId).ReservedConcurrentExecutions).toBeUndefined();
  });
});

describe('digest function', () => {
  it('runs Node.js 24 on ARM64', () => {
    expect(fn(digestId)).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler' });
  });

  it('times out when a full batch has used its budget, within the claim lease', () => {
    expect(fn(digestId).Timeout).toBe(budget.timeoutSeconds);
    expect(fn(digestId).Timeout).toBeGreaterThanOrEqual(10 * budget.perRecordSeconds);
    expect(budget.leaseSeconds).toBeGreaterThan(budget.timeoutSeconds);
  });

  it('has exactly the environment of docs/CONTRACTS.md', () => {
    expect(fn(digestId).Environment.Variables).toEqual({
      TABLE_NAME: ref(tableId),
      QUEUE_URL: ref(queueId),
      DLQ_URL: ref(dlqId),
      COMMANDS_QUEUE_URL: ref(commandsQueueId),
      READ_API_BASE_URL: 'https://api.visibility.example.com',
      READ_API_KEY_SECRET_ARN: ref(readApiKeyId),
      SLACK_BOT_TOKEN_SECRET_ARN: ref(slackTokenId),
      SLACK_DEFAULT_CHANNEL: 'C0DEV00001',
      SLACK_PROJECT_CHANNELS: '{}',
      VISIBILITY_RANGE: '7d',
      GAPS_PAGE_SIZE: '50',
      DIGEST_MODE: 'full',
      MAX_RECEIVE_COUNT: '5',
      SECRETS_CACHE_SECONDS: '300',
      DIGEST_LEASE_SECONDS: String(budget.leaseSeconds),
      DIGEST_RECORD_BUDGET_SECONDS: String(budget.perRecordSeconds),
      ACTION_SIGNING_KEY_SECRET_ARN: ref(actionKeyId),
      SLACK_ACCESS_POLICY: '{"changes":"everyone"}',
      SUBSCRIPTION_DEFAULT_MODE: 'changes',
      BRIDGE_TIME_ZONE: 'UTC',
      CHARTS_ENABLED: 'true',
      BRIDGE_STAGE: 'dev',
      POWERTOOLS_SERVICE_NAME: 'digest',
      POWERTOOLS_METRICS_NAMESPACE: 'VisibilitySlackBridge',
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      NODE_OPTIONS: '--enable-source-maps',
    });
  });

  it('has no reserved concurrency', () => {
    expect(fn(digestId).ReservedConcurrentExecutions).toBeUndefined();
  });

  it("passes the stage's noiseMinimums as JSON and subscriptionDefaultMode to the functions that subscribe", () => {
    const custom = synthApp({ noiseMinimums: { Mentions: 25, 'Average position': 0.2 }, subscriptionDefaultMode: 'full' }).template;
    const variables = (prefix: string) =>
      (custom.toJSON() as { Resources: Record<string, { Properties: FunctionProps }> }).Resources[
        logicalId(custom, 'AWS::Lambda::Function', prefix)
      ]!.Properties.Environment.Variables;
    const digest = variables('DigestWorkerDigestFunction');
    expect(JSON.parse(String(digest['NOISE_MINIMUMS']))).toEqual({ Mentions: 25, 'Average position': 0.2 });
    expect(digest['SUBSCRIPTION_DEFAULT_MODE']).toBe('full');
    expect(variables('SlackAppSlackFunction')['SUBSCRIPTION_DEFAULT_MODE']).toBe('full');
    // Without minimums the variable is absent (the list above): the digest uses its defaults.
    expect(fn(digestId).Environment.Variables['NOISE_MINIMUMS']).toBeUndefined();
  });
});

describe('log groups', () => {
  it('each function logs to its own log group with the context retention', () => {
    const groups = template.findResources('AWS::Logs::LogGroup') as Record<string, { Properties: { RetentionInDays: number } }>;
    for (const id of [ingestId, digestId]) {
      const groupId = fn(id).LoggingConfig.LogGroup.Ref;
      expect(groups[groupId]?.Properties.RetentionInDays).toBe(14);
    }
    expect(fn(ingestId).LoggingConfig.LogGroup.Ref).not.toBe(fn(digestId).LoggingConfig.LogGroup.Ref);
  });

  it('every log group has a retention', () => {
    const groups = Object.values(template.findResources('AWS::Logs::LogGroup')) as { Properties: { RetentionInDays?: number } }[];
    expect(groups).toHaveLength(4);
    for (const group of groups) expect(group.Properties.RetentionInDays).toBe(14);
  });
});

describe('SQS event source', () => {
  it('feeds the digest function from the digest queue with the context batch settings', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: arnOf(queueId),
      FunctionName: ref(digestId),
      BatchSize: 10,
      MaximumBatchingWindowInSeconds: 5,
    });
  });

  it('reports batch item failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionResponseTypes: ['ReportBatchItemFailures'] });
  });

  it('caps concurrency (ScalingConfig.MaximumConcurrency)', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 2 } });
  });
});

describe('secrets', () => {
  it('creates the four operator secrets holding only the placeholder', () => {
    const secrets = template.findResources('AWS::SecretsManager::Secret') as Record<
      string,
      { Properties: { SecretString?: string; GenerateSecretString?: unknown } }
    >;
    const operators = Object.entries(secrets).filter(([id]) => id !== actionKeyId);
    expect(operators).toHaveLength(4);
    for (const [, secret] of operators) {
      expect(secret.Properties.SecretString).toBe(SECRET_PLACEHOLDER);
      expect(secret.Properties.GenerateSecretString).toBeUndefined();
    }
  });

  it('generates the action-signing key: a plain alphanumeric string, never in the template', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false },
    });
    const props = (template.toJSON() as { Resources: Record<string, { Properties: Record<string, unknown> }> }).Resources[actionKeyId]!
      .Properties;
    expect(props['SecretString']).toBeUndefined();
    expect(props['GenerateSecretString']).not.toHaveProperty('SecretStringTemplate');
  });

  it('uses the placeholder the runtime treats as "not set"', () => {
    expect(SECRET_PLACEHOLDER).toBe(RUNTIME_PLACEHOLDER);
  });
});

describe('alarm topic', () => {
  it('is encrypted with a rotating customer managed key', () => {
    const keyId = logicalId(template, 'AWS::KMS::Key', 'MonitoringAlarmTopicKey');
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: arnOf(keyId) });
  });

  it('lets CloudWatch use the key for this stack’s alarms only (aws:SourceArn = each alarm ARN)', () => {
    const alarmNames = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (alarm) => (alarm as { Properties: { AlarmName: string } }).Properties.AlarmName,
    );
    const arn = (name: string): unknown => ({
      'Fn::Join': [
        '',
        ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:alarm:${name}`],
      ],
    });
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Condition: {
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              ArnEquals: { 'aws:SourceArn': alarmNames.map(arn) },
            },
          }),
        ]),
      },
    });
  });

  it('denies publishing without TLS and allows CloudWatch alarms of this account to publish', () => {
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Allow', Action: 'sns:Publish', Principal: { Service: 'cloudwatch.amazonaws.com' } }),
        ]),
      },
    });
  });

  it('has no subscription when alarmEmail is empty', () => {
    template.resourceCountIs('AWS::SNS::Subscription', 0);
  });
});

describe('outputs', () => {
  const outputs = template.toJSON() as { Outputs: Record<string, { Value: unknown }> };
  const value = (key: string): string => JSON.stringify(outputs.Outputs[key]?.Value);

  it('WebhookUrl is the full https URL of /webhook on the $default stage', () => {
    template.hasOutput(OUTPUTS.webhookUrl, {
      Value: {
        'Fn::Join': ['', ['https://', ref(apiId), '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, '/webhook']],
      },
    });
  });

  it('WebhookUrl names every event type the bridge handles (from the events table)', () => {
    const description = (outputs.Outputs[OUTPUTS.webhookUrl] as { Description?: string } | undefined)?.Description ?? '';
    for (const type of HANDLED_EVENT_TYPES) expect(description).toContain(type);
  });

  it('QueueUrl, DlqUrl and TableName reference the resources', () => {
    template.hasOutput(OUTPUTS.queueUrl, { Value: ref(queueId) });
    template.hasOutput(OUTPUTS.dlqUrl, { Value: ref(dlqId) });
    template.hasOutput(OUTPUTS.tableName, { Value: ref(tableId) });
  });

  it('gives each secret ARN', () => {
    template.hasOutput(OUTPUTS.readApiKeySecretArn, { Value: ref(readApiKeyId) });
    template.hasOutput(OUTPUTS.slackTokenSecretArn, { Value: ref(slackTokenId) });
    template.hasOutput(OUTPUTS.signingSecretsSecretArn, { Value: ref(signingId) });
  });

  it('gives the put-secret-value command of each secret', () => {
    const command = (secretId: string, example: string): unknown => ({
      'Fn::Join': [
        '',
        [
          'aws secretsmanager put-secret-value --region ',
          { Ref: 'AWS::Region' },
          ' --secret-id ',
          ref(secretId),
          ` --secret-string ${example}`,
        ],
      ],
    });
    template.hasOutput(OUTPUTS.putReadApiKeyCommand, { Value: command(readApiKeyId, "'<read-API key>'") });
    template.hasOutput(OUTPUTS.putSlackTokenCommand, { Value: command(slackTokenId, "'<xoxb-... Slack bot token>'") });
    template.hasOutput(OUTPUTS.putSigningSecretsCommand, { Value: command(signingId, `'["<webhook signing secret>"]'`) });
  });

  it('gives the read-API base URL and the Slack routing that bridge doctor checks', () => {
    template.hasOutput(OUTPUTS.readApiBaseUrl, { Value: 'https://api.visibility.example.com' });
    template.hasOutput(OUTPUTS.slackDefaultChannel, { Value: 'C0DEV00001' });
    template.hasOutput(OUTPUTS.slackProjectChannels, { Value: '{}' });
  });

  it('names where `bridge connections add` puts connection secrets: the prefix the functions may read', () => {
    template.hasOutput(OUTPUTS.connectionSecretPrefix, { Value: 'visibility-bridge/dev/connections/' });
  });

  it('has every documented output key (those of unset optional keys aside)', () => {
    // config/dev.json sets no enterprise id, no custom domain and no Slack client id: their outputs are absent
    // (client-rate-limit.test.ts, slack-app.test.ts, slack-oauth.test.ts).
    const optional: string[] = [
      OUTPUTS.slackEnterpriseId,
      OUTPUTS.customDomainTarget,
      OUTPUTS.slackInstallUrl,
      OUTPUTS.putSlackClientSecretCommand,
      OUTPUTS.slackClientSecretSecretArn,
    ];
    expect(Object.keys(outputs.Outputs).sort()).toEqual(
      Object.values(OUTPUTS)
        .filter((key) => !optional.includes(key))
        .sort(),
    );
    template.hasOutput(OUTPUTS.actionSigningKeySecretArn, { Value: ref(actionKeyId) });
    expect(value(OUTPUTS.ingestFunctionName)).toContain(ingestId);
  });
});
