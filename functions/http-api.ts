/**
 * API Gateway HTTP API (payload format 2.0) events as plain requests: the path without the stage
 * prefix, lower-case header names, and the body as the bytes that were sent (HTTP API base64-encodes
 * form and binary bodies; a signature covers the bytes, so they are decoded, never re-serialised).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** What every handler reads of a request before its body. */
export interface HttpApiRoute {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
}

export interface HttpApiRequest extends HttpApiRoute {
  rawBody: Buffer;
}

export function httpApiRouteOf(event: APIGatewayProxyEventV2): HttpApiRoute {
  return { method: event.requestContext.http.method, path: pathOf(event), headers: lowerCaseHeaders(event) };
}

export function httpApiRequestOf(event: APIGatewayProxyEventV2): HttpApiRequest {
  return { ...httpApiRouteOf(event), rawBody: rawBodyOf(event) };
}

/** On a named stage rawPath carries the stage prefix; routes are matched without it. */
export function pathOf(event: APIGatewayProxyEventV2): string {
  const stage = event.requestContext.stage;
  const prefix = stage && stage !== '$default' ? `/${stage}` : '';
  return prefix && event.rawPath.startsWith(`${prefix}/`) ? event.rawPath.slice(prefix.length) : event.rawPath;
}

export function lowerCaseHeaders(event: APIGatewayProxyEventV2): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

export function rawBodyOf(event: APIGatewayProxyEventV2): Buffer {
  const text = event.body ?? '';
  return event.isBase64Encoded ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
}

export function httpApiResult(response: {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}): APIGatewayProxyStructuredResultV2 {
  return { statusCode: response.statusCode, headers: response.headers, body: response.body };
}
