/**
 * A connection's items are keyed under its tenant prefix on dynalite (shared/tenancy.ts), the stack's stay bare:
 * deliveries, held digests and their index, the posted ledger; each tenant's stores see only their own; and the
 * uninstall purge of a workspace's channels removes every tenant's items of them.
 */
import { randomUUID } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { DynamoDeliveryStore } from '../../shared/adapters/dynamo-delivery-store';
import { DynamoPostedLedger } from '../../shared/adapters/dynamo-posted-ledger';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { DynamoTeamData } from '../../shared/adapters/dynamo-team-data';
import { STACK_TENANT, type Tenant } from '../../shared/tenancy';

const TABLE = 'tenant-keys';
const NOW = Date.parse('2026-03-02T09:00:00Z');
const ACME: Tenant = { kind: 'connection', connectionId: 'acme' };
let dynamo: LocalDynamo;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
}, 60_000);

afterAll(async () => {
  await dynamo.close();
});

async function exists(pk: string): Promise<boolean> {
  const found = await dynamo.client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: pk } }, ConsistentRead: true }));
  return found.Item !== undefined;
}

function held(eventId: string, projectId: string) {
  return { eventId, projectId, headline: 'Acme', createdAt: '2026-03-02T08:00:00Z', heldAtMs: NOW, catchUpAfterMs: NOW + 3600_000 };
}

describe('tenant-prefixed keys', () => {
  it('a delivery of a connection is claimed under its prefix, and the same event id of the stack is its own', async () => {
    const options = { tableName: TABLE, leaseMs: 10_000, retentionSeconds: 3600 };
    const acme = new DynamoDeliveryStore(dynamo.client, { ...options, tenant: ACME });
    const stack = new DynamoDeliveryStore(dynamo.client, options);
    const id = randomUUID();
    expect((await acme.claim(id, NOW)).status).toBe('claimed');
    expect(await exists(`t#acme#delivery#${id}`)).toBe(true);
    expect(await exists(`delivery#${id}`)).toBe(false);
    expect((await stack.claim(id, NOW)).status).toBe('claimed');
  });

  it('held digests and their index are the tenant’s: the stack’s catch-up never sees a connection’s', async () => {
    const acme = new DynamoQuietHoursStore(dynamo.client, TABLE, ACME);
    const stack = new DynamoQuietHoursStore(dynamo.client, TABLE);
    await acme.hold('C0HELD', held('evt-acme', 'p-acme'));
    expect(await exists('t#acme#held#C0HELD')).toBe(true);
    expect(await exists('t#acme#held#~index')).toBe(true);
    expect(await exists('held#C0HELD')).toBe(false);
    expect((await acme.channelsWithHeld()).map((h) => h.channel)).toEqual(['C0HELD']);
    expect((await stack.channelsWithHeld()).map((h) => h.channel)).not.toContain('C0HELD');
  });

  it('the posted ledger of a connection is keyed under its prefix', async () => {
    const ledger = new DynamoPostedLedger(dynamo.client, { tableName: TABLE, retentionSeconds: 3600, now: () => NOW, tenant: ACME });
    await ledger.recordPosted('C0POST', 'evt-1', '1.000001', undefined);
    expect(await exists('t#acme#posted#C0POST#evt-1')).toBe(true);
    expect(await exists('posted#C0POST#evt-1')).toBe(false);
  });

  it('the uninstall purge removes the channel’s items of every tenant, the stack’s and each connection’s', async () => {
    const subscriptionsOf = (tenant: Tenant) => new DynamoSubscriptionStore(dynamo.client, TABLE, 'full', tenant);
    const teams = new DynamoTeamData(dynamo.client, TABLE, subscriptionsOf, () => Promise.resolve([STACK_TENANT, ACME]));
    const actor = { userId: 'U1' };
    await teams.note('T0GONE', 'C0GONE');
    for (const tenant of [STACK_TENANT, ACME]) {
      await subscriptionsOf(tenant).subscribe({ projectId: 'p-1', projectName: 'One', channel: 'C0GONE', actor, nowMs: NOW });
      await new DynamoQuietHoursStore(dynamo.client, TABLE, tenant).hold('C0GONE', held(`evt-${tenant.kind}`, 'p-1'));
    }
    expect(await exists('t#acme#chan#C0GONE')).toBe(true);
    expect(await teams.purge('T0GONE')).toEqual(['C0GONE']);
    for (const pk of ['chan#C0GONE', 't#acme#chan#C0GONE', 'held#C0GONE', 't#acme#held#C0GONE']) expect(await exists(pk)).toBe(false);
    for (const tenant of [STACK_TENANT, ACME]) expect(await subscriptionsOf(tenant).forProject('p-1')).toEqual([]);
    expect((await new DynamoQuietHoursStore(dynamo.client, TABLE, ACME).channelsWithHeld()).map((h) => h.channel)).not.toContain('C0GONE');
  });
});
