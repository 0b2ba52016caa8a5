/**
 * DeliveryStore on DynamoDB. One item per event id:
 *   pk = "delivery#<id>" (a connection's: "t#<connection id>#delivery#<id>"), state = in_progress | completed, owner = claim token,
 *   lease_until = epoch ms, expires_at = epoch s (TTL), accepted_at = ISO time once enqueued.
 * A claim is a conditional put that succeeds when no record exists or the previous holder's lease
 * has ended (it died between the put and the queue send): nothing is lost, and under concurrent
 * duplicates exactly one put wins.
 */
import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { TABLE } from '../contracts';
import type { DeliveryClaim, DeliveryStore } from '../ports';
import { STACK_TENANT, tenantKey, type Tenant } from '../tenancy';

export interface DynamoDeliveryStoreOptions {
  tableName: string;
  /** How long a claim holds before another invocation may take it over. */
  leaseMs: number;
  /** How long records are kept (TTL) so late retries are still recognised. */
  retentionSeconds: number;
  /** Whose deliveries: a connection's are keyed under its tenant prefix (../tenancy.ts). */
  tenant?: Tenant | undefined;
}

/** Longer than the ingest Lambda timeout (8 s), well before the sender's first retry (30 s). */
export const DEFAULT_LEASE_MS = 10_000;

const IN_PROGRESS = 'in_progress';
const COMPLETED = 'completed';

export class DynamoDeliveryStore implements DeliveryStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: DynamoDeliveryStoreOptions,
  ) {}

  private key(eventId: string) {
    return { [TABLE.partitionKey]: { S: tenantKey(this.options.tenant ?? STACK_TENANT, `${TABLE.prefixes.delivery}${eventId}`) } };
  }

  async claim(eventId: string, nowMs: number): Promise<DeliveryClaim> {
    // Two tries: if the record vanished between our failed put and the read (a release), claim again.
    for (let attempt = 0; attempt < 2; attempt++) {
      const token = randomUUID();
      try {
        await this.client.send(
          new PutItemCommand({
            TableName: this.options.tableName,
            Item: {
              ...this.key(eventId),
              state: { S: IN_PROGRESS },
              owner: { S: token },
              lease_until: { N: String(nowMs + this.options.leaseMs) },
              [TABLE.ttlAttribute]: { N: String(Math.floor(nowMs / 1000) + this.options.retentionSeconds) },
            },
            ConditionExpression: `attribute_not_exists(${TABLE.partitionKey}) OR (#state = :in_progress AND lease_until < :now)`,
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':in_progress': { S: IN_PROGRESS }, ':now': { N: String(nowMs) } },
          }),
        );
        return { status: 'claimed', token };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
      // Not relying on ReturnValuesOnConditionCheckFailure (not every DynamoDB implementation returns it).
      const existing = await this.client.send(
        new GetItemCommand({ TableName: this.options.tableName, Key: this.key(eventId), ConsistentRead: true }),
      );
      const item = existing.Item;
      if (!item) continue;
      if (item['state']?.S === COMPLETED) return { status: 'completed' };
      const leaseUntil = Number(item['lease_until']?.N ?? nowMs);
      return { status: 'in_progress', retryAfterSeconds: Math.max(1, Math.ceil((leaseUntil - nowMs) / 1000)) };
    }
    return { status: 'in_progress', retryAfterSeconds: 1 };
  }

  async complete(eventId: string, token: string, nowMs: number): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: this.key(eventId),
        // accepted_at lets `bridge doctor` tell when the last delivery was accepted.
        UpdateExpression: `SET #state = :completed, ${TABLE.acceptedAtAttribute} = :accepted_at REMOVE lease_until`,
        ConditionExpression: '#owner = :token',
        ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner' },
        ExpressionAttributeValues: {
          ':completed': { S: COMPLETED },
          ':token': { S: token },
          ':accepted_at': { S: new Date(nowMs).toISOString() },
        },
      }),
    );
  }

  async release(eventId: string, token: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.options.tableName,
          Key: this.key(eventId),
          ConditionExpression: '#owner = :token',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: { ':token': { S: token } },
        }),
      );
    } catch (error) {
      // Someone else already holds it: nothing of ours to release.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}
