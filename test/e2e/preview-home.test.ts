/**
 * The preview's Home tab in a real headless Chromium, on the local stack: opening /slack/home sends the
 * bridge a signed `app_home_opened` through the local Slack server; the bridge's Slack function queues
 * the publish, the digest function builds the portfolio and calls `views.publish`, and the page shows
 * the published view without a reload. A Next button re-publishes the next page. Its dates read as Slack
 * writes them, and its channel select lists the workspace's channels: picking one subscribes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { LocalStack } from '../../local/stack';
import { launchChromium, requireChromiumOnCi, skipBrowserTests } from './browser';
import { simulatorOf, slackOf, startTestStack } from './helpers';

let stack: LocalStack;
let browser: Browser;
let page: Page;

requireChromiumOnCi();

describe.skipIf(skipBrowserTests())("the preview's Home tab", () => {
  beforeAll(async () => {
    browser = await launchChromium();
    stack = await startTestStack();
    const sent = simulatorOf(stack).triggerRun(stack.projectIds[0]!);
    await sent.delivered;
    await stack.waitForIdle();
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('opens the Home tab and shows the portfolio the bridge published, every project, without a reload', async () => {
    await page.goto(`${stack.gateway.url}/slack/home`);
    const view = page.locator('#home .home-view');
    await view.waitFor({ state: 'visible', timeout: 60_000 });
    await expect(view.locator('.block.header').first().textContent()).resolves.toContain('every project');
    const published = slackOf(stack).homeView();
    expect(published?.view.blocks.length).toBeLessThanOrEqual(100);
    const projectBlocks = JSON.stringify(published?.view.blocks).match(/home_project:/g) ?? [];
    expect(projectBlocks).toHaveLength(stack.projectIds.length);
    // The digested project has its digest's mark, and a link to its digest.
    await expect(view.locator('a.button', { hasText: 'Open latest digest' }).first().getAttribute('href')).resolves.toMatch(
      /^https:\/\/slack\.com\/(archives|app_redirect)/,
    );
    await expect(page.locator('.topbar-tab.selected').textContent()).resolves.toBe('Home');
  });

  it("writes the tab's dates as Slack does, in words of the reader's time, never as ISO text", async () => {
    const summary = page.locator('#home .home-view .block.context').first();
    await expect(summary.locator('time.slack-date').first().textContent()).resolves.toMatch(/^(today|yesterday) \d{1,2}:\d{2}\s?[AP]M$/);
    await expect(page.locator('#home').textContent()).resolves.not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:/);
  });

  it("lists the workspace's channels in a project's select, and picking one subscribes that channel", async () => {
    const select = page.locator('#home select[data-action-id]').first();
    await expect(select.locator('option:not([disabled])').allTextContents()).resolves.toEqual([
      '# visibility-demo',
      '# visibility-digests',
    ]);
    await expect(page.locator('#home .block.context', { hasText: '#visibility-demo' }).count()).resolves.toBe(0);
    await select.selectOption('C0LOCALDEMO');
    // The Home tab names the channel as Slack shows a mention: by its name.
    await page.locator('#home .block.context', { hasText: '#visibility-demo' }).first().waitFor({ timeout: 60_000 });
  });
});
