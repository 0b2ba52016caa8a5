/**
 * ReplayGuard on the bridge's table: `slackreq#<signature>` is put once, conditionally; a second put
 * of the same signature fails its condition, and that request is a replay. The item expires (TTL)
 * when the signature would be too old to verify anyway, so the table holds at most the tolerance's
 * worth of requests. An item whose expiry passed but that TTL has not deleted yet counts as gone.
 */
import { ConditionalCheckFailedException, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE } from '../contracts';
import { SlackAppStoreError } from '../errors';
import type { ReplayGuard } from '../slack-app/ports';

export class DynamoReplayGuard implements ReplayGuard {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    /** The signature's tolerance: a request older than this is refused for its timestamp, so it needs no record. */
    private readonly toleranceSeconds: number,
  ) {}

  async firstSeen(signature: string, nowMs: number): Promise<boolean> {
    const nowSeconds = Math.floor(nowMs / 1000);
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            [TABLE.partitionKey]: { S: `${TABLE.prefixes.slackRequest}${signature}` },
            [TABLE.ttlAttribute]: { N: String(nowSeconds + this.toleranceSeconds) },
          },
          ConditionExpression: 'attribute_not_exists(#pk) OR #expires < :now',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#expires': TABLE.ttlAttribute },
          ExpressionAttributeValues: { ':now': { N: String(nowSeconds) } },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw new SlackAppStoreError('replay guard', { cause: error });
    }
  }
}
