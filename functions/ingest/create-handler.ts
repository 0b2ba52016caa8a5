/**
 * The ingest handler for a given environment: translate the HTTP API event, hand it to the ingest
 * domain, answer. Kept apart from handler.ts so the local stack can build handlers for its own
 * environment without the Lambda module's cold-start configuration.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { boundedHeader, handleDelivery } from '../../shared/ingest';
import { createIngestDeps, readIngestConfig } from './runtime';
import { createObservability, type Observability } from '../../shared/adapters/powertools';
import { httpApiResultFrom, ingestRequestFromHttpApi } from './http-api-event';
import type { Env } from '../../shared/config-env';
import { DEFAULT_STAGE, ENV, SERVICES } from '../../shared/contracts';

export type IngestHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

export function createIngestHandler(env: Env, observability: Observability = observabilityFor(env)): IngestHandler {
  const deps = createIngestDeps(readIngestConfig(env), observability);
  return async (event) => {
    const request = ingestRequestFromHttpApi(event);
    observability.appendKeys({ deliveryId: boundedHeader(request.headers['x-service-delivery']) });
    try {
      return httpApiResultFrom(await handleDelivery(request, deps));
    } finally {
      observability.flush();
      observability.resetKeys();
    }
  };
}

function observabilityFor(env: Env): Observability {
  return createObservability(env[ENV.powertoolsServiceName] ?? SERVICES.ingest, env[ENV.stage] ?? DEFAULT_STAGE);
}
