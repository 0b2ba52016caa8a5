/**
 * The rehearsal's recording proxy between the real SDK clients and the real local peers (dynalite, the
 * local SQS server, the local Secrets Manager server): every call is recorded as IAM authorizes it and
 * passes through unchanged, answers and errors included. The last test checks the calls of the real
 * ingest adapters against the synthesized ingest role.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  ResourceNotFoundException,
  ScanCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDynamoClient, createSqsClient } from '../../shared/adapters/aws-clients';
import { DynamoDeliveryStore } from '../../shared/adapters/dynamo-delivery-store';
import { SqsEventQueue } from '../../shared/adapters/sqs-event-queue';
import { TABLE } from '../../shared/contracts';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { SqsServer, createSqsClient as createUpstreamSqsClient } from '../../local/sqs-server';
import { LocalSecretsManagerServer } from '../../local/secrets-manager-server';
import { AwsCallRecorder } from '../../local/rehearse/aws-call-recorder';
import type { CfnTemplate } from '../../local/rehearse/assembly';
import { checkCalls, describeDenial, rolePolicies } from '../../local/rehearse/iam-check';
import type { ResolveContext } from '../../local/rehearse/intrinsics';
import { logicalId, synthApp } from '../infra/helpers';

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
const TABLE_NAME = 'rehearsal-table';
const TABLE_ARN = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${TABLE_NAME}`;
/** The principal: the access key id the rehearsal gives one function. */
const PRINCIPAL = 'IngestFunction';
const credentials = { accessKeyId: PRINCIPAL, secretAccessKey: 'any' };

let dynamo: LocalDynamo;
let sqsServer: SqsServer;
let secretsServer: LocalSecretsManagerServer;
let recorder: AwsCallRecorder;
let upstreamSqs: SQSClient;
let queueUrl: string;
let dlqUrl: string;
let secretArn: string;
// Clients as a function builds them: explicit endpoints (the AWS_ENDPOINT_URL_* values) and its own credentials.
let ddb: DynamoDBClient;
let sqs: SQSClient;
let secrets: SecretsManagerClient;

beforeAll(async () => {
  [dynamo, sqsServer, secretsServer] = await Promise.all([
    startLocalDynamo(),
    SqsServer.start({ region: REGION }),
    LocalSecretsManagerServer.start({ region: REGION }),
  ]);
  await ensureBridgeTable(dynamo.client, TABLE_NAME);
  upstreamSqs = createUpstreamSqsClient(sqsServer.url, REGION);
  queueUrl = (await upstreamSqs.send(new CreateQueueCommand({ QueueName: 'rehearsal-digest' }))).QueueUrl!;
  dlqUrl = (await upstreamSqs.send(new CreateQueueCommand({ QueueName: 'rehearsal-dlq' }))).QueueUrl!;
  secretArn = secretsServer.createSecret('rehearsal/signing', '["whsec_one"]');
  recorder = await AwsCallRecorder.start({
    upstreams: { dynamodb: dynamo.endpoint, sqs: sqsServer.url, secretsmanager: secretsServer.url },
    region: REGION,
    accountId: ACCOUNT,
  });
  // One attempt, so a reset is not retried away; timeouts no loaded machine reaches.
  const bounds = { region: REGION, credentials, requestTimeoutMs: 60_000, connectionTimeoutMs: 30_000, maxAttempts: 1 };
  ddb = createDynamoClient({ ...bounds, endpoint: recorder.endpoints.dynamodb });
  sqs = createSqsClient({ ...bounds, endpoint: recorder.endpoints.sqs });
  secrets = new SecretsManagerClient({ endpoint: recorder.endpoints.secretsmanager, region: REGION, credentials, maxAttempts: 1 });
});

afterAll(async () => {
  for (const client of [ddb, sqs, secrets, upstreamSqs]) client?.destroy();
  await recorder?.close();
  await Promise.all([dynamo?.close(), sqsServer?.close(), secretsServer?.close()]);
});

beforeEach(() => recorder.clear());

const key = (pk: string) => ({ [TABLE.partitionKey]: { S: pk } });

describe('AwsCallRecorder', () => {
  it('refuses an upstream that is not a URL, naming the service', async () => {
    await expect(
      AwsCallRecorder.start({
        upstreams: { dynamodb: dynamo.endpoint, sqs: '', secretsmanager: secretsServer.url },
        region: REGION,
        accountId: ACCOUNT,
      }),
    ).rejects.toThrow('upstreams.sqs must be the http(s) URL of the local peer');
  });

  it("records a real adapter's DynamoDB calls with the principal, table ARN and leading keys, and the peer really stores the item", async () => {
    const store = new DynamoDeliveryStore(ddb, { tableName: TABLE_NAME, leaseMs: 10_000, retentionSeconds: 3600 });
    const claim = await store.claim('evt_rec_1', Date.now());
    expect(claim.status).toBe('claimed');
    const stored = await dynamo.client.send(new GetItemCommand({ TableName: TABLE_NAME, Key: key(`${TABLE.prefixes.delivery}evt_rec_1`) }));
    expect(stored.Item?.state?.S).toBe('in_progress');

    expect(recorder.calls()).toEqual([
      {
        principal: PRINCIPAL,
        service: 'dynamodb',
        action: 'dynamodb:PutItem',
        resources: [TABLE_ARN],
        context: { 'dynamodb:LeadingKeys': [`${TABLE.prefixes.delivery}evt_rec_1`] },
      },
    ]);
  });

  it('passes answers and errors through unchanged', async () => {
    await dynamo.client.send(
      new UpdateItemCommand({
        TableName: TABLE_NAME,
        Key: key('pace#C1'),
        UpdateExpression: 'SET n = :n',
        ExpressionAttributeValues: { ':n': { N: '7' } },
      }),
    );
    const answer = await ddb.send(new GetItemCommand({ TableName: TABLE_NAME, Key: key('pace#C1'), ConsistentRead: true }));
    expect(answer.Item).toEqual({ pk: { S: 'pace#C1' }, n: { N: '7' } });
    await expect(ddb.send(new GetItemCommand({ TableName: 'no-such-table', Key: key('pace#C1') }))).rejects.toBeInstanceOf(
      ResourceNotFoundException,
    );
    expect(recorder.calls().map((call) => [call.action, call.resources[0]])).toEqual([
      ['dynamodb:GetItem', TABLE_ARN],
      ['dynamodb:GetItem', `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/no-such-table`],
    ]);
  });

  it('records ReturnValues, and every key of batch, query and scan calls', async () => {
    await ddb.send(
      new UpdateItemCommand({
        TableName: TABLE_NAME,
        Key: key('post#C1#e1'),
        UpdateExpression: 'SET a = :a',
        ExpressionAttributeValues: { ':a': { S: 'x' } },
        ReturnValues: 'ALL_NEW',
      }),
    );
    await ddb.send(
      new BatchWriteItemCommand({
        RequestItems: { [TABLE_NAME]: [{ PutRequest: { Item: key('sub#p1') } }, { DeleteRequest: { Key: key('chan#C1') } }] },
      }),
    );
    await ddb.send(new BatchGetItemCommand({ RequestItems: { [TABLE_NAME]: { Keys: [key('sub#p1'), key('chan#C2')] } } }));
    const queried = await ddb.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        KeyConditionExpression: '#k = :v',
        ExpressionAttributeNames: { '#k': 'pk' },
        ExpressionAttributeValues: { ':v': { S: 'sub#p1' } },
      }),
    );
    expect(queried.Items).toEqual([key('sub#p1')]);
    await ddb.send(new ScanCommand({ TableName: TABLE_NAME, Select: 'COUNT' }));

    const calls = recorder.calls();
    expect(calls.map(({ action, context }) => ({ action, context }))).toEqual([
      { action: 'dynamodb:UpdateItem', context: { 'dynamodb:LeadingKeys': ['post#C1#e1'], 'dynamodb:ReturnValues': ['ALL_NEW'] } },
      { action: 'dynamodb:BatchWriteItem', context: { 'dynamodb:LeadingKeys': ['sub#p1', 'chan#C1'] } },
      { action: 'dynamodb:BatchGetItem', context: { 'dynamodb:LeadingKeys': ['sub#p1', 'chan#C2'] } },
      { action: 'dynamodb:Query', context: { 'dynamodb:LeadingKeys': ['sub#p1'] } },
      { action: 'dynamodb:Scan', context: { 'dynamodb:Select': ['COUNT'] } },
    ]);
    expect(calls.every((call) => call.principal === PRINCIPAL && call.resources.join() === TABLE_ARN)).toBe(true);
  });

  it('answers on a keep-alive connection reused after the event loop was blocked past 5 s (a synth on a loaded machine)', async () => {
    const getItem = () => ddb.send(new GetItemCommand({ TableName: 'idle-table', Key: key('idle#1') }));
    await expect(getItem()).rejects.toBeInstanceOf(ResourceNotFoundException);
    // Blocks the thread (and its event loop) without spinning the CPU, as a CDK synth in this process does.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 7_000);
    await expect(getItem()).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it('records each transaction item as the action IAM checks, with its enclosing operation', async () => {
    // dynalite has no transactions: its refusal comes back as it is, and the call is recorded all the same.
    const sent = ddb.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: TABLE_NAME, Item: key('digest#t1') } },
          {
            Update: {
              TableName: TABLE_NAME,
              Key: key('snapshot#t1'),
              UpdateExpression: 'SET a = :a',
              ExpressionAttributeValues: { ':a': { S: 'x' } },
            },
          },
        ],
      }),
    );
    await expect(sent).rejects.toMatchObject({ name: 'UnknownOperationException' });
    expect(recorder.calls().map(({ action, resources, context }) => ({ action, resources, context }))).toEqual([
      {
        action: 'dynamodb:PutItem',
        resources: [TABLE_ARN],
        context: { 'dynamodb:LeadingKeys': ['digest#t1'], 'dynamodb:EnclosingOperation': ['TransactWriteItems'] },
      },
      {
        action: 'dynamodb:UpdateItem',
        resources: [TABLE_ARN],
        context: { 'dynamodb:LeadingKeys': ['snapshot#t1'], 'dynamodb:EnclosingOperation': ['TransactWriteItems'] },
      },
    ]);
  });

  it('records SQS calls by queue ARN (a batch send as sqs:SendMessage) and the peer receives the messages', async () => {
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'one' }));
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: 'a', MessageBody: 'two' }] }));
    const received = await upstreamSqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
    expect(received.Messages?.map((message) => message.Body).sort()).toEqual(['one', 'two']);
    const queueArn = `arn:aws:sqs:${REGION}:${ACCOUNT}:rehearsal-digest`;
    expect(recorder.calls()).toEqual([
      { principal: PRINCIPAL, service: 'sqs', action: 'sqs:SendMessage', resources: [queueArn], context: {} },
      { principal: PRINCIPAL, service: 'sqs', action: 'sqs:SendMessage', resources: [queueArn], context: {} },
    ]);
  });

  it('records a client without an explicit endpoint when its queue URL points at the proxy', async () => {
    // An SQS client sends to the QueueUrl's host unless given an endpoint: the rehearsal hands functions proxied URLs.
    const proxied = recorder.queueUrlThroughProxy(queueUrl);
    expect(proxied).toBe(`${recorder.endpoints.sqs}/${ACCOUNT}/rehearsal-digest`);
    const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
    const envOnly = new SQSClient({ region: REGION, credentials, maxAttempts: 1, logger: quiet });
    try {
      await envOnly.send(new SendMessageCommand({ QueueUrl: proxied, MessageBody: 'via proxy url' }));
    } finally {
      envOnly.destroy();
    }
    const received = await upstreamSqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
    expect(received.Messages?.map((message) => message.Body)).toEqual(['via proxy url']);
    expect(recorder.calls().map((call) => [call.action, call.resources[0]])).toEqual([
      ['sqs:SendMessage', `arn:aws:sqs:${REGION}:${ACCOUNT}:rehearsal-digest`],
    ]);
  });

  it('records a secret read by its ARN, whether the function names it by ARN or by name', async () => {
    expect((await secrets.send(new GetSecretValueCommand({ SecretId: secretArn }))).SecretString).toBe('["whsec_one"]');
    expect((await secrets.send(new GetSecretValueCommand({ SecretId: 'rehearsal/signing' }))).SecretString).toBe('["whsec_one"]');
    expect(recorder.calls()).toEqual([
      { principal: PRINCIPAL, service: 'secretsmanager', action: 'secretsmanager:GetSecretValue', resources: [secretArn], context: {} },
      { principal: PRINCIPAL, service: 'secretsmanager', action: 'secretsmanager:GetSecretValue', resources: [secretArn], context: {} },
    ]);
  });

  it("checks the real ingest adapters' calls against the synthesized ingest role: allowed, and denied once a statement is gone", async () => {
    const app = synthApp();
    const template = app.template.toJSON() as CfnTemplate;
    const id = (type: string, prefix: string) => logicalId(app.template, type, prefix);
    const queueValues = (url: string) => {
      const name = url.split('/').pop()!;
      return { ref: url, attributes: { Arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`, QueueName: name } };
    };
    const ctx: ResolveContext = {
      region: REGION,
      accountId: ACCOUNT,
      partition: 'aws',
      stackName: 'VisibilitySlackBridge-dev',
      urlSuffix: 'amazonaws.com',
      resources: {
        [id('AWS::DynamoDB::Table', 'Table')]: { ref: TABLE_NAME, attributes: { Arn: TABLE_ARN } },
        [id('AWS::SQS::Queue', 'DigestQueue')]: queueValues(queueUrl),
        [id('AWS::SQS::Queue', 'DigestDlq')]: queueValues(dlqUrl),
        [id('AWS::SecretsManager::Secret', 'SigningSecrets')]: { ref: secretArn, attributes: {} },
        [id('AWS::Logs::LogGroup', 'IngestLogs')]: {
          ref: 'ingest-logs',
          attributes: { Arn: `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:ingest-logs:*` },
        },
      },
    };
    const roleId = id('AWS::IAM::Role', 'WebhookIngestRole');

    const store = new DynamoDeliveryStore(ddb, { tableName: TABLE_NAME, leaseMs: 10_000, retentionSeconds: 3600 });
    const queue = new SqsEventQueue(sqs, queueUrl, dlqUrl);
    await store.claim('evt_iam_1', Date.now());
    const now = new Date().toISOString();
    await queue.send({
      event: { id: 'evt_iam_1', type: 'draft.ready', created_at: now, data: { project_id: 'p1', asset_id: 'a1', version: 1 } },
      received_at: now,
    });
    await secrets.send(new GetSecretValueCommand({ SecretId: secretArn }));
    const calls = recorder.calls();
    expect(calls.map((call) => call.action)).toEqual(['dynamodb:PutItem', 'sqs:SendMessage', 'secretsmanager:GetSecretValue']);

    const verdicts = await checkCalls(rolePolicies(template, roleId, ctx), calls);
    expect(verdicts.map((verdict) => verdict.kind)).toEqual(['allowed', 'allowed', 'allowed']);

    // The same calls against the template without the statement that lets ingest enqueue.
    const trimmed = structuredClone(template);
    for (const resource of Object.values(trimmed.Resources)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      const document = (resource.Properties as { PolicyDocument: { Statement: { Sid?: string }[] } }).PolicyDocument;
      document.Statement = document.Statement.filter((statement) => statement.Sid !== 'EnqueueEvents');
    }
    const trimmedPolicies = rolePolicies(trimmed, roleId, ctx);
    const denied = (await checkCalls(trimmedPolicies, calls)).filter((verdict) => !verdict.allowed);
    expect(denied.map((verdict) => verdict.call.action)).toEqual(['sqs:SendMessage']);
    expect(describeDenial(denied[0]!, trimmedPolicies)).toContain(
      `${PRINCIPAL}: sqs:SendMessage on arn:aws:sqs:${REGION}:${ACCOUNT}:rehearsal-digest is not allowed by role ${roleId}`,
    );
  });
});

describe('AwsCallRecorder: which invocation made a call', () => {
  it("attributes a call to the invocation its environment's session serves, and only while it serves it", async () => {
    const environment = (sessionToken: string) =>
      new DynamoDBClient({
        endpoint: recorder.endpoints.dynamodb,
        region: REGION,
        credentials: { ...credentials, sessionToken },
        maxAttempts: 1,
      });
    const [first, second] = [environment('IngestFunction-env-1'), environment('IngestFunction-env-2')];
    const read = (client: DynamoDBClient, pk: string) => client.send(new GetItemCommand({ TableName: TABLE_NAME, Key: key(pk) }));
    try {
      const event = { rawPath: '/webhook/client-a' };
      const release = recorder.serving('IngestFunction-env-1', event);
      await read(first, 'delivery#served');
      await read(second, 'delivery#other-environment');
      release();
      await read(first, 'delivery#after');

      const byKey = new Map(recorder.calls().map((call) => [call.context['dynamodb:LeadingKeys']![0], call.invocation]));
      expect(byKey.get('delivery#served')?.event).toBe(event);
      expect([...byKey.keys()].sort()).toEqual(['delivery#after', 'delivery#other-environment', 'delivery#served']);
      expect(byKey.get('delivery#other-environment')).toBeUndefined();
      expect(byKey.get('delivery#after')).toBeUndefined();
    } finally {
      first.destroy();
      second.destroy();
    }
  });
});
