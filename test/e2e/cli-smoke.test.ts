// `bridge smoke` through the CLI's entry (`run`) against a running local stack: by its ready file
// (as `npx bridge smoke` next to `npm start`), and as a deployed stack named with --stack, whose
// outputs the local CloudFormation server answers with the local stack's resources. Then the
// failures: a signing secret the webhook refuses (accepted fails), and a Slack outage (posted fails,
// with the last failure and its fix).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main';
import { bufferIo } from '../../cli/io';
import type { Hop } from '../../cli/commands/smoke';
import { STACK_OUTPUTS } from '../../shared/contracts';
import { LocalCloudFormationServer } from '../../local/cloudformation-server';
import type { LocalStack } from '../../local/stack';
import { eventIdOf, simulatorOf, slackOf, startTestStack } from './helpers';

interface SmokeDoc {
  ok: boolean;
  eventId: string;
  projectId: string;
  failedHop: string | null;
  hops: Hop[];
}

let stack: LocalStack;
let cloudFormation: LocalCloudFormationServer;
const dir = mkdtempSync(join(tmpdir(), 'bridge-smoke-'));
const readyFile = join(dir, 'ready.json');

beforeAll(async () => {
  // Short visibility timeout: a failed digest is retried (and reaches the DLQ) within the test's wait.
  stack = await startTestStack({ secretsManagerPort: 0, visibilityTimeoutSeconds: 2, maxReceiveCount: 2 });
  cloudFormation = await LocalCloudFormationServer.start();
  writeFileSync(readyFile, JSON.stringify(stack.readyInfo()));
});

afterAll(async () => {
  await Promise.all([stack.close(), cloudFormation.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** A "deployed" stack whose outputs name the local stack's resources; `signingSecretArn` may point elsewhere. */
function putStack(name: string, signingSecretArn?: string): string[] {
  const secrets = stack.secretsManager;
  if (secrets === undefined) throw new Error('the test stack runs without its Secrets Manager');
  cloudFormation.putStack({
    name,
    status: 'UPDATE_COMPLETE',
    outputs: {
      [STACK_OUTPUTS.webhookUrl]: stack.webhookUrl,
      [STACK_OUTPUTS.tableName]: stack.dynamo.tableName,
      [STACK_OUTPUTS.queueUrl]: stack.sqs.queueUrl,
      [STACK_OUTPUTS.dlqUrl]: stack.sqs.dlqUrl,
      [STACK_OUTPUTS.signingSecretsSecretArn]: signingSecretArn ?? secrets.signingSecretsSecretId,
      [STACK_OUTPUTS.readApiKeySecretArn]: secrets.readApiKeySecretId,
      [STACK_OUTPUTS.readApiBaseUrl]: stack.simulatorUrl,
      [STACK_OUTPUTS.slackDefaultChannel]: stack.slackChannel,
    },
  });
  return [
    '--stack',
    name,
    '--endpoint-cloudformation',
    cloudFormation.url,
    '--endpoint-dynamodb',
    stack.dynamo.endpoint,
    '--endpoint-sqs',
    stack.sqs.endpoint,
    '--endpoint-secretsmanager',
    secrets.server.url,
  ];
}

async function smoke(args: string[]): Promise<{ code: number; doc: SmokeDoc; text: string }> {
  const io = bufferIo({ pollIntervalMs: 100 });
  const code = await run(['smoke', ...args, '--json'], io);
  return { code, doc: JSON.parse(io.stdout.text()) as SmokeDoc, text: io.stderr.text() };
}

function statuses(doc: SmokeDoc): string[] {
  return doc.hops.map((h) => `${h.hop}:${h.status}`);
}

describe('bridge smoke', { timeout: 90_000 }, () => {
  it('passes every hop on the local stack, and the digest it reports is the one Slack got', async () => {
    const io = bufferIo({ pollIntervalMs: 100 });
    expect(await run(['smoke', '--local', readyFile], io)).toBe(0);
    const text = io.stdout.text();
    expect(text).toMatch(/^✓ accepted +HTTP 200 \{"ok":true,"result":"accepted"\}/m);
    expect(text).toMatch(/^✓ queued +delivery#[0-9a-f-]{36} completed at /m);
    expect(text).toMatch(/^✓ digested +digest#[0-9a-f-]{36} claimed \(attempt 1\)/m);
    const ts = new RegExp(`^✓ posted +${stack.slackChannel} ts (\\S+)$`, 'm').exec(text)?.[1];
    expect(text).toContain('all 4 hops passed');
    const eventId = /delivery ([0-9a-f-]{36})/.exec(text)?.[1];
    const posted = slackOf(stack)
      .messages()
      .find((m) => eventIdOf(m) === eventId && m.thread_ts === undefined);
    expect(posted?.ts).toBe(ts);
  });

  it('--stack reads the outputs, signs with the stack secret and picks a project the read API lists', async () => {
    const { code, doc, text } = await smoke(putStack('VisibilitySlackBridge-smoke'));
    expect(code).toBe(0);
    expect(doc.ok).toBe(true);
    expect(statuses(doc)).toEqual(['accepted:ok', 'queued:ok', 'digested:ok', 'posted:ok']);
    expect(simulatorOf(stack).projectIds()).toContain(doc.projectId);
    expect(text).toContain('using stack VisibilitySlackBridge-smoke (--stack)');
  });

  it('a signature the webhook refuses fails at accepted, with the fix, and checks nothing further', async () => {
    const wrong = stack.secretsManager!.server.createSecret('smoke/wrong-signing', JSON.stringify(['whsec_not_the_stacks']));
    const { code, doc } = await smoke([...putStack('VisibilitySlackBridge-wrong-secret', wrong), '--project', stack.projectIds[0]!]);
    expect(code).toBe(1);
    expect(doc.failedHop).toBe('accepted');
    expect(statuses(doc)).toEqual(['accepted:fail', 'queued:skip', 'digested:skip', 'posted:skip']);
    expect(doc.hops[0]!.detail).toContain('HTTP 401');
    expect(doc.hops[0]!.fix).toContain('npx bridge secrets signing list --stack VisibilitySlackBridge-wrong-secret');
  });

  it('a Slack outage fails at posted, with the last failure and the fix', async () => {
    slackOf(stack).injectFault({ kind: 'server_error', method: 'chat.postMessage' });
    try {
      const { code, doc } = await smoke(['--local', readyFile, '--timeout', '20s']);
      expect(code).toBe(1);
      expect(doc.failedHop).toBe('posted');
      expect(statuses(doc)).toEqual(['accepted:ok', 'queued:ok', 'digested:ok', 'posted:fail']);
      const posted = doc.hops[3]!;
      expect(posted.detail).toMatch(/^not posted \(attempt \d+\): Slack\w*Error/);
      expect(posted.fix).toMatch(/npx bridge (dlq peek|doctor)/);
    } finally {
      slackOf(stack).clearFaults();
    }
  });

  it('trigger and send --stack sign with the stack secret and pick one of its projects', async () => {
    const flags = putStack('VisibilitySlackBridge-send');
    for (const argv of [
      ['trigger', 'run.completed'],
      ['send', 'run.completed', '--duplicate'],
    ]) {
      const io = bufferIo();
      expect(await run([...argv, ...flags, '--json'], io), argv.join(' ')).toBe(0);
      const doc = JSON.parse(io.stdout.text()) as { event: { data: { project_id: string } } };
      expect(simulatorOf(stack).projectIds()).toContain(doc.event.data.project_id);
    }
  });

  it('usage: a bad --timeout is exit 2', async () => {
    const io = bufferIo();
    expect(await run(['smoke', '--local', readyFile, '--timeout', 'soon'], io)).toBe(2);
    expect(io.stderr.text()).toContain('--timeout must be a duration');
  });
});
