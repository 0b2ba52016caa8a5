/** Translation between API Gateway HTTP API (payload format 2.0) events and the ingest request. */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { IngestRequest, IngestResponse } from '../../shared/ingest';

export function ingestRequestFromHttpApi(event: APIGatewayProxyEventV2): IngestRequest {
  const stage = event.requestContext.stage;
  // On a named stage rawPath carries the stage prefix; routes are matched without it.
  const prefix = stage && stage !== '$default' ? `/${stage}` : '';
  const path = prefix && event.rawPath.startsWith(`${prefix}/`) ? event.rawPath.slice(prefix.length) : event.rawPath;
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  return {
    method: event.requestContext.http.method,
    path,
    headers,
    body: event.body,
    isBase64Encoded: event.isBase64Encoded,
  };
}

export function httpApiResultFrom(response: IngestResponse): APIGatewayProxyStructuredResultV2 {
  return { statusCode: response.statusCode, headers: response.headers, body: response.body };
}
