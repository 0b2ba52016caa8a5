/**
 * Benchmark 3: cold start, the whole first-request cost of a new container. Each function is bundled
 * with esbuild as the stack bundles it (the stack's own options, infra/bridge-function.ts), next to a baseline bundle that holds only the AWS SDK clients the function's bundle
 * holds, each constructed, whose handler replays the very requests a warm-up first invocation of the
 * real bundle made (recorded by proxies in front of every peer; see ./replay-floor). In fresh Node processes the
 * bundle is loaded and its handler invoked once against local peers (dynalite, the local SQS server,
 * the simulator, the local Slack server, all without added latency): what was deferred from load to
 * first use (ICU, SDK credential and endpoint resolution, the first connections) is counted.
 * Spawns are interleaved between the bundles; each ratio is the median of per-cycle paired ratios.
 */
import { randomUUID } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS } from '../shared/adapters/aws-clients';
import { signPayload } from '../shared/signature';
import { ensureBridgeTable, startLocalDynamo } from '../local/dynamo';
import { SqsServer, createSqsClient as localSqsClient } from '../local/sqs-server';
import { VisibilitySimulator } from '../local/simulator/server';
import { LocalSlackServer } from '../local/slack/server';
import { deliveryBody, httpApiEvent } from '../test/support/deliveries';
import { enqueue, receiveRecords } from '../test/support/sqs-records';
import { BUILD_DIR, PROJECT_ROOT, log, median, percentile, round, scaled, type ResultRow } from './lib';
import { LatencyProxy } from './latency-proxy';
import { TABLE } from '../shared/contracts';
import { FUNCTION_NODE_OPTIONS, functionEsbuildOptions, type FunctionEsbuildOptions } from '../infra/bridge-function';
import { countDifferences, countKinds, replayBaselineSource, replayPlan, sdkClientsIn, writeKeyIds, type ReplayPlan } from './replay-floor';

/** Odd, so each median is one cycle's figure. */
const SPAWNS = scaled(15, 1);
const WARMUP_SPAWNS = scaled(2, 0);
const TARGET_RATIO = 1.3;
const BENCH_TABLE = 'bench-cold-start';
const SECRET = 'whsec_bench_cold_start';
const TOKEN = 'xoxb-bench-cold-start';

/** Latency the recording proxies add, so requests sent together overlap visibly (see replayPlan). */
const RECORD_LATENCY_MS = 10;

/** A fresh event for one first invocation. */
interface FirstEvent {
  event: unknown;
  /** The digest's event id, to check afterwards that the invocation posted it. */
  eventId?: string;
}

interface ColdStartPeers {
  dynamoEndpoint: string;
  sqsEndpoint: string;
  queueUrl: string;
  sim: VisibilitySimulator;
  slack: LocalSlackServer;
  /** Proxies in front of every peer that record the requests of a recording spawn. */
  recorders: { dynamodb: LatencyProxy; sqs: LatencyProxy; readApi: LatencyProxy; slack: LatencyProxy };
  /** A fresh event for one first invocation of a function ('ingest' or 'digest'). */
  eventFor(fn: string): Promise<FirstEvent>;
  /** The outcome the digest recorded for an event (its claim's state: posted, skipped…), undefined when unclaimed. */
  digestOutcome(eventId: string): Promise<string | undefined>;
  close(): Promise<void>;
}

async function startPeers(): Promise<ColdStartPeers> {
  const dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, BENCH_TABLE);
  const sqsServer = await SqsServer.start();
  const sqs = localSqsClient(sqsServer.url);
  const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'bench-cold-start', Attributes: { VisibilityTimeout: '60' } })))
    .QueueUrl!;
  // The digest's events come from their own queue: the ingest's sends must not reach the digest.
  const digestQueueUrl = (
    await sqs.send(new CreateQueueCommand({ QueueName: 'bench-cold-start-digest', Attributes: { VisibilityTimeout: '60' } }))
  ).QueueUrl!;
  const sim = await VisibilitySimulator.start();
  const slack = await LocalSlackServer.start({ tokens: [TOKEN] });
  const projectId = sim.projectIds()[0]!;
  const run = sim.advanceRun(projectId);
  const recorders = {
    dynamodb: await LatencyProxy.start('dynamodb', dynamo.endpoint, RECORD_LATENCY_MS),
    sqs: await LatencyProxy.start('sqs', sqsServer.url, RECORD_LATENCY_MS),
    readApi: await LatencyProxy.start('read-api', sim.url, RECORD_LATENCY_MS),
    slack: await LatencyProxy.start('slack', new URL(slack.apiUrl).origin, RECORD_LATENCY_MS),
  };
  return {
    dynamoEndpoint: dynamo.endpoint,
    sqsEndpoint: sqsServer.url,
    queueUrl,
    sim,
    slack,
    recorders,
    async eventFor(fn) {
      if (fn === 'ingest') return signedDelivery(projectId);
      // One queued run.completed, as the event source hands it to a new container. Always the same
      // run (a new event each time): the read API keeps serving what the baseline replays.
      const data = { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers };
      const id = randomUUID();
      await enqueue(sqs, digestQueueUrl, { id, type: 'run.completed', created_at: new Date().toISOString(), data });
      const records = await receiveRecords(sqs, digestQueueUrl, 1);
      // Taken off the queue as the event source takes it: left there, it would come back after its
      // visibility timeout and be measured again as a duplicate, which the digest answers without work.
      for (const r of records) await sqs.send(new DeleteMessageCommand({ QueueUrl: digestQueueUrl, ReceiptHandle: r.receiptHandle }));
      if (records.length !== 1 || !records[0]!.body.includes(id))
        throw new Error(`the digest queue did not hand over the event just enqueued (${id}): ${records.length} records`);
      return { event: { Records: records }, eventId: id };
    },
    async digestOutcome(eventId) {
      const key = { [TABLE.partitionKey]: { S: `${TABLE.prefixes.digest}${eventId}` } };
      const item = (await dynamo.client.send(new GetItemCommand({ TableName: BENCH_TABLE, Key: key, ConsistentRead: true }))).Item;
      return item?.['state']?.S;
    },
    async close() {
      sqs.destroy();
      await Promise.all([...Object.values(recorders).map((r) => r.close()), dynamo.close(), sqsServer.close(), sim.close(), slack.close()]);
    },
  };
}

function signedDelivery(projectId: string): FirstEvent {
  const { id, body } = deliveryBody({
    createdAt: new Date().toISOString(),
    data: { project_id: projectId, run_id: randomUUID(), status: 'completed', answers: 120 },
  });
  const headers = {
    'content-type': 'application/json',
    'x-service-event': 'run.completed',
    'x-service-delivery': id,
    'x-service-signature': signPayload(SECRET, Math.floor(Date.now() / 1000), body),
  };
  return { event: httpApiEvent({ headers, body }) };
}

/** A random string as long as `id`, so a replayed write body keeps its size. */
function freshLike(id: string): string {
  let out = '';
  while (out.length < id.length) out += randomUUID().replace(/-/g, '');
  return out.slice(0, id.length);
}

/** Why a first invocation's answer is not a success (a failing handler can't look fast); undefined when it is. */
function answerProblem(result: unknown): string | undefined {
  const answer = (typeof result === 'object' && result !== null ? result : {}) as {
    statusCode?: unknown;
    body?: unknown;
    batchItemFailures?: unknown;
  };
  if (Array.isArray(answer.batchItemFailures))
    return answer.batchItemFailures.length === 0 ? undefined : `batch failures: ${JSON.stringify(answer.batchItemFailures)}`;
  if (answer.statusCode === 200 && typeof answer.body === 'string' && answer.body.includes('"accepted"')) return undefined;
  return `answered ${JSON.stringify(result).slice(0, 300)}`;
}

interface Bundle {
  name: string;
  file: string;
  bytes: number;
  gzipBytes: number;
  mapBytes: number;
  metafile: Metafile;
}

/** Diagnostic only: the digest baseline plus the Slack Web API client constructed, to attribute the digest's extra time. */
function withSlackWebClient(baselineSource: string): string {
  return `${baselineSource}
import { WebClient } from '@slack/web-api';
export const slack = new WebClient('xoxb-bench');
`;
}

async function bundle(name: string, entry: { file: string } | { contents: string }, settings: FunctionEsbuildOptions): Promise<Bundle> {
  const dir = join(BUILD_DIR, name);
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, 'index.js');
  const result = await build({
    ...('file' in entry
      ? { entryPoints: [entry.file] }
      : { stdin: { contents: entry.contents, resolveDir: PROJECT_ROOT, loader: 'ts', sourcefile: `${name}.ts` } }),
    ...settings,
    bundle: true,
    platform: 'node',
    outfile,
    metafile: true,
    logLevel: 'error',
    absWorkingDir: PROJECT_ROOT,
  });
  // Lambda's task root has no package.json; this one keeps the project's "type": "module" out.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
  const code = readFileSync(outfile);
  let mapBytes: number;
  try {
    mapBytes = statSync(`${outfile}.map`).size;
  } catch {
    mapBytes = 0;
  }
  return { name, file: outfile, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, mapBytes, metafile: result.metafile };
}

/** Environment of both functions, pointing at the local peers (or at their recorders); credentials are dummies. */
function coldStartEnv(peers: ColdStartPeers, recording = false): Record<string, string> {
  const r = peers.recorders;
  const env = {
    TABLE_NAME: BENCH_TABLE,
    QUEUE_URL: peers.queueUrl,
    DLQ_URL: peers.queueUrl,
    // Slack's pace is a deliberate wait, not a cost of the code: measured by bench:scale, not here.
    SLACK_PACE_INTERVAL_MS: '0',
    SIGNING_SECRETS: JSON.stringify([SECRET]),
    READ_API_BASE_URL: peers.sim.url,
    READ_API_KEY: peers.sim.apiKey,
    SLACK_BOT_TOKEN: TOKEN,
    SLACK_API_URL: peers.slack.apiUrl,
    SLACK_DEFAULT_CHANNEL: 'C0BENCH',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_ENDPOINT_URL_DYNAMODB: peers.dynamoEndpoint,
    AWS_ENDPOINT_URL_SQS: peers.sqsEndpoint,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
    // Lambda runs Node 24, where the SDK prints no "Node 20 support ends" warning.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  if (!recording) return env;
  const slackPath = new URL(peers.slack.apiUrl).pathname;
  return {
    ...env,
    READ_API_BASE_URL: r.readApi.url,
    SLACK_API_URL: `${r.slack.url}${slackPath}`,
    AWS_ENDPOINT_URL_DYNAMODB: r.dynamodb.url,
    AWS_ENDPOINT_URL_SQS: r.sqs.url,
  };
}

/**
 * Prints `{"load", "loadCpu", "wall", "cpu", "result"}`: ms to load the bundle and the process's CPU ms
 * (user + system) for it, ms to load it and answer the first invocation and the CPU ms over both, and
 * the handler's answer.
 */
const FIRST_REQUEST_SCRIPT = [
  "const { performance } = require('node:perf_hooks');",
  'const file = process.env.BENCH_BUNDLE;',
  'const event = JSON.parse(process.env.BENCH_EVENT);',
  'const cpu0 = process.cpuUsage();',
  'const start = performance.now();',
  "const load = () => (file.endsWith('.mjs') ? import(require('node:url').pathToFileURL(file).href) : Promise.resolve(require(file)));",
  'load()',
  '  .then(async (mod) => {',
  '    const loaded = performance.now();',
  '    const loadCpu = process.cpuUsage(cpu0);',
  '    const result = await mod.handler(event, { getRemainingTimeInMillis: () => 60000 });',
  '    const wall = performance.now() - start;',
  '    const cpu = process.cpuUsage(cpu0);',
  '    process.stdout.write(JSON.stringify({ load: loaded - start, loadCpu: (loadCpu.user + loadCpu.system) / 1000, wall, cpu: (cpu.user + cpu.system) / 1000, result }));',
  '    process.exit(0);',
  '  })',
  '  .catch((e) => { console.error(e); process.exit(1); });',
].join('\n');

interface FirstRequestTime {
  /** Load + first invocation. */
  wall: number;
  /** Load only. */
  load: number;
  cpu: number;
  /** CPU of the load only. */
  loadCpu: number;
}

let profiles = 0;

/** With BENCH_CPU_PROF_DIR set, each spawn writes a CPU profile there, named after its bundle (for attributing time; it slows the spawns). */
function cpuProfileArgs(file: string): string[] {
  const dir = process.env['BENCH_CPU_PROF_DIR'];
  if (!dir) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${relative(BUILD_DIR, file).split('/')[0]}-${++profiles}.cpuprofile`];
}

function firstRequestMs(
  file: string,
  nodeOptions: string | undefined,
  baseEnv: Record<string, string>,
  event: unknown,
): Promise<FirstRequestTime> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', ...baseEnv, BENCH_BUNDLE: file, BENCH_EVENT: JSON.stringify(event) };
    if (nodeOptions) env['NODE_OPTIONS'] = nodeOptions;
    const child = spawn(process.execPath, [...cpuProfileArgs(file), '-e', FIRST_REQUEST_SCRIPT], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      let parsed: Partial<FirstRequestTime> & { result?: unknown };
      try {
        parsed = JSON.parse(out.trim()) as Partial<FirstRequestTime> & { result?: unknown };
      } catch {
        parsed = {};
      }
      const { wall, load, cpu, loadCpu, result } = parsed;
      const problem =
        code !== 0 || typeof wall !== 'number' || typeof load !== 'number' || typeof cpu !== 'number' || typeof loadCpu !== 'number'
          ? `exit ${code}: ${err.slice(0, 500)}`
          : answerProblem(result);
      if (problem !== undefined) reject(new Error(`first request of ${file} failed (${problem})`));
      else resolve({ wall: wall!, load: load!, cpu: cpu!, loadCpu: loadCpu! });
    });
  });
}

/**
 * Diagnostic: CPU time of the Intl objects a digest container creates: at cold start the stage time zone
 * check (two Intl.DateTimeFormat with a timeZone, shared/weekly/config.ts), on first use two
 * Intl.NumberFormat (shared/digest/render/format.ts) and the Intl.Segmenter of shared/slack-text.ts. The
 * first Intl object of a process initialises ICU, which is most of the cost; the floor creates none.
 */
const INTL_SCRIPT = [
  'const cpu0 = process.cpuUsage();',
  "new Intl.DateTimeFormat('en-US', { timeZone: 'UTC' });",
  "new Intl.DateTimeFormat('en-US', { timeZone: 'UTC' }).resolvedOptions();",
  "new Intl.Segmenter('en', { granularity: 'grapheme' });",
  "new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });",
  "new Intl.NumberFormat('en-US', { maximumSignificantDigits: 2 });",
  'const cpu = process.cpuUsage(cpu0);',
  'process.stdout.write(String((cpu.user + cpu.system) / 1000));',
].join('\n');

function intlInitCpuMs(): number {
  const result = spawnSync(process.execPath, ['-e', INTL_SCRIPT], { env: { PATH: process.env['PATH'] ?? '' }, encoding: 'utf8' });
  const ms = Number(result.stdout.trim());
  if (result.status !== 0 || !Number.isFinite(ms)) throw new Error(`Intl diagnostic failed: ${result.stderr.slice(0, 300)}`);
  return ms;
}

/** Bytes in the output per package (node_modules/<scope/name>) or project folder. */
function bytesByGroup(metafile: Metafile): Map<string, number> {
  const byGroup = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [path, info] of Object.entries(output.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
      const group = m ? m[1]! : path.split('/').slice(0, 2).join('/');
      byGroup.set(group, (byGroup.get(group) ?? 0) + info.bytesInOutput);
    }
  }
  return byGroup;
}

/** The largest inputs of a bundle, by bytes in the output. */
function topInputs(metafile: Metafile, count: number): { input: string; bytes: number }[] {
  return [...bytesByGroup(metafile).entries()]
    .map(([input, bytes]) => ({ input, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, count);
}

/** What a handler bundle holds beyond its baseline, by package, largest first. */
function extraOverBaseline(handler: Metafile, baseline: Metafile, count: number): { input: string; bytes: number }[] {
  const base = bytesByGroup(baseline);
  return [...bytesByGroup(handler).entries()]
    .map(([input, bytes]) => ({ input, bytes: bytes - (base.get(input) ?? 0) }))
    .filter((x) => x.bytes > 256)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, count);
}

/** What a warm-up first invocation of a function did, to be replayed by its baseline. */
interface Recording {
  plan: ReplayPlan;
  /** Requests per peer and kind (DynamoDB/SQS operation, HTTP method and path). */
  counts: Record<string, number>;
  /** Ids in the keys of the recorded writes (see writeKeyIds). */
  ids: string[];
}

async function recordFirstInvocation(peers: ColdStartPeers, file: string, nodeOptions: string | undefined, event: FirstEvent) {
  for (const recorder of Object.values(peers.recorders)) recorder.clear();
  await firstRequestMs(file, nodeOptions, coldStartEnv(peers, true), event.event);
  const requests = Object.values(peers.recorders).flatMap((recorder) => recorder.requests());
  return { requests, counts: countKinds(requests) };
}

/**
 * Records the real bundle's first invocation twice and keeps the second: by then the project has a
 * digest before it, as it has in every measured spawn. Differing counts between the two are reported.
 */
async function recordFunction(
  peers: ColdStartPeers,
  file: string,
  nodeOptions: string | undefined,
  fn: 'ingest' | 'digest',
): Promise<Recording & { firstDiffers: string[] }> {
  const first = await recordFirstInvocation(peers, file, nodeOptions, await peers.eventFor(fn));
  const event = await peers.eventFor(fn);
  const second = await recordFirstInvocation(peers, file, nodeOptions, event);
  // Kept for inspection: what the baseline replays.
  writeFileSync(
    join(BUILD_DIR, `${fn}-recording.json`),
    JSON.stringify({ ids: writeKeyIds(second.requests), requests: second.requests }, null, 2),
  );
  return {
    plan: replayPlan(second.requests),
    counts: second.counts,
    ids: writeKeyIds(second.requests),
    firstDiffers: countDifferences(first.counts, second.counts),
  };
}

/** The baseline's event: the recorded ids, each with a fresh one for its writes. */
function replayEvent(recording: Recording): FirstEvent {
  return { event: { replace: recording.ids.map((id) => [id, freshLike(id)]) } };
}

/** Checks through the recorders that a baseline makes exactly the recorded requests; throws if not. */
async function verifyReplay(peers: ColdStartPeers, file: string, nodeOptions: string | undefined, recording: Recording): Promise<void> {
  const replay = await recordFirstInvocation(peers, file, nodeOptions, replayEvent(recording));
  const differences = countDifferences(recording.counts, replay.counts);
  if (differences.length > 0)
    throw new Error(`the baseline ${file} does not replay the function's requests (function vs baseline): ${differences.join('; ')}`);
}

export async function runColdStart(): Promise<{ rows: ResultRow[]; details: Record<string, unknown> }> {
  // The stack's own options: the digest draws charts (vega-canvas aliased), the ingest and the baselines do not.
  const settings = functionEsbuildOptions(false);
  const digestSettings = functionEsbuildOptions(true);
  const nodeOptions = FUNCTION_NODE_OPTIONS;
  log(`cold start: bundling with the stack's options: ${JSON.stringify(digestSettings)}`);
  mkdirSync(BUILD_DIR, { recursive: true });
  const ingest = await bundle('ingest', { file: join(PROJECT_ROOT, 'functions/ingest/handler.ts') }, settings);
  const digest = await bundle('digest', { file: join(PROJECT_ROOT, 'functions/digest/handler.ts') }, digestSettings);
  // As deployed (the stack's NODE_OPTIONS), and without NODE_OPTIONS.
  const modes: { label: string; nodeOptions: string | undefined }[] = [
    { label: `NODE_OPTIONS=${nodeOptions}`, nodeOptions },
    { label: 'no NODE_OPTIONS', nodeOptions: undefined },
  ];

  const times: Record<string, Record<string, number[]>> = {};
  const loadTimes: Record<string, Record<string, number[]>> = {};
  const cpuTimes: Record<string, Record<string, number[]>> = {};
  const loadCpuTimes: Record<string, Record<string, number[]>> = {};
  const peers = await startPeers();
  let recordings: Record<'ingest' | 'digest', Recording & { firstDiffers: string[] }>;
  let bundles: Record<string, Bundle>;
  let afterwards: Record<string, string[]>;
  let baselineSources: Record<'ingest' | 'digest', string>;
  try {
    log(`cold start: recording the requests of a warm-up first invocation of each function`);
    recordings = {
      ingest: await recordFunction(peers, ingest.file, nodeOptions, 'ingest'),
      digest: await recordFunction(peers, digest.file, nodeOptions, 'digest'),
    };
    const baseline = (fn: 'ingest' | 'digest', metafile: Metafile): string =>
      replayBaselineSource(recordings[fn].plan, sdkClientsIn(Object.keys(metafile.inputs)));
    baselineSources = { ingest: baseline('ingest', ingest.metafile), digest: baseline('digest', digest.metafile) };
    bundles = {
      ingest,
      'ingest-baseline': await bundle('ingest-baseline', { contents: baselineSources.ingest }, settings),
      digest,
      'digest-baseline': await bundle('digest-baseline', { contents: baselineSources.digest }, settings),
      'diagnostic: digest-baseline + @slack/web-api': await bundle(
        'digest-baseline-slack',
        { contents: withSlackWebClient(baselineSources.digest) },
        settings,
      ),
    };
    await verifyReplay(peers, bundles['ingest-baseline']!.file, nodeOptions, recordings.ingest);
    await verifyReplay(peers, bundles['digest-baseline']!.file, nodeOptions, recordings.digest);
    // Every measured digest must have posted, or the spawn timed less work than its floor replays.
    const measuredDigests: string[] = [];
    const eventFor = async (name: string): Promise<unknown> => {
      if (name !== 'ingest' && name !== 'digest')
        return replayEvent(name.startsWith('ingest') ? recordings.ingest : recordings.digest).event;
      const first = await peers.eventFor(name);
      if (first.eventId !== undefined) measuredDigests.push(first.eventId);
      return first.event;
    };

    const env = coldStartEnv(peers);
    const names = Object.keys(bundles);
    for (const mode of modes) {
      log(`cold start: ${SPAWNS} fresh processes per bundle, load + first invocation, interleaved (${mode.label})`);
      const perBundle: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      const loadPerBundle: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      const cpuPerBundle: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      const loadCpuPerBundle: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (let i = 0; i < WARMUP_SPAWNS + SPAWNS; i++) {
        for (let k = 0; k < names.length; k++) {
          const name = names[(i + k) % names.length]!;
          const t = await firstRequestMs(bundles[name]!.file, mode.nodeOptions, env, await eventFor(name));
          if (i >= WARMUP_SPAWNS) {
            perBundle[name]!.push(t.wall);
            loadPerBundle[name]!.push(t.load);
            cpuPerBundle[name]!.push(t.cpu);
            loadCpuPerBundle[name]!.push(t.loadCpu);
          }
        }
      }
      times[mode.label] = perBundle;
      loadTimes[mode.label] = loadPerBundle;
      cpuTimes[mode.label] = cpuPerBundle;
      loadCpuTimes[mode.label] = loadCpuPerBundle;
    }
    const notPosted = (await Promise.all(measuredDigests.map(async (id) => [id, await peers.digestOutcome(id)] as const))).filter(
      ([, outcome]) => outcome !== 'posted',
    );
    if (notPosted.length > 0)
      throw new Error(
        `measured digests that did not post: ${notPosted.map(([id, outcome]) => `${id} (${outcome ?? 'unclaimed'})`).join(', ')}`,
      );
    // The measured first invocations made the recorded requests too: one more recording after them.
    const recordAgain = async (fn: 'ingest' | 'digest', file: string): Promise<string[]> => {
      const again = await recordFirstInvocation(peers, file, nodeOptions, await peers.eventFor(fn));
      // Kept for inspection beside the replayed recording.
      writeFileSync(join(BUILD_DIR, `${fn}-recording-after.json`), JSON.stringify({ requests: again.requests }, null, 2));
      return countDifferences(recordings[fn].counts, again.counts);
    };
    afterwards = { ingest: await recordAgain('ingest', ingest.file), digest: await recordAgain('digest', digest.file) };
    for (const [fn, differences] of Object.entries(afterwards)) {
      if (differences.length > 0)
        log(
          `cold start: WARNING: ${fn}'s first invocation made other requests after the measured spawns than recorded: ${differences.join('; ')}`,
        );
    }
  } finally {
    await peers.close();
  }
  const names = Object.keys(bundles);

  const intlCpuMs = Array.from({ length: SPAWNS }, intlInitCpuMs);

  const b = 'cold start';
  const rows: ResultRow[] = [];
  for (const name of names) {
    const x = bundles[name]!;
    rows.push({ benchmark: b, figure: `${name} bundle size`, value: x.bytes, unit: 'bytes' });
    rows.push({ benchmark: b, figure: `${name} bundle size, gzip`, value: x.gzipBytes, unit: 'bytes' });
  }
  const ratios: Record<string, Record<string, number>> = {};
  modes.forEach((mode, index) => {
    const perBundle = times[mode.label]!;
    ratios[mode.label] = {};
    for (const fn of ['ingest', 'digest'] as const) {
      const handlerTimes = perBundle[fn]!;
      const baselineTimes = perBundle[`${fn}-baseline`]!;
      // Paired: each spawn of the handler against the baseline spawn of the same cycle, so load
      // from other processes cancels out; the median of those ratios is the figure.
      const ratio = median(handlerTimes.map((ms, i) => ms / baselineTimes[i]!));
      ratios[mode.label]![fn] = ratio;
      const primary = index === 0;
      rows.push({
        benchmark: b,
        figure: `${fn} load + first invocation, median (${mode.label})`,
        value: round(median(handlerTimes), 1),
        unit: 'ms',
      });
      rows.push({
        benchmark: b,
        figure: `${fn}-baseline load + first invocation, median (${mode.label})`,
        value: round(median(baselineTimes), 1),
        unit: 'ms',
      });
      rows.push({
        benchmark: b,
        figure: `${fn} / baseline (${mode.label})`,
        value: round(ratio, 3),
        unit: '×',
        ...(primary ? { target: `≤ ${TARGET_RATIO}×`, pass: ratio <= TARGET_RATIO } : {}),
      });
    }
    // Load alone, the figure this benchmark reported before it counted the first invocation.
    const loads = loadTimes[mode.label]!;
    for (const fn of ['ingest', 'digest'] as const) {
      const loadRatio = median(loads[fn]!.map((ms, i) => ms / loads[`${fn}-baseline`]![i]!));
      rows.push({ benchmark: b, figure: `${fn} / baseline, load only (${mode.label})`, value: round(loadRatio, 3), unit: '×' });
    }
    // CPU time of the loading process: less disturbed by other load on a shared machine than wall time.
    const cpu = cpuTimes[mode.label]!;
    for (const fn of ['ingest', 'digest'] as const) {
      const cpuRatio = median(cpu[fn]!.map((ms, i) => ms / cpu[`${fn}-baseline`]![i]!));
      rows.push({ benchmark: b, figure: `${fn} / baseline, CPU time (${mode.label})`, value: round(cpuRatio, 3), unit: '×' });
    }
    const withSlack = perBundle['diagnostic: digest-baseline + @slack/web-api']!;
    const baseline = perBundle['digest-baseline']!;
    rows.push({
      benchmark: b,
      figure: `diagnostic: (digest-baseline + @slack/web-api) / digest-baseline (${mode.label})`,
      value: round(median(withSlack.map((ms, i) => ms / baseline[i]!)), 3),
      unit: '×',
    });
  });

  /** The digest's CPU over its floor's in the first mode, median of the pairs. */
  const cpuExcessRow = (times: typeof cpuTimes, what: string): void => {
    const cpu = times[modes[0]!.label]!;
    const excess = cpu['digest']!.map((ms, i) => ms - cpu['digest-baseline']![i]!);
    rows.push({
      benchmark: b,
      figure: `diagnostic: digest − baseline, ${what}, median of pairs`,
      value: round(median(excess), 1),
      unit: 'ms',
    });
  };
  cpuExcessRow(cpuTimes, 'CPU time');
  // The same split at the handler's import: parsing and evaluating the bundle and creating the handler.
  cpuExcessRow(loadCpuTimes, 'CPU time of the load alone');
  rows.push({
    benchmark: b,
    figure: 'diagnostic: ICU (the time zone check at cold start, number formats and segmenter on first use), CPU time',
    value: round(median(intlCpuMs), 1),
    unit: 'ms',
  });

  return {
    rows,
    details: {
      bundling: { ingest: settings, digest: digestSettings, nodeOptions },
      intlInitCpuMs: {
        median: round(median(intlCpuMs), 1),
        p25: round(percentile(intlCpuMs, 25), 1),
        p75: round(percentile(intlCpuMs, 75), 1),
      },
      buildDir: relative(PROJECT_ROOT, BUILD_DIR),
      spawnsPerBundle: SPAWNS,
      floor:
        'each baseline replays the requests of a recorded warm-up first invocation of its function (same count per peer and kind, same concurrency), checked through the recorders before timing',
      requestsPerFirstInvocation: { ingest: recordings.ingest.counts, digest: recordings.digest.counts },
      replayWaves: { ingest: recordings.ingest.plan.length, digest: recordings.digest.plan.length },
      countsDifferBetweenWarmups: { ingest: recordings.ingest.firstDiffers, digest: recordings.digest.firstDiffers },
      countsDifferAfterMeasuring: afterwards,
      bundles: Object.fromEntries(
        names.map((name) => {
          const x = bundles[name]!;
          return [
            name,
            {
              file: relative(PROJECT_ROOT, x.file),
              bytes: x.bytes,
              gzipBytes: x.gzipBytes,
              sourceMapBytes: x.mapBytes,
              topInputsByBytes: topInputs(x.metafile, 12),
            },
          ];
        }),
      ),
      firstRequestCpuMs: Object.fromEntries(
        Object.entries(cpuTimes).map(([mode, perBundle]) => [
          mode,
          Object.fromEntries(
            Object.entries(perBundle).map(([name, v]) => [
              name,
              { median: round(median(v), 1), p25: round(percentile(v, 25), 1), p75: round(percentile(v, 75), 1) },
            ]),
          ),
        ]),
      ),
      firstRequestMs: Object.fromEntries(
        Object.entries(times).map(([mode, perBundle]) => [
          mode,
          Object.fromEntries(
            Object.entries(perBundle).map(([name, v]) => [
              name,
              { median: round(median(v), 1), p25: round(percentile(v, 25), 1), p75: round(percentile(v, 75), 1) },
            ]),
          ),
        ]),
      ),
      ratios,
      ratio:
        'median of paired per-cycle ratios (handler spawn / baseline spawn of the same cycle); each spawn = load + first invocation on local peers',
      loadMs: Object.fromEntries(
        Object.entries(loadTimes).map(([mode, perBundle]) => [
          mode,
          Object.fromEntries(Object.entries(perBundle).map(([name, v]) => [name, round(median(v), 1)])),
        ]),
      ),
      loadCpuMs: Object.fromEntries(
        Object.entries(loadCpuTimes).map(([mode, perBundle]) => [
          mode,
          Object.fromEntries(Object.entries(perBundle).map(([name, v]) => [name, round(median(v), 1)])),
        ]),
      ),
      extraOverBaselineByBytes: {
        ingest: extraOverBaseline(ingest.metafile, bundles['ingest-baseline']!.metafile, 12),
        digest: extraOverBaseline(digest.metafile, bundles['digest-baseline']!.metafile, 12),
      },
    },
  };
}
