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
import { ACTION_IDS } from '../../shared/buttons/ids';
import { encodeActionValue } from '../../shared/slack-app/interactions';
import { actionValueCodec } from '../../shared/buttons/value';
import { parseDeferredSlackCommand } from '../../shared/slack-app/service';
import { httpApiEvent } from '../support/deliveries';
import { RecordingObserver } from '../support/recording-observer';
import { testSqsClient } from '../support/sqs-client';

const SECRET = 'slack-signing-secret-test';
const ACTION_KEY = 'action-signing-key-test-0123456789abcdef';
const codec = actionValueCodec([ACTION_KEY]);
const TEAM = 'T0TEAM1';
const APP = 'A0BRIDGE';
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
  handler = handlerWith({});
});

/** The handler as the stack configures it, with `changes` to its environment (undefined removes a variable). */
function handlerWith(changes: Record<string, string | undefined>): SlackHandler {
  const base: Record<string, string | undefined> = {
    [ENV.tableName]: TABLE,
    [ENV.commandsQueueUrl]: queueUrl,
    [ENV.slackSigningSecret]: JSON.stringify([SECRET]),
    [ENV.actionSigningKey]: ACTION_KEY,
    [ENV.slackTeamIds]: TEAM,
    [ENV.slackAppId]: APP,
    // The response_url peer stands where the local Slack server would be.
    [ENV.slackApiUrl]: `${hooks.url}/api`,
    [ENV.awsRegion]: 'us-east-1',
    [ENV.awsEndpointDynamodb]: dynamo.endpoint,
    [ENV.awsEndpointSqs]: sqsServer.url,
  };
  const env = { ...base, ...changes };
  const observability = { log: observer, metrics: observer, flush() {}, appendKeys() {}, resetKeys() {} };
  return createSlackHandler(env, { observability, overrides: { clock: { now: () => NOW } } });
}

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
    team_id: TEAM,
    api_app_id: APP,
  }).toString();
}

function buttonForm(actionId: string, projectId: string, channel: string): string {
  const payload = {
    type: 'block_actions',
    user: { id: ana.userId, username: ana.userName, team_id: TEAM },
    team: { id: TEAM },
    api_app_id: APP,
    response_url: `${hooks.url}/actions/1`,
    channel: { id: channel },
    actions: [{ action_id: actionId, value: encodeActionValue({ projectId, projectName: 'Northwind', channel }, codec) }],
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
    const form = `team_id=${TEAM}&api_app_id=${APP}&text=help`;
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

/** The form of a command from `team` through `app` (and an org, when given). */
function commandFrom(text: string, channel: string, ids: { team?: string; app?: string; enterprise?: string }): string {
  const form = new URLSearchParams(commandForm(text, channel));
  form.set('team_id', ids.team ?? TEAM);
  form.set('api_app_id', ids.app ?? APP);
  if (ids.enterprise !== undefined) form.set('enterprise_id', ids.enterprise);
  return form.toString();
}

/** A click whose payload is changed by `edit` (its value, channel, teams…). */
function clickWith(edit: (payload: Record<string, unknown>) => void, projectId = 'p700', channel = 'C700'): string {
  const payload = JSON.parse(new URLSearchParams(buttonForm(ACTION_IDS.mute7d, projectId, channel)).get('payload')!) as Record<
    string,
    unknown
  >;
  edit(payload);
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

function actionOf(payload: Record<string, unknown>): Record<string, unknown> {
  return (payload['actions'] as Record<string, unknown>[])[0]!;
}

describe('Slack endpoint: only our workspace and our app', () => {
  it.each([
    ['another workspace', { team: 'T0OTHER' }, 'foreign_workspace', 'team'],
    ['another app', { app: 'A0OTHER' }, 'foreign_app', 'app'],
  ])('refuses a signed command from %s with 403, doing nothing', async (_label, ids, error, reason) => {
    await subscribe('p403', 'C403');
    const mute = commandFrom('mute Northwind 1d', 'C403', ids);
    expect(await send(HTTP_PATHS.slackCommands, mute)).toEqual({ status: 403, body: { ok: false, error } });
    expect((await send(HTTP_PATHS.slackCommands, commandFrom('subscribe Northwind', 'C403', ids))).status).toBe(403);
    expect((await store.forChannel('C403'))[0]?.mutedUntilMs).toBeUndefined();
    expect(await queued()).toEqual([]);
    expect(observer.countOf(`${SLACK_APP_METRICS.slackRequestForeign}{reason=${reason}}`)).toBe(2);
    expect(observer.countOf(SLACK_APP_METRICS.slackCommandAnswered)).toBe(0);
  });

  it.each([
    ['another workspace', (p: Record<string, unknown>) => (p['team'] = { id: 'T0OTHER' }), 'team'],
    [
      'a member of another workspace (Slack Connect)',
      (p: Record<string, unknown>) => ((p['user'] as Record<string, unknown>)['team_id'] = 'T0OTHER'),
      'team',
    ],
    ['another app', (p: Record<string, unknown>) => (p['api_app_id'] = 'A0OTHER'), 'app'],
  ])('refuses a click from %s with 403, changing nothing', async (_label, edit, reason) => {
    await subscribe('p700', 'C700');
    expect((await send(HTTP_PATHS.slackInteractions, clickWith(edit))).status).toBe(403);
    expect((await store.forChannel('C700'))[0]?.mutedUntilMs).toBeUndefined();
    expect(hooks.bodies).toEqual([]);
    expect(observer.countOf(`${SLACK_APP_METRICS.slackRequestForeign}{reason=${reason}}`)).toBe(1);
  });

  it('serves nobody while the stage names no workspace or no app', async () => {
    for (const changes of [{ [ENV.slackTeamIds]: undefined }, { [ENV.slackAppId]: undefined }]) {
      handler = handlerWith(changes);
      expect(await send(HTTP_PATHS.slackCommands, commandForm('help'))).toEqual({
        status: 403,
        body: { ok: false, error: 'workspace_not_configured' },
      });
    }
    expect(observer.countOf(`${SLACK_APP_METRICS.slackRequestForeign}{reason=not_configured}`)).toBe(2);
  });

  it('serves any workspace of the Grid org when only the org is named, and no other org', async () => {
    handler = handlerWith({ [ENV.slackTeamIds]: undefined, [ENV.slackEnterpriseId]: 'E0ORG' });
    expect((await send(HTTP_PATHS.slackCommands, commandFrom('help', 'C1', { team: 'T0ANY', enterprise: 'E0ORG' }))).status).toBe(200);
    expect((await send(HTTP_PATHS.slackCommands, commandFrom('help', 'C1', { team: 'T0ANY', enterprise: 'E0OTHER' }))).status).toBe(403);
    expect((await send(HTTP_PATHS.slackCommands, commandFrom('help', 'C1', { team: 'T0ANY' }))).status).toBe(403);
    // Both named: both must match.
    handler = handlerWith({ [ENV.slackEnterpriseId]: 'E0ORG' });
    expect((await send(HTTP_PATHS.slackCommands, commandFrom('help', 'C1', { enterprise: 'E0ORG' }))).status).toBe(200);
    expect((await send(HTTP_PATHS.slackCommands, commandFrom('help', 'C1', { team: 'T0ANY', enterprise: 'E0ORG' }))).status).toBe(403);
    expect(observer.countOf(`${SLACK_APP_METRICS.slackRequestForeign}{reason=enterprise}`)).toBe(2);
  });

  it("refuses a Slack Connect guest's click when only the Grid org is named (its team is not the click's)", async () => {
    handler = handlerWith({ [ENV.slackTeamIds]: undefined, [ENV.slackEnterpriseId]: 'E0ORG' });
    await subscribe('p710', 'C710');
    const inOrg = (p: Record<string, unknown>) => (p['enterprise'] = { id: 'E0ORG' });
    const guest = (p: Record<string, unknown>) => {
      inOrg(p);
      (p['user'] as Record<string, unknown>)['team_id'] = 'T0GUEST';
    };
    expect((await send(HTTP_PATHS.slackInteractions, clickWith(guest, 'p710', 'C710'))).status).toBe(403);
    expect((await store.forChannel('C710'))[0]?.mutedUntilMs).toBeUndefined();
    expect(observer.countOf(`${SLACK_APP_METRICS.slackRequestForeign}{reason=team}`)).toBe(1);
    // A member of the org's workspace clicking there is served.
    expect((await send(HTTP_PATHS.slackInteractions, clickWith(inOrg, 'p710', 'C710'))).status).toBe(200);
    expect((await store.forChannel('C710'))[0]?.mutedUntilMs).toBeDefined();
  });

  it('fails the cold start on an id that is not one, naming the variable', () => {
    expect(() => handlerWith({ [ENV.slackTeamIds]: 'T0TEAM1, my-workspace' })).toThrow(/SLACK_TEAM_IDS.*"my-workspace"/);
    expect(() => handlerWith({ [ENV.slackAppId]: 'visibility' })).toThrow(/SLACK_APP_ID/);
    expect(() => handlerWith({ [ENV.slackEnterpriseId]: 'T0TEAM1' })).toThrow(/SLACK_ENTERPRISE_ID/);
    expect(() => handlerWith({ [ENV.actionSigningKey]: undefined })).toThrow(/ACTION_SIGNING_KEY_SECRET_ARN/);
    expect(() => handlerWith({ [ENV.actionSigningKey]: 'short' })).toThrow(/ACTION_SIGNING_KEY/);
  });

  it('logs one short line for a refused request: path and reason, never headers or body', async () => {
    await send(HTTP_PATHS.slackCommands, commandFrom('help', 'C1', { team: 'T0OTHER' }));
    const form = commandForm('help');
    await send(HTTP_PATHS.slackCommands, form, signSlackRequest('another-secret', NOW_S, form));
    expect(observer.entries).toEqual([
      { level: 'warn', message: 'Slack request refused', fields: { path: HTTP_PATHS.slackCommands, reason: 'foreign_team' } },
      { level: 'warn', message: 'Slack request refused', fields: { path: HTTP_PATHS.slackCommands, reason: 'signature_mismatch' } },
    ]);
  });
});

describe('Slack endpoint: replays', () => {
  it('answers a replayed command "Already handled" and does not act on it again', async () => {
    const form = commandForm('subscribe Northwind', 'C800');
    const signed = signSlackRequest(SECRET, NOW_S, form);
    expect((await send(HTTP_PATHS.slackCommands, form, signed)).body).toMatchObject({ text: 'Looking up "Northwind"…' });
    const again = await send(HTTP_PATHS.slackCommands, form, signed);
    expect(again).toEqual({
      status: 200,
      body: { response_type: 'ephemeral', text: expect.stringContaining('Already handled') as string },
    });
    expect(await queued()).toHaveLength(1);
    expect(observer.countOf(SLACK_APP_METRICS.slackRequestReplayed)).toBe(1);
    expect(observer.countOf(SLACK_APP_METRICS.slackCommandDeferred)).toBe(1);
  });

  it('answers a replayed click 200 and changes nothing the second time', async () => {
    await subscribe('p810', 'C810');
    const form = buttonForm(ACTION_IDS.mute7d, 'p810', 'C810');
    const signed = signSlackRequest(SECRET, NOW_S, form);
    expect((await send(HTTP_PATHS.slackInteractions, form, signed)).status).toBe(200);
    await send(HTTP_PATHS.slackCommands, commandForm('unmute Northwind', 'C810'));
    expect(await send(HTTP_PATHS.slackInteractions, form, signed)).toEqual({ status: 200, body: undefined });
    expect((await store.forChannel('C810'))[0]?.mutedUntilMs).toBeUndefined(); // the unmute stands
    expect(hooks.bodies).toHaveLength(1);
    expect(observer.countOf(SLACK_APP_METRICS.slackActionHandled)).toBe(1);
  });

  it.each([
    ['in upper-case hex', 'C830', (hex: string) => `v0=${hex.toUpperCase()}`],
    ['in mixed-case hex', 'C831', (hex: string) => `v0=${[...hex].map((c, i) => (i % 2 ? c : c.toUpperCase())).join('')}`],
  ])('knows a replay whose signature is re-spelled %s', async (_label, channel, respell) => {
    const form = commandForm('subscribe Northwind', channel);
    const signed = signSlackRequest(SECRET, NOW_S, form);
    expect((await send(HTTP_PATHS.slackCommands, form, signed)).body).toMatchObject({ text: 'Looking up "Northwind"…' });
    const hex = String(signed['x-slack-signature']).slice('v0='.length);
    const again = await send(HTTP_PATHS.slackCommands, form, { ...signed, 'x-slack-signature': respell(hex) });
    expect(again.body).toMatchObject({ text: expect.stringContaining('Already handled') as string });
    expect(await queued()).toHaveLength(1);
    expect(observer.countOf(SLACK_APP_METRICS.slackRequestReplayed)).toBe(1);
  });

  it("refuses a request dated ahead of now beyond the clocks' skew (401 signature_future), acting on nothing", async () => {
    const form = commandForm('subscribe Northwind', 'C840');
    expect(await send(HTTP_PATHS.slackCommands, form, signSlackRequest(SECRET, NOW_S + 200, form))).toEqual({
      status: 401,
      body: { ok: false, error: 'signature_future' },
    });
    expect(await queued()).toEqual([]);
  });

  it('answers 503 and does nothing when the table cannot say whether it is a replay', async () => {
    handler = handlerWith({ [ENV.tableName]: 'no-such-table' });
    const form = commandForm('subscribe Northwind', 'C820');
    expect(await send(HTTP_PATHS.slackCommands, form)).toEqual({ status: 503, body: { ok: false, error: 'store_unavailable' } });
    expect(await queued()).toEqual([]);
  });
});

describe('Slack endpoint: signed button values', () => {
  const forged = actionValueCodec(['another-key-that-is-long-enough-0123456789']);
  it.each([
    [
      'an unsigned value',
      (p: Record<string, unknown>) => (actionOf(p)['value'] = JSON.stringify({ p: 'p700', n: 'N', c: 'C700' })),
      'unsigned',
    ],
    [
      'a value signed with another key',
      (p: Record<string, unknown>) => (actionOf(p)['value'] = forged.encode({ projectId: 'p700', projectName: 'N', channel: 'C700' })),
      'unsigned',
    ],
    [
      'a signed value for another project',
      (p: Record<string, unknown>) => {
        const value = JSON.parse(String(actionOf(p)['value'])) as Record<string, string>;
        actionOf(p)['value'] = JSON.stringify({ ...value, p: 'p-other' });
      },
      'unsigned',
    ],
    [
      'a cut signature',
      (p: Record<string, unknown>) => {
        const value = JSON.parse(String(actionOf(p)['value'])) as Record<string, string>;
        actionOf(p)['value'] = JSON.stringify({ ...value, s: value['s']!.slice(0, 10) });
      },
      'unsigned',
    ],
    ['a click without a channel', (p: Record<string, unknown>) => delete p['channel'], 'no_channel'],
    ['a click in another channel (a forwarded copy)', (p: Record<string, unknown>) => (p['channel'] = { id: 'C0ELSE' }), 'other_channel'],
    ['a click in a DM', (p: Record<string, unknown>) => (p['channel'] = { id: 'D0DM' }), 'direct_message'],
    [
      'a click in the DM its signed value names',
      (p: Record<string, unknown>) => {
        p['channel'] = { id: 'D0DM' };
        actionOf(p)['value'] = codec.encode({ projectId: 'p700', projectName: 'Northwind', channel: 'D0DM' });
      },
      'direct_message',
    ],
  ])('refuses %s: nothing changed, the clicker told, 200', async (_label, edit, reason) => {
    await subscribe('p700', 'C700');
    const result = await send(HTTP_PATHS.slackInteractions, clickWith(edit));
    expect(result.status).toBe(200);
    expect(await store.forProject('p700')).toMatchObject([{ channel: 'C700' }]);
    expect((await store.forChannel('C700'))[0]?.mutedUntilMs).toBeUndefined();
    expect(hooks.bodies).toEqual([
      { response_type: 'ephemeral', replace_original: false, text: expect.stringContaining("This button can't be used here") as string },
    ]);
    expect(observer.countOf(`${SLACK_APP_METRICS.slackActionRefused}{reason=${reason}}`)).toBe(1);
    expect(observer.countOf(SLACK_APP_METRICS.slackActionHandled)).toBe(0);
  });

  it('accepts a value signed with an older key still listed (rotation)', async () => {
    const NEW_KEY = 'the-new-action-signing-key-0123456789abcdef';
    handler = handlerWith({ [ENV.actionSigningKey]: JSON.stringify([NEW_KEY, ACTION_KEY]) });
    await subscribe('p830', 'C830');
    expect((await send(HTTP_PATHS.slackInteractions, buttonForm(ACTION_IDS.mute7d, 'p830', 'C830'))).status).toBe(200);
    expect((await store.forChannel('C830'))[0]?.mutedUntilMs).toBe(NOW + 7 * 24 * 3_600_000);
  });
});

describe('Slack endpoint: who may do what, and sharing a read (issue 21)', () => {
  const usersOnly = { [ENV.slackAccessPolicy]: JSON.stringify({ changes: { users: ['U0BOSS'] } }) };

  it('a member outside the allow-list can neither subscribe, mute nor click: told who can, nothing stored or queued', async () => {
    handler = handlerWith(usersOnly);
    await subscribe('p900', 'C900');
    const subscribing = await send(HTTP_PATHS.slackCommands, commandForm('subscribe Northwind', 'C900'));
    expect(subscribing).toMatchObject({ status: 200, body: { response_type: 'ephemeral' } });
    expect(String(subscribing.body?.['text'])).toMatch(/^Only <@U0BOSS> can change digest subscriptions/);
    const muting = await send(HTTP_PATHS.slackCommands, commandForm('mute Northwind 1d', 'C900'));
    expect(String(muting.body?.['text'])).toMatch(/^Only <@U0BOSS> can/);
    expect((await send(HTTP_PATHS.slackInteractions, buttonForm(ACTION_IDS.mute7d, 'p900', 'C900'))).status).toBe(200);
    expect(hooks.bodies.at(-1)).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect((await store.forChannel('C900'))[0]?.mutedUntilMs).toBeUndefined();
    expect(await queued()).toEqual([]);
    expect(observer.countOf(SLACK_APP_METRICS.slackCommandRefused)).toBe(3);
    // Reading stays open: `list` answers, ephemerally.
    const list = await send(HTTP_PATHS.slackCommands, commandForm('list', 'C900'));
    expect(list.body).toMatchObject({ response_type: 'ephemeral' });
  });

  it('list answers ephemerally with a "Share in channel" button that posts it in the channel and deletes the ephemeral one', async () => {
    await subscribe('p910', 'C910');
    const list = await send(HTTP_PATHS.slackCommands, commandForm('list', 'C910'));
    expect(list.body).toMatchObject({ response_type: 'ephemeral' });
    const blocks = list.body?.['blocks'] as { type: string; elements?: { action_id: string; value: string }[] }[];
    const share = blocks.find((b) => b.type === 'actions')?.elements?.[0];
    expect(share?.action_id).toBe(ACTION_IDS.shareInChannel);
    const click = (channel: string, response: string) =>
      new URLSearchParams({
        payload: JSON.stringify({
          type: 'block_actions',
          user: { id: 'U3', team_id: TEAM },
          team: { id: TEAM },
          api_app_id: APP,
          response_url: `${hooks.url}/${response}`,
          channel: { id: channel },
          container: { type: 'message', is_ephemeral: true },
          actions: [{ action_id: share!.action_id, value: share!.value }],
        }),
      }).toString();
    expect((await send(HTTP_PATHS.slackInteractions, click('C910', 'share/1'))).status).toBe(200);
    expect(hooks.bodies).toHaveLength(2);
    expect(hooks.bodies[0]).toMatchObject({
      response_type: 'in_channel',
      text: expect.stringContaining('*Northwind* — mode `full`') as string,
    });
    expect(hooks.bodies[1]).toMatchObject({ delete_original: true });
    // Forwarded to another channel, the same button shares nothing there.
    hooks.bodies.length = 0;
    await send(HTTP_PATHS.slackInteractions, click('C911', 'share/2'));
    expect(hooks.bodies.every((b) => (b as { response_type?: string }).response_type !== 'in_channel')).toBe(true);
  });

  it('status is acknowledged ephemerally and queued for the worker', async () => {
    const status = await send(HTTP_PATHS.slackCommands, commandForm('status Northwind', 'C920'));
    expect(status.body).toMatchObject({ response_type: 'ephemeral', text: 'Looking up "Northwind"…' });
    expect(parseDeferredSlackCommand((await queued())[0])).toMatchObject({ command: { kind: 'status' } });
  });
});
