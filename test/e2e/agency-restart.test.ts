/**
 * A local stack with a client, restarted on its kept data directory: the client's connection (kept in
 * the table) is written again for its new simulator, so its next run is read from there and digested.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { eventIdOf, slackOf, startTestStack } from './helpers';

const dataDir = mkdtempSync(join(tmpdir(), 'bridge-agency-restart-'));
let stack: LocalStack | undefined;

afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const start = () => startTestStack({ dataDir, secretsManagerPort: 0, connections: 1 });

describe('a client of a restarted local stack', () => {
  it("keeps its connection, pointed at its new simulator, and digests its next run in its team's channel", async () => {
    stack = await start();
    const before = stack.connections[0]?.simulatorUrl;
    await stack.close();
    stack = await start();
    const client = stack.connections[0];
    if (!client) throw new Error('the restarted stack has no client');
    expect(client.simulatorUrl).not.toBe(before);
    const stored = await new DynamoConnectionStore(stack.dynamo.client, stack.dynamo.tableName).get(client.id);
    expect(stored?.connection.baseUrl).toBe(client.simulatorUrl);

    const sent = client.simulator.triggerRun(client.projectIds[0] ?? '');
    await sent.delivered;
    await stack.waitForIdle({ timeoutMs: 90_000 });
    expect(slackOf(stack).messages(client.slackChannel).map(eventIdOf)).toContain(sent.event.id);
  }, 180_000);
});
