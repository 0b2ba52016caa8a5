/**
 * A connection on the local stack, end to end: `bridge connections add` (secrets on stdin) against the
 * stack's ready file, a delivery signed with the connection's secret POSTed to `/webhook/<id>` through
 * the local gateway, and its digest read through the connection's base URL with its key and posted in
 * its own channel. Another secret there is 401, an unknown id 404, a removed connection 410.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main';
import { bufferIo } from '../../cli/io';
import type { LocalStack } from '../../local/stack';
import { deliverTo, nowSeconds, runCompletedBody, simulatorOf, slackOf, startTestStack, waitUntil, type EventBody } from './helpers';

const SECRET = 'whsec_e2e_connection_secret';
const CHANNEL = 'C0E2ECONN';
let stack: LocalStack;
const dir = mkdtempSync(join(tmpdir(), 'bridge-connections-e2e-'));
const readyFile = join(dir, 'ready.json');

beforeAll(async () => {
  stack = await startTestStack({ secretsManagerPort: 0 });
  writeFileSync(readyFile, JSON.stringify(stack.readyInfo()));
}, 120_000);

afterAll(async () => {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

async function bridge(args: string[], stdinText?: string): Promise<{ code: number; stdout: string }> {
  const io = bufferIo(stdinText === undefined ? {} : { stdinText });
  const code = await run([...args, '--local', readyFile], io);
  expect(io.stdout.text() + io.stderr.text()).not.toContain(SECRET);
  return { code, stdout: io.stdout.text() };
}

async function post(url: string, event: EventBody, secret: string): Promise<number> {
  return (await deliverTo(url, event, { secret, t: nowSeconds() })).status;
}

describe('a connection on the local stack', () => {
  it('is added by the CLI and serves its own webhook URL, digests in its own channel', async () => {
    const sim = simulatorOf(stack);
    const added = await bridge(
      ['connections', 'add', 'e2e', '--base-url', stack.simulatorUrl, '--channel', CHANNEL, '--json'],
      `${stack.apiKey}\n${SECRET}\n`,
    );
    expect(added.code).toBe(0);
    const webhookUrl = (JSON.parse(added.stdout) as { webhookUrl: string }).webhookUrl;
    expect(webhookUrl).toBe(`${stack.webhookUrl}/e2e`);

    const projectId = sim.projectIds()[0] ?? '';
    expect(await post(webhookUrl, runCompletedBody(projectId), stack.secrets[0] ?? '')).toBe(401);
    expect(await post(`${stack.webhookUrl}/nobody`, runCompletedBody(projectId), SECRET)).toBe(404);
    expect(await post(webhookUrl, runCompletedBody(projectId), SECRET)).toBe(200);
    await waitUntil('the digest in the connection channel', () => slackOf(stack).messages(CHANNEL).length > 0, 90_000);
    expect(slackOf(stack).messages(stack.slackChannel)).toEqual([]);

    expect((await bridge(['connections', 'remove', 'e2e'])).code).toBe(0);
    expect(await post(webhookUrl, runCompletedBody(projectId), SECRET)).toBe(410);
  }, 180_000);
});
