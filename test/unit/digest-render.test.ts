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
    // −12.2 pts at 1,240 answers: far beyond what chance explains; Gemini's −3.5 pts at 620 is not.
    overview: overview(41.5, 40),
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

describe('digest v3', () => {
  it('leads with a headline: status mark, project, the causes of the significant changes', () => {
    const out = valid(renderDigest(input()));
    expect(out.main.text).toBe('🔴 Northwind Outdoor — Visibility −12.2 pts · Rival Gear took 2 prompts');
    expect(out.main).toMatchSnapshot();
    expect(out.thread).toMatchSnapshot();
  });

  it('says changes in units, with vs last week; a sparkline only from 4 points; normal variation named once, never called', () => {
    const main = JSON.stringify(renderDigest(input()).main.blocks);
    expect(main).toContain('41.5 % (−12.2 pts) · vs last week −10.5 pts');
    expect(main).not.toMatch(/[▁▂▃▄▅▆▇█]/);
    expect(main).toContain('_Small moves within normal variation: Gemini · usual gap churn: 1 gap worse, 1 gap resolved_');
    expect(JSON.stringify(renderDigest(input()).thread)).toContain(
      '*Gemini* 40 % (−3.5 pts since the last run, within normal variation ±11.3 pts)',
    );
    expect(main).not.toMatch(/[▲▼]/);
    const older = buildSnapshot({ projectId: 'np', runId: 'r-00', createdAt: '2026-10-30T09:00:00Z' }, overview(55, 45), [gap(1)]);
    const longer = buildSnapshot(
      { projectId: 'np', runId: 'r-1', createdAt: '2026-11-07T09:00:00Z' },
      overview(53.7, 43.5),
      [gap(1), gap(2), gap(3), gap(4), gap(5)],
      buildSnapshot({ projectId: 'np', runId: 'r-0', createdAt: '2026-11-01T09:00:00Z' }, overview(52, 45), [gap(1)], older),
    );
    expect(JSON.stringify(renderDigest(input({ previous: longer })).main.blocks)).toMatch(/[▁▂▃▄▅▆▇█]{4}/);
  });

  it('a position reads "3.8, was 3.1 — worse"; a share on few answers stays within normal variation and never drives the mark', () => {
    const positionAt = (value: number) => ({
      ...overview(53.7, 43.5),
      metrics: [
        ...overview(53.7, 43.5).metrics.slice(0, 1),
        { label: 'Avg position', value, caption: null },
        { label: 'Open gaps', value: 12, caption: null },
      ],
    });
    const out = valid(renderDigest(input({ overview: positionAt(3.8) })));
    expect(JSON.stringify(out.main.blocks)).toContain('*Avg position* 3.8, was 3.1 — worse');
    const few = valid(renderDigest(input({ run: { ...RUN, answers: 12 }, gaps: [gap(1), gap(2, [['trend', 'worse']]), gap(3), gap(4)] })));
    expect(few.main.text).toBe('⚪ Northwind Outdoor — no change beyond normal variation since the last run');
    expect(JSON.stringify(few.main.blocks)).toContain('Small moves within normal variation: Visibility, Gemini');
  });

  it('no 🔴 with only good news; no "no significant change" above a list of changes', () => {
    const better = valid(renderDigest(input({ overview: overview(66, 48), gaps: [gap(1), gap(2), gap(3)] })));
    expect(better.main.text).toMatch(/^🟢 /);
    const quiet = buildSnapshot({ projectId: 'np', runId: 'r-1', createdAt: '2026-11-07T09:00:00Z' }, overview(50.5, 40), [gap(1)]);
    const same = valid(renderDigest(input({ overview: overview(50.5, 40), gaps: [gap(1)], previous: quiet })));
    expect(same.main.text).toBe('⚪ Northwind Outdoor — no change beyond normal variation since the last run');
    // One reply: the figures with their normal variation.
    expect(same.thread).toHaveLength(1);
    expect(JSON.stringify(same.thread)).toContain('(unchanged)');
  });

  it('a full page is truncated: "50+", left the top 50, never resolved; duplicates count once', () => {
    const all = Array.from({ length: 50 }, (_, i) => gap(i + 10));
    const prev = buildSnapshot({ projectId: 'np', runId: 'r-1', createdAt: '2026-11-07T09:00:00Z', pageSize: 50 }, overview(50.5, 40), all);
    const now = [...all.slice(4), all[4]!, ...Array.from({ length: 3 }, (_, i) => gap(i + 100))];
    const out = valid(renderDigest(input({ gaps: now, previous: prev, pageSize: 50, unreadableGaps: 1 })));
    const text = JSON.stringify([out.main, out.thread]);
    expect(text).toContain('*Open gaps* (49+ read');
    expect(text).toContain('1 gap entry could not be read');
    expect(text).toContain('4 left the top 50');
    expect(text).not.toMatch(/\d+ resolved/);
    expect(out.thread.length).toBeLessThanOrEqual(3);
  });

  it("orders alerts by severity in the thread; a critical alert's own text is in the main message", () => {
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
    expect(JSON.stringify(out.main.blocks)).toContain(`🚨 *Critical* — ${'x'.repeat(300)}`);
    const thread = JSON.stringify(out.thread);
    expect(thread).toContain(`🚨 *Critical* — ${'x'.repeat(300)}`);
    expect(thread.indexOf('Critical')).toBeLessThan(thread.indexOf('note 23'));
  });

  it('links a gap only when the template names {prompt_id}; none without a template', () => {
    const linked = valid(renderDigest(input({ options: { dashboardUrlTemplate: TEMPLATE } })));
    expect(linked.main.blocks.at(-1)).toMatchObject({ type: 'actions', elements: [{ url: 'https://app.example.com/p/np/runs/r-2' }] });
    expect(JSON.stringify(linked)).toContain('<https://app.example.com/p/np/runs/r-2?prompt=p-2|Best tent for question 2?>');
    expect(JSON.stringify(renderDigest(input()))).not.toContain('https://');
    const runOnly = valid(
      renderDigest(input({ options: { dashboardUrlTemplate: 'https://app.example.com/p/{project_id}/runs/{run_id}' } })),
    );
    expect(JSON.stringify(runOnly.thread)).not.toContain('https://');
    expect(dashboardUrlTemplateProblem('http://x.test/{project_id}')).toMatch(/https/);
    expect(dashboardUrlTemplateProblem('https://x.test/{project}')).toMatch(/unknown placeholder/);
    expect(dashboardUrlTemplateProblem(TEMPLATE)).toBeNull();
  });

  it('shortens the run id and dates the run with a Slack date token', () => {
    const out = renderDigest(input({ run: { ...RUN, runId: 'd4ac46c0-5341-4243-b9a7-69f3e60c3e40' } }));
    const main = JSON.stringify(out.main.blocks);
    expect(main).toContain('Run d4ac46c0…');
    expect(main).not.toContain('5341-4243');
    expect(main).toContain('<!date^1794128400^{date_short_pretty} {time}|2026-11-08 09:00 UTC>');
  });

  it('quiet runs in changes mode render one line and no thread', () => {
    const gaps = [gap(1)];
    const prev = buildSnapshot({ projectId: 'np', runId: 'r-1', createdAt: '2026-11-07T09:00:00Z' }, overview(50.5, 40), gaps);
    const quiet = valid(renderDigest(input({ overview: overview(50.5, 40), gaps, previous: prev, options: { mode: 'changes' } })));
    expect(quiet.quiet).toBe(true);
    expect(quiet.thread).toEqual([]);
    expect(quiet.main.blocks).toHaveLength(1);
    expect(quiet.main).toMatchSnapshot();
    expect(isQuietRun(buildModel(input()))).toBe(false);
  });

  it('"About these figures" once per channel: not when the channel was already shown it', () => {
    const first = renderDigest(input());
    expect(first.about).toBe(true);
    expect(JSON.stringify(first.thread)).toContain('About these figures');
    const again = renderDigest(input({ options: { aboutShown: true } }));
    expect(again.about).toBe(false);
    expect(JSON.stringify(again.thread)).not.toContain('About these figures');
  });

  it('service text cannot restyle or hide, and an empty-looking name falls back to the id', () => {
    const out = valid(
      renderDigest(
        input({
          overview: overview(53.7, 43.5),
          project: { id: 'np', name: '\u200B\u202E \u2066', industry: null },
          gaps: [{ ...gap(1), prompt_text: '*bold* _it_ ~s~ `c` <!here> & \u202Eevil' }],
        }),
      ),
    );
    const text = JSON.stringify(out.thread);
    expect(out.main.text).toMatch(/^🟢 np — 4 gaps resolved/);
    expect(text).toContain('∗bold∗ ˍitˍ ∼s∼ ˋcˋ &lt;!here&gt; &amp; evil');
    expect(JSON.stringify(out)).not.toMatch(/[\u200B-\u200F\u202A-\u202E\u2066-\u2069]/);
  });

  it('is honest about empty runs and other statuses, in one message', () => {
    const none = valid(renderDigest(input({ run: { ...RUN, answers: 0 }, gaps: [] })));
    expect(none.main.text).toBe('⚠️ Northwind Outdoor — no answers in this run');
    expect(none.thread).toEqual([]);
    expect(JSON.stringify(none.main.blocks)).not.toContain('all clear');
    const failed = valid(renderDigest(input({ run: { ...RUN, status: 'partial' } })));
    expect(failed.main.text).toContain('run status: partial');
  });

  it('a baseline is ⚪ and one message: the position, not "first digest" over the full skeleton', () => {
    const out = valid(renderDigest(input({ previous: null })));
    expect(out.main.text).toBe(
      '⚪ Northwind Outdoor — baseline: 12 open gaps on all 3 engines · Visibility 41.5 % · top rival Rival Gear (6 prompts)',
    );
    expect(out.thread).toEqual([]);
  });

  it('reasoning: one reply, engine named, reasons by impact, gaps without a card left out; chooses a result on a losing engine', () => {
    const reply = JSON.stringify(renderDigest(input()).thread.at(-1));
    expect(reply).toContain('card from Perplexity');
    expect(reply.indexOf('Cited less')).toBeLessThan(reply.indexOf('Thin page'));
    expect(reply).not.toContain('No reasoning card');
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

  it('draws the trend as a native line chart in the main message, its words in the fallback text, within 8 blocks', () => {
    const day = 24 * 3600 * 1000;
    const at = Date.parse(RUN.createdAt);
    const trend = [3, 2, 1, 0].map((back, i) => ({ atMs: at - back * day, engines: { Gemini: 43 - i, ChatGPT: 50 + i } }));
    const plain = valid(renderDigest(input()));
    const out = valid(renderDigest(input({ options: { trend } })));
    const charts = out.main.blocks.filter((b) => b.type === 'data_visualization');
    expect(charts).toMatchSnapshot();
    expect(charts).toHaveLength(1);
    expect(out.main.blocks.length).toBeLessThanOrEqual(8);
    // The words of the chart: notifications and screen readers; ChatGPT first, in the palette's order.
    expect(out.main.text).toContain('Visibility by engine, Nov 5 – Nov 8 (UTC): ChatGPT 50 → 53 % (+3); Gemini 43 → 40 % (−3).');
    // Refused by Slack: the same message with the words in the chart's place.
    expect(out.main.fallbackBlocks?.some((b) => b.type === 'context' && JSON.stringify(b).includes('ChatGPT 50 → 53 %'))).toBe(true);
    expect(out.main.fallbackBlocks).toHaveLength(out.main.blocks.length);
    // The thread keeps its three replies: the PNG is only a fallback.
    expect(out.thread).toHaveLength(plain.thread.length);
    expect(plain.main.fallbackBlocks).toBeUndefined();
  });

  it('lists the engines and the open gaps as data tables in the thread, their words as the fallback', () => {
    const out = valid(renderDigest(input({ options: { dashboardUrlTemplate: TEMPLATE } })));
    const tables = out.thread.flatMap((reply) => reply.blocks.filter((b) => b.type === 'data_table'));
    expect(tables.map((t) => t.caption)).toEqual(['Open gaps (6 read), worst first', 'AI engines (2)']);
    expect(tables).toMatchSnapshot();
    // The verdict's calls, not the renderer's: Gemini's −3.5 pts is within its normal variation.
    const gemini = JSON.stringify(tables[1]!.rows.find((row) => JSON.stringify(row).includes('Gemini')));
    expect(gemini).toContain('within normal variation ±');
    for (const reply of out.thread.filter((r) => r.blocks.some((b) => b.type === 'data_table'))) {
      // The words the table stands for, sent if Slack refuses it: today's mrkdwn lines.
      const words = JSON.stringify(reply.fallbackBlocks);
      expect(words).not.toContain('data_table');
      expect(words).toMatch(/\*Open gaps\* \(6 read\), by the engines|\*AI engines\* \(2\)/);
      expect(findBlockKitViolations({ ...reply, blocks: reply.fallbackBlocks! })).toEqual([]);
    }
    // Table cells are literal text: service text is neither escaped nor able to mention anyone.
    const odd = renderDigest(input({ gaps: [{ ...gap(1), prompt_text: '<!here> & \u202Eevil', top_competitor: 'A&B' }] }));
    const cells = JSON.stringify(odd.thread.flatMap((r) => r.blocks.filter((b) => b.type === 'data_table')));
    expect(cells).toContain('#1 <!here> & evil');
    expect(cells).toContain('A&B');
    expect(cells).not.toMatch(/[\u202A-\u202E]/);
  });

  it('a list past a table limit stays mrkdwn lines: 101 gaps, no table, no fallback', () => {
    const many = Array.from({ length: 101 }, (_, i) => gap(i + 10));
    const out = valid(renderDigest(input({ gaps: many, pageSize: 200 })));
    const gapsReply = out.thread.find((r) => r.text.startsWith('Changes and gaps'))!;
    expect(gapsReply.blocks.some((b) => b.type === 'data_table')).toBe(false);
    expect(gapsReply.fallbackBlocks).toBeUndefined();
    expect(JSON.stringify(gapsReply.blocks)).toContain('*Open gaps* (101 read)');
  });

  it('keeps a chart-less digest as it was: a first run, one run of history, a compact line', () => {
    const at = Date.parse(RUN.createdAt);
    const one = valid(renderDigest(input({ options: { trend: [{ atMs: at, engines: { Gemini: 40 } }] } })));
    expect(one.main.blocks.some((b) => b.type === 'data_visualization')).toBe(false);
    const baseline = valid(
      renderDigest(
        input({
          previous: null,
          options: {
            trend: [
              { atMs: at - 1, engines: { Gemini: 1 } },
              { atMs: at, engines: { Gemini: 2 } },
            ],
          },
        }),
      ),
    );
    expect(baseline.main.blocks.some((b) => b.type === 'data_visualization')).toBe(false);
  });

  it('every "in the thread" pointer has its reply: a baseline without a thread never points to one', () => {
    const critical = (i: number) =>
      [
        ['severity', 'critical'],
        ['message', `outage ${i}`],
      ] as const;
    const alerts = { ...overview(41.5, 40), alerts: [critical(1), critical(2), critical(3)] };
    const baseline = valid(renderDigest(input({ previous: null, overview: alerts })));
    expect(baseline.thread).toEqual([]);
    expect(JSON.stringify(baseline.main.blocks)).not.toContain('in the thread');
    expect(JSON.stringify(baseline.main.blocks)).toContain('outage 1');
    const report = valid(renderDigest(input({ overview: alerts })));
    expect(JSON.stringify(report.main.blocks)).toContain('1 more severe alert in the thread');
    expect(JSON.stringify(report.thread)).toContain('outage 3');
  });

  it('draft.ready: a readable title, "Open draft" only when the template names {asset_id}', () => {
    const notice = (template: string) =>
      renderDraftReady({
        project: { id: 'np', name: 'Northwind Outdoor', industry: null },
        projectId: 'np',
        assetId: '3f2a9c1e-5b7d-4e2a-9c1e-5b7d4e2a9c1e',
        version: 2,
        createdAt: RUN.createdAt,
        dashboardUrlTemplate: template,
      });
    const message = notice('https://app.example.com/p/{project_id}/drafts/{asset_id}');
    expect(findBlockKitViolations(message)).toEqual([]);
    expect(message.text).toBe('New draft for Northwind Outdoor — version 2 (asset 3f2a9c1e-5b7d-4e2a-9c1e-5b7d4e2a9c1e)');
    expect(message.blocks.at(-1)).toMatchObject({
      elements: [{ url: 'https://app.example.com/p/np/drafts/3f2a9c1e-5b7d-4e2a-9c1e-5b7d4e2a9c1e' }],
    });
    expect(message).toMatchSnapshot();
    const noAsset = notice('https://app.example.com/p/{project_id}/runs/{run_id}?a={asset_id}');
    expect(JSON.stringify(noAsset.blocks)).not.toContain('Open draft');
  });
});
