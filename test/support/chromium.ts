import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's Chromium, headless, as the browser tests drive it (Playwright's own download
 * cannot work here; scripts/ensure-chromium.sh installs this one). Without a sandbox, which
 * Chromium refuses to use when run as root.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
