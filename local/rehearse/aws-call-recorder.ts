/**
 * A recording proxy in front of the local AWS peers (dynalite, the local SQS server, the local Secrets
 * Manager server) for the deploy rehearsal. Each function's SDK reaches its peer only through here
 * (`AWS_ENDPOINT_URL_*`), so every call it makes is recorded as IAM would authorize it — the principal
 * (the access key id the rehearsal gave the function), the IAM action, the ARNs touched and the condition
 * keys such as `dynamodb:LeadingKeys` — and then forwarded unchanged; the peer's answer comes back unchanged.
 *
 * A call is recorded before it is forwarded, so once a caller has its answer, `calls()` holds its call.
 * Each environment of a function signs with a session token of its own, and the rehearsal says which
 * invocation that environment is serving (`serving`), so each call is attributed to the invocation that made it.
 */
import {
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDynamoClient, LOCAL_CREDENTIALS } from '../../shared/adapters/aws-clients';
import { closeServer, listen, readBody } from '../http';
import { createSecretsManagerClient } from '../secrets-manager-server';
import { asArray, asRecord, isRecord } from '../../shared/util';

export type RecordedService = 'dynamodb' | 'sqs' | 'secretsmanager';
export const RECORDED_SERVICES: readonly RecordedService[] = ['dynamodb', 'sqs', 'secretsmanager'];

export interface RecordedAwsCall {
  /** The access key id of the SigV4 `Authorization` header ('' when unsigned). */
  principal: string;
  /** The invocation being served by the session that signed the call; absent outside one (a cold start's init). */
  invocation?: RecordedInvocation;
  service: RecordedService;
  /** As IAM names it, e.g. 'dynamodb:PutItem' (a SendMessageBatch is 'sqs:SendMessage', a TransactWriteItems Put is 'dynamodb:PutItem'). */
  action: string;
  /** ARNs the call touches; empty when the recorder could not tell (the IAM check then refuses the call). */
  resources: string[];
  /** Condition keys, e.g. {'dynamodb:LeadingKeys': ['delivery#abc'], 'dynamodb:ReturnValues': ['ALL_NEW']}. */
  context: Record<string, string[]>;
}

/** One function invocation, as the rehearsal handed it to the function. */
export interface RecordedInvocation {
  id: number;
  event: unknown;
}

export interface AwsCallRecorderOptions {
  /** Where each service's calls are forwarded (http://host:port of the local peer). */
  upstreams: Record<RecordedService, string>;
  region: string;
  accountId: string;
}

/** Above the largest request any of the three services accepts (a DynamoDB batch write: 16 MB). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** What one request amounts to for IAM, before the principal is added. */
type CallShape = Omit<RecordedAwsCall, 'principal' | 'invocation'>;
type Json = Record<string, unknown>;

/** Answers the questions the recorder must put to the upstreams (DescribeTable's key schemas, DescribeSecret's ARNs), cached. */
class Lookups {
  private readonly answers = new Map<string, Promise<unknown>>();

  constructor(
    private readonly options: AwsCallRecorderOptions,
    private readonly dynamo: DynamoDBClient,
    private readonly secrets: SecretsManagerClient,
  ) {}

  /** Partition key of the table, or of the index when one is named. */
  async partitionKey(tableName: string, indexName: string | undefined): Promise<string | undefined> {
    const keys = await this.cached(`table ${tableName}`, () => describeTableKeys(this.dynamo, tableName));
    return indexName === undefined ? keys?.table : (keys?.indexes[indexName] ?? keys?.table);
  }

  async secretArn(secretId: string): Promise<string> {
    if (secretId.startsWith('arn:')) return secretId;
    const described = await this.cached(`secret ${secretId}`, () => describeSecretArn(this.secrets, secretId));
    // A secret the peer doesn't know: the name-only ARN still names it in a denial.
    return described ?? `arn:aws:secretsmanager:${this.options.region}:${this.options.accountId}:secret:${secretId}`;
  }

  /** Failed look-ups are not cached: the table or secret may exist by the next call. */
  private async cached<T>(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const pending = (this.answers.get(key) as Promise<T | undefined> | undefined) ?? load();
    this.answers.set(key, pending);
    const value = await pending;
    if (value === undefined) this.answers.delete(key);
    return value;
  }
}

interface TableKeys {
  table: string;
  indexes: Record<string, string>;
}

async function describeTableKeys(client: DynamoDBClient, tableName: string): Promise<TableKeys | undefined> {
  try {
    const { Table: table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const hashOf = (schema: { AttributeName?: string | undefined; KeyType?: string | undefined }[] | undefined) =>
      schema?.find((element) => element.KeyType === 'HASH')?.AttributeName;
    const tableKey = hashOf(table?.KeySchema);
    if (tableKey === undefined) return undefined;
    const indexes: Record<string, string> = {};
    for (const index of [...(table?.GlobalSecondaryIndexes ?? []), ...(table?.LocalSecondaryIndexes ?? [])]) {
      const key = hashOf(index.KeySchema);
      if (index.IndexName && key) indexes[index.IndexName] = key;
    }
    return { table: tableKey, indexes };
  } catch {
    return undefined;
  }
}

async function describeSecretArn(client: SecretsManagerClient, secretId: string): Promise<string | undefined> {
  try {
    return (await client.send(new DescribeSecretCommand({ SecretId: secretId }))).ARN;
  } catch {
    return undefined;
  }
}

export class AwsCallRecorder {
  /** One slot per request in arrival order, filled once the request is understood. */
  private slots: { calls?: RecordedAwsCall[] }[] = [];
  /** Session token → the invocation its environment is serving now. */
  private readonly invocations = new Map<string, RecordedInvocation>();
  private invocationCount = 0;
  private readonly upstreamRequests = new Set<ClientRequest>();

  private constructor(
    private readonly options: AwsCallRecorderOptions,
    private readonly lookups: Lookups,
    private readonly clients: { destroy(): void }[],
    private readonly servers: Server[],
    readonly endpoints: Record<RecordedService, string>,
  ) {}

  static async start(options: AwsCallRecorderOptions): Promise<AwsCallRecorder> {
    for (const service of RECORDED_SERVICES) {
      const upstream = options.upstreams[service];
      if (!/^https?:\/\//.test(upstream ?? '')) {
        throw new Error(`AwsCallRecorder: upstreams.${service} must be the http(s) URL of the local peer, got ${JSON.stringify(upstream)}`);
      }
    }
    const dynamo = createDynamoClient({
      endpoint: options.upstreams.dynamodb,
      region: options.region,
      credentials: LOCAL_CREDENTIALS,
      // A look-up cut short by a busy event loop would record a call without its keys.
      requestTimeoutMs: 30_000,
      connectionTimeoutMs: 10_000,
      maxAttempts: 2,
    });
    const secrets = createSecretsManagerClient(options.upstreams.secretsmanager, options.region);
    const holder: { recorder?: AwsCallRecorder } = {};
    const servers: Server[] = [];
    const endpoints = {} as Record<RecordedService, string>;
    for (const service of RECORDED_SERVICES) {
      const server = createServer((req, res) => void holder.recorder?.handle(service, req, res));
      servers.push(server);
      endpoints[service] = (await listen(server, 0, '127.0.0.1')).url;
    }
    const recorder = new AwsCallRecorder(options, new Lookups(options, dynamo, secrets), [dynamo, secrets], servers, endpoints);
    holder.recorder = recorder;
    return recorder;
  }

  /** Every call recorded so far (since the last clear), in arrival order. */
  calls(): RecordedAwsCall[] {
    return this.slots
      .flatMap((slot) => slot.calls ?? [])
      .map((call) => ({ ...call, resources: [...call.resources], context: { ...call.context } }));
  }

  /**
   * The queue URL a function should be given: same path, this proxy's origin. The SQS client sends to the
   * QueueUrl's host unless it was given an explicit endpoint, so an upstream URL would bypass the recording.
   */
  queueUrlThroughProxy(queueUrl: string): string {
    const url = new URL(queueUrl);
    return `${this.endpoints.sqs}${url.pathname}`;
  }

  /**
   * From now until the returned function is called, the calls signed with `session` (an environment's
   * `X-Amz-Security-Token`) are made for the invocation of `event`.
   */
  serving(session: string, event: unknown): () => void {
    const invocation: RecordedInvocation = { id: ++this.invocationCount, event };
    this.invocations.set(session, invocation);
    return () => {
      if (this.invocations.get(session) === invocation) this.invocations.delete(session);
    };
  }

  clear(): void {
    this.slots = [];
  }

  async close(): Promise<void> {
    for (const request of this.upstreamRequests) request.destroy();
    await Promise.all(this.servers.map(closeServer));
    for (const client of this.clients) client.destroy();
  }

  private async handle(service: RecordedService, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const slot: { calls?: RecordedAwsCall[] } = {};
    this.slots.push(slot);
    const session = req.headers['x-amz-security-token'];
    const invocation = typeof session === 'string' ? this.invocations.get(session) : undefined;
    let body: Buffer;
    try {
      body = await readBody(req, MAX_BODY_BYTES);
    } catch {
      res.destroy();
      return;
    }
    const principal = principalOf(req.headers.authorization);
    const shapes = await this.shapesOf(service, req, body);
    slot.calls = shapes.map((shape) => ({ principal, ...shape, ...(invocation ? { invocation } : {}) }));
    this.forward(service, req, body, res);
  }

  private async shapesOf(service: RecordedService, req: IncomingMessage, body: Buffer): Promise<CallShape[]> {
    const { operation, input } = parseRequest(req, body);
    const ctx: ShapeContext = { region: this.options.region, accountId: this.options.accountId, lookups: this.lookups };
    try {
      if (service === 'dynamodb') return await dynamoShapes(operation, input, ctx);
      if (service === 'sqs') return [sqsShape(operation, input, ctx)];
      return [await secretsShape(operation, input, ctx)];
    } catch {
      // A request we cannot read is still forwarded (the peer answers it); the IAM check refuses a call without resources.
      return [{ service, action: `${service}:${operation}`, resources: [], context: {} }];
    }
  }

  private forward(service: RecordedService, req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const upstream = new URL(req.url ?? '/', this.options.upstreams[service]);
    const upstreamRequest = httpRequest(upstream, { method: req.method, headers: { ...req.headers, host: upstream.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    this.upstreamRequests.add(upstreamRequest);
    upstreamRequest.on('close', () => this.upstreamRequests.delete(upstreamRequest));
    upstreamRequest.on('error', (error) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res
        .writeHead(502, { 'content-type': 'text/plain' })
        .end(`recording proxy: ${service} peer ${upstream.origin} unreachable: ${error.message}`);
    });
    upstreamRequest.end(body);
  }
}

/** `AWS4-HMAC-SHA256 Credential=<AKID>/<date>/<region>/<service>/aws4_request, …` → AKID. */
export function principalOf(authorization: string | undefined): string {
  return /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1] ?? '';
}

/**
 * The operation and its input: AWS JSON (`X-Amz-Target: <prefix>.<Operation>`, JSON body), or the
 * query protocol an older SQS client sends (`Action=<Operation>&…`, form-encoded).
 */
function parseRequest(req: IncomingMessage, body: Buffer): { operation: string; input: Json } {
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string' && target.includes('.')) {
    return { operation: target.slice(target.lastIndexOf('.') + 1), input: parseJsonObject(body) };
  }
  const form = new URLSearchParams(body.toString('utf8'));
  const action = form.get('Action');
  if (action) return { operation: action, input: Object.fromEntries(form.entries()) };
  return { operation: 'UnknownOperation', input: {} };
}

function parseJsonObject(body: Buffer): Json {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8') || '{}');
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

interface ShapeContext {
  region: string;
  accountId: string;
  lookups: Lookups;
}

// -- DynamoDB ----------------------------------------------------------------------------------------

/** Single-valued condition keys copied from the request when present. */
const DYNAMO_REQUEST_KEYS = ['ReturnValues', 'Select', 'ReturnConsumedCapacity'] as const;

interface DynamoPart {
  action: string;
  tableName: string;
  indexName?: string | undefined;
  /** Key or item attribute maps whose partition key values are the call's leading keys. */
  keyMaps: Json[];
  /** For a Query: the value bound to the partition key, found once the key's name is known. */
  query?: Json;
  enclosing?: string;
  input: Json;
}

async function dynamoShapes(operation: string, input: Json, ctx: ShapeContext): Promise<CallShape[]> {
  const parts = dynamoParts(operation, input);
  if (parts.length === 0) return [{ service: 'dynamodb', action: `dynamodb:${operation}`, resources: [], context: {} }];
  return Promise.all(parts.map((part) => dynamoShape(part, ctx)));
}

/** Splits a request into what IAM authorizes separately: one part per table, one per transaction item. */
function dynamoParts(operation: string, input: Json): DynamoPart[] {
  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return [single(operation, input, [asRecord(input.Key)])];
    case 'PutItem':
      return [single(operation, input, [asRecord(input.Item)])];
    case 'Query':
      return [{ ...single(operation, input, []), query: input }];
    case 'BatchGetItem':
      return Object.entries(asRecord(input.RequestItems)).map(([table, request]) => ({
        action: 'dynamodb:BatchGetItem',
        tableName: table,
        keyMaps: asArray(asRecord(request).Keys).map(asRecord),
        input,
      }));
    case 'BatchWriteItem':
      return Object.entries(asRecord(input.RequestItems)).map(([table, requests]) => ({
        action: 'dynamodb:BatchWriteItem',
        tableName: table,
        keyMaps: asArray(requests).map((request) => {
          const { PutRequest: put, DeleteRequest: del } = asRecord(request);
          return put !== undefined ? asRecord(asRecord(put).Item) : asRecord(asRecord(del).Key);
        }),
        input,
      }));
    case 'TransactGetItems':
    case 'TransactWriteItems':
      return asArray(input.TransactItems).flatMap((item) => transactionParts(operation, asRecord(item)));
    default:
      return typeof input.TableName === 'string' ? [single(operation, input, [])] : [];
  }
}

function single(operation: string, input: Json, keyMaps: Json[]): DynamoPart {
  const indexName = typeof input.IndexName === 'string' ? input.IndexName : undefined;
  return { action: `dynamodb:${operation}`, tableName: String(input.TableName), indexName, keyMaps, input };
}

/** IAM authorizes each transaction item as its own action, with dynamodb:EnclosingOperation. */
const TRANSACTION_ACTIONS: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

function transactionParts(operation: string, item: Json): DynamoPart[] {
  return Object.entries(item).flatMap(([kind, request]) => {
    const action = TRANSACTION_ACTIONS[kind];
    if (!action) return [];
    const body = asRecord(request);
    const keyMap = asRecord(kind === 'Put' ? body.Item : body.Key);
    return [{ action: `dynamodb:${action}`, tableName: String(body.TableName), keyMaps: [keyMap], enclosing: operation, input: body }];
  });
}

async function dynamoShape(part: DynamoPart, ctx: ShapeContext): Promise<CallShape> {
  const tableName = part.tableName.startsWith('arn:')
    ? part.tableName.slice(part.tableName.indexOf('table/') + 'table/'.length)
    : part.tableName;
  const tableArn = `arn:aws:dynamodb:${ctx.region}:${ctx.accountId}:table/${tableName}`;
  const resource = part.indexName === undefined ? tableArn : `${tableArn}/index/${part.indexName}`;
  const context: Record<string, string[]> = {};
  const leadingKeys = await leadingKeysOf(part, tableName, ctx);
  if (leadingKeys.length > 0) context['dynamodb:LeadingKeys'] = [...new Set(leadingKeys)];
  for (const key of DYNAMO_REQUEST_KEYS) {
    const value = part.input[key];
    if (typeof value === 'string') context[`dynamodb:${key}`] = [value];
  }
  if (part.enclosing) context['dynamodb:EnclosingOperation'] = [part.enclosing];
  return { service: 'dynamodb', action: part.action, resources: [resource], context };
}

async function leadingKeysOf(part: DynamoPart, tableName: string, ctx: ShapeContext): Promise<string[]> {
  if (part.keyMaps.length === 0 && part.query === undefined) return [];
  const partitionKey = await ctx.lookups.partitionKey(tableName, part.indexName);
  if (partitionKey === undefined) return [];
  const values = part.keyMaps.map((keyMap) => attributeText(keyMap[partitionKey]));
  if (part.query) values.push(queryPartitionValue(part.query, partitionKey));
  return values.filter((value): value is string => value !== undefined);
}

/** The value a Query binds to the partition key: `pk = :v` (or `#n = :v`) in KeyConditionExpression, or legacy KeyConditions. */
export function queryPartitionValue(input: Json, partitionKey: string): string | undefined {
  const legacy = asRecord(asRecord(input.KeyConditions)[partitionKey]);
  if (legacy.ComparisonOperator === 'EQ') return attributeText(asArray(legacy.AttributeValueList)[0]);
  const expression = typeof input.KeyConditionExpression === 'string' ? input.KeyConditionExpression : '';
  const names = asRecord(input.ExpressionAttributeNames);
  const values = asRecord(input.ExpressionAttributeValues);
  const nameOf = (token: string) => (token.startsWith('#') ? names[token] : token);
  for (const match of expression.matchAll(/([#\w.:-]+)\s*=\s*([#\w.:-]+)/g)) {
    const [left, right] = [match[1]!, match[2]!];
    if (nameOf(left) === partitionKey && right.startsWith(':')) return attributeText(values[right]);
    if (nameOf(right) === partitionKey && left.startsWith(':')) return attributeText(values[left]);
  }
  return undefined;
}

/** An AttributeValue's text, as IAM compares partition key values: S and N as written, B as base64. */
function attributeText(value: unknown): string | undefined {
  const attribute = asRecord(value);
  for (const type of ['S', 'N', 'B'] as const) if (typeof attribute[type] === 'string') return attribute[type];
  return undefined;
}

// -- SQS -----------------------------------------------------------------------------------------------

/** The batch operations are authorized as their single-message action. */
const SQS_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

function sqsShape(operation: string, input: Json, ctx: ShapeContext): CallShape {
  const action = `sqs:${SQS_ACTIONS[operation] ?? operation}`;
  const queueName =
    typeof input.QueueUrl === 'string'
      ? lastPathSegment(input.QueueUrl)
      : typeof input.QueueName === 'string'
        ? input.QueueName
        : undefined;
  const resources = queueName ? [`arn:aws:sqs:${ctx.region}:${ctx.accountId}:${queueName}`] : [];
  return { service: 'sqs', action, resources, context: {} };
}

function lastPathSegment(url: string): string | undefined {
  try {
    return new URL(url).pathname.split('/').filter(Boolean).pop();
  } catch {
    return undefined;
  }
}

// -- Secrets Manager ----------------------------------------------------------------------------------

async function secretsShape(operation: string, input: Json, ctx: ShapeContext): Promise<CallShape> {
  const secretId = typeof input.SecretId === 'string' ? input.SecretId : undefined;
  const resources = secretId === undefined ? [] : [await ctx.lookups.secretArn(secretId)];
  return { service: 'secretsmanager', action: `secretsmanager:${operation}`, resources, context: {} };
}
