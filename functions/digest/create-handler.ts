/**
 * The digest handler for a given environment: hand the SQS batch to the digest runtime and return
 * the partial batch response. Kept apart from handler.ts so the local stack can build handlers for
 * its own environment without the Lambda module's cold-start configuration.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDigestRuntime, readDigestConfig } from '../../shared/digest-runtime';
import { createObservability, type Observability } from '../../shared/powertools';
import type { Env } from '../../shared/config-env';

export type DigestHandler = (event: SQSEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<SQSBatchResponse>;

export function createDigestHandler(env: Env, observability: Observability = createObservability(env['POWERTOOLS_SERVICE_NAME'] ?? 'digest')): DigestHandler {
  const runtime = createDigestRuntime(readDigestConfig(env), observability);
  return async (event, context) => {
    try {
      return await runtime.handle(event.Records, context.getRemainingTimeInMillis());
    } finally {
      observability.flush();
    }
  };
}
