/**
 * The SQS client the integration tests use against the local SQS server: one attempt and short
 * timeouts, so a test of a failing queue fails fast instead of waiting out the SDK's retries.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsClient, LOCAL_CREDENTIALS } from '../../shared/adapters/aws-clients';

export function testSqsClient(endpoint: string): SQSClient {
  return createSqsClient({
    endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    requestTimeoutMs: 5000,
    connectionTimeoutMs: 1000,
    maxAttempts: 1,
  });
}
