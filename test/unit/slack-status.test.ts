/** `/visibility status`: its links go to the project's latest run, and it says that run's mark and change since the run before. */
import { describe, expect, it } from 'vitest';
import type { ProjectSnapshot } from '../../shared/ports';
import type { VisibilityOverview } from '../../shared/read-api-types';
import { findUnescapedMarkup } from '../../shared/slack-text';
import { latestRunChange, statusReply } from '../../shared/slack-app/status';

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

function snapshot(points: { visibility: number; answers: number }[]): ProjectSnapshot {
  const history = points.map((p, i) => ({
    createdAt: new Date(NOW - (points.length - i) * 86_400_000).toISOString(),
    runId: `run-${i}`,
    metrics: { 'Visibility score': p.visibility },
    answers: p.answers,
  }));
  const last = history.at(-1)!;
  return { projectId: 'p1', lastCreatedAt: last.createdAt, lastRunId: last.runId, metrics: last.metrics, gaps: [], history };
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

  it('says the latest run, its mark and its change since the run before', () => {
    const reply = answer(
      snapshot([
        { visibility: 52, answers: 1240 },
        { visibility: 44, answers: 1240 },
      ]),
    );
    const line = (reply.blocks as { text?: { text: string } }[]).find((b) => b.text?.text.startsWith('*Latest run*'))?.text?.text ?? '';
    expect(findUnescapedMarkup(line, { allowLinks: true })).toBeNull();
    const text = JSON.stringify(reply.blocks);
    expect(text).toContain('*Latest run* <https://app.example.com/p/p1/runs/run-1|Run run-1>');
    expect(text).toContain('1,240 answers — 🔴 Visibility score 44 % (−8 pts since the run before, worse)');
    const small = JSON.stringify(
      answer(
        snapshot([
          { visibility: 45, answers: 1240 },
          { visibility: 44, answers: 1240 },
        ]),
      ).blocks,
    );
    expect(small).toContain('⚪ Visibility score 44 % (−1 pts since the run before, within normal variation)');
  });

  it('calls a run with no answers no data, and compares past it', () => {
    expect(
      latestRunChange(
        snapshot([
          { visibility: 52, answers: 1240 },
          { visibility: 0, answers: 0 },
        ]),
      ),
    ).toEqual({ mark: '⚠️', why: 'no-answers' });
    expect(
      latestRunChange(
        snapshot([
          { visibility: 52, answers: 1240 },
          { visibility: 0, answers: 0 },
          { visibility: 60, answers: 1240 },
        ]),
      ),
    ).toMatchObject({ mark: '🟢', delta: 8 });
    expect(latestRunChange(snapshot([{ visibility: 52, answers: 1240 }]))).toEqual({ mark: '⚪', why: 'first' });
  });
});
