/**
 * What `bridge smoke` reads of a stack's own records to follow one delivery: the ingest dedup record
 * (`delivery#<id>`), the digest claim (`digest#<id>`), the per-channel post claims
 * (`post#<channel>#<id>`, for the channels the digest routes to) and the DLQ.
 */
import { GetItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { channelPostKey, TABLE } from '../../shared/contracts';
import { routeDigest, type FallbackRouting } from '../../shared/routing';
import { aws, type ErrorContext } from '../errors';
import { peekDlq } from './dlq/peek-dlq';
import type { DlqMessage, QueueRef } from './dlq/queue';

/** A claim record (`digest#…` or `post#…`) as far as smoke reports it. */
export interface ClaimView {
  /** in_progress | posted | skipped */
  state: string | undefined;
  attempts: number;
  lastFailure: string | undefined;
  /** The top-level message's channel and ts, once posted. */
  channel: string | undefined;
  mainTs: string | undefined;
}

export interface DeliveryView {
  state: string | undefined;
  acceptedAt: string | undefined;
}

export interface StackRecords {
  dynamo: DynamoDBClient;
  tableName: string;
  sqs: SQSClient;
  dlq: QueueRef | undefined;
  /** For error messages: the DynamoDB endpoint override, when there is one. */
  dynamoEndpoint: string | undefined;
}

function ctxOf(records: StackRecords): ErrorContext {
  return {
    service: 'DynamoDB',
    resource: records.tableName,
    ...(records.dynamoEndpoint !== undefined ? { endpoint: records.dynamoEndpoint } : {}),
  };
}

async function getItem(records: StackRecords, pk: string): Promise<Record<string, AttributeValue> | undefined> {
  const result = await aws(ctxOf(records), () =>
    records.dynamo.send(
      new GetItemCommand({ TableName: records.tableName, Key: { [TABLE.partitionKey]: { S: pk } }, ConsistentRead: true }),
    ),
  );
  return result.Item;
}

/** The ingest's dedup record of the event, or undefined before it exists. */
export async function readDelivery(records: StackRecords, eventId: string): Promise<DeliveryView | undefined> {
  const item = await getItem(records, `${TABLE.prefixes.delivery}${eventId}`);
  if (item === undefined) return undefined;
  return { state: item['state']?.S, acceptedAt: item[TABLE.acceptedAtAttribute]?.S };
}

function claimOf(item: Record<string, AttributeValue> | undefined): ClaimView | undefined {
  if (item === undefined) return undefined;
  const attempts = Number(item[TABLE.attemptsAttribute]?.N ?? 0);
  return {
    state: item['state']?.S,
    attempts: Number.isFinite(attempts) ? attempts : 0,
    lastFailure: item[TABLE.lastFailureAttribute]?.S,
    channel: item['channel']?.S,
    mainTs: item['main_ts']?.S,
  };
}

/** The digest's claim of the event (`digest#<id>`), or undefined before the digest function took it up. */
export async function readDigestClaim(records: StackRecords, eventId: string): Promise<ClaimView | undefined> {
  return claimOf(await getItem(records, `${TABLE.prefixes.digest}${eventId}`));
}

/** The post claim of each channel the project's digest goes to (subscriptions, then the stack's configured channels). */
export async function readChannelPosts(
  records: StackRecords,
  eventId: string,
  projectId: string,
  fallback: FallbackRouting,
  nowMs: number,
  alsoChannel: string | undefined,
): Promise<{ channel: string; claim: ClaimView | undefined }[]> {
  const store = new DynamoSubscriptionStore(records.dynamo, records.tableName);
  const subscriptions = await aws(ctxOf(records), () => store.forProject(projectId));
  const routed = routeDigest(projectId, subscriptions, fallback, nowMs).deliveries.map((d) => d.channel);
  const channels = [...new Set([...routed, ...(alsoChannel !== undefined ? [alsoChannel] : [])])];
  return Promise.all(
    channels.map(async (channel) => ({ channel, claim: claimOf(await getItem(records, channelPostKey(channel, eventId))) })),
  );
}

/** The event's message in the DLQ, if it is there (peeked: made visible again at once). */
export async function findInDlq(records: StackRecords, eventId: string, now: () => number): Promise<DlqMessage | undefined> {
  if (records.dlq === undefined) return undefined;
  const { messages } = await peekDlq(records.sqs, records.dlq, { max: 50, now });
  return messages.find((m) => m.eventId === eventId);
}
