/**
 * Slack failing end to end: the digest function retries, gives the message back, and after
 * maxReceiveCount receives SQS moves it to the DLQ. Once Slack recovers, replaying the DLQ (an SQS
 * message move task back to the source queue, as `bridge dlq replay` does) posts each digest once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ListMessageMoveTasksCommand, PurgeQueueCommand, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import type { LocalStack } from '../../local/stack';
import type { FaultKind } from '../../local/slack/server';
import { postBaselines, simulatorOf, slackOf, startTestStack, threadsFor, topLevelMessages, waitUntil } from './helpers';

const MAX_RECEIVE_COUNT = 2;
let stack: LocalStack;
/** When set, Slack starts failing every call right after accepting the next message. */
let failAfterNextPost = false;

beforeAll(async () => {
  stack = await startTestStack({
    maxReceiveCount: MAX_RECEIVE_COUNT,
    // The function keeps 3 s of a 15 s timeout back for its answer, so an attempt has ~12 s to reach
    // Slack: enough with two suites at once on 2 cores (~2 s was not: attempts ran out before calling
    // Slack). The digest lease must outlast the function timeout.
    functionTimeoutMs: 15_000,
    env: { DIGEST_LEASE_SECONDS: '16' },
    // One invocation at a time: a message that reappears while its attempt still runs waits for it, so
    // each receive is exactly one attempt however slow the machine, and a failed attempt's message is
    // received again after a short visibility timeout instead of one longer than the function's.
    concurrency: 1,
    visibilityTimeoutSeconds: 1,
    onSlackMessage: () => {
      if (!failAfterNextPost) return;
      failAfterNextPost = false;
      slackOf(stack).injectFault({ kind: 'ratelimited', retryAfterSeconds: 1 });
    },
  });
});

afterAll(async () => {
  await stack.close();
});

beforeEach(async () => {
  failAfterNextPost = false; // a test that failed before its fault fired must not pass it on
  slackOf(stack).clearFaults();
  await stack.waitForIdle();
  slackOf(stack).reset();
  // A replay moves the whole DLQ: each test starts with it empty, whatever ran before.
  await stack.sqs.client.send(new PurgeQueueCommand({ QueueUrl: stack.sqs.dlqUrl }));
});

async function runsInto(kind: FaultKind, projectIds: string[]): Promise<string[]> {
  slackOf(stack).injectFault({ kind, ...(kind === 'ratelimited' ? { retryAfterSeconds: 1 } : {}) });
  const failedBefore = stack.observability.countOf('digest:DigestFailed');
  const dlqBefore = (await stack.depths()).dlq.visible;
  const events = projectIds.map((projectId) => simulatorOf(stack).triggerRun(projectId));
  for (const sent of events) expect((await sent.delivered).results.map((r) => r.outcome)).toEqual(['delivered']);
  // Redrive happens on the receive after the last allowed one.
  await stack.waitForIdle();
  const depths = await stack.depths();
  expect(depths.queue).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  expect(depths.dlq.visible - dlqBefore).toBe(projectIds.length);
  // Every receive was one digest attempt that failed (on a loaded machine an attempt may run out of
  // time before it reaches Slack, so Slack itself is only sure to be tried once per message).
  expect(stack.observability.countOf('digest:DigestFailed') - failedBefore).toBe(projectIds.length * MAX_RECEIVE_COUNT);
  expect(slackOf(stack).calls('chat.postMessage').length).toBeGreaterThanOrEqual(projectIds.length);
  expect(slackOf(stack).messages()).toHaveLength(0);
  return events.map((sent) => sent.event.id);
}

async function replayDlq(): Promise<void> {
  const task = await stack.sqs.client.send(
    new StartMessageMoveTaskCommand({ SourceArn: stack.sqs.dlqArn, DestinationArn: stack.sqs.queueArn }),
  );
  expect(task.TaskHandle).toBeTruthy();
  await waitUntil('the DLQ move task to complete', async () => {
    const tasks = await stack.sqs.client.send(new ListMessageMoveTasksCommand({ SourceArn: stack.sqs.dlqArn }));
    return tasks.Results?.[0]?.Status === 'COMPLETED';
  });
  await stack.waitForIdle();
}

describe('Slack outage', () => {
  it('retries on Slack 5xx, then leaves the message in the DLQ after maxReceiveCount', async () => {
    expect(await runsInto('server_error', [stack.projectIds[0]!, stack.projectIds[1]!])).toHaveLength(2);
  });

  it('retries on Slack rate limiting, then leaves the message in the DLQ after maxReceiveCount', async () => {
    expect(await runsInto('ratelimited', [stack.projectIds[2]!])).toHaveLength(1);
  });

  it('posts each digest exactly once when the DLQ is replayed after Slack recovers', async () => {
    await postBaselines(stack, [stack.projectIds[0]!, stack.projectIds[2]!]);
    const failedEvents = await runsInto('server_error', [stack.projectIds[0]!]);
    slackOf(stack).clearFaults();
    failedEvents.push(...(await runsInto('ratelimited', [stack.projectIds[2]!])));
    slackOf(stack).reset(); // Slack recovers
    await replayDlq();

    const depths = await stack.depths();
    expect(depths.dlq).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(depths.queue).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    for (const eventId of failedEvents) {
      const threads = threadsFor(stack, eventId);
      expect(threads).toHaveLength(1);
      expect(threads[0]!.replies.length).toBeGreaterThan(0);
    }
    expect(topLevelMessages(stack)).toHaveLength(failedEvents.length);
  });

  it('continues a digest cut off mid-thread where it stopped: one top-level message, each reply once', async () => {
    await postBaselines(stack, [stack.projectIds[3]!]);
    // Slack accepts the top-level message and then rate-limits every call: the thread never gets posted.
    failAfterNextPost = true;
    const dlqBefore = (await stack.depths()).dlq.visible;
    const sent = simulatorOf(stack).triggerRun(stack.projectIds[3]!);
    await sent.delivered;
    await stack.waitForIdle();
    expect((await stack.depths()).dlq.visible - dlqBefore).toBe(1);
    expect(threadsFor(stack, sent.event.id)).toEqual([expect.objectContaining({ replies: [] })]);

    slackOf(stack).clearFaults();
    await replayDlq();

    const threads = threadsFor(stack, sent.event.id);
    expect(threads).toHaveLength(1);
    const replies = threads[0]!.replies.map((r) => r.text);
    expect(replies.length).toBeGreaterThan(0);
    expect(new Set(replies).size).toBe(replies.length);
    const topLevelPosts = slackOf(stack)
      .calls('chat.postMessage')
      .filter((c) => c.ok && c.thread_ts === undefined);
    expect(topLevelPosts).toHaveLength(1);
  });
});
