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
import { renderDigest, type DigestInput, type RenderedDigest } from '../../shared/digest/render';
import { buildSnapshot, type ProjectSnapshot } from '../../shared/digest/snapshot';
import { findBlockKitViolations } from '../../shared/slack-text';
import { renderConversation } from '../../local/slack-server';
import { loadFixtureFile } from '../../local/simulator/data';
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
let client: ReadApiClient;

beforeAll(async () => {
  simulator = await VisibilitySimulator.start({ fixture: loadFixtureFile(GALLERY) });
  client = new ReadApiClient({ baseUrl: simulator.url, apiKey: simulator.apiKey, gapsPageSize: PAGE_SIZE });
});
afterAll(async () => {
  await simulator.close();
});

/** One digest of the project's next scripted run, as process.ts reads and renders it. */
async function digestOfNextRun(projectId: string, previous: ProjectSnapshot | null, options: DigestInput['options'] = {}) {
  const info = simulator.advanceRun(projectId);
  const createdAt = RUN_TIMES[info.run - 1] ?? RUN_TIMES[0]!;
  const [projects, overview, { gaps, skipped }] = await Promise.all([
    client.listProjects(),
    client.getVisibility(projectId),
    client.getGapsWithSkipped(projectId),
  ]);
  const project = projects.find((p) => p.id === projectId) ?? { id: projectId, name: projectId, industry: null };
  const reasoning = new Map(
    await Promise.all(gaps.slice(0, 3).map(async (g) => [g.prompt_id, await findReasoningCard(client, projectId, g)] as const)),
  );
  const input: DigestInput = {
    project,
    run: { eventId: `ev-${info.run}`, runId: info.runId, answers: info.answers, createdAt, status: 'completed' },
    overview,
    gaps,
    pageSize: PAGE_SIZE,
    unreadableGaps: skipped,
    previous,
    reasoning,
    options: { dashboardUrlTemplate: TEMPLATE, ...options },
  };
  const snapshotRun = { projectId, runId: info.runId, createdAt, pageSize: PAGE_SIZE, rawGapCount: gaps.length + skipped };
  return { rendered: renderDigest(input), snapshot: buildSnapshot(snapshotRun, overview, gaps, previous) };
}

/** The first two scripted runs: the baseline digest, then the digest the gallery is about. */
async function secondDigest(projectId: string, options: DigestInput['options'] = {}): Promise<RenderedDigest> {
  const first = await digestOfNextRun(projectId, null, options);
  expectWithinBounds(first.rendered);
  const second = await digestOfNextRun(projectId, first.snapshot, options);
  expectWithinBounds(second.rendered);
  return second.rendered;
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
  it('big drop: 🔴 headline with the biggest changes; new and worsening gaps first, with trend; reasoning on a losing engine', async () => {
    const rendered = await secondDigest('gallery-big-drop');
    expect(rendered.main.text).toMatch(/^🔴 Northwind Outdoor — Visibility score [^·]+ · 2 new gaps · .*Gemini −3\.5/);
    const main = mainText(rendered);
    expect(main).toContain('Which ultralight tent do thru-hikers recommend?');
    expect(main).toMatch(/worse/i);
    expect(asText(rendered)).toContain('Gemini cites TrailForge');
    expect(asText(rendered)).not.toContain('this card is on an engine where the gap is not lost');
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('improvement: a fall in "Average position" and "Open gaps" reads as good news; gaps off a complete list are resolved', async () => {
    const rendered = await secondDigest('gallery-improvement');
    expect(rendered.main.text).not.toMatch(/^🔴/);
    expect(rendered.main.text).toContain('Ledgerly');
    expect(asText(rendered)).toMatch(/Resolved/);
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('220 gaps read 50 at a time: "50+", the ones pushed out "left the top" list, none "resolved"', async () => {
    const rendered = await secondDigest('gallery-220-gaps');
    const text = asText(rendered);
    expect(text).toContain('50+');
    expect(text).toMatch(/Left the top/);
    expect(text).not.toMatch(/Resolved/);
    expect(text).toMatchSnapshot();
  });

  it('many engines, metrics and alerts: none dropped, overflow in the thread, alerts most severe first', async () => {
    const rendered = await secondDigest('gallery-overflow');
    const text = asText(rendered);
    for (const engine of ['ChatGPT', 'Andi', 'Naver Cue']) expect(text).toContain(engine);
    for (let i = 1; i <= 30; i += 1) expect(text).toContain(`Alert ${i} (`);
    expect(text.indexOf('Alert 25 (critical)')).toBeLessThan(text.indexOf('Alert 1 (info)'));
    expect(text.indexOf('Alert 12 (ERROR)')).toBeLessThan(text.indexOf('Alert 6 (warn)'));
    expect(rendered.thread.length).toBeGreaterThan(0);
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

  it('an empty run says there were no answers, not "all clear"', async () => {
    const rendered = await secondDigest('gallery-empty-run');
    expect(asText(rendered)).toMatch(/no answers in this run/i);
    expect(asText(rendered)).not.toMatch(/all clear/i);
    expect(asText(rendered)).toMatchSnapshot();
  });

  it('a quiet run in "changes" mode is one compact line and no thread', async () => {
    const rendered = await secondDigest('gallery-quiet', { mode: 'changes' });
    expect(rendered.quiet).toBe(true);
    expect(rendered.thread).toEqual([]);
    expect(rendered.main.blocks).toHaveLength(1);
    expect(asText(rendered)).toMatchSnapshot();
  });
});
