/**
 * The local stack's topology as data: its queues, the event sources that feed functions from them,
 * the HTTP routes and the schedules. `startLocalStack` (stack.ts) builds the stack from this object,
 * and test/infra/local-topology.test.ts compares it with the synthesized template resource by
 * resource: where local runs differ from the deployed stack on purpose, LOCAL_DIFFERENCES says so
 * and why; any other difference fails that test.
 */
import { CONNECTION_WEBHOOK_ROUTE, ENV, HTTP_PATHS, QUEUE_MESSAGE_KINDS, SERVICES, type ServiceName } from '../shared/contracts';
import { SWEEP_MINUTES } from '../shared/weekly/schedule';

export type QueueKey = 'digest' | 'digestDlq' | 'commands' | 'commandsDlq';

export interface QueueSpec {
  readonly name: string;
  /** The environment variable that hands the functions this queue's URL (absent: no function is told it). */
  readonly urlEnv?: string;
  readonly retentionSeconds: number;
  /** Absent for a dead-letter queue (it keeps the SQS default). */
  readonly visibilityTimeoutSeconds?: number;
  readonly deadLetter?: { readonly queue: QueueKey; readonly maxReceiveCount: number };
}

export interface EventSourceSpec {
  readonly queue: QueueKey;
  readonly function: ServiceName;
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  /** Invocations side by side (Lambda's MaximumConcurrency; absent when the deployed source has no cap). */
  readonly concurrency: number;
  readonly reportBatchItemFailures: boolean;
}

export interface RouteSpec {
  readonly method: 'POST';
  readonly path: string;
  readonly function: ServiceName;
}

export interface ScheduleSpec {
  /** The queue message kind the schedule puts on the queue. */
  readonly kind: string;
  readonly queue: QueueKey;
  readonly everyMinutes: number;
}

const DAY_SECONDS = 24 * 3600;

export const LOCAL_TOPOLOGY = {
  queues: {
    digest: {
      name: 'visibility-bridge-digest',
      urlEnv: ENV.queueUrl,
      retentionSeconds: 4 * DAY_SECONDS,
      visibilityTimeoutSeconds: 30,
      deadLetter: { queue: 'digestDlq', maxReceiveCount: 3 },
    },
    digestDlq: { name: 'visibility-bridge-digest-dlq', urlEnv: ENV.dlqUrl, retentionSeconds: 14 * DAY_SECONDS },
    // Kept an hour, since a response_url works for 30 minutes.
    commands: {
      name: 'visibility-bridge-commands',
      urlEnv: ENV.commandsQueueUrl,
      retentionSeconds: 3600,
      visibilityTimeoutSeconds: 30,
      deadLetter: { queue: 'commandsDlq', maxReceiveCount: 3 },
    },
    commandsDlq: { name: 'visibility-bridge-commands-dlq', retentionSeconds: 14 * DAY_SECONDS },
  } satisfies Record<QueueKey, QueueSpec>,
  eventSources: {
    digest: {
      queue: 'digest',
      function: SERVICES.digest,
      batchSize: 10,
      batchingWindowSeconds: 0,
      concurrency: 2,
      reportBatchItemFailures: true,
    },
    // Slash commands one per invocation, at once, so an answer never waits behind a backlog of runs.
    commands: {
      queue: 'commands',
      function: SERVICES.digest,
      batchSize: 1,
      batchingWindowSeconds: 0,
      concurrency: 2,
      reportBatchItemFailures: true,
    },
  } satisfies Record<string, EventSourceSpec>,
  routes: [
    { method: 'POST', path: HTTP_PATHS.webhook, function: SERVICES.ingest },
    { method: 'POST', path: CONNECTION_WEBHOOK_ROUTE, function: SERVICES.ingest },
    { method: 'POST', path: HTTP_PATHS.slackCommands, function: SERVICES.slack },
    { method: 'POST', path: HTTP_PATHS.slackInteractions, function: SERVICES.slack },
    { method: 'POST', path: HTTP_PATHS.slackEvents, function: SERVICES.slack },
  ] satisfies readonly RouteSpec[],
  schedules: {
    weeklySweep: { kind: QUEUE_MESSAGE_KINDS.weeklySweep, queue: 'digest', everyMinutes: SWEEP_MINUTES },
    quietCatchUp: { kind: QUEUE_MESSAGE_KINDS.quietCatchUp, queue: 'digest', everyMinutes: 0.5 },
  } satisfies Record<string, ScheduleSpec>,
} as const;

/**
 * Where the local stack differs from the deployed one on purpose, by the path of the value in the
 * compared description (`queues.digest.visibilityTimeoutSeconds`), with the reason.
 */
export const LOCAL_DIFFERENCES: Readonly<Record<string, string>> = {
  'queues.digest.visibilityTimeoutSeconds':
    'deployed: 6 × the digest timeout + the batching window (digest-budget.ts); locally 30 s, so a failed digest is retried while you watch',
  'queues.commands.visibilityTimeoutSeconds': "deployed: the digest function's timeout; locally 30 s, as the digest queue",
  'queues.digest.deadLetter.maxReceiveCount':
    'the stage key maxReceiveCount (5 by default); locally 3, so a failing message reaches the DLQ sooner',
  'queues.commands.deadLetter.maxReceiveCount': 'as the digest queue',
  'eventSources.digest.batchingWindowSeconds':
    'the stage key digestBatchWindowSeconds (5 by default); locally 0, so a delivery is digested at once',
  'eventSources.commands.concurrency':
    'deployed without a cap (people type few commands); the local event source runs a fixed number of pollers',
  'schedules.quietCatchUp.everyMinutes': 'deployed every 5 minutes; npm start every 30 s, so a catch-up shows soon after its window',
};
