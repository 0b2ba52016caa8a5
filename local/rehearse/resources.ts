/**
 * The template's stateful resources created on the local peers as CloudFormation would create them
 * (generated physical names, the table's keys, indexes and TTL, each queue's attributes and redrive
 * policy, each secret with its template value), and the `Ref`/`Fn::GetAtt` values of every resource
 * so the rest of the template resolves against them.
 */
import { randomInt } from 'node:crypto';
import { CreateTableCommand, type CreateTableCommandInput, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { CreateSecretCommand, type GetRandomPasswordRequest, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { resourcesOfType, type CfnResource, type CfnTemplate } from './assembly';
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

export async function createResources(template: CfnTemplate, clients: LocalClients, settings: ResourceSettings): Promise<CreatedResources> {
  const { stackName, region, accountId } = settings;
  const resources: Record<string, ResourceValues> = {};
  const notEmulated: string[] = [];
  const generatedSecrets: Record<string, string> = {};
  const context: ResolveContext = { region, accountId, partition: 'aws', stackName, urlSuffix: 'amazonaws.com', resources };

  // Secrets first: their ARN carries a suffix only the service assigns.
  for (const [logicalId, resource] of resourcesOfType(template, 'AWS::SecretsManager::Secret')) {
    const props = resource.Properties ?? {};
    const name = nameOf(logicalId, resource, stackName);
    const generated = props['GenerateSecretString'] === undefined ? undefined : generateSecretString(props['GenerateSecretString']);
    if (generated !== undefined) generatedSecrets[logicalId] = generated;
    const SecretString = generated ?? (typeof props['SecretString'] === 'string' ? props['SecretString'] : undefined);
    if (SecretString === undefined) notEmulated.push(`${logicalId}: SecretString is not a plain string`);
    const answer = await clients.secretsManager.send(new CreateSecretCommand({ Name: name, SecretString }));
    resources[logicalId] = { ref: answer.ARN!, attributes: { Id: answer.ARN! } };
  }

  // Deterministic names and attributes for everything else.
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    resources[logicalId] ??= valuesOf(logicalId, resource, settings, clients);
  }

  // The template's key schema, attributes and indexes are the SDK's shapes. TimeToLiveSpecification is not
  // applied: dynalite has no TTL operation; the items' expiry attribute is still written and checked by the code.
  for (const [logicalId, resource] of resourcesOfType(template, 'AWS::DynamoDB::Table')) {
    const props = resolveIntrinsics(resource.Properties ?? {}, context) as CreateTableCommandInput;
    const { KeySchema, AttributeDefinitions, GlobalSecondaryIndexes } = props;
    const table = { TableName: resources[logicalId]!.ref, KeySchema, AttributeDefinitions, GlobalSecondaryIndexes };
    await clients.dynamodb.send(new CreateTableCommand({ ...table, BillingMode: 'PAY_PER_REQUEST' }));
  }
  // Dead-letter queues before the queues that name them.
  const queues = resourcesOfType(template, 'AWS::SQS::Queue').sort(
    ([, a], [, b]) => Number(a.Properties?.['RedrivePolicy'] !== undefined) - Number(b.Properties?.['RedrivePolicy'] !== undefined),
  );
  for (const [logicalId, resource] of queues) {
    const props = resolveIntrinsics(resource.Properties ?? {}, context) as Record<string, unknown>;
    const Attributes = queueAttributes(props, logicalId, notEmulated);
    await clients.sqs.send(new CreateQueueCommand({ QueueName: resources[logicalId]!.attributes['QueueName']!, Attributes }));
  }
  return { context, notEmulated, generatedSecrets };
}

/** GetRandomPassword's request, with the key and JSON template CloudFormation puts the password in. */
type GenerateSecretStringProps = GetRandomPasswordRequest & { SecretStringTemplate?: string; GenerateStringKey?: string };

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

/** The property naming a resource of each type, and the longest name CloudFormation generates for it. */
const NAME_PROPERTY: Record<string, [key: string, maxLength: number]> = {
  'AWS::DynamoDB::Table': ['TableName', 255],
  'AWS::SQS::Queue': ['QueueName', 80],
  'AWS::Lambda::Function': ['FunctionName', 64],
  'AWS::Logs::LogGroup': ['LogGroupName', 512],
  'AWS::IAM::Role': ['RoleName', 64],
  'AWS::SNS::Topic': ['TopicName', 256],
  'AWS::CloudWatch::Alarm': ['AlarmName', 255],
  'AWS::SecretsManager::Secret': ['Name', 64],
};

/** The resource's own name, or the one CloudFormation generates: `<stack>-<logicalId>-<suffix>`. */
function nameOf(logicalId: string, resource: CfnResource, stackName: string): string {
  const [key, maxLength = 80] = NAME_PROPERTY[resource.Type] ?? [];
  const explicit = key === undefined ? undefined : resource.Properties?.[key];
  if (typeof explicit === 'string') return explicit;
  return `${stackName}-${logicalId}`.slice(0, maxLength - SUFFIX.length - 1) + `-${SUFFIX}`;
}

function valuesOf(logicalId: string, resource: CfnResource, settings: ResourceSettings, clients: LocalClients): ResourceValues {
  const { region, accountId, apiId } = settings;
  const arn = (service: string, path: string, regional = true): string =>
    `arn:aws:${service}:${regional ? region : ''}:${accountId}:${path}`;
  const name = nameOf(logicalId, resource, settings.stackName);
  switch (resource.Type) {
    case 'AWS::DynamoDB::Table':
      return {
        ref: name,
        attributes: { Arn: arn('dynamodb', `table/${name}`), StreamArn: arn('dynamodb', `table/${name}/stream/rehearsal`) },
      };
    case 'AWS::SQS::Queue':
      return { ref: clients.queueUrl(name), attributes: { Arn: arn('sqs', name), QueueName: name, QueueUrl: clients.queueUrl(name) } };
    case 'AWS::Lambda::Function':
      return { ref: name, attributes: { Arn: arn('lambda', `function:${name}`) } };
    case 'AWS::Logs::LogGroup':
      return { ref: name, attributes: { Arn: arn('logs', `log-group:${name}:*`) } };
    case 'AWS::IAM::Role':
      return { ref: name, attributes: { Arn: arn('iam', `role/${name}`, false), RoleId: `AROA${logicalId.slice(0, 16).toUpperCase()}` } };
    case 'AWS::ApiGatewayV2::Api':
      return { ref: apiId, attributes: { ApiId: apiId, ApiEndpoint: `https://${apiId}.execute-api.${region}.amazonaws.com` } };
    case 'AWS::SNS::Topic':
      return { ref: arn('sns', name), attributes: { TopicArn: arn('sns', name), TopicName: name } };
    case 'AWS::KMS::Key':
      return { ref: `key-${logicalId}`, attributes: { Arn: arn('kms', `key/key-${logicalId}`), KeyId: `key-${logicalId}` } };
    case 'AWS::CloudWatch::Alarm':
      return { ref: name, attributes: { Arn: arn('cloudwatch', `alarm:${name}`) } };
    default:
      return { ref: name, attributes: { Arn: arn('rehearsal', name) } };
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
  const present = QUEUE_ATTRIBUTES.filter((key) => typeof props[key] === 'number' || typeof props[key] === 'string');
  const attributes: Record<string, string> = Object.fromEntries(present.map((key) => [key, String(props[key])]));
  if (props['RedrivePolicy'] !== undefined) attributes['RedrivePolicy'] = JSON.stringify(props['RedrivePolicy']);
  for (const key of ['KmsMasterKeyId', 'FifoQueue']) if (props[key] !== undefined) notEmulated.push(`${logicalId}.${key}`);
  return attributes;
}
