/**
 * Benchmark: the trend chart (issue 23). Target: render + upload ≤ 1 s warm.
 *
 * - Cold, in fresh Node processes: the chart code bundled as the Lambda bundles it (esbuild, CommonJS,
 *   minified), its assets in `chart-assets/` beside the bundle with LAMBDA_TASK_ROOT pointing there:
 *   time to import the renderer (`loadChartRenderer`), then the first render (wasm + font init
 *   included), then warm renders in the same process. A bundle without the chart code is timed too:
 *   the difference in time-to-main is what carrying the (uncalled) chart code costs a cold start.
 * - Warm, in this process: render, and render + upload (files.getUploadURLExternal → bytes →
 *   files.completeUploadExternal) into a thread on the local Slack server; PNG size.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { build, type Plugin } from 'esbuild';
import { LocalSlackServer } from '../local/slack/server';
import { createSlackFileUploader } from '../shared/adapters/slack-files';
import { createSlackPoster } from '../shared/adapters/slack-poster';
import { CHART_ASSETS, CHART_ASSETS_DIR } from '../shared/charts/assets';
import { ENV } from '../shared/contracts';
import { loadChartRenderer } from '../shared/charts/load';
import { chartInput } from './chart-input';
import { BUILD_DIR, PROJECT_ROOT, log, median, round, scaled, type ResultRow } from './lib';
import { chartRendererEsbuildOptions, functionEsbuildOptions } from '../infra/bridge-function';

const COLD_SPAWNS = scaled(7, 1);
const WARM_RUNS = scaled(30, 3);
const TARGET_MS = 1000;
const TOKEN = 'xoxb-bench-chart';
const CHANNEL = 'C0BENCH';

/** The stack's esbuild options of a function that draws charts (vega-canvas aliased to its browser build). */
const CHART_FUNCTION_OPTIONS = functionEsbuildOptions(true);

const CHILD_ENTRY = `
import { performance } from 'node:perf_hooks';
import { loadChartRenderer } from './shared/charts/load';
import { chartInput } from './bench/chart-input';
async function main() {
  const bootMs = performance.now();
  const t0 = performance.now();
  const renderer = await loadChartRenderer();
  const loadMs = performance.now() - t0;
  const t1 = performance.now();
  const first = await renderer.renderTrendChart(chartInput());
  const firstRenderMs = performance.now() - t1;
  const warmMs = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await renderer.renderTrendChart(chartInput());
    warmMs.push(performance.now() - t);
  }
  process.stdout.write(JSON.stringify({ bootMs, loadMs, firstRenderMs, warmMs, kind: first.kind }));
}
main().catch((e) => { console.error(e); process.exit(1); });
`;

const BASELINE_ENTRY = `
import { performance } from 'node:perf_hooks';
process.stdout.write(JSON.stringify({ bootMs: performance.now() }));
`;

/**
 * The digest function as infra bundles it (its handler, plus two exports for the bench): loaded in a
 * fresh process with --enable-source-maps as in Lambda, then, with charts on, the renderer imported
 * and the first chart drawn. The "without chart code" variant replaces shared/charts/load with a stub:
 * the digest as it was before charts.
 */
const DIGEST_ENTRY = `
export { handler } from './functions/digest/handler';
export { loadChartRenderer } from './shared/charts/load';
export { chartInput } from './bench/chart-input';
`;

const DIGEST_CHILD = `
const { performance } = require('node:perf_hooks');
const t0 = performance.now();
const bundle = require(process.argv[2]);
const loadMs = performance.now() - t0;
(async () => {
  let chartMs = 0;
  if (process.argv[3] === 'on') {
    const t1 = performance.now();
    const renderer = await bundle.loadChartRenderer();
    const out = await renderer.renderTrendChart(bundle.chartInput());
    if (out.kind !== 'rendered') throw new Error('no chart');
    chartMs = performance.now() - t1;
  }
  process.stdout.write(JSON.stringify({ bootMs: t0, loadMs, chartMs }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

const NO_CHART_CODE: Plugin = {
  name: 'no-chart-code',
  setup(b) {
    b.onResolve({ filter: /charts\/load$/ }, (args) => ({ path: args.path, namespace: 'no-chart-code' }));
    b.onLoad({ filter: /.*/, namespace: 'no-chart-code' }, () => ({
      contents: 'export function loadChartRenderer() { return Promise.reject(new Error("no chart code")); }',
      loader: 'js',
    }));
  },
};

/** What the digest handler reads at load (its configuration); nothing is called. */
const DIGEST_ENV: Record<string, string> = {
  [ENV.tableName]: 'bench',
  [ENV.queueUrl]: 'http://127.0.0.1:9/queue/bench',
  [ENV.dlqUrl]: 'http://127.0.0.1:9/queue/bench-dlq',
  [ENV.readApiBaseUrl]: 'http://127.0.0.1:9',
  [ENV.readApiKey]: 'bench-key',
  [ENV.slackBotToken]: 'xoxb-bench',
  [ENV.slackDefaultChannel]: 'C0BENCH',
  [ENV.awsRegion]: 'eu-west-1',
};

interface DigestColdSample {
  bootMs: number;
  loadMs: number;
  chartMs: number;
}

/** The digest bundle (minified, source map beside it, as the function ships). */
async function digestBundle(name: string, plugins: Plugin[]): Promise<{ dir: string; file: string; bytes: number; mapBytes: number }> {
  const dir = join(BUILD_DIR, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'index.js');
  await build({
    stdin: { contents: DIGEST_ENTRY, resolveDir: PROJECT_ROOT, loader: 'ts', sourcefile: `${name}.ts` },
    bundle: true,
    platform: 'node',
    ...CHART_FUNCTION_OPTIONS,
    plugins,
    outfile: file,
    logLevel: 'error',
    absWorkingDir: PROJECT_ROOT,
  });
  await emitRenderer(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
  writeFileSync(join(dir, 'child.cjs'), DIGEST_CHILD);
  return { dir, file, bytes: statSync(file).size, mapBytes: statSync(`${file}.map`).size };
}

function spawnDigest(dir: string, file: string, charts: 'on' | 'off'): DigestColdSample {
  const result = spawnSync(process.execPath, ['--enable-source-maps', join(dir, 'child.cjs'), file, charts], {
    cwd: dir,
    env: { ...process.env, ...DIGEST_ENV, LAMBDA_TASK_ROOT: dir, [ENV.chartsEnabled]: String(charts === 'on') },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`digest bench child failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as DigestColdSample;
}

/** Cold starts of the digest function: without chart code, with it but charts off, charts on (load + first chart). */
async function digestColdStarts(): Promise<{ rows: ResultRow[]; details: Record<string, unknown> }> {
  const withCharts = await digestBundle('digest-charts', []);
  shipAssets(withCharts.dir);
  const without = await digestBundle('digest-no-charts', [NO_CHART_CODE]);
  const samples = { without: [] as DigestColdSample[], off: [] as DigestColdSample[], on: [] as DigestColdSample[] };
  for (let i = 0; i < COLD_SPAWNS; i++) {
    samples.without.push(spawnDigest(without.dir, without.file, 'off'));
    samples.off.push(spawnDigest(withCharts.dir, withCharts.file, 'off'));
    samples.on.push(spawnDigest(withCharts.dir, withCharts.file, 'on'));
  }
  const cold = (list: DigestColdSample[]) => median(list.map((s) => s.bootMs + s.loadMs + s.chartMs));
  const base = cold(samples.without);
  const on = cold(samples.on);
  const rows: ResultRow[] = [
    { benchmark: 'chart', figure: 'digest bundle without chart code (minified JS)', value: round(without.bytes / 1024, 1), unit: 'KiB' },
    {
      benchmark: 'chart',
      figure: 'digest bundle with the PNG path wired (minified JS; the renderer in its own file)',
      value: round(withCharts.bytes / 1024, 1),
      unit: 'KiB',
    },
    { benchmark: 'chart', figure: 'digest source map with chart code', value: round(withCharts.mapBytes / 1024, 1), unit: 'KiB' },
    { benchmark: 'chart', figure: 'digest cold start, no chart code (boot + load)', value: round(base, 1), unit: 'ms' },
    { benchmark: 'chart', figure: 'digest cold start, charts off (boot + load)', value: round(cold(samples.off), 1), unit: 'ms' },
    {
      benchmark: 'chart',
      figure: 'digest cold start, charts on (boot + load + first chart)',
      value: round(on, 1),
      unit: 'ms',
    },
    {
      benchmark: 'chart',
      figure: 'digest cold start charts off ÷ no chart code',
      value: round(cold(samples.off) / base, 2),
      unit: '×',
      target: '≤ 1.5×',
      pass: cold(samples.off) / base <= 1.5,
    },
  ];
  return { rows, details: { digestColdSamples: samples, digestBundleBytes: { without: without.bytes, withCharts: withCharts.bytes } } };
}

interface ColdSample {
  bootMs: number;
  loadMs: number;
  firstRenderMs: number;
  warmMs: number[];
  kind: string;
}

/** The PNG renderer's own bundle beside a function bundle, as the stack's afterBundling hook emits it; its size. */
async function emitRenderer(dir: string): Promise<number> {
  const options = chartRendererEsbuildOptions(dir);
  await build({ ...options, logLevel: 'error', absWorkingDir: PROJECT_ROOT });
  return statSync(options.outfile).size;
}

/** Bundles `contents` as infra bundles a function (CommonJS, minified, node target), the PNG renderer beside it. */
async function bundle(name: string, contents: string): Promise<{ dir: string; file: string; bytes: number }> {
  const dir = join(BUILD_DIR, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'index.js');
  await build({
    stdin: { contents, resolveDir: PROJECT_ROOT, loader: 'ts', sourcefile: `${name}.ts` },
    bundle: true,
    platform: 'node',
    ...CHART_FUNCTION_OPTIONS,
    sourcemap: false,
    outfile: file,
    logLevel: 'error',
    absWorkingDir: PROJECT_ROOT,
  });
  const rendererBytes = await emitRenderer(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'commonjs' }));
  return { dir, file, bytes: statSync(file).size + rendererBytes };
}

/** What infra must do: the two assets beside the handler, in chart-assets/. */
function shipAssets(dir: string): number {
  const require = createRequire(join(PROJECT_ROOT, 'package.json'));
  mkdirSync(join(dir, CHART_ASSETS_DIR), { recursive: true });
  let bytes = 0;
  for (const asset of Object.values(CHART_ASSETS)) {
    const target = join(dir, CHART_ASSETS_DIR, asset.file);
    copyFileSync(require.resolve(asset.packagePath), target);
    bytes += statSync(target).size;
  }
  return bytes;
}

function spawnJson<T>(file: string, taskRoot: string): T {
  // cwd outside the project: the assets can only come from LAMBDA_TASK_ROOT, as in Lambda.
  const result = spawnSync(process.execPath, [file], {
    cwd: taskRoot,
    env: { ...process.env, LAMBDA_TASK_ROOT: taskRoot },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`chart bench child failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

async function warmFigures(): Promise<{ renderMs: number; renderUploadMs: number; pngBytes: number; height: number }> {
  const slack = await LocalSlackServer.start({ tokens: [TOKEN] });
  try {
    const renderer = await loadChartRenderer();
    const poster = createSlackPoster({ token: TOKEN, slackApiUrl: slack.apiUrl });
    const uploader = createSlackFileUploader({ token: TOKEN, slackApiUrl: slack.apiUrl });
    const { ts } = await poster.post(CHANNEL, { text: 'bench digest', blocks: [] });
    const input = chartInput();
    const first = await renderer.renderTrendChart(input); // warm-up: wasm, font, JIT
    if (first.kind !== 'rendered') throw new Error(`no chart: ${first.reason}`);
    const render: number[] = [];
    const both: number[] = [];
    for (let i = 0; i < WARM_RUNS; i++) {
      const t0 = performance.now();
      const outcome = await renderer.renderTrendChart(input);
      const t1 = performance.now();
      if (outcome.kind !== 'rendered') throw new Error('no chart');
      await uploader.upload({
        channel: CHANNEL,
        threadTs: ts,
        filename: 'trend.png',
        bytes: outcome.chart.png,
        altText: outcome.chart.altText,
      });
      render.push(t1 - t0);
      both.push(performance.now() - t0);
    }
    return { renderMs: median(render), renderUploadMs: median(both), pngBytes: first.chart.png.length, height: first.chart.height };
  } finally {
    await slack.close();
  }
}

export async function runChart(): Promise<{ rows: ResultRow[]; details: Record<string, unknown> }> {
  log('chart: bundling the renderer as a function bundle');
  const chart = await bundle('chart', CHILD_ENTRY);
  const assetBytes = shipAssets(chart.dir);
  const baseline = await bundle('chart-baseline', BASELINE_ENTRY);
  log(`chart: ${COLD_SPAWNS} cold processes`);
  const cold: ColdSample[] = [];
  const baselineBoot: number[] = [];
  for (let i = 0; i < COLD_SPAWNS; i++) {
    cold.push(spawnJson<ColdSample>(chart.file, chart.dir));
    baselineBoot.push(spawnJson<{ bootMs: number }>(baseline.file, baseline.dir).bootMs);
  }
  if (cold.some((c) => c.kind !== 'rendered')) throw new Error('the cold chart was not rendered');
  log(`chart: ${WARM_RUNS} warm renders + uploads to the local Slack server`);
  const warm = await warmFigures();
  const coldTotal = median(cold.map((c) => c.loadMs + c.firstRenderMs));
  log(`chart: the digest bundle, ${COLD_SPAWNS} cold processes each without chart code, charts off, charts on`);
  const digest = await digestColdStarts();
  const rows: ResultRow[] = [
    ...digest.rows,
    {
      benchmark: 'chart',
      figure: 'cold: import renderer (vega, vega-lite, resvg)',
      value: round(median(cold.map((c) => c.loadMs)), 1),
      unit: 'ms',
    },
    {
      benchmark: 'chart',
      figure: 'cold: first render (wasm + font init incl.)',
      value: round(median(cold.map((c) => c.firstRenderMs)), 1),
      unit: 'ms',
    },
    { benchmark: 'chart', figure: 'cold: import + first render', value: round(coldTotal, 1), unit: 'ms' },
    {
      benchmark: 'chart',
      figure: 'cold: load of a bundle carrying the chart code (uncalled), over an empty one',
      value: round(median(cold.map((c) => c.bootMs)) - median(baselineBoot), 1),
      unit: 'ms',
    },
    { benchmark: 'chart', figure: 'warm: render (2 panels, 8 + 4 series)', value: round(warm.renderMs, 1), unit: 'ms' },
    {
      benchmark: 'chart',
      figure: 'warm: render + upload (local Slack)',
      value: round(warm.renderUploadMs, 1),
      unit: 'ms',
      target: `≤ ${TARGET_MS} ms`,
      pass: warm.renderUploadMs <= TARGET_MS,
    },
    { benchmark: 'chart', figure: `PNG size (1200×${warm.height})`, value: round(warm.pngBytes / 1024, 1), unit: 'KiB' },
    { benchmark: 'chart', figure: 'bundle: chart code (minified JS)', value: round(chart.bytes / 1024, 1), unit: 'KiB' },
    { benchmark: 'chart', figure: 'bundle: chart-assets/ (wasm + font)', value: round(assetBytes / 1024, 1), unit: 'KiB' },
  ];
  return {
    rows,
    details: {
      ...digest.details,
      coldSpawns: COLD_SPAWNS,
      warmRuns: WARM_RUNS,
      coldSamples: cold.map((c) => ({ ...c, warmMs: c.warmMs.map((ms) => round(ms, 1)) })),
      coldWarmRenderMedianMs: round(median(cold.flatMap((c) => c.warmMs)), 1),
      baselineBootMs: baselineBoot.map((ms) => round(ms, 1)),
      chartBundleBytes: chart.bytes,
      assetBytes,
    },
  };
}
