/**
 * Benchmark 2: the real ingest handler (`createIngestHandler(env)`, API Gateway payload 2.0 in,
 * result out) per delivery, against in-process dynalite and the local SQS server, with quiet
 * observability. Every delivery is distinct and validly signed, so each one costs the full path:
 * verify, parse, conditional put (claim), SendMessage, update (complete).
 * Sequential first, then at concurrency 10. The local peers run in the same process, so the
 * figures include their CPU time (no network): they compare builds, they don't predict Lambda.
 */
import { performance } from 'node:perf_hooks';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createIngestHandler } from '../functions/ingest/create-handler';
import { signPayload } from '../shared/signature';
import { ensureBridgeTable, startLocalDynamo } from '../local/dynamo';
import { SqsServer, createSqsClient as localSqsClient } from '../local/sqs-server';
import { deliveryBody, httpApiEvent } from '../test/support/deliveries';
import { log, median, percentile, quietObservability, round, runConcurrent, scaled, useLocalAwsCredentials, type ResultRow } from './lib';

const SECRET = 'whsec_bench_ingest';
const TABLE = 'bench-ingest';
const WARMUP = scaled(40, 2);
/** Odd counts, so each median is one delivery's figure. */
const SEQUENTIAL = scaled(301, 3);
const CONCURRENT = scaled(501, 11);
const PEER_SAMPLES = scaled(101, 3);
const CONCURRENCY = 10;

function signedEvent(index: number): APIGatewayProxyEventV2 {
  const { id, body } = deliveryBody({ data: { project_id: `p-${index % 7}`, run_id: `r-${index}`, status: 'completed', answers: 120 } });
  return httpApiEvent({
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Service-Webhooks/1',
      'x-service-event': 'run.completed',
      'x-service-delivery': id,
      'x-service-signature': signPayload(SECRET, Math.floor(Date.now() / 1000), body),
    },
    body,
  });
}

interface Phase {
  latenciesMs: number[];
  wallMs: number;
  failures: number;
}

export async function runIngestCost(): Promise<{ rows: ResultRow[]; details: Record<string, unknown> }> {
  useLocalAwsCredentials();
  const dynamo = await startLocalDynamo();
  const sqsServer = await SqsServer.start();
  const sqs = localSqsClient(sqsServer.url);
  try {
    await ensureBridgeTable(dynamo.client, TABLE);
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'bench-events' }))).QueueUrl!;
    const env: Record<string, string> = {
      TABLE_NAME: TABLE,
      QUEUE_URL: queueUrl,
      // Only a delivery that can't be processed goes there; the benchmark sends none.
      DLQ_URL: queueUrl,
      SIGNING_SECRETS: JSON.stringify([SECRET]),
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqsServer.url,
      POWERTOOLS_SERVICE_NAME: 'ingest',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
    };
    const handler = createIngestHandler(env, quietObservability());

    let next = 0;
    const deliver = async (phase: Phase): Promise<void> => {
      const event = signedEvent(next++);
      const start = performance.now();
      const result = await handler(event);
      phase.latenciesMs.push(performance.now() - start);
      const body = typeof result.body === 'string' ? result.body : '';
      if (result.statusCode !== 200 || !body.includes('"accepted"')) phase.failures += 1;
    };
    const phase = async (count: number, concurrency: number): Promise<Phase> => {
      const out: Phase = { latenciesMs: [], wallMs: 0, failures: 0 };
      const start = performance.now();
      await runConcurrent(count, concurrency, () => deliver(out));
      out.wallMs = performance.now() - start;
      return out;
    };

    log(`ingest: warm-up (${WARMUP})`);
    await phase(WARMUP, 1);
    log(`ingest: ${SEQUENTIAL} sequential deliveries`);
    const sequential = await phase(SEQUENTIAL, 1);
    log(`ingest: ${CONCURRENT} deliveries at concurrency ${CONCURRENCY}`);
    const concurrent = await phase(CONCURRENT, CONCURRENCY);

    // What the peers alone cost: one delivery makes two DynamoDB writes and one SendMessage.
    log(`ingest: ${PEER_SAMPLES} bare PutItem and SendMessage round trips (peer cost)`);
    const putMs: number[] = [];
    const sendMs: number[] = [];
    for (let i = 0; i < PEER_SAMPLES; i++) {
      let start = performance.now();
      await dynamo.client.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: `bench#${i}` }, state: { S: 'completed' } } }));
      putMs.push(performance.now() - start);
      start = performance.now();
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"bench":true}' }));
      sendMs.push(performance.now() - start);
    }

    const b = 'ingest handler (local peers)';
    const rowsOf = (label: string, p: Phase, count: number): ResultRow[] => [
      { benchmark: b, figure: `${label}: median latency`, value: round(median(p.latenciesMs), 2), unit: 'ms' },
      { benchmark: b, figure: `${label}: p99 latency`, value: round(percentile(p.latenciesMs, 99), 2), unit: 'ms' },
      { benchmark: b, figure: `${label}: throughput`, value: round((count / p.wallMs) * 1000, 0), unit: 'deliveries/s' },
      {
        benchmark: b,
        figure: `${label}: deliveries not answered 200 accepted`,
        value: p.failures,
        unit: 'count',
        target: '= 0',
        pass: p.failures === 0,
      },
    ];
    return {
      rows: [
        ...rowsOf('sequential', sequential, SEQUENTIAL),
        ...rowsOf(`concurrency ${CONCURRENCY}`, concurrent, CONCURRENT),
        {
          benchmark: b,
          figure: 'peer cost: 2 × PutItem + 1 × SendMessage (medians)',
          value: round(2 * median(putMs) + median(sendMs), 2),
          unit: 'ms',
        },
      ],
      details: {
        warmup: WARMUP,
        sequential: {
          deliveries: SEQUENTIAL,
          wallMs: round(sequential.wallMs, 0),
          p90Ms: round(percentile(sequential.latenciesMs, 90), 2),
        },
        concurrent: {
          deliveries: CONCURRENT,
          concurrency: CONCURRENCY,
          wallMs: round(concurrent.wallMs, 0),
          p90Ms: round(percentile(concurrent.latenciesMs, 90), 2),
        },
        peerMedianMs: { putItem: round(median(putMs), 2), sendMessage: round(median(sendMs), 2) },
        peers: 'dynalite (in-process, in memory) and local/sqs-server.ts, same process as the handler',
        observability: 'quiet (no log lines, no metrics)',
      },
    };
  } finally {
    sqs.destroy();
    await sqsServer.close();
    await dynamo.close();
  }
}
