/**
 * A headless Chromium for the preview's screenshot and browser tests: the OS package
 * (`apt-get install chromium`) or the binary named by CHROMIUM_PATH, driven by playwright-core
 * (which downloads no browser).
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

export const CHROMIUM_MISSING = `Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`;

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

/** Launches Chromium with a fresh profile (playwright makes a new temporary user-data-dir per launch). */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumAvailable()) throw new Error(CHROMIUM_MISSING);
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
