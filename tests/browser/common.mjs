// What the browser tests share: the environment they read, where screenshots go, axe-core's source and
// the browser launch.
import { chromium } from 'playwright-core';
import { readFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const env = process.env;

/// A required environment variable; a missing one ends the run with exit code 2.
export const need = (k) => {
  if (!env[k]) { console.error(`${k} is required`); process.exit(2); }
  return env[k];
};

/// SCREENSHOT_DIR, or a new temporary directory starting with `prefix`; created either way.
export const screenshotDir = (prefix) => {
  const dir = env.SCREENSHOT_DIR || mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(dir, { recursive: true });
  return dir;
};

/// axe-core, to evaluate in a page.
export const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/// Headless CHROMIUM (default Debian's /usr/bin/chromium; nothing is ever downloaded). launch() always
/// starts from a fresh temporary profile (user data dir), removed on close.
export const launch = () => chromium.launch({
  executablePath: env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--ignore-certificate-errors'],
});
