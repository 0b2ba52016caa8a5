/**
 * Connections linked to Slack installations (issue 31 item 2), on real protocol peers: dynalite, the
 * local SQS server, the local Secrets Manager server, the service simulator and the local Slack server
 * (which records the token of every call). The digest function's own wiring posts a linked
 * connection's digest with its installation's bot token, an unlinked one's with the stack's, and
 * nothing for a connection whose installation is gone. The Slack function's gate, on a distributed
 * stage, serves a workspace that installed the app and refuses one that did not (or no longer does,
 * once its cache entry has lapsed); a stage that is not distributed is unchanged.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { createDigestRuntime, readDigestConfig } from '../../functions/digest/runtime';
import { createSlackHandler, type SlackHandler } from '../../functions/slack/create-handler';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { connectionSecretPrefix, DIGEST_METRICS, ENV, HTTP_PATHS, SLACK_APP_METRICS } from '../../shared/contracts';
import { formatConnectionSecret, type Connection } from '../../shared/connections/model';
import type { WebhookEvent } from '../../shared/events';
import type { BotToken, Installation } from '../../shared/installations/model';
import { INSTALLED_TTL_MS } from '../../shared/slack-app/workspace-gate';
import { tenantOf } from '../../shared/tenancy';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { LocalSecretsManagerServer } from '../../local/secrets-manager-server';
import { AUTHORIZE_PATH } from '../../local/slack/oauth';
import { RESPONSE_URL_PATH } from '../../local/slack/server';
import { digestPeersEnv, startDigestPeers, useLocalSecretsManager, type DigestPeers } from '../support/digest-peers';
import { httpApiEvent } from '../support/deliveries';
import { RecordingObserver } from '../support/recording-observer';
import { enqueue, receiveRecords } from '../support/sqs-records';
import { installationOf } from '../support/installations';

const TABLE = 'bridge-connection-link';
const STACK_TOKEN = 'xoxb-stack-token';
const TOKEN_A = 'xoxb-team-a-token';
const TOKEN_B = 'xoxb-team-b-token';
const TOKEN_ORG = 'xoxb-org-token';
const APP = 'A0BRIDGE';
const PREFIX = connectionSecretPrefix('test');

let peers: DigestPeers;
let secrets: LocalSecretsManagerServer;
let connections: DynamoConnectionStore;
let installations: DynamoInstallationStore;
let restoreProcessEnv: () => void = () => undefined;

function installation(id: string, token: string | BotToken, org = false): Installation {
  return installationOf({
    ...(org ? { enterpriseId: id } : { teamId: id }),
    isEnterpriseInstall: org,
    appId: APP,
    bot: typeof token === 'string' ? { token } : token,
    installedAtMs: Date.now(),
  });
}

function connection(id: string, defaultChannel: string, slackTeamIds: string[]): Connection {
  return {
    id,
    baseUrl: peers.sim.url,
    secretName: `${PREFIX}${id}`,
    routes: { defaultChannel, byProject: {} },
    slackTeamIds,
    status: 'active',
    createdAtMs: Date.now(),
  };
}

function digestEnv(): Record<string, string> {
  return digestPeersEnv(peers, { slackToken: STACK_TOKEN, defaultChannel: 'C0STACK' });
}

beforeAll(async () => {
  peers = await startDigestPeers({ tableName: TABLE, queueName: 'connection-link', visibilityTimeoutSeconds: 1, slackToken: STACK_TOKEN });
  // Any token is accepted (the local Slack server's OAuth issues new ones); each call records the one it carried.
  peers.slack.setTokens(undefined);
  secrets = await LocalSecretsManagerServer.start();
  restoreProcessEnv = useLocalSecretsManager(secrets.url);
  connections = new DynamoConnectionStore(peers.dynamo.client, TABLE);
  installations = new DynamoInstallationStore(peers.dynamo.client, { tableName: TABLE });
  await installations.save(installation('T0AAA', TOKEN_A));
  await installations.save(installation('T0BBB', TOKEN_B));
  await installations.save(installation('E0ORG', TOKEN_ORG, true));
  // Installed, then uninstalled: the uninstall's purge deleted its installation.
  await installations.save(installation('T0GONE', 'xoxb-gone-token'));
  expect(await installations.delete('T0GONE')).toBe(true);
  const all = [
    connection('linked', 'C0LINKED', ['T0BBB', 'T0AAA']),
    connection('plain', 'C0PLAIN', []),
    connection('orgwide', 'C0ORGWIDE', ['E0ORG']),
    connection('orphan', 'C0ORPHAN', ['T0GONE']),
  ];
  for (const c of all) {
    secrets.createSecret(c.secretName, formatConnectionSecret({ readApiKey: peers.sim.apiKey, signingSecrets: [`whsec_${c.id}`] }));
    expect(await connections.add(c)).toBe('added');
  }
}, 60_000);

afterAll(async () => {
  restoreProcessEnv();
  await Promise.all([peers.close(), secrets.close()]);
});

/** A rotating bot token and its single-use refresh token, as the local Slack server's OAuth issues them for `team`. */
async function rotatingToken(team: string): Promise<BotToken> {
  const redirect = 'https://bridge.example/slack/oauth_redirect';
  const allow = new URL(`http://${peers.slack.host}:${peers.slack.port}${AUTHORIZE_PATH}/allow`);
  for (const [name, value] of Object.entries({ redirect_uri: redirect, team, scope: 'chat:write' })) allow.searchParams.set(name, value);
  const code = new URL((await fetch(allow, { redirect: 'manual' })).headers.get('location') ?? '').searchParams.get('code') ?? '';
  const answer = await new WebClient(undefined, { slackApiUrl: peers.slack.apiUrl }).oauth.v2.access({
    client_id: peers.slack.oauth.clientId,
    client_secret: peers.slack.oauth.clientSecret,
    code,
    redirect_uri: redirect,
  });
  if (typeof answer.access_token !== 'string' || typeof answer.refresh_token !== 'string') throw new Error('no rotating token issued');
  return { token: answer.access_token, refreshToken: answer.refresh_token };
}

describe("a connection's digest posts with its linked installation's bot token", () => {
  let observer: RecordingObserver;
  beforeEach(async () => {
    observer = new RecordingObserver();
    await peers.reset();
    peers.sim.clearRequests();
  });

  function run(): WebhookEvent {
    const projectId = peers.sim.projectIds()[0] ?? '';
    const advanced = peers.sim.advanceRun(projectId);
    return {
      id: randomUUID(),
      type: 'run.completed',
      created_at: new Date().toISOString(),
      data: { project_id: projectId, run_id: advanced.runId, status: 'completed', answers: advanced.answers },
    };
  }

  async function digest(connectionId: string, env: Record<string, string> = {}): Promise<void> {
    const body = { event: run(), received_at: new Date().toISOString(), connection: connectionId };
    await enqueue(peers.sqs, peers.queueUrl, JSON.stringify(body));
    const runtime = createDigestRuntime(readDigestConfig({ ...digestEnv(), ...env }), { log: observer, metrics: observer });
    const result = await runtime.handle(await receiveRecords(peers.sqs, peers.queueUrl), 60_000);
    expect(result.batchItemFailures).toEqual([]);
  }

  /** The partition keys stored for a post (`<channel>#<event id>`), whatever their tenant. */
  const keysOf = async (post: string) =>
    ((await peers.dynamo.client.send(new ScanCommand({ TableName: TABLE }))).Items ?? [])
      .map((item) => item['pk']?.S ?? '')
      .filter((pk) => pk.includes('posted#') && pk.endsWith(post));

  const tokensIn = (channel: string) => [
    ...new Set(peers.slack.calls('chat.postMessage').flatMap((c) => (c.channel === channel ? [c.token] : []))),
  ];

  it("with the first linked team's token (B's, not A's nor the stack's)", async () => {
    await digest('linked');
    expect(peers.slack.messages('C0LINKED').filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(tokensIn('C0LINKED')).toEqual([TOKEN_B]);
    expect(peers.slack.calls().every((c) => c.token !== STACK_TOKEN)).toBe(true);
  });

  it("with the org's token when linked to an org-wide install (E…)", async () => {
    await digest('orgwide');
    expect(tokensIn('C0ORGWIDE')).toEqual([TOKEN_ORG]);
  });

  it('with a rotating token refreshed under the lease first when it is about to expire', async () => {
    const issued = await rotatingToken('T0ROT');
    // One hour left: inside the two-hour margin, so the digest refreshes it before posting.
    await installations.save(installation('T0ROT', { ...issued, expiresAtMs: Date.now() + 3_600_000 }));
    const rotating = connection('rotating', 'C0ROTATING', ['T0ROT']);
    secrets.createSecret(rotating.secretName, formatConnectionSecret({ readApiKey: peers.sim.apiKey, signingSecrets: ['whsec_rot'] }));
    expect(await connections.add(rotating)).toBe('added');
    const refreshesBefore = peers.slack.oauth.refreshes().length;
    await digest('rotating', {
      [ENV.slackClientId]: peers.slack.oauth.clientId,
      [ENV.slackClientSecret]: peers.slack.oauth.clientSecret,
    });
    expect(peers.slack.oauth.refreshes().slice(refreshesBefore)).toEqual([
      { refreshToken: issued.refreshToken, ok: true, error: undefined },
    ]);
    const stored = (await installations.get('T0ROT'))?.bot;
    expect(stored?.token).not.toBe(issued.token);
    expect(tokensIn('C0ROTATING')).toEqual([stored?.token]);
  });

  it("with the stack's own token when not linked, as before", async () => {
    await digest('plain');
    expect(peers.slack.messages('C0PLAIN').filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(tokensIn('C0PLAIN')).toEqual([STACK_TOKEN]);
  });

  it("records each connection's posts in its own ledger (`slackPostRecovery: ledger`), its id in their metadata", async () => {
    for (const [id, channel] of [
      ['linked', 'C0LINKED'],
      ['plain', 'C0PLAIN'],
    ] as const) {
      await digest(id, { [ENV.slackPostRecovery]: 'ledger' });
      const [posted] = peers.slack.messages(channel).filter((m) => !m.thread_ts);
      expect(posted?.metadata).toMatchObject({ event_payload: { connection: id } });
      const eventId = (posted?.metadata as { event_payload: { event_id: string } }).event_payload.event_id;
      const pks = await keysOf(`${channel}#${eventId}`);
      expect(pks).toEqual([`t#${id}#posted#${channel}#${eventId}`]);
    }
  });

  it('posts nothing, with no token, when the linked installation is gone: settled, logged and counted', async () => {
    await digest('orphan');
    expect(peers.slack.calls()).toEqual([]);
    // Not even read: nothing would be posted.
    expect(peers.sim.requests().filter((r) => r.route !== 'control')).toEqual([]);
    expect(observer.countOf(DIGEST_METRICS.connectionNotInstalled)).toBe(1);
    const dropped = observer.entries.filter((e) => e.message.startsWith('event of a connection whose Slack installation is gone'));
    expect(dropped.map((e) => [e.fields['connectionId'], e.fields['teamId']])).toEqual([['orphan', 'T0GONE']]);
    // Settled: nothing is left on the queue to be retried.
    expect(await receiveRecords(peers.sqs, peers.queueUrl)).toEqual([]);
  });
});

describe("a connection's weekly report and quiet-hours catch-up post with its linked installation's bot token", () => {
  let observer: RecordingObserver;
  beforeEach(async () => {
    observer = new RecordingObserver();
    await peers.reset();
  });

  async function sweep(message: Record<string, unknown>): Promise<void> {
    await enqueue(peers.sqs, peers.queueUrl, JSON.stringify(message));
    const runtime = createDigestRuntime(readDigestConfig(digestEnv()), { log: observer, metrics: observer });
    const result = await runtime.handle(await receiveRecords(peers.sqs, peers.queueUrl), 60_000);
    expect(result.batchItemFailures).toEqual([]);
  }

  const tokensIn = (channel: string) => [
    ...new Set(peers.slack.calls('chat.postMessage').flatMap((c) => (c.channel === channel ? [c.token] : []))),
  ];

  function expectOrphanSkipped(): void {
    expect(peers.slack.calls().filter((c) => c.channel === 'C0ORPHAN')).toEqual([]);
    expect(observer.countOf(DIGEST_METRICS.connectionNotInstalled)).toBe(1);
    const skipped = observer.entries.filter((e) => e.message.startsWith('sweep of a connection whose Slack installation is gone'));
    expect(skipped.map((e) => [e.fields['connectionId'], e.fields['teamId']])).toEqual([['orphan', 'T0GONE']]);
  }

  it("the weekly report: the linked team's, the stack's when not linked, none when the installation is gone", async () => {
    await sweep({ kind: 'weekly_sweep', now: true });
    expect(peers.slack.messages('C0LINKED').filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(tokensIn('C0LINKED')).toEqual([TOKEN_B]);
    expect(tokensIn('C0ORGWIDE')).toEqual([TOKEN_ORG]);
    expect(tokensIn('C0PLAIN')).toEqual([STACK_TOKEN]);
    expect(tokensIn('C0STACK')).toEqual([STACK_TOKEN]);
    expectOrphanSkipped();
  });

  it("the catch-up of held digests: the linked team's, the stack's when not linked, none when the installation is gone", async () => {
    const now = Date.now();
    for (const [id, channel] of [
      ['linked', 'C0LINKED'],
      ['plain', 'C0PLAIN'],
      ['orphan', 'C0ORPHAN'],
    ] as const) {
      await new DynamoQuietHoursStore(peers.dynamo.client, TABLE, tenantOf(id)).hold(channel, {
        eventId: randomUUID(),
        projectId: peers.sim.projectIds()[0] ?? '',
        headline: `held run of ${id}`,
        createdAt: new Date(now).toISOString(),
        heldAtMs: now,
        catchUpAfterMs: now - 1,
      });
    }
    await sweep({ kind: 'quiet_catch_up' });
    expect(JSON.stringify(peers.slack.messages('C0LINKED'))).toContain('held run of linked');
    expect(tokensIn('C0LINKED')).toEqual([TOKEN_B]);
    expect(tokensIn('C0PLAIN')).toEqual([STACK_TOKEN]);
    expectOrphanSkipped();
    // Still held: it is posted once its connection is linked to an installed team again.
    const orphanHeld = new DynamoQuietHoursStore(peers.dynamo.client, TABLE, tenantOf('orphan'));
    expect((await orphanHeld.channelsWithHeld()).map((h) => h.channel)).toEqual(['C0ORPHAN']);
  });
});

describe('the workspace gate of a distributed stage', () => {
  const SECRET = 'slack-signing-secret-link';
  let nowMs = Date.parse('2026-03-02T09:00:00Z');
  let observer: RecordingObserver;

  function slackHandler(distributed: boolean): SlackHandler {
    observer = new RecordingObserver();
    const env: Record<string, string> = {
      [ENV.tableName]: TABLE,
      [ENV.commandsQueueUrl]: peers.queueUrl,
      [ENV.slackSigningSecret]: SECRET,
      [ENV.actionSigningKey]: 'action-signing-key-test-0123456789abcdef',
      [ENV.slackTeamIds]: 'T0STACK',
      [ENV.slackAppId]: APP,
      [ENV.awsRegion]: 'us-east-1',
      [ENV.awsEndpointDynamodb]: peers.dynamo.endpoint,
      [ENV.awsEndpointSqs]: peers.queueUrl.slice(0, peers.queueUrl.indexOf('/', 'http://'.length)),
      ...(distributed ? { [ENV.slackClientId]: '1234567890.9876543210' } : {}),
    };
    const observability = { log: observer, metrics: observer, flush() {}, appendKeys() {}, resetKeys() {} };
    return createSlackHandler(env, { observability, overrides: { clock: { now: () => nowMs } } });
  }

  /** `/visibility <text>` (`help` unless said) as Slack sends it from `team` (form fields, signed at the current time). */
  async function help(handler: SlackHandler, team: string, extra: Record<string, string> = {}, text = 'help'): Promise<number> {
    const body = new URLSearchParams({
      command: '/visibility',
      text,
      channel_id: 'C0ANY',
      user_id: 'U1',
      response_url: `https://hooks.slack.com/commands/${team}/1/x`,
      team_id: team,
      api_app_id: APP,
      ...extra,
    }).toString();
    const result = await handler(
      httpApiEvent({
        rawPath: HTTP_PATHS.slackCommands,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...signSlackRequest(SECRET, Math.floor(nowMs / 1000), body) },
        body: Buffer.from(body).toString('base64'),
        isBase64Encoded: true,
      }),
    );
    nowMs += 1000; // each request its own signature
    return result.statusCode ?? 0;
  }

  /** A signed Events API delivery from `team` (JSON), as Slack sends it. */
  async function event(handler: SlackHandler, team: string, eventId: string, body: Record<string, unknown>): Promise<number> {
    const raw = JSON.stringify({ type: 'event_callback', token: 'x', team_id: team, api_app_id: APP, event_id: eventId, event: body });
    const result = await handler(
      httpApiEvent({
        rawPath: HTTP_PATHS.slackEvents,
        headers: { 'content-type': 'application/json', ...signSlackRequest(SECRET, Math.floor(nowMs / 1000), raw) },
        body: Buffer.from(raw).toString('base64'),
        isBase64Encoded: true,
      }),
    );
    nowMs += 1000;
    return result.statusCode ?? 0;
  }

  it('serves both events of an uninstall, the second after the first deleted the installation, and nothing else of that team', async () => {
    await installations.save(installation('T0UNINST', 'xoxb-uninst'));
    expect(await event(slackHandler(true), 'T0UNINST', 'EvR1', { type: 'tokens_revoked', tokens: { bot: ['U0BOT'] } })).toBe(200);
    expect(await installations.get('T0UNINST')).toBeUndefined();
    // Another container (no cache): the installation is gone, the other event of the pair is still served.
    expect(await event(slackHandler(true), 'T0UNINST', 'EvR2', { type: 'app_uninstalled' })).toBe(200);
    expect(observer.countOf(`${SLACK_APP_METRICS.slackRequestForeign}{reason=team}`)).toBe(0);
    expect(await event(slackHandler(true), 'T0UNINST', 'EvR3', { type: 'app_home_opened', user: 'U1', tab: 'home' })).toBe(403);
  });

  it('serves a workspace that installed the app, and refuses one that did not', async () => {
    const handler = slackHandler(true);
    expect(await help(handler, 'T0BBB')).toBe(200);
    expect(await help(handler, 'T0STACK')).toBe(200);
    expect(await help(handler, 'T0NEVER')).toBe(403);
    expect(await help(handler, 'T0GONE')).toBe(403);
    expect(observer.countOf(`${SLACK_APP_METRICS.slackRequestForeign}{reason=team}`)).toBe(2);
  });

  it("serves a workspace of an org that installed it org-wide, and refuses another app's request", async () => {
    const handler = slackHandler(true);
    expect(await help(handler, 'T0INORG', { enterprise_id: 'E0ORG' })).toBe(200);
    expect(await help(handler, 'T0INORG', { enterprise_id: 'E0OTHER' })).toBe(403);
    expect(await help(handler, 'T0BBB', { api_app_id: 'A0OTHERAPP' })).toBe(403);
  });

  it('refuses a team once its uninstall deleted its installation and the cache entry lapsed', async () => {
    await installations.save(installation('T0LEAVING', 'xoxb-leaving'));
    const handler = slackHandler(true);
    expect(await help(handler, 'T0LEAVING')).toBe(200);
    expect(await installations.delete('T0LEAVING')).toBe(true);
    // Within the cache's positive TTL the container still serves it; past it, it reads again.
    expect(await help(handler, 'T0LEAVING')).toBe(200);
    nowMs += INSTALLED_TTL_MS.installed;
    expect(await help(handler, 'T0LEAVING')).toBe(403);
  });

  it("checks a subscribed channel with the token its project's digests post with: the linked team's, not the stack's", async () => {
    await peers.reset();
    const projectId = peers.sim.projectIds()[0] ?? '';
    const responseUrl = `${new URL(peers.slack.apiUrl).origin}${RESPONSE_URL_PATH}subscribe-check`;
    // Team B reaches only the connection `linked`, whose digests post with B's installation (its first linked team).
    const extra = { channel_id: 'C0SUBSCRIBED', response_url: responseUrl };
    expect(await help(slackHandler(true), 'T0BBB', extra, `subscribe ${projectId}`)).toBe(200);
    // The deferred answer, on the commands queue (the Slack function's ENV.commandsQueueUrl is this queue).
    const commandsArn = `arn:aws:sqs:us-east-1:000000000000:${peers.queueUrl.slice(peers.queueUrl.lastIndexOf('/') + 1)}`;
    const records = (await receiveRecords(peers.sqs, peers.queueUrl)).map((record) => ({ ...record, eventSourceARN: commandsArn }));
    expect(records).toHaveLength(1);
    const env = { ...digestEnv(), [ENV.commandsQueueUrl]: peers.queueUrl };
    const runtime = createDigestRuntime(readDigestConfig(env), { log: observer, metrics: observer });
    expect((await runtime.handle(records, 60_000)).batchItemFailures).toEqual([]);
    expect(peers.slack.calls('conversations.info').map((c) => [c.channel, c.token])).toEqual([['C0SUBSCRIBED', TOKEN_B]]);
    expect(peers.slack.calls().every((c) => c.token !== STACK_TOKEN)).toBe(true);
    const subscribed = await new DynamoSubscriptionStore(peers.dynamo.client, TABLE, 'full', tenantOf('linked')).forChannel('C0SUBSCRIBED');
    expect(subscribed.map((s) => s.projectId)).toEqual([projectId]);
  });

  it('leaves a stage that is not distributed as it was: its allow-list only', async () => {
    const handler = slackHandler(false);
    expect(await help(handler, 'T0BBB')).toBe(403);
    expect(await help(handler, 'T0STACK')).toBe(200);
  });
});
