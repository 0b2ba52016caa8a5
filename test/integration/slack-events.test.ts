/**
 * `POST /slack/events` and the Home tab's clicks through the Slack Lambda handler as API Gateway
 * invokes it, against dynalite (the replay guard) and the local SQS server (the commands queue):
 * Slack's URL check answered, an opened Home tab queued once however Slack retries or replays it,
 * a foreign workspace refused, the bot's own posts recorded in the posted ledger (a `ledger` stage), and
 * on an "Add to Slack" stage a workspace's channels noted by its commands and purged by its uninstall.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateQueueCommand, PurgeQueueCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { SqsServer } from '../../local/sqs-server';
import { createSlackHandler, type SlackHandler } from '../../functions/slack/create-handler';
import { DynamoPostedLedger } from '../../shared/adapters/dynamo-posted-ledger';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { ENV, HTTP_PATHS, SLACK_APP_METRICS } from '../../shared/contracts';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { HOME_ACTION_IDS } from '../../shared/slack-app/home/actions';
import { httpApiEvent } from '../support/deliveries';
import { RecordingObserver } from '../support/recording-observer';
import { testSqsClient } from '../support/sqs-client';
import { installationOf } from '../support/installations';

const SECRET = 'slack-signing-secret-events';
const TEAM = 'T0TEAM1';
const APP = 'A0BRIDGE';
const TABLE = 'slack-events-test';
const NOW = Date.parse('2026-03-02T09:00:00Z');
const NOW_S = NOW / 1000;

let dynamo: LocalDynamo;
let sqsServer: SqsServer;
let sqs: SQSClient;
let queueUrl: string;
let observer: RecordingObserver;
let handler: SlackHandler;
let env: Record<string, string>;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  sqsServer = await SqsServer.start();
  sqs = testSqsClient(sqsServer.url);
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'slack-events-commands' }))).QueueUrl!;
  process.env['AWS_ACCESS_KEY_ID'] = 'local';
  process.env['AWS_SECRET_ACCESS_KEY'] = 'local';
});

beforeEach(async () => {
  observer = new RecordingObserver();
  await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
  env = {
    [ENV.tableName]: TABLE,
    [ENV.commandsQueueUrl]: queueUrl,
    [ENV.slackSigningSecret]: SECRET,
    [ENV.actionSigningKey]: 'action-signing-key-test-0123456789abcdef',
    [ENV.slackTeamIds]: TEAM,
    [ENV.slackAppId]: APP,
    [ENV.awsRegion]: 'us-east-1',
    [ENV.awsEndpointDynamodb]: dynamo.endpoint,
    [ENV.awsEndpointSqs]: sqsServer.url,
    [ENV.slackPostRecovery]: 'ledger',
  };
  const observability = { log: observer, metrics: observer, flush() {}, appendKeys() {}, resetKeys() {} };
  handler = createSlackHandler(env, { observability, overrides: { clock: { now: () => NOW } } });
});

afterAll(async () => {
  sqs.destroy();
  await sqsServer.close();
  await dynamo.close();
});

function envelope(eventId: string, event: Record<string, unknown>, team = TEAM): string {
  return JSON.stringify({
    type: 'event_callback',
    token: 'x',
    team_id: team,
    api_app_id: APP,
    event_id: eventId,
    event_time: NOW_S,
    event,
  });
}

/** Slack signs each delivery at its own time; a retry is a new delivery of the same event. */
async function post(path: string, body: string, options: { atS?: number; headers?: Record<string, string>; form?: boolean } = {}) {
  const headers = { ...signSlackRequest(SECRET, options.atS ?? NOW_S, body), ...options.headers };
  const contentType = options.form ? 'application/x-www-form-urlencoded' : 'application/json';
  const result = await handler(
    httpApiEvent({
      rawPath: path,
      headers: { 'content-type': contentType, ...headers },
      body: Buffer.from(body).toString('base64'),
      isBase64Encoded: true,
    }),
  );
  return { status: result.statusCode, body: result.body ? (JSON.parse(result.body) as unknown) : undefined };
}

async function queued(): Promise<unknown[]> {
  const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
  return (received.Messages ?? []).map((m) => JSON.parse(m.Body ?? '') as unknown);
}

describe('POST /slack/events', () => {
  it("answers Slack's URL check with its challenge, on the signature alone", async () => {
    const check = JSON.stringify({ type: 'url_verification', token: 'x', challenge: 'c0ffee' });
    expect(await post(HTTP_PATHS.slackEvents, check)).toEqual({ status: 200, body: { challenge: 'c0ffee' } });
    const forged = signSlackRequest('another-secret', NOW_S, check);
    expect((await post(HTTP_PATHS.slackEvents, check, { headers: forged })).status).toBe(401);
  });

  it('queues the Home publish of an opened Home tab once, however often Slack retries or someone replays it', async () => {
    const opened = envelope('Ev1', { type: 'app_home_opened', user: 'U1', tab: 'home' });
    const first = { atS: NOW_S - 60 };
    expect(await post(HTTP_PATHS.slackEvents, opened, first)).toEqual({ status: 200, body: undefined });
    // The same request again (a replay) and Slack's retry a minute later (a new signature, the same event id).
    expect((await post(HTTP_PATHS.slackEvents, opened, first)).status).toBe(200);
    expect((await post(HTTP_PATHS.slackEvents, opened, { headers: { 'x-slack-retry-num': '1' } })).status).toBe(200);
    expect(await queued()).toEqual([{ kind: 'slack_home', userId: 'U1', page: 0, receivedAtMs: NOW }]);
    expect(observer.countOf(SLACK_APP_METRICS.slackRequestReplayed)).toBe(2);
  });

  it('ignores the Messages tab and event types it does not handle (200)', async () => {
    expect((await post(HTTP_PATHS.slackEvents, envelope('Ev2', { type: 'app_home_opened', user: 'U1', tab: 'messages' }))).status).toBe(
      200,
    );
    expect((await post(HTTP_PATHS.slackEvents, envelope('Ev3', { type: 'reaction_added', user: 'U1' }))).status).toBe(200);
    expect(await queued()).toEqual([]);
  });

  it('refuses a signed event from another workspace (403), queueing nothing', async () => {
    const foreign = envelope('Ev4', { type: 'app_home_opened', user: 'U9', tab: 'home' }, 'T0OTHER');
    expect(await post(HTTP_PATHS.slackEvents, foreign)).toEqual({ status: 403, body: { ok: false, error: 'foreign_workspace' } });
    expect(await queued()).toEqual([]);
    expect(observer.countOf(`${SLACK_APP_METRICS.slackRequestForeign}{reason=team}`)).toBe(1);
  });

  it('answers 400 to a signed body that is not an event envelope', async () => {
    expect((await post(HTTP_PATHS.slackEvents, JSON.stringify({ type: 'event_callback', team_id: TEAM }))).status).toBe(400);
  });
});

describe('message_metadata_posted (the posted ledger)', () => {
  const ledger = () => new DynamoPostedLedger(dynamo.client, { tableName: TABLE, retentionSeconds: 3600 });
  const posted = (app: string, eventId: string, reply?: string) => ({
    type: 'message_metadata_posted',
    app_id: app,
    bot_id: 'B0BRIDGE',
    channel_id: 'C0DIGESTS',
    message_ts: reply === undefined ? '1700000000.000100' : '1700000000.000200',
    metadata: { event_type: 'visibility_digest', event_payload: { event_id: eventId, ...(reply === undefined ? {} : { reply }) } },
  });
  const learned = () => observer.entries.filter((e) => e.message.startsWith('posted message learned')).length;

  it("records the bot's own post (and a reply) in the ledger, once however often Slack retries the event", async () => {
    const top = envelope('EvP1', posted(APP, 'evt-ledger-1'));
    expect(await post(HTTP_PATHS.slackEvents, top, { atS: NOW_S - 30 })).toEqual({ status: 200, body: undefined });
    expect((await post(HTTP_PATHS.slackEvents, top, { headers: { 'x-slack-retry-num': '1' } })).status).toBe(200);
    expect((await post(HTTP_PATHS.slackEvents, envelope('EvP2', posted(APP, 'evt-ledger-1', '1')))).status).toBe(200);
    expect(await ledger().find('C0DIGESTS', 'evt-ledger-1')).toEqual({ mainTs: '1700000000.000100', replies: 1, unknownAtMs: undefined });
    expect(learned()).toBe(2);
    expect(observer.countOf(SLACK_APP_METRICS.slackRequestReplayed)).toBe(1);
  });

  it("ignores another app's message naming a bridge event, and metadata naming none", async () => {
    expect((await post(HTTP_PATHS.slackEvents, envelope('EvP3', posted('A0SOMEONEELSE', 'evt-ledger-2')))).status).toBe(200);
    const none = { ...posted(APP, 'x'), metadata: { event_type: 'something_else', event_payload: {} } };
    expect((await post(HTTP_PATHS.slackEvents, envelope('EvP4', none))).status).toBe(200);
    expect(await ledger().find('C0DIGESTS', 'evt-ledger-2')).toBeUndefined();
    expect(learned()).toBe(0);
  });
});

describe('app_uninstalled on an "Add to Slack" stage', () => {
  it('purges what the workspace set up in the channels it ran /visibility in, once however Slack retries', async () => {
    handler = createSlackHandler(
      { ...env, [ENV.slackClientId]: '1234567890.9876543210' },
      {
        observability: { log: observer, metrics: observer, flush() {}, appendKeys() {}, resetKeys() {} },
        overrides: { clock: { now: () => NOW } },
      },
    );
    const installations = new DynamoInstallationStore(dynamo.client, { tableName: TABLE });
    await installations.save(installationOf({ teamId: TEAM, installedAtMs: NOW }));
    const command = new URLSearchParams({
      command: '/visibility',
      text: 'help',
      channel_id: 'C0TEAMCH',
      user_id: 'U1',
      response_url: 'https://hooks.slack.com/commands/T0TEAM1/1/x',
      team_id: TEAM,
      api_app_id: APP,
    }).toString();
    expect((await post(HTTP_PATHS.slackCommands, command, { form: true })).status).toBe(200);
    const quiet = new DynamoQuietHoursStore(dynamo.client, TABLE);
    await quiet.setWindow('C0TEAMCH', { startMinute: 0, endMinute: 60, timeZone: 'UTC' }, { userId: 'U1' }, NOW);
    const uninstalled = envelope('EvU1', { type: 'app_uninstalled' });
    expect((await post(HTTP_PATHS.slackEvents, uninstalled, { atS: NOW_S - 10 })).status).toBe(200);
    expect((await post(HTTP_PATHS.slackEvents, uninstalled, { headers: { 'x-slack-retry-num': '1' } })).status).toBe(200);
    expect(await installations.get(TEAM)).toBeUndefined();
    expect((await quiet.windowsOf(['C0TEAMCH'])).size).toBe(0);
    const removed = observer.entries.filter((e) => e.message.startsWith('Slack app removed'));
    expect(removed.map((e) => e.fields['channelsPurged'])).toEqual([1]);
  });
});

describe('Home tab clicks (POST /slack/interactions)', () => {
  const click = (action: Record<string, unknown>) =>
    new URLSearchParams({
      payload: JSON.stringify({
        type: 'block_actions',
        user: { id: 'U1', team_id: TEAM },
        team: { id: TEAM },
        api_app_id: APP,
        container: { type: 'view', view_id: 'V1' },
        view: { id: 'V1', type: 'home', private_metadata: 'page=1' },
        actions: [action],
      }),
    }).toString();

  it('queues the page a page button asks for, and a subscribe on the page it was picked on', async () => {
    expect((await post(HTTP_PATHS.slackInteractions, click({ action_id: HOME_ACTION_IDS.next, value: '2' }), { form: true })).status).toBe(
      200,
    );
    const pick = click({ action_id: HOME_ACTION_IDS.subscribe, block_id: 'home_project:p1', selected_conversation: 'C0OPS' });
    expect((await post(HTTP_PATHS.slackInteractions, pick, { atS: NOW_S + 1, form: true })).status).toBe(200);
    expect(await queued()).toEqual([
      { kind: 'slack_home', userId: 'U1', page: 2, receivedAtMs: NOW },
      { kind: 'slack_home', userId: 'U1', page: 1, subscribe: { projectId: 'p1', channel: 'C0OPS' }, receivedAtMs: NOW },
    ]);
  });

  it('refuses a click from another workspace', async () => {
    const foreign = click({ action_id: HOME_ACTION_IDS.next, value: '2' }).replaceAll(TEAM, 'T0OTHER');
    expect((await post(HTTP_PATHS.slackInteractions, foreign, { form: true })).status).toBe(403);
    expect(await queued()).toEqual([]);
  });
});
