/**
 * A non-development stage file with imported secrets and alarm topic, a destroyable table without
 * deletion protection, other batch and throttle settings.
 */
import { describe, expect, it } from 'vitest';
import { digestBudget } from '../../infra/digest-budget';
import { actionsOf, logicalId, resourcesOf, roleStatements, statementBySid, synthApp } from './helpers';
import { STACK_OUTPUTS as OUTPUTS } from '../../shared/contracts';

const ARN = {
  readApiKey: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:bridge/read-api-key-AbC123',
  slackToken: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:bridge/slack-token-XyZ789',
  signing: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:bridge/signing-secrets-Qwe456',
  slackSigning: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:bridge/slack-signing-Rty012',
  topic: 'arn:aws:sns:eu-west-1:123456789012:ops-alarms',
};

const { stack, template } = synthApp(
  {
    development: false,
    readApiKeySecretArn: ARN.readApiKey,
    slackTokenSecretArn: ARN.slackToken,
    signingSecretsSecretArn: ARN.signing,
    slackSigningSecretArn: ARN.slackSigning,
    alarmTopicArn: ARN.topic,
    tableRemovalPolicy: 'destroy',
    tableDeletionProtection: false,
    digestBatchSize: 20,
    digestBatchWindowSeconds: 10,
    digestMaxConcurrency: 4,
    maxReceiveCount: 3,
    projectChannels: { 'p-1': 'C0TEAMONE' },
    apiThrottleRateLimit: 12.5,
    apiThrottleBurstLimit: 25,
    logRetentionDays: 90,
    dedupRetentionDays: 7,
    logLevel: 'DEBUG',
  },
  { stage: 'staging' },
);

const env = (prefix: string): Record<string, unknown> =>
  (template.toJSON() as { Resources: Record<string, { Properties: { Environment: { Variables: Record<string, unknown> } } }> }).Resources[
    logicalId(template, 'AWS::Lambda::Function', prefix)
  ]!.Properties.Environment.Variables;

describe('stage', () => {
  it('names the stack', () => {
    expect(stack.stackName).toBe('VisibilitySlackBridge-staging');
  });

  it('is protected from termination (not a development stage)', () => {
    expect(stack.terminationProtection).toBe(true);
  });
});

describe('imported secrets', () => {
  it('creates no secret but the generated action-signing key', () => {
    expect(Object.keys(template.findResources('AWS::SecretsManager::Secret'))).toEqual([
      logicalId(template, 'AWS::SecretsManager::Secret', 'SecretsActionSigningKey'),
    ]);
  });

  it('passes the given ARNs to the functions', () => {
    expect(env('WebhookIngestFunction')['SIGNING_SECRETS_SECRET_ARN']).toBe(ARN.signing);
    expect(env('DigestWorkerDigestFunction')['READ_API_KEY_SECRET_ARN']).toBe(ARN.readApiKey);
    expect(env('DigestWorkerDigestFunction')['SLACK_BOT_TOKEN_SECRET_ARN']).toBe(ARN.slackToken);
  });

  it('grants ingest GetSecretValue on exactly the signing-secret ARN', () => {
    const statement = statementBySid(roleStatements(template, 'WebhookIngestRole'), 'ReadSigningSecrets');
    expect(actionsOf(statement)).toEqual(['secretsmanager:GetSecretValue']);
    expect(resourcesOf(statement)).toEqual([ARN.signing]);
  });

  it('grants digest GetSecretValue on exactly the read-API key and Slack token ARNs', () => {
    const statement = statementBySid(roleStatements(template, 'DigestWorkerDigestRole'), 'ReadApiKeyAndSlackToken');
    expect(resourcesOf(statement)).toEqual([ARN.readApiKey, ARN.slackToken]);
  });

  it('outputs the imported ARNs and a put-secret-value command in their region', () => {
    template.hasOutput(OUTPUTS.signingSecretsSecretArn, { Value: ARN.signing });
    template.hasOutput(OUTPUTS.putSigningSecretsCommand, {
      Value: `aws secretsmanager put-secret-value --region eu-west-1 --secret-id ${ARN.signing} --secret-string '["<webhook signing secret>"]'`,
    });
  });
});

describe('imported alarm topic', () => {
  it('creates no topic or key and sends alarms to the given topic', () => {
    template.resourceCountIs('AWS::SNS::Topic', 0);
    template.resourceCountIs('AWS::KMS::Key', 0);
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as { Properties: { AlarmActions: unknown[] } }[];
    expect(alarms).toHaveLength(24);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([ARN.topic]);
  });
});

describe('table', () => {
  it('is destroyable without deletion protection when asked', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: { DeletionProtectionEnabled: false },
      DeletionPolicy: 'Delete',
    });
  });
});

describe('stage file settings', () => {
  it('set the event source batch size, window and concurrency', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 20,
      MaximumBatchingWindowInSeconds: 10,
      ScalingConfig: { MaximumConcurrency: 4 },
    });
  });

  it('set maxReceiveCount and derive timeout, lease and visibility from the batch size', () => {
    const budget = digestBudget(20, 10);
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { maxReceiveCount: 3 },
      VisibilityTimeout: budget.visibilityTimeoutSeconds,
    });
    template.hasResourceProperties('AWS::Lambda::Function', { Timeout: budget.timeoutSeconds });
    expect(env('DigestWorkerDigestFunction')['DIGEST_LEASE_SECONDS']).toBe(String(budget.leaseSeconds));
  });

  it('set the stage throttling', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 12.5, ThrottlingBurstLimit: 25 },
    });
  });

  it('set log retention everywhere', () => {
    const groups = Object.values(template.findResources('AWS::Logs::LogGroup')) as { Properties: { RetentionInDays: number } }[];
    for (const group of groups) expect(group.Properties.RetentionInDays).toBe(90);
  });

  it('pass the channel map, retention and log level to the functions', () => {
    expect(env('DigestWorkerDigestFunction')['SLACK_PROJECT_CHANNELS']).toBe('{"p-1":"C0TEAMONE"}');
    expect(env('WebhookIngestFunction')['DEDUP_RETENTION_DAYS']).toBe('7');
    expect(env('WebhookIngestFunction')['POWERTOOLS_LOG_LEVEL']).toBe('DEBUG');
  });
});
