/**
 * Names the deployed stack and the `bridge` CLI agree on (docs/CONTRACTS.md): the stack name and
 * its CloudFormation output keys. Kept apart from infra/ so the CLI needn't load aws-cdk-lib.
 */
export const STACK_OUTPUTS = {
  webhookUrl: 'WebhookUrl',
  queueUrl: 'QueueUrl',
  dlqUrl: 'DlqUrl',
  tableName: 'TableName',
  readApiKeySecretArn: 'ReadApiKeySecretArn',
  slackTokenSecretArn: 'SlackTokenSecretArn',
  signingSecretsSecretArn: 'SigningSecretsSecretArn',
  putReadApiKeyCommand: 'PutReadApiKeyCommand',
  putSlackTokenCommand: 'PutSlackTokenCommand',
  putSigningSecretsCommand: 'PutSigningSecretsCommand',
  ingestFunctionName: 'IngestFunctionName',
  digestFunctionName: 'DigestFunctionName',
  alarmTopicArn: 'AlarmTopicArn',
  dashboardName: 'DashboardName',
  readApiBaseUrl: 'ReadApiBaseUrl',
  slackDefaultChannel: 'SlackDefaultChannel',
  slackProjectChannels: 'SlackProjectChannels',
} as const;

export function stackNameFor(stage: string): string {
  return `VisibilitySlackBridge-${stage}`;
}

export const DEFAULT_STACK = stackNameFor('prod');
