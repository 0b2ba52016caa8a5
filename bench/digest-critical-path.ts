/**
 * Benchmark 4: digest wall time against its critical path. Every call to a peer the digest talks to
 * (DynamoDB on dynalite, the read API on the simulator, Slack on the local Slack server) passes a
 * latency proxy that adds the same 100 ms and records when the request arrived and when its answer
 * left. The real digest handler (`createDigestHandler(env)`) digests one run.completed per
 * invocation, taken from the local queue as Lambda's event source hands it over.
 *
 * Critical path = the longest chain of the requests actually made in which each started after the
 * one before was answered (counted from the proxies' timestamps, see longestChain), × 100 ms. The
 * digest's own DynamoDB round trips (claim, progress after each post, snapshot, finish) are in it.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { createDigestHandler } from '../functions/digest/create-handler';
import type { WebhookEvent } from '../shared/events';
import { ensureBridgeTable, startLocalDynamo } from '../local/dynamo';
import { SqsServer, createSqsClient as localSqsClient } from '../local/sqs-server';
import { VisibilitySimulator } from '../local/simulator/server';
import { LocalSlackServer } from '../local/slack/server';
import { enqueue, receiveRecords } from '../test/support/sqs-records';
import { LatencyProxy, longestChain, type ProxiedRequest } from './latency-proxy';
import { log, median, quietObservability, round, scaled, useLocalAwsCredentials, type ResultRow } from './lib';

const LATENCY_MS = 100;
const WARMUP_RUNS = 1;
/** Odd, so the median is one run's figure. */
const RUNS = scaled(7, 1);
const TARGET_RATIO = 1.15;
const TABLE = 'bench-digest';
const TOKEN = 'xoxb-bench-digest';

interface DigestRun {
  wallMs: number;
  /** Requests per peer. */
  requests: Record<string, number>;
  /** Length of the longest chain, and its links per peer. */
  chain: number;
  chainByPeer: Record<string, number>;
  criticalPathMs: number;
  ratio: number;
  /** Wall time beyond the critical path (ms): the digest's own work and the peers' processing. */
  overheadMs: number;
}

function countByPeer(requests: readonly ProxiedRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) counts[r.peer] = (counts[r.peer] ?? 0) + 1;
  return counts;
}

export async function runDigestCriticalPath(): Promise<{ rows: ResultRow[]; details: Record<string, unknown> }> {
  useLocalAwsCredentials();
  const dynamo = await startLocalDynamo();
  const sqsServer = await SqsServer.start();
  const sim = await VisibilitySimulator.start();
  const slack = await LocalSlackServer.start({ tokens: [TOKEN] });
  const proxies = [
    await LatencyProxy.start('dynamodb', dynamo.endpoint, LATENCY_MS),
    await LatencyProxy.start('read-api', sim.url, LATENCY_MS),
    await LatencyProxy.start('slack', new URL(slack.apiUrl).origin, LATENCY_MS),
  ] as const;
  const [dynamoProxy, readApiProxy, slackProxy] = proxies;
  const sqs = localSqsClient(sqsServer.url);
  try {
    await ensureBridgeTable(dynamo.client, TABLE);
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'bench-digest', Attributes: { VisibilityTimeout: '60' } })))
      .QueueUrl!;
    const env: Record<string, string> = {
      TABLE_NAME: TABLE,
      QUEUE_URL: queueUrl,
      DLQ_URL: queueUrl,
      // Slack's pace is a deliberate wait, not a cost of the code: measured by bench:scale, not here.
      SLACK_PACE_INTERVAL_MS: '0',
      READ_API_BASE_URL: readApiProxy.url,
      READ_API_KEY: sim.apiKey,
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_API_URL: `${slackProxy.url}${new URL(slack.apiUrl).pathname}`,
      SLACK_DEFAULT_CHANNEL: 'C0BENCHDIGESTS',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_DYNAMODB: dynamoProxy.url,
      AWS_ENDPOINT_URL_SQS: sqsServer.url,
      POWERTOOLS_SERVICE_NAME: 'digest',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
    };
    const handler = createDigestHandler(env, quietObservability());
    const projectId = sim.projectIds()[0]!;
    const context = { getRemainingTimeInMillis: () => 60_000 };

    const runOnce = async (): Promise<DigestRun> => {
      const run = sim.advanceRun(projectId);
      const event: WebhookEvent = {
        id: randomUUID(),
        type: 'run.completed',
        created_at: new Date().toISOString(),
        data: { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
      };
      await enqueue(sqs, queueUrl, event);
      const records = await receiveRecords(sqs, queueUrl, 1);
      if (records.length !== 1) throw new Error(`expected one queued record, got ${records.length}`);
      slack.reset();
      for (const proxy of proxies) proxy.clear();
      const start = performance.now();
      const response = await handler({ Records: records }, context);
      const wallMs = performance.now() - start;
      if (response.batchItemFailures.length > 0) throw new Error('the digest failed; see the handler (observability is quiet here)');
      if (slack.calls().some((c) => !c.ok)) throw new Error('a Slack call failed during the benchmark');
      if (slack.calls('chat.postMessage').length === 0) throw new Error('the digest posted nothing');

      const requests = proxies.flatMap((proxy) => proxy.requests());
      const chain = longestChain(requests);
      const criticalPathMs = chain.length * LATENCY_MS;
      return {
        wallMs,
        requests: countByPeer(requests),
        chain: chain.length,
        chainByPeer: countByPeer(chain),
        criticalPathMs,
        ratio: wallMs / criticalPathMs,
        overheadMs: wallMs - criticalPathMs,
      };
    };

    log(`digest: ${WARMUP_RUNS} warm-up + ${RUNS} digests with ${LATENCY_MS} ms on every DynamoDB, read-API and Slack call`);
    for (let i = 0; i < WARMUP_RUNS; i++) await runOnce();
    const runs: DigestRun[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await runOnce());

    const ratio = median(runs.map((r) => r.ratio));
    const b = `digest critical path (${LATENCY_MS} ms/call on DynamoDB, read API, Slack)`;
    const chain = median(runs.map((r) => r.chain));
    const rows: ResultRow[] = [
      { benchmark: b, figure: 'wall time, median', value: round(median(runs.map((r) => r.wallMs)), 0), unit: 'ms' },
      {
        benchmark: b,
        figure: `critical path (${chain} chained requests, median) × ${LATENCY_MS} ms`,
        value: median(runs.map((r) => r.criticalPathMs)),
        unit: 'ms',
      },
      {
        benchmark: b,
        figure: 'wall / critical path, median',
        value: round(ratio, 3),
        unit: '×',
        target: `≤ ${TARGET_RATIO}×`,
        pass: ratio <= TARGET_RATIO,
      },
    ];
    return {
      rows,
      details: {
        latencyMs: LATENCY_MS,
        warmupRuns: WARMUP_RUNS,
        runs: runs.map((r) => ({ ...r, wallMs: round(r.wallMs, 1), ratio: round(r.ratio, 3), overheadMs: round(r.overheadMs, 1) })),
        counting:
          'critical path = longest chain of recorded requests (each started after the previous was answered) across DynamoDB, read API and Slack, × latency',
      },
    };
  } finally {
    sqs.destroy();
    await Promise.all([...proxies.map((p) => p.close()), sqsServer.close(), dynamo.close(), sim.close(), slack.close()]);
  }
}
