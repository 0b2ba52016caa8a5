/**
 * `npm start -- --refuse-native-blocks`: the local Slack answers invalid_blocks to every chart and table
 * block, as a workspace Slack's rollout has not reached. Through the whole local stack, each run still
 * posts exactly one digest, its main message without the native chart, its words in the chart's place.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack';
import { seedDemoHistory } from '../../local/demo-history';
import { simulatorOf, startTestStack, threadsFor, topLevelMessages } from './helpers';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack({ refuseNativeBlocks: true });
});

afterAll(async () => {
  await stack.close();
});

const blockTypes = (blocks: unknown): string[] => (Array.isArray(blocks) ? blocks.map((b) => String((b as { type?: unknown }).type)) : []);

describe('a workspace without native charts and tables', () => {
  it('still gets one digest per run, its chart replaced by words', async () => {
    const [project] = stack.projectIds;
    // Earlier days' runs (as `npm start`'s demo has them): the digest then has a trend to chart.
    expect(await seedDemoHistory(stack, project!)).toMatchObject({ seeded: true });
    const sent = simulatorOf(stack).triggerRun(project!);
    await sent.delivered;
    await stack.waitForIdle();

    const threads = threadsFor(stack, sent.event.id);
    expect(threads).toHaveLength(1);
    expect(topLevelMessages(stack)).toHaveLength(1);
    const everyBlock = [threads[0]!.main, ...threads[0]!.replies].flatMap((m) => blockTypes(m.blocks));
    expect(everyBlock).not.toContain('data_visualization');
    expect(everyBlock).not.toContain('data_table');
    // The fallback: the chart in words ("<metric> by engine, <first> – <last> (UTC): <engine> a → b …").
    expect(JSON.stringify(threads[0]!.main.blocks)).toMatch(/by engine, .* \(UTC\): .* → /);
  });
});
