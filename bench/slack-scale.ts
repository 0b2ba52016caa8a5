/**
 * `npm run bench:scale`: the Slack app at scale, on local peers (dynalite, local SQS, the simulator
 * serving a fixture of N projects, the local Slack server). Every project is subscribed in 3 channels
 * of a shared pool; bursts ("waves") of one run.completed per project are queued at once and drained
 * by W concurrent digest invocations (the real handler, `createDigestHandler`, as Lambda's event
 * source would call it: partial batch responses, successes deleted, failures back on the queue).
 *
 * The local Slack server enforces Slack's per-channel limit (one post per second, short bursts allowed:
 * see SLACK_LIMIT) and answers 429 `ratelimited` to a post that comes too soon, as Slack would. The
 * bridge itself never counts on a burst: it paces every channel at 1.1 s.
 *
 * Reported:
 * - Slack 429 answers: must be 0 (the bridge's pacer keeps under the limit; a 429 would cost a retry);
 * - exactly once: every (event, channel) top-level post at most once, and every project's newest run
 *   in each of its channels exactly once;
 * - spacing: the closest two posts in a channel, and how many came under 1 s after the previous one;
 * - total time vs the pace floor (the busiest channel's posts at Slack's 1/s) and, with --machine-floor,
 *   vs the larger of that and the machine floor (the same burst with the pace off, on fresh peers): one
 *   Node process on 2 shared cores may not keep up with what Slack's pace allows across 300 channels.
 *
 * Options: --projects 1000 --channels 300 --waves 2 --workers 10 [--machine-floor] (scale down for a
 * quick check; fewer channels make Slack's pace the bound rather than the machine).
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { CreateQueueCommand, DeleteMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createDigestHandler } from '../functions/digest/create-handler';
import { ENV } from '../shared/contracts';
import { DynamoSubscriptionStore } from '../shared/adapters/dynamo-subscription-store';
import type { WebhookEvent } from '../shared/events';
import { ensureBridgeTable, startLocalDynamo } from '../local/dynamo';
import { SqsServer, createSqsClient as localSqsClient } from '../local/sqs-server';
import { VisibilitySimulator } from '../local/simulator/server';
import { LocalSlackServer, type RecordedCall } from '../local/slack/server';
import { enqueue, receiveRecords } from '../test/support/sqs-records';
import { log, quietObservability, round, runConcurrent, useLocalAwsCredentials } from './lib';

const TABLE = 'bench-scale';
const TOKEN = 'xoxb-bench-scale';
const CHANNELS_PER_PROJECT = 3;
/** Gives up when nothing is left to do for this long (a stuck message would show as a missing post). */
const IDLE_LIMIT_MS = 120_000;

interface ScaleOptions {
  projects: number;
  channels: number;
  waves: number;
  workers: number;
  /** Also measure the machine's floor: the same work with Slack's pace off (interval 0, no server limit). */
  machineFloor: boolean;
}

function readOptions(): ScaleOptions {
  const { values } = parseArgs({
    options: {
      projects: { type: 'string' },
      channels: { type: 'string' },
      waves: { type: 'string' },
      workers: { type: 'string' },
      'machine-floor': { type: 'boolean' },
    },
  });
  const int = (value: string | undefined, fallback: number) =>
    value === undefined ? fallback : Math.max(1, Number.parseInt(value, 10) || fallback);
  const projects = int(values.projects, 1000);
  return {
    projects,
    channels: Math.max(CHANNELS_PER_PROJECT, int(values.channels, 300)),
    waves: int(values.waves, 2),
    workers: int(values.workers, 10),
    machineFloor: values['machine-floor'] === true,
  };
}

function fixture(count: number) {
  return {
    seed: 11,
    projects: Array.from({ length: count }, (_, i) => ({
      id: `proj-${i}`,
      name: `Project ${i}`,
      industry: 'Retail',
      visibility: {
        metrics: [{ label: 'Visibility score', value: 40 + (i % 20), caption: 'Share of answers' }],
        engines: [{ engine: 'ChatGPT', visibility: 30 + (i % 30) }],
        alerts: [],
      },
      gaps: [
        {
          prompt_id: `pr-${i}`,
          prompt_ref: 1,
          prompt_text: 'Best tent?',
          platforms_losing: ['Gemini'],
          top_competitor: 'Rival',
          trend: 'stable',
        },
      ],
    })),
  };
}

function channelsOf(project: number, pool: number): string[] {
  return Array.from({ length: CHANNELS_PER_PROJECT }, (_, k) => `C${String((project + k) % pool).padStart(6, '0')}`);
}

async function main(): Promise<void> {
  useLocalAwsCredentials();
  const options = readOptions();
  log(
    `slack-scale: ${options.projects} projects × ${CHANNELS_PER_PROJECT} channels (pool ${options.channels}), ${options.waves} waves, ${options.workers} workers`,
  );
  const machineFloorMs = options.machineFloor ? (await runOnce(options, false)).totalMs : undefined;
  if (machineFloorMs !== undefined) log(`machine floor (no pace): ${round(machineFloorMs / 1000, 1)} s`);
  const paced = await runOnce(options, true);
  report(paced.calls, paced.newest, options, paced.totalMs, machineFloorMs);
}

/** One burst on fresh peers; `paced`: Slack's limit enforced by the server and the bridge's pace on. */
async function runOnce(
  options: ScaleOptions,
  paced: boolean,
): Promise<{ totalMs: number; calls: RecordedCall[]; newest: Map<number, string> }> {
  const dynamo = await startLocalDynamo();
  const sqsServer = await SqsServer.start();
  const sim = await VisibilitySimulator.start({ fixture: fixture(options.projects) });
  // Slack's own per-channel limit, enforced by the server: a post that comes too soon is answered 429.
  const slack = await LocalSlackServer.start({ tokens: [TOKEN], ...(paced ? { channelPace: SLACK_LIMIT } : {}) });
  const sqs = localSqsClient(sqsServer.url);
  try {
    await ensureBridgeTable(dynamo.client, TABLE);
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'scale', Attributes: { VisibilityTimeout: '60' } }))).QueueUrl!;
    const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'scale-dlq' }))).QueueUrl!;
    await subscribeAll(new DynamoSubscriptionStore(dynamo.client, TABLE), options);
    const env = digestEnv({
      queueUrl,
      dlqUrl,
      readApi: sim.url,
      apiKey: sim.apiKey,
      slackApi: slack.apiUrl,
      dynamo: dynamo.endpoint,
      sqs: sqsServer.url,
    });
    // The floor keeps the pacer's round trips and drops only its waits.
    const handler = createDigestHandler(paced ? env : { ...env, [ENV.slackPaceIntervalMs]: '0' }, quietObservability());

    const newest = await enqueueWaves(sqs, queueUrl, options);
    const start = performance.now();
    await drain(sqs, queueUrl, options.workers, handler, () => allPosted(slack.calls('chat.postMessage'), newest, options.channels));
    return { totalMs: performance.now() - start, calls: slack.calls(), newest };
  } finally {
    sqs.destroy();
    await Promise.all([sqsServer.close(), dynamo.close(), sim.close(), slack.close()]);
  }
}

async function subscribeAll(store: DynamoSubscriptionStore, options: ScaleOptions): Promise<void> {
  const actor = { userId: 'U0BENCH' };
  await runConcurrent(options.projects, 16, async (i) => {
    for (const channel of channelsOf(i, options.channels))
      await store.subscribe({ projectId: `proj-${i}`, projectName: `Project ${i}`, channel, actor, nowMs: Date.now() });
  });
}

function digestEnv(at: {
  queueUrl: string;
  dlqUrl: string;
  readApi: string;
  apiKey: string;
  slackApi: string;
  dynamo: string;
  sqs: string;
}): Record<string, string> {
  return {
    TABLE_NAME: TABLE,
    QUEUE_URL: at.queueUrl,
    DLQ_URL: at.dlqUrl,
    READ_API_BASE_URL: at.readApi,
    READ_API_KEY: at.apiKey,
    SLACK_BOT_TOKEN: TOKEN,
    SLACK_API_URL: at.slackApi,
    SLACK_DEFAULT_CHANNEL: 'C0BENCHDIGESTS',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_DYNAMODB: at.dynamo,
    AWS_ENDPOINT_URL_SQS: at.sqs,
    POWERTOOLS_SERVICE_NAME: 'digest',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
  };
}

/** Queues every wave at once (a burst); returns each project's newest event id. */
async function enqueueWaves(sqs: SQSClient, queueUrl: string, options: ScaleOptions): Promise<Map<number, string>> {
  const newest = new Map<number, string>();
  const base = Date.now();
  for (let wave = 0; wave < options.waves; wave++) {
    await runConcurrent(options.projects, 16, async (i) => {
      const event: WebhookEvent = {
        id: randomUUID(),
        type: 'run.completed',
        created_at: new Date(base + wave * 60_000 + i).toISOString(),
        data: { project_id: `proj-${i}`, run_id: `run-${wave}-${i}`, status: 'completed', answers: 40 },
      };
      newest.set(i, event.id);
      await enqueue(sqs, queueUrl, event);
    });
  }
  return newest;
}

type Handler = ReturnType<typeof createDigestHandler>;

/** W invocations side by side, as Lambda's event source would run them, until `done` or idle too long. */
async function drain(sqs: SQSClient, queueUrl: string, workers: number, handler: Handler, done: () => boolean): Promise<void> {
  let lastWork = performance.now();
  const worker = async (): Promise<void> => {
    while (!done() && performance.now() - lastWork < IDLE_LIMIT_MS) {
      const records = await receiveRecords(sqs, queueUrl, 10);
      if (records.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      lastWork = performance.now();
      const remaining = 60_000;
      const response = await handler({ Records: records }, { getRemainingTimeInMillis: () => remaining });
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      for (const record of records) {
        if (!failed.has(record.messageId))
          await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: record.receiptHandle }));
      }
      lastWork = performance.now();
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
}

function eventOf(call: RecordedCall): string | undefined {
  const metadata = call.metadata as { event_payload?: { event_id?: unknown } } | undefined;
  const id = metadata?.event_payload?.event_id;
  return typeof id === 'string' ? id : undefined;
}

function topLevelPosts(calls: readonly RecordedCall[]): RecordedCall[] {
  return calls.filter((c) => c.method === 'chat.postMessage' && c.ok && c.thread_ts === undefined);
}

function allPosted(calls: readonly RecordedCall[], newest: ReadonlyMap<number, string>, pool: number): boolean {
  const seen = new Set(topLevelPosts(calls).map((c) => `${c.channel}|${eventOf(c)}`));
  for (const [project, eventId] of newest)
    for (const channel of channelsOf(project, pool)) if (!seen.has(`${channel}|${eventId}`)) return false;
  return true;
}

/**
 * Slack's documented limit for chat.postMessage: one message per second per channel, "short bursts >1
 * allowed" (with no guarantee). Modelled as GCRA with the smallest burst that is more than one.
 */
const SLACK_LIMIT = { intervalMs: 1000, burst: 2 } as const;

/** How the posts of one channel were spaced: the closest two, and how many came less than Slack's interval apart. */
function spacing(times: readonly number[]): { closestMs: number; underInterval: number } {
  const sorted = [...times].sort((a, b) => a - b);
  let closestMs = Number.POSITIVE_INFINITY;
  let underInterval = 0;
  for (let i = 1; i < sorted.length; i++) {
    const gap = sorted[i]! - sorted[i - 1]!;
    closestMs = Math.min(closestMs, gap);
    if (gap < SLACK_LIMIT.intervalMs) underInterval += 1;
  }
  return { closestMs, underInterval };
}

function report(
  calls: readonly RecordedCall[],
  newest: ReadonlyMap<number, string>,
  options: ScaleOptions,
  totalMs: number,
  machineFloorMs: number | undefined,
): void {
  const posts = calls.filter((c) => c.method === 'chat.postMessage' && c.ok);
  const byChannel = new Map<string, number[]>();
  for (const post of posts) byChannel.set(post.channel ?? '', [...(byChannel.get(post.channel ?? '') ?? []), post.at]);
  const slack429 = calls.filter((c) => c.status === 429).length;
  const spacings = [...byChannel.values()].map(spacing);
  const closest = Math.min(...spacings.map((x) => x.closestMs));
  const keys = topLevelPosts(calls).map((c) => `${c.channel}|${eventOf(c)}`);
  const keySet = new Set(keys);
  const duplicates = keys.length - keySet.size;
  const expected = newest.size * CHANNELS_PER_PROJECT;
  const newestPosted = [...newest].reduce(
    (n, [p, id]) => n + channelsOf(p, options.channels).filter((ch) => keySet.has(`${ch}|${id}`)).length,
    0,
  );
  const busiest = Math.max(...[...byChannel.values()].map((t) => t.length));
  const floorMs = Math.max(0, busiest - SLACK_LIMIT.burst) * SLACK_LIMIT.intervalMs;
  const result = {
    ...options,
    posts: posts.length,
    slack429Answers: slack429,
    closestPostsInAChannelMs: Number.isFinite(closest) ? closest : null,
    postsUnder1sAfterThePrevious: spacings.reduce((n, x) => n + x.underInterval, 0),
    topLevelDuplicates: duplicates,
    newestRunPostedPerChannel: `${newestPosted}/${expected}`,
    busiestChannelPosts: busiest,
    totalSeconds: round(totalMs / 1000, 1),
    paceFloorSeconds: round(floorMs / 1000, 1),
    ratioToPaceFloor: floorMs > 0 ? round(totalMs / floorMs, 2) : null,
    // Where this machine can't keep up with what Slack's pace allows, the floor is the same work unpaced.
    machineFloorSeconds: machineFloorMs === undefined ? null : round(machineFloorMs / 1000, 1),
    ratioToFloor: machineFloorMs === undefined ? null : round(totalMs / Math.max(floorMs, machineFloorMs), 2),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (slack429 > 0 || duplicates > 0 || newestPosted !== expected) process.exitCode = 1;
}

await main();
