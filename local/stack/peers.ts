/**
 * The local stack's peers around the functions: the simulator, the local Slack, the API gateway in
 * front of ingest and the Slack function, and what each reports back.
 */
import { appendFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describeError } from '../../shared/observability';
import { ReadApiClient } from '../../shared/adapters/read-api';
import type { IngestHandler } from '../../functions/ingest/create-handler';
import { LocalSlackServer } from '../slack/server';
import { VisibilitySimulator, type SimulatorOptions } from '../simulator/server';
import type { SimulatorFixture } from '../simulator/fixture';
import { HttpGateway, type GatewayRequestInfo, type GatewayRoute } from '../http-gateway';
import type { PollerProblem } from '../lambda-poller';
import type { LocalObservabilityHub } from '../local-observability';
import { isAddressInUse, isCode } from './problems';
import { slackWorkspacesOf, type ConnectionPlan } from './connections';
import { dataPath } from './state';
import { LOCAL_DEFAULTS, LocalStackError, type Cleanup, type DeliverySummary, type LocalStackOptions } from './types';

export async function startSimulator(
  options: LocalStackOptions,
  host: string,
  fixture: SimulatorFixture | undefined,
  cleanup: Cleanup,
  /** A connection's simulator: its own seed and key (on any free port). */
  own: Pick<SimulatorOptions, 'seed' | 'apiKey'> = {},
): Promise<VisibilitySimulator> {
  const start = (port: number): Promise<VisibilitySimulator> =>
    VisibilitySimulator.start({
      port,
      host,
      latencyMs: options.apiLatencyMs,
      fixture,
      seed: options.seed,
      ...own,
      webhooks: { retryScale: options.retryScale ?? LOCAL_DEFAULTS.retryScale, fetch: options.webhookFetch },
    });
  // A bad fixture's FixtureError is said by toStackError (./problems), where every start error is.
  let simulator: VisibilitySimulator;
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
  cleanup.push(() => simulator.close());
  return simulator;
}

export async function startSlack(
  options: LocalStackOptions,
  host: string,
  dataDir: string | undefined,
  cleanup: Cleanup,
  clients: readonly ConnectionPlan[],
): Promise<LocalSlackServer> {
  const { workspaces, channelNames } = slackWorkspacesOf(clients);
  const slack = await LocalSlackServer.start({
    host,
    ...(dataDir !== undefined ? { stateFile: dataPath(dataDir, 'slack') } : {}),
    tokens: [LOCAL_DEFAULTS.slackToken],
    channelNames: { ...LOCAL_DEFAULTS.slackChannelNames, ...channelNames },
    ...(workspaces.length > 0 ? { oauth: { workspaces } } : {}),
    ...(options.slackLogFile !== undefined ? { logFile: options.slackLogFile } : {}),
    ...(options.refuseNativeBlocks === true ? { refuseNativeBlocks: true } : {}),
    ...(options.onSlackMessage ? { onMessage: options.onSlackMessage } : {}),
  });
  cleanup.push(() => slack.close());
  return slack;
}

export async function startGateway(
  options: LocalStackOptions,
  host: string,
  createHandler: () => IngestHandler,
  observability: LocalObservabilityHub,
  cleanup: Cleanup,
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
      functionTimeoutMs: LOCAL_DEFAULTS.ingestTimeoutMs,
      preview,
      onRequest: (info) => {
        if (info.error !== undefined) {
          observability.log(
            'ingest',
            'error',
            info.status === 500 && info.result === undefined ? 'ingest function failed or timed out' : 'ingest function failed',
            describeError(info.error),
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

export function reportPollerProblem(observability: LocalObservabilityHub, problem: PollerProblem): void {
  switch (problem.kind) {
    case 'receive':
      observability.log('sqs', 'warn', 'ReceiveMessage failed; the event source retries', describeError(problem.error));
      return;
    case 'delete':
      observability.log(
        'sqs',
        'warn',
        'DeleteMessageBatch failed; the messages come back after their visibility timeout',
        describeError(problem.error),
      );
      return;
    case 'function_error':
      observability.log('digest', 'error', 'digest function threw; the whole batch goes back to the queue', {
        ...describeError(problem.error),
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

export async function realProjectIds(baseUrl: string, apiKey: string, observability: LocalObservabilityHub): Promise<string[]> {
  try {
    const client = new ReadApiClient({ baseUrl, apiKey, timeoutMs: 5000, maxRateLimitRetries: 1 });
    return (await client.listProjects()).map((p) => p.id);
  } catch (error) {
    observability.log('stack', 'warn', 'could not list the projects of the read API', describeError(error));
    return [];
  }
}

export function checkWritable(file: string): void {
  try {
    appendFileSync(file, '');
  } catch (error) {
    throw new LocalStackError(`cannot write the Slack log file ${file}: ${describeError(error).errorMessage}`);
  }
}
