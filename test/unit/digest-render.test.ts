import { describe, expect, it } from 'vitest';
import { renderDigest, renderDraftReady, isQuietRun, buildModel, type DigestInput, type RenderedDigest } from '../../shared/digest/render';
import { buildSnapshot, type ProjectSnapshot } from '../../shared/digest/snapshot';
import type { Gap } from '../../shared/read-api-types';
import { findBlockKitViolations } from '../../shared/slack-text';
import { dashboardUrlTemplateProblem } from '../../shared/digest/links';
import { chooseReasoningResult, orderReasonsByImpact } from '../../shared/digest/reasoning-choice';

const ENGINES = ['ChatGPT', 'Perplexity', 'Gemini', 'Claude', 'Copilot'];
const TEMPLATE = 'https://app.example.com/p/{project_id}/runs/{run_id}?prompt={prompt_id}';

function gap(i: number, extra: Gap['extra'] = [['trend', 'stable']]): Gap {
  return {
    prompt_id: `p-${i}`,
    prompt_ref: i,
    prompt_text: `Best tent for question ${i}?`,
    platforms_losing: ENGINES.slice(0, 1 + (i % 3)),
    top_competitor: 'Rival Gear',
    extra,
  };
}

function overview(visibility: number, gemini: number): DigestInput['overview'] {
  return {
    metrics: [
      { label: 'Visibility', value: visibility, caption: 'Share of answers mentioning the project' },
      { label: 'Avg position', value: 3.1, caption: null },
      { label: 'Open gaps', value: 12, caption: null },
    ],
    engines: [
      [
        ['visibility', gemini],
        ['engine', 'Gemini'],
        ['avg_position', 2.5],
      ],
      [
        ['engine', 'ChatGPT'],
        ['visibility', 51],
        ['change_pts', 1],
      ],
    ],
    alerts: [
      [
        ['severity', 'info'],
        ['message', 'Weekly summary is ready'],
      ],
      [
        ['severity', 'critical'],
        ['message', 'Visibility on Gemini dropped sharply'],
      ],
    ],
  };
}

const RUN = { eventId: 'e-2', runId: 'r-2', answers: 1240, createdAt: '2026-11-08T09:00:00Z' };

function previousSnapshot(gaps: Gap[]): ProjectSnapshot {
  const weekAgo = buildSnapshot({ projectId: 'np', runId: 'r-0', createdAt: '2026-11-01T09:00:00Z' }, overview(52, 45), gaps);
  return buildSnapshot({ projectId: 'np', runId: 'r-1', createdAt: '2026-11-07T09:00:00Z' }, overview(53.7, 43.5), gaps, weekAgo);
}

function input(overrides: Partial<DigestInput> = {}): DigestInput {
  const gaps = [gap(1), gap(2, [['trend', 'worse']]), gap(3), gap(4)];
  return {
    project: { id: 'np', name: 'Northwind Outdoor', industry: null },
    run: RUN,
    overview: overview(50.5, 40),
    gaps: [...gaps, gap(7), gap(8)],
    previous: previousSnapshot(gaps.concat(gap(5))),
    reasoning: new Map([
      [
        'p-1',
        {
          reasons: [
            { impact: 'low', category: 'content', detail: 'Thin page' },
            { impact: 'high', category: 'authority', detail: 'Cited less' },
          ],
          engine: 'Perplexity',
        },
      ],
    ]),
    ...overrides,
  };
}

function valid(rendered: RenderedDigest): RenderedDigest {
  for (const message of [rendered.main, ...rendered.thread]) expect(findBlockKitViolations(message)).toEqual([]);
  return rendered;
}

describe('digest v2', () => {
  it('leads with a headline: status mark, project, biggest changes (direction-aware)', () => {
    const out = valid(renderDigest(input()));
    expect(out.main.text).toBe('🔴 Northwind Outdoor — Visibility 50.5 (−3.2) · 2 new gaps · Gemini −3.5');
    expect(out.main).toMatchSnapshot();
    expect(out.thread).toMatchSnapshot();
  });

  it('puts new and worsening gaps first, with sparkline and vs last week', () => {
    const text = JSON.stringify(renderDigest(input()).main.blocks);
    expect(text.indexOf('What changed')).toBeLessThan(text.indexOf('Worst gaps'));
    expect(text).toContain('_Worse:_ *#2*');
    expect(text).toContain('vs last week −1.5');
    expect(text).toMatch(/[▁▂▃▄▅▆▇█]{3}/);
    expect(text).toContain('_Unchanged:_ Avg position 3.1 · Open gaps 12');
  });

  it('a full page is truncated: "50+", left the top 50, never resolved; duplicates count once', () => {
    const all = Array.from({ length: 50 }, (_, i) => gap(i + 10));
    const prev = buildSnapshot({ projectId: 'np', runId: 'r-1', createdAt: '2026-11-07T09:00:00Z', pageSize: 50 }, overview(50.5, 40), all);
    const now = [...all.slice(4), all[4]!, ...Array.from({ length: 3 }, (_, i) => gap(i + 100))];
    const out = valid(renderDigest(input({ gaps: now, previous: prev, pageSize: 50, unreadableGaps: 1 })));
    const text = JSON.stringify([out.main, out.thread]);
    expect(text).toContain('Worst gaps* (49+');
    expect(text).toContain('1 gap entry could not be read');
    expect(text).toContain('4 left the top 50');
    expect(text).not.toMatch(/\d+ resolved/);
    expect(text).toContain('More gaps* (6–');
  });

  it('orders alerts by severity and sends overflow to the thread', () => {
    const many = {
      ...overview(50.5, 40),
      alerts: [
        ...Array.from(
          { length: 24 },
          (_, i) =>
            [
              ['severity', 'info'],
              ['message', `note ${i}`],
            ] as const,
        ),
        [
          ['severity', 'critical'],
          ['message', 'x'.repeat(300)],
        ] as const,
      ],
    };
    const out = valid(renderDigest(input({ overview: many })));
    const main = JSON.stringify(out.main.blocks);
    expect(main).toContain(`🚨 *Critical* — ${'x'.repeat(300)}`);
    expect(JSON.stringify(out.thread)).toContain('note 23');
  });

  it('links with a dashboard template; none without', () => {
    const linked = valid(renderDigest(input({ options: { dashboardUrlTemplate: TEMPLATE } })));
    expect(linked.main.blocks.at(-1)).toMatchObject({ type: 'actions' });
    expect(JSON.stringify(linked.main.blocks)).toContain('<https://app.example.com/p/np/runs/r-2?prompt=p-2|Best tent for question 2?>');
    expect(JSON.stringify(renderDigest(input()).main.blocks)).not.toContain('https://');
    expect(linked.main.blocks.at(-1)).toMatchObject({ elements: [{ url: 'https://app.example.com/p/np/runs/r-2' }] });
    expect(dashboardUrlTemplateProblem('http://x.test/{project_id}')).toMatch(/https/);
    expect(linked.main.blocks.at(-1)).toMatchObject({ elements: [{ url: 'https://app.example.com/p/np/runs/r-2' }] });
    expect(dashboardUrlTemplateProblem('https://x.test/{project}')).toMatch(/unknown placeholder/);
    expect(dashboardUrlTemplateProblem(TEMPLATE)).toBeNull();
  });

  it('quiet runs in changes mode render one line and no thread', () => {
    const gaps = [gap(1)];
    const prev = buildSnapshot({ projectId: 'np', runId: 'r-1', createdAt: '2026-11-07T09:00:00Z' }, overview(50.5, 40), gaps);
    const quiet = valid(renderDigest(input({ gaps, previous: prev, options: { mode: 'changes' } })));
    expect(quiet.quiet).toBe(true);
    expect(quiet.thread).toEqual([]);
    expect(quiet.main.blocks).toHaveLength(1);
    expect(quiet.main).toMatchSnapshot();
    expect(isQuietRun(buildModel(input()))).toBe(false);
  });

  it('service text cannot restyle or hide, and an empty-looking name falls back to the id', () => {
    const out = valid(
      renderDigest(
        input({
          project: { id: 'np', name: '\u200B\u202E \u2066', industry: null },
          gaps: [{ ...gap(1), prompt_text: '*bold* _it_ ~s~ `c` <!here> & \u202Eevil' }],
        }),
      ),
    );
    const text = JSON.stringify(out.main.blocks);
    expect(out.main.text.startsWith('🔴 np —')).toBe(true);
    expect(text).toContain('∗bold∗ ˍitˍ ∼s∼ ˋcˋ &lt;!here&gt; &amp; evil');
    expect(text).not.toMatch(/[\u200B-\u200F\u202A-\u202E\u2066-\u2069]/);
  });

  it('is honest about empty runs and other statuses', () => {
    const none = valid(renderDigest(input({ run: { ...RUN, answers: 0 }, gaps: [] })));
    expect(none.main.text).toBe('⚪ Northwind Outdoor — no answers in this run');
    expect(JSON.stringify(none.main.blocks)).not.toContain('all clear');
    const failed = valid(renderDigest(input({ run: { ...RUN, status: 'partial' } })));
    expect(failed.main.text).toContain('run status: partial');
  });

  it('reasoning: engine named, reasons by impact; chooses a result on a losing engine', () => {
    const reply = JSON.stringify(renderDigest(input()).thread.at(-3));
    expect(reply).toContain('Why gap 1 is lost on Perplexity');
    expect(reply.indexOf('Cited less')).toBeLessThan(reply.indexOf('Thin page'));
    const results = [
      { id: 'a', reasoning_card_id: 'c1', engine: 'Claude' },
      { id: 'b', reasoning_card_id: 'c2', engine: 'gemini' },
    ];
    expect(chooseReasoningResult(results, { platforms_losing: ['Gemini'] })?.id).toBe('b');
    expect(chooseReasoningResult(results, { platforms_losing: ['Copilot'] })?.id).toBe('a');
    expect(
      orderReasonsByImpact([
        { impact: 'medium', category: '', detail: '1' },
        { impact: 'critical', category: '', detail: '2' },
      ])[0]?.detail,
    ).toBe('2');
  });

  it('draft.ready has an Open draft button with a template', () => {
    const message = renderDraftReady({
      project: null,
      projectId: 'np',
      assetId: 'a-1',
      version: 2,
      createdAt: RUN.createdAt,
      dashboardUrlTemplate: 'https://app.example.com/p/{project_id}/drafts/{asset_id}',
    });
    expect(findBlockKitViolations(message)).toEqual([]);
    expect(message).toMatchSnapshot();
  });
});
