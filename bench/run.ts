/**
 * `npm run bench`: runs every benchmark in one go, prints a table and writes bench/results.json
 * (machine, every figure, and the details behind them). `npm run bench -- verify digest` runs a
 * subset (names: verify, ingest, digest, cold-start, chart, native-chart).
 *
 * Exit code 0 when every benchmark ran (a missed target is reported, not an error); 1 when one failed.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runVerifyCost } from './verify-cost';
import { runIngestCost } from './ingest-cost';
import { runDigestCriticalPath } from './digest-critical-path';
import { runColdStart } from './cold-start';
import { runChart } from './chart';
import { runNativeChart } from './native-chart';
import { PROJECT_ROOT, log, machineInfo, measuredCommit, round, type ResultRow } from './lib';

type BenchResult = { rows: ResultRow[]; details: Record<string, unknown> };

const BENCHMARKS: { name: string; run: () => Promise<BenchResult> }[] = [
  // CPU-bound micro-benchmark first, before the servers of the others exist.
  { name: 'verify', run: runVerifyCost },
  { name: 'ingest', run: runIngestCost },
  { name: 'digest', run: runDigestCriticalPath },
  { name: 'cold-start', run: runColdStart },
  { name: 'chart', run: runChart },
  { name: 'native-chart', run: runNativeChart },
];

export const RESULTS_FILE = join(PROJECT_ROOT, 'bench', 'results.json');

function formatValue(row: ResultRow): string {
  const value = Number.isInteger(row.value) ? row.value.toLocaleString('en-US') : String(row.value);
  return row.unit === '×' ? `${value}×` : `${value} ${row.unit}`;
}

export function formatTable(rows: readonly ResultRow[]): string {
  const header = ['benchmark', 'figure', 'value', 'target', 'result'];
  const lines = rows.map((r) => [
    r.benchmark,
    r.figure,
    formatValue(r),
    r.target ?? '',
    r.pass === undefined ? '' : r.pass ? 'PASS' : 'FAIL',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join(' | ')
      .trimEnd();
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...lines.map(fmt)].join('\n');
}

async function main(): Promise<number> {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = wanted.filter((w) => !BENCHMARKS.some((b) => b.name === w));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}\n`);
    return 2;
  }
  const selected = wanted.length === 0 ? BENCHMARKS : BENCHMARKS.filter((b) => wanted.includes(b.name));

  const machine = machineInfo();
  const loadStart = loadavg().map((x) => round(x, 2));
  log(`${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}; load average ${loadStart.join(' ')}`);
  const started = performance.now();
  const results: Record<string, BenchResult | { error: string }> = {};
  const rows: ResultRow[] = [];
  let failed = false;
  for (const bench of selected) {
    const t0 = performance.now();
    try {
      const result = await bench.run();
      results[bench.name] = { ...result, details: { ...result.details, durationS: round((performance.now() - t0) / 1000, 1) } };
      rows.push(...result.rows);
    } catch (error) {
      failed = true;
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      process.stderr.write(`benchmark ${bench.name} failed: ${message}\n`);
      results[bench.name] = { error: error instanceof Error ? error.message : String(error) };
      rows.push({
        benchmark: bench.name,
        figure: 'benchmark failed (see stderr)',
        value: Number.NaN,
        unit: '',
        target: 'runs',
        pass: false,
      });
    }
  }
  const durationS = round((performance.now() - started) / 1000, 1);
  const loadEnd = loadavg().map((x) => round(x, 2));

  const output = {
    command: wanted.length === 0 ? 'npm run bench' : `npm run bench -- ${wanted.join(' ')}`,
    // The code measured: docs/PERFORMANCE.md quotes a run of this commit (dirty = uncommitted changes).
    ...measuredCommit(),
    // Anything but 1 is a smoke run (see scaled() in bench/lib.ts): its figures are not to be quoted.
    benchScale: Number(process.env['BENCH_SCALE'] ?? '1'),
    machine,
    loadAverage: { start: loadStart, end: loadEnd },
    durationS,
    rows,
    benchmarks: results,
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(output, null, 2)}\n`);

  process.stdout.write(`\n${formatTable(rows)}\n\n`);
  process.stdout.write(
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node} (${machine.platform}/${machine.arch}), ${machine.date}\n`,
  );
  process.stdout.write(`Load average (1/5/15 min): ${loadStart.join(' ')} at start, ${loadEnd.join(' ')} at end. Took ${durationS} s.\n`);
  process.stdout.write(`Results: ${relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}\n`);
  const missed = rows.filter((r) => r.pass === false);
  if (missed.length > 0) process.stdout.write(`Targets missed: ${missed.map((r) => `${r.benchmark} / ${r.figure}`).join('; ')}\n`);
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    // Servers and sockets of the benchmarks are closed; exit even if a stray handle lingers.
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
