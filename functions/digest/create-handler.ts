/**
 * The digest handler for a given environment: hand the SQS batch to the digest runtime and return
 * the partial batch response. Kept apart from handler.ts so the local stack can build handlers for
 * its own environment without the Lambda module's cold-start configuration.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDigestRuntime, readDigestConfig } from './runtime';
import { createObservability, type Observability } from '../../shared/adapters/powertools';
import type { Env } from '../../shared/config-env';
import { DEFAULT_STAGE, ENV, SERVICES } from '../../shared/contracts';

export type DigestHandler = (event: SQSEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<SQSBatchResponse>;

export function createDigestHandler(env: Env, observability: Observability = observabilityFor(env)): DigestHandler {
  const runtime = createDigestRuntime(readDigestConfig(env), observability);
  return async (event, context) => {
    try {
      return await runtime.handle(event.Records, context.getRemainingTimeInMillis());
    } finally {
      observability.flush();
    }
  };
}

function observabilityFor(env: Env): Observability {
  return createObservability(env[ENV.powertoolsServiceName] ?? SERVICES.digest, env[ENV.stage] ?? DEFAULT_STAGE);
}
