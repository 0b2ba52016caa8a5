/**
 * The whole bridge on one machine: `startLocalStack()` runs, in this process,
 *
 * - the visibility-service simulator (read API + signed webhooks), unless a real read API is given;
 * - the REAL ingest handler (`createIngestHandler`) behind a local API Gateway HTTP API (payload 2.0)
 *   at `POST /webhook`;
 * - DynamoDB (dynalite, in memory or on disk) with the bridge's table;
 * - SQS (the local SQS server) with the digest queue and its DLQ (redrive after maxReceiveCount), and
 *   the deferred slash commands' own queue and DLQ;
 * - the REAL digest handler (`createDigestHandler`) fed by two local SQS event source mappings, as
 *   deployed: digests in batches, slash commands one at a time as soon as they arrive;
 * - the local Slack Web API server (printing each message), unless a real Slack token is given.
 *
 * Its queues, event sources, routes and schedules are LOCAL_TOPOLOGY (local/topology.ts), which a test
 * holds to the synthesized stack. Used by `npm start` (local/start.ts), the end-to-end tests (test/e2e),
 * the load test and the CLI tests. Several stacks can run in one process: each handler gets its own
 * environment object.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '../shared/util';
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { weeklySweepMessage } from '../shared/weekly/message';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from './dynamo';
import { SqsServer, createSqsClient } from './sqs-server';
import { LocalSlackServer, type RecordedCall } from './slack/server';
import { VisibilitySimulator } from './simulator/server';
import { FixtureError, loadFixtureFile, type SimulatorFixture } from './simulator/data';
import { HttpGateway, type GatewayRequestInfo, type GatewayRoute } from './http-gateway';
import { LambdaPoller, type PollerProblem } from './lambda-poller';
import { startQuietSweep } from './quiet-sweep';
import { describeError } from '../shared/observability';
import type { ReadyInfo } from './ready-info';
import { LOCAL_SLACK_TOKEN } from './ready-info';
import { LocalObservabilityHub, logDeadLetter, type LocalLogLevel } from './local-observability';
import type { DeadLettered } from './sqs/engine';
import { EventsServer } from './events-server';
import { SecretsEndpointTakenError, startLocalSecrets, type LocalSecrets } from './local-secrets';
import { ReadApiClient } from '../shared/adapters/read-api';
import { ConfigError } from '../shared/config-env';
import { readIngestConfig } from '../functions/ingest/runtime';
import { readDigestConfig } from '../functions/digest/runtime';
import { createIngestHandler, type IngestHandler } from '../functions/ingest/create-handler';
import { createDigestHandler } from '../functions/digest/create-handler';
import { createSlackHandler } from '../functions/slack/create-handler';
import { readSlackConfig } from '../functions/slack/runtime';
import { LOCAL_SLACK_APP_ID, LOCAL_SLACK_TEAM_ID } from './slack-app-delivery';
import { DIGEST_DEFAULTS, ENV, HTTP_PATHS, METRICS_NAMESPACE, SERVICES } from '../shared/contracts';
import { LOCAL_TOPOLOGY, type QueueSpec } from './topology';

/** The stage name of the local stack (BRIDGE_STAGE). */
export const LOCAL_STAGE = 'local';

// ---------------------------------------------------------------------------------------------------
// Options and result
// ---------------------------------------------------------------------------------------------------

export const LOCAL_DEFAULTS = {
  region: 'us-east-1',
  tableName: 'visibility-bridge-local',
  queueName: LOCAL_TOPOLOGY.queues.digest.name,
  dlqName: LOCAL_TOPOLOGY.queues.digestDlq.name,
  commandsQueueName: LOCAL_TOPOLOGY.queues.commands.name,
  commandsDlqName: LOCAL_TOPOLOGY.queues.commandsDlq.name,
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
  batchSize: LOCAL_TOPOLOGY.eventSources.digest.batchSize,
  concurrency: LOCAL_TOPOLOGY.eventSources.digest.concurrency,
  /** Slash-command invocations side by side (the deployed event source has no cap; people type few commands). */
  commandsConcurrency: LOCAL_TOPOLOGY.eventSources.commands.concurrency,
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
  /** Keep DynamoDB data in this directory across restarts (default: in memory). */
  dataDir?: string;
  /** The local Slack server appends one JSON line per Web API call here. */
  slackLogFile?: string;
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
  /** The ingest function's timeout (default 8 s, as deployed). */
  ingestTimeoutMs?: number;
  /** Long-poll wait of the event source (default 20 s). */
  pollWaitSeconds?: number;
  /** Messages per digest invocation (default 10). */
  batchSize?: number;
  /** Put a quiet-hours catch-up sweep on the digest queue this often, as the stack's schedule does every 5 minutes (default: never; `npm start`: 30 s). */
  quietSweepMs?: number;
  /** Digest invocations side by side (default 2). */
  concurrency?: number;
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

export type { ReadyInfo } from './ready-info';

export interface LocalStack {
  webhookUrl: string;
  secrets: string[];
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
  /** The handlers' environment. */
  env: Readonly<Record<string, string>>;
  /** The local Secrets Manager server and the secrets' ids, when started with `secretsManagerPort`. */
  secretsManager?: LocalSecrets;
  /** The live event stream, when started with `eventsPort`. */
  events?: EventsServer;
  /** Every handler log line and metric (`countOf('DigestPosted')`). */
  observability: LocalObservabilityHub;
  gateway: HttpGateway;
  /** The digest queue's event source. */
  poller: LambdaPoller;
  /** The commands queue's event source (batch 1, no batching window) into the same digest handler. */
  commandsPoller: LambdaPoller;
  readyInfo(): ReadyInfo;
  /** The digest queue and its DLQ. */
  depths(): Promise<QueueDepths>;
  /** The commands queue and its DLQ. */
  commandDepths(): Promise<QueueDepths>;
  /**
   * Resolves when the bridge has nothing left to do: no simulator delivery pending (unless
   * `webhooks: false`), no ingest or digest invocation running, and the digest and commands queues
   * empty (messages waiting to be retried count as not empty). Rejects after `timeoutMs` (default 20 s).
   */
  waitForIdle(options?: { timeoutMs?: number; webhooks?: boolean }): Promise<void>;
  /** Stops everything: deliveries, the endpoint, the event source (letting running batches finish), then the servers. */
  close(): Promise<void>;
}

/** A problem the user can fix (port in use, bad fixture…): `message` is one line, meant to be printed as is. */
export class LocalStackError extends Error {
  override readonly name = 'LocalStackError';
}

/** A webhook signing secret in the simulator's format. */
export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString('hex')}`;
}

/**
 * The SDK's default credential chain finds these; the local peers accept any. Also silences the
 * SDK's multi-line Node-version notice, which would only clutter the terminal of a local run.
 */
function prepareProcessEnv(): void {
  if (!process.env['AWS_ACCESS_KEY_ID'] || !process.env['AWS_SECRET_ACCESS_KEY']) {
    process.env['AWS_ACCESS_KEY_ID'] = 'local';
    process.env['AWS_SECRET_ACCESS_KEY'] = 'local';
  }
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
}

// ---------------------------------------------------------------------------------------------------
// Start
// ---------------------------------------------------------------------------------------------------

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const host = options.host ?? '127.0.0.1';
  const region = LOCAL_DEFAULTS.region;
  const secrets = options.secrets && options.secrets.length > 0 ? [...options.secrets] : [generateSecret()];
  if (secrets.some((s) => s.trim() === '')) throw new LocalStackError('a signing secret is empty; pass non-empty values to --secret');
  const maxReceiveCount = options.maxReceiveCount ?? LOCAL_DEFAULTS.maxReceiveCount;
  const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? LOCAL_DEFAULTS.visibilityTimeoutSeconds;
  const functionTimeoutMs = options.functionTimeoutMs ?? LOCAL_DEFAULTS.functionTimeoutMs;
  const fixture = readFixture(options.fixture);
  if (options.slackLogFile !== undefined && !options.realSlack) checkWritable(options.slackLogFile);
  const observability = new LocalObservabilityHub({
    level: options.logLevel ?? 'warn',
    ...(options.logWrite ? { write: options.logWrite } : {}),
    ...(options.logHighlight ? { highlight: options.logHighlight } : {}),
  });

  prepareProcessEnv();
  const cleanup: (() => Promise<void>)[] = [];
  const closeAll = async (): Promise<void> => {
    for (const close of cleanup.splice(0).reverse()) {
      try {
        await close();
      } catch {
        // Best effort: the others still close.
      }
    }
  };

  try {
    const [dynamo, sqs, simulator, slack] = await Promise.all([
      startDynamo(options.dataDir, cleanup),
      startSqs(host, region, maxReceiveCount, visibilityTimeoutSeconds, cleanup, (moved) => logDeadLetter(observability, moved)),
      options.realReadApi ? Promise.resolve(undefined) : startSimulator(options, host, fixture, cleanup),
      options.realSlack ? Promise.resolve(undefined) : startSlack(options, host, cleanup),
    ]);
    const readApiBaseUrl = options.realReadApi?.baseUrl.replace(/\/+$/, '') ?? simulator?.url ?? '';
    const apiKey = options.realReadApi?.apiKey ?? simulator?.apiKey ?? '';
    const slackChannel = options.realSlack?.channel ?? options.slackChannel ?? LOCAL_DEFAULTS.slackChannel;
    const leaseSeconds = Math.ceil(functionTimeoutMs / 1000) + 60;
    const slackToken = options.realSlack?.token ?? LOCAL_DEFAULTS.slackToken;
    const localSecrets =
      options.secretsManagerPort === undefined
        ? undefined
        : await startLocalSecrets({
            host,
            port: options.secretsManagerPort,
            region,
            values: { signing: secrets, readApiKey: apiKey, slackToken },
          });
    if (localSecrets) cleanup.push(() => localSecrets.close());
    const events =
      options.eventsPort === undefined ? undefined : await EventsServer.start(observability, { host, port: options.eventsPort });
    if (events) cleanup.push(() => events.close());
    const env: Record<string, string> = {
      [ENV.tableName]: LOCAL_DEFAULTS.tableName,
      [LOCAL_TOPOLOGY.queues.digest.urlEnv]: sqs.queueUrl,
      [LOCAL_TOPOLOGY.queues.commands.urlEnv]: sqs.commandsQueueUrl,
      [LOCAL_TOPOLOGY.queues.digestDlq.urlEnv]: sqs.dlqUrl,
      [ENV.readApiBaseUrl]: readApiBaseUrl,
      ...(localSecrets
        ? localSecrets.env
        : { [ENV.signingSecrets]: JSON.stringify(secrets), [ENV.readApiKey]: apiKey, [ENV.slackBotToken]: slackToken }),
      ...(slack ? { [ENV.slackApiUrl]: slack.apiUrl } : {}),
      [ENV.slackDefaultChannel]: slackChannel,
      ...(options.projectChannels ? { [ENV.slackProjectChannels]: JSON.stringify(options.projectChannels) } : {}),
      // The posting lease must outlast one invocation (the default 120 s does for the default 60 s).
      ...(leaseSeconds > DIGEST_DEFAULTS.leaseSeconds ? { [ENV.digestLeaseSeconds]: String(Math.min(3600, leaseSeconds)) } : {}),
      // The local Slack server has no rate limit: pace it lightly so paced threads never outlast the visibility timeout.
      ...(slack ? { [ENV.slackPaceIntervalMs]: '20' } : {}),
      // A record's budget scales with the (often short) local function timeout, as the stack derives it.
      [ENV.digestRecordBudgetSeconds]: String(Math.floor(functionTimeoutMs / 8000)),
      [ENV.maxReceiveCount]: String(maxReceiveCount),
      // The Slack app serves only the local Slack's workspace and app; the digest signs its buttons with the stack's own key.
      [ENV.slackTeamIds]: slack?.teamId ?? LOCAL_SLACK_TEAM_ID,
      [ENV.slackAppId]: slack?.appId ?? LOCAL_SLACK_APP_ID,
      [ENV.actionSigningKey]: randomBytes(32).toString('hex'),
      [ENV.awsEndpointDynamodb]: dynamo.endpoint,
      [ENV.awsEndpointSqs]: sqs.server.url,
      [ENV.awsRegion]: region,
      [ENV.powertoolsMetricsNamespace]: METRICS_NAMESPACE,
      [ENV.stage]: LOCAL_STAGE,
      ...options.env,
    };

    // Cold-start configuration checks of both functions, so a bad value fails the start in one line.
    try {
      readIngestConfig(env);
      readDigestConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) throw new LocalStackError(error.message);
      throw error;
    }

    // The Slack endpoints run as their own function beside ingest, on the same API (as in the stack).
    const slackSigningSecret = `local-slack-signing-${randomBytes(16).toString('hex')}`;
    const slackEnv = {
      ...env,
      [ENV.slackSigningSecret]: JSON.stringify([slackSigningSecret]),
      [ENV.powertoolsServiceName]: SERVICES.slack,
    };
    try {
      readSlackConfig(slackEnv);
    } catch (error) {
      if (error instanceof ConfigError) throw new LocalStackError(error.message);
      throw error;
    }
    // The topology's routes: ingest's are the gateway's default function, the Slack function has its own.
    const routes: GatewayRoute[] = LOCAL_TOPOLOGY.routes.map((route) => ({
      method: route.method,
      path: route.path,
      ...(route.function === SERVICES.slack
        ? { createHandler: () => createSlackHandler(slackEnv, { observability: observability.forService(SERVICES.slack) }) }
        : {}),
    }));
    const gateway = await startGateway(
      options,
      host,
      () => createIngestHandler(env, observability.forService('ingest')),
      observability,
      cleanup,
      slack,
      routes,
    );
    const webhookUrl = `${gateway.url}${HTTP_PATHS.webhook}`;
    // The local Slack delivers slash commands and button clicks here, signed, as the Slack app would.
    slack?.connectApp({
      commandsUrl: `${gateway.url}${HTTP_PATHS.slackCommands}`,
      interactionsUrl: `${gateway.url}${HTTP_PATHS.slackInteractions}`,
      eventsUrl: `${gateway.url}${HTTP_PATHS.slackEvents}`,
      signingSecret: slackSigningSecret,
    });

    const digestSource = {
      client: sqs.pollerClient,
      region,
      createHandler: () => createDigestHandler(env, observability.forService('digest')),
      waitTimeSeconds: options.pollWaitSeconds ?? LOCAL_DEFAULTS.pollWaitSeconds,
      functionTimeoutMs,
      functionName: 'digest',
      onError: (problem: PollerProblem) => reportPollerProblem(observability, problem),
    };
    const { eventSources } = LOCAL_TOPOLOGY;
    const poller = new LambdaPoller({
      ...digestSource,
      queueUrl: sqs.queueUrl,
      queueArn: sqs.queueArn,
      batchSize: options.batchSize ?? eventSources.digest.batchSize,
      batchingWindowSeconds: eventSources.digest.batchingWindowSeconds,
      reportBatchItemFailures: eventSources.digest.reportBatchItemFailures,
      concurrency: options.concurrency ?? eventSources.digest.concurrency,
    });
    // Slash commands' own event source into the same function: one per invocation, at once.
    const commandsPoller = new LambdaPoller({
      ...digestSource,
      queueUrl: sqs.commandsQueueUrl,
      queueArn: sqs.commandsQueueArn,
      batchSize: eventSources.commands.batchSize,
      batchingWindowSeconds: eventSources.commands.batchingWindowSeconds,
      reportBatchItemFailures: eventSources.commands.reportBatchItemFailures,
      concurrency: eventSources.commands.concurrency,
    });
    poller.start();
    commandsPoller.start();
    cleanup.push(() => poller.close());
    cleanup.push(() => commandsPoller.close());
    const quietSweep =
      options.quietSweepMs !== undefined && options.quietSweepMs > 0
        ? startQuietSweep({
            client: sqs.client,
            queueUrl: sqs.queueUrl,
            intervalMs: options.quietSweepMs,
            onError: (error) => observability.forService('digest').log.warn('quiet-hours sweep not queued', describeError(error)),
          })
        : undefined;
    cleanup.push(() => Promise.resolve(quietSweep?.close()));
    // The topology's weekly-report schedule: the same sweep message on the same queue, as often as deployed.
    const sweepBody = JSON.stringify(weeklySweepMessage());
    // A send that fails is logged; the next tick sends again, as Scheduler would.
    const sendSweep = () =>
      void sqs.client
        .send(new SendMessageCommand({ QueueUrl: sqs.queueUrl, MessageBody: sweepBody }))
        .catch((error: unknown) => observability.forService('digest').log.warn('weekly sweep not queued', describeError(error)));
    const weeklySchedule = setInterval(sendSweep, LOCAL_TOPOLOGY.schedules.weeklySweep.everyMinutes * 60_000);
    weeklySchedule.unref();
    cleanup.push(() => {
      clearInterval(weeklySchedule);
      return Promise.resolve();
    });

    let webhookId: string | undefined;
    if (simulator && options.registerWebhook !== false) {
      webhookId = simulator.webhooks.addWebhookWithSecret({ url: webhookUrl, secret: secrets[0] ?? generateSecret() }).id;
    }
    const projectIds = simulator ? simulator.projectIds() : await realProjectIds(readApiBaseUrl, apiKey, observability);

    // Close order: no new deliveries, no new requests, let running digests finish, then the peers.
    cleanup.length = 0;
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => {
      closing ??= (async () => {
        simulator?.webhooks.stop();
        quietSweep?.close();
        await gateway.close(2000).catch(() => undefined);
        const grace = Math.min(functionTimeoutMs, 10_000);
        await Promise.all([poller.close(grace).catch(() => undefined), commandsPoller.close(grace).catch(() => undefined)]);
        await Promise.allSettled([simulator?.close(), slack?.close(), localSecrets?.close(), events?.close()]);
        sqs.client.destroy();
        sqs.pollerClient.destroy();
        await Promise.allSettled([sqs.server.close(), dynamo.close()]);
      })();
      return closing;
    };

    const depthsOf = async (queueUrl: string, dlqUrl: string): Promise<QueueDepths> => {
      const [queue, dlq] = await Promise.all([queueDepth(sqs.client, queueUrl), queueDepth(sqs.client, dlqUrl)]);
      return { queue, dlq };
    };
    const depths = () => depthsOf(sqs.queueUrl, sqs.dlqUrl);
    const commandDepths = () => depthsOf(sqs.commandsQueueUrl, sqs.commandsDlqUrl);

    const stack: LocalStack = {
      webhookUrl,
      secrets,
      ...(simulator ? { simulator } : {}),
      simulatorUrl: readApiBaseUrl,
      apiKey,
      ...(webhookId !== undefined ? { webhookId } : {}),
      ...(slack ? { slack } : {}),
      ...(localSecrets ? { secretsManager: localSecrets } : {}),
      ...(events ? { events } : {}),
      slackChannel,
      slackSigningSecret,
      sqs: {
        endpoint: sqs.server.url,
        region,
        queueUrl: sqs.queueUrl,
        queueArn: sqs.queueArn,
        dlqUrl: sqs.dlqUrl,
        dlqArn: sqs.dlqArn,
        queueAttributes: sqs.queueAttributes,
        commandsQueueUrl: sqs.commandsQueueUrl,
        commandsQueueArn: sqs.commandsQueueArn,
        commandsDlqUrl: sqs.commandsDlqUrl,
        client: sqs.client,
      },
      dynamo: { endpoint: dynamo.endpoint, tableName: LOCAL_DEFAULTS.tableName, client: dynamo.client },
      projectIds,
      env,
      observability,
      gateway,
      poller,
      commandsPoller,
      readyInfo: () => ({
        webhookUrl,
        secrets: [...secrets],
        simulatorUrl: readApiBaseUrl,
        apiKey,
        projectIds: [...projectIds],
        webhookId: webhookId ?? null,
        sqsEndpoint: sqs.server.url,
        queueUrl: sqs.queueUrl,
        dlqUrl: sqs.dlqUrl,
        commandsQueueUrl: sqs.commandsQueueUrl,
        commandsDlqUrl: sqs.commandsDlqUrl,
        dynamoEndpoint: dynamo.endpoint,
        tableName: LOCAL_DEFAULTS.tableName,
        slackApiUrl: slack?.apiUrl ?? null,
        slackChannel,
        slackSigningSecret,
        apiBaseUrl: gateway.url,
        previewUrl: gateway.previewUrl ?? null,
        region,
        pid: process.pid,
        secretsManagerEndpoint: localSecrets?.server.url ?? null,
        signingSecretsSecretId: localSecrets?.signingSecretsSecretId ?? null,
        readApiKeySecretId: localSecrets?.readApiKeySecretId ?? null,
        slackTokenSecretId: localSecrets?.slackTokenSecretId ?? null,
        eventsUrl: events?.eventsUrl ?? null,
        ports: {
          webhook: portOf(gateway.url),
          simulator: simulator ? portOf(simulator.url) : null,
          sqs: portOf(sqs.server.url),
          dynamodb: portOf(dynamo.endpoint),
          secretsManager: localSecrets ? portOf(localSecrets.server.url) : null,
          slack: slack ? portOf(slack.apiUrl) : null,
          events: events ? portOf(events.url) : null,
        },
      }),
      depths,
      commandDepths,
      waitForIdle: (waitOptions = {}) =>
        waitForIdle({ simulator, gateway, pollers: [poller, commandsPoller], depths: [depths, commandDepths] }, waitOptions),
      close,
    };
    return stack;
  } catch (error) {
    await closeAll();
    throw toStackError(error, options);
  }
}

// ---------------------------------------------------------------------------------------------------
// Pieces
// ---------------------------------------------------------------------------------------------------

function readFixture(fixture: SimulatorFixture | string | undefined): SimulatorFixture | undefined {
  if (typeof fixture !== 'string') return fixture;
  try {
    return loadFixtureFile(fixture);
  } catch (error) {
    throw new LocalStackError(fixtureProblem(error, fixture));
  }
}

function fixtureProblem(error: unknown, file: string | undefined): string {
  const where = file === undefined ? 'the fixture' : `fixture ${file}`;
  if (error instanceof FixtureError) {
    const first = error.issues[0] ?? 'invalid';
    const unreadable = /^\(file\): /.exec(first);
    if (unreadable) return `cannot use ${where}: ${first.slice(unreadable[0].length)}`;
    const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problem${error.issues.length > 2 ? 's' : ''})` : '';
    return `${where} is not a valid simulator fixture: ${first}${more}`;
  }
  return `cannot use ${where}: ${error instanceof Error ? error.message : String(error)}`;
}

function checkWritable(file: string): void {
  try {
    appendFileSync(file, '');
  } catch (error) {
    throw new LocalStackError(`cannot write the Slack log file ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function startDynamo(dataDir: string | undefined, cleanup: (() => Promise<void>)[]): Promise<LocalDynamo> {
  if (dataDir !== undefined) {
    try {
      mkdirSync(dataDir, { recursive: true });
    } catch (error) {
      throw new LocalStackError(`cannot create the data directory ${dataDir}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const release = dataDir !== undefined ? lockDataDir(dataDir) : () => undefined;
  cleanup.push(() => {
    release();
    return Promise.resolve();
  });
  let started: LocalDynamo;
  try {
    started = await startLocalDynamo(dataDir !== undefined ? { dataDir } : {});
  } catch (error) {
    throw new LocalStackError(
      `cannot start DynamoDB (dynalite)${dataDir !== undefined ? ` on ${dataDir}` : ''}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  // Closing also gives the data directory up.
  const dynamo: LocalDynamo = {
    endpoint: started.endpoint,
    client: started.client,
    close: async () => {
      try {
        await started.close();
      } finally {
        release();
      }
    },
  };
  cleanup.push(() => dynamo.close());
  try {
    await ensureBridgeTable(dynamo.client, LOCAL_DEFAULTS.tableName);
  } catch (error) {
    const hint = dataDir !== undefined ? ` (is another bridge using ${dataDir}? stop it or pick another --data-dir)` : '';
    throw new LocalStackError(`cannot create the DynamoDB table${hint}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return dynamo;
}

const LOCK_FILE = 'local-stack.pid';

/**
 * One stack per data directory: dynalite (LevelDB) can't share it, and fails in a way that can't be
 * caught when it tries. A lock file naming a process that is gone is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if (!isCode(error, 'EEXIST')) {
        throw new LocalStackError(`cannot lock the data directory ${dataDir}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const owner = Number(readTextOrEmpty(file).trim());
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
      throw new LocalStackError(
        `the data directory ${dataDir} is in use by another local stack (pid ${owner}); stop it or pick another --data-dir`,
      );
    }
    rmSync(file, { force: true }); // left behind by a stack that is gone
  }
  throw new LocalStackError(`cannot lock the data directory ${dataDir}`);
}

function readTextOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isCode(error, 'EPERM');
  }
}

interface StartedSqs {
  server: SqsServer;
  client: SQSClient;
  pollerClient: SQSClient;
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  dlqArn: string;
  queueAttributes: Record<string, string>;
  commandsQueueUrl: string;
  commandsQueueArn: string;
  commandsDlqUrl: string;
}

async function startSqs(
  host: string,
  region: string,
  maxReceiveCount: number,
  visibilityTimeoutSeconds: number,
  cleanup: (() => Promise<void>)[],
  onDeadLetter: (moved: DeadLettered) => void,
): Promise<StartedSqs> {
  if (!Number.isInteger(maxReceiveCount) || maxReceiveCount < 1 || maxReceiveCount > 1000) {
    throw new LocalStackError(`maxReceiveCount must be a whole number from 1 to 1000, got ${maxReceiveCount}`);
  }
  if (!Number.isInteger(visibilityTimeoutSeconds) || visibilityTimeoutSeconds < 0 || visibilityTimeoutSeconds > 43_200) {
    throw new LocalStackError(`the visibility timeout must be whole seconds from 0 to 43200, got ${visibilityTimeoutSeconds}`);
  }
  const server = await SqsServer.start({ host, region, onDeadLetter });
  cleanup.push(() => server.close());
  const client = createSqsClient(server.url, region);
  const pollerClient = createSqsClient(server.url, region);
  cleanup.push(() => {
    client.destroy();
    pollerClient.destroy();
    return Promise.resolve();
  });
  const create = async (name: string, attributes: Record<string, string>): Promise<string> => {
    const url = (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl;
    if (url === undefined) throw new Error('the local SQS server returned no queue URL');
    return url;
  };
  const { queues } = LOCAL_TOPOLOGY;
  // The topology's settings; the visibility timeout and maxReceiveCount as the caller chose them.
  const attributesOf = (spec: QueueSpec): Record<string, string> => ({
    ...(spec.visibilityTimeoutSeconds !== undefined ? { VisibilityTimeout: String(visibilityTimeoutSeconds) } : {}),
    MessageRetentionPeriod: String(spec.retentionSeconds),
    ...(spec.deadLetter
      ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: server.queueArn(queues[spec.deadLetter.queue].name), maxReceiveCount }) }
      : {}),
  });
  // Dead-letter queues first: the queues' redrive policies name them.
  const dlqUrl = await create(queues.digestDlq.name, attributesOf(queues.digestDlq));
  const queueAttributes = attributesOf(queues.digest);
  const queueUrl = await create(queues.digest.name, queueAttributes);
  const commandsDlqUrl = await create(queues.commandsDlq.name, attributesOf(queues.commandsDlq));
  const commandsQueueUrl = await create(queues.commands.name, attributesOf(queues.commands));
  return {
    server,
    client,
    pollerClient,
    queueUrl,
    queueArn: server.queueArn(LOCAL_DEFAULTS.queueName),
    dlqUrl,
    dlqArn: server.queueArn(LOCAL_DEFAULTS.dlqName),
    queueAttributes,
    commandsQueueUrl,
    commandsQueueArn: server.queueArn(LOCAL_DEFAULTS.commandsQueueName),
    commandsDlqUrl,
  };
}

async function startSimulator(
  options: LocalStackOptions,
  host: string,
  fixture: SimulatorFixture | undefined,
  cleanup: (() => Promise<void>)[],
): Promise<VisibilitySimulator> {
  const start = (port: number): Promise<VisibilitySimulator> =>
    VisibilitySimulator.start({
      port,
      host,
      ...(options.apiLatencyMs !== undefined ? { latencyMs: options.apiLatencyMs } : {}),
      ...(fixture !== undefined ? { fixture } : {}),
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      webhooks: {
        retryScale: options.retryScale ?? LOCAL_DEFAULTS.retryScale,
        ...(options.webhookFetch ? { fetch: options.webhookFetch } : {}),
      },
    });
  let simulator: VisibilitySimulator;
  try {
    try {
      simulator = await start(options.simulatorPort ?? 0);
    } catch (error) {
      if (!isAddressInUse(error) || !options.simulatorPort) throw error;
      if (options.simulatorPortFallback === false) {
        throw new LocalStackError(
          `port ${options.simulatorPort} is already in use; pick another with --simulator-port N (0 = any free port)`,
        );
      }
      simulator = await start(0);
    }
  } catch (error) {
    if (error instanceof FixtureError)
      throw new LocalStackError(fixtureProblem(error, typeof options.fixture === 'string' ? options.fixture : undefined));
    throw error;
  }
  cleanup.push(() => simulator.close());
  return simulator;
}

async function startSlack(options: LocalStackOptions, host: string, cleanup: (() => Promise<void>)[]): Promise<LocalSlackServer> {
  const slack = await LocalSlackServer.start({
    host,
    tokens: [LOCAL_DEFAULTS.slackToken],
    channelNames: LOCAL_DEFAULTS.slackChannelNames,
    ...(options.slackLogFile !== undefined ? { logFile: options.slackLogFile } : {}),
    ...(options.onSlackMessage ? { onMessage: options.onSlackMessage } : {}),
  });
  cleanup.push(() => slack.close());
  return slack;
}

async function startGateway(
  options: LocalStackOptions,
  host: string,
  createHandler: () => IngestHandler,
  observability: LocalObservabilityHub,
  cleanup: (() => Promise<void>)[],
  preview: LocalSlackServer | undefined,
  routes: GatewayRoute[],
): Promise<HttpGateway> {
  const port = options.port ?? 0;
  let gateway: HttpGateway;
  try {
    gateway = await HttpGateway.start({
      port,
      host,
      routes,
      createHandler,
      functionTimeoutMs: options.ingestTimeoutMs ?? LOCAL_DEFAULTS.ingestTimeoutMs,
      preview,
      onRequest: (info) => {
        if (info.error !== undefined) {
          observability.log(
            'ingest',
            'error',
            info.status === 500 && info.result === undefined ? 'ingest function failed or timed out' : 'ingest function failed',
            describe(info.error),
          );
        }
        if (options.onDelivery) {
          try {
            options.onDelivery(summarise(info));
          } catch {
            // A printing callback must not break the endpoint.
          }
        }
      },
    });
  } catch (error) {
    if (isAddressInUse(error))
      throw new LocalStackError(`port ${port} is already in use; stop what uses it or pick another port with --port N (0 = any free port)`);
    if (isCode(error, 'EACCES')) throw new LocalStackError(`not allowed to listen on port ${port}; pick a port above 1023 with --port N`);
    throw error;
  }
  cleanup.push(() => gateway.close());
  return gateway;
}

function summarise(info: GatewayRequestInfo): DeliverySummary {
  const headers: APIGatewayProxyEventV2['headers'] = info.event?.headers ?? {};
  let outcome = info.status >= 500 && info.result === undefined ? 'function_error' : `http_${info.status}`;
  if (info.result?.body !== undefined) {
    try {
      const parsed = JSON.parse(info.result.body) as { result?: unknown; error?: unknown };
      if (typeof parsed.result === 'string') outcome = parsed.result;
      else if (typeof parsed.error === 'string') outcome = parsed.error;
    } catch {
      // Not JSON: keep the status.
    }
  } else if (info.event === undefined) {
    outcome = info.status === 404 ? 'no_route' : outcome;
  }
  return {
    method: info.method,
    path: info.path,
    status: info.status,
    durationMs: info.durationMs,
    deliveryId: headers['x-service-delivery'],
    eventType: headers['x-service-event'],
    outcome,
  };
}

function reportPollerProblem(observability: LocalObservabilityHub, problem: PollerProblem): void {
  switch (problem.kind) {
    case 'receive':
      observability.log('sqs', 'warn', 'ReceiveMessage failed; the event source retries', describe(problem.error));
      return;
    case 'delete':
      observability.log(
        'sqs',
        'warn',
        'DeleteMessageBatch failed; the messages come back after their visibility timeout',
        describe(problem.error),
      );
      return;
    case 'function_error':
      observability.log('digest', 'error', 'digest function threw; the whole batch goes back to the queue', {
        ...describe(problem.error),
        messages: problem.messageIds.length,
      });
      return;
    case 'timeout':
      observability.log(
        'digest',
        'error',
        `digest function timed out after ${problem.timeoutMs} ms; the whole batch goes back to the queue`,
        { messages: problem.messageIds.length },
      );
      return;
    case 'invalid_response':
      observability.log('digest', 'error', `digest function answered an invalid batch response: ${problem.detail}`, {
        messages: problem.messageIds.length,
      });
      return;
  }
}

async function realProjectIds(baseUrl: string, apiKey: string, observability: LocalObservabilityHub): Promise<string[]> {
  try {
    const client = new ReadApiClient({ baseUrl, apiKey, timeoutMs: 5000, maxRateLimitRetries: 1 });
    return (await client.listProjects()).map((p) => p.id);
  } catch (error) {
    observability.log('stack', 'warn', 'could not list the projects of the read API', describe(error));
    return [];
  }
}

async function queueDepth(client: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const answer = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const read = (name: string): number => Number(answer.Attributes?.[name as keyof typeof answer.Attributes] ?? 0);
  return {
    visible: read('ApproximateNumberOfMessages'),
    inFlight: read('ApproximateNumberOfMessagesNotVisible'),
    delayed: read('ApproximateNumberOfMessagesDelayed'),
  };
}

async function waitForIdle(
  parts: {
    simulator: VisibilitySimulator | undefined;
    gateway: HttpGateway;
    pollers: readonly LambdaPoller[];
    depths: readonly (() => Promise<QueueDepths>)[];
  },
  options: { timeoutMs?: number; webhooks?: boolean },
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  let quietChecks = 0;
  for (;;) {
    const remaining = deadline - Date.now();
    if (options.webhooks !== false && parts.simulator && remaining > 0) {
      await Promise.race([parts.simulator.webhooks.idle(), sleep(remaining)]);
    }
    const invocations = parts.pollers.reduce((n, poller) => n + poller.inFlight, 0);
    const busy = parts.gateway.inFlight + invocations;
    const queues = (await Promise.all(parts.depths.map((depths) => depths()))).map((depths) => depths.queue);
    const sum = (field: keyof QueueDepth): number => queues.reduce((n, queue) => n + queue[field], 0);
    const queued = sum('visible') + sum('inFlight') + sum('delayed');
    const state = `${parts.gateway.inFlight} ingest and ${invocations} digest invocation(s) running, ${sum('visible')} visible / ${sum('inFlight')} in flight / ${sum('delayed')} delayed on the queues`;
    if (busy === 0 && queued === 0) {
      quietChecks += 1;
      if (quietChecks >= 2) return;
    } else {
      quietChecks = 0;
    }
    if (Date.now() >= deadline) throw new Error(`the local stack is not idle after ${timeoutMs} ms: ${state}`);
    await sleep(quietChecks > 0 ? 20 : 25);
  }
}

/** The port of a listener's URL. */
function portOf(url: string): number {
  return Number(new URL(url).port);
}

function describe(error: unknown): { errorName: string; errorMessage: string } {
  if (error instanceof Error) return { errorName: error.name, errorMessage: error.message };
  return { errorName: typeof error, errorMessage: String(error) };
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

function isAddressInUse(error: unknown): boolean {
  return isCode(error, 'EADDRINUSE');
}

function toStackError(error: unknown, options: LocalStackOptions): Error {
  if (error instanceof LocalStackError) return error;
  if (error instanceof SecretsEndpointTakenError) return new LocalStackError(error.message);
  if (error instanceof FixtureError)
    return new LocalStackError(fixtureProblem(error, typeof options.fixture === 'string' ? options.fixture : undefined));
  if (isAddressInUse(error))
    return new LocalStackError(`a local server could not listen: ${error instanceof Error ? error.message : String(error)}`);
  return error instanceof Error ? error : new Error(String(error));
}
