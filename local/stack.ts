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
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { weeklySweepMessage } from '../shared/weekly/message';
import { describeError } from '../shared/observability';
import { HTTP_PATHS, SERVICES } from '../shared/contracts';
import { createIngestHandler } from '../functions/ingest/create-handler';
import { createDigestHandler } from '../functions/digest/create-handler';
import { createSlackHandler } from '../functions/slack/create-handler';
import type { GatewayRoute } from './http-gateway';
import { LambdaPoller, type LambdaPollerOptions } from './lambda-poller';
import { LocalObservabilityHub, logDeadLetter } from './local-observability';
import { EventsServer } from './events-server';
import { startLocalSecrets } from './local-secrets';
import { LOCAL_TOPOLOGY, type EventSourceSpec } from './topology';
import { WORKSPACES_PATH } from './preview/workspaces';
import { clientRoutes, planConnections, readyConnection, startConnections } from './stack/connections';
import { openDataDir, startDynamo } from './stack/data-dir';
import { functionEnvironments } from './stack/env';
import { checkWritable, realProjectIds, reportPollerProblem, startGateway, startSimulator, startSlack } from './stack/peers';
import { readFixture, toStackError } from './stack/problems';
import { queueDepth, startSqs, waitForIdle } from './stack/queues';
import { keeper, readKeptSecrets } from './stack/state';
import {
  LOCAL_DEFAULTS,
  LocalStackError,
  generateSecret,
  type Cleanup,
  type LocalStack,
  type LocalStackOptions,
  type QueueDepths,
} from './stack/types';

export { LOCAL_DEFAULTS, LocalStackError, type DeliverySummary, type LocalStack, type LocalStackOptions } from './stack/types';
export type { ReadyInfo } from './ready-info';

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

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const host = options.host ?? '127.0.0.1';
  const region = LOCAL_DEFAULTS.region;
  if (options.secrets?.some((s) => s.trim() === ''))
    throw new LocalStackError('a signing secret is empty; pass non-empty values to --secret');
  const maxReceiveCount = options.maxReceiveCount ?? LOCAL_DEFAULTS.maxReceiveCount;
  const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? LOCAL_DEFAULTS.visibilityTimeoutSeconds;
  const functionTimeoutMs = options.functionTimeoutMs ?? LOCAL_DEFAULTS.functionTimeoutMs;
  const fixture = readFixture(options.fixture);
  const clients = planConnections(options.connections ?? 0);
  if (clients.length > 0 && (options.realSlack || options.realReadApi))
    throw new LocalStackError('--connections runs the clients on the simulator and the local Slack; unset the real Slack and read API');
  if (options.slackLogFile !== undefined && !options.realSlack) checkWritable(options.slackLogFile);
  const observability = new LocalObservabilityHub({
    level: options.logLevel ?? 'warn',
    ...(options.logWrite ? { write: options.logWrite } : {}),
    ...(options.logHighlight ? { highlight: options.logHighlight } : {}),
  });

  prepareProcessEnv();
  const cleanup: Cleanup = [];
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
    const { dataDir } = options;
    // Taken first, so it is given up last (after what the stack keeps there is written).
    const releaseDataDir = dataDir !== undefined ? openDataDir(dataDir, options.fresh === true) : undefined;
    if (releaseDataDir) cleanup.push(() => Promise.resolve(releaseDataDir()));
    const kept = dataDir !== undefined ? readKeptSecrets(dataDir) : undefined;
    const secretsFrom = options.secrets?.length ? 'options' : kept ? 'kept' : 'generated';
    const secrets = options.secrets?.length ? [...options.secrets] : (kept?.signing ?? [generateSecret()]);
    const [dynamo, sqs, simulator, slack] = await Promise.all([
      startDynamo(dataDir, cleanup),
      startSqs(
        host,
        region,
        maxReceiveCount,
        visibilityTimeoutSeconds,
        cleanup,
        (moved) => logDeadLetter(observability, moved),
        options.fairQueues,
      ),
      options.realReadApi ? Promise.resolve(undefined) : startSimulator(options, host, fixture, cleanup),
      options.realSlack ? Promise.resolve(undefined) : startSlack(options, host, dataDir, cleanup, clients),
    ]);
    const readApiBaseUrl = options.realReadApi?.baseUrl.replace(/\/+$/, '') ?? simulator?.url ?? '';
    const apiKey = options.realReadApi?.apiKey ?? kept?.readApiKey ?? simulator?.apiKey ?? '';
    const slackChannel = options.realSlack?.channel ?? options.slackChannel ?? LOCAL_DEFAULTS.slackChannel;
    const slackToken = options.realSlack?.token ?? kept?.slackToken ?? LOCAL_DEFAULTS.slackToken;
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
    const keys = kept?.keys ?? {
      actionSigningKey: randomBytes(32).toString('hex'),
      slackSigningSecret: `local-slack-signing-${randomBytes(16).toString('hex')}`,
    };
    const keep =
      dataDir === undefined
        ? undefined
        : keeper(dataDir, {
            sqs: sqs.server,
            localSecrets,
            keys,
            real: { readApi: options.realReadApi !== undefined, slack: options.realSlack !== undefined },
          });
    keep?.restore();
    keep?.save({ signing: secrets, readApiKey: apiKey, slackToken });
    const { env, slackEnv } = functionEnvironments({
      options,
      region,
      sqs,
      dynamoEndpoint: dynamo.endpoint,
      readApiBaseUrl,
      secrets: { signing: secrets, readApiKey: apiKey, slackToken },
      localSecrets,
      slack,
      slackChannel,
      keys,
      functionTimeoutMs,
      maxReceiveCount,
      slackClientId: clients.length > 0 ? slack?.oauth.clientId : undefined,
    });
    const slackSigningSecret = keys.slackSigningSecret;
    // The topology's routes: ingest's are the gateway's default function, the Slack function has its own.
    const routes: GatewayRoute[] = LOCAL_TOPOLOGY.routes.map((route) => ({
      method: route.method,
      path: route.path,
      ...(route.function === SERVICES.slack
        ? { createHandler: () => createSlackHandler(slackEnv, { observability: observability.forService(SERVICES.slack) }) }
        : {}),
    }));
    const clientApi = clientRoutes(clients, slack, observability);
    routes.push(...clientApi.routes);
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
    clientApi.listening(env, gateway.url);
    // The local Slack delivers slash commands and button clicks here, signed, as the Slack app would.
    slack?.connectApp({
      commandsUrl: `${gateway.url}${HTTP_PATHS.slackCommands}`,
      interactionsUrl: `${gateway.url}${HTTP_PATHS.slackInteractions}`,
      eventsUrl: `${gateway.url}${HTTP_PATHS.slackEvents}`,
      signingSecret: slackSigningSecret,
    });

    // The topology's event sources, each its own pollers into the digest function: digests in batches,
    // slash commands one per invocation as soon as they arrive (so an answer never waits behind runs).
    const { eventSources } = LOCAL_TOPOLOGY;
    const pollerOf = (source: EventSourceSpec, queueUrl: string, queueArn: string, local: Partial<LambdaPollerOptions> = {}) =>
      new LambdaPoller({
        client: sqs.pollerClient,
        region,
        createHandler: () => createDigestHandler(env, observability.forService('digest')),
        waitTimeSeconds: options.pollWaitSeconds ?? LOCAL_DEFAULTS.pollWaitSeconds,
        functionTimeoutMs,
        functionName: 'digest',
        onError: (problem) => reportPollerProblem(observability, problem),
        queueUrl,
        queueArn,
        batchSize: source.batchSize,
        batchingWindowSeconds: source.batchingWindowSeconds,
        reportBatchItemFailures: source.reportBatchItemFailures,
        concurrency: source.concurrency,
        ...local,
      });
    const poller = pollerOf(eventSources.digest, sqs.queueUrl, sqs.queueArn, {
      ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    });
    const commandsPoller = pollerOf(eventSources.commands, sqs.commandsQueueUrl, sqs.commandsQueueArn);
    for (const running of [poller, commandsPoller]) {
      running.start();
      cleanup.push(() => running.close());
    }
    // The topology's schedules, as Scheduler runs them: the weekly sweep as often as deployed, the quiet-hours
    // catch-up when `quietSweepMs` asks for it. A send that fails is logged; the next tick sends again.
    const { schedules } = LOCAL_TOPOLOGY;
    const timers = [
      { body: weeklySweepMessage(), everyMs: schedules.weeklySweep.everyMinutes * 60_000 },
      ...(options.quietSweepMs ? [{ body: { kind: schedules.quietCatchUp.kind }, everyMs: options.quietSweepMs }] : []),
    ].map(({ body, everyMs }) => {
      const message = { QueueUrl: sqs.queueUrl, MessageBody: JSON.stringify(body) };
      const warn = (error: unknown) => observability.forService('digest').log.warn(`${body.kind} not queued`, describeError(error));
      // Never keeps the process alive on its own.
      return setInterval(() => void sqs.client.send(new SendMessageCommand(message)).catch(warn), everyMs).unref();
    });
    cleanup.push(() => Promise.resolve(timers.forEach(clearInterval)));

    let webhookId: string | undefined;
    if (simulator && options.registerWebhook !== false) {
      webhookId = simulator.webhooks.addWebhookWithSecret({ url: webhookUrl, secret: secrets[0] ?? generateSecret() }).id;
    }
    const projectIds = simulator ? simulator.projectIds() : await realProjectIds(readApiBaseUrl, apiKey, observability);
    const connections = slack
      ? await startConnections({
          plans: clients,
          startSimulator: (plan, key) => startSimulator(options, host, undefined, cleanup, { seed: plan.seed, apiKey: key }),
          localSecrets,
          dynamo: dynamo.client,
          slack,
          gatewayUrl: gateway.url,
          webhookUrl,
          now: () => Date.now(),
        })
      : [];
    const simulators = [...(simulator ? [simulator] : []), ...connections.map((c) => c.simulator)];
    const workspacesUrl = connections.length > 0 ? `${gateway.url}${WORKSPACES_PATH}` : undefined;

    // Close order: no new deliveries, no new requests, let running digests finish, then the peers.
    cleanup.length = 0;
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => {
      closing ??= (async () => {
        for (const sim of simulators) sim.webhooks.stop();
        timers.forEach(clearInterval);
        await gateway.close(2000).catch(() => undefined);
        const grace = Math.min(functionTimeoutMs, 10_000);
        await Promise.all([poller.close(grace).catch(() => undefined), commandsPoller.close(grace).catch(() => undefined)]);
        try {
          keep?.save({ signing: secrets, readApiKey: apiKey, slackToken });
        } catch (error) {
          observability.log('stack', 'error', `could not keep the state in ${dataDir}`, describeError(error));
        }
        await Promise.allSettled([...simulators.map((sim) => sim.close()), slack?.close(), localSecrets?.close(), events?.close()]);
        sqs.client.destroy();
        sqs.pollerClient.destroy();
        await Promise.allSettled([sqs.server.close(), dynamo.close()]);
        releaseDataDir?.();
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
      secretsFrom,
      ...(dataDir !== undefined ? { dataDir } : {}),
      sqs,
      dynamo: { endpoint: dynamo.endpoint, tableName: LOCAL_DEFAULTS.tableName, client: dynamo.client },
      projectIds,
      connections,
      ...(workspacesUrl !== undefined ? { workspacesUrl } : {}),
      env,
      observability,
      gateway,
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
        connections: connections.map(readyConnection),
        workspacesUrl: workspacesUrl ?? null,
      }),
      depths,
      waitForIdle: (waitOptions = {}) =>
        waitForIdle({ simulators, gateway, pollers: [poller, commandsPoller], depths: [depths, commandDepths] }, waitOptions),
      close,
    };
    return stack;
  } catch (error) {
    await closeAll();
    throw toStackError(error, options);
  }
}

/** The port of a listener's URL. */
function portOf(url: string): number {
  return Number(new URL(url).port);
}
