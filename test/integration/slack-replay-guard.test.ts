/** The replay guard on dynalite: the first request of a signature wins, a replay within the tolerance is recognised, and it expires. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoReplayGuard } from '../../shared/adapters/dynamo-replay-guard';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { TABLE } from '../../shared/contracts';
import { SlackAppStoreError } from '../../shared/errors';

const TABLE_NAME = 'replay-guard-test';
const NOW = Date.parse('2026-03-02T09:00:00Z');
let dynamo: LocalDynamo;
let guard: DynamoReplayGuard;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE_NAME);
  guard = new DynamoReplayGuard(dynamo.client, TABLE_NAME, 300);
});

afterAll(async () => {
  await dynamo.close();
});

describe('DynamoReplayGuard', () => {
  it('says true once per signature, false for its replays', async () => {
    expect(await guard.firstSeen('v0=aaa', NOW)).toBe(true);
    expect(await guard.firstSeen('v0=aaa', NOW + 1000)).toBe(false);
    expect(await guard.firstSeen('v0=aaa', NOW + 299_000)).toBe(false);
    expect(await guard.firstSeen('v0=bbb', NOW)).toBe(true);
  });

  it('lets exactly one of many concurrent first requests win', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => guard.firstSeen('v0=race', NOW)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('keeps the record until the tolerance has passed (TTL), then treats it as gone', async () => {
    expect(await guard.firstSeen('v0=ttl', NOW)).toBe(true);
    const item = await dynamo.client.send(
      new GetItemCommand({ TableName: TABLE_NAME, Key: { [TABLE.partitionKey]: { S: `${TABLE.prefixes.slackRequest}v0=ttl` } } }),
    );
    expect(item.Item?.[TABLE.ttlAttribute]?.N).toBe(String(NOW / 1000 + 300));
    expect(await guard.firstSeen('v0=ttl', NOW + 301_000)).toBe(true);
  });

  it('throws the store error when the table cannot answer', async () => {
    const missing = new DynamoReplayGuard(dynamo.client, 'no-such-table', 300);
    await expect(missing.firstSeen('v0=x', NOW)).rejects.toBeInstanceOf(SlackAppStoreError);
  });
});
