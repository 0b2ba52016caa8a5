/**
 * Two clients of an agency on one deployed bridge (issue 31; docs/AGENCIES.md), as the operator and the
 * clients' admins meet it, through the deployed surface only: the operator adds both connections with
 * `npx bridge connections add … --slack-team`; each client's Slack team installs the app through the
 * stack's "Add to Slack" routes (token rotation on); both clients' runs arrive at once, each on its own
 * `/webhook/<id>`; team A's answers see only A's projects; A's token is refreshed once when it nears
 * its expiry; team B's uninstall purges B and B's next run posts nothing, while A keeps posting.
 */
import { paginateScan, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { DIGEST_METRICS, TABLE } from '../../shared/contracts';
import { connectionWebhookUrl } from '../../shared/connections/model';
import type { BotToken } from '../../shared/installations/model';
import type { RecordedCall } from '../slack/server';
import { VisibilitySimulator } from '../simulator/server';
import { egressFetch } from './rehearsed-stack';
import { windowAround } from './report-scenarios';
import { answerOf, whyFailed, type ScenarioContext } from './scenario-context';
import { eventCallback } from './slack-events';
import { channelSubscribed, recordedResponseUrl, slashCommandForm } from './slack-requests';

/** One client: its service workspace (a simulator of its own), its connection, its Slack team. */
interface Client {
  id: string;
  teamId: string;
  teamName: string;
  channel: string;
  simulator: VisibilitySimulator;
  apiKey: string;
  secret: string;
  webhookUrl: string;
  projectIds: string[];
}

const PLANS = [
  { id: 'tenant-a', teamId: 'T0TENANTA', teamName: 'Client A', channel: 'C0TENANTA', seed: 301 },
  { id: 'tenant-b', teamId: 'T0TENANTB', teamName: 'Client B', channel: 'C0TENANTB', seed: 302 },
] as const;
/** Where B's admin subscribes and sets quiet hours: what B's uninstall must purge. */
const B_CHANNEL = 'C0TENANTBSUB';
const OPS_LINE = 'Slack app removed from a workspace';

export async function tenantsScenario(context: ScenarioContext): Promise<void> {
  const clients = await Promise.all(PLANS.map((plan) => startClient(context, plan)));
  try {
    const [a, b] = clients as [Client, Client];
    await addConnections(context, clients);
    await installApps(context, clients);
    await setUpChannel(context, b);
    await runsAtOnce(context, a, b);
    await scopedAnswers(context, a, b);
    await tokenRefresh(context, a);
    await uninstall(context, a, b);
  } finally {
    await Promise.all(clients.map((client) => client.simulator.close()));
  }
}

async function startClient(context: ScenarioContext, plan: (typeof PLANS)[number]): Promise<Client> {
  const apiKey = `sim_${plan.id.replace(/-/g, '_')}`;
  const simulator = await VisibilitySimulator.start({
    apiKey,
    seed: plan.seed,
    webhooks: { fetch: egressFetch(context.stack.egress), retryScale: 0.001 },
  });
  const webhookUrl = connectionWebhookUrl(context.outputs['WebhookUrl']!, plan.id);
  // The client's admin creates the webhook in the service; its secret is shown once, then sent to the operator.
  const { secret } = simulator.webhooks.addWebhookWithSecret({ url: webhookUrl });
  return { ...plan, simulator, apiKey, secret, webhookUrl, projectIds: simulator.projectIds() };
}

async function addConnections(context: ScenarioContext, clients: readonly Client[]): Promise<void> {
  const results = [];
  for (const client of clients) {
    const args = ['connections', 'add', client.id, '--stack', context.stack.stackName, '--base-url', client.simulator.url];
    const result = await context.bridge(
      [...args, '--channel', client.channel, '--slack-team', client.teamId],
      `${client.apiKey}\n${client.secret}\n`,
    );
    results.push({ client, result });
  }
  context.record(
    'tenants: the operator adds both clients with `npx bridge connections add <id> … --slack-team T…` (key and secret on stdin)',
    results.every(({ result, client }) => result.code === 0 && result.stdout.includes(client.webhookUrl)),
    results.map(({ client, result }) => `${client.id}: ${result.code === 0 ? 'added' : whyFailed(result)}`).join('; '),
  );
}

/** Each team's admin walks "Add to Slack"; each installation then holds its own rotating bot token. */
async function installApps(context: ScenarioContext, clients: readonly Client[]): Promise<void> {
  const problems: string[] = [];
  for (const client of clients) {
    const problem = await addToSlack(context, client);
    if (problem !== undefined) problems.push(`${client.teamId}: ${problem}`);
  }
  const bots = await Promise.all(clients.map((client) => installedBot(context, client.teamId)));
  const rotating = bots.every((bot) => bot?.refreshToken !== undefined && bot.expiresAtMs !== undefined);
  context.record(
    `tenants: the app is installed in ${clients.map((c) => c.teamId).join(' and ')} through GET /slack/install → Slack's Allow → GET /slack/oauth_redirect, each with its own rotating bot token`,
    problems.length === 0 && rotating && new Set(bots.map((bot) => bot?.token)).size === clients.length,
    problems.length > 0
      ? problems.join('; ')
      : bots
          .map((bot, i) => `${clients[i]!.teamId}: ${bot ? `token with refresh, expires in ${expiresIn(bot)}` : 'no inst# item'}`)
          .join('; '),
  );
  if (problems.length > 0 || bots.some((bot) => bot === undefined)) throw new Error('the app could not be installed in both teams');
}

/** A browser's walk: the install page (its state cookie), Slack's page for the team, Allow, the redirect with the code. */
async function addToSlack(context: ScenarioContext, client: Client): Promise<string | undefined> {
  const page = await context.fetch(context.outputs['SlackInstallUrl']!);
  const cookie = page.headers.getSetCookie()[0]?.split(';')[0];
  const href = /<a href="([^"]+)"/.exec(await page.text())?.[1]?.replace(/&amp;/g, '&');
  if (page.status !== 200 || cookie === undefined || href === undefined) return `the install page answered ${page.status}`;
  const authorize = new URL(href);
  authorize.searchParams.set('team', client.teamId);
  authorize.searchParams.set('team_name', client.teamName);
  const allow = /id="allow" href="([^"]+)"/.exec(await (await context.fetch(authorize)).text())?.[1]?.replace(/&amp;/g, '&');
  if (allow === undefined) return "Slack's install page has no Allow link";
  const allowed = await context.fetch(new URL(allow, authorize), { redirect: 'manual' });
  const location = allowed.headers.get('location');
  if (location === null) return `Allow answered ${allowed.status} without a redirect`;
  const done = await context.fetch(location, { headers: { cookie } });
  const text = await done.text();
  return done.status === 200 ? undefined : `the bridge's redirect answered ${done.status} ${text.slice(0, 120)}`;
}

/** The installation's bot token as stored (`inst#<team>`), or undefined when there is none. */
async function installedBot(context: ScenarioContext, teamId: string): Promise<BotToken | undefined> {
  const store = new DynamoInstallationStore(context.stack.peers.dynamo.client, { tableName: context.outputs['TableName']! });
  return (await store.get(teamId))?.bot;
}

function expiresIn(bot: BotToken): string {
  return bot.expiresAtMs === undefined ? 'never' : `${Math.round((bot.expiresAtMs - Date.now()) / 3600_000)} h`;
}

/** Team B's admin subscribes a channel of B's to B's project and sets quiet hours there (now): B's digest is held in it. */
async function setUpChannel(context: ScenarioContext, b: Client): Promise<void> {
  const url = context.outputs['SlackCommandsUrl']!;
  const responses = recordedResponseUrl('tenant-b');
  const command = (text: string) => slashCommandForm(context, text, responses.url, { teamId: b.teamId, channel: B_CHANNEL });
  const subscribe = await context.slackRequest(url, command(`subscribe ${b.projectIds[0]!}`));
  if (subscribe.status !== 200) throw new Error(`team B's /visibility subscribe was not accepted: ${answerOf(subscribe)}`);
  await context.waitFor(`${B_CHANNEL} subscribed in tenant ${b.id}`, async () =>
    (await channelSubscribed(context, B_CHANNEL, b.id)) ? true : undefined,
  );
  const quiet = await context.slackRequest(url, command(`quiet ${windowAround(Date.now())} UTC`));
  context.record(
    `tenants: team B's admin subscribes ${B_CHANNEL} to B's project and sets its quiet hours`,
    quiet.status === 200,
    answerOf(quiet),
  );
}

/** Top-level posts that succeeded since `from` (epoch ms). */
function postsSince(context: ScenarioContext, from: number): RecordedCall[] {
  return context.stack.peers.slack.calls('chat.postMessage').filter((call) => call.at >= from && call.ok && call.thread_ts === undefined);
}

function describePosts(posts: readonly RecordedCall[], tokens: Record<string, string>): string {
  if (posts.length === 0) return 'no post';
  const whose = (token: string | undefined) => Object.entries(tokens).find(([, t]) => t === token)?.[0] ?? 'another token';
  return posts.map((post) => `${post.channel ?? '?'} with ${whose(post.token)}`).join(', ');
}

async function deliverRun(context: ScenarioContext, client: Client): Promise<{ status: number; text: string }> {
  return context.deliver(context.runCompletedBody({}, client.projectIds[0]), { url: client.webhookUrl, secret: client.secret });
}

async function waitForPost(context: ScenarioContext, from: number, channel: string): Promise<void> {
  await context.waitFor(
    `a digest in ${channel}`,
    () => (postsSince(context, from).some((post) => post.channel === channel) ? true : undefined),
    90_000,
  );
}

async function runsAtOnce(context: ScenarioContext, a: Client, b: Client): Promise<void> {
  const tokens = { [a.teamId]: (await installedBot(context, a.teamId))!.token, [b.teamId]: (await installedBot(context, b.teamId))!.token };
  const from = Date.now();
  const [toA, toB] = await Promise.all([deliverRun(context, a), deliverRun(context, b)]);
  context.record(
    `tenants: both clients' runs, delivered at once to ${a.webhookUrl.replace(/^.*\/webhook/, '/webhook')} and …/${b.id} each signed with its own secret, are accepted`,
    toA.status === 200 && toB.status === 200,
    `${answerOf(toA)}; ${answerOf(toB)}`,
  );
  await Promise.all([waitForPost(context, from, a.channel), waitForPost(context, from, b.channel)]);
  await context.stack.settle(20_000);
  const posts = postsSince(context, from);
  const own = (client: Client) => posts.filter((post) => post.channel === client.channel && post.token === tokens[client.teamId]);
  context.record(
    `tenants: each digest lands only in its own team's channel (${a.channel}, ${b.channel}), posted with that team's bot token`,
    posts.length === 2 && own(a).length === 1 && own(b).length === 1,
    describePosts(posts, tokens),
  );
  const held = await tableKeys(context, (key) => key.includes(`held#${B_CHANNEL}`));
  context.record(
    `tenants: B's digest is held in ${B_CHANNEL} (its quiet hours), nothing posted there`,
    held.length > 0,
    held.join(', ') || 'nothing held',
  );
}

/** Team A's `projects` and `status <B's project>`: A's projects only, B's answered as one that does not exist. */
async function scopedAnswers(context: ScenarioContext, a: Client, b: Client): Promise<void> {
  // By id: the two simulators' generated projects share their names.
  const projects = await answerInTeam(context, a, 'projects');
  const namedA = a.projectIds.filter((id) => projects.includes(id));
  const namedB = b.projectIds.filter((id) => projects.includes(id));
  context.record(
    "tenants: /visibility projects in team A names A's projects and none of B's",
    namedA.length === a.projectIds.length && namedB.length === 0 && projects.includes(`can see (${a.projectIds.length})`),
    `A's named: ${namedA.length} of ${a.projectIds.length}; B's named: ${namedB.join(', ') || 'none'}`,
  );
  const status = await answerInTeam(context, a, `status ${b.projectIds[0]!}`);
  context.record(
    `tenants: /visibility status <B's project> in team A answers "No project matches"`,
    status.includes('No project matches'),
    status.slice(0, 160),
  );
}

/** A deferred command from the client's team, and what the bridge answered at its response_url. */
async function answerInTeam(context: ScenarioContext, client: Client, text: string): Promise<string> {
  const responses = recordedResponseUrl(client.id);
  const form = slashCommandForm(context, text, responses.url, { teamId: client.teamId, channel: client.channel });
  const answer = await context.slackRequest(context.outputs['SlackCommandsUrl']!, form);
  if (answer.status !== 200) throw new Error(`/visibility ${text} from ${client.teamId} was not accepted: ${answerOf(answer)}`);
  await context.waitFor(`the answer to /visibility ${text} in ${client.teamId}`, () => (responses.answers(context) > 0 ? true : undefined));
  const path = new URL(responses.url).pathname;
  return context.stack.peers.slack.responses
    .filter((response) => response.path === path)
    .map((response) => response.body)
    .join('\n');
}

/** A's token is 11 h old (1 h left, inside the 2 h margin): its next digest refreshes it once, then posts with the new one. */
async function tokenRefresh(context: ScenarioContext, a: Client): Promise<void> {
  const before = (await installedBot(context, a.teamId))!;
  await context.stack.peers.dynamo.client.send(
    new UpdateItemCommand({
      TableName: context.outputs['TableName']!,
      Key: { [TABLE.partitionKey]: { S: `${TABLE.prefixes.installation}${a.teamId}` } },
      UpdateExpression: 'SET bot_expires_at_ms = :soon',
      ExpressionAttributeValues: { ':soon': { N: String(Date.now() + 3600_000) } },
    }),
  );
  const oauth = context.stack.peers.slack.oauth;
  const refreshedBefore = oauth.refreshes().length;
  const from = Date.now();
  const delivered = await deliverRun(context, a);
  if (delivered.status !== 200) throw new Error(`A's run was not accepted: ${answerOf(delivered)}`);
  await waitForPost(context, from, a.channel);
  await context.stack.settle(20_000);
  const refreshes = oauth.refreshes().slice(refreshedBefore);
  const after = (await installedBot(context, a.teamId))!;
  const posts = postsSince(context, from);
  context.record(
    "tenants: A's token near its expiry: the digest is posted after exactly one refresh (oauth.v2.access grant_type=refresh_token), no invalid_grant",
    refreshes.length === 1 &&
      refreshes[0]!.ok &&
      after.token !== before.token &&
      posts.length === 1 &&
      posts[0]!.channel === a.channel &&
      posts[0]!.token === after.token,
    `${refreshes.length} refresh(es) (${refreshes.map((r) => (r.ok ? 'ok' : r.error)).join(', ')}); ` +
      describePosts(posts, { 'the refreshed token': after.token, 'the old token': before.token }),
  );
}

/** B's app_uninstalled then tokens_revoked: B purged, one ops line; B's next run posts nothing, A's posts. */
async function uninstall(context: ScenarioContext, a: Client, b: Client): Promise<void> {
  const ofB = (key: string) =>
    key.includes(B_CHANNEL) || key === `${TABLE.prefixes.installation}${b.teamId}` || key === `${TABLE.prefixes.team}${b.teamId}`;
  const keysBefore = await tableKeys(context, ofB);
  const url = context.outputs['SlackEventsUrl']!;
  const firstLine = context.stack.lines.length;
  const botUser = context.stack.peers.slack.botUserId;
  const answers = [
    await context.slackRequest(url, eventCallback(context, { type: 'app_uninstalled' }, undefined, b.teamId)),
    await context.slackRequest(
      url,
      eventCallback(context, { type: 'tokens_revoked', tokens: { oauth: [], bot: [botUser] } }, undefined, b.teamId),
    ),
  ];
  await context.stack.settle(20_000);
  const keysAfter = await tableKeys(context, ofB);
  context.record(
    "tenants: B's app_uninstalled then tokens_revoked (signed as Slack does) purge its installation, subscriptions, settings and held digests",
    answers.every((answer) => answer.status === 200) && keysBefore.length >= 4 && keysAfter.length === 0,
    `${answers.map(answerOf).join('; ')}; B's items ${keysBefore.join(', ')} → ${keysAfter.join(', ') || 'none'}`,
  );
  const opsLines = context.stack.lines.slice(firstLine).filter((line) => line.line.includes(OPS_LINE));
  context.record(
    'tenants: the uninstall is told to ops in one line (for both events)',
    opsLines.length === 1,
    `${opsLines.length} line(s)`,
  );

  const tokenA = (await installedBot(context, a.teamId))!.token;
  const notInstalled = context.metricCount(DIGEST_METRICS.connectionNotInstalled);
  const parked = await parkedMessages(context);
  const from = Date.now();
  const [toA, toB] = await Promise.all([deliverRun(context, a), deliverRun(context, b)]);
  await context.waitForMetric(DIGEST_METRICS.connectionNotInstalled, notInstalled, 90_000);
  await waitForPost(context, from, a.channel);
  await context.stack.settle(20_000);
  const posts = postsSince(context, from);
  const parkedAfter = await parkedMessages(context);
  context.record(
    `tenants: after B's uninstall, B's run is accepted and settled (${DIGEST_METRICS.connectionNotInstalled} counted, nothing in a DLQ) and posts nothing with any token`,
    toB.status === 200 && posts.every((post) => post.channel === a.channel) && parkedAfter === parked,
    `${answerOf(toB)}; ${describePosts(posts, { [a.teamId]: tokenA })}; DLQ messages ${parked} → ${parkedAfter}`,
  );
  context.record(
    'tenants: A keeps posting with its own token meanwhile',
    toA.status === 200 && posts.length === 1 && posts[0]!.token === tokenA,
    describePosts(posts, { [a.teamId]: tokenA }),
  );
}

/** Every partition key in the table that `wanted` keeps (the rehearsal's own read of the table). */
async function tableKeys(context: ScenarioContext, wanted: (key: string) => boolean): Promise<string[]> {
  const keys: string[] = [];
  const scan = {
    TableName: context.outputs['TableName']!,
    ProjectionExpression: '#pk',
    ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
  };
  for await (const page of paginateScan({ client: context.stack.peers.dynamo.client }, scan)) {
    keys.push(...(page.Items ?? []).map((item) => item[TABLE.partitionKey]?.S ?? '').filter((key) => key !== '' && wanted(key)));
  }
  return keys.sort();
}

/** Messages resting in the stack's dead-letter queues. */
async function parkedMessages(context: ScenarioContext): Promise<number> {
  let total = 0;
  for (const queue of context.stack.queues().filter((q) => !q.hasRedrive)) total += (await context.stack.queueCounts(queue.url)).visible;
  return total;
}
