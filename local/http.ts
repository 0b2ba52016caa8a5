/** What every local server does the same way: listen, read a body up to a limit, answer, close. */
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The host part of a URL for a listen address (wildcards map to loopback, IPv6 in brackets). */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Listens, failing on the first error (e.g. port in use), and reports the port and URL.
 *
 * Idle keep-alive connections stay open until the client or `closeServer` closes them. With Node's default
 * (closed after 5 s idle) a client that reuses a connection after its event loop was blocked longer (a CDK
 * synth in the same process on a loaded machine) writes onto a socket the server's timer destroys in the same
 * turn: the client reads ECONNRESET. The local peers are not the place to shed idle connections.
 */
export async function listen(server: Server, port: number | undefined, host: string): Promise<{ port: number; url: string }> {
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return { port: address.port, url: `http://${urlHost(host)}:${address.port}` };
}

/** Stops listening and drops every connection (long polls and streams included). */
export async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

/** A body past the server's limit; each server answers it in its own protocol. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the body is over ${limit} bytes`);
  }
}

/** The whole request body; BodyTooLargeError as soon as it passes `limit` bytes (guards memory). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Answers with a content-length, unless an answer went already or the client is gone. */
export function send(res: ServerResponse, status: number, body: string | Buffer, headers: OutgoingHttpHeaders = {}): void {
  if (res.headersSent || res.destroyed) return;
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, { ...headers, 'content-length': payload.length });
  res.end(payload);
}

/** Answers `body` as JSON; `headers` may name another JSON content type (AWS's x-amz-json). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  send(res, status, JSON.stringify(body), { 'content-type': 'application/json; charset=utf-8', ...headers });
}
