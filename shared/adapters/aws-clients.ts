/**
 * AWS SDK clients with bounded timeouts and retries. The ingest function must answer inside the
 * sender's 10 s, so no single call may hang on the SDK's generous defaults.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ENV } from '../contracts';

export interface ClientBounds {
  /** Milliseconds to wait for a response once connected. */
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
  /** Total attempts including the first. */
  maxAttempts: number;
  /** Overrides for local peers (dynalite, the local SQS server). */
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

function clientConfig(bounds: ClientBounds) {
  return {
    maxAttempts: bounds.maxAttempts,
    // Without throwOnRequestTimeout the SDK only logs a warning when the request timeout passes.
    requestHandler: { requestTimeout: bounds.requestTimeoutMs, connectionTimeout: bounds.connectionTimeoutMs, throwOnRequestTimeout: true },
    ...(bounds.endpoint ? { endpoint: bounds.endpoint } : {}),
    ...(bounds.region ? { region: bounds.region } : {}),
    ...(bounds.credentials ? { credentials: bounds.credentials } : {}),
  };
}

export function createDynamoClient(bounds: ClientBounds): DynamoDBClient {
  return new DynamoDBClient(clientConfig(bounds));
}

export function createSqsClient(bounds: ClientBounds): SQSClient {
  return new SQSClient(clientConfig(bounds));
}

/** Credentials for local peers, which accept any. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** Endpoint and region overrides per service; empty in Lambda, where the SDK's defaults apply. */
export interface AwsEndpoints {
  dynamodb: { endpoint?: string; region?: string };
  sqs: { endpoint?: string; region?: string };
}

/**
 * Reads the SDK's own variable names (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS, AWS_REGION)
 * from the given environment, so several local stacks can live in one process with their own peers.
 */
export function readAwsEndpoints(env: Readonly<Record<string, string | undefined>>): AwsEndpoints {
  const region = env[ENV.awsRegion]?.trim() || undefined;
  const pick = (name: string) => {
    const endpoint = env[name]?.trim() || undefined;
    return { ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}) };
  };
  return { dynamodb: pick(ENV.awsEndpointDynamodb), sqs: pick(ENV.awsEndpointSqs) };
}
