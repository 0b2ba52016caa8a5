/** The Slack preview's renderers: mrkdwn and Block Kit as HTML, with every service string escaped. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { blockHtml, messageBodyHtml } from '../../local/preview/blocks';
import { mrkdwnToHtml } from '../../local/preview/mrkdwn';
import { workspaceHtml, type PreviewMessage } from '../../local/preview/timeline';

describe('mrkdwnToHtml', () => {
  it.each([
    ['*bold* text', '<b>bold</b> text'],
    ['an _italic_ word', 'an <i>italic</i> word'],
    ['~gone~', '<s>gone</s>'],
    ['*_both_*', '<b><i>both</i></b>'],
    ['snake_case_name and 2*3*4', 'snake_case_name and 2*3*4'],
    ['* not bold *', '* not bold *'],
    ['`*code* &amp; <x>`', '<code>*code* &amp; &lt;x&gt;</code>'],
    ['```\nline *1*\n<b>\n```', '<pre>line *1*\n&lt;b&gt;</pre>'],
    [
      '<https://a.example/x?y=1&amp;z=2|the *site*>',
      '<a href="https://a.example/x?y=1&amp;z=2" target="_blank" rel="noopener noreferrer">the *site*</a>',
    ],
    ['<https://a.example>', '<a href="https://a.example" target="_blank" rel="noopener noreferrer">https://a.example</a>'],
    ['<#C0123|digests> and <#C0456>', '<span class="mention">#digests</span> and <span class="mention">#C0456</span>'],
    ['<@U0BOT> <!here>', '<span class="mention">@U0BOT</span> <span class="mention">@here</span>'],
    ['a &amp; b &lt;c&gt;', 'a &amp; b &lt;c&gt;'],
    ['&gt; quoted\n> also\nafter', '<blockquote>quoted<br>also</blockquote>after'],
    ['• one\n• two', '<span class="bullet">• one</span><span class="bullet">• two</span>'],
    ['line 1\nline 2', 'line 1<br>line 2'],
    [':memo: *Draft* :no_such_code: 12:30:45', '📝 <b>Draft</b> :no_such_code: 12:30:45'],
    ['`:memo:`', '<code>:memo:</code>'],
    [
      '<!date^1732000000^{date_short_pretty} {time}|2024-11-19T07:06:40Z>',
      '<time class="slack-date" datetime="2024-11-19T07:06:40.000Z" data-format="{date_short_pretty} {time}">2024-11-19T07:06:40Z</time>',
    ],
    [
      '<!date^0^{date}^https://a.example/x|then>',
      '<a href="https://a.example/x" target="_blank" rel="noopener noreferrer"><time class="slack-date" datetime="1970-01-01T00:00:00.000Z" data-format="{date}">then</time></a>',
    ],
    ['<!date^x^{date}|bad>', '<span class="mention">@bad</span>'],
  ])('%j → %j', (input, html) => {
    expect(mrkdwnToHtml(input)).toBe(html);
  });

  it('never links a javascript: target and shows its text escaped', () => {
    expect(mrkdwnToHtml('<javascript:alert(1)|"click">')).toBe('&quot;click&quot;');
  });

  it('produces no markup of its own from any text (only its fixed tags survive)', () => {
    const ownTags =
      /<(?:b|i|s|code|pre|br|blockquote|span class="(?:bullet|mention)"|a href="[^"<>]*" target="_blank" rel="noopener noreferrer")>|<\/(?:b|i|s|code|pre|blockquote|span|a)>/g;
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('<', '>', '&', '"', "'", '*', '_', '~', '`', '|', '\n', 'a', ' ', 'h', ':', '/', '#', '@') }),
        (text) => {
          const rest = mrkdwnToHtml(text).replace(ownTags, '');
          expect(rest).not.toMatch(/[<>"']/);
        },
      ),
    );
  });
});

describe('blockHtml', () => {
  it('renders a header as escaped plain text', () => {
    expect(blockHtml({ type: 'header', text: { type: 'plain_text', text: '<b>*Hi*</b>' } })).toBe(
      '<div class="block header">&lt;b&gt;*Hi*&lt;/b&gt;</div>',
    );
  });

  it('renders section text, fields and a button accessory', () => {
    const html = blockHtml({
      type: 'section',
      text: { type: 'mrkdwn', text: '*Score*' },
      fields: [
        { type: 'mrkdwn', text: '_a_' },
        { type: 'plain_text', text: '*b*' },
      ],
      accessory: { type: 'button', text: { type: 'plain_text', text: 'Open' }, url: 'https://x.example', style: 'danger' },
    });
    expect(html).toContain('<div class="text"><b>Score</b></div>');
    expect(html).toContain('<div class="field"><i>a</i></div><div class="field">*b*</div>');
    expect(html).toContain('<a class="button danger" href="https://x.example"');
  });

  it('renders context, divider and actions; a button without a safe url is not a link', () => {
    expect(blockHtml({ type: 'context', elements: [{ type: 'mrkdwn', text: '_ctx_' }] })).toBe(
      '<div class="block context"><span class="element"><i>ctx</i></span></div>',
    );
    expect(blockHtml({ type: 'divider' })).toBe('<hr class="block divider">');
    expect(
      blockHtml({
        type: 'actions',
        elements: [{ type: 'button', text: { type: 'plain_text', text: 'Go' }, url: 'javascript:x', action_id: 'go' }],
      }),
    ).toBe('<div class="block actions"><button type="button" class="button" title="go" data-action-id="go">Go</button></div>');
  });

  it('names an unknown block instead of dropping it', () => {
    expect(blockHtml({ type: '<video>' })).toBe('<div class="block unknown">[&lt;video&gt; block]</div>');
  });

  it('falls back to the text when a message has no blocks', () => {
    expect(messageBodyHtml({ text: 'just *text*' })).toBe(
      '<div class="block section"><div class="section-body"><div class="text">just <b>text</b></div></div></div>',
    );
  });
});

describe('chart and data table blocks', () => {
  const hostile = '<img src=x onerror=alert(1)>"&';
  const chart = (type: string) => ({
    type: 'data_visualization',
    title: hostile,
    chart: {
      type,
      series: [{ name: hostile, data: [{ label: hostile, value: 1 }] }],
      segments: [{ label: hostile, value: 1 }],
      axis_config: { categories: [hostile], x_label: hostile, y_label: hostile },
    },
  });

  it.each(['line', 'area', 'bar', 'pie'])('draws a %s chart with every text of the block escaped', (type) => {
    const html = blockHtml(chart(type));
    expect(html).toContain('<svg class="chart-svg"');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&amp;');
  });

  it('draws one path per series, each a line through its points in category order', () => {
    const block = {
      type: 'data_visualization',
      title: 'Visibility',
      chart: {
        type: 'line',
        series: [
          {
            name: 'ChatGPT',
            data: [
              { label: 'a', value: 0 },
              { label: 'b', value: 100 },
            ],
          },
          {
            name: 'Claude',
            data: [
              { label: 'a', value: 50 },
              { label: 'b', value: 50 },
            ],
          },
        ],
        axis_config: { categories: ['a', 'b'] },
      },
    };
    const paths = [...blockHtml(block).matchAll(/<path class="series" data-series="([^"]+)" d="([^"]+)"/g)].map((m) => [m[1], m[2]]);
    expect(paths.map(([name]) => name)).toEqual(['ChatGPT', 'Claude']);
    // Each goes left to right; ChatGPT rises (SVG y grows downwards), Claude stays level.
    const [rise, level] = paths.map(([, d]) => [...d!.matchAll(/[ML]([\d.]+) ([\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]));
    expect(rise![0]![0]).toBeLessThan(rise![1]![0]!);
    expect(rise![0]![1]).toBeGreaterThan(rise![1]![1]!);
    expect(level![0]![1]).toBe(level![1]![1]);
  });

  it('renders a data table with the body past page_size hidden, the row header column as row headers, all text escaped', () => {
    const raw = (text: string) => ({ type: 'raw_text', text });
    const html = blockHtml({
      type: 'data_table',
      caption: hostile,
      page_size: 2,
      rows: [[raw(hostile), raw('n')], ...[1, 2, 3].map((i) => [raw(`row ${i}`), { type: 'raw_number', value: i, text: `${i} %` }])],
    });
    expect(html).not.toContain('<img');
    expect(html).toContain(`<caption>&lt;img src=x onerror=alert(1)&gt;&quot;&amp;</caption>`);
    expect(html).toContain('<th scope="col" class="num">n</th>');
    expect([...html.matchAll(/<tr( hidden)?><th scope="row">row (\d)/g)].map((m) => [m[2], m[1] !== undefined])).toEqual([
      ['1', false],
      ['2', false],
      ['3', true],
    ]);
    expect(html).toContain('<span class="table-range">1–2 of 3</span>');
  });
});

describe('workspaceHtml', () => {
  const message = (ts: string, extra: Partial<PreviewMessage> = {}): PreviewMessage => ({
    channel: 'digests',
    ts,
    thread_ts: undefined,
    text: `message ${ts}`,
    blocks: undefined,
    edited: false,
    ...extra,
  });

  it('collapses replies under their parent with a count, and lists channels', () => {
    const html = workspaceHtml(
      [
        message('1.000001'),
        message('1.000002', { thread_ts: '1.000001' }),
        message('1.000003', { thread_ts: '1.000001', edited: true }),
        message('2.000001', { channel: 'other' }),
      ],
      { botName: 'bridge', workspace: 'Local' },
    );
    expect(html).toContain('<details class="thread" data-ts="1.000001"><summary><span class="reply-count">2 replies</span>');
    expect(html.match(/<article class="message" /g)).toHaveLength(2);
    expect(html.match(/<article class="message reply" /g)).toHaveLength(2);
    expect(html).toContain('<span class="edited">(edited)</span>');
    expect(html).toContain(
      '<button type="button" data-channel="digests" data-name="digests"># digests<span class="count">1</span></button>',
    );
    expect(html).toContain('<span class="channel">#other</span>');
  });

  it('shows channels by name while messages and buttons keep their ids; a named channel without messages is listed', () => {
    const html = workspaceHtml([message('1.000001', { channel: 'C0LOCALDIGEST' })], {
      botName: 'bridge',
      workspace: 'Local',
      channelNames: { C0LOCALDIGEST: 'visibility-digests', C0LOCALDEMO: 'visibility-demo' },
    });
    expect(html).toContain('data-channel="C0LOCALDIGEST"><div class="avatar"');
    expect(html).toContain('<span class="channel">#visibility-digests</span>');
    expect(html).toContain(
      '<button type="button" data-channel="C0LOCALDEMO" data-name="visibility-demo"># visibility-demo<span class="count">0</span></button>',
    );
    expect(html).toContain(
      '<button type="button" data-channel="C0LOCALDIGEST" data-name="visibility-digests"># visibility-digests<span class="count">1</span></button>',
    );
  });

  it("shows a channel mention by the workspace's name for it, in text and in blocks, as Slack does; an unknown id stays an id", () => {
    const channelNames = { C0LOCALDEMO: 'visibility-demo' };
    const html = workspaceHtml(
      [
        message('1.1', { channel: 'C0LOCALDIGEST', text: 'see <#C0LOCALDEMO> and <#C0GONE>' }),
        message('1.2', {
          channel: 'C0LOCALDIGEST',
          blocks: [
            { type: 'section', text: { type: 'mrkdwn', text: 'subscribed in <#C0LOCALDEMO>' } },
            { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'channel', channel_id: 'C0LOCALDEMO' }] }] },
          ],
        }),
      ],
      { botName: 'bridge', workspace: 'Local', channelNames },
    );
    expect(html).toContain('see <span class="mention">#visibility-demo</span> and <span class="mention">#C0GONE</span>');
    expect(html).toContain('subscribed in <span class="mention">#visibility-demo</span>');
    expect(html).toContain('<div><span class="mention">#visibility-demo</span></div>');
    expect(html).not.toContain('#C0LOCALDEMO');
  });

  it('escapes channel names and the bot name', () => {
    const html = workspaceHtml([message('1.5', { channel: '"><script>' })], { botName: '<i>bot</i>', workspace: '<w>' });
    expect(html).not.toMatch(/<script>|<i>bot|<w>/);
  });
});
