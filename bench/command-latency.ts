/**
 * `npx tsx bench/command-latency.ts`: how long a user waits for `/visibility status` while a burst of
 * runs is queued. The whole local stack runs (`startLocalStack`: the real Slack, digest and ingest
 * handlers, local SQS with its event source pollers, dynalite, the simulator, the local Slack server);
 * 2,000 run.completed events go on the digest queue at once, then a status command is typed every
 * `--every` ms while the backlog drains. Latency: from the signed slash command leaving the local Slack
 * to its answer arriving at the command's response_url (what the user sees as "the answer").
 *
 * Reported (stdout and bench/command-latency-results.json): p50 / p99 / max of the answers, how many
 * runs were still queued when each command was typed, and how long the backlog took to drain.
 * Target: p99 < 3 s.
 *
 * Options: --runs 2000 --commands 30 --every 1000 (ms between commands) --timeout 900 (s per answer).
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { WebhookEvent } from '../shared/events';
import { startLocalStack, type LocalStack } from '../local/stack';
import type { LocalSlackServer } from '../local/slack/server';
import { enqueue } from '../test/support/sqs-records';
import { PROJECT_ROOT, log, machineInfo, measuredCommit, percentile, round, runConcurrent, sleep } from './lib';

export const COMMAND_LATENCY_RESULTS = join(PROJECT_ROOT, 'bench', 'command-latency-results.json');
const TARGET_P99_MS = 3000;

interface Options {
  runs: number;
  commands: number;
  everyMs: number;
  timeoutS: number;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: { runs: { type: 'string' }, commands: { type: 'string' }, every: { type: 'string' }, timeout: { type: 'string' } },
  });
  const int = (value: string | undefined, fallback: number) =>
    value === undefined ? fallback : Math.max(1, Number.parseInt(value, 10) || fallback);
  return {
    runs: int(values.runs, 2000),
    commands: int(values.commands, 30),
    everyMs: int(values.every, 1000),
    timeoutS: int(values.timeout, 900),
  };
}

interface Sample {
  latencyMs: number;
  /** Runs on the digest queue (visible + in flight) when the command was typed. */
  queuedAtSend: number;
}

async function main(): Promise<void> {
  const options = readOptions();
  const stack = await startLocalStack({ logLevel: 'silent' });
  try {
    const slack = stack.slack;
    if (!slack) throw new Error('the local stack runs without its local Slack server');
    log(
      `command-latency: ${options.runs} runs over ${stack.projectIds.length} projects, ${options.commands} status commands every ${options.everyMs} ms`,
    );
    const loadStart = loadavg().map((x) => round(x, 2));
    const burstStart = performance.now();
    await queueRuns(stack, options.runs);
    log(`queued ${options.runs} runs in ${round((performance.now() - burstStart) / 1000, 1)} s`);
    const drained = watchDrain(stack, burstStart);
    const samples = await typeCommands(stack, slack, options);
    const drainMs = await drained;
    report(options, samples, drainMs, loadStart);
  } finally {
    await stack.close();
  }
}

/** The burst: one run.completed per project in turn, each newer than the last (so most are digested, not superseded). */
async function queueRuns(stack: LocalStack, runs: number): Promise<void> {
  const base = Date.now() - runs * 1000;
  const projects = stack.projectIds;
  await runConcurrent(runs, 16, async (i) => {
    const projectId = projects[i % projects.length]!;
    const event: WebhookEvent = {
      id: `evt_bench_${randomUUID()}`,
      type: 'run.completed',
      created_at: new Date(base + i * 1000).toISOString(),
      data: { project_id: projectId, run_id: `run_bench_${i}`, status: 'completed', answers: 40 },
    };
    await enqueue(stack.sqs.client, stack.sqs.queueUrl, event);
  });
}

async function queued(stack: LocalStack): Promise<number> {
  const { queue } = await stack.depths();
  return queue.visible + queue.inFlight + queue.delayed;
}

/** Resolves with the time from the burst until the digest queue is empty. */
async function watchDrain(stack: LocalStack, since: number): Promise<number> {
  for (;;) {
    if ((await queued(stack)) === 0) return performance.now() - since;
    await sleep(250);
  }
}

async function typeCommands(stack: LocalStack, slack: LocalSlackServer, options: Options): Promise<Sample[]> {
  const pending: Promise<Sample>[] = [];
  for (let i = 0; i < options.commands; i++) {
    const queuedAtSend = await queued(stack);
    const project = stack.projectIds[i % stack.projectIds.length]!;
    const channel = `C0BENCH${String(i).padStart(4, '0')}`;
    const latency = statusLatency(slack, project, channel, options.timeoutS * 1000);
    pending.push(latency.then((latencyMs) => ({ latencyMs, queuedAtSend })));
    await sleep(options.everyMs);
  }
  return Promise.all(pending);
}

/** One `/visibility status` in its own channel: ms until its deferred answer reached the response_url. */
async function statusLatency(slack: LocalSlackServer, project: string, channel: string, timeoutMs: number): Promise<number> {
  // The channel sees two replies: the acknowledgement (HTTP answer) and the deferred answer (response_url).
  const answeredTwice = (): boolean => slack.ephemerals(channel).length + slack.messages(channel).length >= 2;
  const started = performance.now();
  let answeredAt: number | undefined;
  let stop = (): void => undefined;
  const answered = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no answer in ${channel} within ${timeoutMs} ms`));
    }, timeoutMs);
    stop = slack.subscribe(() => {
      if (!answeredTwice()) return;
      answeredAt ??= performance.now();
      clearTimeout(timer);
      stop();
      resolve();
    });
  });
  const answer = await slack.sendCommand({ channel, line: `/visibility status ${project}` });
  if (answer.status !== 200) throw new Error(`the status command in ${channel} was answered HTTP ${answer.status}`);
  await answered;
  return (answeredAt ?? performance.now()) - started;
}

function report(options: Options, samples: readonly Sample[], drainMs: number, loadStart: number[]): void {
  const latencies = samples.map((s) => s.latencyMs);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  const result = {
    command: `npx tsx bench/command-latency.ts --runs ${options.runs} --commands ${options.commands} --every ${options.everyMs}`,
    ...measuredCommit(),
    machine: machineInfo(),
    loadAverage: { start: loadStart, end: loadavg().map((x) => round(x, 2)) },
    runs: options.runs,
    commands: samples.length,
    p50Ms: round(p50, 0),
    p99Ms: round(p99, 0),
    maxMs: round(Math.max(...latencies), 0),
    minMs: round(Math.min(...latencies), 0),
    targetP99Ms: TARGET_P99_MS,
    pass: p99 < TARGET_P99_MS,
    runsQueuedAtFirstCommand: samples[0]?.queuedAtSend ?? null,
    runsQueuedAtLastCommand: samples.at(-1)?.queuedAtSend ?? null,
    backlogDrainSeconds: round(drainMs / 1000, 1),
    samples: samples.map((s) => ({ latencyMs: round(s.latencyMs, 0), queuedAtSend: s.queuedAtSend })),
  };
  writeFileSync(COMMAND_LATENCY_RESULTS, `${JSON.stringify(result, null, 2)}\n`);
  const { samples: _omitted, machine: _machine, ...summary } = result;
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (!result.pass) process.exitCode = 1;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
