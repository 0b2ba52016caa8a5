/** The replay guard on dynalite: the first request of a MAC wins, a replay while it verifies is recognised, and its record expires with it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoReplayGuard } from '../../shared/adapters/dynamo-replay-guard';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { TABLE } from '../../shared/contracts';
import { SlackAppStoreError } from '../../shared/errors';

const TABLE_NAME = 'replay-guard-test';
const NOW = Date.parse('2026-03-02T09:00:00Z');
const NOW_S = NOW / 1000;
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

/** A request's id as the endpoint passes it: its MAC and its own timestamp. */
function signed(mac: string, timestampSeconds = NOW_S) {
  return { mac, timestampSeconds };
}

async function expiryOf(mac: string): Promise<string | undefined> {
  const item = await dynamo.client.send(
    new GetItemCommand({ TableName: TABLE_NAME, Key: { [TABLE.partitionKey]: { S: `${TABLE.prefixes.slackRequest}${mac}` } } }),
  );
  return item.Item?.[TABLE.ttlAttribute]?.N;
}

describe('DynamoReplayGuard', () => {
  it('says true once per MAC, false for its replays', async () => {
    expect(await guard.firstSeen(signed('aaa'), NOW)).toBe(true);
    expect(await guard.firstSeen(signed('aaa'), NOW + 1000)).toBe(false);
    expect(await guard.firstSeen(signed('aaa'), NOW + 299_000)).toBe(false);
    expect(await guard.firstSeen(signed('bbb'), NOW)).toBe(true);
  });

  it('keys one MAC however it is spelled', async () => {
    expect(await guard.firstSeen(signed('abcdef0123'), NOW)).toBe(true);
    expect(await guard.firstSeen(signed('ABCDEF0123'), NOW)).toBe(false);
    expect(await guard.firstSeen(signed('AbCdEf0123'), NOW)).toBe(false);
  });

  it('lets exactly one of many concurrent first requests win', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => guard.firstSeen(signed('race'), NOW)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('keeps the record until the request stops verifying (its own timestamp + tolerance), then treats it as gone', async () => {
    expect(await guard.firstSeen(signed('ttl'), NOW)).toBe(true);
    expect(await expiryOf('ttl')).toBe(String(NOW_S + 300));
    expect(await guard.firstSeen(signed('ttl'), NOW + 301_000)).toBe(true);
  });

  it("expires at the request's timestamp + tolerance, not at our now + tolerance", async () => {
    // Dated 5 s ahead (the skew the verifier allows): it verifies until ts + 300, so its record lasts as long.
    expect(await guard.firstSeen(signed('ahead', NOW_S + 5), NOW)).toBe(true);
    expect(await expiryOf('ahead')).toBe(String(NOW_S + 305));
    expect(await guard.firstSeen(signed('ahead', NOW_S + 5), NOW + 302_000)).toBe(false);
    // Seen 100 s after it was signed: it stops verifying 200 s from now, and so does its record.
    expect(await guard.firstSeen(signed('older', NOW_S - 100), NOW)).toBe(true);
    expect(await expiryOf('older')).toBe(String(NOW_S + 200));
  });

  it('throws the store error when the table cannot answer', async () => {
    const missing = new DynamoReplayGuard(dynamo.client, 'no-such-table', 300);
    await expect(missing.firstSeen(signed('x'), NOW)).rejects.toBeInstanceOf(SlackAppStoreError);
  });
});
