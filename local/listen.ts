/** Starting the local servers: listen, fail on the first error (e.g. port in use), report the URL. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The host part of a URL for a listen address (wildcards map to loopback, IPv6 in brackets). */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export async function listen(server: Server, port: number | undefined, host: string): Promise<{ port: number; url: string }> {
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
