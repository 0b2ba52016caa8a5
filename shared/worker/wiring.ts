/**
 * Each queue's deps from the clients the digest function holds (functions/digest/runtime.ts; the
 * integration tests through test/support): every kind is given only its feature's part.
 */
import { NeedsOperatorFix } from '../errors';
import type {
  ChannelPacer,
  Clock,
  DeadLetters,
  DigestStore,
  Log,
  MessageVisibility,
  Metrics,
  QuietHoursStore,
  ReadApi,
  SlackPoster,
  SubscriptionStore,
} from '../ports';
import type { ActionValueCodec } from '../buttons/value';
import type { ChartDeps } from '../digest/chart-step';
import type { ChannelRouting, DigestOptions } from '../digest/deps';
import { shareValuesFrom } from '../slack-app/interactions';
import type { ChannelAccess, Responder, SlackAppWorkerDeps, TenantReaches } from '../slack-app/ports';
import type { HomeViews } from '../slack-app/home/ports';
import type { WeeklyChartHook, WeeklyDeps, WeeklyOptions, WeeklyStore } from '../weekly/ports';
import { weeklyCharts } from '../weekly/sweep-kind';
import type { BatchDeps } from './batch';
import type { CommandQueueDeps, DigestQueueDeps } from './queues';
import type { QueueDeps } from './sqs';
import { connectionsWatch, postingTenants, type ConnectionDigests, type ConnectionTenant, type TenantPosting } from './connections';
import { STACK_TENANT } from '../tenancy';
import { PACE_WAIT_BUDGET_MS } from '../pacing';
import { threadHandoff } from '../digest/thread';

/** The clients and settings of one invocation. */
export interface WorkerWiring {
  readApi: ReadApi;
  slack: SlackPoster;
  store: DigestStore;
  deadLetters: DeadLetters;
  channels: ChannelRouting;
  clock: Clock;
  log: Log;
  metrics: Metrics;
  /** The invocation's deadline (epoch ms). */
  deadline: () => number;
  sleep: (ms: number) => Promise<void>;
  digestOptions: DigestOptions;
  batch: Pick<BatchDeps, 'recordBudgetMs' | 'maxReceiveCount'>;
  /** Channels subscribed to projects, and the store deferred commands change; none = configuration only. */
  subscriptions?: SubscriptionStore | undefined;
  /** Slack's per-channel pace; none = posts go out unpaced. */
  pacer?: ChannelPacer | undefined;
  /** The button signer (the stage's action-signing key); none = no buttons. */
  actionValues?: (() => Promise<ActionValueCodec>) | undefined;
  /** Quiet hours' store; none = never held, a catch-up does nothing. */
  quietHours?: QuietHoursStore | undefined;
  /** Trend charts (digest threads and weekly reports); none = charts off. */
  charts?: ChartDeps | undefined;
  /** Answers deferred slash commands (response_url): the commands queue needs it. */
  responder?: Responder | undefined;
  /** The `slackAccess` policy and the workspace look-ups deferred commands need: the commands queue needs them. */
  slackApp?: SlackAppWorkerDeps | undefined;
  /** Weekly reports: their store and the stage's defaults; none = a weekly sweep message is acknowledged and does nothing. */
  weekly?: { store: WeeklyStore; options: WeeklyOptions; chart?: WeeklyChartHook | undefined } | undefined;
  /** Connections' read APIs and routes (events from `/webhook/<id>`); none = the stack's own webhook only. */
  connections?: ConnectionDigests | undefined;
  /**
   * A tenant's clients as its posts go out (through its posted ledger, `slackPostRecovery: ledger`);
   * `slack` and `charts` above are the stack's as they are. None = posted as they are.
   */
  posting?: TenantPosting['of'] | undefined;
  /** The digest queue, where a digest's thread replies not due at once are sent as follow-ups; none = each thread posted in one invocation. */
  digestQueue?: Pick<MessageVisibility, 'requeue'> | undefined;
}

/** Without a publisher (a wiring that never serves App Home), a publish says what to deploy. */
const noHomeViews: HomeViews = {
  publish: () =>
    Promise.reject(
      new NeedsOperatorFix(
        'an App Home publish reached a digest worker without the Slack views publisher',
        'deploy the digest function with its Slack app wiring',
      ),
    ),
};

function batchDeps(w: WorkerWiring): BatchDeps {
  return { deadLetters: w.deadLetters, clock: w.clock, log: w.log, metrics: w.metrics, deadline: w.deadline, ...w.batch };
}

export function digestQueueDeps(w: WorkerWiring): QueueDeps<DigestQueueDeps> {
  const observe = { clock: w.clock, log: w.log, metrics: w.metrics };
  const posting: TenantPosting = { stack: { slack: w.slack, charts: w.charts }, of: w.posting ?? ((_tenant, clients) => clients) };
  const stack = posting.of(STACK_TENANT, posting.stack);
  const paced = { ...observe, slack: stack.slack, pacer: w.pacer, deadline: w.deadline, sleep: w.sleep };
  const digest = {
    ...paced,
    // Only a digest's first post has the budget: weekly reports and catch-ups are the sweep's, not a client's burst.
    paceWaitBudgetMs: PACE_WAIT_BUDGET_MS,
    readApi: w.readApi,
    store: w.store,
    channels: w.channels,
    options: w.digestOptions,
    subscriptions: w.subscriptions,
    actionValues: w.actionValues,
    quietHours: w.quietHours,
    charts: stack.charts,
  };
  const reports =
    w.weekly === undefined || w.subscriptions === undefined
      ? undefined
      : {
          ...paced,
          ...w.weekly,
          chart: w.weekly.chart ?? weeklyCharts(stack.charts, { ...paced, digests: w.store }),
          digests: w.store,
          subscriptions: w.subscriptions,
          listProjects: () => w.readApi.listProjects(),
        };
  const connections = w.connections;
  const catchUp = { ...paced, quietHours: w.quietHours };
  const digestQueue = w.digestQueue;
  return {
    deps: {
      digest,
      weekly: {
        log: w.log,
        reports,
        tenants:
          reports &&
          connections &&
          (async () =>
            (await postingTenants(connections, posting, observe)).map(({ own, clients }) => {
              const chart = w.weekly?.chart ?? weeklyCharts(clients.charts, { ...paced, slack: clients.slack, digests: own.stores.store });
              return tenantReports(own, { ...reports, slack: clients.slack }, chart);
            })),
      },
      catchUp: {
        ...catchUp,
        tenants:
          connections &&
          (async () =>
            (await postingTenants(connections, posting, observe)).map(({ own, clients }) => ({
              ...catchUp,
              slack: clients.slack,
              quietHours: own.stores.quietHours,
            }))),
      },
      connections: w.connections,
      posting,
      threadsOf: digestQueue && ((connection) => threadHandoff(digestQueue, connection)),
      watchConnections:
        w.connections === undefined
          ? undefined
          : connectionsWatch(w.connections, { ...observe, slack: stack.slack, opsChannel: w.channels.defaultChannel }),
    },
    batch: batchDeps(w),
  };
}

/** A connection's weekly reports: the stack's sweep with its stores, read API, routes (its home channels) and Slack clients. */
function tenantReports(own: ConnectionTenant, stack: WeeklyDeps, chart: WeeklyChartHook | undefined): WeeklyDeps {
  const { store, subscriptions, weekly } = own.stores;
  return {
    ...stack,
    tenant: own.tenant,
    store: weekly,
    digests: store,
    subscriptions,
    listProjects: () => own.readApi.listProjects(),
    options: { ...stack.options, defaultChannel: own.connection.routes.defaultChannel, projectChannels: own.connection.routes.byProject },
    chart,
  };
}

/**
 * The tenants a scoped Slack answer reaches here: the stack's clients and stores, or an active connection's.
 * A connection's channel check resolves its token only when asked (`subscribe`), as its digests do.
 */
function tenantReaches(w: WorkerWiring, subscriptions: SubscriptionStore, channels: ChannelAccess): TenantReaches {
  return {
    async reach(tenant) {
      if (tenant.kind === 'stack')
        return { tenant, store: subscriptions, snapshots: w.store, readApi: w.readApi, routes: w.channels, channels };
      const connections = w.connections;
      const own = await connections?.tenant(tenant.connectionId);
      if (connections === undefined || own === undefined) return undefined;
      return {
        tenant,
        store: own.stores.subscriptions,
        snapshots: own.stores.store,
        readApi: own.readApi,
        routes: own.connection.routes,
        channels: {
          postingAccess: async (channel) => (await connections.channelsOf(own.connection, channels)).postingAccess(channel),
        },
      };
    },
  };
}

export function commandQueueDeps(w: WorkerWiring): QueueDeps<CommandQueueDeps> {
  if (!w.subscriptions || !w.responder || !w.slackApp)
    throw new NeedsOperatorFix(
      'a slash command reached a digest worker without the subscription store or the Slack app wiring',
      'deploy the digest function with the Slack app wiring (TABLE_NAME, response_url origins, SLACK_ACCESS_POLICY)',
    );
  const commands = {
    ...w.slackApp,
    store: w.subscriptions,
    clock: w.clock,
    directory: w.readApi,
    status: w.readApi,
    responder: w.responder,
    shares: shareValuesFrom(w.actionValues),
    // `status` renders like the digest: same links, page size and noise minimums.
    statusOptions: {
      dashboardUrlTemplate: w.digestOptions.dashboardUrlTemplate,
      gapsPageSize: w.digestOptions.gapsPageSize,
      noiseMinimums: w.digestOptions.noiseMinimums,
    },
    snapshots: w.store,
    reaches: tenantReaches(w, w.subscriptions, w.slackApp.channels),
    metrics: w.metrics,
    log: w.log,
  };
  const home = {
    ...commands,
    snapshots: w.store,
    routing: w.channels,
    quiet: w.quietHours,
    views: w.slackApp.views ?? noHomeViews,
  };
  return { deps: { commands, home }, batch: batchDeps(w) };
}
