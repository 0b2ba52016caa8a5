/**
 * `bridge connections add|list|link|unlink|rotate|remove` against a local stack's peers (dynalite and
 * the local Secrets Manager server, named by a ready file): secrets from stdin only, never printed;
 * rotation holds at most two live signing secrets; a removed connection's secret is deleted; linked
 * Slack installations are listed with whether each is installed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main';
import { bufferIo } from '../../cli/io';
import { fingerprint } from '../../cli/commands/secrets';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { connectionSecretPrefix } from '../../shared/contracts';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { LocalSecretsManagerServer } from '../../local/secrets-manager-server';
import { installationOf } from '../support/installations';

const TABLE = 'cli-connections';
const KEY = 'rk_acme_t0ps3cret';
const FIRST = 'whsec_first_t0ps3cret';
const SECOND = 'whsec_second_t0ps3cret';
const SECRET_NAME = `${connectionSecretPrefix('local')}acme`;

let dynamo: LocalDynamo;
let secrets: LocalSecretsManagerServer;
let dir: string;
let readyFile: string;
let store: DynamoConnectionStore;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  secrets = await LocalSecretsManagerServer.start();
  dir = mkdtempSync(join(tmpdir(), 'cli-connections-'));
  readyFile = join(dir, 'ready.json');
  writeFileSync(
    readyFile,
    JSON.stringify({
      webhookUrl: 'http://127.0.0.1:8787/webhook',
      tableName: TABLE,
      dynamoEndpoint: dynamo.endpoint,
      secretsManagerEndpoint: secrets.url,
      region: 'us-east-1',
    }),
  );
  store = new DynamoConnectionStore(dynamo.client, TABLE);
}, 60_000);

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await Promise.all([dynamo.close(), secrets.close()]);
});

async function bridge(args: string[], stdinText?: string) {
  const io = bufferIo(stdinText === undefined ? {} : { stdinText });
  const code = await run([...args, '--local', readyFile], io);
  const printed = io.stdout.text() + io.stderr.text();
  for (const secret of [KEY, FIRST, SECOND]) expect(printed, args.join(' ')).not.toContain(secret);
  return { code, stdout: io.stdout.text(), stderr: io.stderr.text() };
}

function stored(): { readApiKey: string; signingSecrets: string[] } {
  return JSON.parse(secrets.currentValue(SECRET_NAME) ?? 'null') as { readApiKey: string; signingSecrets: string[] };
}

describe('bridge connections', () => {
  it('adds a connection from stdin, printing its webhook URL and a fingerprint only', async () => {
    const added = await bridge(
      ['connections', 'add', 'acme', '--base-url', 'https://api.acme.example/', '--channel', 'C0ACME', '--route', 'p-1=C0P1'],
      `${KEY}\n${FIRST}\n`,
    );
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('http://127.0.0.1:8787/webhook/acme');
    expect(added.stdout).toContain(fingerprint(FIRST));
    expect(stored()).toEqual({ readApiKey: KEY, signingSecrets: [FIRST] });
    const record = await store.get('acme');
    expect(record?.connection).toMatchObject({
      baseUrl: 'https://api.acme.example',
      secretName: SECRET_NAME,
      routes: { defaultChannel: 'C0ACME', byProject: { 'p-1': 'C0P1' } },
      slackTeamIds: [],
      status: 'active',
    });
  });

  it('refuses secrets on the command line, a taken id, a channel name and a bad id', async () => {
    expect((await bridge(['connections', 'add', 'other', '--base-url', 'https://x', '--channel', 'C0X', '--value', KEY], '')).code).toBe(2);
    expect((await bridge(['connections', 'add', 'acme', '--base-url', 'https://x', '--channel', 'C0X'], `${KEY}\n${FIRST}\n`)).code).toBe(
      1,
    );
    expect(
      (await bridge(['connections', 'add', 'other', '--base-url', 'https://x', '--channel', '#general'], `${KEY}\n${FIRST}\n`)).code,
    ).toBe(2);
    expect((await bridge(['connections', 'add', 'Bad_Id', '--base-url', 'https://x', '--channel', 'C0X'], `${KEY}\n${FIRST}\n`)).code).toBe(
      2,
    );
    expect((await bridge(['connections', 'add', 'other', '--base-url', 'https://x', '--channel', 'C0X'], `${KEY}\n`)).code).toBe(2);
    expect(await store.get('other')).toBeUndefined();
  });

  it('lists connections with fingerprints, never secrets', async () => {
    const listed = await bridge(['connections', 'list', '--json']);
    expect(listed.code).toBe(0);
    const json = JSON.parse(listed.stdout) as { connections: { id: string; webhookUrl: string; signing: { fingerprints: string[] } }[] };
    expect(json.connections).toHaveLength(1);
    expect(json.connections[0]).toMatchObject({
      id: 'acme',
      webhookUrl: 'http://127.0.0.1:8787/webhook/acme',
      signing: { fingerprints: [fingerprint(FIRST)] },
    });
  });

  it('links Slack installations, lists whether each is installed, and unlinks them', async () => {
    await new DynamoInstallationStore(dynamo.client, { tableName: TABLE }).save(
      installationOf({ teamId: 'T0BBB', bot: { token: 'xoxb-b' } }),
    );
    const linked = await bridge(['connections', 'link', 'acme', '--slack-team', 'T0BBB', '--slack-team', 'E0ORG']);
    expect(linked.code).toBe(0);
    expect(linked.stdout).toContain("T0BBB (installed), E0ORG (not installed); digests post with T0BBB's installation");
    expect((await store.get('acme'))?.connection.slackTeamIds).toEqual(['T0BBB', 'E0ORG']);
    const listed = await bridge(['connections', 'list', '--json']);
    const json = JSON.parse(listed.stdout) as { connections: { slackTeams: unknown }[] };
    expect(json.connections[0]?.slackTeams).toEqual([
      { id: 'T0BBB', installed: true },
      { id: 'E0ORG', installed: false },
    ]);
    const notLinked = await bridge(['connections', 'unlink', 'acme', '--slack-team', 'T0NONE']);
    expect(notLinked.code).toBe(1);
    expect(notLinked.stderr).toContain('not linked to T0NONE');
    expect((await bridge(['connections', 'unlink', 'acme', '--slack-team', 'E0ORG'])).code).toBe(0);
    expect((await store.get('acme'))?.connection.slackTeamIds).toEqual(['T0BBB']);
    expect((await bridge(['connections', 'link', 'nobody', '--slack-team', 'T0BBB'])).code).toBe(1);
    expect((await bridge(['connections', 'link', 'acme', '--slack-team', 'C0CHANNEL'])).code).toBe(2);
  });

  it('rotates: a second secret joins, a third is refused, --finish keeps the new one', async () => {
    expect((await bridge(['connections', 'rotate', 'acme'], `${SECOND}\n`)).code).toBe(0);
    expect(stored()).toEqual({ readApiKey: KEY, signingSecrets: [FIRST, SECOND] });
    const third = await bridge(['connections', 'rotate', 'acme'], 'whsec_third\n');
    expect(third.code).toBe(1);
    expect(third.stderr).toMatch(/already under way/);
    expect(stored().signingSecrets).toEqual([FIRST, SECOND]);
    expect((await bridge(['connections', 'rotate', 'acme', '--finish'])).code).toBe(0);
    expect(stored()).toEqual({ readApiKey: KEY, signingSecrets: [SECOND] });
    expect((await bridge(['connections', 'rotate', 'acme', '--finish'])).code).toBe(1);
  });

  it('replaces the read-API key with --read-key, keeping the signing secrets', async () => {
    const replaced = await bridge(['connections', 'rotate', 'acme', '--read-key'], 'rk_acme_new_t0ps3cret\n');
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).not.toContain('rk_acme_new_t0ps3cret');
    expect(stored()).toEqual({ readApiKey: 'rk_acme_new_t0ps3cret', signingSecrets: [SECOND] });
    expect((await bridge(['connections', 'rotate', 'acme', '--read-key', '--finish'])).code).toBe(2);
  });

  it('removes: the connection is marked removed (410) and its secret deleted', async () => {
    const removed = await bridge(['connections', 'remove', 'acme']);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain('410');
    expect((await store.get('acme'))?.connection.status).toBe('removed');
    expect(secrets.currentValue(SECRET_NAME)).toBeUndefined();
    expect((await bridge(['connections', 'remove', 'acme'])).code).toBe(1);
    expect((await bridge(['connections', 'add', 'acme', '--base-url', 'https://x', '--channel', 'C0X'], `${KEY}\n${FIRST}\n`)).code).toBe(
      1,
    );
    expect((await bridge(['connections', 'link', 'acme', '--slack-team', 'T0BBB'])).code).toBe(1);
  });

  it('adds a connection linked to the teams given with --slack-team', async () => {
    const added = await bridge(
      ['connections', 'add', 'beta', '--base-url', 'https://x', '--channel', 'C0BETA', '--slack-team', 'T0BBB', '--slack-team', 'T0AAA'],
      `${KEY}\n${FIRST}\n`,
    );
    expect(added.code).toBe(0);
    expect((await store.get('beta'))?.connection.slackTeamIds).toEqual(['T0BBB', 'T0AAA']);
  });
});
