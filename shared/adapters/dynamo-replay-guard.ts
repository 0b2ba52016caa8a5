/**
 * ReplayGuard on the bridge's table: `slackreq#<mac>` (the request's HMAC in lower-case hex, so a
 * re-spelled signature header is the same key) is put once, conditionally; a second put of the same
 * MAC fails its condition, and that request is a replay. The item expires (TTL) at the request's own
 * timestamp plus the tolerance, the moment its signature stops verifying (not our now plus the
 * tolerance: a request dated ahead of our clock keeps its record as long as it verifies), so the table holds at most the tolerance's worth
 * of requests. An item whose expiry passed but that TTL has not deleted yet counts as gone.
 */
import { ConditionalCheckFailedException, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TABLE } from '../contracts';
import { SlackAppStoreError } from '../errors';
import type { ReplayGuard, SignedRequestId } from '../slack-app/ports';

export class DynamoReplayGuard implements ReplayGuard {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    /** The signature's tolerance: a request older than this is refused for its timestamp, so it needs no record. */
    private readonly toleranceSeconds: number,
  ) {}

  async firstSeen(request: SignedRequestId, nowMs: number): Promise<boolean> {
    const nowSeconds = Math.floor(nowMs / 1000);
    const expires = request.timestampSeconds + this.toleranceSeconds;
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            [TABLE.partitionKey]: { S: `${TABLE.prefixes.slackRequest}${request.mac.toLowerCase()}` },
            [TABLE.ttlAttribute]: { N: String(expires) },
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
