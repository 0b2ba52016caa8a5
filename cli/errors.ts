/**
 * Errors the CLI prints instead of stack traces. `UsageError` exits 2; `CliError` exits 1 and
 * carries a fix. `explainError` turns SDK and network errors into one of them.
 */

export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    /** The command whose usage to print with the message. */
    readonly command?: string,
  ) {
    super(message);
  }
}

export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    /** What to do about it. */
    readonly fix?: string,
    /** A stable code for `--json` consumers. */
    readonly code = 'error',
  ) {
    super(message);
  }
}

/** What was being called when an error happened, for the message. */
export interface ErrorContext {
  /** e.g. 'SQS', 'CloudFormation', 'Secrets Manager', 'DynamoDB'. */
  service?: string | undefined;
  endpoint?: string | undefined;
  region?: string | undefined;
  /** e.g. the queue URL, stack name or secret id. */
  resource?: string | undefined;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

function errorName(err: unknown): string {
  if (typeof err !== 'object' || err === null) return '';
  const name = (err as { name?: unknown }).name;
  const code = (err as { Code?: unknown }).Code;
  if (typeof name === 'string' && name !== 'Error') return name;
  if (typeof code === 'string') return code;
  return typeof name === 'string' ? name : '';
}

function message(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The first network error code (ECONNREFUSED, ENOTFOUND…) or timeout in an error's cause chain. */
export function networkCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    const name = (current as { name?: unknown }).name;
    if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const inner = networkCode(errors[0]);
      if (inner !== undefined) return inner;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function where(ctx: ErrorContext): string {
  const service = ctx.service ?? 'AWS';
  if (ctx.endpoint !== undefined) return `${service} at ${ctx.endpoint}`;
  return ctx.region !== undefined ? `${service} in ${ctx.region}` : service;
}

/** A CliError for any error thrown while talking to AWS (or a local AWS-compatible peer). */
export function explainError(err: unknown, ctx: ErrorContext = {}): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof UsageError) return new CliError(err.message, undefined, 'usage');
  const name = errorName(err);
  const text = message(err);

  if (name === 'CredentialsProviderError' || /could not load credentials/i.test(text)) {
    return new CliError(
      'no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or run `aws sso login`)',
      'configure credentials for the account that holds the stack, or pass --local READY_FILE for the local stack',
      'no_credentials',
    );
  }
  if (/region is missing/i.test(text)) {
    return new CliError('no AWS region: pass --region or set AWS_REGION', 'e.g. --region eu-west-1', 'no_region');
  }
  if (name === 'ValidationError' && /does not exist/i.test(text)) {
    const stack = ctx.resource ?? 'the stack';
    const region = ctx.region !== undefined ? ` in region ${ctx.region}` : '';
    return new CliError(
      `stack ${stack} does not exist${region}`,
      'check --stack (or BRIDGE_STACK) and --region (a wrong region looks like a missing stack); deploy with `npx cdk deploy -c stage=<stage>`',
      'stack_not_found',
    );
  }
  if (
    name === 'QueueDoesNotExist' ||
    name === 'AWS.SimpleQueueService.NonExistentQueue' ||
    /NonExistentQueue|specified queue does not exist/i.test(text)
  ) {
    const queue = ctx.resource ?? 'the queue';
    return new CliError(
      `queue does not exist: ${queue}${ctx.endpoint !== undefined ? ` (SQS at ${ctx.endpoint})` : ''}`,
      'check --queue-url / --dlq-url, --stack and --region (the stack outputs QueueUrl and DlqUrl name the queues)',
      'queue_not_found',
    );
  }
  if (name === 'ResourceNotFoundException') {
    const resource = ctx.resource ?? 'the resource';
    return new CliError(
      `${ctx.service ?? 'AWS'}: ${resource} not found (${text})`,
      ctx.service === 'Secrets Manager'
        ? 'check --secret-id (or the stack outputs *SecretArn) and --region'
        : 'check the names given and --region',
      'not_found',
    );
  }
  if (
    name === 'UnrecognizedClientException' ||
    name === 'InvalidClientTokenId' ||
    name === 'InvalidSignatureException' ||
    name === 'SignatureDoesNotMatch' ||
    name === 'ExpiredToken' ||
    name === 'ExpiredTokenException'
  ) {
    return new CliError(
      `${where(ctx)} rejected the credentials (${name})`,
      'refresh them (e.g. `aws sso login`), check AWS_PROFILE, and check that --region is enabled for the account',
      'bad_credentials',
    );
  }
  if (name === 'AccessDenied' || name === 'AccessDeniedException' || /not authorized to perform/i.test(text)) {
    return new CliError(
      `${where(ctx)} denied access: ${text}`,
      'use a role allowed to operate the stack (see the IAM policy in the README)',
      'access_denied',
    );
  }
  const network = networkCode(err);
  if (network !== undefined) {
    return new CliError(
      `cannot reach ${where(ctx)} (${network})`,
      ctx.endpoint !== undefined ? 'check the endpoint URL and that the server is running' : 'check the network and --region',
      'unreachable',
    );
  }
  if (name === 'UnknownEndpoint' || /getaddrinfo|connect E/i.test(text)) {
    return new CliError(`cannot reach ${where(ctx)}: ${text}`, 'check --region and the endpoint', 'unreachable');
  }
  const label = name !== '' && name !== 'Error' ? `${name}: ` : '';
  return new CliError(`${where(ctx)} failed: ${label}${text}`, undefined, 'aws_error');
}

/** Runs one AWS call and turns its failure into a CliError with context. */
export async function aws<T>(ctx: ErrorContext, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw explainError(err, ctx);
  }
}
