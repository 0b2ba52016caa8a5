/**
 * The ingest handler for a given environment: translate the HTTP API event, hand it to the ingest
 * domain, answer. Kept apart from handler.ts so the local stack can build handlers for its own
 * environment without the Lambda module's cold-start configuration.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { boundedHeader, handleDelivery } from '../../shared/ingest';
import { createIngestDeps, readIngestConfig } from './runtime';
import { createObservability, type Observability } from '../../shared/adapters/powertools';
import { httpApiResult, httpApiRouteOf } from '../http-api';
import type { Env } from '../../shared/config-env';
import { DEFAULT_STAGE, ENV, SERVICES } from '../../shared/contracts';

export type IngestHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

export function createIngestHandler(env: Env, observability: Observability = observabilityFor(env)): IngestHandler {
  const deps = createIngestDeps(readIngestConfig(env), observability);
  return async (event) => {
    // The body stays as sent (base64 or not): its size is checked before it is decoded.
    const request = { ...httpApiRouteOf(event), body: event.body, isBase64Encoded: event.isBase64Encoded };
    observability.appendKeys({ deliveryId: boundedHeader(request.headers['x-service-delivery']) });
    try {
      return httpApiResult(await handleDelivery(request, deps));
    } finally {
      observability.flush();
      observability.resetKeys();
    }
  };
}

function observabilityFor(env: Env): Observability {
  return createObservability(env[ENV.powertoolsServiceName] ?? SERVICES.ingest, env[ENV.stage] ?? DEFAULT_STAGE);
}
