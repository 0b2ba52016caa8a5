/**
 * Who the Slack app trusts, on the whole local stack, played as another member of the workspace
 * would: a request from another workspace or for another app is refused (403) and changes nothing;
 * a digest button clicked anywhere but on the digest (a forwarded copy, a DM, a payload without a
 * channel) or carrying a value the bridge did not sign changes nothing and tells the clicker; a
 * replayed command is answered but not acted on twice; answers never go to a response_url outside
 * Slack's hooks host (or the local Slack server).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack';
import type { PostedMessage } from '../../local/slack/server';
import { commandForm, deliverSigned, LOCAL_SLACK_APP_ID, LOCAL_SLACK_TEAM_ID } from '../../local/slack-app-delivery';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { HTTP_PATHS } from '../../shared/contracts';
import { ACTION_IDS } from '../../shared/buttons/ids';
import { eventIdOf, simulatorOf, slackOf, startTestStack, waitUntil } from './helpers';

const HOME = 'C0TRUST';
const someone = { id: 'U0SOMEONE', name: 'someone' };
let stack: LocalStack;
let store: DynamoSubscriptionStore;
/** A listener on another origin: where a forged response_url would send the bridge's answers. */
let evil: { server: Server; url: string; hits: string[] };

beforeAll(async () => {
  stack = await startTestStack();
  store = new DynamoSubscriptionStore(stack.dynamo.client, stack.dynamo.tableName);
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  evil = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
});
afterAll(async () => {
  await new Promise<void>((resolve) => evil.server.close(() => resolve()));
  await stack.close();
});

function project(index: number): { id: string; name: string } {
  const id = stack.projectIds[index]!;
  return simulatorOf(stack)
    .data.projects()
    .find((p) => p.id === id)!;
}

async function command(line: string, channel: string, extra: Partial<Parameters<ReturnType<typeof slackOf>['sendCommand']>[0]> = {}) {
  const answer = await slackOf(stack).sendCommand({ channel, line: `/visibility ${line}`, ...extra });
  await stack.waitForIdle();
  return answer;
}

/** Subscribes `channel` to the project and returns the digest a run then posts there. */
async function digestIn(channel: string, projectIndex: number): Promise<PostedMessage> {
  const { id, name } = project(projectIndex);
  expect((await command(`subscribe ${name}`, channel)).status).toBe(200);
  const sent = simulatorOf(stack).triggerRun(id);
  await sent.delivered;
  await stack.waitForIdle();
  const digest = slackOf(stack)
    .messages(channel)
    .find((m) => m.thread_ts === undefined && eventIdOf(m) === sent.event.id);
  if (!digest) throw new Error(`no digest in ${channel}`);
  return digest;
}

async function settingsOf(channel: string, projectId: string) {
  return (await store.forProject(projectId)).find((s) => s.channel === channel);
}

const count = (metric: string) => stack.observability.countOf(`slack:${metric}`);

describe('only our workspace and our app', () => {
  it('refuses a command from another workspace with 403, changing nothing', async () => {
    const { id, name } = project(0);
    expect((await command(`subscribe ${name}`, HOME)).status).toBe(200);
    const before = await settingsOf(HOME, id);
    expect(before).toBeDefined();

    const foreign = await command(`mute ${name} 52w`, HOME, { user: someone, from: { teamId: 'T0OTHERTEAM' } });
    expect(foreign).toEqual({ status: 403, body: { ok: false, error: 'foreign_workspace' } });
    expect(await settingsOf(HOME, id)).toEqual(before);
    expect((await command(`unsubscribe ${name}`, HOME, { from: { teamId: 'T0OTHERTEAM' } })).status).toBe(403);
    expect(await settingsOf(HOME, id)).toEqual(before);
    expect(count('SlackRequestForeign')).toBeGreaterThanOrEqual(2);
  });

  it('refuses a command and a click for another app with 403', async () => {
    const { name } = project(0);
    expect(await command(`status ${name}`, HOME, { from: { appId: 'A0OTHERAPP' } })).toEqual({
      status: 403,
      body: { ok: false, error: 'foreign_app' },
    });
    const digest = await digestIn('C0TRUSTAPP', 1);
    const click = await slackOf(stack).clickButton({
      channel: 'C0TRUSTAPP',
      ts: digest.ts,
      actionId: ACTION_IDS.mute7d,
      from: { appId: 'A0OTHERAPP' },
    });
    expect(click.status).toBe(403);
    expect((await settingsOf('C0TRUSTAPP', project(1).id))?.mutedUntilMs).toBeUndefined();
  });

  it('refuses a click by a member of another workspace (a Slack Connect channel)', async () => {
    const digest = await digestIn('C0TRUSTCONNECT', 2);
    const click = await slackOf(stack).clickButton({
      channel: 'C0TRUSTCONNECT',
      ts: digest.ts,
      actionId: ACTION_IDS.mute7d,
      user: someone,
      from: { userTeamId: 'T0OTHERTEAM' },
    });
    expect(click.status).toBe(403);
    expect((await settingsOf('C0TRUSTCONNECT', project(2).id))?.mutedUntilMs).toBeUndefined();
  });

  it('serves another member of the local workspace', async () => {
    expect((await command('help', HOME, { user: someone })).status).toBe(200);
    expect(
      slackOf(stack)
        .ephemerals(HOME)
        .some((m) => m.userId === someone.id),
    ).toBe(true);
  });
});

describe('digest buttons only on the digest, in its channel', () => {
  it('refuses a forwarded button (clicked in another channel): nothing changes anywhere, the clicker is told', async () => {
    const digest = await digestIn('C0TRUSTFWD', 0);
    const refused = count('SlackActionRefused');
    const click = await slackOf(stack).clickButton({
      channel: 'C0TRUSTFWD',
      ts: digest.ts,
      actionId: ACTION_IDS.mute7d,
      user: someone,
      clickedIn: 'C0ELSEWHERE',
    });
    await stack.waitForIdle();
    expect(click.status).toBe(200);
    expect((await settingsOf('C0TRUSTFWD', project(0).id))?.mutedUntilMs).toBeUndefined();
    expect(await settingsOf('C0ELSEWHERE', project(0).id)).toBeUndefined();
    expect(
      slackOf(stack)
        .ephemerals('C0ELSEWHERE')
        .map((m) => m.text),
    ).toEqual([expect.stringContaining("can't be used here")]);
    expect(
      slackOf(stack)
        .messages('C0TRUSTFWD')
        .find((m) => m.ts === digest.ts)?.edited,
    ).toBe(false);
    expect(count('SlackActionRefused')).toBe(refused + 1);
  });

  it('refuses a click in a DM and a click whose payload names no channel', async () => {
    const digest = await digestIn('C0TRUSTDMBTN', 1);
    for (const clickedIn of ['D0TRUSTDM', null]) {
      const click = await slackOf(stack).clickButton({
        channel: 'C0TRUSTDMBTN',
        ts: digest.ts,
        // A new subscription starts in `changes` mode (subscriptionDefaultMode), so its digest offers "Full digests".
        actionId: ACTION_IDS.fullDigests,
        clickedIn,
      });
      expect(click.status).toBe(200);
    }
    await stack.waitForIdle();
    expect((await settingsOf('C0TRUSTDMBTN', project(1).id))?.mode).toBe('changes');
    expect(await settingsOf('D0TRUSTDM', project(1).id)).toBeUndefined();
    expect(
      slackOf(stack)
        .ephemerals('D0TRUSTDM')
        .map((m) => m.text),
    ).toEqual([expect.stringContaining("can't be used here")]);
  });

  it('refuses an unsigned or forged button value: nothing changes', async () => {
    const channel = 'C0TRUSTFORGE';
    const digest = await digestIn(channel, 2);
    const app = { url: stack.gateway.url + HTTP_PATHS.slackInteractions, secret: stack.slackSigningSecret };
    const values = [
      JSON.stringify({ p: project(2).id, n: 'x', c: channel }), // the old, unsigned format
      JSON.stringify({ k: 'digest', p: project(2).id, n: 'x', c: channel, s: 'AAAAAAAAAAAAAAAAAAAAAA' }), // a made-up signature
    ];
    for (const value of values) {
      const payload = {
        type: 'block_actions',
        user: { id: someone.id, username: someone.name, team_id: LOCAL_SLACK_TEAM_ID },
        team: { id: LOCAL_SLACK_TEAM_ID },
        api_app_id: LOCAL_SLACK_APP_ID,
        channel: { id: channel },
        response_url: `${new URL(slackOf(stack).apiUrl).origin}/response_url/${randomUUID()}`,
        message: { ts: digest.ts, blocks: digest.blocks },
        actions: [{ action_id: ACTION_IDS.mute7d, type: 'button', value }],
      };
      const form = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      expect((await deliverSigned(app.url, app.secret, form, Date.now())).status).toBe(200);
    }
    expect((await settingsOf(channel, project(2).id))?.mutedUntilMs).toBeUndefined();
    expect(stack.observability.countOf('slack:SlackActionRefused')).toBeGreaterThanOrEqual(2);
  });
});

describe('a DM', () => {
  it("answers a read only to its user and can't change a channel's subscriptions from there", async () => {
    const { id, name } = project(0);
    expect((await command(`subscribe ${name}`, HOME)).status).toBe(200);
    const before = await settingsOf(HOME, id);
    expect((await command(`status ${name}`, 'D0TRUSTDM2', { user: someone })).status).toBe(200);
    expect(slackOf(stack).messages('D0TRUSTDM2')).toEqual([]);
    await command(`mute ${name} 52w`, 'D0TRUSTDM2', { user: someone });
    expect(await settingsOf(HOME, id)).toEqual(before);
  });
});

describe('replays and response_url', () => {
  it('answers a replayed command "Already handled" and acts on it once', async () => {
    const { name } = project(1);
    const responseId = randomUUID();
    const form = commandForm({
      line: `/visibility subscribe ${name}`,
      slash: '/visibility',
      channel: 'C0TRUSTREPLAY',
      user: someone,
      teamId: LOCAL_SLACK_TEAM_ID,
      responseUrl: `${new URL(slackOf(stack).apiUrl).origin}/response_url/${responseId}`,
    });
    const url = stack.gateway.url + HTTP_PATHS.slackCommands;
    const now = Date.now();
    const first = await deliverSigned(url, stack.slackSigningSecret, form, now);
    const replayed = await deliverSigned(url, stack.slackSigningSecret, form, now);
    await stack.waitForIdle();
    expect(first.status).toBe(200);
    expect(replayed).toEqual({
      status: 200,
      body: { response_type: 'ephemeral', text: expect.stringContaining('Already handled') as string },
    });
    expect(slackOf(stack).responses.filter((r) => r.path.endsWith(responseId))).toHaveLength(1);
    expect(count('SlackRequestReplayed')).toBeGreaterThanOrEqual(1);
  });

  it('never posts a button note to a response_url outside Slack', async () => {
    const digest = await digestIn('C0TRUSTORIGIN', 2);
    const payload = {
      type: 'block_actions',
      user: { id: someone.id, team_id: LOCAL_SLACK_TEAM_ID },
      team: { id: LOCAL_SLACK_TEAM_ID },
      api_app_id: LOCAL_SLACK_APP_ID,
      channel: { id: 'C0TRUSTORIGIN' },
      response_url: `${evil.url}/steal-click`,
      message: { ts: digest.ts, blocks: digest.blocks },
      actions: [{ action_id: ACTION_IDS.mute7d, type: 'button', value: findValue(digest) }],
    };
    const click = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    expect(
      (await deliverSigned(stack.gateway.url + HTTP_PATHS.slackInteractions, stack.slackSigningSecret, click, Date.now())).status,
    ).toBe(200);
    expect(stack.observability.entries({ service: 'slack' }).some((e) => JSON.stringify(e).includes('is not allowed'))).toBe(true);
    expect(evil.hits).toEqual([]);
  });

  // Last: the refused answer is retried by the commands queue until its DLQ, so nothing waits for idle after it.
  it('never posts a deferred answer to a response_url outside Slack', async () => {
    const form = commandForm({
      line: `/visibility status ${project(2).name}`,
      slash: '/visibility',
      channel: 'C0TRUSTORIGIN',
      user: someone,
      teamId: LOCAL_SLACK_TEAM_ID,
      responseUrl: `${evil.url}/steal`,
    });
    expect((await deliverSigned(stack.gateway.url + HTTP_PATHS.slackCommands, stack.slackSigningSecret, form, Date.now())).status).toBe(
      200,
    );
    await waitUntil('the digest function tried to answer', () =>
      stack.observability.entries({ service: 'digest' }).some((e) => JSON.stringify(e).includes('status@C0TRUSTORIGIN')),
    );
    expect(evil.hits).toEqual([]);
  });
});

function findValue(message: PostedMessage): string | undefined {
  for (const block of (message.blocks ?? []) as { type?: string; elements?: { action_id?: string; value?: string }[] }[]) {
    const button = block.elements?.find((e) => e.action_id === ACTION_IDS.mute7d);
    if (button?.value !== undefined) return button.value;
  }
  return undefined;
}
