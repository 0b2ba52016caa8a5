/**
 * A real headless Chromium for the browser tests: the Debian package (`apt-get install chromium`),
 * or the binary named by CHROMIUM_PATH, driven by playwright-core (no browser download at install).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags for a quiet, offline, sandbox-free browser in containers and CI. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

/** On CI a missing browser is a failure, never a skip; elsewhere browser tests may be skipped. */
export function skipBrowserTests(): boolean {
  if (chromiumAvailable()) return false;
  const message = `Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`;
  if (process.env.CI === 'true') return false;
  console.warn(`skipping the browser tests. ${message}`);
  return true;
}

/** Launches Chromium with a fresh profile (playwright makes a new temporary user-data-dir per launch). */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumAvailable())
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
