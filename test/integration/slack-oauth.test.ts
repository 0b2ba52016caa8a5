/**
 * "Add to Slack" (shared/adapters/slack-oauth.ts) and token rotation (shared/installations/token-lease.ts)
 * against their real peers: dynalite and the local Slack server's install page and oauth.v2.access,
 * whose codes and refresh tokens are single use as Slack's are.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { LocalSlackServer } from '../../local/slack/server';
import { AUTHORIZE_PATH } from '../../local/slack/oauth';
import { DynamoInstallationStore, DynamoRefreshLease } from '../../shared/adapters/dynamo-installation-store';
import { createSlackOAuth, type OAuthAnswer, type SlackOAuth } from '../../shared/adapters/slack-oauth';
import { createTokenRefresher } from '../../shared/adapters/slack-token-refresher';
import { NeedsOperatorFix } from '../../shared/errors';
import { freshBotToken, installationFor, type TokenLeaseDeps } from '../../shared/installations/token-lease';
import type { Log } from '../../shared/ports';
import { sleep } from '../../shared/util';

const TABLE = 'bridge-oauth';
const REDIRECT = 'https://bridge.example/slack/oauth_redirect';
const HOUR = 3600_000;
const quiet: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

let dynamo: LocalDynamo;
let slack: LocalSlackServer;
let store: DynamoInstallationStore;
let oauth: SlackOAuth;
let clockOffsetMs = 0;
const clock = { now: () => Date.now() + clockOffsetMs };

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  // Tokens live 3 h: fresh for the 2 h margin right after a refresh.
  slack = await LocalSlackServer.start({ oauth: { tokenLifetimeSeconds: 3 * 3600 } });
  store = new DynamoInstallationStore(dynamo.client, { tableName: TABLE });
  oauth = createSlackOAuth({
    clientId: slack.oauth.clientId,
    clientSecret: slack.oauth.clientSecret,
    stateSecret: 'a-state-secret-of-the-deploy-0123456789',
    redirectUri: REDIRECT,
    scopes: ['commands', 'chat:write'],
    slackApiUrl: slack.apiUrl,
    authorizationUrl: `http://${slack.host}:${slack.port}${AUTHORIZE_PATH}`,
    store,
    clock,
    log: quiet,
  });
}, 60_000);

afterAll(async () => {
  await slack.close();
  await dynamo.close();
});

beforeEach(() => {
  clockOffsetMs = 0;
});

/** The browser's walk: the bridge's install page, Slack's page, Allow; the redirect it lands on and its state cookie. */
async function authorize(extra = ''): Promise<{ redirectQuery: string; cookie: string }> {
  const page = await oauth.installPage({ rawQueryString: '', host: 'bridge.example', cookie: undefined });
  expect(page.statusCode).toBe(200);
  const cookie = stateCookie(page);
  const href = /<a href="([^"]+)"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
  if (!href) throw new Error(`no Add to Slack link on the install page: ${page.body}`);
  const slackPage = await (await fetch(`${href}${extra}`)).text();
  const allow = /id="allow" href="([^"]+)"/.exec(slackPage)?.[1]?.replace(/&amp;/g, '&');
  if (!allow) throw new Error(`no Allow link on Slack's page: ${slackPage}`);
  const allowed = await fetch(`http://${slack.host}:${slack.port}${allow}`, { redirect: 'manual' });
  const location = allowed.headers.get('location') ?? '';
  expect(location.startsWith(REDIRECT)).toBe(true);
  return { redirectQuery: new URL(location).search.slice(1), cookie };
}

function stateCookie(answer: OAuthAnswer): string {
  const cookie = answer.cookies[0]?.split(';')[0];
  if (!cookie) throw new Error('the install page set no state cookie');
  return cookie;
}

async function install(extra = ''): Promise<OAuthAnswer> {
  const { redirectQuery, cookie } = await authorize(extra);
  return oauth.redirect({ rawQueryString: redirectQuery, host: 'bridge.example', cookie });
}

function leaseDeps(overrides: Partial<TokenLeaseDeps> = {}): TokenLeaseDeps {
  return {
    store,
    lease: new DynamoRefreshLease(dynamo.client, { tableName: TABLE, leaseMs: 10_000 }),
    refresher: createTokenRefresher({
      clientId: slack.oauth.clientId,
      clientSecret: slack.oauth.clientSecret,
      slackApiUrl: slack.apiUrl,
      requestTimeoutMs: 5_000,
      clock,
    }),
    clock,
    sleep,
    log: quiet,
    options: { refreshMarginMs: 2 * HOUR, pollMs: 50, maxWaitMs: 30_000 },
    ...overrides,
  };
}

describe('Add to Slack', () => {
  it('stores the installation of the browser that started the install, with its rotating bot token', async () => {
    const answer = await install('&team=T0ALPHA&team_name=Alpha');
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('T0ALPHA');
    expect(answer.body).not.toMatch(/xox/);
    const { id, installation } = await installationFor({ teamId: 'T0ALPHA' }, store);
    expect(id).toBe('T0ALPHA');
    expect(installation).toMatchObject({ teamId: 'T0ALPHA', teamName: 'Alpha', isEnterpriseInstall: false, installedBy: 'U0INSTALLER' });
    expect(installation.scopes).toEqual(['commands', 'chat:write']);
    expect(installation.bot.token).toMatch(/^xoxe\.xoxb-/);
    expect(installation.bot.refreshToken).toMatch(/^xoxe-1-/);
    expect(installation.bot.expiresAtMs).toBeGreaterThan(Date.now() + 2 * HOUR);
  });

  it("refuses a redirect without the browser's state cookie, or with another browser's, and stores nothing", async () => {
    const mine = await authorize('&team=T0BRAVO');
    const theirs = await authorize('&team=T0OTHER');
    const noCookie = await oauth.redirect({ rawQueryString: mine.redirectQuery, host: 'bridge.example', cookie: undefined });
    const wrongCookie = await oauth.redirect({ rawQueryString: mine.redirectQuery, host: 'bridge.example', cookie: theirs.cookie });
    expect(noCookie.statusCode).toBe(400);
    expect(wrongCookie.statusCode).toBe(400);
    await expect(installationFor({ teamId: 'T0BRAVO' }, store)).rejects.toBeInstanceOf(NeedsOperatorFix);
  });

  it("stores an Enterprise Grid org-wide install under the org, which serves the org's workspaces", async () => {
    const answer = await install('&org=1&enterprise=E0GRID');
    expect(answer.statusCode).toBe(200);
    const found = await installationFor({ teamId: 'T0INORG', enterpriseId: 'E0GRID' }, store);
    expect(found.id).toBe('E0GRID');
    expect(found.installation).toMatchObject({ enterpriseId: 'E0GRID', isEnterpriseInstall: true, teamId: undefined });
  });
});

describe('token rotation under the per-installation lease', () => {
  it('20 concurrent refreshers spend the refresh token once: one new token for all, no invalid_grant', async () => {
    await install('&team=T0ROTATE');
    const before = (await installationFor({ teamId: 'T0ROTATE' }, store)).installation.bot;
    const refreshesBefore = slack.oauth.refreshes().length;
    clockOffsetMs = 1.5 * HOUR; // 1.5 h left: inside the 2 h margin, so every caller wants a refresh.
    const tokens = await Promise.all(Array.from({ length: 20 }, () => freshBotToken({ teamId: 'T0ROTATE' }, leaseDeps())));
    const refreshes = slack.oauth.refreshes().slice(refreshesBefore);
    expect(refreshes.filter((r) => r.error === 'invalid_grant')).toEqual([]);
    expect(refreshes).toHaveLength(1);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(before.token);
    const after = (await installationFor({ teamId: 'T0ROTATE' }, store)).installation.bot;
    expect(after.token).toBe(tokens[0]);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect((await new WebClient(after.token, { slackApiUrl: slack.apiUrl }).auth.test()).ok).toBe(true);
  }, 120_000);

  it("without the lease the same race loses: Slack's refresh token is single use (what the lease prevents)", async () => {
    await install('&team=T0RACE');
    const { refreshToken } = (await installationFor({ teamId: 'T0RACE' }, store)).installation.bot;
    if (refreshToken === undefined) throw new Error('no refresh token');
    const refresher = leaseDeps().refresher;
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => refresher.refresh(refreshToken)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refused).toHaveLength(19);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(NeedsOperatorFix);
      const message = (r.reason as Error).message;
      expect(message).toContain('invalid_grant');
      expect(message).not.toContain(refreshToken);
    }
  }, 60_000);

  it('hands out the stored token without calling Slack while it has more than the margin left', async () => {
    await install('&team=T0FRESH');
    const refreshesBefore = slack.oauth.refreshes().length;
    const token = await freshBotToken({ teamId: 'T0FRESH' }, leaseDeps());
    expect(token).toBe((await installationFor({ teamId: 'T0FRESH' }, store)).installation.bot.token);
    expect(slack.oauth.refreshes().length).toBe(refreshesBefore);
  });
});
