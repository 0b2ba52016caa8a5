/**
 * Benchmark: Slack's own chart and tables in the digest (issue 30). Targets: the bundle a digest loads on
 * the usual path ≤ 850 KiB (the issue asked 900: room kept for what comes next); the first digest of a
 * fresh container with its native chart ≤ 1.1× the same digest without any chart.
 *
 * - Bundle: the digest handler built with the stack's options (infra/bridge-function.ts), the PNG
 *   renderer as its own file beside it (`CHART_RENDERER_BUNDLE`): both sizes.
 * - First digest: in fresh Node processes (--enable-source-maps, as deployed), the usual bundle is
 *   loaded (the digest handler and everything it imports evaluated), one digest rendered — a report
 *   with 6 engines over 20 runs, or the same run without a trend — and its main message and thread
 *   posted to the local Slack server. Wall time from process start to the last reply; spawns alternate
 *   between the two, each ratio the median of paired ratios.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { LocalSlackServer } from '../local/slack/server';
import { ENV } from '../shared/contracts';
import {
  CHART_RENDERER_BUNDLE,
  chartRendererEsbuildOptions,
  FUNCTION_NODE_OPTIONS,
  functionEsbuildOptions,
} from '../infra/bridge-function';
import { BUILD_DIR, PROJECT_ROOT, log, median, round, scaled, type ResultRow } from './lib';

const SPAWNS = scaled(15, 1);
const TOKEN = 'xoxb-bench-native';
const CHANNEL = 'C0NATIVE';
const BUNDLE_TARGET_BYTES = 850 * 1024;
const RATIO_TARGET = 1.1;

/** The digest handler (evaluated, as a cold container does) and what the child drives: the render and the poster. */
const ENTRY = `
export { handler } from './functions/digest/handler';
export { renderDigest } from './shared/digest/render';
export { createSlackPoster } from './shared/adapters/slack-poster';
export { nativeChartDigestInput } from './bench/native-chart-input';
`;

const CHILD = `
const { performance } = require('node:perf_hooks');
const bundle = require(process.argv[2]);
(async () => {
  const rendered = bundle.renderDigest(bundle.nativeChartDigestInput(process.argv[3] === 'chart'));
  const slack = bundle.createSlackPoster({ token: process.env.BENCH_SLACK_TOKEN, slackApiUrl: process.env.BENCH_SLACK_URL });
  const main = await slack.post(process.env.BENCH_CHANNEL, rendered.main);
  for (const reply of rendered.thread) await slack.post(process.env.BENCH_CHANNEL, reply, { threadTs: main.ts });
  const charts = rendered.main.blocks.filter((b) => b.type === 'data_visualization').length;
  process.stdout.write(JSON.stringify({ totalMs: performance.now(), charts }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

/** What the digest handler reads at load (its configuration); its handler is not called. */
const DIGEST_ENV: Record<string, string> = {
  [ENV.tableName]: 'bench',
  [ENV.queueUrl]: 'http://127.0.0.1:9/queue/bench',
  [ENV.dlqUrl]: 'http://127.0.0.1:9/queue/bench-dlq',
  [ENV.readApiBaseUrl]: 'http://127.0.0.1:9',
  [ENV.readApiKey]: 'bench-key',
  [ENV.slackBotToken]: TOKEN,
  [ENV.slackDefaultChannel]: CHANNEL,
  [ENV.awsRegion]: 'eu-west-1',
  [ENV.chartsEnabled]: 'true',
};

interface Sample {
  totalMs: number;
  charts: number;
}

async function bundles(): Promise<{ dir: string; file: string; handlerBytes: number; mapBytes: number; rendererBytes: number }> {
  const dir = join(BUILD_DIR, 'native-chart');
  mkdirSync(dir, { recursive: true });
  const options = functionEsbuildOptions(true);
  const handler = await build({
    entryPoints: [join(PROJECT_ROOT, 'functions/digest/handler.ts')],
    ...options,
    bundle: true,
    platform: 'node',
    outfile: join(dir, 'handler-only.js'),
    logLevel: 'error',
    absWorkingDir: PROJECT_ROOT,
  });
  if (handler.errors.length > 0) throw new Error('the digest handler did not bundle');
  const file = join(dir, 'index.js');
  await build({
    stdin: { contents: ENTRY, resolveDir: PROJECT_ROOT, loader: 'ts', sourcefile: 'native-chart.ts' },
    ...options,
    bundle: true,
    platform: 'node',
    outfile: file,
    logLevel: 'error',
    absWorkingDir: PROJECT_ROOT,
  });
  const renderer = chartRendererEsbuildOptions(dir);
  await build({ ...renderer, logLevel: 'error', absWorkingDir: PROJECT_ROOT });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
  writeFileSync(join(dir, 'child.cjs'), CHILD);
  return {
    dir,
    file,
    handlerBytes: statSync(join(dir, 'handler-only.js')).size,
    mapBytes: statSync(join(dir, 'handler-only.js.map')).size,
    rendererBytes: statSync(join(dir, CHART_RENDERER_BUNDLE.file)).size,
  };
}

/** One fresh process (asynchronous: the local Slack server it posts to runs in this one). */
function spawnDigest(dir: string, file: string, variant: 'chart' | 'none', slackUrl: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FUNCTION_NODE_OPTIONS, join(dir, 'child.cjs'), file, variant], {
      cwd: dir,
      env: {
        ...process.env,
        ...DIGEST_ENV,
        LAMBDA_TASK_ROOT: dir,
        BENCH_SLACK_URL: slackUrl,
        BENCH_SLACK_TOKEN: TOKEN,
        BENCH_CHANNEL: CHANNEL,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(stdout) as Sample) : reject(new Error(`native chart bench child failed: ${stderr}`)),
    );
  });
}

export async function runNativeChart(): Promise<{ rows: ResultRow[]; details: Record<string, unknown> }> {
  log('native chart: bundling the digest with the stack options, the PNG renderer beside it');
  const built = await bundles();
  const slack = await LocalSlackServer.start({ tokens: [TOKEN] });
  const samples = { chart: [] as Sample[], none: [] as Sample[] };
  try {
    log(`native chart: ${SPAWNS} fresh processes each, with the native chart and without any chart, alternating`);
    for (let i = 0; i < SPAWNS; i++) {
      const order: ('chart' | 'none')[] = i % 2 === 0 ? ['chart', 'none'] : ['none', 'chart'];
      for (const variant of order) samples[variant].push(await spawnDigest(built.dir, built.file, variant, slack.apiUrl));
    }
  } finally {
    await slack.close();
  }
  if (samples.chart.some((s) => s.charts !== 1) || samples.none.some((s) => s.charts !== 0))
    throw new Error('a sample drew the wrong chart');
  const ratio = median(samples.chart.map((s, i) => s.totalMs / samples.none[i]!.totalMs));
  const b = 'native chart';
  const rows: ResultRow[] = [
    {
      benchmark: b,
      figure: 'digest bundle on the usual path (minified JS)',
      value: round(built.handlerBytes / 1024, 1),
      unit: 'KiB',
      target: `≤ ${BUNDLE_TARGET_BYTES / 1024} KiB`,
      pass: built.handlerBytes <= BUNDLE_TARGET_BYTES,
    },
    { benchmark: b, figure: 'its source map', value: round(built.mapBytes / 1024, 1), unit: 'KiB' },
    { benchmark: b, figure: 'PNG renderer bundle (read only for the fallback)', value: round(built.rendererBytes / 1024, 1), unit: 'KiB' },
    {
      benchmark: b,
      figure: 'first digest, fresh process, native chart (median)',
      value: round(median(samples.chart.map((s) => s.totalMs)), 1),
      unit: 'ms',
    },
    {
      benchmark: b,
      figure: 'first digest, fresh process, no chart (median)',
      value: round(median(samples.none.map((s) => s.totalMs)), 1),
      unit: 'ms',
    },
    {
      benchmark: b,
      figure: 'first digest native chart ÷ no chart (median of paired ratios)',
      value: round(ratio, 3),
      unit: '×',
      target: `≤ ${RATIO_TARGET}×`,
      pass: ratio <= RATIO_TARGET,
    },
  ];
  return { rows, details: { samples, bytes: { handler: built.handlerBytes, map: built.mapBytes, renderer: built.rendererBytes } } };
}
