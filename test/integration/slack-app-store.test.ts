/** The DynamoDB subscription store and channel pacer on dynalite with the bridge's table. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DynamoChannelPacer } from '../../shared/adapters/dynamo-channel-pacer';
import { SlackAppStoreError } from '../../shared/errors';

const TABLE = 'slack-app-store-test';
const NOW = Date.parse('2026-03-01T12:00:00Z');
const ana = { userId: 'U1', userName: 'ana' };
const bo = { userId: 'U2' };

let dynamo: LocalDynamo;
let store: DynamoSubscriptionStore;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  store = new DynamoSubscriptionStore(dynamo.client, TABLE);
});

afterAll(async () => {
  await dynamo.close();
});

describe('DynamoSubscriptionStore', () => {
  it('subscribes many channels to many projects and reads them both ways', async () => {
    await store.subscribe({ projectId: 'p1', projectName: 'Northwind', channel: 'CA', actor: ana, nowMs: NOW });
    await store.subscribe({ projectId: 'p1', projectName: 'Northwind', channel: 'CB', actor: ana, nowMs: NOW });
    await store.subscribe({ projectId: 'p2', projectName: 'Ledgerly', channel: 'CA', actor: bo, nowMs: NOW, mode: 'changes' });
    expect((await store.forProject('p1')).map((s) => s.channel).sort()).toEqual(['CA', 'CB']);
    const inA = await store.forChannel('CA');
    expect(inA.map((s) => [s.projectId, s.projectName, s.mode]).sort()).toEqual([
      ['p1', 'Northwind', 'full'],
      ['p2', 'Ledgerly', 'changes'],
    ]);
    expect(inA.find((s) => s.projectId === 'p2')).toMatchObject({
      createdBy: 'U2',
      changedBy: 'U2',
      createdAtMs: NOW,
      lastChange: 'subscribed',
    });
  });

  it('keeps the settings of an existing subscription when subscribed again', async () => {
    const again = await store.subscribe({ projectId: 'p2', projectName: 'Ledgerly', channel: 'CA', actor: ana, nowMs: NOW + 5 });
    expect(again).toMatchObject({ status: 'already', subscription: { mode: 'changes', createdBy: 'U2' } });
  });

  it('records mute, unmute and mode with who and when; null when not subscribed', async () => {
    const muted = await store.change('p1', 'CA', { kind: 'mute', untilMs: NOW + 3_600_000, label: '1h' }, bo, NOW + 10);
    expect(muted).toMatchObject({
      mutedUntilMs: NOW + 3_600_000,
      changedBy: 'U2',
      changedAtMs: NOW + 10,
      lastChange: 'muted for 1h',
      createdBy: 'U1',
    });
    const moded = await store.change('p1', 'CA', { kind: 'mode', mode: 'changes' }, ana, NOW + 20);
    expect(moded).toMatchObject({ mode: 'changes', mutedUntilMs: NOW + 3_600_000, lastChange: 'mode changes' });
    const unmuted = await store.change('p1', 'CA', { kind: 'unmute' }, ana, NOW + 30);
    expect(unmuted?.mutedUntilMs).toBeUndefined();
    expect(unmuted).toMatchObject({ mode: 'changes', lastChange: 'unmuted' });
    expect(await store.change('p1', 'CZ', { kind: 'unmute' }, ana, NOW)).toBeNull();
    // The other channel of the project is untouched.
    expect((await store.forProject('p1')).find((s) => s.channel === 'CB')).toMatchObject({ mode: 'full', lastChange: 'subscribed' });
  });

  it('unsubscribes from both sides, and says when there was nothing to remove', async () => {
    expect(await store.unsubscribe('p1', 'CB')).toBe(true);
    expect(await store.unsubscribe('p1', 'CB')).toBe(false);
    expect((await store.forProject('p1')).map((s) => s.channel)).toEqual(['CA']);
    expect(await store.forChannel('CB')).toEqual([]);
    const index = await dynamo.client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'chan#CB' } } }));
    expect(Object.keys(index.Item ?? {}).filter((k) => k.startsWith('pr_'))).toEqual([]);
  });

  it('lists every subscription for operators', async () => {
    const all = await store.listAll();
    expect(all.map((s) => `${s.projectId}:${s.channel}`).sort()).toEqual(['p1:CA', 'p2:CA']);
  });

  it('reads a channel with more projects than one batch read takes', async () => {
    for (let i = 0; i < 130; i++)
      await store.subscribe({ projectId: `bulk-${i}`, projectName: `Bulk ${i}`, channel: 'CBULK', actor: ana, nowMs: NOW });
    expect(await store.forChannel('CBULK')).toHaveLength(130);
  });

  it('turns an AWS failure into a store error naming the operation', async () => {
    const broken = new DynamoSubscriptionStore(dynamo.client, 'no-such-table');
    await expect(broken.forProject('p1')).rejects.toThrow(SlackAppStoreError);
    await expect(broken.forProject('p1')).rejects.toThrow(/forProject failed: ResourceNotFoundException/);
  });

  it('subscribing a broken subscription again clears broken (and keeps one subscription)', async () => {
    await store.subscribe({ projectId: 'pb', projectName: 'Broken Co', channel: 'CBRK', actor: ana, nowMs: NOW });
    expect(await store.markBroken('pb', 'CBRK', 'not_in_channel', NOW + 1)).toMatchObject({
      broken: { code: 'not_in_channel', atMs: NOW + 1 },
    });
    expect((await store.forChannel('CBRK'))[0]?.broken).toEqual({ code: 'not_in_channel', atMs: NOW + 1 });
    const again = await store.subscribe({ projectId: 'pb', projectName: 'Broken Co', channel: 'CBRK', actor: bo, nowMs: NOW + 2 });
    expect(again.status).toBe('subscribed');
    const [repaired, ...more] = await store.forChannel('CBRK');
    expect(more).toEqual([]);
    expect(repaired?.broken).toBeUndefined();
    expect(repaired).toMatchObject({ createdBy: 'U2', lastChange: 'subscribed' });
  });
});

describe('DynamoSubscriptionStore: the channel history (audit#<channel>)', () => {
  const entry = (i: number, what = 'muted for 1h') => ({ who: 'U1', whenMs: NOW + i, what, projectId: 'p1', projectName: 'Northwind' });

  it('appends who, when and what, and reads them newest first', async () => {
    await store.recordChange('CAUD', entry(1, 'subscribed'));
    await store.recordChange('CAUD', entry(2, 'unsubscribed'));
    expect(await store.recentChanges('CAUD')).toEqual([entry(2, 'unsubscribed'), entry(1, 'subscribed')]);
    expect(await store.recentChanges('CNONE')).toEqual([]);
    const item = await dynamo.client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'audit#CAUD' } } }));
    expect(item.Item?.['entries']?.L).toHaveLength(2);
  });

  it('keeps the newest 20, one at a time and under concurrent appends', async () => {
    for (let i = 0; i < 45; i++) await store.recordChange('CTRIM', entry(i));
    const kept = await store.recentChanges('CTRIM');
    expect(kept.map((e) => e.whenMs - NOW)).toEqual(Array.from({ length: 20 }, (_, i) => 44 - i));
    const stored = await dynamo.client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'audit#CTRIM' } } }));
    expect(stored.Item?.['entries']?.L).toHaveLength(20);

    await Promise.all(Array.from({ length: 30 }, (_, i) => store.recordChange('CRACEAUD', entry(i))));
    const raced = await store.recentChanges('CRACEAUD');
    expect(raced).toHaveLength(20);
    // No append was lost to another: the ones kept are distinct.
    expect(new Set(raced.map((e) => e.whenMs)).size).toBe(20);
  });

  it('cuts a long project name in the entry', async () => {
    await store.recordChange('CLONG', { ...entry(1), projectName: 'N'.repeat(6000) });
    expect((await store.recentChanges('CLONG'))[0]?.projectName).toHaveLength(300);
  });
});

describe('DynamoChannelPacer', () => {
  it('reserves a burst at once, then one slot per interval, per channel', async () => {
    const pacer = new DynamoChannelPacer(dynamo.client, { tableName: TABLE, params: { intervalMs: 1000, burst: 2 } });
    const waits = [];
    for (let i = 0; i < 4; i++) waits.push(await pacer.reserve('CPACE', NOW, 10_000));
    expect(waits).toEqual([
      { status: 'reserved', waitMs: 0 },
      { status: 'reserved', waitMs: 0 },
      { status: 'reserved', waitMs: 1000 },
      { status: 'reserved', waitMs: 2000 },
    ]);
    expect(await pacer.reserve('COTHER', NOW, 0)).toEqual({ status: 'reserved', waitMs: 0 });
  });

  it('defers without reserving when the wait exceeds the budget', async () => {
    const pacer = new DynamoChannelPacer(dynamo.client, { tableName: TABLE, params: { intervalMs: 1000, burst: 1 } });
    expect(await pacer.reserve('CDEFER', NOW, 0)).toEqual({ status: 'reserved', waitMs: 0 });
    expect(await pacer.reserve('CDEFER', NOW, 500)).toEqual({ status: 'deferred', retryAfterMs: 1000 });
    expect(await pacer.reserve('CDEFER', NOW + 1000, 0)).toEqual({ status: 'reserved', waitMs: 0 });
  });

  it('computes a slot from the time of the attempt, not of the ask: a slow reservation never sets the pace in the past', async () => {
    let clock = NOW + 500; // the reservation took 500 ms (lost races, a slow read)
    const pacer = new DynamoChannelPacer(dynamo.client, { tableName: TABLE, params: { intervalMs: 1000, burst: 1 }, clock: () => clock });
    expect(await pacer.reserve('CSLOW', NOW, 10_000)).toEqual({ status: 'reserved', waitMs: 0 }); // posts at NOW + 500
    clock = NOW + 600;
    expect(await pacer.reserve('CSLOW', NOW + 600, 10_000)).toEqual({ status: 'reserved', waitMs: 900 }); // a full interval later
  });

  it("moves a channel's slots past a Retry-After", async () => {
    const pacer = new DynamoChannelPacer(dynamo.client, { tableName: TABLE, params: { intervalMs: 1000, burst: 1 } });
    expect(await pacer.reserve('CLIMITED', NOW, 10_000, { notBeforeMs: NOW + 3000 })).toEqual({ status: 'reserved', waitMs: 3000 });
    expect(await pacer.reserve('CLIMITED', NOW, 10_000)).toEqual({ status: 'reserved', waitMs: 4000 });
    expect(await pacer.reserve('CLIMITED', NOW, 1_000, { notBeforeMs: NOW + 9000 })).toEqual({ status: 'deferred', retryAfterMs: 9000 });
  });

  it('gives concurrent callers distinct slots', async () => {
    const pacer = new DynamoChannelPacer(dynamo.client, { tableName: TABLE, params: { intervalMs: 1000, burst: 1 }, maxAttempts: 50 });
    const decisions = await Promise.all(Array.from({ length: 8 }, () => pacer.reserve('CRACE', NOW, 60_000)));
    const waits = decisions.map((d) => (d.status === 'reserved' ? d.waitMs : -1)).sort((a, b) => a - b);
    expect(waits).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000, 7000]);
  });
});
