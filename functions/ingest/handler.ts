/**
 * Ingest Lambda (HTTP API, payload 2.0): translate the event, hand it to the ingest domain, answer.
 * Configuration and clients are built once per container.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { handleDelivery } from '../../shared/ingest';
import { createIngestDeps, readIngestConfig } from '../../shared/ingest-runtime';
import { createObservability } from '../../shared/powertools';
import { httpApiResultFrom, ingestRequestFromHttpApi } from '../../shared/http-api-event';

const observability = createObservability(process.env['POWERTOOLS_SERVICE_NAME'] ?? 'ingest');
const deps = createIngestDeps(readIngestConfig(process.env), observability);

export async function handler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const request = ingestRequestFromHttpApi(event);
  observability.appendKeys({ deliveryId: request.headers['x-service-delivery'] });
  try {
    return httpApiResultFrom(await handleDelivery(request, deps));
  } finally {
    observability.flush();
    observability.resetKeys();
  }
}
