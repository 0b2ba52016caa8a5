// The local SQS server, driven by the real @aws-sdk/client-sqs (which checks body MD5s itself).
import { createHash } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import {
  BatchEntryIdsNotDistinct,
  CancelMessageMoveTaskCommand,
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  EmptyBatchRequest,
  GetQueueAttributesCommand,
  InvalidAttributeName,
  InvalidMessageContents,
  ListMessageMoveTasksCommand,
  ListQueuesCommand,
  type ListMessageMoveTasksResultEntry,
  type Message,
  type MessageAttributeValue,
  PurgeQueueCommand,
  QueueDoesNotExist,
  QueueNameExists,
  ReceiptHandleIsInvalid,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
  ResourceNotFoundException,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
  TooManyEntriesInBatchRequest,
  UnsupportedOperation,
} from '@aws-sdk/client-sqs';
import { SqsServer, createSqsClient } from '../../local/sqs-server';
import { type MessageAttribute, md5OfMessageAttributes } from '../../local/sqs/md5';
import { sleep } from '../../shared/util';

let server: SqsServer;
let sqs: SQSClient;
let counter = 0;

beforeAll(async () => {
  server = await SqsServer.start();
  sqs = createSqsClient(server.url);
});

afterAll(async () => {
  sqs.destroy();
  await server.close();
});

async function createQueue(prefix: string, attributes?: Record<string, string>): Promise<{ url: string; arn: string; name: string }> {
  counter += 1;
  const name = `${prefix}-${counter}`;
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  return { url: QueueUrl!, arn: server.queueArn(name), name };
}

async function attributes(url: string): Promise<Record<string, string>> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
  return Attributes ?? {};
}

async function receive(url: string, input: Partial<ReceiveMessageCommandInput> = {}): Promise<Message[]> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: url, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'], ...input }),
  );
  return Messages ?? [];
}

async function sendBodies(url: string, count: number, prefix = 'm'): Promise<void> {
  for (let i = 0; i < count; i += 10) {
    const entries = Array.from({ length: Math.min(10, count - i) }, (_, j) => ({
      Id: `e${i + j}`,
      MessageBody: `${prefix}-${i + j}`,
    }));
    const { Failed } = await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    expect(Failed ?? []).toEqual([]);
  }
}

async function waitForTask(
  arn: string,
  done: (task: ListMessageMoveTasksResultEntry) => boolean,
): Promise<ListMessageMoveTasksResultEntry> {
  for (;;) {
    const { Results } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn }));
    const task = Results?.[0];
    if (task && done(task)) return task;
    await sleep(50);
  }
}

const md5 = (data: string | Uint8Array): string => createHash('md5').update(data).digest('hex');

/** Reference for MD5OfMessageAttributes, written from the AWS description of the encoding. */
function referenceAttributesMd5(attributes: Record<string, MessageAttributeValue>): string {
  const parts: Buffer[] = [];
  const field = (bytes: Buffer): void => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    parts.push(length, bytes);
  };
  for (const name of Object.keys(attributes).sort()) {
    const value = attributes[name]!;
    field(Buffer.from(name, 'utf8'));
    field(Buffer.from(value.DataType!, 'utf8'));
    if (value.StringValue !== undefined) {
      parts.push(Buffer.from([1]));
      field(Buffer.from(value.StringValue, 'utf8'));
    } else {
      parts.push(Buffer.from([2]));
      field(Buffer.from(value.BinaryValue!));
    }
  }
  return md5(Buffer.concat(parts));
}

describe('queues', () => {
  it('creates, describes and deletes queues', async () => {
    const { url, arn, name } = await createQueue('life', { VisibilityTimeout: '5', MessageRetentionPeriod: '600' });
    expect(url).toBe(`${server.url}/000000000000/${name}`);
    expect(server.queueUrl(name)).toBe(url);
    expect(arn).toBe(`arn:aws:sqs:us-east-1:000000000000:${name}`);

    // Same name and attributes: the existing queue; a different value: QueueNameExists.
    const again = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '5' } }));
    expect(again.QueueUrl).toBe(url);
    await expect(sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '6' } }))).rejects.toBeInstanceOf(
      QueueNameExists,
    );
    await expect(
      sqs.send(new CreateQueueCommand({ QueueName: 'bad-limits', Attributes: { VisibilityTimeout: '99999' } })),
    ).rejects.toMatchObject({ name: 'InvalidAttributeValue' });

    const all = await attributes(url);
    expect(all).toMatchObject({
      QueueArn: arn,
      VisibilityTimeout: '5',
      MessageRetentionPeriod: '600',
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
      ApproximateNumberOfMessagesDelayed: '0',
      ReceiveMessageWaitTimeSeconds: '0',
      DelaySeconds: '0',
    });
    expect(Number(all.CreatedTimestamp)).toBeGreaterThan(1_600_000_000);
    expect(all.RedrivePolicy).toBeUndefined();

    const some = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
    expect(some.Attributes).toEqual({ QueueArn: arn });
    await expect(sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['Bogus' as 'All'] }))).rejects.toBeInstanceOf(
      InvalidAttributeName,
    );

    await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    await expect(attributes(url)).rejects.toBeInstanceOf(QueueDoesNotExist);
  });

  it('answers the SQS operations it does not serve with UnsupportedOperation', async () => {
    const { url } = await createQueue('unserved');
    await expect(sqs.send(new ListQueuesCommand({}))).rejects.toBeInstanceOf(UnsupportedOperation);
    await expect(sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { DelaySeconds: '2' } }))).rejects.toThrow(
      'SetQueueAttributes is not supported by this local SQS server.',
    );
  });

  it("surfaces a missing queue as the SDK's QueueDoesNotExist exception", async () => {
    const missing = server.queueUrl('never-created');
    const error: unknown = await sqs.send(new SendMessageCommand({ QueueUrl: missing, MessageBody: 'x' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueDoesNotExist);
    expect(error).toMatchObject({ name: 'QueueDoesNotExist', $metadata: { httpStatusCode: 400 } });
    await expect(receive(missing)).rejects.toBeInstanceOf(QueueDoesNotExist);
    await expect(sqs.send(new PurgeQueueCommand({ QueueUrl: missing }))).rejects.toBeInstanceOf(QueueDoesNotExist);
  });

  it('purges a queue', async () => {
    const { url } = await createQueue('purge');
    await sendBodies(url, 3);
    await receive(url); // one in flight is purged too
    await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
    expect(await receive(url)).toEqual([]);
  });

  it('answers unknown operations with a clear 400', async () => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.Frobnicate' },
      body: '{}',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { __type: string; message: string };
    expect(body.__type).toContain('UnknownOperationException');
    expect(body.message).toContain('Frobnicate');
  });
});

describe('messages and MD5 digests', () => {
  const attributesToSend: Record<string, MessageAttributeValue> = {
    type: { DataType: 'String', StringValue: 'run.completed — ✓ 日本語 🚀' },
    count: { DataType: 'Number', StringValue: '-12.5e3' },
    blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 2, 254, 255]) },
    'custom.label': { DataType: 'String.custom', StringValue: 'x' },
  };

  it('round-trips a multibyte body with String, Number and Binary attributes, MD5s matching', async () => {
    const { url } = await createQueue('md5');
    const body = '{"event":"héllo wörld 😀🎉 — 中文"}';
    // The SDK rejects the call itself if MD5OfMessageBody is wrong.
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageAttributes: attributesToSend }));
    expect(sent.MD5OfMessageBody).toBe(md5(Buffer.from(body, 'utf8')));
    expect(sent.MD5OfMessageAttributes).toBe(referenceAttributesMd5(attributesToSend));

    const [message] = await receive(url);
    expect(message?.Body).toBe(body);
    expect(message?.MD5OfBody).toBe(sent.MD5OfMessageBody);
    expect(message?.MD5OfMessageAttributes).toBe(sent.MD5OfMessageAttributes);
    expect(message?.MessageAttributes?.type).toEqual(attributesToSend.type);
    expect(message?.MessageAttributes?.count).toEqual(attributesToSend.count);
    expect(message?.MessageAttributes?.['custom.label']).toEqual(attributesToSend['custom.label']);
    const blob = message?.MessageAttributes?.blob;
    expect(blob?.DataType).toBe('Binary');
    expect(Buffer.from(blob!.BinaryValue!).equals(Buffer.from([0, 1, 2, 254, 255]))).toBe(true);
    expect(message?.Attributes).toMatchObject({ ApproximateReceiveCount: '1', SenderId: '000000000000' });
    expect(Number(message?.Attributes?.SentTimestamp)).toBeGreaterThan(0);
    expect(Number(message?.Attributes?.ApproximateFirstReceiveTimestamp)).toBeGreaterThanOrEqual(
      Number(message?.Attributes?.SentTimestamp),
    );
  });

  it('matches digests that SQS itself returns (vectors pinned by moto from AWS)', async () => {
    const { url } = await createQueue('vectors');
    const single = await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: 'derp',
        MessageAttributes: { timestamp: { DataType: 'Number', StringValue: '1493147359900' } },
      }),
    );
    expect(single.MD5OfMessageBody).toBe('58fd9edd83341c29f1aebba81c31e257');
    expect(single.MD5OfMessageAttributes).toBe('235c5c510d26fb653d073faed50ae77c');

    // SQS refuses non-ASCII attribute names (so does this server), but the encoding must still
    // sort by name and length-prefix UTF-8 bytes: check the digest function with moto's vector.
    const complex = new Map<string, MessageAttribute>([
      ['ccc', { StringValue: 'testjunk', DataType: 'String' }],
      ['aaa', { BinaryValue: Buffer.from([2, 3, 4]), DataType: 'Binary' }],
      ['zzz', { DataType: 'Number', StringValue: '0230.01' }],
      ['\u00f6ther_encodings', { DataType: 'String', StringValue: 'T\u00fcst' }],
    ]);
    expect(md5OfMessageAttributes(complex)).toBe('8ae21a7957029ef04146b42aeaa18a22');
    await expect(
      sqs.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: 'x',
          MessageAttributes: { '\u00f6ther': { DataType: 'String', StringValue: 'y' } },
        }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidParameterValue' });
  });

  it('returns only the requested attributes, with the digest of those', async () => {
    const { url } = await createQueue('select');
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: 'b',
        MessageAttributes: {
          timestamp: { DataType: 'Number', StringValue: '1493147359900' },
          'trace.id': { DataType: 'String', StringValue: 't1' },
          'trace.parent': { DataType: 'String', StringValue: 't0' },
        },
      }),
    );
    const [one] = await receive(url, { MessageAttributeNames: ['timestamp'], MessageSystemAttributeNames: [], VisibilityTimeout: 0 });
    expect(Object.keys(one?.MessageAttributes ?? {})).toEqual(['timestamp']);
    expect(one?.MD5OfMessageAttributes).toBe('235c5c510d26fb653d073faed50ae77c');
    expect(one?.Attributes).toBeUndefined();

    const [prefixed] = await receive(url, { MessageAttributeNames: ['trace.*'], VisibilityTimeout: 0 });
    expect(Object.keys(prefixed?.MessageAttributes ?? {}).sort()).toEqual(['trace.id', 'trace.parent']);

    const [bare] = await receive(url, {
      MessageAttributeNames: [],
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      VisibilityTimeout: 0,
    });
    expect(bare?.MessageAttributes).toBeUndefined();
    expect(bare?.MD5OfMessageAttributes).toBeUndefined();
    expect(bare?.Attributes).toEqual({ ApproximateReceiveCount: '3' });

    // The deprecated AttributeNames spelling still selects system attributes.
    const [legacy] = await receive(url, { MessageSystemAttributeNames: [], AttributeNames: ['All'] });
    expect(legacy?.Attributes).toMatchObject({ ApproximateReceiveCount: '4', SenderId: '000000000000' });
  });

  it('sends batches, reporting per-entry failures and validating MD5s', async () => {
    const { url } = await createQueue('batch');
    const result = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'a', MessageBody: 'first ✓', MessageAttributes: attributesToSend },
          { Id: 'b', MessageBody: 'second 🚀', DelaySeconds: 0 },
          { Id: 'bad', MessageBody: 'x', MessageAttributes: { n: { DataType: 'Number', StringValue: 'not a number' } } },
        ],
      }),
    );
    expect(result.Successful?.map((entry) => entry.Id)).toEqual(['a', 'b']);
    expect(result.Successful?.[0]?.MD5OfMessageAttributes).toBe(referenceAttributesMd5(attributesToSend));
    expect(result.Successful?.[1]?.MD5OfMessageAttributes).toBeUndefined();
    expect(result.Failed).toEqual([expect.objectContaining({ Id: 'bad', SenderFault: true, Code: 'InvalidParameterValue' })]);

    const bodies = (await receive(url, { MaxNumberOfMessages: 10 })).map((message) => message.Body);
    expect(bodies).toEqual(['first ✓', 'second 🚀']);
  });

  it('rejects invalid input as SQS does', async () => {
    const { url } = await createQueue('invalid');
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '' }))).rejects.toMatchObject({
      name: 'MissingParameter',
    });
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'bad \u0001 char' }))).rejects.toBeInstanceOf(
      InvalidMessageContents,
    );
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', DelaySeconds: 901 }))).rejects.toMatchObject({
      name: 'InvalidParameterValue',
    });
    for (const max of [0, 11]) {
      await expect(receive(url, { MaxNumberOfMessages: max })).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    }
    await expect(receive(url, { WaitTimeSeconds: 21 })).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    await expect(
      sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: [
            { Id: 'same', MessageBody: '1' },
            { Id: 'same', MessageBody: '2' },
          ],
        }),
      ),
    ).rejects.toBeInstanceOf(BatchEntryIdsNotDistinct);
    await expect(sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [] }))).rejects.toBeInstanceOf(EmptyBatchRequest);
    const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: `i${i}`, MessageBody: 'x' }));
    await expect(sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: eleven }))).rejects.toBeInstanceOf(
      TooManyEntriesInBatchRequest,
    );
    await expect(sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: 'garbage' }))).rejects.toBeInstanceOf(
      ReceiptHandleIsInvalid,
    );
    await expect(sqs.send(new CreateQueueCommand({ QueueName: 'bad name!' }))).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    // Nothing was enqueued by the rejected calls.
    expect(await receive(url)).toEqual([]);
  });

  it('receives at most MaxNumberOfMessages, in send order', async () => {
    const { url } = await createQueue('max');
    await sendBodies(url, 15);
    const first = await receive(url, { MaxNumberOfMessages: 10 });
    const second = await receive(url, { MaxNumberOfMessages: 10 });
    expect(first.map((message) => message.Body)).toEqual(Array.from({ length: 10 }, (_, i) => `m-${i}`));
    expect(second).toHaveLength(5);
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '15' });
  });

  it('holds back delayed messages until their delay passes', async () => {
    const { url } = await createQueue('delay');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'later', DelaySeconds: 2 }));
    expect(await receive(url)).toEqual([]);
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessagesDelayed: '1', ApproximateNumberOfMessages: '0' });
    const [message] = await receive(url, { WaitTimeSeconds: 5 });
    expect(message?.Body).toBe('later');
  });
});

describe('visibility, deletion and receipt handles', () => {
  it('makes a message visible again when its visibility timeout expires, counting receives', async () => {
    const { url } = await createQueue('expiry', { VisibilityTimeout: '2' });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'again' }));
    const [first] = await receive(url);
    expect(first?.Attributes?.ApproximateReceiveCount).toBe('1');
    expect(await receive(url)).toEqual([]);
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '1' });

    // The long poll is woken when the timeout expires.
    const [second] = await receive(url, { WaitTimeSeconds: 5 });
    expect(second?.MessageId).toBe(first?.MessageId);
    expect(second?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(second?.Attributes?.ApproximateFirstReceiveTimestamp).toBe(first?.Attributes?.ApproximateFirstReceiveTimestamp);
    expect(second?.ReceiptHandle).not.toBe(first?.ReceiptHandle);

    // The first (stale) handle neither deletes nor changes visibility.
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first!.ReceiptHandle }));
    await expect(
      sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: first!.ReceiptHandle, VisibilityTimeout: 0 })),
    ).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessagesNotVisible: '1' });

    // The latest handle deletes it.
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: second!.ReceiptHandle }));
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
  });

  it('honours a VisibilityTimeout override on receive and ChangeMessageVisibility to 0', async () => {
    const { url } = await createQueue('override', { VisibilityTimeout: '300' });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'peek' }));
    const [peeked] = await receive(url, { VisibilityTimeout: 0 });
    expect(peeked?.Body).toBe('peek');
    const [held] = await receive(url);
    expect(held?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(await receive(url)).toEqual([]);

    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: held!.ReceiptHandle, VisibilityTimeout: 0 }));
    const [back] = await receive(url);
    expect(back?.Attributes?.ApproximateReceiveCount).toBe('3');
  });

  it('changes visibility and deletes in batches, failing bad entries only', async () => {
    const { url } = await createQueue('batch-ops', { VisibilityTimeout: '300' });
    await sendBodies(url, 3);
    const received = await receive(url, { MaxNumberOfMessages: 3 });
    expect(received).toHaveLength(3);

    const changed = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'zero', ReceiptHandle: received[0]!.ReceiptHandle, VisibilityTimeout: 0 },
          { Id: 'longer', ReceiptHandle: received[1]!.ReceiptHandle, VisibilityTimeout: 600 },
          { Id: 'junk', ReceiptHandle: 'not-a-handle', VisibilityTimeout: 0 },
        ],
      }),
    );
    expect(changed.Successful?.map((entry) => entry.Id)).toEqual(['zero', 'longer']);
    expect(changed.Failed).toEqual([expect.objectContaining({ Id: 'junk', Code: 'ReceiptHandleIsInvalid', SenderFault: true })]);
    expect(await attributes(url)).toMatchObject({ ApproximateNumberOfMessages: '1', ApproximateNumberOfMessagesNotVisible: '2' });

    const deleted = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'one', ReceiptHandle: received[1]!.ReceiptHandle },
          { Id: 'two', ReceiptHandle: received[2]!.ReceiptHandle },
          { Id: 'junk', ReceiptHandle: '%%%' },
        ],
      }),
    );
    expect(deleted.Successful?.map((entry) => entry.Id)).toEqual(['one', 'two']);
    expect(deleted.Failed?.map((entry) => entry.Code)).toEqual(['ReceiptHandleIsInvalid']);
    const [left] = await receive(url);
    expect(left?.Body).toBe('m-0');
  });
});

describe('long polling and concurrency', () => {
  it('wakes a long poll as soon as a message is sent', async () => {
    const { url } = await createQueue('wake');
    const polling = receive(url, { WaitTimeSeconds: 15 });
    await sleep(200);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'ping' }));
    const [message] = await polling;
    expect(message?.Body).toBe('ping');
  });

  it('returns nothing when the wait ends without messages', async () => {
    const { url } = await createQueue('idle');
    expect(await receive(url, { WaitTimeSeconds: 1 })).toEqual([]);
  });

  it("uses the queue's ReceiveMessageWaitTimeSeconds when the request sets none", async () => {
    const { url } = await createQueue('default-wait', { ReceiveMessageWaitTimeSeconds: '10' });
    const polling = receive(url);
    await sleep(200);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'waited' }));
    expect((await polling)[0]?.Body).toBe('waited');
  });

  it('takes no message for a long poll whose client went away', async () => {
    const { url } = await createQueue('gone');
    const aborted = new AbortController();
    const request = fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ReceiveMessage' },
      body: JSON.stringify({ QueueUrl: url, WaitTimeSeconds: 15 }),
      signal: aborted.signal,
    }).catch(() => undefined);
    await sleep(200);
    aborted.abort();
    await request;
    await sleep(100);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'still here' }));
    const [message] = await receive(url);
    expect(message?.Body).toBe('still here');
    expect(message?.Attributes?.ApproximateReceiveCount).toBe('1');
  });

  it('never gives one message to two concurrent receivers', async () => {
    const { url } = await createQueue('race');
    await sendBodies(url, 60);
    const seen: string[] = [];
    const worker = async (): Promise<void> => {
      for (;;) {
        const messages = await receive(url, { MaxNumberOfMessages: 3 });
        if (messages.length === 0) return;
        seen.push(...messages.map((message) => message.MessageId!));
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
  });

  it('hands messages sent to waiting long polls to one poll each', async () => {
    const { url } = await createQueue('race-wait');
    const polls = Array.from({ length: 5 }, () => receive(url, { WaitTimeSeconds: 2, MaxNumberOfMessages: 10 }));
    await sleep(200);
    await Promise.all(['a', 'b', 'c'].map((body) => sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }))));
    const received = (await Promise.all(polls)).flat();
    // Under heavy load a message could miss every poll; it must then still be in the queue.
    received.push(...(await receive(url, { MaxNumberOfMessages: 10 })));
    expect(received.map((message) => message.Body).sort()).toEqual(['a', 'b', 'c']);
  });
});

describe('dead-letter queues and message move tasks', () => {
  async function queuePair(
    prefix: string,
    maxReceiveCount: number,
  ): Promise<{ source: string; sourceArn: string; dlq: string; dlqArn: string }> {
    const dlq = await createQueue(`${prefix}-dlq`);
    const source = await createQueue(prefix, {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount }),
      VisibilityTimeout: '30',
    });
    return { source: source.url, sourceArn: source.arn, dlq: dlq.url, dlqArn: dlq.arn };
  }

  it('moves a message to the DLQ instead of returning it past maxReceiveCount', async () => {
    const { source, sourceArn, dlq, dlqArn } = await queuePair('redrive', 2);
    const policy = JSON.parse((await attributes(source)).RedrivePolicy!) as unknown;
    expect(policy).toEqual({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 });

    const attributesSent = { kind: { DataType: 'String', StringValue: 'poison ☠' } };
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: source, MessageBody: 'poison 💀', MessageAttributes: attributesSent }));
    expect((await receive(source, { VisibilityTimeout: 0 }))[0]?.Attributes?.ApproximateReceiveCount).toBe('1');
    expect((await receive(source, { VisibilityTimeout: 0 }))[0]?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(await receive(source)).toEqual([]);
    expect(await attributes(source)).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });

    const [dead] = await receive(dlq);
    expect(dead?.Body).toBe('poison 💀');
    expect(dead?.MessageId).toBe(sent.MessageId);
    expect(dead?.MessageAttributes).toEqual(attributesSent);
    expect(dead?.MD5OfMessageAttributes).toBe(sent.MD5OfMessageAttributes);
    expect(dead?.Attributes?.DeadLetterQueueSourceArn).toBe(sourceArn);
  });

  it('moves DLQ messages back to their source queue and reports the task COMPLETED', async () => {
    const { source, dlq, dlqArn } = await queuePair('move', 1);
    await sendBodies(source, 4, 'back');
    await receive(source, { MaxNumberOfMessages: 10, VisibilityTimeout: 0 });
    expect(await receive(source, { MaxNumberOfMessages: 10 })).toEqual([]); // all four redriven
    expect(await attributes(dlq)).toMatchObject({ ApproximateNumberOfMessages: '4' });

    const { TaskHandle } = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn }));
    expect(TaskHandle).toBeTruthy();
    const task = await waitForTask(dlqArn, (entry) => entry.Status !== 'RUNNING');
    expect(task).toMatchObject({
      Status: 'COMPLETED',
      SourceArn: dlqArn,
      ApproximateNumberOfMessagesMoved: 4,
      ApproximateNumberOfMessagesToMove: 4,
    });
    expect(task.DestinationArn).toBeUndefined();
    expect(task.StartedTimestamp).toBeGreaterThan(0);

    expect(await attributes(dlq)).toMatchObject({ ApproximateNumberOfMessages: '0' });
    const back = await receive(source, { MaxNumberOfMessages: 10 });
    expect(back.map((message) => message.Body).sort()).toEqual(['back-0', 'back-1', 'back-2', 'back-3']);
    expect(back.every((message) => message.Attributes?.ApproximateReceiveCount === '1')).toBe(true);
  });

  it('moves to an explicit destination at a set rate, and can be cancelled', async () => {
    const { source, dlq, dlqArn } = await queuePair('dest', 1);
    const destination = await createQueue('dest-target');
    await sendBodies(source, 2, 'elsewhere');
    await receive(source, { MaxNumberOfMessages: 10, VisibilityTimeout: 0 });
    await receive(source, { MaxNumberOfMessages: 10 });
    await sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: dlqArn, DestinationArn: destination.arn, MaxNumberOfMessagesPerSecond: 100 }),
    );
    const done = await waitForTask(dlqArn, (entry) => entry.Status !== 'RUNNING');
    expect(done).toMatchObject({
      Status: 'COMPLETED',
      DestinationArn: destination.arn,
      MaxNumberOfMessagesPerSecond: 100,
      ApproximateNumberOfMessagesMoved: 2,
    });
    expect((await receive(destination.url, { MaxNumberOfMessages: 10 })).map((m) => m.Body).sort()).toEqual(['elsewhere-0', 'elsewhere-1']);

    // A slow task over many messages, cancelled while running.
    await sendBodies(dlq, 20, 'slow');
    const { TaskHandle } = await sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: dlqArn, DestinationArn: destination.arn, MaxNumberOfMessagesPerSecond: 1 }),
    );
    const running = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 10 }));
    expect(running.Results?.[0]).toMatchObject({ Status: 'RUNNING', TaskHandle, ApproximateNumberOfMessagesToMove: 20 });
    expect(running.Results?.[1]?.Status).toBe('COMPLETED');
    await expect(sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn }))).rejects.toMatchObject({ name: 'UnsupportedOperation' });

    const cancelled = await sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle }));
    expect(cancelled.ApproximateNumberOfMessagesMoved).toBeLessThan(20);
    const listed = await waitForTask(dlqArn, () => true);
    expect(listed.Status).toBe('CANCELLED');
    expect(listed.TaskHandle).toBeUndefined();
    await expect(sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle }))).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it('rejects move tasks from queues that are not dead-letter queues or do not exist', async () => {
    const plain = await createQueue('plain');
    await expect(sqs.send(new StartMessageMoveTaskCommand({ SourceArn: plain.arn }))).rejects.toMatchObject({
      name: 'InvalidParameterValue',
    });
    await expect(sqs.send(new StartMessageMoveTaskCommand({ SourceArn: server.queueArn('no-such-queue') }))).rejects.toBeInstanceOf(
      ResourceNotFoundException,
    );
  });
});

describe('closing', () => {
  it('ends pending long polls at once and closes sockets', async () => {
    const other = await SqsServer.start();
    const client = createSqsClient(other.url);
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'closing' }));
    const polling = client
      .send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20 }))
      .then((output) => ({ settled: 'resolved' as const, messages: output.Messages ?? [] }))
      .catch(() => ({ settled: 'rejected' as const, messages: [] }));
    await sleep(200);
    await other.close();
    // Behavioural, not a timing bound: the poll ends because of close(), far before its 20 s wait.
    const outcome = await Promise.race([polling, sleep(10_000).then(() => ({ settled: 'still waiting' as const, messages: [] }))]);
    expect(outcome.settled).not.toBe('still waiting');
    expect(outcome.messages).toEqual([]);
    client.destroy();
  });
});
