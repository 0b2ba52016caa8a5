/**
 * The cold-start floor that makes the same requests as the function: a warm-up first invocation of
 * the real bundle is recorded by proxies in front of every peer (DynamoDB and SQS operations with
 * their bodies, read-API and Slack calls with path, body and answer status), and the baseline bundle
 * (the SDK clients constructed, no bridge code) replays exactly those requests, with the same
 * concurrency: requests the function had in flight together are sent together, the rest one after
 * the other. So the floor pays for the same round trips, SDK serialisation and JSON parsing, and the
 * ratio measures what the bridge's own code adds.
 */
import type { ProxiedRequest } from './latency-proxy';

export type ReplayPeer = 'dynamodb' | 'sqs' | 'read-api' | 'slack';

export interface ReplayRequest {
  peer: ReplayPeer;
  /** AWS operation (GetItem, SendMessage, ...) or '' for plain HTTP. */
  operation: string;
  method: string;
  path: string;
  contentType: string;
  body: string;
  /** HTTP status the function got; the replay must get the same. */
  status: number;
  /** A conditional write: replayed on fresh keys (see ReplayBaseline.replace) so its condition holds again. */
  write: boolean;
}

/** Waves of requests: the requests of one wave are sent together, the waves one after the other. */
export type ReplayPlan = ReplayRequest[][];

const AWS_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

function replayRequest(r: ProxiedRequest): ReplayRequest {
  const peer = r.peer as ReplayPeer;
  const operation = r.target === '' ? '' : r.target.slice(r.target.lastIndexOf('.') + 1);
  if ((peer === 'dynamodb' || peer === 'sqs') && operation === '')
    throw new Error(`cannot replay a ${peer} request without x-amz-target (query protocol?): ${r.method} ${r.path}`);
  return {
    peer,
    operation,
    method: r.method,
    path: r.path,
    contentType: r.contentType,
    body: r.body,
    status: r.status,
    write: AWS_WRITES.has(operation),
  };
}

/**
 * Groups recorded requests into waves: a request joins the current wave when it was sent before any
 * request of that wave had been answered (so it did not wait for one), else it starts the next wave.
 */
export function replayPlan(requests: readonly ProxiedRequest[]): ReplayPlan {
  const waves: ReplayPlan = [];
  let firstAnswer = Number.NEGATIVE_INFINITY;
  for (const r of [...requests].sort((a, b) => a.at - b.at)) {
    const wave = waves.at(-1);
    if (wave !== undefined && r.at < firstAnswer) {
      wave.push(replayRequest(r));
      firstAnswer = Math.min(firstAnswer, r.finishedAt);
    } else {
      waves.push([replayRequest(r)]);
      firstAnswer = r.finishedAt;
    }
  }
  return waves;
}

/**
 * The ids in the keys of the recorded writes (the part after the key prefix, e.g. the event id of
 * `digest#<id>`): replaced by fresh ones in the replay, so conditions like attribute_not_exists hold.
 */
export function writeKeyIds(requests: readonly ProxiedRequest[]): string[] {
  const ids = new Set<string>();
  for (const r of requests.map(replayRequest).filter((x) => x.write)) {
    const input = JSON.parse(r.body) as { Key?: Record<string, { S?: string }>; Item?: Record<string, { S?: string }> };
    for (const value of Object.values(input.Key ?? input.Item ?? {})) {
      if (typeof value.S === 'string') ids.add(value.S.slice(value.S.lastIndexOf('#') + 1));
    }
  }
  return [...ids].filter((id) => id.length >= 8);
}

/** The kind of a request for counting: AWS operation per peer, or HTTP method and path with ids as ':id'. */
export function requestKind(r: { peer: string; target?: string; operation?: string; method: string; path: string }): string {
  const operation = r.operation ?? (r.target ? r.target.slice(r.target.lastIndexOf('.') + 1) : '');
  if (operation !== '') return `${r.peer} ${operation}`;
  const pathname = r.path.split('?')[0]!;
  const generic = pathname
    .split('/')
    .map((segment) => (/\d/.test(segment) ? ':id' : segment))
    .join('/');
  return `${r.peer} ${r.method} ${generic}`;
}

/** Requests per kind, keys sorted. */
export function countKinds(requests: readonly Parameters<typeof requestKind>[0][]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) {
    const kind = requestKind(r);
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/** Kinds whose counts differ between two countings, as "kind: a vs b"; empty when equal. */
export function countDifferences(a: Record<string, number>, b: Record<string, number>): string[] {
  const kinds = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return kinds.filter((k) => (a[k] ?? 0) !== (b[k] ?? 0)).map((k) => `${k}: ${a[k] ?? 0} vs ${b[k] ?? 0}`);
}

export interface BaselineClients {
  dynamodb: boolean;
  sqs: boolean;
  secretsManager: boolean;
}

/** The SDK clients a function bundle holds, read from its esbuild inputs. */
export function sdkClientsIn(inputs: readonly string[]): BaselineClients {
  const has = (pkg: string): boolean => inputs.some((path) => path.includes(`node_modules/@aws-sdk/${pkg}/`));
  return { dynamodb: has('client-dynamodb'), sqs: has('client-sqs'), secretsManager: has('client-secrets-manager') };
}

/**
 * Bounds and endpoint like the functions' own (shared/adapters/aws-clients.ts), so both SDKs are
 * configured alike (an explicit endpoint also keeps SQS from sending to the queue URL's host).
 */
function clientConfig(endpointVariable: string): string {
  const endpoint = `...(process.env.${endpointVariable} ? { endpoint: process.env.${endpointVariable} } : {})`;
  return `{ maxAttempts: 3, requestHandler: { requestTimeout: 3000, connectionTimeout: 1000, throwOnRequestTimeout: true }, ${endpoint} }`;
}

/**
 * Source of a baseline function: each SDK client the real bundle holds, constructed; a handler that
 * replays `plan`. Its event is `{ replace: [[recordedId, freshId], ...] }`, applied to write bodies.
 */
export function replayBaselineSource(plan: ReplayPlan, clients: BaselineClients): string {
  const requests = plan.flat();
  const ops = (peer: ReplayPeer): string[] => [...new Set(requests.filter((r) => r.peer === peer).map((r) => r.operation))].sort();
  const dynamoOps = ops('dynamodb');
  const sqsOps = ops('sqs');
  if (dynamoOps.length > 0 && !clients.dynamodb)
    throw new Error('the recording has DynamoDB calls but the bundle holds no DynamoDB client');
  if (sqsOps.length > 0 && !clients.sqs) throw new Error('the recording has SQS calls but the bundle holds no SQS client');
  const lines: string[] = [];
  if (clients.dynamodb) {
    lines.push(`import { DynamoDBClient${dynamoOps.map((o) => `, ${o}Command`).join('')} } from '@aws-sdk/client-dynamodb';`);
    lines.push(`const dynamodb = new DynamoDBClient(${clientConfig('AWS_ENDPOINT_URL_DYNAMODB')});`);
    lines.push(`const DYNAMODB = { ${dynamoOps.map((o) => `${o}: ${o}Command`).join(', ')} };`);
  }
  if (clients.sqs) {
    lines.push(`import { SQSClient${sqsOps.map((o) => `, ${o}Command`).join('')} } from '@aws-sdk/client-sqs';`);
    lines.push(`const sqs = new SQSClient(${clientConfig('AWS_ENDPOINT_URL_SQS')});`);
    lines.push(`const SQS = { ${sqsOps.map((o) => `${o}: ${o}Command`).join(', ')} };`);
  }
  if (clients.secretsManager) {
    lines.push(`import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';`);
    lines.push(`export const secrets = new SecretsManagerClient(${clientConfig('AWS_ENDPOINT_URL_SECRETS_MANAGER')});`);
  }
  lines.push(`const PLAN = ${JSON.stringify(plan)};`);
  lines.push(REPLAY_HANDLER);
  return lines.join('\n');
}

/** The replaying handler (plain JavaScript, bundled into the baseline). */
const REPLAY_HANDLER = `
function fresh(text, replace) {
  for (const [from, to] of replace) text = text.split(from).join(to);
  return text;
}
async function http(r) {
  const slack = r.peer === 'slack';
  const base = slack ? process.env.SLACK_API_URL : process.env.READ_API_BASE_URL;
  const token = slack ? process.env.SLACK_BOT_TOKEN : process.env.READ_API_KEY;
  const headers = { authorization: 'Bearer ' + token, accept: 'application/json' };
  if (r.contentType) headers['content-type'] = r.contentType;
  const res = await fetch(new URL(r.path, base), r.method === 'GET' ? { headers } : { method: r.method, headers, body: r.body });
  const answer = JSON.parse(await res.text());
  if (res.status !== r.status) throw new Error(r.peer + ' ' + r.path + ' answered ' + res.status + ', the function got ' + r.status);
  if (slack && !answer.ok) throw new Error('Slack ' + r.path + ' answered ' + answer.error);
}
async function one(r, replace) {
  // A refused condition (a pacing slot, a claim) costs the same round trip as a granted one.
  if (r.peer === 'dynamodb') return dynamodb.send(new DYNAMODB[r.operation](JSON.parse(r.write ? fresh(r.body, replace) : r.body))).catch((e) => { if (e.name !== 'ConditionalCheckFailedException') throw e; });
  if (r.peer === 'sqs') return sqs.send(new SQS[r.operation](JSON.parse(r.body)));
  return http(r);
}
export const handler = async (event) => {
  const replace = event.replace ?? [];
  for (const wave of PLAN) await Promise.all(wave.map((r) => one(r, replace)));
  return { statusCode: 200, batchItemFailures: [] };
};
`;
