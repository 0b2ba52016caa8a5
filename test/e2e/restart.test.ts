// `npm start`'s state across restarts (local/stack/state.ts): a stack with a data directory keeps the
// table, the queues (the DLQ too), the secrets as last changed, its own keys, the local Slack's messages
// and whether the demo run was sent; `fresh` forgets all of it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { ENV } from '../../shared/contracts';
import { sendDemoRun } from '../../local/demo-history';
import { createSecretsManagerClient } from '../../local/secrets-manager-server';
import type { LocalStack } from '../../local/stack';
import { slackOf, startTestStack, threadsFor } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'bridge-restart-'));
const dataDir = join(dir, 'state');
const DEAD = JSON.stringify({ kind: 'dead letter kept across a restart' });

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function start(fresh = false): Promise<LocalStack> {
  return startTestStack({ dataDir, fresh, secretsManagerPort: 0 });
}

function snapshotOf(stack: LocalStack, projectId: string) {
  const store = new DynamoDigestStore(stack.dynamo.client, { tableName: stack.dynamo.tableName, leaseMs: 1000, retentionSeconds: 60 });
  return store.getSnapshot(projectId);
}

describe('a data directory across restarts', { timeout: 240_000 }, () => {
  let signing: string[] = [];
  let actionSigningKey = '';
  let demoEventId = '';
  let projectId = '';

  it('first start: sends the demo run, takes a DLQ message and a changed signing secret', async () => {
    const stack = await start();
    try {
      expect(stack.secretsFrom).toBe('generated');
      const demo = await sendDemoRun(stack);
      if (!demo.sent) throw new Error(`the demo run was not sent: ${demo.reason}`);
      await demo.run.delivered;
      await stack.waitForIdle({ timeoutMs: 120_000 });
      demoEventId = demo.run.event.id;
      projectId = demo.run.run.projectId;
      expect(threadsFor(stack, demoEventId)).toHaveLength(1);

      await stack.sqs.client.send(new SendMessageCommand({ QueueUrl: stack.sqs.dlqUrl, MessageBody: DEAD }));
      signing = ['whsec_rotated_in', ...stack.secrets];
      const secrets = createSecretsManagerClient(stack.secretsManager!.server.url);
      await secrets.send(
        new PutSecretValueCommand({ SecretId: stack.secretsManager!.signingSecretsSecretId, SecretString: JSON.stringify(signing) }),
      );
      secrets.destroy();
      actionSigningKey = stack.env[ENV.actionSigningKey] ?? '';
    } finally {
      await stack.close();
    }
  });

  it('a restart keeps the table, the DLQ, the secrets, the keys and the Slack messages, and sends no second demo', async () => {
    const stack = await start();
    try {
      expect(stack.secretsFrom).toBe('kept');
      expect(stack.secrets).toEqual(signing);
      expect(stack.env[ENV.actionSigningKey]).toBe(actionSigningKey);
      expect(await snapshotOf(stack, projectId)).not.toBeNull();
      expect((await stack.depths()).dlq.visible).toBe(1);
      expect(threadsFor(stack, demoEventId)).toHaveLength(1);
      expect(await sendDemoRun(stack)).toEqual({ sent: false, reason: 'sent_before' });
    } finally {
      await stack.close();
    }
  });

  it('fresh starts clean', async () => {
    const stack = await start(true);
    try {
      expect(stack.secretsFrom).toBe('generated');
      expect(stack.secrets).not.toEqual(signing);
      expect(await snapshotOf(stack, projectId)).toBeNull();
      expect((await stack.depths()).dlq.visible).toBe(0);
      expect(slackOf(stack).messages()).toEqual([]);
    } finally {
      await stack.close();
    }
  });
});
