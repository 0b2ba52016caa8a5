import type { KnownBlock } from '@slack/web-api';
import { describe, expect, it } from 'vitest';
import { renderDigest, renderDraftReady, type DigestInput, type RenderedDigest, type BlockKitMessage } from '../../shared/digest/render';
import type { ProjectSnapshot } from '../../shared/digest/snapshot';
import type { Gap, GenericRow, Reason, ReasoningCard } from '../../shared/read-api-types';
import { assertWithinBlockKitLimits, findBlockKitViolations } from '../../shared/slack-text';

// ---------------------------------------------------------------------------------------------
// Local factory

const PLATFORMS = ['ChatGPT', 'Perplexity', 'Gemini', 'Claude', 'Copilot'];
const COMPETITORS = ['Rival Inc', 'Contoso', 'Initech', 'Umbrella'];

function makeGap(i: number, overrides: Partial<Gap> = {}): Gap {
  return {
    prompt_id: `prompt-${i}`,
    prompt_ref: 100 + i,
    prompt_text: `Which analytics tool is best for question ${i}?`,
    platforms_losing: PLATFORMS.slice(0, 1 + (i % 3)),
    top_competitor: COMPETITORS[i % COMPETITORS.length]!,
    extra: [['worsening', i % 2 === 0]],
    ...overrides,
  };
}

function makeReasons(n: number): Reason[] {
  return Array.from({ length: n }, (_, i) => ({
    impact: ['high', 'medium', 'low'][i % 3]!,
    category: ['content', 'authority', 'freshness'][i % 3]!,
    detail: `Reason ${i + 1}: the competitor's page answers the question directly and is cited by the engine.`,
  }));
}

const PREVIOUS: ProjectSnapshot = {
  projectId: 'proj-1',
  lastCreatedAt: '2026-11-01T09:30:00Z',
  lastRunId: 'run-41',
  metrics: { 'Visibility score': 39.3, Mentions: 119, 'Average position': 3.1, 'Share of voice': 20 },
  gaps: [
    { prompt_id: 'prompt-1', prompt_ref: 101, prompt_text: 'Which analytics tool is best for question 1?' },
    { prompt_id: 'prompt-2', prompt_ref: 102, prompt_text: 'Which analytics tool is best for question 2?' },
    { prompt_id: 'prompt-3', prompt_ref: 103, prompt_text: 'Which analytics tool is best for question 3?' },
    { prompt_id: 'prompt-old', prompt_ref: 'Q-9', prompt_text: 'Is there a free plan?' },
  ],
};

const ENGINES: GenericRow[] = [
  [['engine', 'ChatGPT'], ['visibility', '48%'], ['mentions', 52]],
  [['engine', 'Perplexity'], ['visibility', '37%'], ['mentions', 31]],
  [['engine', 'Gemini'], ['visibility', null], ['tracked', true]],
];

function makeInput(overrides: Partial<DigestInput> = {}): DigestInput {
  const gaps = Array.from({ length: 8 }, (_, i) => makeGap(i + 1));
  return {
    project: { id: 'proj-1', name: 'Acme Analytics', industry: 'SaaS' },
    run: { eventId: 'evt-1', runId: 'run-42', answers: 1240, createdAt: '2026-11-08T09:30:00Z' },
    overview: {
      metrics: [
        { label: 'Visibility score', value: '42.5%', caption: 'Share of answers that mention the project' },
        { label: 'Mentions', value: 118, caption: 'Answers naming the project' },
        { label: 'Average position', value: 3.1, caption: null },
        { label: 'Share of voice', value: null, caption: 'Not measured this week' },
        { label: 'Trend', value: 'improving', caption: null },
        { label: 'Tracked', value: true, caption: null },
      ],
      engines: ENGINES,
      alerts: [[['title', 'Visibility dropped on Gemini'], ['severity', 'warning'], ['change', -4.2]]],
    },
    gaps,
    previous: PREVIOUS,
    reasoning: new Map<string, ReasoningCard | null>([
      ['prompt-1', { reasons: makeReasons(3) }],
      ['prompt-2', null],
      ['prompt-3', { reasons: [] }],
    ]),
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------
// Checks

function allMessages(rendered: RenderedDigest): BlockKitMessage[] {
  return [rendered.main, ...rendered.thread];
}

/** Every text object's text, in order. */
function textsOf(message: BlockKitMessage): string[] {
  const texts = [message.text];
  for (const block of message.blocks) {
    if (block.type === 'header') texts.push(block.text.text);
    if (block.type === 'section') {
      if (block.text) texts.push(block.text.text);
      for (const field of block.fields ?? []) texts.push(field.text);
    }
    if (block.type === 'context') for (const element of block.elements) if ('text' in element) texts.push(element.text);
  }
  return texts;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Limits, escaping and "nothing silly rendered", for every message. */
function expectValid(rendered: RenderedDigest | BlockKitMessage): void {
  const messages = 'main' in rendered ? allMessages(rendered) : [rendered];
  for (const message of messages) {
    expect(findBlockKitViolations(message)).toEqual([]);
    assertWithinBlockKitLimits(message);
    for (const text of textsOf(message)) {
      expect(text).not.toMatch(/NaN|undefined|\[object Object\]/);
      expect(text).not.toMatch(LONE_SURROGATE);
      expect(text).not.toMatch(/\u200D…/);
    }
    for (const block of message.blocks) {
      if (block.type === 'section' || block.type === 'context') expect(JSON.stringify(block)).toContain('"verbatim":true');
    }
  }
}

function sectionTexts(message: BlockKitMessage): string {
  return textsOf(message).slice(1).join('\n');
}

// ---------------------------------------------------------------------------------------------

describe('renderDigest', () => {
  it('renders a normal run', () => {
    const rendered = renderDigest(makeInput());
    expectValid(rendered);
    expect(rendered).toMatchSnapshot();

    const main = sectionTexts(rendered.main);
    expect(main).toContain('42.5% (▲ 3.2)');
    expect(main).toContain('118 (▼ 1)');
    expect(main).toContain('3.1 (no change)');
    expect(main).toContain('*Share of voice*\n—\nNot measured this week');
    expect(main).toContain('*Trend*\nimproving\n');
    expect(main).toContain('• *ChatGPT* — visibility: 48% · mentions: 52');
    expect(main).toContain('• *Gemini* — visibility: — · tracked: yes');
    expect(main).toContain('• *Visibility dropped on Gemini* — severity: warning · change: -4.2');
    expect(main).toContain('1. *#101* Which analytics tool is best for question 1? — losing on ChatGPT, Perplexity to Contoso');
    expect(main).toContain('5. *#105*');
    expect(main).not.toContain('6. *#106*');
    expect(main).toContain('+3 more gaps in the thread');
    expect(main).toContain('5 new gaps · 1 resolved — lists in the thread');
    expect(main).toContain('Run run-42 · 1,240 answers · 2026-11-08 09:30 UTC');
    expect(rendered.main.text).toBe(
      'Visibility digest for Acme Analytics: Visibility score 42.5% (▲ 3.2); Mentions 118 (▼ 1); Average position 3.1 (no change) · 8 gaps',
    );
    expect(rendered.main.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Visibility digest: Acme Analytics' } });

    const thread = rendered.thread.map(sectionTexts);
    expect(thread).toHaveLength(3);
    expect(thread[0]).toMatch(/^\*More gaps\* \(6–8 of 8\)\n6\. \*#106\*/);
    expect(thread[1]).toContain('*New gaps since the last digest* (5)');
    expect(thread[1]).toContain('*Resolved since the last digest* (1)\n• *#Q-9* Is there a free plan?');
    expect(thread[2]).toContain('*Why gap 1 is lost:* *#101* Which analytics tool is best for question 1? (3 reasons)\n• high · content · Reason 1');
    expect(thread[2]).toContain('*Why gap 2 is lost:* *#102* Which analytics tool is best for question 2?\nNo reasoning card for this gap.');
    expect(thread[2]).toContain('The reasoning card lists no reasons.');
    expect(rendered.thread[2]!.text).toBe('Reasoning for gaps 1–3 of Acme Analytics');
  });

  it('renders a first run without deltas or change lists', () => {
    const rendered = renderDigest(makeInput({ previous: null }));
    expectValid(rendered);
    expect(rendered).toMatchSnapshot();

    const all = allMessages(rendered).map(sectionTexts).join('\n');
    expect(all).not.toMatch(/▲|▼|no change/);
    expect(all).not.toContain('New gaps since');
    expect(sectionTexts(rendered.main)).toContain('First digest for this project');
    expect(sectionTexts(rendered.main)).toContain('*Visibility score*\n42.5%\n');
    expect(rendered.thread.map((m) => m.text)).toEqual(['More gaps for Acme Analytics (6–8 of 8)', 'Reasoning for gaps 1–3 of Acme Analytics']);
  });

  it('renders empty states: no gaps, no alerts, no engines, no metrics', () => {
    const input = makeInput({
      overview: { metrics: [], engines: [], alerts: [] },
      gaps: [],
      run: { eventId: 'evt-2', runId: 'run-43', answers: null, createdAt: '2026-11-08T09:30:00Z' },
    });
    const rendered = renderDigest(input);
    expectValid(rendered);
    expect(rendered).toMatchSnapshot();

    const main = sectionTexts(rendered.main);
    expect(main).toContain('No headline metrics in this run.');
    expect(main).toContain('*AI engines*\nNo per-engine rows in this run.');
    expect(main).toContain('*Alerts*\nNo alerts.');
    expect(main).toContain("*Worst gaps*\nNo gaps — the project isn't losing any tracked question in this run.");
    expect(main).toContain('Run run-43 · 2026-11-08 09:30 UTC'); // answers unknown: omitted
    expect(rendered.main.text).toBe('Visibility digest for Acme Analytics: no headline metrics · no gaps');
    // All four previous gaps are resolved; no reasoning replies without gaps.
    expect(rendered.thread).toHaveLength(1);
    expect(sectionTexts(rendered.thread[0]!)).toContain('*New gaps since the last digest* (0)\nNone.');
    expect(sectionTexts(rendered.thread[0]!)).toContain('*Resolved since the last digest* (4)');
  });

  it('renders 200 gaps within the limits, accounting for every gap', () => {
    const gaps = Array.from({ length: 200 }, (_, i) =>
      makeGap(i + 1, { prompt_text: `Which analytics tool handles use case number ${i + 1} best for a mid-sized e-commerce team with ${i % 7} analysts?` }),
    );
    const rendered = renderDigest(makeInput({ gaps }));
    expectValid(rendered);
    expect(rendered).toMatchSnapshot();

    expect(sectionTexts(rendered.main)).toContain('+195 more gaps in the thread');
    const moreReplies = rendered.thread.filter((m) => m.text.startsWith('More gaps'));
    expect(moreReplies.length).toBeGreaterThan(1);
    expect(moreReplies.length).toBeLessThanOrEqual(4);
    const listed = moreReplies.flatMap((m) => sectionTexts(m).split('\n')).filter((line) => /^\d+\. /.test(line));
    const ranks = listed.map((line) => Number(line.slice(0, line.indexOf('.'))));
    expect(ranks).toEqual(Array.from({ length: ranks.length }, (_, i) => i + 6));
    const notShown = /\+(\d+) more gaps not shown/.exec(sectionTexts(moreReplies.at(-1)!));
    expect(ranks.length + Number(notShown?.[1] ?? 0)).toBe(195);
    // 195 new since the previous digest's 3 known ones (+ 2 of the first 5 are new too).
    const changes = sectionTexts(rendered.thread.find((m) => m.text.startsWith('Gap changes'))!);
    expect(changes).toMatch(/\+\d+ more new gaps/);
  });

  it('escapes mention and link injection everywhere', () => {
    const evil = '<!channel> <@U123> <https://evil.example|click> & <!here>';
    const rendered = renderDigest(
      makeInput({
        project: { id: 'proj-1', name: 'Acme <!channel> & Co', industry: null },
        run: { eventId: 'evt-3', runId: 'run-<@U999>', answers: 3, createdAt: '2026-11-08T09:30:00Z' },
        overview: {
          metrics: [
            { label: 'Visibility <!here>', value: '<@U123>', caption: `Caption ${evil}` },
            { label: 'R&D share', value: '12%', caption: 'Tom & Jerry > Spike' },
          ],
          engines: [[['engine', '<https://evil.example|ChatGPT>'], ['note<!channel>', 'a & b']]],
          alerts: [[['title', evil], ['severity', '<!subteam^S1>']]],
        },
        gaps: [
          makeGap(1, { prompt_text: `Best tool? ${evil}`, top_competitor: 'Smith & Sons <!channel>', platforms_losing: ['<@U123>', 'Gem&ini'] }),
          makeGap(2, { prompt_ref: '<!channel>', top_competitor: 'AT&T' }),
        ],
        reasoning: new Map([['prompt-1', { reasons: [{ impact: '<!channel>', category: 'R&D', detail: evil }] }]]),
      }),
    );
    expectValid(rendered);
    expect(rendered).toMatchSnapshot();

    const json = JSON.stringify(rendered);
    for (const raw of ['<!channel>', '<@U123>', '<https://evil.example|click>', '<!here>', '<!subteam', 'Tom & Jerry', 'AT&T', 'R&D']) {
      expect(json).not.toContain(raw);
    }
    expect(json).not.toMatch(/[<>]/);
    expect(json).toContain('Acme &lt;!channel&gt; &amp; Co');
    expect(json).toContain('Smith &amp; Sons &lt;!channel&gt;');
    expect(json).toContain('&lt;https://evil.example|click&gt;');
    expect(json).toContain('Tom &amp; Jerry &gt; Spike');
    expect(sectionTexts(rendered.main)).toContain('*#&lt;!channel&gt;*');
  });

  it('cuts long emoji and CJK texts on grapheme boundaries', () => {
    const family = '👨‍👩‍👧‍👦';
    const longEmoji = `${'🇯🇵👍🏽'.repeat(5)}${family.repeat(200)}`;
    const longCjk = '日本語の質問文はとても長いです。'.repeat(100);
    const rendered = renderDigest(
      makeInput({
        project: { id: 'proj-1', name: `${family}${'プロジェクト'.repeat(40)}`, industry: null },
        overview: {
          metrics: [{ label: longCjk, value: longEmoji, caption: longEmoji }],
          engines: [[['engine', longEmoji], [longCjk, longCjk]]],
          alerts: [],
        },
        gaps: [makeGap(1, { prompt_text: longEmoji, top_competitor: longCjk, platforms_losing: [longEmoji, longCjk] }), makeGap(2, { prompt_text: longCjk })],
        reasoning: new Map([['prompt-1', { reasons: [{ impact: longEmoji, category: longCjk, detail: `${longCjk}${longEmoji}` }] }]]),
      }),
    );
    expectValid(rendered);
    expect(rendered).toMatchSnapshot();

    const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
    for (const text of allMessages(rendered).flatMap(textsOf)) {
      for (const { segment } of segmenter.segment(text)) {
        // Every emoji grapheme is whole: a family is complete, a flag is a pair, a thumb keeps its tone.
        if (segment.includes('\u200D')) expect(segment).toBe(family);
        if (/\p{Regional_Indicator}/u.test(segment)) expect(segment).toBe('🇯🇵');
        if (segment.startsWith('👍')) expect(segment).toBe('👍🏽');
      }
    }
    expect((rendered.main.blocks[0] as { text: { text: string } }).text.text.length).toBeLessThanOrEqual(150);
  });

  it('keeps a reasoning card with hundreds of reasons within the limits', () => {
    const reasons = makeReasons(600).map((r, i) => (i % 50 === 0 ? { ...r, detail: 'Very long detail. '.repeat(200) } : r));
    const rendered = renderDigest(makeInput({ reasoning: new Map([['prompt-1', { reasons }]]) }));
    expectValid(rendered);
    expect(rendered).toMatchSnapshot();

    const reply = rendered.thread.find((m) => m.text === 'Reasoning for gap 1 of Acme Analytics')!;
    const text = sectionTexts(reply);
    expect(text).toContain('(600 reasons)');
    const shown = text.split('\n').filter((line) => line.startsWith('• ')).length;
    const more = /\+(\d+) more reasons/.exec(text);
    expect(more).not.toBeNull();
    expect(shown + Number(more![1])).toBe(600);
    // The other top gaps still get their own reply.
    expect(rendered.thread.some((m) => m.text === 'Reasoning for gaps 2–3 of Acme Analytics')).toBe(true);
  });

  it('handles options, odd values and never produces NaN', () => {
    const input = makeInput({
      overview: {
        metrics: [
          { label: '', value: '', caption: '' },
          { label: 'Tiny', value: 0.004, caption: null },
          { label: 'Big', value: 1234567.891, caption: null },
          { label: 'Odd', value: Number.NaN, caption: null },
        ],
        engines: [[], [['engine', 'X'], ...Array.from({ length: 12 }, (_, i): [string, number] => [`f${i}`, i])]],
        alerts: [],
      },
      gaps: [makeGap(5, { prompt_ref: null, prompt_text: '  ', platforms_losing: [], top_competitor: '' }), makeGap(6, { prompt_ref: '#7', platforms_losing: [] })],
      previous: { ...PREVIOUS, metrics: { Tiny: 0.001, Big: 1, Odd: 3 } },
      options: { topGaps: 1, reasoningGaps: 0, maxGapReplies: 0 },
    });
    const rendered = renderDigest(input);
    expectValid(rendered);
    const main = sectionTexts(rendered.main);
    expect(main).toContain('*—*\n—');
    expect(main).toContain('*Tiny*\n0.004 (▲ 0.003)');
    expect(main).toContain('*Big*\n1,234,567.89 (▲ 1,234,566.89)');
    expect(main).toContain('*Odd*\n—');
    expect(main).toContain('• (empty row)');
    expect(main).toContain('f7: 7 · +4 more fields');
    expect(main).toContain('1. (no question text)\n+1 more gap\n');
    expect(rendered.thread.map((m) => m.text)).toEqual(['Gap changes for Acme Analytics: 2 new, 4 resolved']);
    expect(sectionTexts(rendered.thread[0]!)).toContain('• *#7* Which analytics tool is best for question 6? — losing to Initech');
  });

  it('is deterministic', () => {
    expect(renderDigest(makeInput())).toEqual(renderDigest(makeInput()));
  });

  it('renders event times in UTC whatever the offset given', () => {
    const rendered = renderDigest(makeInput({ run: { eventId: 'e', runId: 'r', answers: 1, createdAt: '2026-11-08T11:30:00+02:00' } }));
    expect(sectionTexts(rendered.main)).toContain('Run r · 1 answer · 2026-11-08 09:30 UTC');
    const raw = renderDigest(makeInput({ run: { eventId: 'e', runId: 'r', answers: 1, createdAt: 'yesterday <!here>' } }));
    expect(sectionTexts(raw.main)).toContain('yesterday &lt;!here&gt;');
  });
});

describe('renderDraftReady', () => {
  const base = { projectId: 'proj-1', assetId: 'asset-9', version: 3, createdAt: '2026-11-08T09:30:00Z' };

  it('renders the notice', () => {
    const message = renderDraftReady({ ...base, project: { id: 'proj-1', name: 'Acme <!channel> & Co', industry: null } });
    expectValid(message);
    expect(message).toMatchSnapshot();
    expect(message.text).toBe('Draft ready for Acme &lt;!channel&gt; &amp; Co: asset asset-9, version 3');
  });

  it.each<[unknown, string]>([
    [3, '3'],
    ['v2 <@U1>', 'v2 &lt;@U1&gt;'],
    [null, '—'],
    [undefined, '—'],
    [true, 'yes'],
    [{ major: 1, minor: '<b>' }, '{"major":1,"minor":"&lt;b&gt;"}'],
    [[1, 2], '[1,2]'],
  ])('renders version %j as %s', (version, shown) => {
    const message = renderDraftReady({ ...base, project: null, version });
    expectValid(message);
    const fields = (message.blocks[1] as Extract<KnownBlock, { type: 'section' }>).fields!;
    expect(fields[1]!.text).toBe(`*Version*\n${shown}`);
    expect(message.text).toContain('Draft ready for proj-1');
  });
});
