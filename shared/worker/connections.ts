/**
 * Events a connection's webhook received are digested with that connection's read API (its base URL
 * and key) and its routes; the stack's own events with the stack's. A removed connection's events
 * still queued are acknowledged and dropped (the operator removed it), never read with another key.
 */
import type { Connection } from '../connections/model';
import type { ConnectionStore } from '../connections/ports';
import type { DigestDeps } from '../digest/deps';
import { NeedsOperatorFix } from '../errors';
import type { WebhookEvent } from '../events';
import type { DigestStore, QuietHoursStore, ReadApi, SubscriptionStore } from '../ports';
import { tenantOf, type Tenant } from '../tenancy';
import type { WeeklyStore } from '../weekly/ports';
import { watchConnections, type WatchdogDeps } from '../connections/watchdog';
import { describeError } from '../observability';
import type { Job, KindHandler, Settle, WorkItem } from '../queue-work';

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
  /** The digest deps of a connection's events (its read API, routes and stores), or undefined when it was removed. */
  depsFor(id: string, base: DigestDeps): Promise<DigestDeps | undefined>;
  /** Records a run's time for the connection's silence watchdog. */
  noteRun(id: string, atMs: number): Promise<void>;
}

export function connectionDigests(
  store: ConnectionStore,
  readApiOf: (connection: Connection) => Promise<ReadApi>,
  storesFor: (tenant: Tenant) => TenantStores,
): ConnectionDigests {
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
    async depsFor(id, base) {
      const own = await tenant(id);
      return own === undefined ? undefined : tenantDigestDeps(own, base);
    },
    noteRun: (id, atMs) => store.noteRun(id, atMs),
  };
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
  let own: DigestDeps | undefined;
  try {
    if (connections === undefined)
      throw new NeedsOperatorFix(
        `an event of connection ${id} reached a digest worker without the connections' wiring`,
        'deploy the digest function with the connections wiring (TABLE_NAME and the connection secrets permission)',
      );
    own = await connections.depsFor(id, deps.digest);
  } catch (error) {
    // Each record fails on its own (retried, then the DLQ): nothing is read with another connection's key.
    const failure = error instanceof Error ? error : new Error(String(error));
    await Promise.all(group.map((item) => settle(item, () => Promise.reject(failure))));
    return;
  }
  if (own === undefined) {
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
  for (const job of handler(group, own, settle)) await job();
  if (cadence) await noteRuns(id, group, connections, deps.digest);
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
      await watchConnections({ ...deps, store: connections.store });
    } catch (error) {
      deps.log.error('connections watchdog failed; the next sweep tries again', describeError(error));
    }
  };
}
