/**
 * The SQS client the integration tests use against the local SQS server: one attempt, so a test of a
 * failing queue fails fast instead of waiting out the SDK's retries; timeouts no loaded machine reaches.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsClient, LOCAL_CREDENTIALS } from '../../shared/adapters/aws-clients';

export function testSqsClient(endpoint: string): SQSClient {
  return createSqsClient({
    endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    requestTimeoutMs: 60_000,
    connectionTimeoutMs: 30_000,
    maxAttempts: 1,
  });
}
