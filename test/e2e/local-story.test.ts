/**
 * What the local run tells its user when Slack keeps failing a digest: one line per attempt, the
 * last one saying the message moves to the DLQ (not "will be retried"), and its arrival in the DLQ
 * one line too — as `npx bridge tail` prints them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pc from 'picocolors';
import type { LocalStack } from '../../local/stack';
import { classify, formatEvent } from '../../cli/commands/tail';
import { simulatorOf, slackOf, startTestStack } from './helpers';

const MAX_RECEIVE_COUNT = 2;
let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack({
    maxReceiveCount: MAX_RECEIVE_COUNT,
    // As test/e2e/slack-outage.test.ts: each receive is one attempt that gives up on Slack within ~2 s.
    functionTimeoutMs: 5000,
    visibilityTimeoutSeconds: 4,
    env: { DIGEST_LEASE_SECONDS: '10' },
  });
});

afterAll(async () => {
  await stack?.close();
});

describe('the local story of a digest Slack refuses', () => {
  it('says which attempt failed, that the last one moves it to the DLQ, and when it arrives there', async () => {
    slackOf(stack).injectFault({ kind: 'server_error' });
    const sent = simulatorOf(stack).triggerRun(stack.projectIds[0]!);
    await sent.delivered;
    await stack.waitForIdle();
    slackOf(stack).clearFaults();

    // Other warnings may come too (the retry's look for an earlier attempt's posts fails the same way).
    const told = stack.observability
      .entries({ level: 'warn' })
      .filter((entry) => entry.fields['eventId'] === sent.event.id && /digest failed|DLQ/.test(entry.message));
    expect(told.map((entry) => entry.message)).toEqual([
      `digest failed; the message will be retried (attempt 1 of ${MAX_RECEIVE_COUNT})`,
      `digest failed on its last attempt (${MAX_RECEIVE_COUNT} of ${MAX_RECEIVE_COUNT}); moving to the DLQ`,
      'message moved to the DLQ',
    ]);
    expect(told.map((entry) => classify(entry))).toEqual(['failure', 'failure', 'dlq']);

    const arrival = formatEvent(told[2]!, pc.createColors(false));
    expect(arrival).not.toContain('\n');
    expect(arrival).toMatch(
      new RegExp(`^\\d\\d:\\d\\d:\\d\\d dlq +sqs +message moved to the DLQ +eventId=${sent.event.id} type=run.completed .*receiveCount=2`),
    );
    expect(arrival).toContain('next="npx bridge dlq peek"');
    expect((await stack.depths()).dlq.visible).toBe(1);
  });
});
