/**
 * A local stand-in for CloudFormation's DescribeStacks, so the CLI's stack look-up runs through the
 * real `@aws-sdk/client-cloudformation` client (endpoint override) in tests and the local stack.
 *
 * The AWS query protocol: the client POSTs `application/x-www-form-urlencoded` with `Action`,
 * `Version` and `StackName`; the answer is XML (`DescribeStacksResponse`), and an error is an
 * `ErrorResponse` with HTTP 400, as CloudFormation sends for a stack that does not exist. Any other
 * action answers `InvalidAction`. Requests are not signed-checked: any credentials are accepted.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { closeServer, listen, readBody, send } from './http';

export interface LocalStackDescription {
  name: string;
  /** Default CREATE_COMPLETE. */
  status?: string;
  outputs: Record<string, string>;
}

export interface CloudFormationCall {
  action: string | undefined;
  stackName: string | undefined;
  /** The `Authorization` header was present (the SDK signed the request). */
  signed: boolean;
}

const XMLNS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';
const CREATED = '2026-11-01T00:00:00.000Z';
/** A DescribeStacks request is a few hundred bytes; this only guards memory. */
const MAX_REQUEST_BYTES = 64 * 1024;

export class LocalCloudFormationServer {
  private readonly stacks = new Map<string, LocalStackDescription>();
  private readonly recorded: CloudFormationCall[] = [];

  private constructor(
    private readonly server: http.Server,
    /** Pass as the CloudFormation endpoint (e.g. `--endpoint-cloudformation`). */
    readonly url: string,
  ) {}

  static async start(stacks: readonly LocalStackDescription[] = []): Promise<LocalCloudFormationServer> {
    const server = http.createServer();
    const { url } = await listen(server, 0, '127.0.0.1');
    server.unref();
    const instance = new LocalCloudFormationServer(server, url);
    for (const stack of stacks) instance.putStack(stack);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      void instance.handle(req, res);
    });
    return instance;
  }

  putStack(stack: LocalStackDescription): void {
    this.stacks.set(stack.name, stack);
  }

  /** Every request received, oldest first. */
  calls(): CloudFormationCall[] {
    return this.recorded.map((c) => ({ ...c }));
  }

  async close(): Promise<void> {
    await closeServer(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const answer = await readBody(req, MAX_REQUEST_BYTES).then(
      (raw) => this.answer(req, new URLSearchParams(raw.toString('utf8'))),
      () => errorXml(413, 'RequestEntityTooLarge', 'Request body too large'),
    );
    send(res, answer.status, answer.body, { 'content-type': 'text/xml', 'x-amzn-requestid': answer.requestId });
  }

  private answer(req: http.IncomingMessage, params: URLSearchParams): XmlAnswer {
    const action = params.get('Action') ?? undefined;
    const stackName = params.get('StackName') ?? undefined;
    this.recorded.push({ action, stackName, signed: typeof req.headers.authorization === 'string' });
    return action === 'DescribeStacks'
      ? this.describeStacks(stackName)
      : errorXml(400, 'InvalidAction', `Could not find operation ${action ?? '(none)'}`);
  }

  private describeStacks(stackName: string | undefined): XmlAnswer {
    // Without a name CloudFormation lists every stack; the CLI always names one.
    const wanted = stackName === undefined ? [...this.stacks.values()] : [this.stacks.get(stackName)].filter((s) => s !== undefined);
    if (stackName !== undefined && wanted.length === 0)
      return errorXml(400, 'ValidationError', `Stack with id ${stackName} does not exist`);
    const requestId = randomUUID();
    const members = wanted.map(stackXml).join('');
    const body = `<DescribeStacksResponse xmlns="${XMLNS}"><DescribeStacksResult><Stacks>${members}</Stacks></DescribeStacksResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></DescribeStacksResponse>`;
    return { status: 200, requestId, body };
  }
}

interface XmlAnswer {
  status: number;
  requestId: string;
  body: string;
}

function stackXml(stack: LocalStackDescription): string {
  const outputs = Object.entries(stack.outputs)
    .map(([key, value]) => `<member><OutputKey>${escapeXml(key)}</OutputKey><OutputValue>${escapeXml(value)}</OutputValue></member>`)
    .join('');
  const id = `arn:aws:cloudformation:us-east-1:000000000000:stack/${stack.name}/00000000-0000-0000-0000-000000000000`;
  return `<member><StackName>${escapeXml(stack.name)}</StackName><StackId>${escapeXml(id)}</StackId><CreationTime>${CREATED}</CreationTime><StackStatus>${escapeXml(stack.status ?? 'CREATE_COMPLETE')}</StackStatus><Outputs>${outputs}</Outputs></member>`;
}

function errorXml(status: number, code: string, message: string): XmlAnswer {
  const requestId = randomUUID();
  const body = `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
  return { status, requestId, body };
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}
