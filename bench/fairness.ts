/**
 * npm run fairness — one client's burst must not delay another's digest (issue 31, item 4). Through the
 * local stack's real path (API Gateway → ingest → SQS → the digest event source, at the stack's own
 * batch size and concurrency → Slack): tenant X (a connection, `/webhook/burst`) sends a burst of
 * 2,000 signed runs across its projects; tenant Y (the stack's own `/webhook`, another project) sends
 * one run at a time. Y's latency is "delivery accepted (200) → its digest's top-level Slack post".
 *
 * Two stacks, one after the other: with fair queues (ingest sends each tenant's events as its
 * MessageGroupId; the local SQS server takes from the group with the fewest in flight) and the control,
 * the same stack with the server ignoring MessageGroupId (a standard queue without fair queues). Each
 * measures Y idle first (no burst), then Y while X's backlog drains. Also split: Y's queue dwell
 * (accepted → its record reaches the digest worker) and the rest (worker → Slack).
 *
 * FAIRNESS_BURST=N sends N runs instead of 2,000; FAIRNESS_SAMPLES=N takes N samples of Y idle and N during the burst (5). FAIRNESS_PACE_MS=1100 paces each Slack channel as the
 * deployed stack does (the local stack's default, 20 ms, hides the pace: X's digests to its one channel
 * then hold a worker about 1.1 s per post, as in AWS); FAIRNESS_CONTROL=skip runs the fair stack only (paced,
 * the control's Y would wait behind X's whole paced backlog). Writes bench/fairness-results.json (with
 * the commit measured); exits 1 when the fair ratio misses the target or the control does not show the problem.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { startLocalStack, type LocalStack } from '../local/stack';
import { LOCAL_STAGE } from '../local/stack/types';
import { LOCAL_TOPOLOGY } from '../local/topology';
import { DynamoConnectionStore } from '../shared/adapters/dynamo-connection-store';
import { formatConnectionSecret } from '../shared/connections/model';
import { connectionSecretPrefix, DIGEST_METRICS, ENV } from '../shared/contracts';
import { signPayload } from '../shared/signature';
import { log, machineInfo, measuredCommit, median, round, runConcurrent, sleep } from './lib';

const BURST = Number(process.env['FAIRNESS_BURST'] ?? 2000);
/** Milliseconds between posts to one Slack channel; none = the local stack's own. */
const PACE_MS = process.env['FAIRNESS_PACE_MS'];
const RUN_CONTROL = process.env['FAIRNESS_CONTROL'] !== 'skip';
const TARGET_RATIO = 1.2;
/** Y's samples idle and during the burst (FAIRNESS_SAMPLES; more steady a median on a loaded machine). */
const IDLE_SAMPLES = Number(process.env['FAIRNESS_SAMPLES'] ?? 5);
const BURST_SAMPLES = IDLE_SAMPLES;
/** Y samples are taken only while X still has at least this many runs waiting. */
const MIN_BACKLOG = 50;
const SEND_CONCURRENCY = 50;
const MAX_ATTEMPTS = 40;
const POST_TIMEOUT_MS = 600_000;
const X_ID = 'burst';
const X_SECRET = 'whsec_fairness_burst_tenant';
const X_CHANNEL = 'C0BURST';

interface Sample {
  /** Accepted (200) → the digest's top-level post. */
  latencyMs: number;
  /** Accepted → the record parsed by the digest worker (its time on the queue, and waiting for a free worker). */
  dwellMs: number | undefined;
  /**
   * Records the worker took up after Y's was accepted and before Y's: its wait counted in work, not ms
   * (fair queues: only what the invocations then running still had in hand, as no batch received after
   * Y's accepted run may start with another record ahead of it; this machine's CPU does not change it).
   */
  takenAhead: number | undefined;
  /** X's runs still on the queue (visible or in flight) when Y's run was accepted. */
  backlog: number;
}

interface Scenario {
  fairQueues: boolean;
  idle: Sample[];
  burst: Sample[];
  idleMedianMs: number;
  burstMedianMs: number;
  ratio: number;
  burstSeconds: number;
  /** X's runs still queued when the last Y sample was posted. */
  backlogLeft: number;
  /** Messages in the digest DLQ then (none expected: pacing never dead-letters a run). */
  deadLettered: number;
  /** Paced posts by then (SlackPostPaced: a wait for the channel, or a record sent back for it). */
  pacedPosts: number;
  /** Records handed back by then (BatchItemFailed: each counts a receive towards the DLQ). */
  handedBack: number;
}

/** A top-level post's arrival time, by the event id its metadata carries; and each channel's last post. */
class PostClock {
  private readonly posted = new Map<string, number>();
  private readonly waiting = new Map<string, (at: number) => void>();
  private readonly lastPost = new Map<string, number>();

  /** Any post (top level or reply) in a channel. */
  postedIn(channel: string, at: number): void {
    this.lastPost.set(channel, Math.max(at, this.lastPost.get(channel) ?? 0));
  }

  /**
   * Resolves once the channel has had no post for `quietMs`: Y's next run is sent when its previous
   * digest's paced thread is out, so Y's latency never includes the pace of its own earlier thread.
   */
  async quiet(channel: string, quietMs: number): Promise<void> {
    for (;;) {
      const left = (this.lastPost.get(channel) ?? 0) + quietMs - Date.now();
      if (left <= 0) return;
      await sleep(left);
    }
  }

  seen(eventId: string, at: number): void {
    if (this.posted.has(eventId)) return;
    this.posted.set(eventId, at);
    this.waiting.get(eventId)?.(at);
  }

  when(eventId: string): Promise<number> {
    const at = this.posted.get(eventId);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no digest posted for ${eventId} within ${POST_TIMEOUT_MS / 1000} s`)),
        POST_TIMEOUT_MS,
      );
      this.waiting.set(eventId, (posted) => {
        clearTimeout(timer);
        resolve(posted);
      });
    });
  }
}

function eventIdOf(metadata: unknown): string | undefined {
  const payload = (metadata as { event_payload?: { event_id?: unknown } } | undefined)?.event_payload;
  return typeof payload?.event_id === 'string' ? payload.event_id : undefined;
}

async function addConnection(stack: LocalStack, projectChannel: string): Promise<void> {
  const secrets = stack.secretsManager;
  if (secrets === undefined) throw new Error('the stack runs without its local Secrets Manager');
  const secretName = `${connectionSecretPrefix(LOCAL_STAGE)}${X_ID}`;
  const sm = new SecretsManagerClient({ endpoint: secrets.server.url, region: stack.sqs.region });
  try {
    await sm.send(
      new CreateSecretCommand({
        Name: secretName,
        SecretString: formatConnectionSecret({ readApiKey: stack.apiKey, signingSecrets: [X_SECRET] }),
      }),
    );
  } finally {
    sm.destroy();
  }
  const added = await new DynamoConnectionStore(stack.dynamo.client, stack.dynamo.tableName).add({
    id: X_ID,
    baseUrl: stack.simulatorUrl,
    secretName,
    routes: { defaultChannel: projectChannel, byProject: {} },
    slackTeamIds: [],
    status: 'active',
    createdAtMs: Date.now(),
  });
  if (added === 'exists') throw new Error(`connection ${X_ID} exists already`);
}

/**
 * One signed delivery; resolves when it is accepted. A 5xx (the table slow under the burst, or the
 * claim's 10 s lease of an attempt that timed out) is retried sooner than the sender would (1 s, 2 s,
 * 4 s, then every 8 s, for about 5 minutes): what is measured here is the queue, not the sender's schedule.
 */
async function deliver(url: string, secret: string, body: string, id: string): Promise<number> {
  let last = '';
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const response = await fetch(url, {
      method: 'POST',
      signal: AbortSignal.timeout(30_000),
      headers: {
        'content-type': 'application/json',
        'x-service-event': 'run.completed',
        'x-service-delivery': id,
        'x-service-signature': signPayload(secret, Math.floor(Date.now() / 1000), body),
      },
      body,
    });
    const answer = (await response.json()) as { result?: string; error?: string };
    if (response.status === 200 && answer.result === 'accepted') return Date.now();
    last = `${response.status} ${answer.error ?? answer.result ?? ''}`;
    if (response.status < 500) throw new Error(`delivery ${id} answered ${last}`);
    await sleep(Math.min(1000 * 2 ** attempt, 8000));
  }
  throw new Error(`delivery ${id} not accepted after ${MAX_ATTEMPTS} attempts (last: ${last})`);
}

function runBody(stack: LocalStack, projectId: string, createdAt: number): { id: string; body: string } {
  const run = stack.simulator?.advanceRun(projectId);
  const id = randomUUID();
  const data = { project_id: projectId, run_id: run?.runId ?? id, status: 'completed', answers: run?.answers ?? 100 };
  return { id, body: JSON.stringify({ id, type: 'run.completed', created_at: new Date(createdAt).toISOString(), data }) };
}

/** When the digest worker parsed the record of `eventId` (its debug line), if it was kept. */
function parsedAt(stack: LocalStack, eventId: string): number | undefined {
  return stack.observability.entries().find((e) => e.message === 'message parsed' && e.fields['eventId'] === eventId)?.at;
}

/** Records of other events the worker parsed in (from, to): batches started while Y's run waited. */
function parsedBetween(stack: LocalStack, fromMs: number, toMs: number, eventId: string): number {
  return stack.observability
    .entries()
    .filter((e) => e.message === 'message parsed' && e.fields['eventId'] !== eventId && e.at > fromMs && e.at < toMs).length;
}

async function backlogOf(stack: LocalStack): Promise<number> {
  const { queue } = await stack.depths();
  return queue.visible + queue.inFlight + queue.delayed;
}

/** Whether the worker logged the thread of `eventId` complete (its replies went from follow-up records). */
function threadComplete(stack: LocalStack, eventId: string): boolean {
  return stack.observability.entries().some((e) => e.message === 'digest thread complete' && e.fields['eventId'] === eventId);
}

/** Whether any of the thread of `eventId` was handed to a follow-up record (digest_thread). */
function threadHandedOff(stack: LocalStack, eventId: string): boolean {
  return stack.observability
    .entries()
    .some((e) => e.message === 'message parsed' && e.fields['kind'] === 'digest_thread' && e.fields['eventId'] === eventId);
}

/**
 * Y's previous digest is out, its thread included: its channel quiet for two pace intervals and, when its
 * replies went from follow-up records (whose gaps can be longer than that), its thread logged complete.
 */
async function yQuiet(stack: LocalStack, clock: PostClock, previous: string | undefined): Promise<void> {
  for (;;) {
    await clock.quiet(stack.slackChannel, 2 * Number(PACE_MS ?? 0));
    if (previous === undefined || !threadHandedOff(stack, previous) || threadComplete(stack, previous)) return;
    await sleep(100);
  }
}

let lastY: string | undefined;

async function sampleY(stack: LocalStack, clock: PostClock, projectId: string): Promise<Sample> {
  await yQuiet(stack, clock, lastY);
  const backlog = await backlogOf(stack);
  const { id, body } = runBody(stack, projectId, Date.now() - 1000);
  lastY = id;
  const accepted = await deliver(stack.webhookUrl, stack.secrets[0] ?? '', body, id);
  const posted = await clock.when(id);
  const parsed = parsedAt(stack, id);
  return {
    latencyMs: posted - accepted,
    dwellMs: parsed === undefined ? undefined : parsed - accepted,
    takenAhead: parsed === undefined ? undefined : parsedBetween(stack, accepted, parsed, id),
    backlog,
  };
}

async function scenario(fairQueues: boolean): Promise<Scenario> {
  const clock = new PostClock();
  const stack = await startLocalStack({
    port: 0,
    logLevel: 'silent',
    registerWebhook: false,
    pollWaitSeconds: 1,
    secretsManagerPort: 0,
    fairQueues,
    ...(PACE_MS === undefined ? {} : { env: { [ENV.slackPaceIntervalMs]: PACE_MS } }),
    onSlackMessage: (_rendered, call) => {
      const eventId = eventIdOf(call.metadata);
      if (call.channel !== undefined) clock.postedIn(call.channel, call.at);
      if (call.thread_ts === undefined && eventId !== undefined) clock.seen(eventId, call.at);
    },
  });
  try {
    const projects = stack.projectIds;
    const yProject = projects[projects.length - 1];
    const xProjects = projects.slice(0, -1);
    if (yProject === undefined || xProjects.length === 0) throw new Error('the simulator needs at least two projects');
    await addConnection(stack, X_CHANNEL);

    const idle: Sample[] = [];
    for (let i = 0; i < IDLE_SAMPLES; i++) idle.push(await sampleY(stack, clock, yProject));
    log(`${fairQueues ? 'fair' : 'control'}: Y idle ${idle.map((s) => s.latencyMs).join(', ')} ms`);

    // X's runs one second apart, all in the past (the bridge refuses a created_at after the signature time).
    const base = Date.now() - BURST * 1000 - 60_000;
    const xRuns = Array.from({ length: BURST }, (_, i) => runBody(stack, xProjects[i % xProjects.length] ?? '', base + i * 1000));
    const xUrl = `${stack.webhookUrl}/${X_ID}`;
    const started = performance.now();
    await runConcurrent(xRuns.length, SEND_CONCURRENCY, async (i) => {
      const run = xRuns[i];
      if (run) await deliver(xUrl, X_SECRET, run.body, run.id);
    });
    const burstSeconds = (performance.now() - started) / 1000;
    log(`${fairQueues ? 'fair' : 'control'}: X's ${BURST} runs accepted in ${round(burstSeconds, 1)} s; backlog ${await backlogOf(stack)}`);

    const burst: Sample[] = [];
    while (burst.length < BURST_SAMPLES && (await backlogOf(stack)) >= MIN_BACKLOG) burst.push(await sampleY(stack, clock, yProject));
    log(
      `${fairQueues ? 'fair' : 'control'}: Y during X's backlog ${burst.map((s) => `${s.latencyMs} ms (backlog ${s.backlog})`).join(', ')}`,
    );
    // What X still has queued is not waited for: its drain is the load test's subject (npm run load), not this one's.
    const backlogLeft = await backlogOf(stack);
    const deadLettered = (await stack.depths()).dlq.visible;
    const pacedPosts = stack.observability.countOf(DIGEST_METRICS.slackPostPaced);
    const handedBack = stack.observability.countOf(DIGEST_METRICS.batchItemFailed);

    const idleMedianMs = median(idle.map((s) => s.latencyMs));
    const burstMedianMs = median(burst.map((s) => s.latencyMs));
    return {
      fairQueues,
      idle,
      burst,
      idleMedianMs,
      burstMedianMs,
      ratio: round(burstMedianMs / idleMedianMs, 2),
      burstSeconds: round(burstSeconds, 1),
      backlogLeft,
      deadLettered,
      pacedPosts,
      handedBack,
    };
  } finally {
    await stack.close();
  }
}

async function main(): Promise<void> {
  const fair = await scenario(true);
  const control = RUN_CONTROL ? await scenario(false) : undefined;
  const met = fair.burst.length > 0 && fair.ratio <= TARGET_RATIO;
  const controlShowsProblem = control === undefined || (control.burst.length > 0 && control.ratio > TARGET_RATIO);
  const dwell = (samples: readonly Sample[]): number => median(samples.flatMap((x) => (x.dwellMs === undefined ? [] : [x.dwellMs])));
  // Y's own processing (worker → Slack): what the one-process stack's CPU contention shows in.
  const processing = (samples: readonly Sample[]): number =>
    median(samples.flatMap((x) => (x.dwellMs === undefined ? [] : [x.latencyMs - x.dwellMs])));
  const ahead = (samples: readonly Sample[]): number => median(samples.flatMap((x) => (x.takenAhead === undefined ? [] : [x.takenAhead])));
  const figures = (s: Scenario) => ({
    ...s,
    idleDwellMedianMs: dwell(s.idle),
    burstDwellMedianMs: dwell(s.burst),
    idleProcessingMedianMs: processing(s.idle),
    burstProcessingMedianMs: processing(s.burst),
    burstTakenAheadMedian: ahead(s.burst),
  });
  const results = {
    command: 'npm run fairness',
    ...measuredCommit(),
    machine: machineInfo(),
    burst: BURST,
    paceIntervalMs: PACE_MS === undefined ? "the local stack's" : Number(PACE_MS),
    eventSource: { batchSize: LOCAL_TOPOLOGY.eventSources.digest.batchSize, concurrency: LOCAL_TOPOLOGY.eventSources.digest.concurrency },
    target: `Y's median latency during X's burst ≤ ${TARGET_RATIO}× its idle median`,
    fair: figures(fair),
    control: control && figures(control),
    checks: { targetMet: met, controlShowsProblem },
  };
  writeFileSync(new URL('./fairness-results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  for (const s of results.control ? [results.fair, results.control] : [results.fair]) {
    console.log(
      `${s.fairQueues ? 'fair queues' : 'control    '}  Y idle ${s.idleMedianMs} ms · during X's burst ${s.burstMedianMs} ms (${s.ratio}×, ${s.burst.length} samples) · ` +
        `queue dwell ${s.idleDwellMedianMs} → ${s.burstDwellMedianMs} ms · processing ${s.idleProcessingMedianMs} → ${s.burstProcessingMedianMs} ms · ` +
        `${s.burstTakenAheadMedian} records taken up ahead of Y · X's ${BURST} runs accepted in ${s.burstSeconds} s, ${s.backlogLeft} still queued at the end, ${s.deadLettered} in the DLQ, ${s.pacedPosts} paced posts, ${s.handedBack} records handed back`,
    );
  }
  console.log(`target ≤ ${TARGET_RATIO}×: ${met ? 'PASS' : 'FAIL'}; control shows the problem: ${controlShowsProblem ? 'yes' : 'NO'}`);
  process.exitCode = met && controlShowsProblem ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
