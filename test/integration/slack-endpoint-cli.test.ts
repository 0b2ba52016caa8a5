/**
 * `bridge slack manifest|command` and `bridge subscriptions list|add|remove` against dynalite, the
 * local SQS server and the Slack handler served over HTTP, all found through a ready file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateQueueCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { tenantOf } from '../../shared/tenancy';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { SqsServer } from '../../local/sqs-server';
import { createSlackHandler } from '../../functions/slack/create-handler';
import { ENV, HTTP_PATHS } from '../../shared/contracts';
import { run } from '../../cli/main';
import { bufferIo } from '../../cli/io';
import { LOCAL_SLACK_APP_ID, LOCAL_SLACK_TEAM_ID, splitSlashLine } from '../../local/slack-app-delivery';
import { httpApiEvent } from '../support/deliveries';
import { RecordingObserver } from '../support/recording-observer';
import { testSqsClient } from '../support/sqs-client';

const SECRET = 'slack-cli-signing-secret';
const TABLE = 'slack-cli-test';

let dynamo: LocalDynamo;
let sqsServer: SqsServer;
let sqs: SQSClient;
let queueUrl: string;
let gateway: Server;
let base: string;
let readyFile: string;
let store: DynamoSubscriptionStore;

/** The Slack handler behind a plain HTTP server, as the local gateway would serve it. */
async function startGateway(env: Record<string, string>): Promise<Server> {
  const observer = new RecordingObserver();
  const handler = createSlackHandler(env, {
    observability: { log: observer, metrics: observer, flush() {}, appendKeys() {}, resetKeys() {} },
  });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const event = httpApiEvent({
        method: req.method ?? 'POST',
        rawPath: req.url ?? '/',
        headers,
        body: Buffer.concat(chunks).toString('base64'),
        isBase64Encoded: true,
      });
      void handler(event).then((result) => {
        res.writeHead(result.statusCode ?? 500, result.headers as Record<string, string>).end(result.body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  store = new DynamoSubscriptionStore(dynamo.client, TABLE);
  sqsServer = await SqsServer.start();
  sqs = testSqsClient(sqsServer.url);
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'slack-cli-events' }))).QueueUrl!;
  process.env['AWS_ACCESS_KEY_ID'] = 'local';
  process.env['AWS_SECRET_ACCESS_KEY'] = 'local';
  gateway = await startGateway({
    [ENV.tableName]: TABLE,
    [ENV.commandsQueueUrl]: queueUrl,
    [ENV.slackSigningSecret]: JSON.stringify([SECRET]),
    // The workspace and app `bridge slack command` sends as (the local Slack's).
    [ENV.slackTeamIds]: LOCAL_SLACK_TEAM_ID,
    [ENV.slackAppId]: LOCAL_SLACK_APP_ID,
    [ENV.actionSigningKey]: 'slack-cli-action-signing-key-0123456789abcdef',
    [ENV.slackApiUrl]: 'http://127.0.0.1:9/api/',
    [ENV.awsRegion]: 'us-east-1',
    [ENV.awsEndpointDynamodb]: dynamo.endpoint,
    [ENV.awsEndpointSqs]: sqsServer.url,
  });
  base = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  readyFile = join(mkdtempSync(join(tmpdir(), 'slack-cli-')), 'ready.json');
  writeFileSync(
    readyFile,
    JSON.stringify({
      webhookUrl: `${base}/webhook`,
      secrets: ['whsec_unused'],
      dynamoEndpoint: dynamo.endpoint,
      tableName: TABLE,
      sqsEndpoint: sqsServer.url,
      queueUrl,
      slackApiUrl: 'http://127.0.0.1:9/api/',
      slackSigningSecret: SECRET,
      region: 'us-east-1',
    }),
  );
});

afterAll(async () => {
  sqs.destroy();
  gateway.closeAllConnections();
  await new Promise<void>((resolve) => gateway.close(() => resolve()));
  await sqsServer.close();
  await dynamo.close();
});

async function bridge(...argv: string[]) {
  const io = bufferIo({ env: { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' } });
  const code = await run(argv, io);
  return { code, out: io.stdout.text(), err: io.stderr.text() };
}

describe('bridge slack manifest', () => {
  it('prints the manifest with the local stack’s request URLs', async () => {
    const { code, out } = await bridge('slack', 'manifest', '--local', readyFile);
    expect(code).toBe(0);
    const manifest = JSON.parse(out) as {
      features: { slash_commands: { url: string }[] };
      settings: { interactivity: { request_url: string } };
    };
    expect(manifest.features.slash_commands[0]?.url).toBe(`${base}${HTTP_PATHS.slackCommands}`);
    expect(manifest.settings.interactivity.request_url).toBe(`${base}${HTTP_PATHS.slackInteractions}`);
  });

  it('takes --base-url and refuses a plain-http public host with a fix', async () => {
    const ok = await bridge('slack', 'manifest', '--base-url', 'https://abc.execute-api.eu-west-1.amazonaws.com/', '--json');
    expect(JSON.parse(ok.out)).toMatchObject({
      settings: { interactivity: { request_url: 'https://abc.execute-api.eu-west-1.amazonaws.com/slack/interactions' } },
    });
    const bad = await bridge('slack', 'manifest', '--base-url', 'http://example.com');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('https');
  });

  it('asks files:write only when the stage uploads the PNG chart (off by default, on in config/dev.json)', async () => {
    const scopes = async (...flags: string[]) => {
      const result = await bridge('slack', 'manifest', '--base-url', 'https://abc.execute-api.eu-west-1.amazonaws.com', ...flags);
      expect(result.code).toBe(0);
      return (JSON.parse(result.out) as { oauth_config: { scopes: { bot: string[] } } }).oauth_config.scopes.bot;
    };
    expect(await scopes()).not.toContain('files:write');
    expect(await scopes('--stage', 'dev')).toContain('files:write');
    expect(await scopes()).toContain('chat:write');
    const missing = await bridge('slack', 'manifest', '--base-url', 'https://abc.execute-api.eu-west-1.amazonaws.com', '--stage', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('config/nope.json');
  });
});

describe('bridge subscriptions', () => {
  // `add` looks the project up in the read API and the channel in the local Slack: test/e2e/cli-subscriptions.test.ts.
  it('lists and removes a subscription in the table', async () => {
    await store.subscribe({ projectId: 'p-cli', projectName: 'Northwind', channel: 'CCLI', actor: { userId: 'U9' }, nowMs: Date.now() });

    const listed = await bridge('subscriptions', 'list', '--local', readyFile, '--channel', 'CCLI', '--json');
    expect(JSON.parse(listed.out)).toMatchObject({ subscriptions: [{ projectId: 'p-cli', channel: 'CCLI' }] });

    const removed = await bridge('subscriptions', 'remove', '--local', readyFile, '--project', 'p-cli', '--channel', 'CCLI');
    expect(removed.code).toBe(0);
    expect(await store.forProject('p-cli')).toEqual([]);
    const again = await bridge('subscriptions', 'remove', '--local', readyFile, '--project', 'p-cli', '--channel', 'CCLI', '--json');
    expect(JSON.parse(again.out)).toMatchObject({ removed: false });
  });

  it("lists every tenant's subscriptions, a connection's marked with its id, and one tenant's with --connection", async () => {
    const acme = tenantOf('acme');
    await new DynamoConnectionStore(dynamo.client, TABLE).add({
      id: 'acme',
      baseUrl: 'https://api.acme.example',
      secretName: 'visibility-bridge/local/connections/acme',
      routes: { defaultChannel: 'C0ACME', byProject: {} },
      slackTeamIds: [],
      status: 'active',
      createdAtMs: Date.now(),
    });
    const acmeStore = new DynamoSubscriptionStore(dynamo.client, TABLE, 'changes', acme);
    const actor = { userId: 'U9' };
    await acmeStore.subscribe({ projectId: 'p-acme', projectName: 'Acme Boots', channel: 'CTEN', actor, nowMs: Date.now() });
    await store.subscribe({ projectId: 'p-own', projectName: 'Own', channel: 'CTEN', actor, nowMs: Date.now() });

    const all = await bridge('subscriptions', 'list', '--local', readyFile, '--channel', 'CTEN');
    expect(all.out).toMatch(/^CTEN {2}Own \(p-own\)/m);
    expect(all.out).toMatch(/^\[acme\] CTEN {2}Acme Boots \(p-acme\)/m);
    const acmeOnly = await bridge('subscriptions', 'list', '--local', readyFile, '--connection', 'acme', '--json');
    expect(JSON.parse(acmeOnly.out)).toMatchObject({ subscriptions: [{ projectId: 'p-acme', channel: 'CTEN', tenant: 'acme' }] });
    expect((JSON.parse(acmeOnly.out) as { subscriptions: unknown[] }).subscriptions).toHaveLength(1);
    const stackOnly = await bridge('subscriptions', 'list', '--local', readyFile, '--connection', 'stack', '--channel', 'CTEN', '--json');
    expect(JSON.parse(stackOnly.out)).toMatchObject({ subscriptions: [{ projectId: 'p-own', tenant: 'stack' }] });
    const unknown = await bridge('subscriptions', 'list', '--local', readyFile, '--connection', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no connection "nope"');
  });

  it('refuses a bad mode as a usage error', async () => {
    const { code, err } = await bridge(
      'subscriptions',
      'add',
      '--local',
      readyFile,
      '--project',
      'p',
      '--channel',
      'C0BAD',
      '--mode',
      'loud',
    );
    expect(code).toBe(2);
    expect(err).toContain('--mode must be full or changes');
  });

  it("refuses a channel's name: subscriptions are keyed by the id Slack reports, and it says where to find it", async () => {
    for (const verb of ['add', 'remove']) {
      const { code, err } = await bridge('subscriptions', verb, '--local', readyFile, '--project', 'p-name', '--channel', '#digests');
      expect(code).toBe(2);
      expect(err).toContain(`--channel takes the channel's id (C… or G…), not a name such as "#digests"`);
      expect(err).toContain('About tab');
    }
    expect(await store.forProject('p-name')).toEqual([]);
  });
});

describe('bridge slack command', () => {
  it('signs a slash command, which the endpoint verifies and answers', async () => {
    await store.subscribe({ projectId: 'p-cmd', projectName: 'Ledgerly', channel: 'CCMD', actor: { userId: 'U9' }, nowMs: Date.now() });
    const { code, out } = await bridge('slack', 'command', '/visibility list', '--channel', 'CCMD', '--local', readyFile);
    expect(code).toBe(0);
    expect(out).toMatch(/^200 /);
    expect(out).toContain('Ledgerly');
  });

  it('puts a deferred subscribe on the queue', async () => {
    const { code, out } = await bridge('slack', 'command', '/visibility subscribe Northwind', '--channel', 'CSUB', '--local', readyFile);
    expect(code).toBe(0);
    expect(out).toContain('Looking up');
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
    const bodies = (received.Messages ?? []).map((m) => JSON.parse(m.Body ?? '') as { context: { channel: string; responseUrl: string } });
    expect(bodies).toMatchObject([
      { kind: 'slack_command', command: { kind: 'subscribe', project: 'Northwind' }, context: { channel: 'CSUB' } },
    ]);
    expect(bodies[0]?.context.responseUrl).toMatch(/^http:\/\/127\.0\.0\.1:9\/response_url\//);
  });

  it('exits 1 with the 401 when signed with another secret', async () => {
    const { code, out } = await bridge(
      'slack',
      'command',
      '/visibility help',
      '--channel',
      'C1',
      '--url',
      `${base}${HTTP_PATHS.slackCommands}`,
      '--secret',
      'wrong',
    );
    expect(code).toBe(1);
    expect(out).toMatch(/^401 /);
  });

  it('reads the command line with or without its slash', () => {
    expect(splitSlashLine('/visibility  mute Northwind 7d', '/visibility')).toEqual({ command: '/visibility', text: 'mute Northwind 7d' });
    expect(splitSlashLine('list', '/visibility')).toEqual({ command: '/visibility', text: 'list' });
  });
});
