import { describe, expect, it } from 'vitest';
import { mrkdwnToPlain, renderConversation, renderMessageAsText } from '../../local/slack/server';

const digestBlocks: unknown[] = [
  { type: 'header', text: { type: 'plain_text', text: 'Acme — visibility digest' } },
  {
    type: 'section',
    text: { type: 'mrkdwn', text: 'Visibility *42%* (+3 pts) &amp; rising' },
    fields: [
      { type: 'mrkdwn', text: '*Runs*\n12' },
      { type: 'mrkdwn', text: '*Gaps*\n3' },
    ],
  },
  { type: 'divider' },
  {
    type: 'context',
    elements: [
      { type: 'mrkdwn', text: 'run <https://example.test/r/1|r_1>' },
      { type: 'plain_text', text: '2026-11-01' },
    ],
  },
];

describe('renderMessageAsText', () => {
  it('renders header, section text and fields, divider and context as plain text', () => {
    const text = renderMessageAsText({ channel: '#alerts', ts: '1700000000.000100', text: 'fallback', blocks: digestBlocks });
    expect(text).toBe(
      [
        '#alerts  1700000000.000100',
        '# Acme — visibility digest',
        'Visibility *42%* (+3 pts) & rising',
        '  • *Runs* 12',
        '  • *Gaps* 3',
        '─'.repeat(40),
        '  run r_1 (https://example.test/r/1) · 2026-11-01',
      ].join('\n'),
    );
  });

  it('indents a thread reply under its parent with ↳', () => {
    const reply = renderMessageAsText({
      channel: 'alerts',
      ts: '1700000000.000200',
      thread_ts: '1700000000.000100',
      text: 'fallback',
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: 'Gap 1: *pricing page*\nGap 2: docs' } },
        { type: 'context', elements: [{ type: 'mrkdwn', text: 'page 1 of 1' }] },
      ],
    });
    expect(reply).toBe(['  ↳ Gap 1: *pricing page*', '    Gap 2: docs', '      page 1 of 1'].join('\n'));
  });

  it('falls back to the text when there are no blocks', () => {
    expect(renderMessageAsText({ text: 'Hi <@U123> see <#C42|alerts> <!here>' })).toBe('Hi @U123 see #alerts @here');
  });

  it('renders rich_text sections, lists, quotes and preformatted text', () => {
    const text = renderMessageAsText({
      blocks: [
        {
          type: 'rich_text',
          elements: [
            {
              type: 'rich_text_section',
              elements: [
                { type: 'text', text: 'Top gaps ' },
                { type: 'link', url: 'https://example.test', text: 'dashboard' },
                { type: 'emoji', name: 'warning' },
              ],
            },
            {
              type: 'rich_text_list',
              style: 'bullet',
              elements: [
                { type: 'rich_text_section', elements: [{ type: 'text', text: 'pricing' }] },
                { type: 'rich_text_section', elements: [{ type: 'text', text: 'docs' }] },
              ],
            },
            {
              type: 'rich_text_list',
              style: 'ordered',
              indent: 1,
              elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'first' }] }],
            },
            { type: 'rich_text_quote', elements: [{ type: 'text', text: 'quoted' }] },
            { type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'code' }] },
          ],
        },
      ],
    });
    expect(text).toBe(
      ['Top gaps dashboard (https://example.test):warning:', '• pricing', '• docs', '  1. first', '> quoted', '```', 'code', '```'].join(
        '\n',
      ),
    );
  });

  it('names blocks it does not know instead of dropping them', () => {
    expect(
      renderMessageAsText({
        blocks: [
          { type: 'video' },
          'junk',
          { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open' }, url: 'https://x.test' }] },
        ],
      }),
    ).toBe('[video block]\n[Open] https://x.test');
  });
});

describe('renderMessageAsText: chart and data table blocks', () => {
  it('writes a chart as its title and one line per series, a pie one per segment', () => {
    const series = (name: string, values: number[]) => ({ name, data: values.map((value, i) => ({ label: `w${i}`, value })) });
    expect(
      renderMessageAsText({
        blocks: [
          {
            type: 'data_visualization',
            title: 'Visibility (%)',
            chart: { type: 'line', series: [series('ChatGPT', [40, 42]), series('Claude', [38, 37])] },
          },
          { type: 'data_visualization', title: 'Share', chart: { type: 'pie', segments: [{ label: 'Cited', value: 3 }] } },
        ],
      }),
    ).toBe('📈 Visibility (%) (line chart)\n  • ChatGPT: w0 40, w1 42\n  • Claude: w0 38, w1 37\n📈 Share (pie chart)\n  • Cited 3');
  });

  it('writes a data table as its caption and one line per row, rich text cells as their text', () => {
    const rich = { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: '−2.1 pts' }] }] };
    expect(
      renderMessageAsText({
        blocks: [
          {
            type: 'data_table',
            caption: 'AI engines',
            rows: [
              [
                { type: 'raw_text', text: 'Engine' },
                { type: 'raw_text', text: 'Change' },
              ],
              [{ type: 'raw_text', text: 'Gemini' }, rich],
            ],
          },
        ],
      }),
    ).toBe('▦ AI engines\n  Engine | Change\n  Gemini | −2.1 pts');
  });
});

describe('renderConversation', () => {
  it('puts each reply under its parent, whatever the posting order', () => {
    const text = renderConversation([
      { channel: 'a', ts: '1.000100', text: 'parent one' },
      { channel: 'a', ts: '1.000200', text: 'parent two' },
      { channel: 'a', ts: '1.000300', thread_ts: '1.000100', text: 'reply to one' },
      { channel: 'a', ts: '1.000400', thread_ts: '1.000999', text: 'orphan' },
    ]);
    expect(text).toBe(['#a  1.000100', 'parent one', '  ↳ reply to one', '#a  1.000200', 'parent two', '  ↳ orphan'].join('\n'));
  });
});

describe('mrkdwnToPlain', () => {
  it('unescapes entities and resolves links', () => {
    expect(mrkdwnToPlain('a &lt;b&gt; <mailto:x@y.test|mail> <https://z.test>')).toBe('a <b> mail (mailto:x@y.test) https://z.test');
  });
});
