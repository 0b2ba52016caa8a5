/**
 * Events a connection's webhook received are digested with that connection's read API (its base URL
 * and key), its routes and, when it is linked to a Slack installation, that installation's bot token;
 * the stack's own events with the stack's. A removed connection's events still queued are
 * acknowledged and dropped (the operator removed it), never read with another key; a linked
 * installation that is gone (uninstalled) gets nothing posted with another token: its events are
 * dropped, logged and counted.
 */
import { installationRefOf, postingTeamOf, type Connection } from '../connections/model';
import type { ConnectionStore } from '../connections/ports';
import { DIGEST_METRICS } from '../contracts';
import type { ChartDeps } from '../digest/chart-step';
import type { DigestDeps } from '../digest/deps';
import { NeedsOperatorFix } from '../errors';
import type { WebhookEvent } from '../events';
import { freshBotToken, type TokenLeaseDeps } from '../installations/token-lease';
import type { DigestStore, Log, Metrics, QuietHoursStore, ReadApi, SlackPoster, SubscriptionStore } from '../ports';
import type { ChannelAccess } from '../slack-app/ports';
import { tenantOf, type Tenant } from '../tenancy';
import type { WeeklyStore } from '../weekly/ports';
import { watchConnections, type WatchdogDeps } from '../connections/watchdog';
import { describeError } from '../observability';
import type { Job, KindHandler, Settle, WorkItem } from '../queue-work';

/** The Slack clients of one bot token. */
export interface SlackClients {
  slack: SlackPoster;
  charts: ChartDeps | undefined;
}

/** Whose bot token a connection posts with: the stack's, its linked installation's, or none (that installation is gone). */
export type ConnectionSlack =
  { kind: 'stack' } | { kind: 'installation'; clients: SlackClients } | { kind: 'not_installed'; teamId: string };

/** The installations' side of the digest: their tokens (refreshed under the lease) and one set of clients per token. */
export interface InstallationSlack {
  tokens: TokenLeaseDeps;
  /** The clients of `token`, built once per token and kept per container by the composition root. */
  clientsFor(installationId: string, token: string): SlackClients;
  /** Whether `token`'s bot can post in a channel (`subscribe`'s check), kept likewise. */
  channelsFor(installationId: string, token: string): ChannelAccess;
}

/** Whose bot token a connection posts with, the token itself with time left when it is an installation's. */
type PostingToken =
  | { kind: 'stack' }
  | { kind: 'installation'; installations: InstallationSlack; teamId: string; token: string }
  | { kind: 'not_installed'; teamId: string };

/**
 * The token of a connection's first linked installation (`postingTeamOf`), with time left. An
 * installation that is not stored (uninstalled, or not installed yet) is `not_installed`; a refresh
 * that fails throws (the record is retried).
 */
async function postingToken(connection: Connection, installations: InstallationSlack | undefined): Promise<PostingToken> {
  const teamId = postingTeamOf(connection);
  if (teamId === undefined) return { kind: 'stack' };
  if (installations === undefined)
    throw new NeedsOperatorFix(
      `connection ${connection.id} is linked to the Slack installation ${teamId}, but the digest worker has no installations' wiring`,
      'deploy the digest function with the installations wiring (TABLE_NAME, and SLACK_CLIENT_ID for rotating tokens)',
    );
  // A linked id is the id its installation is stored under (a workspace's own, or an org's); read once
  // here to tell a gone installation from a failure, then again by the lease's refresh check.
  if ((await installations.tokens.store.get(teamId)) === undefined) return { kind: 'not_installed', teamId };
  return { kind: 'installation', installations, teamId, token: await freshBotToken(installationRefOf(teamId), installations.tokens) };
}

/** The Slack clients of a connection: its posting installation's, the stack's (not linked), or none (that installation is gone). */
export async function connectionSlack(connection: Connection, installations: InstallationSlack | undefined): Promise<ConnectionSlack> {
  const posting = await postingToken(connection, installations);
  if (posting.kind !== 'installation') return posting;
  return { kind: 'installation', clients: posting.installations.clientsFor(posting.teamId, posting.token) };
}

/**
 * Whether the bot can post in a channel, asked with the token the connection's digests post with:
 * its installation's, or `stack` when it is not linked. Its installation being gone, nothing can be
 * subscribed for it: that is the operator's (or the client's admin's) to fix.
 */
export async function connectionChannels(
  connection: Connection,
  installations: InstallationSlack | undefined,
  stack: ChannelAccess,
): Promise<ChannelAccess> {
  const posting = await postingToken(connection, installations);
  if (posting.kind === 'stack') return stack;
  if (posting.kind === 'not_installed')
    throw new NeedsOperatorFix(
      `connection ${connection.id} posts with the Slack installation ${posting.teamId}, which is gone`,
      `a workspace admin installs the app again from the bridge's /slack/install page, or link the connection to another team (\`npx bridge connections link ${connection.id} --slack-team T…\`)`,
    );
  return posting.installations.channelsFor(posting.teamId, posting.token);
}

/**
 * What a tenant's posts go out with: the clients chosen for it (the stack's own when it is not linked),
 * through that tenant's posted ledger (`slackPostRecovery: ledger`), so its posts are recorded, and
 * recovered, under its own key only.
 */
export interface TenantPosting {
  /** The stack's clients as they are, before any tenant's ledger. */
  stack: SlackClients;
  /** `clients` as `tenant` posts with them. */
  of(tenant: Tenant, clients: SlackClients): SlackClients;
}

/** The clients a connection posts with, through its own ledger; or none, its installation being gone. */
export type ConnectionPosting = { kind: 'posting'; clients: SlackClients } | { kind: 'not_installed'; teamId: string };

/** What a connection's events are digested with, or why they are dropped. */
export type ConnectionDeps = { kind: 'active'; deps: DigestDeps } | { kind: 'removed' } | { kind: 'not_installed'; teamId: string };

/** A tenant's own stores: every item they write is keyed under its tenant prefix (../tenancy.ts). */
export interface TenantStores {
  store: DigestStore;
  subscriptions: SubscriptionStore;
  quietHours: QuietHoursStore;
  weekly: WeeklyStore;
}

/** An active connection as its events, sweeps and Slack answers reach it: its read API, routes and stores. */
export interface ConnectionTenant {
  tenant: Tenant;
  connection: Connection;
  readApi: ReadApi;
  stores: TenantStores;
}

export interface ConnectionDigests {
  /** The connections' table (the silence watchdog reads it). */
  store: ConnectionStore;
  /** An active connection's read API and stores; undefined when it was removed (or never was). */
  tenant(id: string): Promise<ConnectionTenant | undefined>;
  /** Every active connection's (the sweeps run once per tenant). */
  activeTenants(): Promise<ConnectionTenant[]>;
  /** The digest deps of a connection's events (its read API, routes, stores and Slack clients), or why there are none. */
  depsFor(id: string, base: DigestDeps, posting: TenantPosting): Promise<ConnectionDeps>;
  /** The Slack clients a connection posts with (its watchdog notice in its own channel). */
  slackOf(connection: Connection): Promise<ConnectionSlack>;
  /** Whether the bot can post in a channel, with the token the connection posts with (`stack`: the stack's check). */
  channelsOf(connection: Connection, stack: ChannelAccess): Promise<ChannelAccess>;
  /** The clients a connection's digests, reports and catch-ups post with, through its own ledger. */
  postingOf(connection: Connection, posting: TenantPosting): Promise<ConnectionPosting>;
  /** Records a run's time for the connection's silence watchdog. */
  noteRun(id: string, atMs: number): Promise<void>;
}

export function connectionDigests(
  store: ConnectionStore,
  readApiOf: (connection: Connection) => Promise<ReadApi>,
  storesFor: (tenant: Tenant) => TenantStores,
  installations?: InstallationSlack,
): ConnectionDigests {
  const slackOf = (connection: Connection) => connectionSlack(connection, installations);
  const postingOf = async (connection: Connection, posting: TenantPosting): Promise<ConnectionPosting> => {
    const slack = await slackOf(connection);
    if (slack.kind === 'not_installed') return slack;
    const clients = slack.kind === 'stack' ? posting.stack : slack.clients;
    return { kind: 'posting', clients: posting.of(tenantOf(connection.id), clients) };
  };
  const tenantOfRecord = async (connection: Connection): Promise<ConnectionTenant> => {
    const tenant = tenantOf(connection.id);
    return { tenant, connection, readApi: await readApiOf(connection), stores: storesFor(tenant) };
  };
  const tenant = async (id: string) => {
    const record = await store.get(id);
    return record === undefined || record.connection.status !== 'active' ? undefined : tenantOfRecord(record.connection);
  };
  return {
    store,
    tenant,
    async activeTenants() {
      const active = (await store.list()).filter((record) => record.connection.status === 'active');
      return Promise.all(active.map((record) => tenantOfRecord(record.connection)));
    },
    async depsFor(id, base, posting) {
      const record = await store.get(id);
      if (record === undefined || record.connection.status !== 'active') return { kind: 'removed' };
      // Slack first: a connection whose installation is gone is not even read.
      const slack = await postingOf(record.connection, posting);
      if (slack.kind === 'not_installed') return slack;
      const own = tenantDigestDeps(await tenantOfRecord(record.connection), base);
      return { kind: 'active', deps: { ...own, slack: slack.clients.slack, charts: slack.clients.charts } };
    },
    slackOf,
    channelsOf: (connection, stack) => connectionChannels(connection, installations, stack),
    postingOf,
    noteRun: (id, atMs) => store.noteRun(id, atMs),
  };
}

/** An active connection as its per-channel sweeps post for it: with its Slack clients, through its own ledger. */
export interface PostingTenant {
  own: ConnectionTenant;
  clients: SlackClients;
}

/**
 * The active connections a sweep (weekly reports, quiet-hours catch-ups) posts for, each with its Slack
 * clients. One whose installation is gone is left out, logged and counted: nothing of it is posted with
 * another workspace's token. One whose clients cannot be had now (a refresh failed) is left out until the
 * next sweep; the others go on.
 */
export async function postingTenants(
  connections: ConnectionDigests,
  posting: TenantPosting,
  deps: { log: Log; metrics: Metrics },
): Promise<PostingTenant[]> {
  const tenants: PostingTenant[] = [];
  for (const own of await connections.activeTenants()) {
    const connectionId = own.connection.id;
    let slack: ConnectionPosting;
    try {
      slack = await connections.postingOf(own.connection, posting);
    } catch (error) {
      deps.log.error("a connection's Slack clients could not be had: its sweep waits for the next", {
        connectionId,
        ...describeError(error),
      });
      continue;
    }
    if (slack.kind === 'not_installed') {
      deps.metrics.count(DIGEST_METRICS.connectionNotInstalled);
      deps.log.warn("sweep of a connection whose Slack installation is gone skipped: nothing posted with another workspace's token", {
        connectionId,
        teamId: slack.teamId,
      });
      continue;
    }
    tenants.push({ own, clients: slack.clients });
  }
  return tenants;
}

/** A connection's digest deps: the stack's clients, with its read API, routes and stores. */
export function tenantDigestDeps(own: ConnectionTenant, base: DigestDeps): DigestDeps {
  const { store, subscriptions, quietHours } = own.stores;
  return { ...base, readApi: own.readApi, channels: own.connection.routes, store, subscriptions, quietHours };
}

/** What an event kind's handler on the digest queue is given: the stack's deps, and the connections'. */
export interface ConnectionAwareDeps {
  digest: DigestDeps;
  connections?: ConnectionDigests | undefined;
  /** What each tenant posts with; none = the stack's digest clients, as they are, for every tenant. */
  posting?: TenantPosting | undefined;
}

type EventItem = WorkItem<{ event: WebhookEvent; connection?: string | undefined }>;

/**
 * Runs `handler` on the stack's own events with the stack's deps, and on each connection's events with
 * that connection's (one job per connection: its deps are read once for its records). With
 * `cadence`, each of a connection's runs is noted for its watchdog, whatever its digest's outcome.
 */
export function perConnection<P extends EventItem['payload']>(
  handler: KindHandler<P, DigestDeps>,
  options: { cadence: boolean },
): KindHandler<P, ConnectionAwareDeps> {
  return (items, deps, settle) => {
    const groups = new Map<string | undefined, WorkItem<P>[]>();
    for (const item of items) groups.set(item.payload.connection, [...(groups.get(item.payload.connection) ?? []), item]);
    const jobs: Job[] = [];
    for (const [id, group] of groups) {
      if (id === undefined) jobs.push(...handler(group, deps.digest, settle));
      else jobs.push(() => connectionJob(id, group, handler, deps, settle, options.cadence));
    }
    return jobs;
  };
}

async function connectionJob<P extends EventItem['payload']>(
  id: string,
  group: readonly WorkItem<P>[],
  handler: KindHandler<P, DigestDeps>,
  deps: ConnectionAwareDeps,
  settle: Settle,
  cadence: boolean,
): Promise<void> {
  const connections = deps.connections;
  let own: ConnectionDeps;
  try {
    if (connections === undefined)
      throw new NeedsOperatorFix(
        `an event of connection ${id} reached a digest worker without the connections' wiring`,
        'deploy the digest function with the connections wiring (TABLE_NAME and the connection secrets permission)',
      );
    const stack = { slack: deps.digest.slack, charts: deps.digest.charts };
    own = await connections.depsFor(id, deps.digest, deps.posting ?? { stack, of: (_tenant, clients) => clients });
  } catch (error) {
    // Each record fails on its own (retried, then the DLQ): nothing is read with another connection's key.
    const failure = error instanceof Error ? error : new Error(String(error));
    await Promise.all(group.map((item) => settle(item, () => Promise.reject(failure))));
    return;
  }
  if (own.kind === 'removed') {
    const log = deps.digest.log;
    await Promise.all(
      group.map((item) =>
        settle(item, () => {
          log.info('event of a removed connection dropped', { connectionId: id, eventId: item.payload.event.id });
          return Promise.resolve('ignored');
        }),
      ),
    );
    return;
  }
  if (own.kind === 'not_installed') await dropUninstalled(id, own.teamId, group, deps.digest, settle);
  else for (const job of handler(group, own.deps, settle)) await job();
  // Its webhook still delivers: the watchdog's cadence goes on whether or not Slack can be posted to.
  if (cadence) await noteRuns(id, group, connections, deps.digest);
}

/**
 * The connection's linked installation is gone: settled, not retried (retries cannot bring it back),
 * and never posted with another token. The operator links another team or the client installs again.
 */
async function dropUninstalled(id: string, teamId: string, group: readonly EventItem[], deps: DigestDeps, settle: Settle): Promise<void> {
  await Promise.all(
    group.map((item) =>
      settle(item, () => {
        deps.metrics.count(DIGEST_METRICS.connectionNotInstalled);
        deps.log.warn("event of a connection whose Slack installation is gone dropped: nothing posted with another workspace's token", {
          connectionId: id,
          teamId,
          eventId: item.payload.event.id,
        });
        return Promise.resolve('ignored');
      }),
    ),
  );
}

async function noteRuns(
  id: string,
  group: readonly EventItem[],
  connections: ConnectionDigests | undefined,
  deps: DigestDeps,
): Promise<void> {
  for (const item of group) {
    try {
      await connections?.noteRun(id, Date.parse(item.payload.event.created_at));
    } catch (error) {
      // The cadence is the watchdog's estimate: a lost note makes it coarser, never loses a digest.
      deps.log.warn('run time of a connection not noted', { connectionId: id, eventId: item.payload.event.id, ...describeError(error) });
    }
  }
}

/**
 * The weekly sweep's handler, followed by the connections' silence watchdog (../connections/watchdog.ts):
 * the sweep's schedule (every 15 minutes) is fine enough for silences counted in multiples of a run
 * interval, so the watchdog needs no schedule of its own. The sweep's record settles as the sweep did.
 */
export function thenWatchConnections<P, D extends { watchConnections?: (() => Promise<void>) | undefined }>(
  handler: KindHandler<P, D>,
): KindHandler<P, D> {
  return (items, deps, settle) => {
    const jobs = handler(items, deps, settle);
    const watch = deps.watchConnections;
    return watch === undefined || items.length === 0 ? jobs : [...jobs, watch];
  };
}

/** The watchdog over the worker's clients; it never throws: a failure is logged and the next sweep tries again. */
export function connectionsWatch(connections: ConnectionDigests, deps: Omit<WatchdogDeps, 'store'>): () => Promise<void> {
  return async () => {
    try {
      await watchConnections({
        ...deps,
        store: connections.store,
        posterOf: (connection) => posterOf(connection, connections, deps.slack),
      });
    } catch (error) {
      deps.log.error('connections watchdog failed; the next sweep tries again', describeError(error));
    }
  };
}

/** The poster of a connection's own channel: the stack's, its installation's, or undefined when that installation is gone. */
async function posterOf(connection: Connection, connections: ConnectionDigests, stack: SlackPoster): Promise<SlackPoster | undefined> {
  const slack = await connections.slackOf(connection);
  if (slack.kind === 'stack') return stack;
  return slack.kind === 'installation' ? slack.clients.slack : undefined;
}
