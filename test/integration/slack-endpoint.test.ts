/**
 * The Slack Lambda handler as API Gateway invokes it (payload 2.0), configured through its
 * environment, against dynalite, the local SQS server and an HTTP peer standing in for response_url.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateQueueCommand, PurgeQueueCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { startLocalDynamo, ensureBridgeTable, type LocalDynamo } from '../../local/dynamo';
import { SqsServer } from '../../local/sqs-server';
import { createSlackHandler, type SlackHandler } from '../../functions/slack/create-handler';
import { ENV, HTTP_PATHS, SLACK_APP_METRICS } from '../../shared/contracts';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { ACTION_IDS, encodeActionValue } from '../../shared/slack-app/interactions';
import { parseDeferredSlackCommand } from '../../shared/slack-app/service';
import { httpApiEvent } from '../support/deliveries';
import { RecordingObserver } from '../support/recording-observer';
import { testSqsClient } from '../support/sqs-client';

const SECRET = 'slack-signing-secret-test';
const TABLE = 'slack-endpoint-test';
const NOW = Date.parse('2026-03-02T09:00:00Z');
const NOW_S = NOW / 1000;
const ana = { userId: 'U1', userName: 'ana' };

let dynamo: LocalDynamo;
let sqsServer: SqsServer;
let sqs: SQSClient;
let queueUrl: string;
let store: DynamoSubscriptionStore;
let hooks: { server: Server; url: string; bodies: unknown[] };
let observer: RecordingObserver;
let handler: SlackHandler;

async function startHooks(): Promise<typeof hooks> {
  const bodies: unknown[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  store = new DynamoSubscriptionStore(dynamo.client, TABLE);
  sqsServer = await SqsServer.start();
  sqs = testSqsClient(sqsServer.url);
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'slack-endpoint-events' }))).QueueUrl!;
  hooks = await startHooks();
  process.env['AWS_ACCESS_KEY_ID'] = 'local';
  process.env['AWS_SECRET_ACCESS_KEY'] = 'local';
});

beforeEach(async () => {
  observer = new RecordingObserver();
  hooks.bodies.length = 0;
  await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
  const env = {
    [ENV.tableName]: TABLE,
    [ENV.commandsQueueUrl]: queueUrl,
    [ENV.slackSigningSecret]: JSON.stringify([SECRET]),
    // The response_url peer stands where the local Slack server would be.
    [ENV.slackApiUrl]: `${hooks.url}/api`,
    [ENV.awsRegion]: 'us-east-1',
    [ENV.awsEndpointDynamodb]: dynamo.endpoint,
    [ENV.awsEndpointSqs]: sqsServer.url,
  };
  const observability = { log: observer, metrics: observer, flush() {}, appendKeys() {}, resetKeys() {} };
  handler = createSlackHandler(env, { observability, overrides: { clock: { now: () => NOW } } });
});

afterAll(async () => {
  sqs.destroy();
  await new Promise<void>((resolve) => hooks.server.close(() => resolve()));
  await sqsServer.close();
  await dynamo.close();
});

function commandForm(text: string, channel = 'C100'): string {
  return new URLSearchParams({
    command: '/visibility',
    text,
    channel_id: channel,
    user_id: ana.userId,
    user_name: ana.userName,
    response_url: `${hooks.url}/commands/1`,
    trigger_id: 't1',
    team_id: 'T1',
  }).toString();
}

function buttonForm(actionId: string, projectId: string, channel: string): string {
  const payload = {
    type: 'block_actions',
    user: { id: ana.userId, username: ana.userName },
    response_url: `${hooks.url}/actions/1`,
    channel: { id: channel },
    actions: [{ action_id: actionId, value: encodeActionValue({ projectId, projectName: 'Northwind', channel }) }],
    message: { blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'digest' } }] },
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** A request as API Gateway hands it over: Slack's form bodies arrive base64-encoded. */
function slackEvent(path: string, form: string, headers: Record<string, string> = signSlackRequest(SECRET, NOW_S, form)) {
  return httpApiEvent({
    rawPath: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: Buffer.from(form, 'utf8').toString('base64'),
    isBase64Encoded: true,
  });
}

async function send(path: string, form: string, headers?: Record<string, string>) {
  const result = await handler(slackEvent(path, form, headers));
  return { status: result.statusCode, body: result.body ? (JSON.parse(result.body) as Record<string, unknown>) : undefined };
}

async function queued(): Promise<unknown[]> {
  const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
  return (received.Messages ?? []).map((m) => JSON.parse(m.Body ?? '') as unknown);
}

async function subscribe(projectId: string, channel: string): Promise<void> {
  await store.subscribe({ projectId, projectName: 'Northwind', channel, actor: ana, nowMs: NOW - 1000 });
}

describe('Slack endpoint: verification first', () => {
  it('answers a signed inline command with its ephemeral text', async () => {
    const { status, body } = await send(HTTP_PATHS.slackCommands, commandForm('help'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ response_type: 'ephemeral' });
    expect(String(body?.['text'])).toContain('subscribe');
    expect(observer.countOf(SLACK_APP_METRICS.slackCommandAnswered)).toBe(1);
  });

  it.each([
    ['forged', (form: string) => signSlackRequest('another-secret', NOW_S, form), 'signature_mismatch'],
    ['stale', (form: string) => signSlackRequest(SECRET, NOW_S - 301, form), 'signature_stale'],
    ['unsigned', () => ({}), 'signature_missing'],
  ])('refuses a %s request with 401, storing and queueing nothing', async (_label, sign, error) => {
    const form = commandForm('mute Northwind 1d', 'C401');
    await subscribe('p401', 'C401');
    const subscribeForm = commandForm('subscribe Northwind', 'C401');
    expect(await send(HTTP_PATHS.slackCommands, form, sign(form))).toEqual({ status: 401, body: { ok: false, error } });
    expect((await send(HTTP_PATHS.slackCommands, subscribeForm, sign(subscribeForm))).status).toBe(401);
    const click = buttonForm(ACTION_IDS.mute7d, 'p401', 'C401');
    expect((await send(HTTP_PATHS.slackInteractions, click, sign(click))).status).toBe(401);
    expect((await store.forChannel('C401'))[0]?.mutedUntilMs).toBeUndefined();
    expect(await queued()).toEqual([]);
    expect(hooks.bodies).toEqual([]);
    expect(observer.countOf(`${SLACK_APP_METRICS.slackRequestRejected}{reason=${error}}`)).toBe(3);
  });

  it('refuses a body changed after signing', async () => {
    const form = commandForm('help');
    const signed = signSlackRequest(SECRET, NOW_S, form);
    expect((await send(HTTP_PATHS.slackCommands, commandForm('list'), signed)).status).toBe(401);
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    expect((await send('/slack/other', commandForm('help'))).status).toBe(404);
    const get = httpApiEvent({ method: 'GET', rawPath: HTTP_PATHS.slackCommands, headers: {}, body: '' });
    expect((await handler(get)).statusCode).toBe(405);
  });

  it('answers 400 for a signed body that is not a slash command', async () => {
    const form = 'text=help';
    expect((await send(HTTP_PATHS.slackCommands, form)).status).toBe(400);
  });
});

describe('Slack endpoint: commands', () => {
  it('acknowledges subscribe at once and puts the deferred command on the queue', async () => {
    const { status, body } = await send(HTTP_PATHS.slackCommands, commandForm('subscribe Northwind', 'C200'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ response_type: 'ephemeral', text: 'Looking up "Northwind"…' });
    const messages = await queued();
    expect(messages).toHaveLength(1);
    expect(parseDeferredSlackCommand(messages[0])).toEqual({
      kind: 'slack_command',
      command: { kind: 'subscribe', project: 'Northwind' },
      context: { channel: 'C200', actor: ana, responseUrl: `${hooks.url}/commands/1` },
      receivedAtMs: NOW,
    });
    expect(await store.forChannel('C200')).toEqual([]);
    expect(observer.countOf(SLACK_APP_METRICS.slackCommandDeferred)).toBe(1);
  });

  it('mutes, changes the mode and unmutes in the store, announced in the channel', async () => {
    await subscribe('p300', 'C300');
    const muted = await send(HTTP_PATHS.slackCommands, commandForm('mute Northwind 2h', 'C300'));
    expect(muted).toMatchObject({ status: 200, body: { response_type: 'in_channel' } });
    expect((await store.forChannel('C300'))[0]).toMatchObject({ mutedUntilMs: NOW + 2 * 3_600_000, changedBy: 'U1' });

    await send(HTTP_PATHS.slackCommands, commandForm('mode Northwind changes', 'C300'));
    expect((await store.forChannel('C300'))[0]?.mode).toBe('changes');

    await send(HTTP_PATHS.slackCommands, commandForm('unmute Northwind', 'C300'));
    expect((await store.forChannel('C300'))[0]?.mutedUntilMs).toBeUndefined();
    expect(await queued()).toEqual([]);
  });
});

describe('Slack endpoint: buttons', () => {
  it('mutes for 7 days from a digest button, updates the message and answers 200', async () => {
    await subscribe('p500', 'C500');
    const result = await handler(slackEvent(HTTP_PATHS.slackInteractions, buttonForm(ACTION_IDS.mute7d, 'p500', 'C500')));
    expect(result.statusCode).toBe(200);
    expect((await store.forChannel('C500'))[0]).toMatchObject({ mutedUntilMs: NOW + 7 * 24 * 3_600_000, lastChange: 'muted for 7d' });
    expect(hooks.bodies).toHaveLength(1);
    expect(hooks.bodies[0]).toMatchObject({ replace_original: true });
    expect(observer.countOf(SLACK_APP_METRICS.slackActionHandled)).toBe(1);
  });

  it('creates a subscription carrying the setting for a configuration-routed digest', async () => {
    const result = await handler(slackEvent(HTTP_PATHS.slackInteractions, buttonForm(ACTION_IDS.onlyChanges, 'p600', 'C600')));
    expect(result.statusCode).toBe(200);
    expect(await store.forProject('p600')).toMatchObject([{ channel: 'C600', mode: 'changes', createdBy: 'U1' }]);
  });
});
