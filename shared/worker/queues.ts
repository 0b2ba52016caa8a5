/**
 * The digest function's two queues (two event sources of one function): the kinds each carries, each
 * with its feature's handler and the part of the queue's deps that handler takes. A record of a kind
 * its queue does not carry never reaches a handler (./batch.ts quarantines it).
 */
import type { Job, KindHandler, WorkItem } from '../queue-work';
import { METRIC_DIMENSIONS } from '../contracts';
import type { Metrics } from '../ports';
import { tenantLabel, tenantOf, type Tenant } from '../tenancy';
import type { DigestDeps } from '../digest/deps';
import { noticeDrafts } from '../digest/draft-ready';
import { catchUpHeldDigests, type CatchUpSweepDeps } from '../digest/quiet-catch-up';
import { digestRuns } from '../digest/run-completed';
import type { ThreadHandoff } from '../digest/thread';
import { continueThreads } from '../digest/thread-follow-up';
import { answerDeferredCommands } from '../slack-app/deferred-kind';
import type { DeferredDeps } from '../slack-app/ports';
import { publishHomes, type HomeDeps } from '../slack-app/home/publish';
import { sweepWeeklyReports, type WeeklySweepKindDeps } from '../weekly/sweep-kind';
import type { Queue } from './batch';
import { perConnection, thenWatchConnections, type ConnectionDigests, type TenantPosting } from './connections';

/** What the digest queue's kinds need: each feature's own deps. */
export interface DigestQueueDeps {
  digest: DigestDeps;
  weekly: WeeklySweepKindDeps;
  catchUp: CatchUpSweepDeps;
  /** Events of connections (`/webhook/<id>`): their read API and routes; none = the stack's own webhook only. */
  connections?: ConnectionDigests | undefined;
  /** What each tenant posts with (its own posted ledger); none = the stack's digest clients for every tenant. */
  posting?: TenantPosting | undefined;
  /** Sends a tenant's (a connection's, or the stack's: undefined) thread follow-ups; none = threads posted in one invocation. */
  threadsOf?: ((connection: string | undefined) => ThreadHandoff) | undefined;
  /** The connections' silence watchdog, run after each weekly sweep; none = no connections wiring. */
  watchConnections?: (() => Promise<void>) | undefined;
}

/** What the commands queue's kinds need: deferred commands, and App Home publishes (a deferred subscribe among them). */
export interface CommandQueueDeps {
  commands: DeferredDeps;
  home: HomeDeps;
}

/** A feature's handler on a queue: it is given its own part of the queue's deps. */
function taking<P, F, D>(handler: KindHandler<P, F>, part: (deps: D) => F): KindHandler<P, D> {
  return (items, deps, settle) => handler(items, part(deps), settle);
}

/** Every count goes out with the tenant as a breakdown (the totals the alarms read stay as they are). */
function tenantMetrics(metrics: Metrics, tenant: Tenant): Metrics {
  return {
    count: (name, value, dimensions) => metrics.count(name, value, { ...dimensions, [METRIC_DIMENSIONS.tenant]: tenantLabel(tenant) }),
  };
}

/**
 * A handler of tenants' events whose per-run metrics (digests posted, superseded, muted, held, charts…)
 * each carry the `tenant` dimension: the stack's own, or the connection the event came through; and
 * whose thread follow-ups go out as that tenant's work (its MessageGroupId).
 */
function perTenant<P, D extends { digest: DigestDeps; threadsOf?: DigestQueueDeps['threadsOf'] }>(
  handler: KindHandler<P, D>,
): KindHandler<P & { connection?: string | undefined }, D> {
  return (items, deps, settle) => {
    const byTenant = new Map<string | undefined, WorkItem<P & { connection?: string | undefined }>[]>();
    for (const item of items) byTenant.set(item.payload.connection, [...(byTenant.get(item.payload.connection) ?? []), item]);
    const jobs: Job[] = [];
    for (const [connection, group] of byTenant) {
      const metrics = tenantMetrics(deps.digest.metrics, tenantOf(connection));
      const threads = deps.threadsOf?.(connection);
      jobs.push(...handler(group, { ...deps, digest: { ...deps.digest, metrics, threads } }, settle));
    }
    return jobs;
  };
}

export const DIGEST_QUEUE: Queue<'digest', DigestQueueDeps> = {
  name: 'digest',
  handlers: {
    'run.completed': perTenant(perConnection(digestRuns, { cadence: true })),
    'draft.ready': perTenant(perConnection(noticeDrafts, { cadence: false })),
    digest_thread: perTenant(perConnection(continueThreads, { cadence: false })),
    weekly_sweep: thenWatchConnections(taking(sweepWeeklyReports, (deps: DigestQueueDeps) => deps.weekly)),
    quiet_catch_up: taking(catchUpHeldDigests, (deps: DigestQueueDeps) => deps.catchUp),
  },
};

export const COMMAND_QUEUE: Queue<'commands', CommandQueueDeps> = {
  name: 'commands',
  handlers: {
    slack_command: taking(answerDeferredCommands, (deps: CommandQueueDeps) => deps.commands),
    slack_home: taking(publishHomes, (deps: CommandQueueDeps) => deps.home),
  },
};
