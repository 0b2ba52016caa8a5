/**
 * `npm start -- --connections N`: N clients of an agency on one machine. Each is a service workspace
 * (its own simulator: own projects, read key, signing secret and webhook to `/webhook/<id>`) and a Slack
 * workspace of the local Slack (team `T0CLIENTA`…, its channel `#client-a-digests`). Each connection is
 * made as `bridge connections add` makes it (its secret in the local Secrets Manager, its `conn#` item),
 * linked to its team, and the app is installed in that team through the bridge's real "Add to Slack"
 * flow (`/slack/install` → the local Slack's install page → `/slack/oauth_redirect` → `oauth.v2.access`),
 * so every team has its own bot token.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoConnectionStore } from '../../shared/adapters/dynamo-connection-store';
import { connectionWebhookUrl, formatConnectionSecret, type Connection } from '../../shared/connections/model';
import { connectionSecretPrefix, ENV, HTTP_PATHS, SERVICES } from '../../shared/contracts';
import { createSlackOAuthHandler } from '../../functions/slack-oauth/create-handler';
import { readSlackOAuthConfig } from '../../functions/slack-oauth/runtime';
import type { GatewayRoute } from '../http-gateway';
import { workspacesRoute } from '../preview/workspaces';
import type { LocalObservabilityHub } from '../local-observability';
import type { LocalSecrets } from '../local-secrets';
import type { ReadyConnection } from '../ready-info';
import { AUTHORIZE_PATH } from '../slack/oauth';
import type { LocalSlackServer } from '../slack/server';
import type { VisibilitySimulator } from '../simulator/server';
import { LOCAL_DEFAULTS, LOCAL_STAGE, LocalStackError, generateSecret, type LocalConnection } from './types';

/** One client as planned before anything starts: names, team and channel follow from its letter. */
export interface ConnectionPlan {
  id: string;
  teamId: string;
  teamName: string;
  channel: string;
  channelName: string;
  /** Seed of its simulator's generated data: each client has projects of its own. */
  seed: number;
}

/** One letter per client, so ids, teams and channels stay readable. */
export const MAX_CONNECTIONS = 26;

export function planConnections(count: number): ConnectionPlan[] {
  if (!Number.isInteger(count) || count < 0 || count > MAX_CONNECTIONS)
    throw new LocalStackError(`--connections must be a whole number from 0 to ${MAX_CONNECTIONS}, got ${count}`);
  return Array.from({ length: count }, (_, i) => {
    const letter = String.fromCharCode(97 + i);
    const upper = letter.toUpperCase();
    return {
      id: `client-${letter}`,
      teamId: `T0CLIENT${upper}`,
      teamName: `Client ${upper}`,
      channel: `C0CLIENT${upper}`,
      channelName: `client-${letter}-digests`,
      seed: 101 + i,
    };
  });
}

/** The local Slack's further workspaces and channels for the plans (its own workspace keeps the stack's channels). */
export function slackWorkspacesOf(plans: readonly ConnectionPlan[]): {
  workspaces: { teamId: string; name: string }[];
  channelNames: Record<string, string>;
} {
  return {
    workspaces: plans.map((p) => ({ teamId: p.teamId, name: p.teamName })),
    channelNames: Object.fromEntries(plans.map((p) => [p.channel, p.channelName])),
  };
}

/**
 * What clients add to the local API: the "Add to Slack" function's two GET routes, as a stage with
 * `slackClientId` deploys them, and the preview's workspaces page. The function is built on first use,
 * from the environment `listening` sets (its redirect URL names the gateway's port, known once it listens).
 */
export function clientRoutes(
  plans: readonly ConnectionPlan[],
  slack: LocalSlackServer | undefined,
  observability: LocalObservabilityHub,
): { routes: GatewayRoute[]; listening(base: Record<string, string>, gatewayUrl: string): void } {
  if (plans.length === 0 || !slack) return { routes: [], listening: () => undefined };
  let env: Record<string, string> = {};
  const createHandler = () => createSlackOAuthHandler(env, { observability: observability.forService(SERVICES.slackOAuth) });
  const workspaces = workspacesRoute({
    workspaces: () => slack.oauth.workspaces(),
    installedTeams: () => slack.oauth.installedTeams(),
    connections: plans.map((p) => ({ id: p.id, slackTeamId: p.teamId, channelName: p.channelName })),
  });
  return {
    routes: [
      ...[HTTP_PATHS.slackInstall, HTTP_PATHS.slackOAuthRedirect].map((path) => ({ method: 'GET', path, createHandler })),
      workspaces,
    ],
    listening: (base, gatewayUrl) => {
      env = installEnv(base, gatewayUrl, slack);
    },
  };
}

/** The "Add to Slack" function's environment against the local Slack, checked as at its cold start. */
function installEnv(base: Record<string, string>, gatewayUrl: string, slack: LocalSlackServer): Record<string, string> {
  const env = {
    ...base,
    [ENV.slackClientId]: slack.oauth.clientId,
    [ENV.slackClientSecret]: slack.oauth.clientSecret,
    [ENV.slackOAuthRedirectUrl]: `${gatewayUrl}${HTTP_PATHS.slackOAuthRedirect}`,
    [ENV.slackAuthorizeUrl]: `http://${slack.host}:${slack.port}${AUTHORIZE_PATH}`,
    [ENV.powertoolsServiceName]: SERVICES.slackOAuth,
  };
  readSlackOAuthConfig(env); // its ConfigError is said by toStackError (./problems)
  return env;
}

export interface ConnectionPeers {
  plans: readonly ConnectionPlan[];
  startSimulator: (plan: ConnectionPlan, apiKey: string) => Promise<VisibilitySimulator>;
  localSecrets: LocalSecrets | undefined;
  dynamo: DynamoDBClient;
  slack: LocalSlackServer;
  gatewayUrl: string;
  webhookUrl: string;
  now: () => number;
}

/** Starts each client's simulator, adds its connection, registers its webhook and installs the app in its team. */
export async function startConnections(peers: ConnectionPeers): Promise<LocalConnection[]> {
  if (peers.plans.length === 0) return [];
  if (!peers.localSecrets)
    throw new LocalStackError('--connections needs the local Secrets Manager (a connection keeps its secrets there)');
  const { localSecrets } = peers;
  const store = new DynamoConnectionStore(peers.dynamo, LOCAL_DEFAULTS.tableName);
  const connections: LocalConnection[] = [];
  for (const plan of peers.plans) {
    const apiKey = `sim_${plan.id.replace(/-/g, '_')}_${randomBytes(6).toString('hex')}`;
    const simulator = await peers.startSimulator(plan, apiKey);
    const secret = generateSecret();
    const secretName = `${connectionSecretPrefix(LOCAL_STAGE)}${plan.id}`;
    localSecrets.server.createSecret(secretName, formatConnectionSecret({ readApiKey: apiKey, signingSecrets: [secret] }));
    const connection: Connection = {
      id: plan.id,
      baseUrl: simulator.url,
      secretName,
      routes: { defaultChannel: plan.channel, byProject: {} },
      slackTeamIds: [plan.teamId],
      status: 'active',
      createdAtMs: peers.now(),
    };
    // Kept from an earlier start (a data dir): its simulator listens elsewhere now, so its fields are written again.
    if ((await store.add(connection)) === 'exists') await store.put(connection);
    const webhookUrl = connectionWebhookUrl(peers.webhookUrl, plan.id);
    simulator.webhooks.addWebhookWithSecret({ url: webhookUrl, secret });
    await installApp(peers.gatewayUrl, peers.slack, plan);
    connections.push({
      id: plan.id,
      webhookUrl,
      secrets: [secret],
      simulatorUrl: simulator.url,
      apiKey,
      projectIds: simulator.projectIds(),
      slackTeamId: plan.teamId,
      slackTeamName: plan.teamName,
      slackChannel: plan.channel,
      simulator,
    });
  }
  return connections;
}

/** A client as the ready file lists it. */
export function readyConnection(c: LocalConnection): ReadyConnection {
  const { simulator, ...ready } = c;
  return { ...ready, secrets: [...ready.secrets], projectIds: [...ready.projectIds], simulatorUrl: simulator.url };
}

/**
 * A browser's walk through "Add to Slack" for the plan's team: the bridge's install page (its state
 * cookie), the local Slack's install page for that team, Allow, and the bridge's redirect with the code.
 */
async function installApp(gatewayUrl: string, slack: LocalSlackServer, plan: ConnectionPlan): Promise<void> {
  const fail = (step: string): never => {
    throw new LocalStackError(`could not install the Slack app in ${plan.teamName} (${plan.teamId}): ${step}`);
  };
  const page = await fetch(`${gatewayUrl}${HTTP_PATHS.slackInstall}`);
  const cookie = page.headers.getSetCookie()[0]?.split(';')[0];
  const href = /<a href="([^"]+)"/.exec(await page.text())?.[1]?.replace(/&amp;/g, '&');
  if (page.status !== 200 || cookie === undefined || href === undefined) return fail(`the install page answered ${page.status}`);
  const authorize = new URL(href);
  authorize.searchParams.set('team', plan.teamId);
  authorize.searchParams.set('team_name', plan.teamName);
  const slackPage = await (await fetch(authorize)).text();
  const allow = /id="allow" href="([^"]+)"/.exec(slackPage)?.[1]?.replace(/&amp;/g, '&');
  if (allow === undefined) return fail("the local Slack's install page has no Allow link");
  const allowed = await fetch(new URL(allow, authorize), { redirect: 'manual' });
  const location = allowed.headers.get('location');
  if (location === null) return fail(`Allow answered ${allowed.status} without a redirect`);
  const done = await fetch(location, { headers: { cookie } });
  await done.text();
  if (done.status !== 200 || !slack.oauth.installedTeams().includes(plan.teamId))
    return fail(`the bridge's redirect answered ${done.status}`);
}
