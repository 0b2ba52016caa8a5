/**
 * What `startLocalStack` (local/stack.ts) takes and gives: its options and defaults, the running
 * stack's handle, and the one error a user can fix by changing a flag.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SimulatorFixture } from '../simulator/fixture';
import type { VisibilitySimulator } from '../simulator/server';
import type { LocalSlackServer, RecordedCall } from '../slack/server';
import type { HttpGateway } from '../http-gateway';
import type { LocalObservabilityHub, LocalLogLevel } from '../local-observability';
import type { EventsServer } from '../events-server';
import type { LocalSecrets } from '../local-secrets';
import { LOCAL_SLACK_TOKEN, type ReadyConnection, type ReadyInfo } from '../ready-info';
import { LOCAL_TOPOLOGY } from '../topology';

/** The stage name of the local stack (BRIDGE_STAGE). */
export const LOCAL_STAGE = 'local';

export const LOCAL_DEFAULTS = {
  region: 'us-east-1',
  tableName: 'visibility-bridge-local',
  /** The home channel, by id as a stage file names it; the local Slack shows its name (`slackChannelNames`). */
  slackChannel: 'C0LOCALDIGEST',
  /** Another channel, for trying the Slack app (`/visibility subscribe …` there). */
  demoChannel: 'C0LOCALDEMO',
  slackChannelNames: { C0LOCALDIGEST: 'visibility-digests', C0LOCALDEMO: 'visibility-demo' },
  slackToken: LOCAL_SLACK_TOKEN,
  maxReceiveCount: LOCAL_TOPOLOGY.queues.digest.deadLetter.maxReceiveCount,
  visibilityTimeoutSeconds: LOCAL_TOPOLOGY.queues.digest.visibilityTimeoutSeconds,
  functionTimeoutMs: 60_000,
  ingestTimeoutMs: 8_000,
  pollWaitSeconds: 20,
  retryScale: 1,
} as const;

export interface LocalStackOptions {
  /** Port of the webhook endpoint (default 0: any free port; `npm start` uses 8787). */
  port?: number;
  /** Address to bind every local server to (default 127.0.0.1). */
  host?: string;
  /** Webhook signing secrets; the first is registered with the simulator. Default: one generated. */
  secrets?: string[];
  /** Simulator data: a fixture, or the path of a fixture JSON file (the simulator's fixture format). */
  fixture?: SimulatorFixture | string;
  /** Seed of the simulator's generated data (default 1). */
  seed?: number;
  /** Latency the simulator adds to every read-API request. */
  apiLatencyMs?: number;
  /**
   * Run the local Secrets Manager server on this port (0 = any free one): the functions then read
   * their secrets from it by ARN, re-reading every 2 s, and `bridge secrets …` changes them. One
   * such stack per process (the SDK takes the endpoint from process.env). Default: no server, the
   * secrets are plain environment values.
   */
  secretsManagerPort?: number;
  /** Serve the live event stream (`GET /events`, NDJSON; `bridge tail`) on this port (0 = any free one). Default: not served. */
  eventsPort?: number;
  /** Port of the simulator (0 = any free port). Default 0. */
  simulatorPort?: number;
  /** When the simulator port is taken, take any free one instead of failing (npm start's default 8788). */
  simulatorPortFallback?: boolean;
  /** Multiplies the simulator's webhook retry delays (30 s … 8 min); default 1, tests use e.g. 0.001. */
  retryScale?: number;
  /** The simulator's webhook sender uses this fetch (tests wrap deliveries with it). */
  webhookFetch?: typeof fetch;
  /** Register the bridge's webhook with the simulator (default true). */
  registerWebhook?: boolean;
  /**
   * Keep the state in this directory across restarts (default: in memory): the table, the queues'
   * messages (DLQs too), the secrets and the stack's keys, the local Slack's messages (./stack/state).
   */
  dataDir?: string;
  /** With `dataDir`: forget what an earlier stack kept there. */
  fresh?: boolean;
  /** The local Slack server appends one JSON line per Web API call here. */
  slackLogFile?: string;
  /** The local Slack refuses every chart and table block (invalid_blocks), as before Slack's rollout. */
  refuseNativeBlocks?: boolean;
  /**
   * Clients of an agency (`npm start -- --connections N`, ./connections.ts): N service workspaces, each
   * with its simulator and connection, and N Slack workspaces the app is installed in. Default 0.
   */
  connections?: number;
  /** Post to a real Slack workspace: no local Slack server, SLACK_API_URL unset. */
  realSlack?: { token: string; channel: string };
  /** Use a real read API: no simulator (and no webhook registration). */
  realReadApi?: { baseUrl: string; apiKey: string };
  /** Home channel of the digests, a channel id (default C0LOCALDIGEST, shown as #visibility-digests). */
  slackChannel?: string;
  /** Project id → channel id (SLACK_PROJECT_CHANNELS). */
  projectChannels?: Record<string, string>;
  /** Receives before SQS moves a message to the DLQ (default 3). */
  maxReceiveCount?: number;
  /** The digest queue's visibility timeout (default 30 s). */
  visibilityTimeoutSeconds?: number;
  /** The digest function's timeout (default 60 s). */
  functionTimeoutMs?: number;
  /** Long-poll wait of the event source (default 20 s). */
  pollWaitSeconds?: number;
  /** Messages per digest invocation (default 10). */
  batchSize?: number;
  /** Put a quiet-hours catch-up sweep on the digest queue this often, as the stack's schedule does every 5 minutes (default: never; `npm start`: 30 s). */
  quietSweepMs?: number;
  /** Digest invocations side by side (default 2). */
  concurrency?: number;
  /** false: the local SQS server ignores MessageGroupId, a standard queue without fair queues (bench/fairness.ts's control). */
  fairQueues?: boolean;
  /** Extra environment variables for both handlers (e.g. VISIBILITY_RANGE, SIGNATURE_TOLERANCE_SECONDS). */
  env?: Record<string, string>;
  /** Handler log lines shown (default `warn`; `silent` in tests). Everything is kept in `observability` anyway. */
  logLevel?: LocalLogLevel;
  /** Where log lines go (default stderr). */
  logWrite?: (line: string) => void;
  /** Info messages shown even when `logLevel` is `warn` (e.g. "digest posted"). */
  logHighlight?: readonly string[];
  /** Called with each message the local Slack server accepts (rendered as text; replies indented). */
  onSlackMessage?: (rendered: string, call: RecordedCall) => void;
  /** Called after each request the webhook endpoint answered. */
  onDelivery?: (delivery: DeliverySummary) => void;
}

/** A running client of `connections` (./connections.ts): what the ready file lists, and its simulator. */
export interface LocalConnection extends ReadyConnection {
  simulator: VisibilitySimulator;
}

export interface DeliverySummary {
  method: string;
  path: string;
  status: number;
  durationMs: number;
  deliveryId: string | undefined;
  eventType: string | undefined;
  /** `accepted` / `duplicate` / `ignored` on success; the error code (e.g. `signature_too_old`) otherwise. */
  outcome: string;
}

export interface QueueDepth {
  visible: number;
  inFlight: number;
  delayed: number;
}

export interface QueueDepths {
  queue: QueueDepth;
  dlq: QueueDepth;
}

export interface LocalStack {
  webhookUrl: string;
  secrets: string[];
  /** Where the signing secrets came from: the options, the data directory (kept from an earlier start) or generated now. */
  secretsFrom: 'options' | 'kept' | 'generated';
  /** Where the state is kept, when it is. */
  dataDir?: string;
  /** Absent when a real read API is used. */
  simulator?: VisibilitySimulator;
  /** Base URL of the read API in use (the simulator's unless a real one is configured). */
  simulatorUrl: string;
  apiKey: string;
  /** The simulator's webhook registered for the bridge. */
  webhookId?: string;
  /** Absent when posting to a real Slack. */
  slack?: LocalSlackServer;
  slackChannel: string;
  /** The Slack app's signing secret of the local Slack endpoints (generated per start). */
  slackSigningSecret: string;
  sqs: {
    endpoint: string;
    region: string;
    queueUrl: string;
    queueArn: string;
    dlqUrl: string;
    dlqArn: string;
    /** The attributes the queue was created with (VisibilityTimeout, RedrivePolicy…), to recreate it. */
    queueAttributes: Record<string, string>;
    /** Deferred slash commands' own queue and its DLQ. */
    commandsQueueUrl: string;
    commandsQueueArn: string;
    commandsDlqUrl: string;
    /** A client of the local SQS server for callers (the event source has its own). */
    client: SQSClient;
  };
  dynamo: { endpoint: string; tableName: string; client: DynamoDBClient };
  projectIds: string[];
  /** The clients of `connections` (empty without). */
  connections: LocalConnection[];
  /** The preview's page of the local Slack workspaces with "Add to Slack" (with `connections`). */
  workspacesUrl?: string;
  /** The handlers' environment. */
  env: Readonly<Record<string, string>>;
  /** The local Secrets Manager server and the secrets' ids, when started with `secretsManagerPort`. */
  secretsManager?: LocalSecrets;
  /** The live event stream, when started with `eventsPort`. */
  events?: EventsServer;
  /** Every handler log line and metric (`countOf('DigestPosted')`). */
  observability: LocalObservabilityHub;
  gateway: HttpGateway;
  readyInfo(): ReadyInfo;
  /** The digest queue and its DLQ. */
  depths(): Promise<QueueDepths>;
  /**
   * Resolves when the bridge has nothing left to do: no simulator delivery pending (unless
   * `webhooks: false`), no ingest or digest invocation running, and the digest and commands queues
   * empty (messages waiting to be retried count as not empty). Rejects after `timeoutMs` (default 60 s).
   */
  waitForIdle(options?: { timeoutMs?: number; webhooks?: boolean }): Promise<void>;
  /** Stops everything: deliveries, the endpoint, the event source (letting running batches finish), then the servers. */
  close(): Promise<void>;
}

/** The stack's own keys: the digest signs its buttons with one, the local Slack signs its requests with the other. */
export interface StackKeys {
  actionSigningKey: string;
  slackSigningSecret: string;
}

/** What a start registers to close again should a later step fail (closed in reverse). */
export type Cleanup = (() => Promise<void>)[];

/** A problem the user can fix (port in use, bad fixture…): `message` is one line, meant to be printed as is. */
export class LocalStackError extends Error {
  override readonly name = 'LocalStackError';
}

export { generateSecret } from '../simulator/webhooks';
