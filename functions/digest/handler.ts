/**
 * Digest Lambda (SQS event source with ReportBatchItemFailures): hand the batch to the digest
 * runtime and return the partial batch response. Configuration and clients are built once per container.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDigestRuntime, readDigestConfig } from '../../shared/digest-runtime';
import { createObservability, type Observability } from '../../shared/powertools';
import type { Env } from '../../shared/config-env';

export type DigestHandler = (event: SQSEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<SQSBatchResponse>;

/** Builds the handler for an environment (the local stack builds its own; Lambda uses `handler`). */
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

export const handler: DigestHandler = createDigestHandler(process.env);
