/**
 * npm run load — 2,000 signed deliveries against the local stack, in bursts at concurrency 50, with
 * 30 % duplicates and 10 % out of order across several projects. Behaves as the sender does: a 5xx
 * is retried with the same body (re-signed, as each attempt is) on the sender's schedule scaled by 0.4. Checks afterwards that nothing was
 * lost (every event accepted, then posted or superseded, queue and DLQ empty) and nothing was
 * posted twice (one top-level Slack message per event id at most). Prints throughput and latency
 * percentiles and writes bench/load-results.json. Exits 1 if any check fails.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startLocalStack } from '../local/stack';
import { signPayload } from '../shared/signature';
import { mulberry32 } from '../local/simulator/random';

const TOTAL = Number(process.env['LOAD_DELIVERIES'] ?? 2000);
const CONCURRENCY = 50;
const DUPLICATE_SHARE = 0.3;
const OUT_OF_ORDER_SHARE = 0.1;
const BURST = 250;
/** The sender's retry schedule (30 s, 1 m, 2 m, 4 m, 8 m) scaled by 0.4: still longer than the ingest lease (10 s). */
const SENDER_RETRY_DELAYS_MS = [30_000, 60_000, 120_000, 240_000, 480_000].map((ms) => ms * 0.4);

interface Delivery {
  id: string;
  projectId: string;
  createdAt: number;
  body: string;
}

interface Attempt {
  status: number;
  result: string;
  ms: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

async function main(): Promise<void> {
  const stack = await startLocalStack({
    port: 0,
    logLevel: 'silent',
    registerWebhook: false,
    pollWaitSeconds: 1,
  });
  const secret = stack.secrets[0] ?? '';
  const projects = stack.projectIds.slice(0, 4);
  // Seeded, so every run sends the same mix.
  const random = mulberry32(7);

  // Unique events, each project's runs one minute apart; then duplicates and late arrivals mixed in.
  const uniqueCount = Math.round(TOTAL * (1 - DUPLICATE_SHARE));
  // Runs one second apart, all in the past: the bridge refuses a created_at after the signature time.
  const base = Date.now() - TOTAL * 1000 - 60_000;
  const events: Delivery[] = [];
  for (let i = 0; i < uniqueCount; i++) {
    const projectId = projects[i % projects.length] ?? '';
    const run = stack.simulator?.advanceRun(projectId);
    const id = randomUUID();
    const createdAt = base + i * 1000;
    const body = JSON.stringify({
      id,
      type: 'run.completed',
      created_at: new Date(createdAt).toISOString(),
      data: { project_id: projectId, run_id: run?.runId ?? `run-${i}`, status: 'completed', answers: run?.answers ?? 100 },
    });
    events.push({ id, projectId, createdAt, body });
  }
  const order: Delivery[] = [...events];
  // Out of order: move 10 % of the events later, behind newer runs of their project.
  const lateCount = Math.round(uniqueCount * OUT_OF_ORDER_SHARE);
  for (let i = 0; i < lateCount; i++) {
    const from = Math.floor(random() * (order.length - 20));
    const [moved] = order.splice(from, 1);
    if (moved) order.splice(Math.min(order.length, from + 8 + Math.floor(random() * 40)), 0, moved);
  }
  // Duplicates: the same delivery again, soon after (sometimes concurrently) or much later.
  for (let i = 0; i < TOTAL - uniqueCount; i++) {
    const original = events[Math.floor(random() * events.length)];
    if (!original) continue;
    const at = Math.min(order.length, order.indexOf(original) + Math.floor(random() * 60));
    order.splice(at, 0, original);
  }

  const attempts = new Map<string, Attempt[]>();
  const latencies: number[] = [];
  let retries = 0;
  let lastFirstAttemptAt = 0;
  const pendingRetries: Promise<void>[] = [];
  /** One attempt; a 5xx schedules the next one on the sender's timetable without holding a worker. */
  const send = async (delivery: Delivery, attempt: number): Promise<void> => {
    const started = performance.now();
    const response = await fetch(stack.webhookUrl, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Service-Webhooks/1',
        'x-service-event': 'run.completed',
        'x-service-delivery': delivery.id,
        'x-service-signature': signPayload(secret, Math.floor(Date.now() / 1000), delivery.body),
      },
      body: delivery.body,
    });
    const text = await response.text();
    const ms = performance.now() - started;
    latencies.push(ms);
    if (attempt === 0) lastFirstAttemptAt = Math.max(lastFirstAttemptAt, performance.now());
    const parsed = JSON.parse(text) as { result?: string; error?: string };
    const list = attempts.get(delivery.id) ?? [];
    list.push({ status: response.status, result: parsed.result ?? parsed.error ?? '', ms });
    attempts.set(delivery.id, list);
    const delay = SENDER_RETRY_DELAYS_MS[attempt];
    if (response.status < 500 || delay === undefined) return;
    retries++;
    pendingRetries.push(new Promise((resolve) => setTimeout(resolve, delay)).then(() => send(delivery, attempt + 1)));
  };

  const started = performance.now();
  for (let offset = 0; offset < order.length; offset += BURST) {
    const burst = order.slice(offset, offset + BURST);
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < burst.length) {
          const delivery = burst[next++];
          if (delivery) await send(delivery, 0);
        }
      }),
    );
  }
  // Retries may schedule further retries: wait until none is left.
  while (pendingRetries.length > 0) await pendingRetries.shift();
  const ingestSeconds = (performance.now() - started) / 1000;
  // Throughput of the bridge: every delivery's first attempt answered (sender retry waits excluded).
  const firstPassSeconds = (lastFirstAttemptAt - started) / 1000;
  await stack.waitForIdle({ timeoutMs: 300_000, webhooks: false });
  const totalSeconds = (performance.now() - started) / 1000;

  // Checks.
  const notAccepted = events.filter((e) => !(attempts.get(e.id) ?? []).some((a) => a.status === 200));
  const acceptedTwice = events.filter((e) => (attempts.get(e.id) ?? []).filter((a) => a.result === 'accepted').length > 1);
  const topLevel = (stack.slack?.messages() ?? []).filter((m) => !m.thread_ts);
  const postsByEvent = new Map<string, number>();
  for (const message of topLevel) {
    const payload = (message.metadata as { event_payload?: { event_id?: string } } | undefined)?.event_payload;
    const eventId = payload?.event_id ?? 'unknown';
    postsByEvent.set(eventId, (postsByEvent.get(eventId) ?? 0) + 1);
  }
  const doublePosted = [...postsByEvent.entries()].filter(([, count]) => count > 1);
  const supersededIds = new Set(
    stack.observability
      .entries()
      .filter((e) => e.message.startsWith('run superseded'))
      .map((e) => String(e.fields['eventId'])),
  );
  const unaccounted = events.filter((e) => !postsByEvent.has(e.id) && !supersededIds.has(e.id));
  const newestPerProject = projects.map((p) =>
    events.filter((e) => e.projectId === p).reduce((a, b) => (b.createdAt > a.createdAt ? b : a)),
  );
  const newestMissing = newestPerProject.filter((e) => !postsByEvent.has(e.id));
  const depths = await stack.depths();
  const fiveHundreds: Record<string, number> = {};
  for (const list of attempts.values()) {
    for (const a of list) if (a.status >= 500) fiveHundreds[`${a.status} ${a.result}`] = (fiveHundreds[`${a.status} ${a.result}`] ?? 0) + 1;
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const slowest = sorted[sorted.length - 1] ?? 0;

  const results = {
    machine: { node: process.version, cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, date: new Date().toISOString() },
    deliveries: order.length,
    uniqueEvents: events.length,
    projects: projects.length,
    concurrency: CONCURRENCY,
    httpRequests: latencies.length,
    senderRetries: retries,
    retriedResponses: fiveHundreds,
    ingestSeconds: Number(ingestSeconds.toFixed(2)),
    firstPassSeconds: Number(firstPassSeconds.toFixed(2)),
    throughputPerSecond: Number((order.length / firstPassSeconds).toFixed(1)),
    latencyMs: {
      p50: Number(percentile(sorted, 50).toFixed(1)),
      p99: Number(percentile(sorted, 99).toFixed(1)),
      max: Number(slowest.toFixed(1)),
    },
    drainedSeconds: Number(totalSeconds.toFixed(2)),
    digestsPosted: topLevel.length,
    superseded: supersededIds.size,
    checks: {
      lost: notAccepted.length + unaccounted.length,
      neverAccepted: notAccepted.length,
      acceptedButNotDigested: unaccounted.length,
      doublePosted: doublePosted.length,
      acceptedTwice: acceptedTwice.length,
      newestRunOfEachProjectPosted: newestMissing.length === 0,
      everyResponseUnder10s: slowest < 10_000,
      queueEmpty: depths.queue.visible + depths.queue.inFlight + depths.queue.delayed === 0,
      dlqEmpty: depths.dlq.visible + depths.dlq.inFlight + depths.dlq.delayed === 0,
    },
  };
  writeFileSync(new URL('./load-results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  await stack.close();

  const c = results.checks;
  const ok =
    c.lost === 0 &&
    c.doublePosted === 0 &&
    c.acceptedTwice === 0 &&
    c.newestRunOfEachProjectPosted &&
    c.everyResponseUnder10s &&
    c.queueEmpty &&
    c.dlqEmpty;
  console.log(
    `deliveries        ${results.deliveries} (${results.uniqueEvents} unique, ${results.projects} projects, concurrency ${CONCURRENCY})`,
  );
  const why = Object.entries(fiveHundreds)
    .map(([k, v]) => `${v} × ${k}`)
    .join(', ');
  console.log(`http requests     ${results.httpRequests} (${retries} sender retries after 5xx${why ? `: ${why}` : ''})`);
  console.log(
    `throughput        ${results.throughputPerSecond} deliveries/s (first attempts answered in ${results.firstPassSeconds} s; with sender retries ${results.ingestSeconds} s)`,
  );
  console.log(`latency           p50 ${results.latencyMs.p50} ms · p99 ${results.latencyMs.p99} ms · max ${results.latencyMs.max} ms`);
  console.log(
    `digests           ${results.digestsPosted} posted, ${results.superseded} superseded; drained after ${results.drainedSeconds} s`,
  );
  console.log(
    `lost              ${c.lost}  (never accepted: ${c.neverAccepted}, accepted but neither posted nor superseded: ${c.acceptedButNotDigested})`,
  );
  console.log(`double-posted     ${c.doublePosted}  (accepted twice: ${c.acceptedTwice})`);
  console.log(`queue / DLQ empty ${c.queueEmpty} / ${c.dlqEmpty}`);
  console.log(ok ? 'PASS' : 'FAIL');
  process.exitCode = ok ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
