/** Builds webhook deliveries exactly as the service sends them (spec §6), for tests. */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { signPayload } from '../../shared/signature';
import type { IngestRequest } from '../../shared/ingest';

export interface DeliveryOptions {
  id?: string;
  type?: string;
  createdAt?: string;
  data?: Record<string, unknown>;
  secret: string;
  timestampSeconds: number;
}

export function deliveryBody(options: Omit<DeliveryOptions, 'secret' | 'timestampSeconds'> = {}): { id: string; body: string } {
  const id = options.id ?? randomUUID();
  const body = JSON.stringify({
    id,
    type: options.type ?? 'run.completed',
    created_at: options.createdAt ?? '2026-11-20T10:00:00Z',
    data: options.data ?? { project_id: 'p-1', run_id: 'r-1', status: 'completed', answers: 120 },
  });
  return { id, body };
}

export function signedRequest(options: DeliveryOptions): IngestRequest & { id: string } {
  const { id, body } = deliveryBody(options);
  return {
    id,
    method: 'POST',
    path: '/webhook',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Service-Webhooks/1',
      'x-service-event': options.type ?? 'run.completed',
      'x-service-delivery': id,
      'x-service-signature': signPayload(options.secret, options.timestampSeconds, body),
    },
    body,
    isBase64Encoded: false,
  };
}

/** The HTTP API (payload 2.0) event API Gateway would hand the ingest function. */
export function httpApiEvent(input: {
  method?: string;
  rawPath?: string;
  stage?: string;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}): APIGatewayProxyEventV2 {
  const method = input.method ?? 'POST';
  const rawPath = input.rawPath ?? '/webhook';
  return {
    version: '2.0',
    routeKey: `${method} /webhook`,
    rawPath,
    rawQueryString: '',
    headers: input.headers,
    isBase64Encoded: input.isBase64Encoded ?? false,
    body: input.body,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: input.headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: `${method} /webhook`,
      stage: input.stage ?? '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
  };
}
