// A small SQS-compatible server (AWS JSON 1.0 protocol) for local runs and integration tests.
// The real @aws-sdk/client-sqs talks to it unchanged; state lives in memory.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BodyTooLargeError, closeServer, listen, readBody, sendJson } from './http';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsClient as createBoundedSqsClient, LOCAL_CREDENTIALS } from '../shared/adapters/aws-clients';
import { SqsEngine, type DeadLettered, type QueuesSnapshot } from './sqs/engine';
import { SqsError, internalError, unknownOperation } from './sqs/errors';
import { isRecord } from '../shared/util';

export interface SqsServerOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Region used in queue ARNs; default us-east-1. */
  region?: string;
  /** Visibility timeouts and delays pass this many times faster (default 1; see the engine). */
  timeScale?: number;
  /** Called when a redrive moves a message to its dead-letter queue. */
  onDeadLetter?: (moved: DeadLettered) => void;
  /** false: receives ignore MessageGroupId (no fair queues; see the engine). Default true. */
  fairQueues?: boolean;
}

export const ACCOUNT_ID = '000000000000';
const TARGET_PREFIX = 'AmazonSQS.';
// Far above SQS's 1 MiB message limit plus batch overhead; only guards memory.
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;
const CONTENT_TYPE = 'application/x-amz-json-1.0';

export class SqsServer {
  private constructor(
    private readonly server: Server,
    private readonly engine: SqsEngine,
    readonly url: string,
    readonly region: string,
  ) {}

  static async start(options: SqsServerOptions = {}): Promise<SqsServer> {
    const host = options.host ?? '127.0.0.1';
    const region = options.region ?? 'us-east-1';
    const holder: { engine?: SqsEngine } = {};
    const server = createServer((req, res) => {
      void handle(holder.engine, req, res);
    });
    const { url } = await listen(server, options.port, host);
    const engine = new SqsEngine({
      baseUrl: url,
      region,
      accountId: ACCOUNT_ID,
      ...(options.timeScale ? { timeScale: options.timeScale } : {}),
      ...(options.onDeadLetter ? { onDeadLetter: options.onDeadLetter } : {}),
      ...(options.fairQueues === false ? { fairQueues: false } : {}),
    });
    holder.engine = engine;
    return new SqsServer(server, engine, url, region);
  }

  /** See `SqsEngine.expedite`: the rest of these messages' visibility timeout, compressed by timeScale. */
  expedite(queueUrl: string, messageIds: readonly string[]): void {
    this.engine.expedite(queueUrl, messageIds);
  }

  /** `${url}/000000000000/<name>`, whether or not the queue exists. */
  queueUrl(name: string): string {
    return this.engine.queueUrl(name);
  }

  /** `arn:aws:sqs:<region>:000000000000:<name>`, whether or not the queue exists. */
  queueArn(name: string): string {
    return this.engine.queueArn(name);
  }

  /** See `SqsEngine.snapshot`: every queue's messages, as JSON. */
  snapshot(): QueuesSnapshot {
    return this.engine.snapshot();
  }

  /** See `SqsEngine.restore`. */
  restore(snapshot: QueuesSnapshot): void {
    this.engine.restore(snapshot);
  }

  /** Ends long polls at once (with no messages), stops timers and closes every socket. */
  async close(): Promise<void> {
    this.engine.close();
    // Let the ended long polls' responses flush before dropping connections.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await closeServer(this.server);
  }
}

/** An SQS client for this server: dummy credentials and a fixed region, so nothing is looked up. */
export function createSqsClient(endpoint: string, region = 'us-east-1'): SQSClient {
  return createBoundedSqsClient({
    endpoint,
    region,
    credentials: LOCAL_CREDENTIALS,
    // Long polls last up to 20 s, so the socket timeout must be longer.
    connectionTimeoutMs: 5_000,
    requestTimeoutMs: 30_000,
    maxAttempts: 3,
  });
}

async function handle(engine: SqsEngine | undefined, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = randomUUID();
  // Aborts a long poll when the client disconnects, so no message is taken for nobody.
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  try {
    if (!engine) throw internalError('Server is starting.');
    const target = headerValue(req.headers['x-amz-target']);
    const raw = await readBody(req, MAX_REQUEST_BYTES);
    if (req.method !== 'POST' || !target.startsWith(TARGET_PREFIX)) throw unknownOperation(target);
    const result = await engine.dispatch(target.slice(TARGET_PREFIX.length), parseInput(raw), abort.signal);
    send(res, 200, requestId, result);
  } catch (error) {
    const sqsError = asSqsError(error);
    send(
      res,
      sqsError.status,
      requestId,
      { __type: sqsError.type, message: sqsError.message },
      { 'x-amzn-query-error': `${sqsError.queryCode};${sqsError.fault}` },
    );
  }
}

function parseInput(raw: Buffer): Record<string, unknown> {
  const serialization = (message: string): SqsError =>
    new SqsError('SerializationException', message, { type: 'com.amazon.coral.service#SerializationException' });
  let input: unknown;
  try {
    input = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
  } catch {
    throw serialization('Request body is not valid JSON.');
  }
  if (!isRecord(input)) throw serialization('Request body must be a JSON object.');
  return input;
}

function asSqsError(error: unknown): SqsError {
  if (error instanceof SqsError) return error;
  if (error instanceof BodyTooLargeError) return new SqsError('RequestEntityTooLarge', 'Request body too large.', { status: 413 });
  return internalError(error instanceof Error ? error.message : String(error));
}

function headerValue(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function send(
  res: ServerResponse,
  status: number,
  requestId: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, body, { 'content-type': CONTENT_TYPE, 'x-amzn-requestid': requestId, ...headers });
}
