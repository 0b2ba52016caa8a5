/**
 * Takes docs/preview.png: starts the local stack, seeds the demo history, sends a run and a second run
 * of the project, opens the preview (scrolled to the newest message, as Slack opens; threads
 * collapsed under their digest), types `/visibility list` in the message box (its answer shows only
 * to the user), and screenshots it. Run with `npx tsx local/preview/screenshot.ts [file]`.
 */
import { seedDemoHistory } from '../demo-history';
import { startLocalStack } from '../stack';
import { launchChromium } from './chromium';

async function main(file: string): Promise<void> {
  const stack = await startLocalStack({ port: 0, logLevel: 'silent' });
  const browser = await launchChromium();
  try {
    const simulator = stack.simulator;
    const project = stack.projectIds[0];
    if (!simulator || project === undefined) throw new Error('the local stack has no simulator project');
    // Earlier days' runs as `npm start`'s demo has them (so Slack's chart has a trend to draw); the first
    // run is the project's baseline, the second has changes to tell.
    await seedDemoHistory(stack, project);
    for (let run = 0; run < 2; run++) {
      await simulator.triggerRun(project).delivered;
      await stack.waitForIdle();
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 }, deviceScaleFactor: 1 });
    await page.goto(`${stack.gateway.url}/slack`);
    await page.locator('.status.live').waitFor();
    await page.locator('#composer-line').fill('/visibility list');
    await page.locator('#composer button[type="submit"]').click();
    await page.locator('.message.ephemeral').waitFor();
    await page.locator('#composer-line').fill('/visibility subscribe Northwind');
    await page.mouse.move(0, 0); // no hover highlight in the picture
    await page.screenshot({ path: file });
    console.log(`wrote ${file}`);
  } finally {
    await browser.close();
    await stack.close();
  }
}

main(process.argv[2] ?? 'docs/preview.png').catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
