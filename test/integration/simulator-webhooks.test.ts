import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignatureVerifier, parseSignatureHeader } from '../../shared/signature';
import { validateWebhookEvent } from '../../shared/events';
import { VisibilitySimulator, type SimulatorOptions } from '../../local/simulator/server';

const isoTimestamp: unknown = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

const SECRET = 'whsec_test_secret';
const SCALED_SCHEDULE = [30, 60, 120, 240, 480];

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
}

interface Reply {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** A tiny webhook receiver: records every request and answers as `reply` says. */
class Receiver {
  readonly received: Received[] = [];
  reply: (index: number, request: Received) => Reply = () => ({ status: 200 });

  private constructor(
    private readonly server: Server,
    readonly base: string,
  ) {}

  static async start(): Promise<Receiver> {
    const server = createHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request: Received = { path: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks) };
        const index = receiver.received.push(request) - 1;
        const reply = receiver.reply(index, request);
        const answer = (): void => {
          if (res.destroyed) return;
          res.writeHead(reply.status, reply.headers);
          res.end('ok');
        };
        if (reply.delayMs === undefined) answer();
        else setTimeout(answer, reply.delayMs).unref();
      });
    });
    return receiver;
  }

  get url(): string {
    return `${this.base}/hook`;
  }

  ids(): string[] {
    return this.received.map((r) => String(r.headers['x-service-delivery']));
  }

  async close(): Promise<void> {
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await done;
  }
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  options: SimulatorOptions['webhooks'] = {},
): Promise<{ sim: VisibilitySimulator; receiver: Receiver; hookId: string; projectId: string }> {
  const sim = await VisibilitySimulator.start({ seed: 4, webhooks: { retryScale: 0.001, ...options } });
  cleanups.push(() => sim.close());
  const receiver = await Receiver.start();
  cleanups.push(() => receiver.close());
  const hookId = sim.addWebhook({ url: receiver.url, secret: SECRET });
  return { sim, receiver, hookId, projectId: sim.projectIds()[0]! };
}

const verify = createSignatureVerifier({ secrets: [SECRET] });

function signatureOk(request: Received): boolean {
  return verify(request.headers['x-service-signature'] as string | undefined, request.raw, Math.floor(Date.now() / 1000)).ok;
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('delivery format', () => {
  it('sends a signed run.completed with the documented headers and body', async () => {
    const { sim, receiver, projectId } = await setup();
    const sent = sim.triggerRun(projectId);
    const report = await sent.delivered;
    expect(report.results).toMatchObject([{ outcome: 'delivered', attempts: 1, lastStatus: 200, duplicate: false }]);

    expect(receiver.received).toHaveLength(1);
    const request = receiver.received[0]!;
    expect(request.raw.toString('utf8')).toBe(sent.body);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('Service-Webhooks/1');
    expect(request.headers['x-service-event']).toBe('run.completed');
    expect(request.headers['x-service-delivery']).toBe(sent.event.id);
    expect(signatureOk(request)).toBe(true);
    const wrongSecret = createSignatureVerifier({ secrets: ['other'] });
    expect(wrongSecret(request.headers['x-service-signature'] as string, request.raw, Math.floor(Date.now() / 1000)).ok).toBe(false);

    const body = JSON.parse(request.raw.toString('utf8')) as Record<string, unknown>;
    expect(validateWebhookEvent(body).ok).toBe(true);
    expect(body).toEqual({
      id: sent.event.id,
      type: 'run.completed',
      created_at: isoTimestamp,
      data: { project_id: projectId, run_id: sent.run.runId, status: 'completed', answers: sent.run.answers },
    });
    expect(sim.data.runNumber(projectId)).toBe(1);
    expect(sim.data.currentRunId(projectId)).toBe(sent.run.runId);
  });

  it('sends draft.ready', async () => {
    const { sim, receiver, projectId } = await setup();
    await sim.sendDraftReady(projectId, 'asset-1', 3).delivered;
    const body = JSON.parse(receiver.received[0]!.raw.toString('utf8')) as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'draft.ready', data: { project_id: projectId, asset_id: 'asset-1', version: 3 } });
    expect(receiver.received[0]!.headers['x-service-event']).toBe('draft.ready');
    expect(signatureOk(receiver.received[0]!)).toBe(true);
  });

  it('only sends the event types a webhook chose', async () => {
    const { sim, receiver, projectId } = await setup();
    const other = await Receiver.start();
    cleanups.push(() => other.close());
    sim.addWebhook({ url: other.url, secret: SECRET, events: ['draft.ready'] });
    await sim.triggerRun(projectId).delivered;
    await sim.sendDraftReady(projectId).delivered;
    expect(receiver.received).toHaveLength(2);
    expect(other.received.map((r) => r.headers['x-service-event'])).toEqual(['draft.ready']);
  });
});

describe('delivery rules', () => {
  it('retries 5xx with the same id and body, on the scaled schedule, each attempt signed when sent', async () => {
    let clock = Date.UTC(2026, 10, 1, 10, 0, 0);
    const { sim, receiver, hookId, projectId } = await setup({ now: () => (clock += 7000) });
    receiver.reply = (i) => ({ status: i < 2 ? 503 : 200 });
    const sent = sim.triggerRun(projectId);
    const report = await sent.delivered;

    expect(report.results).toMatchObject([{ outcome: 'delivered', attempts: 3, lastStatus: 200 }]);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.ids())).toEqual(new Set([sent.event.id]));
    for (const request of receiver.received) expect(request.raw.toString('utf8')).toBe(sent.body);

    const timestamps = receiver.received.map((r) => parseSignatureHeader(r.headers['x-service-signature'] as string)![0]!.timestamp);
    expect(new Set(timestamps).size).toBe(3);
    receiver.received.forEach((request, i) => {
      expect(verify(request.headers['x-service-signature'] as string, request.raw, timestamps[i]!).ok).toBe(true);
    });

    const attempts = sim.deliveryAttempts(hookId);
    expect(attempts.map((a) => [a.attempt, a.status, a.outcome, a.scheduledDelayMs])).toEqual([
      [1, 503, 'retry', 0],
      [2, 503, 'retry', 30],
      [3, 200, 'success', 60],
    ]);
    expect(sim.listWebhooks()[0]).toMatchObject({ is_active: true, last_status: 200, consecutive_failures: 0 });
  });

  it('503 every time: five retries after 30 s, 1, 2, 4 and 8 min (scaled), then fails', async () => {
    const { sim, receiver, hookId, projectId } = await setup();
    receiver.reply = () => ({ status: 503 });
    const report = await sim.sendDraftReady(projectId).delivered;
    expect(report.results).toMatchObject([{ outcome: 'failed', attempts: 6, lastStatus: 503, error: 'HTTP 503' }]);
    expect(receiver.received).toHaveLength(6);
    const attempts = sim.deliveryAttempts(hookId);
    expect(attempts.map((a) => a.scheduledDelayMs)).toEqual([0, ...SCALED_SCHEDULE]);
    expect(attempts.map((a) => a.outcome)).toEqual(['retry', 'retry', 'retry', 'retry', 'retry', 'failed']);
    expect(sim.listWebhooks()[0]).toMatchObject({ is_active: true, last_status: 503, consecutive_failures: 6 });
  });

  it('retries 429 and timeouts with the same id', async () => {
    // Timeout well above an answer on a loaded machine; the slow answer far above the timeout.
    const { sim, receiver, hookId, projectId } = await setup({ timeoutMs: 5000 });
    receiver.reply = (i) => (i === 0 ? { status: 429 } : i === 1 ? { status: 200, delayMs: 600_000 } : { status: 204 });
    const sent = sim.triggerRun(projectId);
    const report = await sent.delivered;
    expect(report.results).toMatchObject([{ outcome: 'delivered', attempts: 3, lastStatus: 204 }]);
    expect(receiver.ids()).toEqual([sent.event.id, sent.event.id, sent.event.id]);
    expect(sim.deliveryAttempts(hookId).map((a) => [a.status, a.error])).toEqual([
      [429, 'HTTP 429'],
      [null, 'timeout'],
      [204, null],
    ]);
  });

  it('retries network errors', async () => {
    const { sim, projectId } = await setup();
    const id = sim.addWebhook({ url: `http://127.0.0.1:${await freePort()}/hook`, secret: SECRET });
    const report = await sim.sendDraftReady(projectId).delivered;
    const result = report.results.find((r) => r.webhookId === id)!;
    expect(result).toMatchObject({ outcome: 'failed', attempts: 6, lastStatus: null });
    expect(sim.deliveryAttempts(id).every((a) => a.status === null && a.error !== null)).toBe(true);
    expect(sim.listWebhooks().find((w) => w.id === id)).toMatchObject({ last_status: null, consecutive_failures: 6 });
  });

  it('does not follow or retry a 3xx', async () => {
    const { sim, receiver, hookId, projectId } = await setup();
    receiver.reply = () => ({ status: 302, headers: { Location: `${receiver.base}/elsewhere` } });
    const report = await sim.triggerRun(projectId).delivered;
    expect(report.results).toMatchObject([{ outcome: 'failed', attempts: 1, lastStatus: 302, error: 'redirect not followed' }]);
    expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
    expect(sim.deliveryAttempts(hookId)).toMatchObject([{ status: 302, outcome: 'failed' }]);
  });

  it('does not retry a 404', async () => {
    const { sim, receiver, projectId } = await setup();
    receiver.reply = () => ({ status: 404 });
    const report = await sim.triggerRun(projectId).delivered;
    expect(report.results).toMatchObject([{ outcome: 'failed', attempts: 1, lastStatus: 404 }]);
    expect(receiver.received).toHaveLength(1);
  });
});

describe('switch-off after 15 consecutive failures', () => {
  it('counts failures across deliveries, resets on success, switches off at 15 and stops', async () => {
    const { sim, receiver, hookId, projectId } = await setup();
    let fail = true;
    receiver.reply = () => ({ status: fail ? 404 : 200 });
    for (let i = 0; i < 14; i += 1) await sim.sendDraftReady(projectId).delivered;
    expect(sim.listWebhooks()[0]).toMatchObject({ is_active: true, consecutive_failures: 14 });

    fail = false;
    await sim.sendDraftReady(projectId).delivered;
    expect(sim.listWebhooks()[0]).toMatchObject({ is_active: true, consecutive_failures: 0, last_status: 200 });

    fail = true;
    for (let i = 0; i < 15; i += 1) await sim.sendDraftReady(projectId).delivered;
    const info = sim.listWebhooks()[0]!;
    expect(info).toMatchObject({ is_active: false, consecutive_failures: 15, last_status: 404 });
    expect(Date.parse(info.last_attempt_at!)).not.toBeNaN();
    expect(sim.deliveryAttempts(hookId).at(-1)).toMatchObject({ switchedOff: true, outcome: 'failed' });

    const before = receiver.received.length;
    const report = await sim.triggerRun(projectId).delivered;
    expect(report.results).toMatchObject([{ outcome: 'disabled', attempts: 0 }]);
    expect(receiver.received).toHaveLength(before);
  });

  it('counts every failed attempt, so retries of 503 switch it off within the third delivery', async () => {
    const { sim, receiver, projectId } = await setup();
    receiver.reply = () => ({ status: 503 });
    const reports = [];
    for (let i = 0; i < 3; i += 1) reports.push(await sim.sendDraftReady(projectId).delivered);
    expect(reports.map((r) => r.results[0]!.attempts)).toEqual([6, 6, 3]);
    expect(receiver.received).toHaveLength(15);
    expect(sim.listWebhooks()[0]).toMatchObject({ is_active: false });
  });
});

describe('injected duplicates and disorder', () => {
  it('sends the same delivery extra times, byte for byte', async () => {
    const { sim, receiver, projectId } = await setup();
    const sent = sim.triggerRun(projectId, { duplicates: 2 });
    const report = await sent.delivered;
    expect(report.results.map((r) => [r.duplicate, r.outcome])).toEqual([
      [false, 'delivered'],
      [true, 'delivered'],
      [true, 'delivered'],
    ]);
    expect(receiver.ids()).toEqual([sent.event.id, sent.event.id, sent.event.id]);
    expect(new Set(receiver.received.map((r) => r.raw.toString('utf8')))).toEqual(new Set([sent.body]));
    expect(receiver.received.every(signatureOk)).toBe(true);
  });

  it('can send the duplicates concurrently', async () => {
    const { sim, receiver, projectId } = await setup();
    receiver.reply = () => ({ status: 200, delayMs: 50 });
    const sent = sim.sendDraftReady(projectId, undefined, undefined, { duplicates: 3, concurrentDuplicates: true });
    await sent.delivered;
    expect(receiver.ids()).toEqual(Array(4).fill(sent.event.id));
  });

  it('delivers the newer of two runs first', async () => {
    const { sim, receiver, projectId } = await setup();
    const { older, newer, delivered } = sim.triggerRunsOutOfOrder(projectId);
    await delivered;
    expect(receiver.ids()).toEqual([newer.event.id, older.event.id]);
    expect(older.run.run).toBe(1);
    expect(newer.run.run).toBe(2);
    expect(Date.parse(older.event.created_at)).toBeLessThan(Date.parse(newer.event.created_at));
    const bodies = receiver.received.map((r) => JSON.parse(r.raw.toString('utf8')) as { data: { run_id: string } });
    expect(bodies.map((b) => b.data.run_id)).toEqual([newer.run.runId, older.run.runId]);
  });
});

describe('control routes and shutdown', () => {
  it('registers webhooks and triggers runs and drafts over HTTP, Bearer-authenticated', async () => {
    const { sim, projectId } = await setup();
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.close());
    const auth = { Authorization: `Bearer ${sim.apiKey}`, 'Content-Type': 'application/json' };

    const denied = await fetch(`${sim.url}/_sim/runs`, { method: 'POST', body: JSON.stringify({ project_id: projectId }) });
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ error: { code: 'unauthorized' } });

    const created = await fetch(`${sim.url}/_sim/webhooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: receiver.url, secret: SECRET }),
    });
    expect(created.status).toBe(201);
    const hook = (await created.json()) as { id: string; secret: string; is_active: boolean };
    expect(hook).toMatchObject({ secret: SECRET, is_active: true });

    const run = await fetch(`${sim.url}/_sim/runs`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ project_id: projectId, wait: true }),
    });
    expect(run.status).toBe(200);
    const runBody = (await run.json()) as { event: { id: string }; report: { results: { webhookId: string; outcome: string }[] } };
    expect(runBody.report.results.find((r) => r.webhookId === hook.id)?.outcome).toBe('delivered');
    expect(receiver.ids()).toEqual([runBody.event.id]);
    expect(signatureOk(receiver.received[0]!)).toBe(true);

    const draft = await fetch(`${sim.url}/_sim/drafts`, { method: 'POST', headers: auth, body: JSON.stringify({ project_id: projectId }) });
    expect(draft.status).toBe(202);
    await sim.webhooks.idle();
    expect(receiver.received.map((r) => r.headers['x-service-event'])).toEqual(['run.completed', 'draft.ready']);

    const list = (await (await fetch(`${sim.url}/_sim/webhooks`, { headers: auth })).json()) as { webhooks: { id: string }[] };
    expect(list.webhooks.map((w) => w.id)).toContain(hook.id);
    const unknown = await fetch(`${sim.url}/_sim/runs`, { method: 'POST', headers: auth, body: JSON.stringify({ project_id: 'nope' }) });
    expect(unknown.status).toBe(404);
  });

  it('close() cancels pending retries', async () => {
    const { sim, receiver, hookId, projectId } = await setup({ retryScale: 1 });
    receiver.reply = () => ({ status: 503 });
    const sent = sim.sendDraftReady(projectId);
    // Wait for the sender to have recorded the failed attempt (not just for the receiver to see it):
    // the first retry is then 30 s away, and close() must cancel it.
    while (sim.deliveryAttempts(hookId).length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await sim.close();
    const report = await sent.delivered;
    expect(report.results).toMatchObject([{ outcome: 'cancelled', attempts: 1 }]);
    expect(receiver.received).toHaveLength(1);
  });
});
