/**
 * The AWS JSON protocol (1.0 and 1.1) as the local AWS servers speak it, so the real SDK clients talk to
 * them unchanged: `POST /` with `X-Amz-Target: <prefix><Operation>` and a JSON object body; the answer is
 * JSON with an `x-amzn-requestid`, an error `{ __type, message }` that the SDK maps to its exception class.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRecord } from '../shared/util';
import { readBody, sendJson } from './http';

/** The account every local AWS server's ARNs and URLs name. */
export const LOCAL_ACCOUNT_ID = '000000000000';

/** An error of the protocol (an unknown operation, a body that is no JSON object), or one a service throws. */
export class AwsJsonError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export interface AwsJsonService {
  /** `AmazonSQS.`, `secretsmanager.`: the X-Amz-Target before the operation. */
  targetPrefix: string;
  /** `application/x-amz-json-1.0` or `-1.1`. */
  contentType: string;
  /** Guards memory only. */
  maxRequestBytes: number;
  /** The operation's answer; throws to answer an error. `signal` aborts when the client goes away (a long poll). */
  dispatch(
    operation: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Any error thrown (an AwsJsonError or a BodyTooLargeError too) as the service answers it, with the headers it adds. */
  answerError(error: unknown): { type: string; message: string; status: number; headers: Record<string, string> };
  /** Hears every answer: the operation (the whole target when it has no prefix), its input when it parsed, the status. */
  answered?(operation: string, input: Record<string, unknown> | undefined, status: number): void;
}

/** Answers one request of the protocol. */
export async function serveAwsJson(service: AwsJsonService, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const target = String(req.headers['x-amz-target'] ?? '');
  const operation = target.startsWith(service.targetPrefix) ? target.slice(service.targetPrefix.length) : target;
  const headers = { 'content-type': service.contentType, 'x-amzn-requestid': randomUUID() };
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  let input: Record<string, unknown> | undefined;
  try {
    const raw = await readBody(req, service.maxRequestBytes);
    if (req.method !== 'POST' || !target.startsWith(service.targetPrefix))
      throw new AwsJsonError('UnknownOperationException', `Unknown operation ${target || '(missing X-Amz-Target header)'}`);
    input = parseInput(raw);
    const result = await service.dispatch(operation, input, abort.signal);
    service.answered?.(operation, input, 200);
    sendJson(res, 200, result, headers);
  } catch (thrown) {
    const error = service.answerError(thrown);
    service.answered?.(operation, input, error.status);
    sendJson(res, error.status, { __type: error.type, message: error.message }, { ...headers, ...error.headers });
  }
}

function parseInput(raw: Buffer): Record<string, unknown> {
  let input: unknown;
  try {
    input = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AwsJsonError('SerializationException', 'Request body is not valid JSON.');
  }
  if (!isRecord(input)) throw new AwsJsonError('SerializationException', 'Request body must be a JSON object.');
  return input;
}
