/**
 * End to end over the local stack: the simulator's real signed webhooks → the local HTTP API →
 * the real ingest handler → DynamoDB + SQS → the local event source → the real digest handler →
 * the local Slack server. One digest per run, whatever the sender repeats.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CreateQueueCommand, DeleteQueueCommand } from '@aws-sdk/client-sqs';
import type { LocalStack } from '../../local/stack';
import { eventIdOf, postBaselines, simulatorOf, slackOf, startTestStack, threadsFor, topLevelMessages } from './helpers';

let stack: LocalStack;
/** When set, the next webhook attempt finds the digest queue deleted (SQS "down") for its duration. */
let breakQueueForNextAttempt = false;

/**
 * Wraps the simulator's webhook requests: the marked attempt is sent while the digest queue does not
 * exist, so the real ingest handler's SendMessage fails and it answers 503; the queue comes back
 * right after, before the sender's retry.
 */
const webhookFetch: typeof fetch = async (input, init) => {
  if (!breakQueueForNextAttempt) return fetch(input, init);
  breakQueueForNextAttempt = false;
  await stack.sqs.client.send(new DeleteQueueCommand({ QueueUrl: stack.sqs.queueUrl }));
  try {
    return await fetch(input, init);
  } finally {
    await stack.sqs.client.send(
      new CreateQueueCommand({ QueueName: stack.sqs.queueUrl.split('/').pop(), Attributes: stack.sqs.queueAttributes }),
    );
  }
};

beforeAll(async () => {
  stack = await startTestStack({ webhookFetch });
});

afterAll(async () => {
  await stack.close();
});

beforeEach(async () => {
  breakQueueForNextAttempt = false; // a test that failed before its fault fired must not pass it on
  await stack.waitForIdle();
  slackOf(stack).reset();
});

function attemptsFor(eventId: string) {
  return simulatorOf(stack)
    .deliveryAttempts(stack.webhookId ?? '')
    .filter((a) => a.eventId === eventId);
}

describe('run.completed through the whole bridge', () => {
  it('posts exactly one digest: one top-level message with its thread', async () => {
    const [project] = stack.projectIds;
    await postBaselines(stack, [project!]);
    const sent = simulatorOf(stack).triggerRun(project!);
    const report = await sent.delivered;
    expect(report.results.map((r) => r.outcome)).toEqual(['delivered']);
    await stack.waitForIdle();

    const threads = threadsFor(stack, sent.event.id);
    expect(threads).toHaveLength(1);
    expect(threads[0]!.main.channel).toBe(stack.slackChannel.replace(/^#/, ''));
    expect(threads[0]!.replies.length).toBeGreaterThan(0);
    expect(topLevelMessages(stack)).toHaveLength(1);
    expect(attemptsFor(sent.event.id).map((a) => a.status)).toEqual([200]);
    expect(await stack.depths()).toEqual({ queue: { visible: 0, inFlight: 0, delayed: 0 }, dlq: { visible: 0, inFlight: 0, delayed: 0 } });
  });

  it('posts one digest when the sender delivers the same event 3 extra times', async () => {
    const project = stack.projectIds[1]!;
    const sent = simulatorOf(stack).triggerRun(project, { duplicates: 3 });
    const report = await sent.delivered;
    expect(report.results).toHaveLength(4);
    expect(report.results.every((r) => r.outcome === 'delivered')).toBe(true);
    await stack.waitForIdle();

    expect(threadsFor(stack, sent.event.id)).toHaveLength(1);
    expect(topLevelMessages(stack)).toHaveLength(1);
    expect(attemptsFor(sent.event.id).filter((a) => a.status === 200)).toHaveLength(4);
  });

  it('posts one digest when duplicates arrive at the same time', async () => {
    const project = stack.projectIds[2]!;
    const before = stack.observability.countOf('ingest:DeliveryAccepted');
    const sent = simulatorOf(stack).triggerRun(project, { duplicates: 3, concurrentDuplicates: true });
    const report = await sent.delivered;
    // A copy that finds another still being enqueued gets 503 and is retried by the sender; all end delivered.
    expect(report.results).toHaveLength(4);
    expect(report.results.every((r) => r.outcome === 'delivered')).toBe(true);
    await stack.waitForIdle();

    expect(threadsFor(stack, sent.event.id)).toHaveLength(1);
    expect(topLevelMessages(stack)).toHaveLength(1);
    expect(stack.observability.countOf('ingest:DeliveryAccepted') - before).toBe(1);
  });

  it('posts one digest when the first delivery fails with a 5xx and the sender retries', async () => {
    const project = stack.projectIds[3]!;
    breakQueueForNextAttempt = true;
    const sent = simulatorOf(stack).triggerRun(project);
    const report = await sent.delivered;
    expect(report.results.map((r) => r.outcome)).toEqual(['delivered']);
    await stack.waitForIdle();

    const attempts = attemptsFor(sent.event.id);
    expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
      [1, 503, 'retry'],
      [2, 200, 'success'],
    ]);
    expect(threadsFor(stack, sent.event.id)).toHaveLength(1);
    expect(topLevelMessages(stack)).toHaveLength(1);
  });
});

describe('draft.ready through the whole bridge', () => {
  it("posts one notice into the thread of the project's latest digest, even for a duplicated delivery", async () => {
    const project = stack.projectIds[1]!;
    const run = simulatorOf(stack).triggerRun(project);
    await run.delivered;
    await stack.waitForIdle();
    const [digest] = threadsFor(stack, run.event.id);
    const sent = simulatorOf(stack).sendDraftReady(project, undefined, 2, { duplicates: 1 });
    const report = await sent.delivered;
    expect(report.results.every((r) => r.outcome === 'delivered')).toBe(true);
    await stack.waitForIdle();

    const notices = slackOf(stack)
      .messages()
      .filter((m) => eventIdOf(m) === sent.event.id);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.thread_ts).toBe(digest!.main.ts);
  });
});
