/**
 * The gallery fixtures (local/simulator/fixtures/*.json, for `npm start -- --fixture FILE`): each is a
 * valid simulator fixture, and each project's scripted runs, read from the simulator through the real
 * read-API client and rendered with the snapshot of the run before, give the digest the issue asks for.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadApiClient } from '../../shared/adapters/read-api';
import { findReasoningCard } from '../../shared/digest/reasoning-card';
import { buildModel, renderDigest, verdictOutcome, type DigestInput, type RenderedDigest } from '../../shared/digest/render';
import { buildSnapshot, type ProjectSnapshot } from '../../shared/digest/snapshot';
import { statusReply } from '../../shared/slack-app/status';
import { findBlockKitViolations } from '../../shared/slack-text';
import { renderConversation } from '../../local/slack/server';
import { loadFixtureFile } from '../../local/simulator/fixture';
import { VisibilitySimulator } from '../../local/simulator/server';

const FIXTURES = join(__dirname, '../../local/simulator/fixtures');
const GALLERY = join(FIXTURES, 'gallery.json');
const PAGE_SIZE = 50;
const TEMPLATE = 'https://app.example.com/p/{project_id}/runs/{run_id}?prompt={prompt_id}';
/** Runs a week apart (fixed clock), so the second digest has a "vs last week". */
const RUN_TIMES = ['2026-11-01T09:00:00Z', '2026-11-08T09:00:00Z', '2026-11-15T09:00:00Z'];

describe('every fixture file', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
  it('there is at least the gallery', () => expect(files).toContain('gallery.json'));
  it.each(files)('%s is a valid simulator fixture', (file) => {
    expect(() => loadFixtureFile(join(FIXTURES, file))).not.toThrow();
  });
});

let simulator: VisibilitySimulator;

beforeAll(async () => {
  simulator = await VisibilitySimulator.start({ fixture: loadFixtureFile(GALLERY) });
});
afterAll(async () => {
  await simulator.close();
});

/** A simulator of its own, every project at its first run, for a test that must not share the others' runs. */
async function withFreshSimulator<T>(work: (sim: VisibilitySimulator) => Promise<T>): Promise<T> {
  const sim = await VisibilitySimulator.start({ fixture: loadFixtureFile(GALLERY) });
  try {
    return await work(sim);
  } finally {
    await sim.close();
  }
}

/** One digest of the project's next scripted run, as process.ts reads and renders it. */
async function digestOfNextRun(
  projectId: string,
  previous: ProjectSnapshot | null,
  options: DigestInput['options'] = {},
  times: readonly string[] = RUN_TIMES,
  pageSize: number = PAGE_SIZE,
  sim: VisibilitySimulator = simulator,
) {
  const info = sim.advanceRun(projectId);
  const createdAt = times[info.run - 1] ?? times[0]!;
  const reader = new ReadApiClient({ baseUrl: sim.url, apiKey: sim.apiKey, gapsPageSize: pageSize });
  const [projects, overview, { gaps, skipped }] = await Promise.all([
    reader.listProjects(),
    reader.getVisibility(projectId),
    reader.getGapsWithSkipped(projectId),
  ]);
  const project = projects.find((p) => p.id === projectId) ?? { id: projectId, name: projectId, industry: null };
  const reasoning = new Map(
    await Promise.all(gaps.slice(0, 3).map(async (g) => [g.prompt_id, await findReasoningCard(reader, projectId, g)] as const)),
  );
  const input: DigestInput = {
    project,
    run: { eventId: `ev-${info.run}`, runId: info.runId, answers: info.answers, createdAt, status: 'completed' },
    overview,
    gaps,
    pageSize,
    unreadableGaps: skipped,
    previous,
    reasoning,
    options: { dashboardUrlTemplate: TEMPLATE, ...options },
  };
  const snapshotRun = { projectId, runId: info.runId, createdAt, pageSize, rawGapCount: gaps.length + skipped, answers: info.answers };
  return {
    input,
    rendered: renderDigest(input),
    snapshot: buildSnapshot(snapshotRun, overview, gaps, previous, verdictOutcome(buildModel(input))),
  };
}

/** The first two scripted runs: the baseline digest, then the digest the gallery is about. */
async function secondDigest(projectId: string, options: DigestInput['options'] = {}): Promise<RenderedDigest> {
  const first = await digestOfNextRun(projectId, null, options);
  expectWithinBounds(first.rendered);
  expectShort(first.rendered);
  const second = await digestOfNextRun(projectId, first.snapshot, options);
  expectWithinBounds(second.rendered);
  expectShort(second.rendered);
  return second.rendered;
}

/** The main message's lines as the local Slack shows them, and its blocks. */
function measure(rendered: RenderedDigest): { lines: number; blocks: number; replies: number; threadChars: number } {
  return {
    lines: mainText(rendered).split('\n').length,
    blocks: rendered.main.blocks.length,
    replies: rendered.thread.length,
    threadChars: rendered.thread.reduce((n, m) => n + JSON.stringify(m.blocks).length, 0),
  };
}

/** Short by construction: a phone screen for the main message, at most three replies. */
function expectShort(rendered: RenderedDigest): void {
  const size = measure(rendered);
  expect(size.lines).toBeLessThanOrEqual(12);
  expect(size.blocks).toBeLessThanOrEqual(8);
  expect(size.replies).toBeLessThanOrEqual(3);
}

function expectWithinBounds(rendered: RenderedDigest): void {
  for (const message of [rendered.main, ...rendered.thread]) expect(findBlockKitViolations(message)).toEqual([]);
}

/** The conversation as the local Slack server prints it (main message, then its replies). */
function asText(rendered: RenderedDigest): string {
  const main = { ts: '1', text: rendered.main.text, blocks: rendered.main.blocks };
  return renderConversation([
    main,
    ...rendered.thread.map((m, i) => ({ ts: `1.${i + 1}`, thread_ts: '1', text: m.text, blocks: m.blocks })),
  ]);
}

function mainText(rendered: RenderedDigest): string {
  return asText({ ...rendered, thread: [] });
}

describe('gallery.json through the simulator, the read-API client and the renderer', () => {
  it('big drop: 🔴, the headline names the causes; changes in units with their reasons; the rest in three replies', async () => {
    const rendered = await secondDigest('gallery-big-drop');
    expect(rendered.main.text).toMatch(/^🔴 Northwind Outdoor — Visibility score −10\.2 pts/);
    const main = mainText(rendered);
    expect(main).toContain('43.5 % (−10.2 pts)');
    expect(main).toContain('lower on all 5 engines');
    expect(main).not.toMatch(/[▲▼]/);
    // A figure is a change or normal variation, never both.
    for (const engine of ['ChatGPT', 'Gemini']) expect(main.match(new RegExp(`${engine} −`, 'g')) ?? []).toHaveLength(0);
    expect(asText(rendered)).not.toContain('this card is on an engine where the gap is not lost');
    expect(asText(rendered)).not.toContain('No reasoning card');
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('improvement: falling position and resolved gaps read as good news; a small-sample share stays within noise', async () => {
    const rendered = await secondDigest('gallery-improvement');
    expect(rendered.main.text).toMatch(/^🟢 Ledgerly — /);
    expect(rendered.main.text).toContain('3 gaps resolved');
    expect(mainText(rendered)).toMatch(/Small moves within normal variation: .*Visibility score/);
    expect(asText(rendered)).toMatch(/Resolved/);
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('220 gaps read 50 at a time: the scale is stated, the ones pushed out "left the top" list, engines named once per group', async () => {
    const rendered = await secondDigest('gallery-220-gaps');
    const text = asText(rendered);
    expect(rendered.main.text).toMatch(/^⚪ Voltway — /);
    expect(mainText(rendered)).toContain('219 open gaps');
    // Gaps pushed out of the top 50 are not resolved: no gap news is called.
    expect(text).not.toMatch(/Resolved|resolved/);
    expect(text.match(/ChatGPT, Perplexity, Gemini, Claude, Copilot/g) ?? []).toHaveLength(0);
    expect(text).toMatchSnapshot();
  });

  it('many engines, metrics and alerts: none dropped from the thread, alerts most severe first, within three replies', async () => {
    const rendered = await secondDigest('gallery-overflow');
    const text = asText(rendered);
    for (const engine of ['ChatGPT', 'Andi', 'Naver Cue']) expect(text).toContain(engine);
    for (let i = 1; i <= 30; i += 1) expect(text).toContain(`Alert ${i} (`);
    expect(text.indexOf('Alert 25 (critical)')).toBeLessThan(text.indexOf('Alert 1 (info)'));
    expect(text.indexOf('Alert 12 (ERROR)')).toBeLessThan(text.indexOf('Alert 6 (warn)'));
    expect(text.match(/About these figures/g)).toHaveLength(1);
    expect(text).toMatchSnapshot();
  });

  it('hostile service text: no invisible or bidi characters, no stray formatting, no mentions', async () => {
    const rendered = await secondDigest('gallery-hostile-text');
    for (const message of [rendered.main, ...rendered.thread]) {
      const raw = JSON.stringify(message);
      expect(raw).not.toMatch(/[\u200b-\u200d\u202a-\u202e\u2066-\u2069]|\\u200[bcd]|\\u202[a-e]|\\u206[6-9]/);
      expect(raw).not.toContain('<!channel>');
      expect(raw).not.toContain('<!here>');
      expect(raw).not.toContain('<https://evil.example');
    }
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('a visually empty name falls back to the project id', async () => {
    const { rendered } = await digestOfNextRun('gallery-invisible-name', null);
    expect(rendered.main.text).toContain('gallery-invisible-name');
    expectWithinBounds(rendered);
  });

  it('an empty run says there were no answers, not "all clear", in one message, ⚠️', async () => {
    const rendered = await secondDigest('gallery-empty-run');
    expect(rendered.main.text).toMatch(/^⚠️ /);
    expect(asText(rendered)).toMatch(/no answers in this run/i);
    expect(asText(rendered)).not.toMatch(/all clear/i);
    expect(rendered.thread).toEqual([]);
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('a quiet run in "changes" mode is one compact line and no thread', async () => {
    const rendered = await secondDigest('gallery-quiet', { mode: 'changes' });
    expect(rendered.quiet).toBe(true);
    expect(rendered.thread).toEqual([]);
    expect(rendered.main.blocks).toHaveLength(1);
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('a baseline is ⚪ and states the position: open gaps on how many engines, visibility, the top rival — one message', async () => {
    const { rendered } = await withFreshSimulator((sim) => digestOfNextRun('gallery-220-gaps', null, {}, RUN_TIMES, PAGE_SIZE, sim));
    expectWithinBounds(rendered);
    expectShort(rendered);
    expect(rendered.main.text).toBe(
      '⚪ Voltway — baseline: 220 open gaps on all 5 engines · Visibility score 35.2 % · top rival AmpRoute (13 prompts of the top 50)',
    );
    expect(rendered.thread).toEqual([]);
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('a noisy small-sample run (3 answers): a −3.2 pt move is normal variation, never news, never the mark', async () => {
    const rendered = await secondDigest('gallery-noisy');
    expect(rendered.main.text).toBe('⚪ Pinecrest Coffee — no change beyond normal variation since the last run');
    expect(mainText(rendered)).toMatch(/Small moves within normal variation: .*Visibility score/);
    expect(asText(rendered)).toMatch(
      /Visibility score\* 50\.5 % \(−3\.2 pts since the last run, within normal variation ±\d+(\.\d)? pts\)/,
    );
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('a rival switch: who took which prompt from whom, engines newly lost, a second run down, rivals since last run and week', async () => {
    const times = ['2026-11-01T09:00:00Z', '2026-11-07T09:00:00Z', '2026-11-08T09:00:00Z'];
    const first = await digestOfNextRun('gallery-rival-switch', null, {}, times);
    const second = await digestOfNextRun('gallery-rival-switch', first.snapshot, {}, times);
    expect(second.rendered.main.text).toMatch(/^⚪ /);
    const third = await digestOfNextRun('gallery-rival-switch', second.snapshot, {}, times);
    const rendered = third.rendered;
    expectWithinBounds(rendered);
    expectShort(rendered);
    const text = asText(rendered);
    // −3 pts a run at 2,000 answers, two runs of history: not yet beyond chance nor persistent enough.
    expect(rendered.main.text).toMatch(/^⚪ Ridgeway Bikes — /);
    expect(text).toMatchSnapshot();
  });

  it('a 3-answer run with gap churn: ⚠️ "only 3 answers — usually 1,240", nothing judged, nothing learned', async () => {
    const first = await digestOfNextRun('gallery-thin-run', null);
    const second = await digestOfNextRun('gallery-thin-run', first.snapshot);
    const thin = await digestOfNextRun('gallery-thin-run', second.snapshot);
    expect(thin.rendered.main.text).toBe('⚠️ Harbor Kettle — only 3 answers — usually 1,240; not compared');
    expect(asText(thin.rendered)).not.toMatch(/took|worse|resolved/);
    expect(thin.rendered.thread).toEqual([]);
    expect(thin.snapshot.verdict).toEqual(second.snapshot.verdict);
    expect(thin.snapshot.gaps).toEqual(second.snapshot.gaps);
    expect(asText(thin.rendered)).toMatchSnapshot();
  });

  it('a 0-answer run after normal ones: ⚠️ "no answers in this run — usually 1,240", not ⚪', async () => {
    const first = await digestOfNextRun('gallery-zero-run', null);
    const second = await digestOfNextRun('gallery-zero-run', first.snapshot);
    const zero = await digestOfNextRun('gallery-zero-run', second.snapshot);
    expect(zero.rendered.main.text).toBe('⚠️ Fernhill Paper — no answers in this run — usually 1,240');
    expect(zero.rendered.thread).toEqual([]);
    expect(asText(zero.rendered)).toMatchSnapshot();
  });

  it('mixed news is 🟡 and names both sides', async () => {
    const rendered = await secondDigest('gallery-mixed');
    expect(rendered.main.text).toMatch(/^🟡 Saltmarsh Outfitters — /);
    expect(rendered.main.text).toContain('TrailForge took 3 prompts');
    expect(rendered.main.text).toContain('4 gaps resolved');
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('a slow drift (−1.5 pts a run) is called once it persists, "over N runs", and not before it is beyond chance', async () => {
    const times = Array.from({ length: 10 }, (_, i) => new Date(Date.UTC(2026, 10, 1 + i, 9)).toISOString());
    let previous: ProjectSnapshot | null = null;
    const marks: string[] = [];
    let called: RenderedDigest | null = null;
    for (let run = 0; run < 10; run += 1) {
      const next: Awaited<ReturnType<typeof digestOfNextRun>> = await digestOfNextRun('gallery-drift', previous, {}, times);
      previous = next.snapshot;
      marks.push([...next.rendered.main.text][0] ?? '');
      if (called === null && next.rendered.main.text.startsWith('🔴')) called = next.rendered;
    }
    expect(marks[1]).toBe('⚪');
    expect(called?.main.text).toMatch(/^🔴 Larchwood Mills — .*over \d runs/);
    expect(asText(called!)).toMatchSnapshot();
  });

  it("/visibility status shows every run's mark and headline as its digest gave them, never judged again", async () => {
    const { projects } = loadFixtureFile(GALLERY);
    const times = Array.from({ length: 10 }, (_, i) => new Date(Date.UTC(2026, 10, 1 + i, 9)).toISOString());
    const seen = new Set<string>();
    await withFreshSimulator(async (sim) => {
      for (const fixture of projects) {
        let previous: ProjectSnapshot | null = null;
        for (let run = 0; run < Math.max(1, fixture.runs?.length ?? 0); run += 1) {
          const next: Awaited<ReturnType<typeof digestOfNextRun>> = await digestOfNextRun(fixture.id, previous, {}, times, PAGE_SIZE, sim);
          previous = next.snapshot;
          const { input, rendered } = next;
          const status = statusReply(
            {
              project: input.project,
              overview: input.overview,
              gaps: { gaps: input.gaps, skipped: input.unreadableGaps ?? 0 },
              snapshot: previous,
            },
            { by: 'U0ANA', atMs: Date.parse(times[9]!) },
            undefined,
            { dashboardUrlTemplate: TEMPLATE },
          );
          const line = (status.blocks as { text?: { text: string } }[]).find((b) => b.text?.text.startsWith('*Latest run*'))?.text?.text;
          const [, mark, headline] = /— (⚠️|🔴|🟡|🟢|⚪) (.*)$/u.exec(line ?? '') ?? [];
          expect(mark, `${fixture.id} run ${run + 1}: ${line}`).toBeDefined();
          expect(rendered.main.text.startsWith(`${mark} `), `${fixture.id} run ${run + 1}`).toBe(true);
          expect(rendered.main.text.endsWith(` — ${headline}`), `${fixture.id} run ${run + 1}`).toBe(true);
          seen.add(mark!);
        }
      }
    });
    // The gallery covers every mark: each agrees.
    expect([...seen].sort()).toEqual(['⚠️', '⚪', '🔴', '🟡', '🟢'].sort());
  });

  it('the worst case fits a phone: 220 gaps, 26 alerts, 15 engines, 30 metrics (figures reported by the test)', async () => {
    const { gaps, gapsNext, overflow, overflowNext } = await withFreshSimulator(async (sim) => {
      const gaps = await digestOfNextRun('gallery-220-gaps', null, {}, RUN_TIMES, 250, sim);
      const gapsNext = await digestOfNextRun('gallery-220-gaps', gaps.snapshot, {}, RUN_TIMES, 250, sim);
      const overflow = await digestOfNextRun('gallery-overflow', null, {}, RUN_TIMES, PAGE_SIZE, sim);
      const overflowNext = await digestOfNextRun('gallery-overflow', overflow.snapshot, {}, RUN_TIMES, PAGE_SIZE, sim);
      return { gaps, gapsNext, overflow, overflowNext };
    });
    const overview = (input: DigestInput): DigestInput['overview'] => ({
      metrics: input.overview.metrics,
      engines: input.overview.engines.slice(0, 15),
      alerts: input.overview.alerts.slice(0, 26),
    });
    const previous = {
      ...gaps.snapshot,
      ...buildSnapshot({ projectId: 'x', runId: 'r-1', createdAt: RUN_TIMES[0]! }, overview(overflow.input), gaps.input.gaps),
      gaps: gaps.snapshot.gaps,
    };
    const worst = renderDigest({ ...gapsNext.input, overview: overview(overflowNext.input), previous });
    expectWithinBounds(worst);
    const size = measure(worst);
    console.info(
      `worst case: main ${size.lines} lines / ${size.blocks} blocks; thread ${size.replies} replies / ${size.threadChars} characters of blocks`,
    );
    expectShort(worst);
    expect(worst.thread.length).toBeGreaterThanOrEqual(2);
  });
});
