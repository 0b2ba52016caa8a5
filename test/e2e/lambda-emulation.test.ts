/**
 * The two pieces of the local stack that stand in for AWS plumbing, with stub functions: the SQS
 * event source (record shape, partial batch responses, errors, timeouts, redrive) and the HTTP API
 * (payload 2.0 event and response mapping).
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateQueueCommand, GetQueueAttributesCommand, PurgeQueueCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { SqsServer, createSqsClient } from '../../local/sqs-server';
import { LambdaPoller, type SqsLambdaHandler } from '../../local/lambda-poller';
import { HttpGateway } from '../../local/http-gateway';
import { waitUntil } from '../support/wait-until';

describe('SQS event source', () => {
  let server: SqsServer;
  let sqs: SQSClient;
  let queueUrl: string;
  let dlqUrl: string;
  const queueArn = (): string => server.queueArn('source');
  let poller: { poller: LambdaPoller; client: SQSClient } | undefined;

  async function stopPoller(): Promise<void> {
    await poller?.poller.close();
    poller?.client.destroy();
    poller = undefined;
  }

  beforeAll(async () => {
    server = await SqsServer.start();
    sqs = createSqsClient(server.url);
    dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'source-dlq' }))).QueueUrl!;
    queueUrl = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: 'source',
          Attributes: {
            VisibilityTimeout: '1',
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: server.queueArn('source-dlq'), maxReceiveCount: 2 }),
          },
        }),
      )
    ).QueueUrl!;
  });

  afterAll(async () => {
    await stopPoller();
    sqs.destroy();
    await server.close();
  });

  beforeEach(async () => {
    await stopPoller();
    await sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
    await sqs.send(new PurgeQueueCommand({ QueueUrl: dlqUrl }));
  });

  async function depth(url: string): Promise<number> {
    const answer = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(answer.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(answer.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  }

  function startPoller(
    handler: SqsLambdaHandler,
    extra: { functionTimeoutMs?: number } = {},
  ): { invocations: SQSEvent[]; remaining: number[] } {
    const seen = { invocations: [] as SQSEvent[], remaining: [] as number[] };
    const client = createSqsClient(server.url);
    const started = new LambdaPoller({
      client,
      queueUrl,
      queueArn: queueArn(),
      region: 'us-east-1',
      waitTimeSeconds: 1,
      concurrency: 1,
      ...extra,
      createHandler: () => async (event, context) => {
        seen.invocations.push(event);
        seen.remaining.push(context.getRemainingTimeInMillis());
        return handler(event, context);
      },
    });
    started.start();
    poller = { poller: started, client };
    return seen;
  }

  async function send(body: string): Promise<void> {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        MessageAttributes: {
          type: { DataType: 'String', StringValue: 'run.completed' },
          blob: { DataType: 'Binary', BinaryValue: Buffer.from([1, 2, 3]) },
        },
      }),
    );
  }

  it('hands the function records shaped as Lambda does, and deletes them on success', async () => {
    await send('{"hello":1}');
    const seen = startPoller(() => Promise.resolve({ batchItemFailures: [] }));
    await waitUntil('one invocation', () => seen.invocations.length === 1);
    await waitUntil('the queue to empty', async () => (await depth(queueUrl)) === 0);

    const record = seen.invocations[0]!.Records[0]!;
    expect(record).toMatchObject({
      body: '{"hello":1}',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn(),
      awsRegion: 'us-east-1',
      md5OfBody: createHash('md5').update('{"hello":1}').digest('hex'),
      md5OfMessageAttributes: expect.stringMatching(/^[0-9a-f]{32}$/) as string,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: expect.stringMatching(/^\d+$/) as string,
        SenderId: expect.any(String) as string,
        ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d+$/) as string,
      },
      messageAttributes: {
        type: { stringValue: 'run.completed', stringListValues: [], binaryListValues: [], dataType: 'String' },
        blob: { binaryValue: Buffer.from([1, 2, 3]).toString('base64'), stringListValues: [], binaryListValues: [], dataType: 'Binary' },
      },
    });
    expect(record.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(record.receiptHandle.length).toBeGreaterThan(0);
    expect(seen.remaining[0]).toBeGreaterThan(50_000);
    expect(seen.remaining[0]).toBeLessThanOrEqual(60_000);
  });

  it('deletes only the records not reported in batchItemFailures', async () => {
    for (const body of ['keep', 'drop-1', 'drop-2']) await send(body);
    const seen = startPoller((event): Promise<SQSBatchResponse> =>
      Promise.resolve({ batchItemFailures: event.Records.filter((r) => r.body === 'keep').map((r) => ({ itemIdentifier: r.messageId })) }),
    );
    await waitUntil('the kept message to reach the DLQ', async () => (await depth(dlqUrl)) === 1);
    expect(await depth(queueUrl)).toBe(0);
    const keepReceives = seen.invocations.flatMap((e) => e.Records).filter((r) => r.body === 'keep');
    expect(keepReceives.map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['1', '2']);
  });

  it('deletes nothing when the function throws; SQS redrives after maxReceiveCount', async () => {
    await send('boom');
    const seen = startPoller(() => Promise.reject(new Error('boom')));
    await waitUntil('the message to reach the DLQ', async () => (await depth(dlqUrl)) === 1);
    expect(seen.invocations).toHaveLength(2);
  });

  it('fails the whole batch when batchItemFailures names an unknown message', async () => {
    for (const body of ['a', 'b']) await send(body);
    startPoller(() => Promise.resolve({ batchItemFailures: [{ itemIdentifier: 'not-a-message-id' }] }));
    await waitUntil('both messages to reach the DLQ', async () => (await depth(dlqUrl)) === 2);
  });

  it('treats a function that outlives its timeout as failed', async () => {
    await send('slow');
    // The function outlives its timeout tenfold; the timeout itself leaves a loaded machine room to answer.
    const seen = startPoller(
      () => new Promise<SQSBatchResponse>((resolve) => setTimeout(() => resolve({ batchItemFailures: [] }), 20_000)),
      {
        functionTimeoutMs: 2000,
      },
    );
    await waitUntil('the message to reach the DLQ', async () => (await depth(dlqUrl)) === 1);
    expect(seen.invocations.length).toBeGreaterThanOrEqual(2);
  });
});

describe('HTTP API (payload format 2.0)', () => {
  let gateway: HttpGateway;
  let lastEvent: APIGatewayProxyEventV2 | undefined;
  let answer: (event: APIGatewayProxyEventV2) => Promise<unknown> = () => Promise.resolve({ statusCode: 204 });

  beforeAll(async () => {
    gateway = await HttpGateway.start({
      routes: [{ method: 'POST', path: '/webhook' }],
      // Room for a loaded machine to answer; the slow answer below outlives it.
      functionTimeoutMs: 3000,
      createHandler: () => async (event) => {
        lastEvent = event;
        return (await answer(event)) as never;
      },
    });
  });

  afterAll(async () => {
    await gateway.close();
  });

  function post(
    path: string,
    headers: Record<string, string | string[]>,
    body: Buffer,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        `${gateway.url}${path}`,
        { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('builds the event as API Gateway does', async () => {
    answer = () => Promise.resolve({ statusCode: 202, headers: { 'X-Answer': 'yes' }, body: 'ok' });
    const response = await post(
      '/webhook?a=1&a=2&b=x%20y',
      { 'X-Mixed-Case': 'v', 'x-twice': ['one', 'two'], cookie: 'c1=1; c2=2' },
      Buffer.from('{"k":"é"}'),
    );
    expect(response).toMatchObject({ status: 202, text: 'ok' });
    expect(response.headers['x-answer']).toBe('yes');
    expect(response.headers['apigw-requestid']).toBeTruthy();
    expect(lastEvent).toMatchObject({
      version: '2.0',
      routeKey: 'POST /webhook',
      rawPath: '/webhook',
      rawQueryString: 'a=1&a=2&b=x%20y',
      queryStringParameters: { a: '1,2', b: 'x y' },
      cookies: ['c1=1', 'c2=2'],
      body: '{"k":"é"}',
      isBase64Encoded: false,
      requestContext: { http: { method: 'POST', path: '/webhook', sourceIp: '127.0.0.1' }, stage: '$default', routeKey: 'POST /webhook' },
    });
    expect(lastEvent?.headers).toMatchObject({ 'x-mixed-case': 'v', 'x-twice': 'one,two' });
    expect(lastEvent?.headers['cookie']).toBeUndefined();
    expect(lastEvent?.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
  });

  it('base64-encodes a body that is not UTF-8', async () => {
    answer = () => Promise.resolve({ statusCode: 200, body: '' });
    const bytes = Buffer.from([0xff, 0x00, 0xfe]);
    await post('/webhook', {}, bytes);
    expect(lastEvent).toMatchObject({ isBase64Encoded: true, body: bytes.toString('base64') });
  });

  it('answers a non-structured result as a 200 JSON body', async () => {
    answer = () => Promise.resolve({ hello: 'world' });
    const response = await post('/webhook', {}, Buffer.from('x'));
    expect(response).toMatchObject({ status: 200, text: '{"hello":"world"}' });
    expect(response.headers['content-type']).toBe('application/json');
  });

  it('answers 500 when the function throws or times out', async () => {
    answer = () => Promise.reject(new Error('crash'));
    expect((await post('/webhook', {}, Buffer.from('x'))).status).toBe(500);
    answer = () => new Promise((resolve) => setTimeout(() => resolve({ statusCode: 200 }), 10_000));
    expect(await post('/webhook', {}, Buffer.from('x'))).toMatchObject({ status: 500, text: '{"message":"Internal Server Error"}' });
  });
});
