/**
 * PostedLedger on the bridge's table: `posted#<channel id>#<event id>` holds `main_ts`, one `r_<reply key>`
 * attribute per reply posted, and `u_main` / `u_<reply key>` (epoch ms) for a post whose outcome is
 * unknown, removed when its ts is recorded. A connection's posts are keyed `t#<connection id>#posted#…`. Kept
 * as long as a retry of the event can come (the digest store's retention). Channel ids hold no `#`.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { TABLE } from '../contracts';
import type { PostedLedger, PostedRecord } from '../ports';
import { STACK_TENANT, tenantKey, type Tenant } from '../tenancy';
import { deadlineBound } from './dynamo-lease';

export interface DynamoPostedLedgerOptions {
  tableName: string;
  retentionSeconds: number;
  deadline?: (() => number) | undefined;
  now?: (() => number) | undefined;
  /** Whose posts: a connection's are keyed under its tenant prefix (../tenancy.ts). */
  tenant?: Tenant | undefined;
}

const REPLY_PREFIX = 'r_';
const UNKNOWN_PREFIX = 'u_';
const MAIN = 'main';

export class DynamoPostedLedger implements PostedLedger {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: DynamoPostedLedgerOptions,
  ) {}

  async recordPosted(channel: string, eventId: string, ts: string, reply: string | undefined): Promise<void> {
    const attribute = reply === undefined ? 'main_ts' : `${REPLY_PREFIX}${reply}`;
    await this.update(
      channel,
      eventId,
      'REMOVE #u SET #a = :value',
      { '#a': attribute, '#u': `${UNKNOWN_PREFIX}${reply ?? MAIN}` },
      { ':value': { S: ts } },
    );
  }

  async recordUnknown(channel: string, eventId: string, reply: string | undefined, atMs: number): Promise<void> {
    // Not over a ts already recorded (the event came before the error was handled): that post is settled.
    const posted = reply === undefined ? 'main_ts' : `${REPLY_PREFIX}${reply}`;
    try {
      await this.update(
        channel,
        eventId,
        'SET #u = :value',
        { '#u': `${UNKNOWN_PREFIX}${reply ?? MAIN}`, '#p': posted },
        { ':value': { N: String(atMs) } },
        'attribute_not_exists(#p)',
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async find(channel: string, eventId: string): Promise<PostedRecord | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: this.key(channel, eventId), ConsistentRead: true }),
      this.bounded(),
    );
    const item = result.Item;
    if (!item) return undefined;
    const unknown = Object.entries(item)
      .filter(([name]) => name.startsWith(UNKNOWN_PREFIX))
      .map(([, value]) => Number(value.N));
    return {
      mainTs: item['main_ts']?.S,
      replies: Object.keys(item).filter((name) => name.startsWith(REPLY_PREFIX)).length,
      unknownAtMs: unknown.length === 0 ? undefined : Math.max(...unknown),
    };
  }

  private async update(
    channel: string,
    eventId: string,
    expression: string,
    names: Record<string, string>,
    values: Record<string, AttributeValue>,
    condition?: string,
  ): Promise<void> {
    const now = this.options.now?.() ?? Date.now();
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.options.tableName,
        Key: this.key(channel, eventId),
        UpdateExpression: `${expression}, ${TABLE.ttlAttribute} = if_not_exists(${TABLE.ttlAttribute}, :expires)`,
        ...(condition !== undefined ? { ConditionExpression: condition } : {}),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ':expires': { N: String(Math.floor(now / 1000) + this.options.retentionSeconds) } },
      }),
      this.bounded(),
    );
  }

  private key(channel: string, eventId: string): Record<string, AttributeValue> {
    return { [TABLE.partitionKey]: { S: tenantKey(this.options.tenant ?? STACK_TENANT, `${TABLE.prefixes.posted}${channel}#${eventId}`) } };
  }

  private bounded(): { abortSignal?: AbortSignal } {
    return deadlineBound({ deadline: this.options.deadline, now: this.options.now });
  }
}
