// Fair queues on the local SQS server (local/sqs/fair.ts), and the bridge's sends that use them: each
// tenant's work carries its MessageGroupId, so one tenant's backlog does not hold back another's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { SqsServer, createSqsClient } from '../../local/sqs-server';
import { SqsEventQueue } from '../../shared/adapters/sqs-event-queue';
import { quarantinedDelivery } from '../../shared/quarantine';

let server: SqsServer;
let control: SqsServer;
let sqs: SQSClient;
let controlSqs: SQSClient;
let counter = 0;

beforeAll(async () => {
  [server, control] = await Promise.all([SqsServer.start(), SqsServer.start({ fairQueues: false })]);
  sqs = createSqsClient(server.url);
  controlSqs = createSqsClient(control.url);
});

afterAll(async () => {
  sqs.destroy();
  controlSqs.destroy();
  await Promise.all([server.close(), control.close()]);
});

async function queue(client: SQSClient = sqs): Promise<string> {
  counter += 1;
  const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: `fair-${counter}`, Attributes: { VisibilityTimeout: '60' } }));
  return QueueUrl ?? '';
}

async function send(client: SQSClient, url: string, bodies: readonly string[], group?: string): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const entries = bodies
      .slice(i, i + 10)
      .map((body, j) => ({ Id: `m${j}`, MessageBody: body, ...(group ? { MessageGroupId: group } : {}) }));
    const sent = await client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    expect(sent.Failed ?? []).toEqual([]);
  }
}

/** Receives (and keeps in flight) `receives` batches of 10, as a consumer with that many busy invocations would. */
async function receiveBodies(client: SQSClient, url: string, receives: number): Promise<string[][]> {
  const batches: string[][] = [];
  for (let i = 0; i < receives; i++) {
    const answer = await client.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
    batches.push((answer.Messages ?? []).map((m) => m.Body ?? ''));
  }
  return batches;
}

const backlog = (n: number): string[] => Array.from({ length: n }, (_, i) => `x${i}`);

describe('the local SQS server as a fair queue', () => {
  it("gives one message of group Y ahead of group X's backlog, on the first receive", async () => {
    const url = await queue();
    await send(sqs, url, backlog(200), 'tenant-x');
    await send(sqs, url, ['y'], 'tenant-y');
    const [first] = await receiveBodies(sqs, url, 1);
    expect(first).toContain('y');
    expect(first).toHaveLength(10);
  });

  it("serves Y first once X's messages fill the consumers, Y arriving after the backlog is in flight", async () => {
    const url = await queue();
    await send(sqs, url, backlog(200), 'tenant-x');
    const before = await receiveBodies(sqs, url, 2);
    expect(before.flat()).toEqual(backlog(20));
    await send(sqs, url, ['y'], 'tenant-y');
    const [next] = await receiveBodies(sqs, url, 1);
    expect(next?.[0]).toBe('y');
  });

  it('without groups, or with the fairness off, receives in send order as a plain standard queue', async () => {
    const plain = await queue();
    await send(sqs, plain, backlog(50));
    await send(sqs, plain, ['y']);
    expect((await receiveBodies(sqs, plain, 5)).flat()).toEqual(backlog(50));

    const unfair = await queue(controlSqs);
    await send(controlSqs, unfair, backlog(50), 'tenant-x');
    await send(controlSqs, unfair, ['y'], 'tenant-y');
    const batches = await receiveBodies(controlSqs, unfair, 6);
    expect(batches.slice(0, 5).flat()).toEqual(backlog(50));
    expect(batches[5]).toEqual(['y']);
  });

  it('returns MessageGroupId as a system attribute and refuses one SQS would refuse', async () => {
    const url = await queue();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'a', MessageGroupId: 'acme-seo' }));
    const answer = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MessageSystemAttributeNames: ['MessageGroupId'] }));
    expect(answer.Messages?.[0]?.Attributes?.MessageGroupId).toBe('acme-seo');
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'a', MessageGroupId: 'has space' }))).rejects.toThrow(
      /MessageGroupId/,
    );
  });
});

describe("the bridge's queue sends carry their tenant", () => {
  async function groupsOf(url: string, count: number): Promise<(string | undefined)[]> {
    const answer = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: count, MessageSystemAttributeNames: ['MessageGroupId'] }),
    );
    return (answer.Messages ?? []).map((m) => m.Attributes?.MessageGroupId);
  }

  it('ingest: the stack\'s own event as "stack", a connection\'s as its id, quarantined deliveries too', async () => {
    const [url, dlqUrl] = [await queue(), await queue()];
    const events = new SqsEventQueue(sqs, url, dlqUrl);
    const event = { id: 'evt_1', type: 'run.completed', created_at: '2026-11-27T10:00:00Z', data: { project_id: 'p1' } };
    await events.send({ event, received_at: '2026-11-27T10:00:01Z' });
    await events.send({ event: { ...event, id: 'evt_2' }, received_at: '2026-11-27T10:00:01Z', connection: 'acme-seo' });
    expect(await groupsOf(url, 10)).toEqual(['stack', 'acme-seo']);

    const raw = Buffer.from('{"id":"evt_3"');
    const base = { raw, reason: 'not JSON', receivedAt: '2026-11-27T10:00:01Z', signedAt: 1, bodyId: undefined };
    await events.quarantine(quarantinedDelivery(base));
    await events.quarantine(quarantinedDelivery({ ...base, connectionId: 'acme-seo' }));
    expect(await groupsOf(dlqUrl, 10)).toEqual(['stack', 'acme-seo']);
  });
});
