// What the browser tests share: the environment they read, where screenshots go, axe-core's source and
// the browser launch, and the small check runner the scripts without a test framework use.
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

export const assert = (cond, msg) => { if (!cond) throw new Error(msg); };
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// Polls `fn` until it returns something truthy (returned), or fails after `ms` with the last result.
export const until = async (fn, what, ms = 15000) => {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e.message; }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
};

/// The check runner of a script without a test framework: `check(name, fn)` prints one line a check and
/// stops at the first failure (closing the browser `closing()` returns, exit 1); `done()` prints the
/// `N passed, 0 failed` line the Rust test looks for.
export const checker = (closing) => {
  let passed = 0;
  const check = async (name, fn) => {
    try {
      await fn();
      passed++;
      console.log(`ok   ${name}`);
    } catch (e) {
      console.log(`FAIL ${name}: ${e && e.stack ? e.stack.split('\n').slice(0, 4).join(' | ') : e}`);
      console.log(`${passed} passed, 1 failed`);
      const b = closing();
      if (b) await b.close().catch(() => {});
      process.exit(1);
    }
  };
  return { check, done: () => console.log(`${passed} passed, 0 failed`) };
};

/// axe-core on a page or frame as it is: no serious or critical violation of WCAG 2 A/AA. Evaluated
/// through the DevTools protocol: the pages' CSPs refuse inline scripts, as they should.
export const axeClean = async (target, label) => {
  await target.evaluate(AXE);
  const result = await target.evaluate(async () => await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }));
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert(bad.length === 0, `${label}: ${bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`).join('; ')}`);
};

/// Screenshots of the page into `dir` at desktop (1280x800) and phone (375x667) width, then back to
/// desktop; a page wider than the phone (sideways scrolling), or a list's table that scrolls sideways in it,
/// fails.
export const screenshots = async (page, dir, name) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: join(dir, `desktop-${name}.png`), fullPage: true });
  await page.setViewportSize({ width: 375, height: 667 });
  await page.screenshot({ path: join(dir, `phone-${name}.png`), fullPage: true });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert(wide <= 375, `${name}: the page is ${wide}px wide on a 375px phone`);
  // A list's table is cards on a phone: none scrolls sideways, so no column is cut off. Only a grid of
  // numbers (`.grid-wrap`) may scroll.
  const tables = await page.evaluate(() => [...document.querySelectorAll('main .table-wrap:not(.grid-wrap)')].map((w) => [w.scrollWidth, w.clientWidth]));
  assert(tables.every(([scroll, client]) => scroll <= client), `${name}: a table scrolls sideways on a 375px phone: ${JSON.stringify(tables)}`);
  await page.setViewportSize({ width: 1280, height: 800 });
};

/// The check of every page a browser test looks at: no injected script ran (`window.__xss` is unset), axe-core
/// finds nothing serious, and its screenshots are kept in `dir` (with their phone checks).
export const lookedAt = (dir) => async (page, name) => {
  assert(await page.evaluate(() => window.__xss === undefined), `${name}: window.__xss was set`);
  await axeClean(page, name);
  await screenshots(page, dir, name);
};
