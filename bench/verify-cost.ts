/**
 * Benchmark 1: verify + parse per delivery of a 1 KiB run.completed body.
 *
 * Three loops over the same header and body (a Buffer, as the ingest function holds it):
 * - verify: `createSignatureVerifier(...)` (built once) then `JSON.parse`, as ingest does;
 * - floor: one HMAC over "<t>." + body with a key prepared once (a KeyObject, as the verifier
 *   prepares its keys), one `timingSafeEqual` against the pre-decoded signature, one `JSON.parse`:
 *   the least work the scheme allows;
 * - stripe: stripe-node's `webhooks.constructEvent(body, header, secret, tolerance)` (same scheme:
 *   `t=…,v1=…`, HMAC-SHA256 over "<t>." + payload), which also parses the JSON.
 * Warm-up first, then rounds in rotating order (interleaved, so drift hits all three alike); each
 * figure is the median over the rounds. Diagnostics split the verifier's cost into header parsing
 * and HMAC with a KeyObject versus a string key.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import Stripe from 'stripe';
import { createSignatureVerifier, parseSignatureHeader, signPayload } from '../shared/signature';
import { log, median, percentile, round, scaled, type ResultRow } from './lib';

const BODY_BYTES = 1024;
/** Short blocks, rotated between the variants: drift from other load hits all of them alike. */
const BLOCKS = scaled(150, 3);
const BLOCK_ITERATIONS = scaled(1_500, 10);
const WARMUP_ITERATIONS = scaled(30_000, 10);
const DIAGNOSTIC_BLOCKS = scaled(60, 3);

/** A run.completed delivery body as the service sends it, padded to exactly `bytes` bytes. */
export function runCompletedBody(bytes: number): Buffer {
  const base = {
    id: '7f1c6f0e-3c1a-4d55-9a43-1d2c8b7e5a10',
    type: 'run.completed',
    created_at: '2026-11-20T10:00:00Z',
    data: {
      project_id: '0b6f3f8e-52a7-4a4e-8d6a-3b8c2f1e9d47',
      run_id: 'c2d9e4a1-6b3f-4e8a-9c1d-5f7a2b8e3c60',
      status: 'completed',
      answers: 120,
      note: '',
    },
  };
  const empty = Buffer.byteLength(JSON.stringify(base));
  if (empty > bytes) throw new Error(`body template is already ${empty} bytes`);
  base.data.note = 'x'.repeat(bytes - empty);
  const body = Buffer.from(JSON.stringify(base), 'utf8');
  if (body.length !== bytes) throw new Error(`padded body is ${body.length} bytes, not ${bytes}`);
  return body;
}

type Loop = (iterations: number) => number;

interface VerifyFigures {
  verifyNs: number;
  floorNs: number;
  stripeNs: number;
  diagnostics: Record<string, number>;
}

/**
 * Runs each named variant `blocks` times for `iterations` each, rotating which goes first, and
 * returns the ns/op of every block per variant (index i of every list comes from the same cycle).
 */
function measureInterleaved<N extends string>(
  names: readonly N[],
  run: (name: N, iterations: number) => number,
  blocks: number,
  iterations: number,
): Record<N, number[]> {
  const out = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<N, number[]>;
  for (let cycle = 0; cycle < blocks; cycle++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(cycle + k) % names.length]!;
      out[name].push(run(name, iterations));
    }
  }
  return out;
}

/** ns per iteration of one loop run. */
function timeLoop(loop: Loop, iterations: number, sink: { value: number }): number {
  const start = process.hrtime.bigint();
  sink.value += loop(iterations);
  return Number(process.hrtime.bigint() - start) / iterations;
}

export async function runVerifyCost(): Promise<{ rows: ResultRow[]; details: Record<string, unknown> }> {
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  const body = runCompletedBody(BODY_BYTES);
  const t = Math.floor(Date.now() / 1000);
  const header = signPayload(secret, t, body);
  const tolerance = 300;

  const verifier = createSignatureVerifier({ secrets: [secret], toleranceSeconds: tolerance });
  const stripe = new Stripe('sk_test_bench_not_used_for_requests');
  const prefix = `${t}.`;
  const expected = Buffer.from(header.slice(header.indexOf('v1=') + 3), 'hex');
  const keyObject = createSecretKey(Buffer.from(secret, 'utf8'));

  // Every loop checks its own result so a broken variant can't look fast.
  const loops: Record<'verify' | 'floor' | 'stripe', Loop> = {
    verify: (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) {
        const check = verifier(header, body, Math.floor(Date.now() / 1000));
        if (!check.ok) throw new Error(`verifier rejected the bench delivery: ${check.reason}`);
        const event = JSON.parse(body.toString('utf8')) as { id: string };
        acc += event.id.length;
      }
      return acc;
    },
    floor: (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) {
        const digest = createHmac('sha256', keyObject).update(prefix).update(body).digest();
        if (!timingSafeEqual(digest, expected)) throw new Error('floor digest mismatch');
        const event = JSON.parse(body.toString('utf8')) as { id: string };
        acc += event.id.length;
      }
      return acc;
    },
    stripe: (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) {
        const event = stripe.webhooks.constructEvent(body, header, secret, tolerance) as unknown as { id: string };
        acc += event.id.length;
      }
      return acc;
    },
  };

  // Diagnostics: where the verifier's time goes.
  const bodyString = body.toString('utf8');
  const diagnosticLoops: Record<string, Loop> = {
    'parseSignatureHeader only': (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += parseSignatureHeader(header)?.length ?? 0;
      return acc;
    },
    'HMAC, KeyObject key': (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += createHmac('sha256', keyObject).update(prefix).update(body).digest()[0]!;
      return acc;
    },
    'HMAC, string key': (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += createHmac('sha256', secret).update(prefix).update(body).digest()[0]!;
      return acc;
    },
    'JSON.parse of the body (Buffer → string → parse)': (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += (JSON.parse(body.toString('utf8')) as { id: string }).id.length;
      return acc;
    },
    'JSON.parse of a string body': (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += (JSON.parse(bodyString) as { id: string }).id.length;
      return acc;
    },
  };

  const sink = { value: 0 };
  log('verify cost: warming up');
  for (const loop of [...Object.values(loops), ...Object.values(diagnosticLoops)]) timeLoop(loop, WARMUP_ITERATIONS, sink);

  log(`verify cost: ${BLOCKS} interleaved blocks of ${BLOCK_ITERATIONS} iterations per variant`);
  const names = Object.keys(loops) as (keyof typeof loops)[];
  const samples = measureInterleaved(names, (name, n) => timeLoop(loops[name], n, sink), BLOCKS, BLOCK_ITERATIONS);
  const diagnosticNames = Object.keys(diagnosticLoops);
  const diagnosticSamples = measureInterleaved(
    diagnosticNames,
    (name, n) => timeLoop(diagnosticLoops[name]!, n, sink),
    DIAGNOSTIC_BLOCKS,
    BLOCK_ITERATIONS,
  );
  if (sink.value === 0) throw new Error('bench sink is empty');
  await Promise.resolve();

  // Ratios are paired: each block of one variant against the block of the other run right beside
  // it, so load from other processes (drift) cancels out; the median of those ratios is reported.
  const pairedRatio = (a: number[], b: number[]): number => median(a.map((x, i) => x / b[i]!));
  const figures: VerifyFigures = {
    verifyNs: median(samples.verify),
    floorNs: median(samples.floor),
    stripeNs: median(samples.stripe),
    diagnostics: Object.fromEntries(diagnosticNames.map((name) => [name, round(median(diagnosticSamples[name] ?? []), 1)])),
  };
  const vsFloor = pairedRatio(samples.verify, samples.floor);
  const vsStripe = pairedRatio(samples.verify, samples.stripe);
  const b = 'verify cost (1 KiB)';
  const rows: ResultRow[] = [
    { benchmark: b, figure: 'createSignatureVerifier + JSON.parse', value: round(figures.verifyNs, 0), unit: 'ns/op' },
    { benchmark: b, figure: 'createSignatureVerifier + JSON.parse', value: round(1e9 / figures.verifyNs, 0), unit: 'ops/s' },
    { benchmark: b, figure: 'floor: HMAC (prepared key) + timingSafeEqual + JSON.parse', value: round(figures.floorNs, 0), unit: 'ns/op' },
    {
      benchmark: b,
      figure: 'floor: HMAC (prepared key) + timingSafeEqual + JSON.parse',
      value: round(1e9 / figures.floorNs, 0),
      unit: 'ops/s',
    },
    { benchmark: b, figure: 'stripe constructEvent', value: round(figures.stripeNs, 0), unit: 'ns/op' },
    { benchmark: b, figure: 'stripe constructEvent', value: round(1e9 / figures.stripeNs, 0), unit: 'ops/s' },
    { benchmark: b, figure: 'verify / floor', value: round(vsFloor, 3), unit: '×', target: '≤ 1.25×', pass: vsFloor <= 1.25 },
    { benchmark: b, figure: 'verify / stripe', value: round(vsStripe, 3), unit: '×', target: '≤ 1.00×', pass: vsStripe <= 1.0 },
  ];
  return {
    rows,
    details: {
      bodyBytes: BODY_BYTES,
      blocks: BLOCKS,
      iterationsPerBlock: BLOCK_ITERATIONS,
      nsPerOpQuartiles: Object.fromEntries(
        Object.entries(samples).map(([k, v]) => [
          k,
          { p25: round(percentile(v, 25), 0), p50: round(median(v), 0), p75: round(percentile(v, 75), 0) },
        ]),
      ),
      ratio: 'median of paired per-block ratios',
      diagnosticsNsPerOp: figures.diagnostics,
      stripeVersion: Stripe.PACKAGE_VERSION,
    },
  };
}
