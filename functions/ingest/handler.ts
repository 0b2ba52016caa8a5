/**
 * Ingest Lambda (HTTP API, payload 2.0): translate the event, hand it to the ingest domain, answer.
 * Configuration and clients are built once per container, from the environment given.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { handleDelivery } from '../../shared/ingest';
import { createIngestDeps, readIngestConfig } from '../../shared/ingest-runtime';
import { createObservability, type Observability } from '../../shared/powertools';
import { httpApiResultFrom, ingestRequestFromHttpApi } from '../../shared/http-api-event';
import type { Env } from '../../shared/config-env';

export type IngestHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

/** Builds the handler for an environment (the local stack builds its own; Lambda uses `handler`). */
export function createIngestHandler(env: Env, observability: Observability = createObservability(env['POWERTOOLS_SERVICE_NAME'] ?? 'ingest')): IngestHandler {
  const deps = createIngestDeps(readIngestConfig(env), observability);
  return async (event) => {
    const request = ingestRequestFromHttpApi(event);
    observability.appendKeys({ deliveryId: request.headers['x-service-delivery'] });
    try {
      return httpApiResultFrom(await handleDelivery(request, deps));
    } finally {
      observability.flush();
      observability.resetKeys();
    }
  };
}

export const handler: IngestHandler = createIngestHandler(process.env);
