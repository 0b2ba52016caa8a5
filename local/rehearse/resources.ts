/**
 * The template's stateful resources created on the local peers as CloudFormation would create them
 * (generated physical names, the table's keys, indexes and TTL, each queue's attributes and redrive
 * policy, each secret with its template value), and the `Ref`/`Fn::GetAtt` values of every resource
 * so the rest of the template resolves against them.
 */
import { randomInt } from 'node:crypto';
import { CreateTableCommand, UpdateTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { CreateSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { resourcesOfType, type CfnTemplate } from './assembly';
import { resolveIntrinsics, type ResolveContext, type ResourceValues } from './intrinsics';

export interface LocalClients {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  secretsManager: SecretsManagerClient;
  /** The local SQS server's URL and ARN scheme. */
  queueUrl(name: string): string;
}

export interface ResourceSettings {
  stackName: string;
  region: string;
  accountId: string;
  /** The id API Gateway would give the HTTP API (its host is `<id>.execute-api.<region>.amazonaws.com`). */
  apiId: string;
}

export interface CreatedResources {
  context: ResolveContext;
  /** Properties the rehearsal reads but does not emulate (named in the report, never silently dropped). */
  notEmulated: string[];
  /** Values the secrets with GenerateSecretString were created with, by logical id (the logs must never show them). */
  generatedSecrets: Record<string, string>;
}

const SUFFIX = 'RHRSL1';

/** The name CloudFormation generates for a resource without an explicit one: `<stack>-<logicalId>-<suffix>`. */
function generatedName(stackName: string, logicalId: string, maxLength = 80): string {
  return `${stackName}-${logicalId}`.slice(0, maxLength - SUFFIX.length - 1) + `-${SUFFIX}`;
}

export async function createResources(template: CfnTemplate, clients: LocalClients, settings: ResourceSettings): Promise<CreatedResources> {
  const { stackName, region, accountId } = settings;
  const resources: Record<string, ResourceValues> = {};
  const notEmulated: string[] = [];
  const generatedSecrets: Record<string, string> = {};
  const context: ResolveContext = { region, accountId, partition: 'aws', stackName, urlSuffix: 'amazonaws.com', resources };
  const arn = (service: string, resource: string, regional = true): string =>
    `arn:aws:${service}:${regional ? region : ''}:${accountId}:${resource}`;
  const entries = Object.entries(template.Resources);

  // Secrets first: their ARN carries a suffix only the service assigns.
  for (const [logicalId, resource] of resourcesOfType(template, 'AWS::SecretsManager::Secret')) {
    const props = resource.Properties ?? {};
    const name = typeof props['Name'] === 'string' ? props['Name'] : generatedName(stackName, logicalId, 64);
    const generated = props['GenerateSecretString'] === undefined ? undefined : generateSecretString(props['GenerateSecretString']);
    if (generated !== undefined) generatedSecrets[logicalId] = generated;
    const secretString = generated ?? props['SecretString'];
    if (typeof secretString !== 'string') notEmulated.push(`${logicalId}: SecretString is not a plain string`);
    const answer = await clients.secretsManager.send(
      new CreateSecretCommand({ Name: name, ...(typeof secretString === 'string' ? { SecretString: secretString } : {}) }),
    );
    resources[logicalId] = { ref: answer.ARN!, attributes: { Id: answer.ARN! } };
  }

  // Deterministic names and attributes for everything else.
  for (const [logicalId, resource] of entries) {
    if (resources[logicalId]) continue;
    resources[logicalId] = valuesOf(logicalId, resource, settings, clients, arn);
  }

  for (const [logicalId, resource] of resourcesOfType(template, 'AWS::DynamoDB::Table')) {
    await createTable(clients.dynamodb, resources[logicalId]!.ref, resolveIntrinsics(resource.Properties ?? {}, context) as TableProps);
  }
  // Dead-letter queues before the queues that name them.
  const queues = resourcesOfType(template, 'AWS::SQS::Queue').sort(
    ([, a], [, b]) => Number(a.Properties?.['RedrivePolicy'] !== undefined) - Number(b.Properties?.['RedrivePolicy'] !== undefined),
  );
  for (const [logicalId, resource] of queues) {
    const props = resolveIntrinsics(resource.Properties ?? {}, context) as Record<string, unknown>;
    await clients.sqs.send(
      new CreateQueueCommand({
        QueueName: resources[logicalId]!.attributes['QueueName']!,
        Attributes: queueAttributes(props, logicalId, notEmulated),
      }),
    );
  }
  return { context, notEmulated, generatedSecrets };
}

interface GenerateSecretStringProps {
  PasswordLength?: number;
  ExcludeCharacters?: string;
  ExcludeLowercase?: boolean;
  ExcludeUppercase?: boolean;
  ExcludeNumbers?: boolean;
  ExcludePunctuation?: boolean;
  IncludeSpace?: boolean;
  SecretStringTemplate?: string;
  GenerateStringKey?: string;
}

const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

/**
 * What Secrets Manager's GetRandomPassword would generate for these properties (its defaults: 32
 * characters of letters, digits and punctuation), put in the template's JSON under its key when
 * there is one. Random each time, as CloudFormation's is.
 */
export function generateSecretString(value: unknown): string {
  const props = (typeof value === 'object' && value !== null ? value : {}) as GenerateSecretStringProps;
  const classes = [
    props.ExcludeLowercase ? '' : 'abcdefghijklmnopqrstuvwxyz',
    props.ExcludeUppercase ? '' : 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    props.ExcludeNumbers ? '' : '0123456789',
    props.ExcludePunctuation ? '' : PUNCTUATION,
    props.IncludeSpace ? ' ' : '',
  ].join('');
  const alphabet = [...classes].filter((ch) => !(props.ExcludeCharacters ?? '').includes(ch));
  if (alphabet.length === 0) throw new Error('GenerateSecretString excludes every character');
  const password = Array.from({ length: props.PasswordLength ?? 32 }, () => alphabet[randomInt(alphabet.length)]).join('');
  if (props.SecretStringTemplate === undefined || props.GenerateStringKey === undefined) return password;
  const template = JSON.parse(props.SecretStringTemplate) as Record<string, unknown>;
  return JSON.stringify({ ...template, [props.GenerateStringKey]: password });
}

function valuesOf(
  logicalId: string,
  resource: { Type: string; Properties?: Record<string, unknown> },
  settings: ResourceSettings,
  clients: LocalClients,
  arn: (service: string, resource: string, regional?: boolean) => string,
): ResourceValues {
  const props = resource.Properties ?? {};
  const named = (key: string, maxLength?: number): string => {
    const explicit = props[key];
    return typeof explicit === 'string' ? explicit : generatedName(settings.stackName, logicalId, maxLength);
  };
  switch (resource.Type) {
    case 'AWS::DynamoDB::Table': {
      const name = named('TableName', 255);
      return {
        ref: name,
        attributes: { Arn: arn('dynamodb', `table/${name}`), StreamArn: arn('dynamodb', `table/${name}/stream/rehearsal`) },
      };
    }
    case 'AWS::SQS::Queue': {
      const name = named('QueueName');
      const url = clients.queueUrl(name);
      return { ref: url, attributes: { Arn: arn('sqs', name), QueueName: name, QueueUrl: url } };
    }
    case 'AWS::Lambda::Function': {
      const name = named('FunctionName', 64);
      return { ref: name, attributes: { Arn: arn('lambda', `function:${name}`) } };
    }
    case 'AWS::Logs::LogGroup': {
      const name = named('LogGroupName', 512);
      return { ref: name, attributes: { Arn: arn('logs', `log-group:${name}:*`) } };
    }
    case 'AWS::IAM::Role': {
      const name = named('RoleName', 64);
      return { ref: name, attributes: { Arn: arn('iam', `role/${name}`, false), RoleId: `AROA${logicalId.slice(0, 16).toUpperCase()}` } };
    }
    case 'AWS::ApiGatewayV2::Api':
      return {
        ref: settings.apiId,
        attributes: { ApiId: settings.apiId, ApiEndpoint: `https://${settings.apiId}.execute-api.${settings.region}.amazonaws.com` },
      };
    case 'AWS::SNS::Topic': {
      const name = named('TopicName', 256);
      return { ref: arn('sns', name), attributes: { TopicArn: arn('sns', name), TopicName: name } };
    }
    case 'AWS::KMS::Key':
      return { ref: `key-${logicalId}`, attributes: { Arn: arn('kms', `key/key-${logicalId}`), KeyId: `key-${logicalId}` } };
    case 'AWS::CloudWatch::Alarm': {
      const name = named('AlarmName', 255);
      return { ref: name, attributes: { Arn: arn('cloudwatch', `alarm:${name}`) } };
    }
    default: {
      const id = generatedName(settings.stackName, logicalId);
      return { ref: id, attributes: { Arn: arn('rehearsal', id) } };
    }
  }
}

interface TableProps {
  KeySchema: { AttributeName: string; KeyType: string }[];
  AttributeDefinitions: { AttributeName: string; AttributeType: string }[];
  GlobalSecondaryIndexes?: {
    IndexName: string;
    KeySchema: { AttributeName: string; KeyType: string }[];
    Projection: Record<string, unknown>;
  }[];
  TimeToLiveSpecification?: { AttributeName: string; Enabled: boolean };
}

async function createTable(client: DynamoDBClient, tableName: string, props: TableProps): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      KeySchema: props.KeySchema as never,
      AttributeDefinitions: props.AttributeDefinitions as never,
      BillingMode: 'PAY_PER_REQUEST',
      ...(props.GlobalSecondaryIndexes ? { GlobalSecondaryIndexes: props.GlobalSecondaryIndexes as never } : {}),
    }),
  );
  if (props.TimeToLiveSpecification?.Enabled) {
    try {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: props.TimeToLiveSpecification.AttributeName, Enabled: true },
        }),
      );
    } catch {
      // dynalite has no TTL operation; the items' expiry attribute is still written and checked by the code.
    }
  }
}

const QUEUE_ATTRIBUTES = [
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'DelaySeconds',
  'MaximumMessageSize',
  'ReceiveMessageWaitTimeSeconds',
];

/** CloudFormation's queue properties as SQS attributes (strings); the redrive policy as SQS takes it. */
function queueAttributes(props: Record<string, unknown>, logicalId: string, notEmulated: string[]): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const key of QUEUE_ATTRIBUTES) {
    const value = props[key];
    if (typeof value === 'number' || typeof value === 'string') attributes[key] = String(value);
  }
  if (props['RedrivePolicy'] !== undefined) attributes['RedrivePolicy'] = JSON.stringify(props['RedrivePolicy']);
  for (const key of ['KmsMasterKeyId', 'FifoQueue']) if (props[key] !== undefined) notEmulated.push(`${logicalId}.${key}`);
  return attributes;
}
