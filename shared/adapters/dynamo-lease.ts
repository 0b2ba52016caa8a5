/**
 * The lease claim the digest store and the weekly store share: one item per piece of work holding
 * state (in_progress, then the finished state), owner (the holder's random token), lease_until (ms),
 * attempts, first_claimed_ms, the TTL set on the first claim, and the last failure of a released lease.
 * One copy of the protocol, so the two stores cannot drift on who may take over a lease.
 */
import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { TABLE } from '../contracts';

type Item = Record<string, AttributeValue>;

/** A failure text longer than this is cut: it is for a person reading `bridge dlq peek`. */
const MAX_FAILURE_CHARS = 500;

/** The call options that bound a call by the invocation's deadline (besides the client's own request timeout). */
export function deadlineBound(clock: { deadline?: (() => number) | undefined; now?: (() => number) | undefined }): {
  abortSignal?: AbortSignal;
} {
  const deadline = clock.deadline?.() ?? Number.POSITIVE_INFINITY;
  if (!Number.isFinite(deadline)) return {};
  const now = clock.now?.() ?? Date.now();
  return { abortSignal: AbortSignal.timeout(Math.max(1, deadline - now)) };
}

/** Where the claims live and how each call is bounded. */
export interface LeaseTable {
  client: DynamoDBClient;
  tableName: string;
  bounded: () => { abortSignal?: AbortSignal };
}

/** Taken: the token and the item after the claim. Not taken: the item as it stands (its holder's or finished). */
export type LeaseOutcome = { taken: true; token: string; item: Item } | { taken: false; existing: Item | undefined };

export async function takeLease(
  table: LeaseTable,
  key: Item,
  nowMs: number,
  leaseMs: number,
  retentionSeconds: number,
): Promise<LeaseOutcome> {
  const token = randomUUID();
  try {
    // Creates the record, or takes over one whose holder's lease ended (keeping its progress).
    const result = await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: key,
        UpdateExpression: `SET #state = :in_progress, #owner = :token, lease_until = :lease, ${TABLE.ttlAttribute} = if_not_exists(${TABLE.ttlAttribute}, :expires), first_claimed_ms = if_not_exists(first_claimed_ms, :now) ADD attempts :one`,
        ConditionExpression: `attribute_not_exists(${TABLE.partitionKey}) OR (#state = :in_progress AND lease_until < :now)`,
        ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner' },
        ExpressionAttributeValues: {
          ':in_progress': { S: 'in_progress' },
          ':token': { S: token },
          ':lease': { N: String(nowMs + leaseMs) },
          ':now': { N: String(nowMs) },
          ':expires': { N: String(Math.floor(nowMs / 1000) + retentionSeconds) },
          ':one': { N: '1' },
        },
        ReturnValues: 'ALL_NEW',
      }),
      table.bounded(),
    );
    return { taken: true, token, item: result.Attributes ?? {} };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  const existing = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: key, ConsistentRead: true }),
    table.bounded(),
  );
  return { taken: false, existing: existing.Item };
}

/** Marks the work done (`state`), while `token` still holds the lease. */
export async function finishLease(table: LeaseTable, key: Item, token: string, state: string): Promise<void> {
  await table.client.send(
    new UpdateItemCommand({
      TableName: table.tableName,
      Key: key,
      UpdateExpression: 'SET #state = :outcome REMOVE lease_until',
      ConditionExpression: '#owner = :token',
      ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner' },
      ExpressionAttributeValues: { ':outcome': { S: state }, ':token': { S: token } },
    }),
    table.bounded(),
  );
}

/** Ends the lease now so the next attempt may take it; the failure is kept so `bridge dlq peek` can say why. */
export async function releaseLease(table: LeaseTable, key: Item, token: string, failure?: string): Promise<void> {
  const failureUpdate = failure === undefined ? '' : `, ${TABLE.lastFailureAttribute} = :failure`;
  try {
    await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: key,
        UpdateExpression: `SET lease_until = :zero${failureUpdate}`,
        ConditionExpression: '#owner = :token AND #state = :in_progress',
        ExpressionAttributeNames: { '#owner': 'owner', '#state': 'state' },
        ExpressionAttributeValues: {
          ':zero': { N: '0' },
          ':token': { S: token },
          ':in_progress': { S: 'in_progress' },
          ...(failure === undefined ? {} : { ':failure': { S: failure.slice(0, MAX_FAILURE_CHARS) } }),
        },
      }),
      table.bounded(),
    );
  } catch (error) {
    // Taken over meanwhile (our lease ended): the new holder decides.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
