/** When the browser tests run: always on CI (a missing Chromium fails them), elsewhere only with Chromium installed. */
import { CHROMIUM_MISSING, chromiumAvailable } from '../../local/preview/chromium';

export { launchChromium } from '../../local/preview/chromium';

export function skipBrowserTests(): boolean {
  if (chromiumAvailable() || process.env.CI === 'true') return false;
  console.warn(`skipping the browser tests. ${CHROMIUM_MISSING}`);
  return true;
}
