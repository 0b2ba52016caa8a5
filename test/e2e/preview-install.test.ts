/**
 * "Add to Slack" from the preview in a real headless Chromium, on a stack with one client
 * (`connections: 1`): the workspaces page lists the local Slack's workspaces; its Add to Slack goes
 * through the bridge's /slack/install, the local Slack's install page (where the workspace is picked)
 * and /slack/oauth_redirect, and the workspace is then installed: the page says so and the bridge
 * stored its installation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { LocalStack } from '../../local/stack';
import { DynamoInstallationStore } from '../../shared/adapters/dynamo-installation-store';
import { launchChromium, requireChromiumOnCi, skipBrowserTests } from './browser';
import { slackOf, startTestStack } from './helpers';

let stack: LocalStack;
let browser: Browser;
let page: Page;

requireChromiumOnCi();

describe.skipIf(skipBrowserTests())('the preview install page', () => {
  beforeAll(async () => {
    [browser, stack] = await Promise.all([launchChromium(), startTestStack({ secretsManagerPort: 0, connections: 1 })]);
    page = await browser.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const row = (teamId: string) => page.locator(`tr[data-team="${teamId}"]`);

  it('lists each local Slack workspace, the client installed at start and linked to its connection', async () => {
    await page.goto(stack.workspacesUrl ?? '');
    const own = slackOf(stack).teamId;
    await expect(row('T0CLIENTA').locator('.state').textContent()).resolves.toBe('installed');
    await expect(row('T0CLIENTA').textContent()).resolves.toContain('client-a → #client-a-digests');
    await expect(row(own).locator('.state').textContent()).resolves.toBe('not installed');
  });

  it('installs the app in a workspace picked on the local Slack, through the bridge redirect', async () => {
    const slack = slackOf(stack);
    await page.goto(stack.workspacesUrl ?? '');
    await page.click('#add-to-slack');
    // The bridge's install page: its Add to Slack link carries the signed state (its cookie is set now).
    await page.locator('a[href*="/oauth/v2/authorize"]').click();
    await expect(page.locator('#allow-T0CLIENTA').textContent()).resolves.toBe('Allow in Client A');
    await page.click('#allow');
    await expect(page.locator('body').textContent()).resolves.toContain(`The app is installed in the workspace ${slack.teamId}`);
    const installation = await new DynamoInstallationStore(stack.dynamo.client, { tableName: stack.dynamo.tableName }).get(slack.teamId);
    expect(installation?.teamId).toBe(slack.teamId);
    await page.goto(stack.workspacesUrl ?? '');
    await expect(row(slack.teamId).locator('.state').textContent()).resolves.toBe('installed');
  }, 60_000);
});
