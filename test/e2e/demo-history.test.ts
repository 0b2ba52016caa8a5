// `npm start`'s demo (local/start.ts): the demo project is seeded with 8 weeks of history
// (local/demo-history.ts) before its run, so the demo run's first digest is a full one with the trend
// chart, a PNG, uploaded into its thread. Charts on, as `npm start` has them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main';
import { bufferIo } from '../../cli/io';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { ENV } from '../../shared/contracts';
import { DEMO_HISTORY, seedDemoHistory } from '../../local/demo-history';
import type { LocalStack } from '../../local/stack';
import { CHART_BLOCK_LIMITS } from '../../shared/slack-blocks/limits';
import { eventIdOf, simulatorOf, slackOf, startTestStack, threadsFor } from './helpers';

let stack: LocalStack;
const dir = mkdtempSync(join(tmpdir(), 'bridge-demo-'));
const readyFile = join(dir, 'ready.json');

/** A chart render on a loaded machine can take longer than the test stack's 10 s visibility timeout. */
const CHART_RUN_SECONDS = 120;

beforeAll(async () => {
  // The message stays hidden while its chart renders: reappearing, it would find the posting claim busy and
  // stay delayed for the claim's lease, past any wait for the stack to be idle.
  stack = await startTestStack({ env: { [ENV.chartsEnabled]: 'true' }, visibilityTimeoutSeconds: CHART_RUN_SECONDS });
  writeFileSync(readyFile, JSON.stringify(stack.readyInfo()));
});

afterAll(async () => {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

function snapshotOf(projectId: string) {
  return new DynamoDigestStore(stack.dynamo.client, { tableName: stack.dynamo.tableName, leaseMs: 1000, retentionSeconds: 60 }).getSnapshot(
    projectId,
  );
}

describe("npm start's demo history", () => {
  it(
    'gives the demo project 8 weeks of runs, so its first digest has the trend chart',
    { timeout: 3 * CHART_RUN_SECONDS * 1000 },
    async () => {
      const [projectId] = simulatorOf(stack).projectIds() as [string];
      expect(await seedDemoHistory(stack, projectId)).toEqual({ seeded: true, runs: DEMO_HISTORY.days });
      const seeded = await snapshotOf(projectId);
      expect(seeded?.trend).toHaveLength(DEMO_HISTORY.days);
      // A kept history (--data-dir) is never overwritten.
      expect(await seedDemoHistory(stack, projectId)).toEqual({ seeded: false, reason: 'the project already has a history' });

      const sent = simulatorOf(stack).triggerRun(projectId);
      await sent.delivered;
      await stack.waitForIdle({ timeoutMs: CHART_RUN_SECONDS * 1000 });

      const [thread] = threadsFor(stack, sent.event.id);
      expect(thread, 'the demo digest').toBeDefined();
      // Slack draws the trend in the main message: the latest runs (seeded and this one) up to its category limit; no PNG.
      const chart = (thread!.main.blocks ?? []).find((b) => (b as { type?: unknown }).type === 'data_visualization') as
        { title: string; chart: { axis_config: { categories: string[] } } } | undefined;
      expect(chart?.title).toMatch(/by engine/);
      expect(chart?.chart.axis_config.categories).toHaveLength(Math.min(DEMO_HISTORY.days + 1, CHART_BLOCK_LIMITS.categories));
      expect(thread!.replies.flatMap((m) => m.files ?? [])).toEqual([]);
      // The digest stored the run on top of the seeded history.
      expect((await snapshotOf(projectId))?.trend?.at(-1)?.atMs).toBe(Date.parse(sent.event.created_at));

      // `npx bridge trigger weekly`: the week's report, with the project's chart in its thread.
      const io = bufferIo();
      expect(await run(['trigger', 'weekly', '--channel', stack.slackChannel, '--local', readyFile], io)).toBe(0);
      await stack.waitForIdle({ timeoutMs: CHART_RUN_SECONDS * 1000 });
      const messages = slackOf(stack).messages(stack.slackChannel);
      const report = messages.find((m) => !m.thread_ts && (eventIdOf(m) ?? '').startsWith('weekly:'));
      expect(report, 'the weekly report').toBeDefined();
      const weeklyCharts = messages.filter((m) => m.thread_ts === report!.ts).flatMap((m) => m.files ?? []);
      expect(weeklyCharts).toEqual([expect.objectContaining({ mimetype: 'image/png', name: 'visibility-trend.png' })]);
    },
  );
});
