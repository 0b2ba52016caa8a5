/**
 * Benchmark 4: digest wall time against its critical path. Every read-API call (the simulator) and
 * every Slack call (the local Slack server) takes 100 ms more; DynamoDB (dynalite) and SQS (local
 * server) are not slowed. The real digest handler (`createDigestHandler(env)`) digests one
 * run.completed per invocation, taken from the local queue as Lambda's event source hands it over.
 *
 * Critical path = the longest chain of calls that must wait for each other, × 100 ms:
 * the reads gaps → results → reasoning (3, counted from the simulator's log: 2 when no result had a
 * card, 1 when there was no gap; projects and visibility run beside them), then the Slack calls,
 * each after the one before (the top-level post, then every thread reply in order), counted from
 * the Slack server's log. So critical path = (3 + posts) × 100 ms.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { createDigestHandler } from '../functions/digest/create-handler';
import { createSqsClient, LOCAL_CREDENTIALS } from '../shared/adapters/aws-clients';
import type { WebhookEvent } from '../shared/events';
import { ensureBridgeTable, startLocalDynamo } from '../local/dynamo';
import { SqsServer } from '../local/sqs-server';
import { VisibilitySimulator } from '../local/simulator/server';
import { LocalSlackServer } from '../local/slack-server';
import { enqueue, receiveRecords } from '../test/support/sqs-records';
import { log, median, quietObservability, round, useLocalAwsCredentials, type ResultRow } from './lib';

const LATENCY_MS = 100;
const WARMUP_RUNS = 1;
const RUNS = 6;
const TARGET_RATIO = 1.15;
const TABLE = 'bench-digest';
const TOKEN = 'xoxb-bench-digest';

interface DigestRun {
  wallMs: number;
  readDepth: number;
  reads: number;
  slackCalls: number;
  posts: number;
  criticalPathMs: number;
  ratio: number;
  /** Where the time beyond the injected latency went (ms; see `overheadOf`). */
  overheadMs: Overhead;
}

interface Overhead {
  /** Invocation start → first read-API request arrives (record parsing, the DynamoDB claim). */
  beforeFirstRead: number;
  /** Longest read chain, first request → last response, minus depth × latency. */
  inReadChain: number;
  /** Last read response → first Slack call arrives (snapshot read, rendering). */
  readsToFirstPost: number;
  /** Sum over consecutive Slack calls of (gap − latency): the progress write after each post. */
  betweenPosts: number;
  /** Last Slack call answered → invocation returns (progress, snapshot and finish writes). */
  afterLastPost: number;
}

/** Splits the wall time of one digest along its timeline (epoch ms from the peers' logs). */
function overheadOf(startEpoch: number, endEpoch: number, reads: { at: number; finishedAt: number }[], slackArrivals: number[], depth: number): Overhead {
  const firstRead = Math.min(...reads.map((r) => r.at));
  const lastReadEnd = Math.max(...reads.map((r) => r.finishedAt));
  const sortedSlack = [...slackArrivals].sort((a, b) => a - b);
  let between = 0;
  for (let i = 1; i < sortedSlack.length; i++) between += sortedSlack[i]! - sortedSlack[i - 1]! - LATENCY_MS;
  const firstPost = sortedSlack[0] ?? endEpoch;
  const lastPost = sortedSlack[sortedSlack.length - 1] ?? endEpoch;
  return {
    beforeFirstRead: firstRead - startEpoch,
    inReadChain: lastReadEnd - firstRead - depth * LATENCY_MS,
    readsToFirstPost: firstPost - lastReadEnd,
    betweenPosts: between,
    afterLastPost: endEpoch - (lastPost + LATENCY_MS),
  };
}

export async function runDigestCriticalPath(): Promise<{ rows: ResultRow[]; details: Record<string, unknown> }> {
  useLocalAwsCredentials();
  const dynamo = await startLocalDynamo();
  const sqsServer = await SqsServer.start();
  const sim = await VisibilitySimulator.start({ latencyMs: LATENCY_MS });
  const slack = await LocalSlackServer.start({ tokens: [TOKEN], latencyMs: LATENCY_MS });
  const sqs = createSqsClient({ endpoint: sqsServer.url, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, requestTimeoutMs: 5000, connectionTimeoutMs: 1000, maxAttempts: 1 });
  try {
    await ensureBridgeTable(dynamo.client, TABLE);
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'bench-digest', Attributes: { VisibilityTimeout: '60' } }))).QueueUrl!;
    const env: Record<string, string> = {
      TABLE_NAME: TABLE,
      QUEUE_URL: queueUrl,
      READ_API_BASE_URL: sim.url,
      READ_API_KEY: sim.apiKey,
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_API_URL: slack.apiUrl,
      SLACK_DEFAULT_CHANNEL: '#digests',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
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
      sim.clearRequests();
      const startEpoch = Date.now();
      const start = performance.now();
      const response = await handler({ Records: records }, context);
      const wallMs = performance.now() - start;
      const endEpoch = Date.now();
      if (response.batchItemFailures.length > 0) throw new Error('the digest failed; see the handler (observability is quiet here)');

      const requests = sim.requests().filter((r) => r.route !== null && r.route !== 'control');
      const has = (route: string): boolean => requests.some((r) => r.route === route);
      const readDepth = has('reasoning') ? 3 : has('results') ? 2 : 1;
      const calls = slack.calls();
      const posts = calls.filter((c) => c.method === 'chat.postMessage' && c.ok).length;
      if (calls.some((c) => !c.ok)) throw new Error('a Slack call failed during the benchmark');
      const criticalPathMs = (readDepth + calls.length) * LATENCY_MS;
      const reads = requests.map((r) => ({ at: r.at, finishedAt: r.finishedAt ?? endEpoch }));
      return {
        wallMs,
        readDepth,
        reads: requests.length,
        slackCalls: calls.length,
        posts,
        criticalPathMs,
        ratio: wallMs / criticalPathMs,
        overheadMs: overheadOf(startEpoch, endEpoch, reads, calls.map((c) => c.at), readDepth),
      };
    };

    log(`digest: ${WARMUP_RUNS} warm-up + ${RUNS} digests with ${LATENCY_MS} ms on every read-API and Slack call`);
    for (let i = 0; i < WARMUP_RUNS; i++) await runOnce();
    const runs: DigestRun[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await runOnce());

    const ratio = median(runs.map((r) => r.ratio));
    const overheadKeys = Object.keys(runs[0]!.overheadMs) as (keyof Overhead)[];
    const overheadMedians = Object.fromEntries(overheadKeys.map((k) => [k, median(runs.map((r) => r.overheadMs[k]))]));
    const b = 'digest critical path (100 ms/call)';
    const postsMedian = median(runs.map((r) => r.posts));
    const readDepth = median(runs.map((r) => r.readDepth));
    const rows: ResultRow[] = [
      { benchmark: b, figure: 'wall time, median', value: round(median(runs.map((r) => r.wallMs)), 0), unit: 'ms' },
      { benchmark: b, figure: `critical path (${readDepth} chained reads + ${postsMedian} posts) × ${LATENCY_MS} ms`, value: median(runs.map((r) => r.criticalPathMs)), unit: 'ms' },
      { benchmark: b, figure: 'wall / critical path, median', value: round(ratio, 3), unit: '×', target: `≤ ${TARGET_RATIO}×`, pass: ratio <= TARGET_RATIO },
    ];
    return {
      rows,
      details: {
        latencyMs: LATENCY_MS,
        warmupRuns: WARMUP_RUNS,
        runs: runs.map((r) => ({ ...r, wallMs: round(r.wallMs, 1), ratio: round(r.ratio, 3) })),
        overheadMedianMs: overheadMedians,
        counting: 'critical path = (read chain depth from the simulator log + Slack calls from the Slack server log) × latency',
      },
    };
  } finally {
    sqs.destroy();
    await Promise.all([sqsServer.close(), dynamo.close(), sim.close(), slack.close()]);
  }
}
