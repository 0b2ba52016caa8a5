// `bridge trigger weekly` against a running local stack, through the CLI's entry (`run`) as a user
// types it: the sweep goes through the digest queue to the digest function, which posts one weekly
// report in the home channel with a section for the project it digested; running it again in the
// same week posts nothing more.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main';
import { bufferIo } from '../../cli/io';
import type { LocalStack } from '../../local/stack';
import { eventIdOf, postBaselines, simulatorOf, slackOf, startTestStack } from './helpers';

let stack: LocalStack;
const dir = mkdtempSync(join(tmpdir(), 'bridge-weekly-'));
const readyFile = join(dir, 'ready.json');

beforeAll(async () => {
  stack = await startTestStack();
  writeFileSync(readyFile, JSON.stringify(stack.readyInfo()));
});

afterAll(async () => {
  await stack.close();
  rmSync(dir, { recursive: true, force: true });
});

function weeklyReports() {
  return slackOf(stack)
    .messages(stack.slackChannel)
    .filter((m) => !m.thread_ts && (eventIdOf(m) ?? '').startsWith('weekly:'));
}

async function triggerWeekly(): Promise<{ code: number; out: string }> {
  const io = bufferIo();
  const code = await run(['trigger', 'weekly', '--channel', stack.slackChannel, '--local', readyFile], io);
  await stack.waitForIdle();
  return { code, out: io.stdout.text() + io.stderr.text() };
}

describe('bridge trigger weekly', () => {
  it('posts one weekly report in the channel now, and no second one that week', async () => {
    const [projectId] = simulatorOf(stack).projectIds() as [string];
    await postBaselines(stack, [projectId]);

    const first = await triggerWeekly();
    expect(first.code, first.out).toBe(0);
    expect(first.out).toContain('queued a weekly report run');
    const reports = weeklyReports();
    expect(reports).toHaveLength(1);
    const text = JSON.stringify(reports[0]?.blocks);
    expect(text).toContain('Weekly visibility report');
    expect(text).toMatch(/projects? (worse|better|mixed|steady|new|without)/);
    const details = slackOf(stack)
      .messages(stack.slackChannel)
      .filter((m) => m.thread_ts === reports[0]?.ts && !(m.files?.length ?? 0));
    expect(JSON.stringify(details.map((m) => m.blocks))).toMatch(/runs? this week/);

    expect((await triggerWeekly()).code).toBe(0);
    expect(weeklyReports()).toHaveLength(1);
  });
});
