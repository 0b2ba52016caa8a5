/**
 * The "Add to Slack" function (functions/slack-oauth) as API Gateway invokes it (payload 2.0: the
 * browser's cookies arrive in `cookies`, the answer's go out in `cookies`), against dynalite and the
 * local Slack server's install page and oauth.v2.access.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { LocalSlackServer } from '../../local/slack/server';
import { AUTHORIZE_PATH } from '../../local/slack/oauth';
import { createSlackOAuthHandler, type SlackOAuthHandler } from '../../functions/slack-oauth/create-handler';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { ENV, HTTP_PATHS } from '../../shared/contracts';
import { httpApiEvent } from '../support/deliveries';
import { RecordingObserver } from '../support/recording-observer';

const TABLE = 'bridge-oauth-handler';
const REDIRECT = `https://bridge.example${HTTP_PATHS.slackOAuthRedirect}`;
let dynamo: LocalDynamo;
let slack: LocalSlackServer;
let handler: SlackOAuthHandler;
const observer = new RecordingObserver();

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, TABLE);
  slack = await LocalSlackServer.start();
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
  handler = createSlackOAuthHandler(
    {
      [ENV.tableName]: TABLE,
      [ENV.slackClientId]: slack.oauth.clientId,
      [ENV.slackClientSecret]: slack.oauth.clientSecret,
      [ENV.slackOAuthRedirectUrl]: REDIRECT,
      [ENV.slackAuthorizeUrl]: `http://${slack.host}:${slack.port}${AUTHORIZE_PATH}`,
      [ENV.slackApiUrl]: slack.apiUrl,
      [ENV.slackPostRecovery]: 'ledger',
      [ENV.awsRegion]: 'us-east-1',
      [ENV.awsEndpointDynamodb]: dynamo.endpoint,
    },
    {
      observability: { log: observer, metrics: observer, flush: () => undefined, appendKeys: () => undefined, resetKeys: () => undefined },
    },
  );
}, 60_000);

afterAll(async () => {
  await slack.close();
  await dynamo.close();
});

function get(path: string, rawQueryString = '', cookies?: string[]): APIGatewayProxyEventV2 {
  const event = httpApiEvent({ method: 'GET', rawPath: path, headers: { host: 'bridge.example' }, body: '' });
  return { ...event, rawQueryString, ...(cookies ? { cookies } : {}) };
}

async function call(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  return handler(event);
}

describe('Add to Slack function', () => {
  it('installs the app for the browser that opened the install page, asking for no history scope', async () => {
    const page = await call(get(HTTP_PATHS.slackInstall));
    expect(page.statusCode).toBe(200);
    const cookie = page.cookies?.[0]?.split(';')[0];
    expect(page.cookies?.[0]).toMatch(/HttpOnly/);
    const authorize = new URL(/<a href="([^"]+)"/.exec(String(page.body))?.[1]?.replace(/&amp;/g, '&') ?? '');
    expect(authorize.searchParams.get('scope')?.split(',')).toContain('metadata.message:read');
    expect(authorize.searchParams.get('scope')).not.toMatch(/history/);
    const slackPage = await (await fetch(`${authorize.toString()}&team=T0HANDLER`)).text();
    const allow = /id="allow" href="([^"]+)"/.exec(slackPage)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const back = new URL((await fetch(`http://${slack.host}:${slack.port}${allow}`, { redirect: 'manual' })).headers.get('location') ?? '');

    const stolen = await call(get(HTTP_PATHS.slackOAuthRedirect, back.search.slice(1)));
    expect(stolen.statusCode).toBe(400);

    const done = await call(get(HTTP_PATHS.slackOAuthRedirect, back.search.slice(1), ['theme=dark', String(cookie)]));
    expect(done.statusCode).toBe(200);
    const installation = await new DynamoInstallationStore(dynamo.client, { tableName: TABLE }).get('T0HANDLER');
    expect(installation?.teamId).toBe('T0HANDLER');
    // The tokens are never logged.
    expect(JSON.stringify(observer.entries)).not.toMatch(/xox/);
    expect(observer.entries.some((e) => e.message === 'Slack app installed')).toBe(true);
  }, 60_000);

  it('answers 404 off its paths and 405 to anything but GET', async () => {
    expect((await call(get('/slack/elsewhere'))).statusCode).toBe(404);
    expect(
      (
        await call({
          ...get(HTTP_PATHS.slackInstall),
          requestContext: {
            ...get(HTTP_PATHS.slackInstall).requestContext,
            http: { ...get(HTTP_PATHS.slackInstall).requestContext.http, method: 'POST' },
          },
        })
      ).statusCode,
    ).toBe(405);
  });
});
