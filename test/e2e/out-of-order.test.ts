/**
 * Out-of-order runs end to end: the simulator delivers the newer of two runs of a project first and
 * the older only once the newer was accepted. The older must be superseded: one digest, the newer's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack';
import { simulatorOf, slackOf, startTestStack, threadsFor, topLevelMessages } from './helpers';

async function outOfOrderRound(stack: LocalStack, projectId: string) {
  slackOf(stack).reset();
  const { older, newer, delivered } = simulatorOf(stack).triggerRunsOutOfOrder(projectId);
  const reports = await delivered;
  expect(reports.newer.results.map((r) => r.outcome)).toEqual(['delivered']);
  expect(reports.older.results.map((r) => r.outcome)).toEqual(['delivered']);
  await stack.waitForIdle();
  return { older: older.event.id, newer: newer.event.id };
}

describe('one digest invocation at a time', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startTestStack({ concurrency: 1 });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('supersedes the older run: one digest, for the newer', async () => {
    for (const projectId of stack.projectIds.slice(0, 2)) {
      const { older, newer } = await outOfOrderRound(stack, projectId);
      expect(threadsFor(stack, newer)).toHaveLength(1);
      expect(threadsFor(stack, older)).toHaveLength(0);
      expect(topLevelMessages(stack)).toHaveLength(1);
    }
    expect(stack.observability.countOf('digest:EventSuperseded')).toBe(2);
    expect(stack.observability.countOf('digest:DigestPosted')).toBe(2);
  });
});

describe('two digest invocations side by side (the deployed maximum concurrency)', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startTestStack({ concurrency: 2 });
    // Slack answers slowly, so the newer digest is still being posted when the older run arrives.
    slackOf(stack).setLatencyMs(150);
  });
  afterAll(async () => {
    await stack.close();
  });

  // The newest-run mark is taken before any read or post, so an older run picked up by a second
  // invocation while the newer digest is still posting is superseded, not posted.
  it('supersedes the older run: one digest, for the newer', async () => {
    const { older, newer } = await outOfOrderRound(stack, stack.projectIds[0]!);
    expect(threadsFor(stack, newer)).toHaveLength(1);
    expect(threadsFor(stack, older)).toHaveLength(0);
    expect(topLevelMessages(stack)).toHaveLength(1);
  });
});
