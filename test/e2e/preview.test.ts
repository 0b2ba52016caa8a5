/**
 * The Slack preview in a real headless Chromium: the local stack runs the demo digest, the page at
 * /slack on the webhook port shows it as Slack would, and later posts and edits appear without a reload.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebClient, type Block as SlackBlock } from '@slack/web-api';
import type { Browser, Page } from 'playwright-core';
import { LOCAL_DEFAULTS, type LocalStack } from '../../local/stack';
import type { PostedMessage } from '../../local/slack/server';
import { CHART_PALETTE } from '../../shared/charts/palette';
import { escapeSlackText } from '../../shared/slack-text';
import { launchChromium, requireChromiumOnCi, skipBrowserTests } from './browser';
import { simulatorOf, slackOf, startTestStack, threadsFor } from './helpers';

let stack: LocalStack;
let browser: Browser;
let page: Page;
let slack: WebClient;
let digest: { main: PostedMessage; replies: PostedMessage[] };

/** The few DOM calls the layout checks make in the page (the project's lib has no DOM types). */
interface Box {
  top: number;
  width: number;
}
interface DomNode {
  getBoundingClientRect(): Box;
  querySelector(selector: string): DomNode | null;
  previousSibling: DomNode | null;
  offsetParent: unknown;
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
  dataset: Record<string, string | undefined>;
}
declare const document: { createRange(): { selectNode(node: DomNode): void; getBoundingClientRect(): Box } };
declare function getComputedStyle(node: DomNode): { lineHeight: string };

type Block = { type?: string; text?: { text?: string }; fields?: { text?: string }[] };

/** The digest's headline (its first section) as the page should show it: mrkdwn markers gone, links as their label. */
function headlineOf(message: PostedMessage): string {
  const first = (message.blocks as Block[] | undefined)?.find((b) => b.type === 'section');
  if (!first?.text?.text) throw new Error('the digest has no headline section');
  return first.text.text
    .replace(/<[^|>]+\|([^>]+)>/g, '$1')
    .replace(/(^|[^\w])[*_~]|[*_~](?=[^\w]|$)/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The first *bold* run of the message's section text, as Slack would show it (entities decoded). */
function firstBoldRun(message: PostedMessage): string {
  const texts = ((message.blocks as Block[] | undefined) ?? []).flatMap((b) => [
    b.text?.text ?? '',
    ...(b.fields ?? []).map((f) => f.text ?? ''),
  ]);
  for (const text of texts) {
    const run = /(?:^|[^\w*])\*(\S[^*\n]*?\S|\S)\*(?![\w*])/.exec(text)?.[1];
    if (run !== undefined) return run.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }
  throw new Error('the digest has no bold run');
}

requireChromiumOnCi();

describe.skipIf(skipBrowserTests())('the Slack preview page', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    stack = await startTestStack();
    slack = new WebClient(LOCAL_DEFAULTS.slackToken, { slackApiUrl: slackOf(stack).apiUrl });
    // The demo run `npm start` sends once ready (on a test stack, without the seeded history: the project's baseline), then a run with changes to tell, in a thread.
    for (let run = 0; run < 2; run++) {
      const sent = simulatorOf(stack).triggerRun(stack.projectIds[0]!);
      await sent.delivered;
      await stack.waitForIdle();
      const [thread] = threadsFor(stack, sent.event.id);
      if (!thread) throw new Error(`run ${run + 1} posted no digest`);
      digest = thread;
    }
    page = await browser.newPage();
    await page.goto(`${stack.gateway.url}/slack`);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('shows a digest: headline, bold text, channel and its collapsed thread', async () => {
    const message = page.locator(`.messages > .message[data-ts="${digest.main.ts}"]`);
    await expect(message.locator('.body .section').first().textContent()).resolves.toBe(headlineOf(digest.main));
    expect(await message.locator('.body b').allTextContents()).toContain(firstBoldRun(digest.main));
    // Messages carry the channel's id (C0LOCALDIGEST); the page shows its name, as Slack does.
    await expect(message.locator('.meta .channel').textContent()).resolves.toBe('#visibility-digests');
    await expect(message.getAttribute('data-channel')).resolves.toBe(stack.slackChannel);

    const replies = digest.replies.length;
    expect(replies).toBeGreaterThan(0);
    await expect(message.locator('.reply-count').textContent()).resolves.toBe(`${replies} ${replies === 1 ? 'reply' : 'replies'}`);
    const replyList = message.locator('.replies');
    expect(await replyList.isVisible()).toBe(false);
    await message.locator('.thread summary').click();
    await replyList.waitFor({ state: 'visible' });
    expect(await replyList.locator('.message').count()).toBe(replies);
  });

  it('shows a new message, its link and button live, without a reload, and renders no markup from its text', async () => {
    await page.evaluate(() => {
      (globalThis as { previewMarker?: string }).previewMarker = 'same page';
    });
    const injected = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';
    await slack.chat.postMessage({
      channel: '#release-notes',
      text: 'fallback',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: `Live check ${injected}` } },
        {
          type: 'section',
          text: { type: 'mrkdwn', text: `See <https://example.com/runs/1?a=1&amp;b=2|the *run*> &amp; ${escapeSlackText(injected)}` },
          // Unescaped angle brackets are Slack references: shown as text, never as markup.
          fields: [{ type: 'mrkdwn', text: `raw ${injected}` }],
        },
        {
          type: 'actions',
          elements: [
            { type: 'button', text: { type: 'plain_text', text: 'Open dashboard' }, url: 'https://example.com/dash', style: 'primary' },
          ],
        },
        { type: 'context', elements: [{ type: 'mrkdwn', text: '_sent by the e2e test_' }] },
      ],
    });

    const live = page.locator('.messages > .message', { hasText: 'Live check' });
    await live.waitFor({ state: 'visible' });
    await expect(live.locator('.header').textContent()).resolves.toBe(`Live check ${injected}`);
    const link = live.locator('.section a');
    await expect(link.getAttribute('href')).resolves.toBe('https://example.com/runs/1?a=1&b=2');
    await expect(link.textContent()).resolves.toBe('the *run*');
    await expect(live.locator('a.button.primary').getAttribute('href')).resolves.toBe('https://example.com/dash');
    await expect(live.locator('.meta .channel').textContent()).resolves.toBe('#release-notes');
    await expect(live.locator('.context i').textContent()).resolves.toBe('sent by the e2e test');

    expect(await page.locator('.messages img, .messages script').count()).toBe(0);
    expect(await live.locator('.section .text').textContent()).toBe(`See the *run* & ${injected}`);
    expect(await live.locator('.section .field').textContent()).toContain('onerror="window.pwned=1"');
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.evaluate(() => (globalThis as { previewMarker?: string }).previewMarker)).toBe('same page');
  });

  it('reflects a chat.update and a new thread reply live', async () => {
    const posted = await slack.chat.postMessage({ channel: '#release-notes', text: 'Before the *edit*' });
    const message = page.locator(`.messages > .message[data-ts="${posted.ts}"]`);
    await message.locator('b', { hasText: 'edit' }).waitFor();

    await slack.chat.update({ channel: '#release-notes', ts: posted.ts!, text: 'After the ~edit~' });
    await message.locator('s', { hasText: 'edit' }).waitFor();
    await expect(message.locator('.meta .edited').textContent()).resolves.toBe('(edited)');

    await slack.chat.postMessage({ channel: '#release-notes', thread_ts: posted.ts!, text: 'a reply' });
    await message.locator('.reply-count', { hasText: '1 reply' }).waitFor();
    expect(await page.evaluate(() => (globalThis as { previewMarker?: string }).previewMarker)).toBe('same page');
  });

  it('sends a slash command typed in the composer and a click on a digest button, and shows the answers', async () => {
    // Typed by name, as people do: the local Slack delivers it with the channel's id.
    await page.locator('#composer-channel').fill('visibility-digests');
    await page.locator('#composer-line').fill('/visibility help');
    await page.locator('#composer button[type="submit"]').click();
    const help = page.locator('.messages > .message.ephemeral', { hasText: '/visibility subscribe' });
    await help.waitFor({ state: 'visible' });
    await expect(help.locator('.only-you').textContent()).resolves.toBe('Only visible to you');
    await expect(page.locator('#composer-line').inputValue()).resolves.toBe('');

    const message = page.locator(`.messages > .message[data-ts="${digest.main.ts}"]`);
    await message.locator('button[data-action-id="mute_7d"]').click();
    await message.locator('.meta .edited').waitFor({ state: 'visible' });
    expect(await message.locator('.context').last().textContent()).toMatch(/muted/i);
    expect(
      slackOf(stack)
        .messages()
        .find((m) => m.ts === digest.main.ts)?.edited,
    ).toBe(true);
  });

  it('lays out a message without blocks (every slash-command answer) as one flowing paragraph, not as columns', async () => {
    const words = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    const posted = await slack.chat.postMessage({ channel: '#answers', text: `${words} *the bold part* and the rest` });
    const body = page.locator(`.messages > .message[data-ts="${posted.ts}"] .body`);
    await body.locator('b').waitFor();
    const layout = await body.evaluate((element) => {
      const el = element as unknown as DomNode;
      const box = el.getBoundingClientRect();
      const bold = el.querySelector('b');
      const before = document.createRange();
      if (bold?.previousSibling) before.selectNode(bold.previousSibling);
      return {
        width: box.width,
        textWidth: before.getBoundingClientRect().width,
        boldTop: (bold?.getBoundingClientRect().top ?? box.top) - box.top,
        lineHeight: parseFloat(getComputedStyle(el).lineHeight),
      };
    });
    // The words before the bold part fill whole lines, and the bold part follows them on a later line.
    expect(layout.textWidth).toBeGreaterThan(layout.width * 0.8);
    expect(layout.boldTop).toBeGreaterThanOrEqual(layout.lineHeight);
  });

  it("shows only the clicked channel's messages, and every message again under All messages", async () => {
    await slack.chat.postMessage({ channel: '#filtered', text: 'only in the filtered channel' });
    const own = page.locator('.messages > .message', { hasText: 'only in the filtered channel' });
    await own.waitFor();
    const other = page.locator(`.messages > .message[data-ts="${digest.main.ts}"]`);

    await page.locator('.channels button[data-channel="filtered"]').click();
    await expect(page.locator('#title').textContent()).resolves.toBe('# filtered');
    const shown = await page
      .locator('.messages > .message')
      .evaluateAll((els) => (els as unknown as DomNode[]).filter((el) => el.offsetParent !== null).map((el) => el.dataset.channel));
    expect(shown).toEqual(['filtered']);
    expect(await other.isVisible()).toBe(false);

    await page.locator('.channels button[data-channel=""]').click();
    expect(await other.isVisible()).toBe(true);
    expect(await own.isVisible()).toBe(true);
  });

  it("writes Slack date tokens in the reader's time zone and :emoji: codes as emoji", async () => {
    const posted = await slack.chat.postMessage({
      channel: '#dates',
      text: ':memo: Draft ready <!date^1732000000^{date_short_pretty} at {time}|2024-11-19T07:06:40Z> · <!date^1732000000^{date_num} {time_secs}|fallback>',
    });
    const context = await browser.newContext({ timezoneId: 'Asia/Tokyo', locale: 'en-US' });
    try {
      const tokyo = await context.newPage();
      await tokyo.goto(`${stack.gateway.url}/slack`);
      const text = tokyo.locator(`.messages > .message[data-ts="${posted.ts}"] .body`);
      // 1732000000 is 2024-11-19 07:06:40 UTC: 16:06:40 in Tokyo.
      await expect(text.textContent().then((t) => t?.replace(/\s/g, ' '))).resolves.toBe(
        '📝 Draft ready Nov 19, 2024 at 4:06 PM · 2024-11-19 4:06:40 PM',
      );
      expect(await text.locator('.mention').count()).toBe(0);
      await expect(text.locator('time').first().getAttribute('datetime')).resolves.toBe('2024-11-19T07:06:40.000Z');
    } finally {
      await context.close();
    }
  });

  it('draws a chart block as an SVG: one path per series in the palette order, axis labels and a legend naming each', async () => {
    const categories = ['Nov 1', 'Nov 8', 'Nov 15', 'Nov 22'];
    const engines = ['ChatGPT', 'Claude', 'Gemini <b>'];
    const series = engines.map((name, i) => ({ name, data: categories.map((label, j) => ({ label, value: 40 + i * 5 + j })) }));
    // Slack's types do not have the chart block yet (@slack/types 3.2.0).
    const blocks: unknown[] = [
      {
        type: 'data_visualization',
        title: 'Visibility by engine (%)',
        chart: { type: 'line', series, axis_config: { categories, x_label: 'Week', y_label: 'Visibility (%)' } },
      },
      {
        type: 'data_visualization',
        title: 'Share of answers',
        chart: {
          type: 'pie',
          segments: [
            { label: 'Cited', value: 3 },
            { label: 'Not cited', value: 1 },
          ],
        },
      },
    ];
    const posted = await slack.chat.postMessage({
      channel: '#charts',
      text: 'Visibility by engine: ChatGPT 43 %, Claude 48 %, Gemini 53 %',
      blocks: blocks as SlackBlock[],
    });
    const charts = page.locator(`.messages > .message[data-ts="${posted.ts}"] .chart`);
    await charts.first().waitFor();
    const line = charts.nth(0);
    await expect(line.locator('.chart-title').textContent()).resolves.toBe('Visibility by engine (%)');
    const paths = line.locator('svg path.series');
    expect(await paths.count()).toBe(engines.length);
    const strokes = await Promise.all(engines.map((_, i) => paths.nth(i).getAttribute('stroke')));
    expect(strokes).toEqual(CHART_PALETTE.slice(0, engines.length));
    expect(await line.locator('.legend-name').allTextContents()).toEqual(engines);
    expect(await line.locator('svg .axis-label').allTextContents()).toEqual(['Week', 'Visibility (%)']);
    expect(await line.locator('svg .category').allTextContents()).toEqual(categories);
    const pie = charts.nth(1);
    expect(await pie.locator('svg path.series').count()).toBe(2);
    expect(await pie.locator('.chart-legend li').allTextContents()).toEqual(['Cited 75 %', 'Not cited 25 %']);
    expect(await page.locator('.messages b', { hasText: '<b>' }).count()).toBe(0);
  });

  it('shows a data table a page at a time (page_size), with its caption and header, and keeps the page through a refresh', async () => {
    const cell = (text: string) => ({ type: 'raw_text', text });
    const rows = Array.from({ length: 12 }, (_, i) => [
      cell(`Prompt ${i + 1}`),
      {
        type: 'rich_text',
        elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: `${i} engines`, style: { bold: true } }] }],
      },
    ]);
    const posted = await slack.chat.postMessage({
      channel: '#tables',
      text: 'Open gaps: 12 prompts',
      blocks: [
        { type: 'data_table', caption: 'Open gaps', page_size: 5, rows: [[cell('Prompt'), cell('Engines lost')], ...rows] },
      ] as unknown[] as SlackBlock[],
    });
    const table = page.locator(`.messages > .message[data-ts="${posted.ts}"] .data-table`);
    await table.waitFor();
    await expect(table.locator('caption').textContent()).resolves.toBe('Open gaps');
    expect(await table.locator('thead th').allTextContents()).toEqual(['Prompt', 'Engines lost']);
    const shown = async (): Promise<string[]> => table.locator('tbody tr:not([hidden]) th').allTextContents();
    expect(await shown()).toEqual(['Prompt 1', 'Prompt 2', 'Prompt 3', 'Prompt 4', 'Prompt 5']);
    expect(await table.locator('tbody tr:not([hidden]) td b').first().textContent()).toBe('0 engines');
    const previous = table.locator('[data-table-page="prev"]');
    const next = table.locator('[data-table-page="next"]');
    expect(await previous.isDisabled()).toBe(true);

    await next.click();
    expect(await shown()).toEqual(['Prompt 6', 'Prompt 7', 'Prompt 8', 'Prompt 9', 'Prompt 10']);
    await expect(table.locator('.table-range').textContent()).resolves.toBe('6–10 of 12');
    await next.click();
    expect(await shown()).toEqual(['Prompt 11', 'Prompt 12']);
    expect(await next.isDisabled()).toBe(true);
    await previous.click();
    await expect(table.locator('.table-range').textContent()).resolves.toBe('6–10 of 12');

    // A new message re-renders the timeline: the table stays on the page the reader chose.
    await slack.chat.postMessage({ channel: '#tables', text: 'a later message' });
    await page.locator('.messages > .message', { hasText: 'a later message' }).waitFor();
    expect(await shown()).toEqual(['Prompt 6', 'Prompt 7', 'Prompt 8', 'Prompt 9', 'Prompt 10']);
  });

  it('opens scrolled to the newest message, as Slack does', async () => {
    let last = '';
    for (let i = 0; i < 30; i++) last = (await slack.chat.postMessage({ channel: '#busy', text: `busy message ${i}` })).ts!;
    const fresh = await browser.newPage({ viewport: { width: 1000, height: 600 } });
    try {
      await fresh.goto(`${stack.gateway.url}/slack`);
      await fresh.locator('.status.live').waitFor();
      const list = await fresh.locator('.messages').evaluate((element) => {
        const el = element as unknown as DomNode;
        return { top: el.scrollTop, height: el.scrollHeight, client: el.clientHeight };
      });
      expect(list.height).toBeGreaterThan(list.client * 2);
      expect(list.top + list.client).toBeGreaterThanOrEqual(list.height - 2);
      const newest = await fresh.locator(`.messages > .message[data-ts="${last}"]`).boundingBox();
      expect(newest).not.toBeNull();
      expect(newest!.y + newest!.height).toBeLessThanOrEqual(600);
    } finally {
      await fresh.close();
    }
  });
});
