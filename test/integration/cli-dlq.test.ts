// `bridge dlq stats | peek | replay` run in-process against the local SQS server (a real protocol
// peer for the real @aws-sdk/client-sqs): messages reach the DLQ by exceeding maxReceiveCount.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { CloudFormationServiceException } from '@aws-sdk/client-cloudformation';
import { SqsServer, createSqsClient } from '../../local/sqs-server';
import { run } from '../../cli/main';
import { bufferIo, type BufferedIo } from '../../cli/io';
import type { StackInfo } from '../../cli/aws';

let server: SqsServer;
let sqs: SQSClient;
let counter = 0;
const tmp = mkdtempSync(join(tmpdir(), 'cli-dlq-'));

beforeAll(async () => {
  server = await SqsServer.start();
  sqs = createSqsClient(server.url);
});

afterAll(async () => {
  sqs.destroy();
  await server.close();
});

interface Pair {
  queueUrl: string;
  dlqUrl: string;
}

async function createPair(): Promise<Pair> {
  counter += 1;
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `cli-dlq-${counter}` }));
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: `cli-queue-${counter}`,
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: server.queueArn(`cli-dlq-${counter}`), maxReceiveCount: 1 }) },
    }),
  );
  return { queueUrl: queue.QueueUrl!, dlqUrl: dlq.QueueUrl! };
}

interface Ev {
  id: string;
  type: 'run.completed' | 'draft.ready';
  project: string;
  /** How long ago ingest received it. */
  ageMs?: number;
  /** The connection whose webhook received it (absent: the stack's own). */
  connection?: string;
}

/** Sends queue messages in the format of docs/CONTRACTS.md and pushes them into the DLQ. */
async function deadLetter(pair: Pair, events: Ev[]): Promise<void> {
  for (const ev of events) {
    const receivedAt = new Date(Date.now() - (ev.ageMs ?? 60_000)).toISOString();
    const data =
      ev.type === 'run.completed'
        ? { project_id: ev.project, run_id: randomUUID(), status: 'completed', answers: 3 }
        : { project_id: ev.project, asset_id: randomUUID(), version: 1 };
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: pair.queueUrl,
        MessageBody: JSON.stringify({
          event: { id: ev.id, type: ev.type, created_at: receivedAt, data },
          received_at: receivedAt,
          ...(ev.connection === undefined ? {} : { connection: ev.connection }),
        }),
        MessageAttributes: {
          type: { DataType: 'String', StringValue: ev.type },
          project_id: { DataType: 'String', StringValue: ev.project },
          event_id: { DataType: 'String', StringValue: ev.id },
        },
      }),
    );
  }
  // maxReceiveCount 1: the first receive counts, the next one moves the message to the DLQ.
  for (let i = 0; i < 50 && (await depth(pair.dlqUrl)).visible < events.length; i++) {
    await sqs.send(new ReceiveMessageCommand({ QueueUrl: pair.queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
  }
  expect((await depth(pair.dlqUrl)).visible).toBe(events.length);
}

async function depth(url: string): Promise<{ visible: number; inFlight: number }> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return { visible: Number(Attributes?.ApproximateNumberOfMessages), inFlight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible) };
}

async function drain(url: string): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 60, MessageAttributeNames: ['All'] }),
    );
    if (!Messages || Messages.length === 0) return out;
    out.push(...Messages);
  }
}

function io(options: Parameters<typeof bufferIo>[0] = {}): BufferedIo {
  return bufferIo({ pollIntervalMs: 20, ...options });
}

function flags(pair: Pair): string[] {
  return ['--endpoint', server.url, '--queue-url', pair.queueUrl, '--dlq-url', pair.dlqUrl];
}

function json<T>(out: BufferedIo): T {
  return JSON.parse(out.stdout.text()) as T;
}

const P1 = 'proj-1111';
const P2 = 'proj-2222';

describe('bridge dlq stats', () => {
  it('shows the DLQ and queue depths, as text and as JSON', async () => {
    const pair = await createPair();
    await deadLetter(pair, [
      { id: 'e1', type: 'run.completed', project: P1 },
      { id: 'e2', type: 'run.completed', project: P1 },
      { id: 'e3', type: 'draft.ready', project: P2 },
    ]);
    await sqs.send(new SendMessageCommand({ QueueUrl: pair.queueUrl, MessageBody: '{}' }));

    const text = io();
    expect(await run(['dlq', 'stats', ...flags(pair)], text)).toBe(0);
    expect(text.stdout.text()).toMatch(/DLQ\s+visible 3 {2}in flight 0/);
    expect(text.stdout.text()).toMatch(/queue\s+visible 1 {2}in flight 0/);

    const out = io();
    expect(await run(['dlq', 'stats', ...flags(pair), '--json'], out)).toBe(0);
    const doc = json<{ dlq: { visible: number; inFlight: number; url: string }; queue: { visible: number } }>(out);
    expect(doc.dlq).toMatchObject({ visible: 3, inFlight: 0, url: pair.dlqUrl });
    expect(doc.queue.visible).toBe(1);
  });

  it('reads the queues from the local stack ready file', async () => {
    const pair = await createPair();
    await deadLetter(pair, [{ id: 'l1', type: 'run.completed', project: P1 }]);
    const ready = join(tmp, `ready-${counter}.json`);
    writeFileSync(ready, JSON.stringify({ sqsEndpoint: server.url, queueUrl: pair.queueUrl, dlqUrl: pair.dlqUrl, secrets: ['s'] }));
    const out = io();
    expect(await run(['dlq', 'stats', '--local', ready, '--json'], out)).toBe(0);
    expect(json<{ dlq: { visible: number } }>(out).dlq.visible).toBe(1);
  });

  it('reads the queues from the stack outputs (DescribeStacks injected: no local CloudFormation peer)', async () => {
    const pair = await createPair();
    const asked: { stack: string; region: string | undefined }[] = [];
    const describeStack = (name: string, settings: { region: string | undefined }): Promise<StackInfo> => {
      asked.push({ stack: name, region: settings.region });
      return Promise.resolve({ name, status: 'CREATE_COMPLETE', outputs: { QueueUrl: pair.queueUrl, DlqUrl: pair.dlqUrl } });
    };
    const out = io({ describeStack });
    expect(
      await run(
        ['dlq', 'stats', '--stack', 'VisibilitySlackBridge-test', '--region', 'eu-west-1', '--endpoint', server.url, '--json'],
        out,
      ),
    ).toBe(0);
    expect(asked).toEqual([{ stack: 'VisibilitySlackBridge-test', region: 'eu-west-1' }]);
    expect(json<{ queue: { url: string } }>(out).queue.url).toBe(pair.queueUrl);
  });
});

describe('bridge dlq peek', () => {
  it('shows events without consuming them', async () => {
    const pair = await createPair();
    await deadLetter(pair, [
      { id: 'p1', type: 'run.completed', project: P1, ageMs: 2 * 3_600_000 },
      { id: 'p2', type: 'draft.ready', project: P2 },
      { id: 'p3', type: 'run.completed', project: P2 },
    ]);
    const text = io();
    expect(await run(['dlq', 'peek', '--endpoint', server.url, '--dlq-url', pair.dlqUrl], text)).toBe(0);
    const shown = text.stdout.text();
    expect(shown).toContain('EVENT ID');
    for (const id of ['p1', 'p2', 'p3']) expect(shown).toContain(id);
    expect(shown).toMatch(/p1\s+stack\s+run\.completed\s+proj-1111\s+2h\s+1/);
    expect(shown).toContain('nothing was consumed');
    // Nothing consumed: all still there, and visible (not left in flight).
    expect(await depth(pair.dlqUrl)).toEqual({ visible: 3, inFlight: 0 });

    const out = io();
    expect(await run(['dlq', 'peek', '--endpoint', server.url, '--dlq-url', pair.dlqUrl, '--max', '2', '--json'], out)).toBe(0);
    const doc = json<{ messages: { eventId: string; type: string; projectId: string; receiveCount: number; ageMs: number }[] }>(out);
    expect(doc.messages).toHaveLength(2);
    for (const message of doc.messages) {
      // The digest's one receive plus the first peek's: a peek is a receive (harmless: the DLQ has no redrive).
      expect(message.receiveCount).toBe(2);
      expect(message.ageMs).toBeGreaterThan(0);
    }
    expect(await depth(pair.dlqUrl)).toEqual({ visible: 3, inFlight: 0 });
  });

  it('says when the DLQ is empty', async () => {
    const pair = await createPair();
    const out = io();
    expect(await run(['dlq', 'peek', '--endpoint', server.url, '--dlq-url', pair.dlqUrl], out)).toBe(0);
    expect(out.stdout.text()).toContain('DLQ is empty');
  });
});

describe('bridge dlq replay (whole DLQ, message move task)', () => {
  it('moves everything back and reports the counts', async () => {
    const pair = await createPair();
    await deadLetter(pair, [
      { id: 'a1', type: 'run.completed', project: P1 },
      { id: 'a2', type: 'run.completed', project: P1 },
      { id: 'a3', type: 'draft.ready', project: P2 },
      { id: 'a4', type: 'run.completed', project: P2 },
    ]);
    const out = io();
    expect(await run(['dlq', 'replay', ...flags(pair)], out)).toBe(0);
    expect(out.stdout.text()).toContain('completed: moved 4 of 4');
    expect(await depth(pair.dlqUrl)).toEqual({ visible: 0, inFlight: 0 });
    const moved = await drain(pair.queueUrl);
    expect(moved.map((m) => m.MessageAttributes?.['event_id']?.StringValue).sort()).toEqual(['a1', 'a2', 'a3', 'a4']);
  });

  it('with --json and --rate, one document with the task outcome', async () => {
    const pair = await createPair();
    await deadLetter(pair, [
      { id: 'r1', type: 'run.completed', project: P1 },
      { id: 'r2', type: 'run.completed', project: P1 },
    ]);
    const out = io();
    expect(await run(['dlq', 'replay', ...flags(pair), '--rate', '100', '--json'], out)).toBe(0);
    expect(json<{ mode: string; status: string; moved: number; toMove: number }>(out)).toMatchObject({
      mode: 'all',
      status: 'COMPLETED',
      moved: 2,
      toMove: 2,
    });
  });

  it('draws a progress line on a TTY', async () => {
    const pair = await createPair();
    await deadLetter(pair, [{ id: 't1', type: 'run.completed', project: P1 }]);
    const out = io({ tty: true });
    expect(await run(['dlq', 'replay', ...flags(pair)], out)).toBe(0);
    expect(out.stdout.text()).toContain('\r');
    expect(out.stdout.text()).toContain('moved 1 of 1');
  });

  it('--dry-run moves nothing', async () => {
    const pair = await createPair();
    await deadLetter(pair, [
      { id: 'd1', type: 'run.completed', project: P1 },
      { id: 'd2', type: 'run.completed', project: P1 },
    ]);
    const out = io();
    expect(await run(['dlq', 'replay', ...flags(pair), '--dry-run'], out)).toBe(0);
    expect(out.stdout.text()).toContain('would move 2 message(s)');
    expect(await depth(pair.dlqUrl)).toEqual({ visible: 2, inFlight: 0 });
    expect(await depth(pair.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('an empty DLQ is nothing to do', async () => {
    const pair = await createPair();
    const out = io();
    expect(await run(['dlq', 'replay', ...flags(pair)], out)).toBe(0);
    expect(out.stdout.text()).toContain('DLQ is empty');
  });
});

describe('bridge dlq replay with selectors (receive → send → delete)', () => {
  const events: Ev[] = [
    { id: 's1', type: 'run.completed', project: P1, ageMs: 3 * 3_600_000 },
    { id: 's2', type: 'draft.ready', project: P1, ageMs: 5 * 60_000 },
    { id: 's3', type: 'run.completed', project: P2, ageMs: 2 * 86_400_000 },
    { id: 's4', type: 'draft.ready', project: P2, ageMs: 60_000 },
    { id: 's5', type: 'run.completed', project: P1, ageMs: 60_000 },
  ];

  async function replayWith(
    selector: string[],
  ): Promise<{ moved: string[]; left: number; exit: number; out: BufferedIo; messages: Message[] }> {
    const pair = await createPair();
    await deadLetter(pair, events);
    const out = io();
    const exit = await run(['dlq', 'replay', ...flags(pair), ...selector, '--json'], out);
    const messages = await drain(pair.queueUrl);
    const left = await depth(pair.dlqUrl);
    // Non-matching messages stay and are visible again at once.
    expect(left.inFlight).toBe(0);
    return {
      moved: messages.map((m) => m.MessageAttributes?.['event_id']?.StringValue ?? '?').sort(),
      left: left.visible,
      exit,
      out,
      messages,
    };
  }

  it('--event-id (repeatable) moves only those, with body and attributes kept', async () => {
    const { moved, left, exit, out, messages } = await replayWith(['--event-id', 's2', '--event-id', 's4']);
    expect(exit).toBe(0);
    expect(moved).toEqual(['s2', 's4']);
    expect(left).toBe(3);
    const s2 = messages.find((m) => m.MessageAttributes?.['event_id']?.StringValue === 's2')!;
    expect(s2.MessageAttributes).toEqual({
      type: { DataType: 'String', StringValue: 'draft.ready' },
      project_id: { DataType: 'String', StringValue: P1 },
      event_id: { DataType: 'String', StringValue: 's2' },
    });
    const body = JSON.parse(s2.Body ?? '') as { event: { id: string; type: string }; received_at: string };
    expect(body.event).toMatchObject({ id: 's2', type: 'draft.ready' });
    expect(typeof body.received_at).toBe('string');
    const doc = json<{ mode: string; matched: number; scanned: number; moved: { eventId: string }[] }>(out);
    expect(doc).toMatchObject({ mode: 'selected', matched: 2, scanned: 5 });
    expect(doc.moved.map((m) => m.eventId).sort()).toEqual(['s2', 's4']);
  });

  it('--type moves only that type', async () => {
    const { moved, left } = await replayWith(['--type', 'draft.ready']);
    expect(moved).toEqual(['s2', 's4']);
    expect(left).toBe(3);
  });

  it('--project moves only that project', async () => {
    const { moved, left } = await replayWith(['--project', P2]);
    expect(moved).toEqual(['s3', 's4']);
    expect(left).toBe(3);
  });

  it('--older-than moves only messages received longer ago', async () => {
    const { moved, left } = await replayWith(['--older-than', '2h']);
    expect(moved).toEqual(['s1', 's3']);
    expect(left).toBe(3);
  });

  it('selectors combine (all must match)', async () => {
    const { moved } = await replayWith(['--type', 'run.completed', '--project', P1, '--older-than', '30m']);
    expect(moved).toEqual(['s1']);
  });

  it('--dry-run with a selector lists matches and moves nothing', async () => {
    const pair = await createPair();
    await deadLetter(pair, events);
    const out = io();
    expect(await run(['dlq', 'replay', ...flags(pair), '--type', 'run.completed', '--dry-run'], out)).toBe(0);
    const text = out.stdout.text();
    expect(text).toMatch(/would move\s+s1/);
    expect(text).toContain('dry run: 3 of 5 DLQ messages match; nothing moved.');
    expect(await depth(pair.dlqUrl)).toEqual({ visible: 5, inFlight: 0 });
    expect(await depth(pair.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('no match moves nothing and exits 1', async () => {
    const { moved, left, exit } = await replayWith(['--event-id', 'nope']);
    expect(exit).toBe(1);
    expect(moved).toEqual([]);
    expect(left).toBe(5);
  });
});

describe('bridge dlq replay --connection (one tenant)', () => {
  const events: Ev[] = [
    { id: 'a1', type: 'run.completed', project: P1, connection: 'acme-seo' },
    { id: 'b1', type: 'run.completed', project: P2, connection: 'beta' },
    { id: 'a2', type: 'draft.ready', project: P1, connection: 'acme-seo' },
    { id: 'o1', type: 'run.completed', project: P2 },
  ];

  it("peek shows each message's tenant; replay moves only that tenant's, as its MessageGroupId, and the others stay", async () => {
    const pair = await createPair();
    await deadLetter(pair, events);
    const peek = io();
    expect(await run(['dlq', 'peek', '--endpoint', server.url, '--dlq-url', pair.dlqUrl], peek)).toBe(0);
    expect(peek.stdout.text()).toMatch(/a1\s+acme-seo\s+run\.completed/);
    expect(peek.stdout.text()).toMatch(/b1\s+beta\s+run\.completed/);
    expect(peek.stdout.text()).toMatch(/o1\s+stack\s+run\.completed/);

    const out = io();
    expect(await run(['dlq', 'replay', ...flags(pair), '--connection', 'acme-seo'], out)).toBe(0);
    expect(out.stdout.text()).toMatch(/moved\s+a1\s+acme-seo/);
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: pair.queueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['MessageGroupId'] }),
    );
    const replayed = (Messages ?? []).map((m) => [
      (JSON.parse(m.Body ?? '') as { event: { id: string } }).event.id,
      m.Attributes?.MessageGroupId,
    ]);
    expect(replayed.sort()).toEqual([
      ['a1', 'acme-seo'],
      ['a2', 'acme-seo'],
    ]);
    expect(await depth(pair.dlqUrl)).toEqual({ visible: 2, inFlight: 0 });
    const left = io();
    expect(await run(['dlq', 'peek', '--endpoint', server.url, '--dlq-url', pair.dlqUrl, '--json'], left)).toBe(0);
    const tenants = json<{ messages: { eventId: string; tenant: string }[] }>(left).messages.map((m) => [m.eventId, m.tenant]);
    expect(tenants.sort()).toEqual([
      ['b1', 'beta'],
      ['o1', 'stack'],
    ]);
  });

  it('"stack" replays the messages that name no connection', async () => {
    const pair = await createPair();
    await deadLetter(pair, events);
    expect(await run(['dlq', 'replay', ...flags(pair), '--connection', 'stack'], io())).toBe(0);
    expect((await drain(pair.queueUrl)).map((m) => m.MessageAttributes?.['event_id']?.StringValue)).toEqual(['o1']);
    expect(await depth(pair.dlqUrl)).toEqual({ visible: 3, inFlight: 0 });
  });

  it('a value that is neither a connection id nor "stack" is a usage error', async () => {
    const pair = await createPair();
    const out = io();
    expect(await run(['dlq', 'replay', ...flags(pair), '--connection', 'Not An Id'], out)).toBe(2);
    expect(out.stderr.text()).toContain('--connection must be a connection id or "stack"');
  });
});

describe('bridge dlq errors', () => {
  it('a missing queue is a clear error, not a stack trace', async () => {
    const out = io();
    const missing = server.queueUrl('no-such-queue');
    expect(await run(['dlq', 'stats', '--endpoint', server.url, '--queue-url', missing, '--dlq-url', missing], out)).toBe(1);
    expect(out.stderr.text()).toContain(`error: queue does not exist: ${missing}`);
    expect(out.stderr.text()).toContain('fix:');
    expect(out.stderr.text()).not.toMatch(/\n\s+at /);

    const asJson = io();
    expect(await run(['dlq', 'peek', '--endpoint', server.url, '--dlq-url', missing, '--json'], asJson)).toBe(1);
    expect(json<{ ok: boolean; error: { code: string } }>(asJson)).toMatchObject({ ok: false, error: { code: 'queue_not_found' } });
  });

  it('an unreachable endpoint is a clear error', async () => {
    const out = io();
    const code = await run(
      [
        'dlq',
        'stats',
        '--endpoint',
        'http://127.0.0.1:1',
        '--queue-url',
        'http://127.0.0.1:1/000000000000/q',
        '--dlq-url',
        'http://127.0.0.1:1/000000000000/d',
      ],
      out,
    );
    expect(code).toBe(1);
    expect(out.stderr.text()).toContain('error: cannot reach SQS at http://127.0.0.1:1 (ECONNREFUSED)');
  });

  it('a missing stack names the stack and region', async () => {
    const describeStack = (name: string): Promise<StackInfo> =>
      Promise.reject(
        new CloudFormationServiceException({
          name: 'ValidationError',
          $fault: 'client',
          $metadata: {},
          message: `Stack with id ${name} does not exist`,
        }),
      );
    const out = io({ describeStack });
    expect(await run(['dlq', 'stats', '--stack', 'VisibilitySlackBridge-nope', '--region', 'us-west-2'], out)).toBe(1);
    expect(out.stderr.text()).toContain('error: stack VisibilitySlackBridge-nope does not exist in region us-west-2');
  });

  it('a stack without the output names it and the flag to use', async () => {
    const out = io({ describeStack: (name) => Promise.resolve({ name, status: 'CREATE_COMPLETE', outputs: {} }) });
    expect(await run(['dlq', 'peek', '--stack', 'VisibilitySlackBridge-prod'], out)).toBe(1);
    expect(out.stderr.text()).toContain('stack VisibilitySlackBridge-prod has no output DlqUrl');
    expect(out.stderr.text()).toContain('--dlq-url');
  });

  it('usage errors exit 2', async () => {
    for (const argv of [
      ['dlq'],
      ['dlq', 'bogus'],
      ['dlq', 'peek', '--type', 'run.completed'],
      ['dlq', 'replay', '--rate', '0'],
      ['dlq', 'replay', '--older-than', 'soon'],
      ['dlq', 'replay', '--type', 'x', '--rate', '5', '--queue-url', 'http://127.0.0.1:1/0/q', '--dlq-url', 'http://127.0.0.1:1/0/d'],
      ['dlq', 'stats', '--nope'],
      ['dlq', 'stats', '--endpoint', 'not-a-url', '--queue-url', 'http://127.0.0.1:1/0/q', '--dlq-url', 'http://127.0.0.1:1/0/d'],
    ]) {
      const out = io();
      expect(await run(argv, out), argv.join(' ')).toBe(2);
      expect(out.stderr.text()).toContain('error:');
    }
  });
});
