/**
 * Shared helpers of the benchmarks: statistics, machine description, result rows and the local
 * environment the handlers are configured with. Benchmarks only; tests never time anything.
 */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Observability } from '../shared/adapters/powertools';
import { noMetrics, silentLog } from '../shared/observability';

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUILD_DIR = fileURLToPath(new URL('./.build/', import.meta.url));

/** One line of the printed table and of results.json. */
export interface ResultRow {
  benchmark: string;
  figure: string;
  value: number;
  unit: string;
  /** Human text of the target, e.g. "≤ 1.25×"; undefined for informational figures. */
  target?: string;
  pass?: boolean;
}

/** The middle value of an odd count, the mean of the two middle values of an even one; NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const upper = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[upper]! : (sorted[upper - 1]! + sorted[upper]!) / 2;
}

/** Nearest-rank percentile (p in 0..100) of the values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** The commit the benchmarks measured, and whether the work tree had changes on top of it. */
export function measuredCommit(): { commit: string; dirty: boolean } {
  const git = (args: string[]): string => execFileSync('git', args, { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim();
  try {
    return { commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '' };
  } catch {
    return { commit: 'unknown (not a git work tree)', dirty: false };
  }
}

/**
 * An iteration count scaled by BENCH_SCALE (default 1), never below `min`: `BENCH_SCALE=0.01 npm run
 * bench` checks that every benchmark runs, in seconds; its figures mean nothing.
 */
export function scaled(count: number, min: number): number {
  const raw = Number(process.env['BENCH_SCALE'] ?? '1');
  const scale = Number.isFinite(raw) && raw > 0 ? raw : 1;
  return Math.max(min, Math.round(count * scale));
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export interface MachineInfo {
  node: string;
  v8: string;
  platform: string;
  arch: string;
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  date: string;
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: process.platform,
    arch: process.arch,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    date: new Date().toISOString(),
  };
}

/** Observability that writes nothing: the handlers' own cost without log output. */
export function quietObservability(): Observability {
  return { log: silentLog, metrics: noMetrics, flush() {}, appendKeys() {}, resetKeys() {} };
}

/**
 * Dummy credentials and a region for the SDK's default chain (the handlers read endpoints from the
 * env object they are given, credentials from the process). Nothing here reaches AWS.
 */
export function useLocalAwsCredentials(): void {
  process.env['AWS_ACCESS_KEY_ID'] ??= 'local';
  process.env['AWS_SECRET_ACCESS_KEY'] ??= 'local';
  process.env['AWS_REGION'] ??= 'us-east-1';
  process.env['AWS_EC2_METADATA_DISABLED'] = 'true';
  // Lambda runs Node 24; the SDK's "Node 20 support ends" notice is noise here.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  process.env['POWERTOOLS_LOG_LEVEL'] = 'SILENT';
  process.env['POWERTOOLS_METRICS_DISABLED'] = 'true';
}

export { sleep } from '../shared/util';

/** Runs `jobs` tasks with at most `limit` in flight; resolves when all have ended. */
export async function runConcurrent(count: number, limit: number, job: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      await job(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}

export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}
