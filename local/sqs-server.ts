// A small SQS-compatible server (AWS JSON 1.0 protocol) for local runs and integration tests.
// The real @aws-sdk/client-sqs talks to it unchanged; state lives in memory.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { AwsJsonError, LOCAL_ACCOUNT_ID, serveAwsJson, type AwsJsonService } from './aws-json';
import { BodyTooLargeError, closeServer, listen } from './http';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsClient as createBoundedSqsClient, LOCAL_CREDENTIALS } from '../shared/adapters/aws-clients';
import { SqsEngine, type DeadLettered } from './sqs/engine';
import { SqsError, internalError } from './sqs/errors';

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

/** The engine (./sqs/engine) behind its HTTP listener: queue URLs, ARNs, snapshots and `expedite` are the engine's. */
export class SqsServer extends SqsEngine {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly region: string,
    options: SqsServerOptions,
  ) {
    super({
      baseUrl: url,
      region,
      accountId: LOCAL_ACCOUNT_ID,
      ...(options.timeScale ? { timeScale: options.timeScale } : {}),
      ...(options.onDeadLetter ? { onDeadLetter: options.onDeadLetter } : {}),
      ...(options.fairQueues === false ? { fairQueues: false } : {}),
    });
  }

  static async start(options: SqsServerOptions = {}): Promise<SqsServer> {
    const server = createServer();
    const { url } = await listen(server, options.port, options.host ?? '127.0.0.1');
    const instance = new SqsServer(server, url, options.region ?? 'us-east-1', options);
    const service: AwsJsonService = {
      targetPrefix: 'AmazonSQS.',
      contentType: 'application/x-amz-json-1.0',
      // Far above SQS's 1 MiB message limit plus batch overhead; only guards memory.
      maxRequestBytes: 16 * 1024 * 1024,
      dispatch: (operation, input, signal) => instance.dispatch(operation, input, signal),
      answerError: (error) => {
        const { type, message, status, queryCode, fault } = asSqsError(error);
        return { type, message, status, headers: { 'x-amzn-query-error': `${queryCode};${fault}` } };
      },
    };
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void serveAwsJson(service, req, res));
    return instance;
  }

  /** Ends long polls at once (with no messages), stops timers and closes every socket. */
  async close(): Promise<void> {
    this.stop();
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

function asSqsError(error: unknown): SqsError {
  if (error instanceof SqsError) return error;
  // The protocol's own errors are Coral's, not SQS's modelled ones.
  if (error instanceof AwsJsonError) return new SqsError(error.type, error.message, { type: `com.amazon.coral.service#${error.type}` });
  if (error instanceof BodyTooLargeError) return new SqsError('RequestEntityTooLarge', 'Request body too large.', { status: 413 });
  return internalError(error instanceof Error ? error.message : String(error));
}
