/** `/visibility status`: its links go to the project's latest run, and it says that run's mark and headline as its digest stored them. */
import { describe, expect, it } from 'vitest';
import type { ProjectSnapshot, RunVerdict } from '../../shared/ports';
import type { VisibilityOverview } from '../../shared/read-api-types';
import { findUnescapedMarkup } from '../../shared/slack-text';
import { latestRunVerdict, statusReply } from '../../shared/slack-app/status';

const NOW = Date.UTC(2026, 10, 23, 9);
const TEMPLATE = 'https://app.example.com/p/{project_id}/runs/{run_id}?prompt={prompt_id}';
const project = { id: 'p1', name: 'Northwind', industry: null };
const overview: VisibilityOverview = {
  metrics: [{ label: 'Visibility score', value: 44, caption: null }],
  engines: [
    [
      ['engine', 'ChatGPT'],
      ['visibility', 40],
    ],
  ],
  alerts: [],
};
const gaps = {
  gaps: [
    { prompt_id: 'q1', prompt_ref: 1, prompt_text: 'Best tent?', platforms_losing: ['ChatGPT'], top_competitor: 'TrailForge', extra: [] },
  ],
  skipped: 0,
};

function snapshot(points: { visibility: number; answers: number }[], said?: Omit<RunVerdict, 'runId'>): ProjectSnapshot {
  const history = points.map((p, i) => ({
    createdAt: new Date(NOW - (points.length - i) * 86_400_000).toISOString(),
    runId: `run-${i}`,
    metrics: { 'Visibility score': p.visibility },
    answers: p.answers,
  }));
  const last = history.at(-1)!;
  return {
    projectId: 'p1',
    lastCreatedAt: last.createdAt,
    lastRunId: last.runId,
    metrics: last.metrics,
    gaps: [],
    history,
    ...(said ? { lastVerdict: { runId: last.runId, ...said } } : {}),
  };
}

function answer(snap: ProjectSnapshot | null) {
  return statusReply({ project, overview, gaps, snapshot: snap }, { by: 'U0ANA', atMs: NOW }, undefined, {
    dashboardUrlTemplate: TEMPLATE,
  });
}

describe('status', () => {
  it("links to the project's latest run, never to a run called 'status'", () => {
    const text = JSON.stringify(
      answer(
        snapshot([
          { visibility: 52, answers: 1240 },
          { visibility: 44, answers: 1240 },
        ]),
      ).blocks,
    );
    expect(text).not.toContain('runs/status');
    expect(text).toContain('https://app.example.com/p/p1/runs/run-1');
    // Without a digested run: the project's page.
    const none = JSON.stringify(answer(null).blocks);
    expect(none).not.toContain('/runs/');
    expect(none).toContain('https://app.example.com/p/p1');
  });

  it("says the latest run with the mark and headline its digest stored, whatever the figures' raw change", () => {
    // An 8-point drop the digest judged within normal variation (e.g. a persistent level, or a thin run) stays ⚪ here.
    const reply = answer(
      snapshot(
        [
          { visibility: 52, answers: 1240 },
          { visibility: 44, answers: 1240 },
        ],
        { mark: '⚪', headline: 'no change beyond normal variation since the last run' },
      ),
    );
    const line = (reply.blocks as { text?: { text: string } }[]).find((b) => b.text?.text.startsWith('*Latest run*'))?.text?.text ?? '';
    expect(findUnescapedMarkup(line, { allowLinks: true })).toBeNull();
    expect(line).toContain('*Latest run* <https://app.example.com/p/p1/runs/run-1|Run run-1>');
    expect(line).toMatch(/1,240 answers — ⚪ no change beyond normal variation since the last run$/);
    const drop = JSON.stringify(
      answer(
        snapshot([{ visibility: 45, answers: 1240 }], { mark: '🔴', headline: 'Visibility score −10.2 pts · TrailForge took 3 prompts' }),
      ).blocks,
    );
    expect(drop).toContain('1,240 answers — 🔴 Visibility score −10.2 pts · TrailForge took 3 prompts');
  });

  it("says no mark for a run whose digest stored none (an older snapshot, or another run's), and makes stored text safe", () => {
    const older = snapshot([
      { visibility: 52, answers: 1240 },
      { visibility: 44, answers: 1240 },
    ]);
    expect(latestRunVerdict(older)).toBeNull();
    expect(JSON.stringify(answer(older).blocks)).not.toMatch(/answers — /);
    const stale = { ...older, lastVerdict: { runId: 'run-0', mark: '🔴', headline: 'old news' } } satisfies ProjectSnapshot;
    expect(latestRunVerdict(stale)).toBeNull();
    const unsafe = snapshot([{ visibility: 44, answers: 1240 }], { mark: '🔴', headline: '<!channel> *took* 3 prompts' });
    const line =
      (answer(unsafe).blocks as { text?: { text: string } }[]).find((b) => b.text?.text.startsWith('*Latest run*'))?.text?.text ?? '';
    expect(findUnescapedMarkup(line, { allowLinks: true })).toBeNull();
  });
});
