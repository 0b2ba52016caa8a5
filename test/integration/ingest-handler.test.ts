/**
 * The ingest Lambda handler as API Gateway invokes it (payload 2.0), configured only through its
 * environment, against dynalite and the local SQS server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { readIngestConfig } from '../../functions/ingest/runtime';
import { readDigestConfig } from '../../functions/digest/runtime';
import { startLocalDynamo, ensureBridgeTable, type LocalDynamo } from '../../local/dynamo';
import { SqsServer } from '../../local/sqs-server';
import { deliveryBody, httpApiEvent } from '../support/deliveries';
import { signPayload } from '../../shared/signature';
import type * as IngestModule from '../../functions/ingest/handler';
import { testSqsClient } from '../support/sqs-client';
import { MINIMAL_DIGEST_ENV } from '../support/function-env';

const SECRET = 'whsec_handler';
let dynamo: LocalDynamo;
let sqsServer: SqsServer;
let sqs: SQSClient;
let queueUrl: string;
let dlqUrl: string;
type IngestHandler = (typeof IngestModule)['handler'];
let handler: IngestHandler;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureBridgeTable(dynamo.client, 'bridge-handler');
  sqsServer = await SqsServer.start();
  sqs = testSqsClient(sqsServer.url);
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'handler-events' }))).QueueUrl!;
  dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'handler-dlq' }))).QueueUrl!;
  Object.assign(process.env, {
    TABLE_NAME: 'bridge-handler',
    QUEUE_URL: queueUrl,
    DLQ_URL: dlqUrl,
    SIGNING_SECRETS: `["${SECRET}"]`,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqsServer.url,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
  });
  ({ handler } = await import('../../functions/ingest/handler'));
});

afterAll(async () => {
  sqs.destroy();
  await sqsServer.close();
  await dynamo.close();
});

async function queueDepth(url = queueUrl): Promise<number> {
  const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }));
  return Number(attributes.Attributes?.['ApproximateNumberOfMessages'] ?? -1);
}

describe('ingest handler', () => {
  it('accepts a delivery with mixed-case header names on a named stage', async () => {
    const { id, body } = deliveryBody();
    const before = await queueDepth();
    const result = await handler(
      httpApiEvent({
        rawPath: '/prod/webhook',
        stage: 'prod',
        headers: {
          'X-Service-Signature': signPayload(SECRET, Math.floor(Date.now() / 1000), body),
          'X-Service-Delivery': id,
          'Content-Type': 'application/json',
        },
        body,
      }),
    );
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body ?? '')).toEqual({ ok: true, result: 'accepted' });
    expect(await queueDepth()).toBe(before + 1);
  });

  it('accepts a base64-encoded body', async () => {
    const { id, body } = deliveryBody();
    const result = await handler(
      httpApiEvent({
        headers: { 'x-service-signature': signPayload(SECRET, Math.floor(Date.now() / 1000), body), 'x-service-delivery': id },
        body: Buffer.from(body).toString('base64'),
        isBase64Encoded: true,
      }),
    );
    expect(result.statusCode).toBe(200);
  });

  it('quarantines a signed delivery it cannot process in DLQ_URL and answers 202', async () => {
    const { id, body } = deliveryBody({ createdAt: 'Fri, 20 Nov 2026 10:00:00 GMT' });
    const before = await queueDepth(dlqUrl);
    const result = await handler(
      httpApiEvent({
        headers: { 'x-service-signature': signPayload(SECRET, Math.floor(Date.now() / 1000), body), 'x-service-delivery': id },
        body,
      }),
    );
    expect(result.statusCode).toBe(202);
    expect(JSON.parse(result.body ?? '')).toMatchObject({ ok: true, result: 'quarantined' });
    expect(await queueDepth(dlqUrl)).toBe(before + 1);
  });

  it('answers 401 with a code and no internals for a forged delivery', async () => {
    const { id, body } = deliveryBody();
    const result = await handler(
      httpApiEvent({
        headers: { 'x-service-signature': signPayload('forged', Math.floor(Date.now() / 1000), body), 'x-service-delivery': id },
        body,
      }),
    );
    expect(result.statusCode).toBe(401);
    expect(JSON.parse(result.body ?? '')).toEqual({ ok: false, error: 'signature_no_matching_signature' });
  });
});

describe('ingest configuration', () => {
  it('names the missing variable', () => {
    expect(() => readIngestConfig({ QUEUE_URL: 'q', DLQ_URL: 'd', SIGNING_SECRETS: '["x"]' })).toThrow(/TABLE_NAME/);
    expect(() => readIngestConfig({ TABLE_NAME: 't', QUEUE_URL: 'q', SIGNING_SECRETS: '["x"]' })).toThrow(/DLQ_URL/);
    expect(() => readIngestConfig({ TABLE_NAME: 't', QUEUE_URL: 'q', DLQ_URL: 'd' })).toThrow(/SIGNING_SECRETS_SECRET_ARN/);
    expect(() =>
      readIngestConfig({ TABLE_NAME: 't', QUEUE_URL: 'q', DLQ_URL: 'd', SIGNING_SECRETS: '["x"]', SIGNATURE_TOLERANCE_SECONDS: '5m' }),
    ).toThrow(/SIGNATURE_TOLERANCE_SECONDS/);
  });

  it('parses a local SIGNING_SECRETS at cold start, naming it when malformed', () => {
    const base = { TABLE_NAME: 't', QUEUE_URL: 'q', DLQ_URL: 'd' };
    for (const bad of ['["unterminated"', '[1, 2]', ',\n,', '[]', 'a,b', 'a\nb', '{"a": "b"}']) {
      expect(() => readIngestConfig({ ...base, SIGNING_SECRETS: bad }), bad).toThrow(/Configuration error: SIGNING_SECRETS /);
    }
    // A secret may hold a comma: only a JSON array says where one ends.
    expect(() => readIngestConfig({ ...base, SIGNING_SECRETS: 'a,b' })).toThrow(
      /must be a JSON array of strings such as \["whsec_current"\]/,
    );
    // The runtime keeps the value as given (it parses it again when building the verifier).
    expect(readIngestConfig({ ...base, SIGNING_SECRETS: '["a,b", "c"]' }).signingSecrets).toEqual({ values: '["a,b", "c"]' });
    // With the ARN set, Secrets Manager is read at run time and the local value is not used.
    expect(readIngestConfig({ ...base, SIGNING_SECRETS_SECRET_ARN: 'arn:x', SIGNING_SECRETS: '[1]' }).signingSecrets).toEqual({
      secretArn: 'arn:x',
    });
  });
});

describe('digest configuration', () => {
  const env = MINIMAL_DIGEST_ENV;

  it('checks DIGEST_LEASE_SECONDS and says it must outlast the function timeout', () => {
    expect(readDigestConfig(env).leaseSeconds).toBe(120);
    expect(readDigestConfig({ ...env, DIGEST_LEASE_SECONDS: '10' }).leaseSeconds).toBe(10);
    expect(readDigestConfig({ ...env, DIGEST_LEASE_SECONDS: '3600' }).leaseSeconds).toBe(3600);
    for (const bad of ['9', '0', '3601', '2m']) {
      expect(() => readDigestConfig({ ...env, DIGEST_LEASE_SECONDS: bad }), bad).toThrow(
        /DIGEST_LEASE_SECONDS must be .* from 10 to 3600, longer than the digest function's timeout/,
      );
    }
  });
});
