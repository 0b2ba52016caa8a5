// `bridge doctor` against real protocol peers: the local SQS server, dynalite, the local Secrets
// Manager server, the local Slack server and the visibility simulator. CloudFormation has no local
// peer, so DescribeStacks is injected (the outputs point at the peers).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { CloudFormationServiceException } from '@aws-sdk/client-cloudformation';
import { SqsServer, createSqsClient } from '../../local/sqs-server';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { LocalSecretsManagerServer } from '../../local/secrets-manager-server';
import { LocalSlackServer } from '../../local/slack/server';
import { VisibilitySimulator } from '../../local/simulator/server';
import { run } from '../../cli/main';
import { bufferIo, type BufferedIo } from '../../cli/io';
import type { StackInfo } from '../../cli/aws';
import type { Check } from '../../cli/commands/doctor';
import { LOCAL_DEFAULTS, type ReadyInfo } from '../../local/stack';
import { LOCAL_SLACK_TOKEN } from '../../cli/ready-file';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTP_PATHS } from '../../shared/contracts';
import { SLACK_SIGNATURE_HEADER, signSlackRequest } from '../../shared/slack-request-signature';

const TOKEN = 'xoxb-doctor-token';

let sqsServer: SqsServer;
let sqs: SQSClient;
let dynamo: LocalDynamo;
let secrets: LocalSecretsManagerServer;
let slack: LocalSlackServer;
let simulator: VisibilitySimulator;
let counter = 0;
/** The Slack app's events URL as the bridge answers Slack's URL check: the challenge back to a request signed with a known secret. */
let eventsPeer: { server: Server; base: string };
const EVENTS_SECRETS = ['8f742231b10e8888abcd99yyyzzz85a5', 'local-slack-signing-test'];

async function startEventsPeer(): Promise<typeof eventsPeer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const ts = Number(req.headers['x-slack-request-timestamp']);
      const signed = EVENTS_SECRETS.some(
        (secret) => signSlackRequest(secret, ts, body)[SLACK_SIGNATURE_HEADER] === req.headers[SLACK_SIGNATURE_HEADER],
      );
      if (req.url !== HTTP_PATHS.slackEvents) res.writeHead(404).end('{}');
      else if (!signed) res.writeHead(401).end('{}');
      else
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ challenge: (JSON.parse(body) as { challenge: string }).challenge }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
const tmp = mkdtempSync(join(tmpdir(), 'cli-doctor-'));

beforeAll(async () => {
  [sqsServer, dynamo, secrets, slack, simulator] = await Promise.all([
    SqsServer.start(),
    startLocalDynamo(),
    LocalSecretsManagerServer.start(),
    LocalSlackServer.start({ tokens: [TOKEN], memberChannels: ['bridge', 'proj-a'], knownChannels: ['bridge', 'proj-a', 'proj-b'] }),
    VisibilitySimulator.start(),
  ]);
  sqs = createSqsClient(sqsServer.url);
  eventsPeer = await startEventsPeer();
});

afterAll(async () => {
  sqs.destroy();
  await new Promise<void>((resolve) => eventsPeer.server.close(() => resolve()));
  await Promise.all([sqsServer.close(), dynamo.close(), secrets.close(), slack.close(), simulator.close()]);
});

interface Setup {
  outputs: Record<string, string>;
  flags: string[];
  queueUrl: string;
  dlqUrl: string;
  tableName: string;
  secretIds: { readApiKey: string; slackToken: string; signing: string; slackSigning: string };
}

async function setup(
  values: {
    readApiKey?: string;
    slackToken?: string;
    signing?: string;
    slackSigning?: string;
    projectChannels?: Record<string, string>;
  } = {},
): Promise<Setup> {
  counter += 1;
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `doctor-dlq-${counter}` }));
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: `doctor-queue-${counter}`,
      Attributes: {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: sqsServer.queueArn(`doctor-dlq-${counter}`), maxReceiveCount: 3 }),
      },
    }),
  );
  const tableName = `doctor-table-${counter}`;
  await ensureBridgeTable(dynamo.client, tableName);
  const secretIds = {
    readApiKey: secrets.createSecret(`doctor/${counter}/read-api-key`, values.readApiKey ?? simulator.apiKey),
    slackToken: secrets.createSecret(`doctor/${counter}/slack-token`, values.slackToken ?? TOKEN),
    signing: secrets.createSecret(`doctor/${counter}/signing`, values.signing ?? JSON.stringify(['whsec_a'])),
    slackSigning: secrets.createSecret(`doctor/${counter}/slack-signing`, values.slackSigning ?? '8f742231b10e8888abcd99yyyzzz85a5'),
  };
  const outputs: Record<string, string> = {
    WebhookUrl: 'https://example.invalid/webhook',
    QueueUrl: queue.QueueUrl!,
    DlqUrl: dlq.QueueUrl!,
    TableName: tableName,
    ReadApiKeySecretArn: secretIds.readApiKey,
    SlackTokenSecretArn: secretIds.slackToken,
    SigningSecretsSecretArn: secretIds.signing,
    SlackSigningSecretSecretArn: secretIds.slackSigning,
    SlackDefaultChannel: '#bridge',
    SlackProjectChannels: JSON.stringify(values.projectChannels ?? { [simulator.projectIds()[0]!]: '#proj-a' }),
    ReadApiBaseUrl: simulator.url,
    // The stage file's Slack ids: the local Slack server's workspace and app.
    SlackTeamIds: 'T0LOCAL',
    SlackAppId: 'A0LOCALAPP',
    SlackEventsUrl: `${eventsPeer.base}${HTTP_PATHS.slackEvents}`,
  };
  const flags = [
    '--stack',
    'VisibilitySlackBridge-test',
    '--endpoint-sqs',
    sqsServer.url,
    '--endpoint-dynamodb',
    dynamo.endpoint,
    '--endpoint-secretsmanager',
    secrets.url,
    '--slack-api-url',
    slack.apiUrl,
  ];
  return { outputs, flags, queueUrl: queue.QueueUrl!, dlqUrl: dlq.QueueUrl!, tableName, secretIds };
}

async function accepted(tableName: string, agoMs: number): Promise<void> {
  await dynamo.client.send(
    new PutItemCommand({
      TableName: tableName,
      Item: {
        pk: { S: `delivery#${counter}-${agoMs}` },
        state: { S: 'completed' },
        accepted_at: { S: new Date(Date.now() - agoMs).toISOString() },
        expires_at: { N: String(Math.floor(Date.now() / 1000) + 86_400) },
      },
    }),
  );
  // Records that are not deliveries, or not yet accepted, are ignored.
  await dynamo.client.send(
    new PutItemCommand({ TableName: tableName, Item: { pk: { S: `digest#${counter}` }, accepted_at: { S: new Date().toISOString() } } }),
  );
  await dynamo.client.send(
    new PutItemCommand({ TableName: tableName, Item: { pk: { S: `delivery#${counter}-pending` }, state: { S: 'in_progress' } } }),
  );
}

function ioFor(s: Setup, tty = false): BufferedIo {
  return bufferIo({
    tty,
    describeStack: (name): Promise<StackInfo> => Promise.resolve({ name, status: 'UPDATE_COMPLETE', outputs: s.outputs }),
  });
}

async function doctor(s: Setup, extra: string[] = []): Promise<{ code: number; text: string; checks: Check[] }> {
  const text = ioFor(s);
  const code = await run(['doctor', ...s.flags, ...extra], text);
  const json = ioFor(s);
  expect(await run(['doctor', ...s.flags, ...extra, '--json'], json)).toBe(code);
  const doc = JSON.parse(json.stdout.text()) as { ok: boolean; checks: Check[] };
  expect(doc.ok).toBe(code === 0);
  return { code, text: text.stdout.text(), checks: doc.checks };
}

function status(checks: Check[]): Record<string, string> {
  return Object.fromEntries(checks.map((c) => [c.id, c.status]));
}

describe('bridge doctor', () => {
  it('all green', async () => {
    const s = await setup();
    await accepted(s.tableName, 3_600_000);
    const { code, text, checks } = await doctor(s);
    expect(code).toBe(0);
    expect(status(checks)).toEqual({
      stack: 'ok',
      'secret.read-api-key': 'ok',
      'secret.slack-token': 'ok',
      'secret.signing': 'ok',
      'secret.slack-signing': 'ok',
      'read-api': 'ok',
      'slack.auth': 'ok',
      'slack.channel:#bridge': 'ok',
      'slack.channel:#proj-a': 'ok',
      'slack.workspace': 'ok',
      'slack.events': 'ok',
      dlq: 'ok',
      'last-delivery': 'ok',
    });
    expect(text).toContain('✓ App Home events URL answers Slack');
    expect(text).toContain('✓ stack VisibilitySlackBridge-test: UPDATE_COMPLETE');
    expect(text).toMatch(/✓ read-API key works: GET \/v1\/projects answered \d+ project\(s\)/);
    expect(text).toContain('✓ recent delivery: last accepted 1h ago');
    expect(text).toContain('all checks passed');
    expect(text).not.toContain('✗');
  });

  it('an events URL that does not answer Slack’s check fails, naming the app settings to fix', async () => {
    const s = await setup({ slackSigning: 'another-signing-secret' });
    const { code, text, checks } = await doctor(s);
    expect(code).toBe(1);
    expect(status(checks)['slack.events']).toBe('fail');
    expect(text).toContain('the Slack signing secret does not verify there');
    expect(text).toContain('App Home → Home Tab on');
    const missing = await setup();
    missing.outputs['SlackEventsUrl'] = `${eventsPeer.base}/nope`;
    const gone = await doctor(missing);
    expect(status(gone.checks)['slack.events']).toBe('fail');
    expect(gone.text).toContain(`deploy the stack with the ${HTTP_PATHS.slackEvents} route`);
  });

  it('a placeholder secret fails with the command that sets it', async () => {
    const s = await setup({ slackToken: 'PLACEHOLDER' });
    await accepted(s.tableName, 60_000);
    const { code, text, checks } = await doctor(s);
    expect(code).toBe(1);
    expect(status(checks)).toMatchObject({ 'secret.slack-token': 'fail', 'slack.auth': 'skip', 'read-api': 'ok' });
    expect(text).toContain('✗ Slack token: not set (still PLACEHOLDER)');
    expect(text).toContain('fix: npx bridge secrets set slack-token --value-stdin');
    expect(text).toMatch(/1 check\(s\) failed/);
  });

  it('a signing secret that is not a JSON array of non-empty strings fails', async () => {
    const s = await setup({ signing: '["whsec_a", ""]' });
    const { code, checks } = await doctor(s);
    expect(code).toBe(1);
    expect(checks.find((c) => c.id === 'secret.signing')).toMatchObject({ status: 'fail', detail: 'holds an empty or non-string entry' });
  });

  it('checks the Slack signing secret: as Slack shows it or a JSON array pass; unset, placeholder or unparsable fail with the command that sets it', async () => {
    for (const [value, status, detail] of [
      ['["new0000secret", "old0000secret"]', 'ok', 'set (2 secrets, while regenerating)'],
      ['PLACEHOLDER', 'fail', 'not set (still PLACEHOLDER)'],
      ['["unterminated"', 'fail', 'its value is not JSON'],
      ['two secrets', 'fail', 'its value holds a space'],
    ] as const) {
      const s = await setup({ slackSigning: value });
      const { text, checks } = await doctor(s);
      const check = checks.find((c) => c.id === 'secret.slack-signing');
      expect(check, value).toMatchObject({ status, detail: expect.stringContaining(detail) as unknown });
      if (status === 'fail') expect(text).toContain('fix: npx bridge secrets set slack-signing-secret --stack VisibilitySlackBridge-test');
      expect(text).not.toContain('new0000secret');
    }
    const s = await setup();
    const { checks } = await doctor({ ...s, outputs: { ...s.outputs, SlackSigningSecretSecretArn: '' } });
    expect(checks.find((c) => c.id === 'secret.slack-signing')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('SlackSigningSecretSecretArn') as unknown,
    });
  });

  it('a read-API key the service rejects (401) fails', async () => {
    const s = await setup({ readApiKey: 'wrong-key' });
    const { code, text, checks } = await doctor(s);
    expect(code).toBe(1);
    expect(status(checks)['read-api']).toBe('fail');
    expect(text).toContain('✗ read-API key works: the key is rejected (HTTP 401 unauthorized)');
    expect(text).toContain('npx bridge secrets set read-api-key --value-stdin');
    expect(text).not.toContain('wrong-key');
  });

  it('an invalid Slack token fails', async () => {
    const s = await setup({ slackToken: 'xoxb-revoked' });
    const { code, text } = await doctor(s);
    expect(code).toBe(1);
    expect(text).toContain('✗ Slack token valid: auth.test failed: invalid_auth');
    expect(text).toContain('fix: put a valid bot token');
  });

  it('the bot missing from a configured channel fails with the invite fix', async () => {
    const s = await setup({ projectChannels: { p1: '#proj-a', p2: '#proj-b' } });
    await accepted(s.tableName, 60_000);
    const { code, text, checks } = await doctor(s);
    expect(code).toBe(1);
    expect(status(checks)).toMatchObject({ 'slack.channel:#bridge': 'ok', 'slack.channel:#proj-a': 'ok', 'slack.channel:#proj-b': 'fail' });
    expect(text).toContain('✗ bot in #proj-b: the bot is not a member');
    expect(text).toContain('/invite @<bot> in #proj-b');
  });

  it('a non-empty DLQ fails', async () => {
    const s = await setup();
    await accepted(s.tableName, 60_000);
    await sqs.send(new SendMessageCommand({ QueueUrl: s.dlqUrl, MessageBody: '{}' }));
    await sqs.send(new SendMessageCommand({ QueueUrl: s.dlqUrl, MessageBody: '{}' }));
    const { code, text, checks } = await doctor(s);
    expect(code).toBe(1);
    expect(status(checks)['dlq']).toBe('fail');
    expect(text).toContain('✗ DLQ empty: 2 message(s) waiting');
    expect(text).toContain('bridge dlq peek');
  });

  it('an old last delivery is a warning (exit 0), per --silence-hours', async () => {
    const s = await setup();
    await accepted(s.tableName, 30 * 3_600_000);
    const old = await doctor(s);
    expect(old.code).toBe(0);
    expect(status(old.checks)['last-delivery']).toBe('warn');
    expect(old.text).toMatch(/! recent delivery: last accepted 1d6h ago .*older than 26 h/);
    const relaxed = await doctor(s, ['--silence-hours', '48']);
    expect(status(relaxed.checks)['last-delivery']).toBe('ok');
  });

  it('no delivery on record is a warning', async () => {
    const s = await setup();
    const { code, checks } = await doctor(s);
    expect(code).toBe(0);
    expect(checks.find((c) => c.id === 'last-delivery')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('no accepted delivery') as unknown,
    });
  });

  it('a missing stack fails and skips the rest', async () => {
    const out = bufferIo({
      describeStack: (name) =>
        Promise.reject(
          new CloudFormationServiceException({
            name: 'ValidationError',
            $fault: 'client',
            $metadata: {},
            message: `Stack with id ${name} does not exist`,
          }),
        ),
    });
    expect(await run(['doctor', '--stack', 'VisibilitySlackBridge-gone', '--region', 'eu-central-1'], out)).toBe(1);
    const text = out.stdout.text();
    expect(text).toContain('✗ stack VisibilitySlackBridge-gone: stack VisibilitySlackBridge-gone does not exist in region eu-central-1');
    expect(text).toContain('- DLQ empty: needs the stack outputs');
  });

  it('draws progress only on a TTY', async () => {
    const s = await setup();
    await accepted(s.tableName, 60_000);
    const tty = ioFor(s, true);
    expect(await run(['doctor', ...s.flags], tty)).toBe(0);
    expect(tty.stdout.text()).toContain('\r');
    const plain = ioFor(s);
    expect(await run(['doctor', ...s.flags], plain)).toBe(0);
    expect(plain.stdout.text()).not.toContain('\r');
  });

  it('--local checks the local stack from its ready file', async () => {
    const s = await setup();
    await accepted(s.tableName, 60_000);
    const ready = join(tmp, `ready-${counter}.json`);
    // The shape `npm start` writes (local/ready-info.ts).
    const info: ReadyInfo = {
      webhookUrl: 'http://127.0.0.1:9/webhook',
      secrets: ['whsec_local'],
      simulatorUrl: simulator.url,
      apiKey: simulator.apiKey,
      projectIds: simulator.projectIds(),
      webhookId: null,
      sqsEndpoint: sqsServer.url,
      queueUrl: s.queueUrl,
      dlqUrl: s.dlqUrl,
      dynamoEndpoint: dynamo.endpoint,
      tableName: s.tableName,
      slackApiUrl: slack.apiUrl,
      slackChannel: '#bridge',
      slackSigningSecret: 'local-slack-signing-test',
      apiBaseUrl: eventsPeer.base,
      previewUrl: null,
      region: 'us-east-1',
      pid: process.pid,
      secretsManagerEndpoint: null,
      signingSecretsSecretId: null,
      readApiKeySecretId: null,
      slackTokenSecretId: null,
      eventsUrl: null,
      ports: { webhook: 9, simulator: null, sqs: 0, dynamodb: 0, secretsManager: null, slack: null, events: null },
    };
    writeFileSync(ready, JSON.stringify(info));
    // No describeStack given: --local must not touch CloudFormation or Secrets Manager. The local
    // stack's Slack server accepts its fixed token, which the ready file doesn't carry.
    expect(LOCAL_SLACK_TOKEN).toBe(LOCAL_DEFAULTS.slackToken);
    slack.setTokens([TOKEN, LOCAL_DEFAULTS.slackToken]);
    const out = bufferIo();
    try {
      expect(await run(['doctor', '--local', ready, '--json'], out)).toBe(0);
    } finally {
      slack.setTokens([TOKEN]);
    }
    const doc = JSON.parse(out.stdout.text()) as { ok: boolean; checks: Check[] };
    expect(doc.ok).toBe(true);
    expect(status(doc.checks)).toEqual({
      stack: 'ok',
      'secret.signing': 'ok',
      'secret.read-api-key': 'ok',
      'secret.slack-token': 'ok',
      'secret.slack-signing': 'ok',
      'read-api': 'ok',
      'slack.auth': 'ok',
      'slack.channel:#bridge': 'ok',
      'slack.workspace': 'ok',
      'slack.events': 'ok',
      dlq: 'ok',
      'last-delivery': 'ok',
    });
  });

  it('prints the stage-file lines to add when the stage names no workspace or another app', async () => {
    const s = await setup();
    await accepted(s.tableName, 60_000);
    const { SlackTeamIds: _teams, ...withoutIds } = s.outputs;
    const missing = await doctor({ ...s, outputs: { ...withoutIds, SlackAppId: 'A0OTHERAPP' } });
    expect(missing.code).toBe(1);
    expect(status(missing.checks)).toMatchObject({ 'slack.workspace': 'fail' });
    expect(missing.text).toContain(
      'fix: in config/test.json set "slackTeamIds": ["T0LOCAL"], "slackAppId": "A0LOCALAPP"; then npx cdk deploy -c stage=test',
    );
    const org = await doctor({ ...s, outputs: { ...withoutIds, SlackEnterpriseId: 'E0ORG' } });
    expect(org.text).toContain('no "slackEnterpriseId" (the workspace is in no Grid org)');
  });
});
