/**
 * A small HTTP proxy that adds the same latency to every call to a peer (dynalite, the simulator's
 * read API, the local Slack server) and records when each request arrived and when its answer was
 * sent, so a benchmark can count the chain of requests a digest actually made.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep } from './lib';

export interface ProxiedRequest {
  peer: string;
  method: string;
  path: string;
  /** Epoch ms when the request arrived at the proxy. */
  at: number;
  /** Epoch ms when the proxy finished sending the answer. */
  finishedAt: number;
  /** The AWS JSON protocol's operation (x-amz-target), e.g. DynamoDB_20120810.GetItem; '' for plain HTTP. */
  target: string;
  contentType: string;
  /** The request body as sent (UTF-8), so a benchmark can replay the same request. */
  body: string;
  status: number;
}

export class LatencyProxy {
  readonly url: string;
  private readonly recorded: ProxiedRequest[] = [];

  private constructor(
    private readonly server: http.Server,
    private readonly agent: http.Agent,
  ) {
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Forwards to `target` (an http:// origin) after `latencyMs` per request. */
  static async start(peer: string, target: string, latencyMs: number): Promise<LatencyProxy> {
    const upstream = new URL(target);
    const agent = new http.Agent({ keepAlive: true });
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new LatencyProxy(server, agent);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      proxy.forward(peer, upstream, latencyMs, req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`latency proxy: ${error instanceof Error ? error.message : String(error)}`);
      });
    });
    return proxy;
  }

  requests(): ProxiedRequest[] {
    return this.recorded.map((r) => ({ ...r }));
  }

  clear(): void {
    this.recorded.length = 0;
  }

  async close(): Promise<void> {
    this.agent.destroy();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async forward(
    peer: string,
    upstream: URL,
    latencyMs: number,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<void> {
    const at = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await sleep(latencyMs);
    const answer = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const out = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
          agent: this.agent,
        },
        (upstreamRes) => {
          const parts: Buffer[] = [];
          upstreamRes.on('data', (part: Buffer) => parts.push(part));
          upstreamRes.on('end', () =>
            resolve({ status: upstreamRes.statusCode ?? 502, headers: upstreamRes.headers, body: Buffer.concat(parts) }),
          );
          upstreamRes.on('error', reject);
        },
      );
      out.on('error', reject);
      out.end(Buffer.concat(chunks));
    });
    const headers = { ...answer.headers, 'content-length': String(answer.body.length) };
    delete headers['transfer-encoding'];
    res.writeHead(answer.status, headers);
    const header = (name: string): string => String(req.headers[name] ?? '');
    res.end(answer.body, () => {
      this.recorded.push({
        peer,
        method: req.method ?? '',
        path: req.url ?? '',
        at,
        finishedAt: Date.now(),
        target: header('x-amz-target'),
        contentType: header('content-type'),
        body: Buffer.concat(chunks).toString('utf8'),
        status: answer.status,
      });
    });
  }
}

/**
 * The longest chain of requests that each started after the one before had been answered: the
 * greedy earliest-end schedule, which is a maximum set of requests no two of which overlap. Each
 * link costs at least the injected latency, so chain length × latency is the least wall time the
 * digest could take with the calls it made, in the order it made them.
 */
export function longestChain(requests: readonly ProxiedRequest[]): ProxiedRequest[] {
  const byEnd = [...requests].sort((a, b) => a.finishedAt - b.finishedAt);
  const chain: ProxiedRequest[] = [];
  let free = Number.NEGATIVE_INFINITY;
  for (const request of byEnd) {
    if (request.at < free) continue;
    chain.push(request);
    free = request.finishedAt;
  }
  return chain;
}
