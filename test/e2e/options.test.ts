/**
 * The local stack's options end to end: a fixture, a read API that is not the stack's own simulator,
 * the Slack log file, and a DynamoDB data directory that outlives the stack.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStackError, type LocalStack } from '../../local/stack';
import { VisibilitySimulator } from '../../local/simulator/server';
import type { SimulatorFixture } from '../../local/simulator/fixture';
import { deliver, nowSeconds, runCompletedBody, simulatorOf, slackOf, startTestStack, threadsFor } from './helpers';

const PROJECT_ID = '0d6f3d2e-4a8b-4c1e-9f7a-2b5c8e1d3f60';
const FIXTURE: SimulatorFixture = {
  projects: [
    {
      id: PROJECT_ID,
      name: 'Fixture Coffee Roasters',
      industry: 'Coffee',
      visibility: { metrics: [{ label: 'Visibility score', value: 41.5, caption: 'Share of AI answers that mention the brand' }] },
      gaps: [
        {
          prompt_id: 'prompt-1',
          prompt_ref: 7,
          prompt_text: 'Which coffee roaster ships fastest?',
          platforms_losing: ['ChatGPT'],
          top_competitor: 'Bean There',
        },
      ],
      probes: [{ id: 'probe-1', prompt_id: 'prompt-1', reasoning_card_id: 'card-1' }],
      reasoning: { 'card-1': { reasons: [{ impact: 'high', category: 'reviews', detail: 'Bean There has more recent reviews.' }] } },
    },
  ],
};

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-e2e-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('fixture and Slack log', () => {
  let stack: LocalStack;
  let slackLog: string;
  beforeAll(async () => {
    slackLog = join(dir, 'slack.jsonl');
    stack = await startTestStack({ fixture: FIXTURE, slackLogFile: slackLog });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('serves the fixture and logs one JSON line per Slack call', async () => {
    expect(stack.projectIds).toEqual([PROJECT_ID]);
    const sent = simulatorOf(stack).triggerRun(PROJECT_ID);
    await sent.delivered;
    await stack.waitForIdle();

    const [thread] = threadsFor(stack, sent.event.id);
    expect(JSON.stringify(thread?.main.blocks)).toContain('Fixture Coffee Roasters');
    const lines = readFileSync(slackLog, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { method: string; channel: string; text: string; blocks: unknown[]; thread_ts?: string });
    expect(lines).toHaveLength(1 + (thread?.replies.length ?? 0));
    const channel = stack.slackChannel.replace(/^#/, '');
    for (const line of lines) {
      expect(line).toMatchObject({
        method: 'chat.postMessage',
        text: expect.any(String) as string,
        blocks: expect.any(Array) as unknown[],
      });
      expect(line.channel.replace(/^#/, '')).toBe(channel);
    }
    expect(lines.filter((l) => l.thread_ts === undefined)).toHaveLength(1);
  });

  it('describes itself for the ready file', () => {
    const info = stack.readyInfo();
    expect(info).toMatchObject({
      webhookUrl: stack.webhookUrl,
      secrets: stack.secrets,
      simulatorUrl: simulatorOf(stack).url,
      apiKey: simulatorOf(stack).apiKey,
      projectIds: [PROJECT_ID],
      sqsEndpoint: stack.sqs.endpoint,
      queueUrl: stack.sqs.queueUrl,
      dlqUrl: stack.sqs.dlqUrl,
      dynamoEndpoint: stack.dynamo.endpoint,
      tableName: stack.dynamo.tableName,
      slackApiUrl: slackOf(stack).apiUrl,
    });
  });
});

describe('a read API that is not the stack’s own simulator', () => {
  let service: VisibilitySimulator;
  let stack: LocalStack;
  beforeAll(async () => {
    service = await VisibilitySimulator.start({ apiKey: 'svc_key', fixture: FIXTURE });
    stack = await startTestStack({ realReadApi: { baseUrl: service.url, apiKey: 'svc_key' }, secrets: ['whsec_svc'] });
  });
  afterAll(async () => {
    await stack.close();
    await service.close();
  });

  it('starts no simulator, lists the service’s projects and digests from it', async () => {
    expect(stack.simulator).toBeUndefined();
    expect(stack.simulatorUrl).toBe(service.url);
    expect(stack.projectIds).toEqual([PROJECT_ID]);

    const event = runCompletedBody(PROJECT_ID);
    expect((await deliver(stack, event, { secret: 'whsec_svc', t: nowSeconds() })).status).toBe(200);
    await stack.waitForIdle();
    expect(threadsFor(stack, event.id)).toHaveLength(1);
    expect(service.requests().some((r) => r.route === 'gaps' && r.status === 200)).toBe(true);
  });
});

describe('a DynamoDB data directory', () => {
  it('keeps de-duplication across restarts, and is used by one stack at a time', async () => {
    const dataDir = join(dir, 'dynamo');
    const event = runCompletedBody('any-project');
    const signing = { secret: 'whsec_persist', t: nowSeconds() };

    const first = await startTestStack({ dataDir, secrets: ['whsec_persist'] });
    try {
      expect(await deliver(first, event, signing)).toEqual({ status: 200, body: { ok: true, result: 'accepted' } });
      await expect(startTestStack({ dataDir })).rejects.toThrow(LocalStackError);
    } finally {
      await first.close();
    }

    const second = await startTestStack({ dataDir, secrets: ['whsec_persist'] });
    try {
      expect(await deliver(second, event, signing)).toEqual({ status: 200, body: { ok: true, result: 'duplicate' } });
    } finally {
      await second.close();
    }
  });
});

describe('bad input', () => {
  it('names an unreadable fixture in one line', async () => {
    const missing = join(dir, 'missing.json');
    await expect(startTestStack({ fixture: missing })).rejects.toThrow(
      new LocalStackError(`cannot use fixture ${missing}: cannot be read (ENOENT: no such file or directory, open '${missing}')`),
    );
  });

  it('names a port in use', async () => {
    const stack = await startTestStack();
    try {
      const port = Number(new URL(stack.webhookUrl).port);
      await expect(startTestStack({ port })).rejects.toThrow(/port \d+ is already in use/);
    } finally {
      await stack.close();
    }
  });
});
