/**
 * AWS SDK clients with bounded timeouts and retries. The ingest function must answer inside the
 * sender's 10 s, so no single call may hang on the SDK's generous defaults.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';

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
    requestHandler: { requestTimeout: bounds.requestTimeoutMs, connectionTimeout: bounds.connectionTimeoutMs },
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
