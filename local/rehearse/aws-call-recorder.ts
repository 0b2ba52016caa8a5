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
import { createServer, request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { DescribeTableCommand, type DynamoDBClient, type KeySchemaElement } from '@aws-sdk/client-dynamodb';
import { DescribeSecretCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDynamoClient, LOCAL_CREDENTIALS } from '../../shared/adapters/aws-clients';
import { closeServer, listen, readBody } from '../http';
import { createSecretsManagerClient } from '../secrets-manager-server';
import { asArray, asRecord, parseJsonOrUndefined } from '../../shared/util';

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

/** What the shapes need: ARNs of this account and region, and the answers of the upstreams, cached. */
interface ShapeContext {
  arn(service: RecordedService, resource: string): string;
  /** Partition key of the table, or of the index when one is named. */
  partitionKey(tableName: string, indexName: string | undefined): Promise<string | undefined>;
  secretArn(secretId: string): Promise<string>;
}

function shapeContext(options: AwsCallRecorderOptions, dynamo: DynamoDBClient, secrets: SecretsManagerClient): ShapeContext {
  const arn = (service: RecordedService, resource: string) => `arn:aws:${service}:${options.region}:${options.accountId}:${resource}`;
  const tableKeys = cachedLookup((tableName) => describeTableKeys(dynamo, tableName));
  const secretArns = cachedLookup(async (secretId) => (await secrets.send(new DescribeSecretCommand({ SecretId: secretId }))).ARN);
  return {
    arn,
    async partitionKey(tableName, indexName) {
      const keys = await tableKeys(tableName);
      return (indexName === undefined ? undefined : keys?.[`index ${indexName}`]) ?? keys?.table;
    },
    // A secret the peer doesn't know: the name-only ARN still names it in a denial.
    secretArn: async (secretId) =>
      secretId.startsWith('arn:') ? secretId : ((await secretArns(secretId)) ?? arn('secretsmanager', `secret:${secretId}`)),
  };
}

/** A look-up that failed (threw or found nothing) is not cached: the table or secret may exist by the next call. */
function cachedLookup<T>(load: (key: string) => Promise<T | undefined>): (key: string) => Promise<T | undefined> {
  const answers = new Map<string, Promise<T | undefined>>();
  return async (key) => {
    const pending = answers.get(key) ?? load(key).catch(() => undefined);
    answers.set(key, pending);
    const value = await pending;
    if (value === undefined) answers.delete(key);
    return value;
  };
}

/** The hash key of the table (`table`) and of each of its indexes (`index <name>`). */
async function describeTableKeys(client: DynamoDBClient, tableName: string): Promise<Record<string, string> | undefined> {
  const { Table: table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const hashOf = (schema: KeySchemaElement[] | undefined) => schema?.find((element) => element.KeyType === 'HASH')?.AttributeName;
  const tableKey = hashOf(table?.KeySchema);
  if (tableKey === undefined) return undefined;
  const indexes = [...(table?.GlobalSecondaryIndexes ?? []), ...(table?.LocalSecondaryIndexes ?? [])];
  const keys = indexes.map((index) => [`index ${index.IndexName}`, hashOf(index.KeySchema)] as const);
  return { table: tableKey, ...Object.fromEntries(keys.filter(([, key]) => key !== undefined)) };
}

export class AwsCallRecorder {
  /** One slot per request in arrival order, filled once the request is understood. */
  private slots: { calls?: RecordedAwsCall[] }[] = [];
  /** Session token → the invocation its environment is serving now. */
  private readonly invocations = new Map<string, RecordedInvocation>();
  private invocationCount = 0;
  private readonly upstreamRequests = new Set<ClientRequest>();
  private readonly servers = RECORDED_SERVICES.map((service) => createServer((req, res) => void this.handle(service, req, res)));
  private readonly shapes: ShapeContext;
  readonly endpoints = {} as Record<RecordedService, string>;

  private constructor(
    private readonly options: AwsCallRecorderOptions,
    private readonly clients: [DynamoDBClient, SecretsManagerClient],
  ) {
    this.shapes = shapeContext(options, ...clients);
  }

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
    const recorder = new AwsCallRecorder(options, [dynamo, createSecretsManagerClient(options.upstreams.secretsmanager, options.region)]);
    for (const [index, service] of RECORDED_SERVICES.entries()) {
      recorder.endpoints[service] = (await listen(recorder.servers[index]!, 0, '127.0.0.1')).url;
    }
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
    return `${this.endpoints.sqs}${new URL(queueUrl).pathname}`;
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
    try {
      if (service === 'dynamodb') return await dynamoShapes(operation, input, this.shapes);
      if (service === 'sqs') return [sqsShape(operation, input, this.shapes)];
      return [await secretsShape(operation, input, this.shapes)];
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
      const why = `recording proxy: ${service} peer ${upstream.origin} unreachable: ${error.message}`;
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'content-type': 'text/plain' }).end(why);
    });
    upstreamRequest.end(body);
  }
}

/** `AWS4-HMAC-SHA256 Credential=<AKID>/<date>/<region>/<service>/aws4_request, …` → AKID. */
export function principalOf(authorization: string | undefined): string {
  return /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1] ?? '';
}

/**
 * The operation and its input, as the three SDK clients send them (AWS JSON: `X-Amz-Target:
 * <prefix>.<Operation>`, a JSON body); anything else is an unknown operation, which the IAM check refuses.
 */
function parseRequest(req: IncomingMessage, body: Buffer): { operation: string; input: Json } {
  const target = req.headers['x-amz-target'];
  if (typeof target !== 'string' || !target.includes('.')) return { operation: 'UnknownOperation', input: {} };
  return { operation: target.slice(target.lastIndexOf('.') + 1), input: asRecord(parseJsonOrUndefined(body.toString('utf8'))) };
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

// -- DynamoDB ----------------------------------------------------------------------------------------

/** Single-valued condition keys copied from the request when present. */
const DYNAMO_REQUEST_KEYS = ['ReturnValues', 'Select', 'ReturnConsumedCapacity'] as const;

/** What IAM authorizes separately: one part per table, one per transaction item. */
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

/** IAM authorizes each transaction item as its own action, with dynamodb:EnclosingOperation. */
const TRANSACTION_ACTIONS: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

/** The attribute map a request names its item by: its Key, or the Item it puts. */
const keyMapOf = (request: unknown): Json => asRecord(asRecord(request).Key ?? asRecord(request).Item);

function dynamoParts(operation: string, input: Json): DynamoPart[] {
  const part = (tableName: unknown, keyMaps: Json[], request = input, action = operation): DynamoPart => ({
    action: `dynamodb:${action}`,
    tableName: String(tableName),
    indexName: text(request.IndexName),
    keyMaps,
    input: request,
  });
  const perTable = (keyMapsOf: (request: unknown) => Json[]) =>
    Object.entries(asRecord(input.RequestItems)).map(([table, request]) => part(table, keyMapsOf(request)));
  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
    case 'PutItem':
      return [part(input.TableName, [keyMapOf(input)])];
    case 'Query':
      return [{ ...part(input.TableName, []), query: input }];
    case 'BatchGetItem':
      return perTable((request) => asArray(asRecord(request).Keys).map(asRecord));
    case 'BatchWriteItem':
      return perTable((requests) =>
        asArray(requests).map((request) => keyMapOf(asRecord(request).PutRequest ?? asRecord(request).DeleteRequest)),
      );
    case 'TransactGetItems':
    case 'TransactWriteItems':
      return asArray(input.TransactItems).flatMap((item) =>
        Object.entries(asRecord(item)).flatMap(([kind, request]) => {
          const action = TRANSACTION_ACTIONS[kind];
          const body = asRecord(request);
          return action ? [{ ...part(body.TableName, [keyMapOf(body)], body, action), enclosing: operation }] : [];
        }),
      );
    default:
      return typeof input.TableName === 'string' ? [part(input.TableName, [])] : [];
  }
}

async function dynamoShape(part: DynamoPart, ctx: ShapeContext): Promise<CallShape> {
  const tableName = part.tableName.startsWith('arn:')
    ? part.tableName.slice(part.tableName.indexOf('table/') + 'table/'.length)
    : part.tableName;
  const tableArn = ctx.arn('dynamodb', `table/${tableName}`);
  const resource = part.indexName === undefined ? tableArn : `${tableArn}/index/${part.indexName}`;
  const context: Record<string, string[]> = {};
  const leadingKeys = await leadingKeysOf(part, tableName, ctx);
  if (leadingKeys.length > 0) context['dynamodb:LeadingKeys'] = [...new Set(leadingKeys)];
  for (const key of DYNAMO_REQUEST_KEYS) {
    const value = text(part.input[key]);
    if (value !== undefined) context[`dynamodb:${key}`] = [value];
  }
  if (part.enclosing) context['dynamodb:EnclosingOperation'] = [part.enclosing];
  return { service: 'dynamodb', action: part.action, resources: [resource], context };
}

async function leadingKeysOf(part: DynamoPart, tableName: string, ctx: ShapeContext): Promise<string[]> {
  if (part.keyMaps.length === 0 && part.query === undefined) return [];
  const partitionKey = await ctx.partitionKey(tableName, part.indexName);
  if (partitionKey === undefined) return [];
  const values = part.keyMaps.map((keyMap) => attributeText(keyMap[partitionKey]));
  if (part.query) values.push(queryPartitionValue(part.query, partitionKey));
  return values.filter((value): value is string => value !== undefined);
}

/** The value a Query binds to the partition key: `pk = :v` (or `#n = :v`) in KeyConditionExpression (no code sends legacy KeyConditions). */
function queryPartitionValue(input: Json, partitionKey: string): string | undefined {
  const names = asRecord(input.ExpressionAttributeNames);
  const values = asRecord(input.ExpressionAttributeValues);
  const nameOf = (token: string) => (token.startsWith('#') ? names[token] : token);
  for (const match of (text(input.KeyConditionExpression) ?? '').matchAll(/([#\w.:-]+)\s*=\s*([#\w.:-]+)/g)) {
    const [left, right] = [match[1]!, match[2]!];
    if (nameOf(left) === partitionKey && right.startsWith(':')) return attributeText(values[right]);
    if (nameOf(right) === partitionKey && left.startsWith(':')) return attributeText(values[left]);
  }
  return undefined;
}

/** An AttributeValue's text, as IAM compares partition key values: S and N as written, B as base64. */
function attributeText(value: unknown): string | undefined {
  const attribute = asRecord(value);
  return text(attribute.S) ?? text(attribute.N) ?? text(attribute.B);
}

// -- SQS and Secrets Manager ---------------------------------------------------------------------------

/** The batch operations are authorized as their single-message action. */
const SQS_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

function sqsShape(operation: string, input: Json, ctx: ShapeContext): CallShape {
  const url = text(input.QueueUrl);
  const queueName =
    url === undefined ? text(input.QueueName) : URL.canParse(url) ? new URL(url).pathname.split('/').filter(Boolean).pop() : undefined;
  const resources = queueName ? [ctx.arn('sqs', queueName)] : [];
  return { service: 'sqs', action: `sqs:${SQS_ACTIONS[operation] ?? operation}`, resources, context: {} };
}

async function secretsShape(operation: string, input: Json, ctx: ShapeContext): Promise<CallShape> {
  const secretId = text(input.SecretId);
  const resources = secretId === undefined ? [] : [await ctx.secretArn(secretId)];
  return { service: 'secretsmanager', action: `secretsmanager:${operation}`, resources, context: {} };
}
