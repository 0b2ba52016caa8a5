/**
 * The CLI's AWS adapters: clients built from --region / --endpoint-* / the SDK's environment
 * variables, with short timeouts (an operator waits at the terminal), and the stack-output lookup.
 *
 * Credentials come from the SDK's default chain (AWS_PROFILE, SSO, env…). A loopback endpoint
 * (a local peer: the SQS server, dynalite, the Secrets Manager server) gets dummy credentials and
 * region us-east-1 unless the environment sets them, so `--local` needs no AWS account.
 */
import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS } from '../shared/adapters/aws-clients';
import { aws, CliError, UsageError } from './errors';
import { ENV } from '../shared/contracts';

export type AwsService = 'sqs' | 'dynamodb' | 'secretsmanager' | 'cloudformation' | 'logs';

/** The SDK's service-specific endpoint variables (AWS_ENDPOINT_URL_<SERVICE>). */
const ENDPOINT_ENV: Record<AwsService, string> = {
  sqs: ENV.awsEndpointSqs,
  dynamodb: ENV.awsEndpointDynamodb,
  secretsmanager: 'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  cloudformation: 'AWS_ENDPOINT_URL_CLOUDFORMATION',
  logs: 'AWS_ENDPOINT_URL_CLOUDWATCH_LOGS',
};

export const SERVICE_LABEL: Record<AwsService, string> = {
  sqs: 'SQS',
  dynamodb: 'DynamoDB',
  secretsmanager: 'Secrets Manager',
  cloudformation: 'CloudFormation',
  logs: 'CloudWatch Logs',
};

export interface AwsSettings {
  region: string | undefined;
  endpoints: Partial<Record<AwsService, string>>;
  env: Readonly<Record<string, string | undefined>>;
}

/** The endpoint for a service: the flag, else AWS_ENDPOINT_URL_<SERVICE>, else AWS_ENDPOINT_URL. */
export function endpointFor(settings: AwsSettings, service: AwsService): string | undefined {
  const value = settings.endpoints[service] ?? settings.env[ENDPOINT_ENV[service]] ?? settings.env['AWS_ENDPOINT_URL'];
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

/** The region named by --region or the environment; undefined leaves it to the SDK (profile config). */
export function regionOf(settings: AwsSettings): string | undefined {
  const value = settings.region ?? settings.env[ENV.awsRegion] ?? settings.env['AWS_DEFAULT_REGION'];
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

export function isLoopback(endpoint: string | undefined): boolean {
  if (endpoint === undefined) return false;
  try {
    const host = new URL(endpoint).hostname;
    return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\./.test(host);
  } catch {
    return false;
  }
}

interface ClientConfig {
  region?: string;
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  maxAttempts: number;
  requestHandler: { connectionTimeout: number; requestTimeout: number };
}

export function clientConfig(settings: AwsSettings, service: AwsService): ClientConfig {
  const endpoint = endpointFor(settings, service);
  if (endpoint !== undefined) {
    try {
      const parsed = new URL(endpoint);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    } catch {
      throw new UsageError(`${SERVICE_LABEL[service]} endpoint is not an http(s) URL: ${endpoint} (e.g. http://127.0.0.1:9324)`);
    }
  }
  let region = regionOf(settings);
  const config: ClientConfig = {
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 30_000 },
  };
  if (isLoopback(endpoint)) {
    region ??= 'us-east-1';
    const accessKeyId = settings.env['AWS_ACCESS_KEY_ID'];
    const secretAccessKey = settings.env['AWS_SECRET_ACCESS_KEY'];
    config.credentials =
      accessKeyId && secretAccessKey
        ? {
            accessKeyId,
            secretAccessKey,
            ...(settings.env['AWS_SESSION_TOKEN'] ? { sessionToken: settings.env['AWS_SESSION_TOKEN'] } : {}),
          }
        : LOCAL_CREDENTIALS;
  }
  if (region !== undefined) config.region = region;
  if (endpoint !== undefined) config.endpoint = endpoint;
  return config;
}

export function sqsClient(settings: AwsSettings): SQSClient {
  return new SQSClient(clientConfig(settings, 'sqs'));
}

export function dynamoClient(settings: AwsSettings): DynamoDBClient {
  return new DynamoDBClient(clientConfig(settings, 'dynamodb'));
}

export function secretsClient(settings: AwsSettings): SecretsManagerClient {
  return new SecretsManagerClient(clientConfig(settings, 'secretsmanager'));
}

export function logsClient(settings: AwsSettings): CloudWatchLogsClient {
  return new CloudWatchLogsClient(clientConfig(settings, 'logs'));
}

// ---------------------------------------------------------------------------------------------
// Stack outputs
// ---------------------------------------------------------------------------------------------

export { STACK_OUTPUTS } from '../shared/contracts';

export interface StackInfo {
  name: string;
  status: string | undefined;
  outputs: Record<string, string>;
}

/**
 * DescribeStacks for one stack. Throws what the SDK throws (a `ValidationError` "does not exist"
 * for a missing stack); callers wrap it with `aws()` for the message. Tests inject one of these.
 */
export type DescribeStackFn = (stackName: string, settings: AwsSettings) => Promise<StackInfo>;

export const describeStackWithSdk: DescribeStackFn = async (stackName, settings) => {
  const client = new CloudFormationClient(clientConfig(settings, 'cloudformation'));
  try {
    const result = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const stack = result.Stacks?.[0];
    if (stack === undefined) {
      const error = new Error(`Stack with id ${stackName} does not exist`);
      error.name = 'ValidationError';
      throw error;
    }
    const outputs: Record<string, string> = {};
    for (const output of stack.Outputs ?? []) {
      if (output.OutputKey !== undefined && output.OutputValue !== undefined) outputs[output.OutputKey] = output.OutputValue;
    }
    return { name: stack.StackName ?? stackName, status: stack.StackStatus, outputs };
  } finally {
    client.destroy();
  }
};

/** Looks the stack up once per command run and names the missing output when one is needed. */
export class StackOutputs {
  private info: Promise<StackInfo> | undefined;

  constructor(
    readonly stackName: string,
    private readonly settings: AwsSettings,
    private readonly describe: DescribeStackFn,
    /** Runs once before the look-up: says which stack is read, or refuses a stack nobody named. */
    private readonly beforeLoad: () => void = () => undefined,
  ) {}

  load(): Promise<StackInfo> {
    if (this.info === undefined) this.beforeLoad();
    this.info ??= aws(
      {
        service: 'CloudFormation',
        resource: this.stackName,
        ...(regionOf(this.settings) !== undefined ? { region: regionOf(this.settings) } : {}),
        ...(endpointFor(this.settings, 'cloudformation') !== undefined ? { endpoint: endpointFor(this.settings, 'cloudformation') } : {}),
      },
      () => this.describe(this.stackName, this.settings),
    );
    return this.info;
  }

  /** The output's value, or a CliError naming the output and the flag that replaces it. */
  async require(key: string, flag?: string): Promise<string> {
    const info = await this.load();
    const value = info.outputs[key]?.trim();
    if (value === undefined || value === '') {
      throw new CliError(
        `stack ${this.stackName} has no output ${key}`,
        flag !== undefined ? `pass ${flag}, or redeploy the stack so it has the output` : 'redeploy the stack so it has the output',
        'missing_output',
      );
    }
    return value;
  }

  async optional(key: string): Promise<string | undefined> {
    const info = await this.load();
    const value = info.outputs[key]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }
}
