// `bridge send` against a tiny HTTP receiver that verifies the signature with shared/signature.ts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSignatureVerifier, parseSignatureHeader } from '../../shared/signature';
import { run } from '../../cli/main';
import { bufferIo, type BufferedIo } from '../../cli/io';

const SECRET = 'whsec_test_secret_1234567890';
const verify = createSignatureVerifier({ secrets: [SECRET] });

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  verdict: ReturnType<typeof verify>;
}

let server: Server;
let base: string;
let received: Received[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const header = req.headers['x-service-signature'];
      const verdict = verify(typeof header === 'string' ? header : undefined, body, Math.floor(Date.now() / 1000));
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, verdict });
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `${base}/elsewhere` });
        res.end();
        return;
      }
      if (req.url === '/elsewhere') {
        res.writeHead(200).end('followed');
        return;
      }
      const seen = received.filter((r) => r.headers['x-service-delivery'] === req.headers['x-service-delivery']).length;
      if (!verdict.ok) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: verdict.reason }));
        return;
      }
      res.writeHead(seen > 1 ? 200 : 202, { 'content-type': 'application/json' }).end(JSON.stringify({ duplicate: seen > 1 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  received = [];
});

function io(): BufferedIo {
  return bufferIo();
}

const PROJECT = '7b1f5c1e-0000-4000-8000-000000000001';

describe('bridge send', () => {
  it('builds and signs run.completed as spec §6 describes', async () => {
    const out = io();
    const code = await run(
      ['send', 'run.completed', '--url', `${base}/webhook`, '--secret', SECRET, '--project', PROJECT, '--run', 'run-9', '--answers', '42'],
      out,
    );
    expect(code).toBe(0);
    expect(received).toHaveLength(1);
    const [req] = received;
    expect(req!.method).toBe('POST');
    expect(req!.verdict.ok).toBe(true);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['user-agent']).toBe('Service-Webhooks/1');
    expect(req!.headers['x-service-event']).toBe('run.completed');
    const body = JSON.parse(req!.body.toString('utf8')) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['id', 'type', 'created_at', 'data']);
    expect(req!.headers['x-service-delivery']).toBe(body['id']);
    expect(body['id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(body['type']).toBe('run.completed');
    expect(new Date(body['created_at'] as string).toISOString()).toBe(body['created_at']);
    expect(body['data']).toEqual({ project_id: PROJECT, run_id: 'run-9', status: 'completed', answers: 42 });
    // Status, body and latency of the attempt.
    expect(out.stdout.text()).toMatch(/#1 {2}202 {2}\d+ ms {2}\{"duplicate":false\}/);
  });

  it('builds draft.ready with asset and version', async () => {
    const out = io();
    expect(
      await run(
        [
          'send',
          'draft.ready',
          '--url',
          `${base}/webhook`,
          '--secret',
          SECRET,
          '--project',
          PROJECT,
          '--asset',
          'asset-1',
          '--version',
          '3',
          '--json',
        ],
        out,
      ),
    ).toBe(0);
    const body = JSON.parse(received[0]!.body.toString('utf8')) as { type: string; data: unknown };
    expect(body.type).toBe('draft.ready');
    expect(body.data).toEqual({ project_id: PROJECT, asset_id: 'asset-1', version: 3 });
    expect(received[0]!.headers['x-service-event']).toBe('draft.ready');
    const doc = JSON.parse(out.stdout.text()) as { attempts: { status: number; latencyMs: number; body: string }[]; event: { id: string } };
    expect(doc.attempts).toHaveLength(1);
    expect(doc.attempts[0]).toMatchObject({ status: 202, body: '{"duplicate":false}' });
    expect(doc.event.id).toBe(received[0]!.headers['x-service-delivery']);
  });

  it('--duplicate alone sends the same delivery once more (as the README shows it)', async () => {
    const out = io();
    expect(
      await run(['send', 'run.completed', '--duplicate', '--url', `${base}/webhook`, '--secret', SECRET, '--project', PROJECT], out),
    ).toBe(0);
    expect(received).toHaveLength(2);
    expect(new Set(received.map((r) => r.headers['x-service-delivery'])).size).toBe(1);
    const last = io();
    expect(
      await run(['send', 'run.completed', '--url', `${base}/webhook`, '--secret', SECRET, '--project', PROJECT, '--duplicate'], last),
    ).toBe(0);
    expect(received).toHaveLength(4);
  });

  it('without --url/--secret, a running local stack or --stack, sends nothing and says how to pick a stack (exit 2)', async () => {
    const asked: string[] = [];
    const out = bufferIo({
      describeStack: (name: string) => {
        asked.push(name);
        return Promise.resolve({ name, status: 'UPDATE_COMPLETE', outputs: { WebhookUrl: `${base}/webhook` } });
      },
    });
    expect(await run(['send', 'run.completed', '--duplicate'], out)).toBe(2);
    expect(out.stderr.text()).toContain(
      'start `npm start` in this directory (the local stack), or name a deployed stack with --stack NAME',
    );
    expect(out.stderr.text()).toContain('run `npx bridge send --help` for usage');
    expect(asked).toEqual([]);
    expect(received).toHaveLength(0);
  });

  it('--duplicate N sends the same id and body N more times', async () => {
    const out = io();
    expect(
      await run(['send', 'run.completed', '--url', `${base}/webhook`, '--secret', SECRET, '--project', PROJECT, '--duplicate', '2'], out),
    ).toBe(0);
    expect(received).toHaveLength(3);
    const ids = new Set(received.map((r) => r.headers['x-service-delivery']));
    const bodies = new Set(received.map((r) => r.body.toString('utf8')));
    expect(ids.size).toBe(1);
    expect(bodies.size).toBe(1);
    expect(received.every((r) => r.verdict.ok)).toBe(true);
    const text = out.stdout.text();
    expect(text).toMatch(/#1 {2}202/);
    expect(text).toMatch(/#2 {2}200/);
    expect(text).toMatch(/#3 {2}200/);
  });

  it('--delivery-id sets the id in the header and the body', async () => {
    expect(
      await run(
        ['send', 'run.completed', '--url', `${base}/webhook`, '--secret', SECRET, '--project', PROJECT, '--delivery-id', 'fixed-id-1'],
        io(),
      ),
    ).toBe(0);
    expect(received[0]!.headers['x-service-delivery']).toBe('fixed-id-1');
    expect((JSON.parse(received[0]!.body.toString('utf8')) as { id: string }).id).toBe('fixed-id-1');
  });

  it('--age signs with an old timestamp (stale) and a negative age with a future one', async () => {
    const now = Math.floor(Date.now() / 1000);
    const stale = io();
    expect(
      await run(['send', 'run.completed', '--url', `${base}/webhook`, '--secret', SECRET, '--project', PROJECT, '--age', '600'], stale),
    ).toBe(1);
    expect(received[0]!.verdict).toEqual({ ok: false, reason: 'too_old' });
    const t = parseSignatureHeader(String(received[0]!.headers['x-service-signature']))![0]!.timestamp;
    expect(Math.abs(now - 600 - t)).toBeLessThanOrEqual(2);
    expect(stale.stdout.text()).toMatch(/#1 {2}401/);
    expect(stale.stdout.text()).toContain('too_old');

    const future = io();
    expect(
      await run(['send', 'run.completed', '--url', `${base}/webhook`, '--secret', SECRET, '--project', PROJECT, '--age', '-600'], future),
    ).toBe(1);
    expect(received[1]!.verdict).toEqual({ ok: false, reason: 'too_new' });
  });

  it('a wrong secret is rejected by the receiver', async () => {
    expect(await run(['send', 'run.completed', '--url', `${base}/webhook`, '--secret', 'other', '--project', PROJECT], io())).toBe(1);
    expect(received[0]!.verdict).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('never follows a redirect', async () => {
    const out = io();
    expect(await run(['send', 'run.completed', '--url', `${base}/redirect`, '--secret', SECRET, '--project', PROJECT], out)).toBe(1);
    expect(received.map((r) => r.path)).toEqual(['/redirect']);
    expect(out.stdout.text()).toMatch(/#1 {2}302 .*redirect not followed/);
  });

  it('--local fills url, secret and project from the ready file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-send-'));
    const ready = join(dir, 'ready.json');
    writeFileSync(ready, JSON.stringify({ webhookUrl: `${base}/webhook`, secrets: [SECRET, 'old'], projectIds: [PROJECT, 'other'] }));
    expect(await run(['send', 'run.completed', '--local', ready], io())).toBe(0);
    expect(received[0]!.verdict.ok).toBe(true);
    expect((JSON.parse(received[0]!.body.toString('utf8')) as { data: { project_id: string } }).data.project_id).toBe(PROJECT);
  });

  it('reports an unreachable URL', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const out = io();
    expect(
      await run(['send', 'run.completed', '--url', `http://127.0.0.1:${port}/webhook`, '--secret', SECRET, '--project', PROJECT], out),
    ).toBe(1);
    expect(out.stdout.text()).toMatch(/#1 {2}ERR {2}\d+ ms {2}cannot connect \(ECONNREFUSED\)/);
  });

  it('usage errors exit 2', async () => {
    for (const argv of [
      ['send'],
      ['send', 'run.started', '--url', base, '--secret', 's', '--project', 'p'],
      ['send', 'run.completed', '--secret', 's', '--project', 'p'],
      ['send', 'run.completed', '--url', base, '--project', 'p'],
      ['send', 'run.completed', '--url', base, '--secret', 's'],
      ['send', 'run.completed', '--url', 'ftp://x', '--secret', 's', '--project', 'p'],
      ['send', 'run.completed', '--url', base, '--secret', 's', '--project', 'p', '--asset', 'a'],
      ['send', 'run.completed', '--url', base, '--secret', 's', '--project', 'p', '--duplicate', 'x'],
    ]) {
      const out = io();
      expect(await run(argv, out), argv.join(' ')).toBe(2);
    }
    expect(received).toHaveLength(0);
  });
});
