/**
 * Benchmark 3: cold start. Each function is bundled with esbuild as the stack bundles it (settings
 * read from the `bundling:` block in infra/*.ts when there is one), next to a baseline bundle that
 * holds only the AWS SDK clients the function uses, each constructed. Import time is measured in
 * fresh Node processes around `require(bundle)`, with the environment the handler validates at
 * cold start; spawns are interleaved between the bundles and the median is reported.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { BUILD_DIR, PROJECT_ROOT, log, median, percentile, round, type ResultRow } from './lib';

const SPAWNS = 15;
const WARMUP_SPAWNS = 2;
const TARGET_RATIO = 1.3;

export interface BundlingSettings {
  format: 'cjs' | 'esm';
  target: string;
  minify: boolean;
  sourcemap: boolean;
  sourcesContent: boolean;
  externals: string[];
  /** NODE_OPTIONS the stack gives the functions (e.g. --enable-source-maps). */
  nodeOptions: string | undefined;
  /** Where the settings came from. */
  source: string;
}

const DEFAULTS: BundlingSettings = {
  format: 'cjs',
  target: 'node22',
  minify: true,
  sourcemap: true,
  sourcesContent: true,
  externals: [],
  nodeOptions: undefined,
  source: 'defaults (no bundling: block found in infra/*.ts)',
};

/** Reads the NodejsFunction `bundling:` options out of infra/*.ts (a plain text scan, no CDK synth). */
export function readBundlingSettings(): BundlingSettings {
  const infraDir = join(PROJECT_ROOT, 'infra');
  let files: string[];
  try {
    files = readdirSync(infraDir).filter((f) => f.endsWith('.ts'));
  } catch {
    return DEFAULTS;
  }
  for (const file of files) {
    const text = readFileSync(join(infraDir, file), 'utf8');
    const block = /bundling:\s*\{([^}]*)\}/.exec(text)?.[1];
    if (block === undefined) continue;
    const bool = (name: string, fallback: boolean): boolean => {
      const value = new RegExp(`\\b${name}:\\s*(true|false)`).exec(block)?.[1];
      return value === undefined ? fallback : value === 'true';
    };
    const format = /\bformat:\s*OutputFormat\.(CJS|ESM)/.exec(block)?.[1];
    const target = /\btarget:\s*['"]([^'"]+)['"]/.exec(block)?.[1];
    const externalList = /\bexternalModules:\s*\[([^\]]*)\]/.exec(block)?.[1];
    const bundleAwsSdk = bool('bundleAwsSDK', false);
    const externals = externalList !== undefined
      ? [...externalList.matchAll(/['"]([^'"]+)['"]/g)].map((m) => m[1]!)
      : bundleAwsSdk ? [] : ['@aws-sdk/*'];
    return {
      format: format === 'ESM' ? 'esm' : 'cjs',
      target: target ?? DEFAULTS.target,
      minify: bool('minify', false),
      sourcemap: bool('sourceMap', false),
      sourcesContent: bool('sourcesContent', true),
      externals,
      nodeOptions: /\bNODE_OPTIONS:\s*['"]([^'"]*)['"]/.exec(text)?.[1],
      source: `infra/${file} (bundling: block)`,
    };
  }
  return DEFAULTS;
}

interface Bundle {
  name: string;
  file: string;
  bytes: number;
  gzipBytes: number;
  mapBytes: number;
  metafile: Metafile;
}

const BASELINE_CLIENTS = `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
export const clients = [new DynamoDBClient({}), new SQSClient({}), new SecretsManagerClient({})];
export const handler = async () => ({ statusCode: 200 });
`;

/** Diagnostic only: the digest baseline plus the Slack Web API client, to attribute the digest's extra time. */
const BASELINE_WITH_SLACK = `${BASELINE_CLIENTS}
import { WebClient } from '@slack/web-api';
export const slack = new WebClient('xoxb-bench');
`;

async function bundle(name: string, entry: { file: string } | { contents: string }, settings: BundlingSettings): Promise<Bundle> {
  const dir = join(BUILD_DIR, name);
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, settings.format === 'esm' ? 'index.mjs' : 'index.js');
  const result = await build({
    ...('file' in entry ? { entryPoints: [entry.file] } : { stdin: { contents: entry.contents, resolveDir: PROJECT_ROOT, loader: 'ts', sourcefile: `${name}.ts` } }),
    bundle: true,
    platform: 'node',
    format: settings.format,
    target: settings.target,
    minify: settings.minify,
    sourcemap: settings.sourcemap,
    sourcesContent: settings.sourcesContent,
    external: settings.externals,
    outfile,
    metafile: true,
    logLevel: 'error',
    absWorkingDir: PROJECT_ROOT,
  });
  // Lambda's task root has no package.json; this one keeps the project's "type": "module" out.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: settings.format === 'esm' ? 'module' : 'commonjs' }));
  const code = readFileSync(outfile);
  let mapBytes: number;
  try {
    mapBytes = statSync(`${outfile}.map`).size;
  } catch {
    mapBytes = 0;
  }
  return { name, file: outfile, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, mapBytes, metafile: result.metafile };
}

/** Environment the handlers validate at cold start (local-style values; nothing is called). */
const COLD_START_ENV: Record<string, string> = {
  TABLE_NAME: 'bench-table',
  QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench-queue',
  SIGNING_SECRETS: '["whsec_bench"]',
  READ_API_BASE_URL: 'https://api.example.com',
  READ_API_KEY: 'bench-read-key',
  SLACK_BOT_TOKEN: 'xoxb-bench',
  SLACK_DEFAULT_CHANNEL: '#bench',
  AWS_REGION: 'us-east-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_METRICS_DISABLED: 'true',
  // Lambda runs Node 24, where the SDK prints no "Node 20 support ends" warning.
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** Prints `{"wall": ms, "cpu": ms}` for loading the bundle: wall clock and the process's CPU time (user + system). */
const IMPORT_SCRIPT = [
  "const { performance } = require('node:perf_hooks');",
  'const file = process.env.BENCH_BUNDLE;',
  'const cpu0 = process.cpuUsage();',
  'const start = performance.now();',
  'const done = () => {',
  '  const wall = performance.now() - start;',
  '  const cpu = process.cpuUsage(cpu0);',
  '  process.stdout.write(JSON.stringify({ wall, cpu: (cpu.user + cpu.system) / 1000 }));',
  '  process.exit(0);',
  '};',
  "if (file.endsWith('.mjs')) {",
  "  import(require('node:url').pathToFileURL(file).href).then(done, (e) => { console.error(e); process.exit(1); });",
  '} else {',
  '  require(file);',
  '  done();',
  '}',
].join('\n');

interface ImportTime {
  wall: number;
  cpu: number;
}

function importTimeMs(file: string, nodeOptions: string | undefined): Promise<ImportTime> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', ...COLD_START_ENV, BENCH_BUNDLE: file };
    if (nodeOptions) env['NODE_OPTIONS'] = nodeOptions;
    const child = spawn(process.execPath, ['-e', IMPORT_SCRIPT], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      let parsed: Partial<ImportTime>;
      try {
        parsed = JSON.parse(out.trim()) as Partial<ImportTime>;
      } catch {
        parsed = {};
      }
      const { wall, cpu } = parsed;
      if (code !== 0 || typeof wall !== 'number' || typeof cpu !== 'number') reject(new Error(`import of ${file} failed (exit ${code}): ${err.slice(0, 500)}`));
      else resolve({ wall, cpu });
    });
  });
}

/**
 * Diagnostic: CPU time of the Intl objects the digest code creates at module level (Intl.Segmenter
 * in shared/slack-text.ts, two Intl.NumberFormat in shared/digest/render.ts). The first Intl object
 * of a process initialises ICU, which is most of the cost.
 */
const INTL_SCRIPT = [
  'const cpu0 = process.cpuUsage();',
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
  return [...bytesByGroup(metafile).entries()].map(([input, bytes]) => ({ input, bytes })).sort((a, b) => b.bytes - a.bytes).slice(0, count);
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

export async function runColdStart(): Promise<{ rows: ResultRow[]; details: Record<string, unknown> }> {
  const settings = readBundlingSettings();
  log(`cold start: bundling with ${settings.source}: ${settings.format}, ${settings.target}, minify ${settings.minify}, sourcemap ${settings.sourcemap}`);
  mkdirSync(BUILD_DIR, { recursive: true });
  const bundles = {
    ingest: await bundle('ingest', { file: join(PROJECT_ROOT, 'functions/ingest/handler.ts') }, settings),
    'ingest-baseline': await bundle('ingest-baseline', { contents: BASELINE_CLIENTS }, settings),
    digest: await bundle('digest', { file: join(PROJECT_ROOT, 'functions/digest/handler.ts') }, settings),
    'digest-baseline': await bundle('digest-baseline', { contents: BASELINE_CLIENTS }, settings),
    'diagnostic: digest-baseline + @slack/web-api': await bundle('digest-baseline-slack', { contents: BASELINE_WITH_SLACK }, settings),
  };
  const names = Object.keys(bundles) as (keyof typeof bundles)[];

  // As deployed (the stack's NODE_OPTIONS, e.g. --enable-source-maps), and without NODE_OPTIONS.
  const modes: { label: string; nodeOptions: string | undefined }[] = [{ label: settings.nodeOptions ? `NODE_OPTIONS=${settings.nodeOptions}` : 'no NODE_OPTIONS', nodeOptions: settings.nodeOptions }];
  if (settings.nodeOptions) modes.push({ label: 'no NODE_OPTIONS', nodeOptions: undefined });

  const times: Record<string, Record<string, number[]>> = {};
  const cpuTimes: Record<string, Record<string, number[]>> = {};
  for (const mode of modes) {
    log(`cold start: ${SPAWNS} fresh processes per bundle, interleaved (${mode.label})`);
    const perBundle: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    const cpuPerBundle: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let i = 0; i < WARMUP_SPAWNS + SPAWNS; i++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(i + k) % names.length]!;
        const t = await importTimeMs(bundles[name].file, mode.nodeOptions);
        if (i >= WARMUP_SPAWNS) {
          perBundle[name]!.push(t.wall);
          cpuPerBundle[name]!.push(t.cpu);
        }
      }
    }
    times[mode.label] = perBundle;
    cpuTimes[mode.label] = cpuPerBundle;
  }

  const intlCpuMs = Array.from({ length: SPAWNS }, intlInitCpuMs);

  const b = 'cold start';
  const rows: ResultRow[] = [];
  for (const name of names) {
    const x = bundles[name];
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
      rows.push({ benchmark: b, figure: `${fn} require() median (${mode.label})`, value: round(median(handlerTimes), 1), unit: 'ms' });
      rows.push({ benchmark: b, figure: `${fn}-baseline require() median (${mode.label})`, value: round(median(baselineTimes), 1), unit: 'ms' });
      rows.push({
        benchmark: b,
        figure: `${fn} / baseline (${mode.label})`,
        value: round(ratio, 3),
        unit: '×',
        ...(primary ? { target: `≤ ${TARGET_RATIO}×`, pass: ratio <= TARGET_RATIO } : {}),
      });
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

  const primaryCpu = cpuTimes[modes[0]!.label]!;
  rows.push({
    benchmark: b,
    figure: 'diagnostic: digest − baseline, CPU time, median of pairs',
    value: round(median(primaryCpu['digest']!.map((ms, i) => ms - primaryCpu['digest-baseline']![i]!)), 1),
    unit: 'ms',
  });
  rows.push({ benchmark: b, figure: 'diagnostic: ICU start-up (Intl objects, created on first use, not at import), CPU time', value: round(median(intlCpuMs), 1), unit: 'ms' });

  return {
    rows,
    details: {
      bundling: settings,
      intlInitCpuMs: { median: round(median(intlCpuMs), 1), p25: round(percentile(intlCpuMs, 25), 1), p75: round(percentile(intlCpuMs, 75), 1) },
      buildDir: relative(PROJECT_ROOT, BUILD_DIR),
      spawnsPerBundle: SPAWNS,
      baselineEntry: BASELINE_CLIENTS.trim(),
      bundles: Object.fromEntries(
        names.map((name) => {
          const x = bundles[name];
          return [name, { file: relative(PROJECT_ROOT, x.file), bytes: x.bytes, gzipBytes: x.gzipBytes, sourceMapBytes: x.mapBytes, topInputsByBytes: topInputs(x.metafile, 12) }];
        }),
      ),
      requireCpuMs: Object.fromEntries(
        Object.entries(cpuTimes).map(([mode, perBundle]) => [
          mode,
          Object.fromEntries(Object.entries(perBundle).map(([name, v]) => [name, { median: round(median(v), 1), p25: round(percentile(v, 25), 1), p75: round(percentile(v, 75), 1) }])),
        ]),
      ),
      requireMs: Object.fromEntries(
        Object.entries(times).map(([mode, perBundle]) => [
          mode,
          Object.fromEntries(Object.entries(perBundle).map(([name, v]) => [name, { median: round(median(v), 1), p25: round(percentile(v, 25), 1), p75: round(percentile(v, 75), 1) }])),
        ]),
      ),
      ratios,
      ratio: 'median of paired per-cycle ratios (handler spawn / baseline spawn of the same cycle)',
      extraOverBaselineByBytes: {
        ingest: extraOverBaseline(bundles.ingest.metafile, bundles['ingest-baseline'].metafile, 12),
        digest: extraOverBaseline(bundles.digest.metafile, bundles['digest-baseline'].metafile, 12),
      },
    },
  };
}
