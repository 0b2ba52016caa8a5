/** When the browser tests run: only with Chromium installed; on CI its absence is a failing test (see `requireChromiumOnCi`). */
import { it, expect } from 'vitest';
import { CHROMIUM_MISSING, chromiumAvailable } from '../../local/preview/chromium';

export { launchChromium } from '../../local/preview/chromium';

export function skipBrowserTests(): boolean {
  if (chromiumAvailable()) return false;
  if (process.env.CI !== 'true') console.warn(`skipping the browser tests. ${CHROMIUM_MISSING}`);
  return true;
}

/** Under CI=true a missing browser fails this test instead of silently skipping the browser tests. */
export function requireChromiumOnCi(): void {
  it.runIf(process.env.CI === 'true')('finds Chromium (required on CI)', () => {
    expect(chromiumAvailable(), CHROMIUM_MISSING).toBe(true);
  });
}
