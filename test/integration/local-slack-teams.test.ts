/**
 * The local Slack server as several workspaces of one Slack (`oauth.workspaces`, what
 * `npm start -- --connections N` gives it): its install page offers each workspace, an install hands
 * out a token the Web API then accepts, and a message posted with it is that workspace's (`team`), as
 * Slack's `conversations.history` says; the stack's own token still posts as the server's workspace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { LocalSlackServer } from '../../local/slack/server';
import { AUTHORIZE_PATH } from '../../local/slack/oauth';

const STACK_TOKEN = 'xoxb-stack-token';
const REDIRECT = 'https://bridge.example/slack/oauth_redirect';
let slack: LocalSlackServer;

beforeAll(async () => {
  slack = await LocalSlackServer.start({ tokens: [STACK_TOKEN], oauth: { workspaces: [{ teamId: 'T0CLIENTB', name: 'Client B' }] } });
});

afterAll(() => slack.close());

const origin = () => `http://${slack.host}:${slack.port}`;

/** The install page without a team, the Allow link of `linkId`, and the code Slack's redirect carries. */
async function codeFrom(linkId: string): Promise<string> {
  const query = new URLSearchParams({ client_id: slack.oauth.clientId, scope: 'chat:write', redirect_uri: REDIRECT, state: 's' });
  const page = await (await fetch(`${origin()}${AUTHORIZE_PATH}?${query.toString()}`)).text();
  const allow = new RegExp(`id="${linkId}" href="([^"]+)"`).exec(page)?.[1]?.replace(/&amp;/g, '&');
  if (allow === undefined) throw new Error(`no ${linkId} on the install page: ${page}`);
  const location = (await fetch(`${origin()}${allow}`, { redirect: 'manual' })).headers.get('location') ?? '';
  return new URL(location).searchParams.get('code') ?? '';
}

async function install(linkId: string): Promise<{ token: string; team: string | undefined }> {
  const answer = await new WebClient(undefined, { slackApiUrl: slack.apiUrl }).oauth.v2.access({
    client_id: slack.oauth.clientId,
    client_secret: slack.oauth.clientSecret,
    code: await codeFrom(linkId),
    redirect_uri: REDIRECT,
  });
  return { token: answer.access_token ?? '', team: answer.team?.id };
}

async function postedTeam(token: string, channel: string): Promise<string | undefined> {
  const web = new WebClient(token, { slackApiUrl: slack.apiUrl });
  const { ts } = await web.chat.postMessage({ channel, text: 'hello' });
  const history = await web.conversations.history({ channel });
  return history.messages?.find((m) => m.ts === ts)?.team;
}

describe('the local Slack as several workspaces', () => {
  it('offers each further workspace on its install page, and an install there is that team', async () => {
    const installed = await install('allow-T0CLIENTB');
    expect(installed.team).toBe('T0CLIENTB');
    expect(slack.oauth.installedTeams()).toEqual(['T0CLIENTB']);
    expect(slack.oauth.workspaces().map((w) => w.teamId)).toEqual([slack.teamId, 'T0CLIENTB']);
  });

  it("accepts an installed team's token, and what it posts is that team's; the stack's token posts as the server's own", async () => {
    const { token } = await install('allow-T0CLIENTB');
    expect(await postedTeam(token, 'C0CLIENTB')).toBe('T0CLIENTB');
    expect(await postedTeam(STACK_TOKEN, 'C0LOCAL')).toBe(slack.teamId);
    await expect(postedTeam('xoxb-nobody', 'C0CLIENTB')).rejects.toThrow(/invalid_auth/);
  });
});
