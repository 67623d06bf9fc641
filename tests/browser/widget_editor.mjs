// Real-browser checks of the console's widget editor (#25) against a running sitebot (Debian's chromium,
// playwright-core).
//
// Plain Node, no test framework: one line per check, stops at the first failure (exit 1), and ends with
// `N passed, 0 failed`. axe-core runs on every page (no serious or critical WCAG 2 A/AA violation), the
// preview frame included; every page is kept as a screenshot at 1280x800 and at 375x667.
//
// Environment (all required but SCREENSHOT_DIR and CHROMIUM):
//   SITEBOT_URL    https base of the running sitebot (self-signed certificate is fine)
//   SITE_ID        the site, with the clinic's knowledge and OLD_QUESTION published as its one suggestion
//   OWNER_LINK     an owner's one-time setup link      VIEWER_LINK  a viewer's
//   HOST_URL       a visitor's page on another origin with the widget's tag (HOST_URL + "de": in German)
//   OLD_QUESTION   the published suggested question   NEW_QUESTION  the one the owner sets (the clinic's
//                  knowledge answers it)
//   SCREENSHOT_DIR where the PNGs go (default: a new temporary directory, printed)
//   CHROMIUM       browser executable (default /usr/bin/chromium); nothing is ever downloaded
import { assert, axeClean, checker, launch, lookedAt as pageChecks, need, screenshotDir, until } from './common.mjs';

const SITEBOT = need('SITEBOT_URL').replace(/\/+$/, '');
const SITE_ID = need('SITE_ID');
const OWNER_LINK = need('OWNER_LINK');
const VIEWER_LINK = need('VIEWER_LINK');
const HOST_URL = need('HOST_URL');
const OLD_QUESTION = need('OLD_QUESTION');
const NEW_QUESTION = need('NEW_QUESTION');
const SHOTS = screenshotDir('sitebot-widget-editor-shots-');
const PASSWORD = 'a long enough passphrase for the console';
const EDITOR = `${SITEBOT}/console/sites/${SITE_ID}/widget`;
const NEW_COLOUR = '#8a2be2';
const NEW_RGB = 'rgb(138, 43, 226)';
const OLD_RGB = 'rgb(11, 95, 255)';
const GERMAN = 'Wann hat die Praxis geöffnet?';
const HOSTILE = '<img src=x onerror=window.__xss=1>';

let browser;
const { check, done } = checker(() => browser);

const axe = axeClean;
const lookedAt = pageChecks(SHOTS);

/// The preview frame of the editor page, once its widget shows `question` as a suggestion.
const previewShows = async (page, question) => {
  const frame = page.frameLocator('iframe.preview');
  await frame.locator('[part~="suggestion"]', { hasText: question }).first().waitFor({ timeout: 15000 });
  return page.frames().find((f) => f.url().includes('/widget/preview'));
};

/// The suggested questions a widget shows, and its launcher's colour.
const widgetState = (target) => target.evaluate(() => {
  const root = document.querySelector('sitebot-widget')?.shadowRoot;
  if (!root) return null;
  const box = root.querySelector('.sugg');
  return {
    suggestions: box && !box.hidden ? [...box.querySelectorAll('[part~="suggestion"]')].map((b) => b.textContent) : [],
    colour: getComputedStyle(root.querySelector('[part~="launcher"]')).backgroundColor,
  };
});

browser = await launch();
const errors = [];
const watch = (page) => {
  page.on('pageerror', (e) => errors.push(String(e)));
  // Pages answered 4xx on purpose (422, 403) log "Failed to load resource": not script errors.
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });
  return page;
};
const owner = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'en-US' });
const page = watch(await owner.newPage());
const visitor = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'en-US' });
const host = watch(await visitor.newPage());

await check('the owner finds the widget editor, with the published question in the live preview', async () => {
  await page.goto(OWNER_LINK);
  await page.fill('#password', PASSWORD);
  await page.fill('#repeat', PASSWORD);
  await Promise.all([page.waitForURL('**/console/sites'), page.click('button[type=submit]')]);
  await page.goto(`${SITEBOT}/console/sites/${SITE_ID}`);
  await Promise.all([page.waitForURL(EDITOR), page.click(`nav.tabs a[href$="/widget"]`)]);
  const resp = await page.reload();
  const csp = resp.headers()['content-security-policy'] || '';
  assert(csp.includes("frame-src 'self'") && csp.includes("frame-ancestors 'none'") && !csp.includes('unsafe-inline'), csp);
  assert(await page.inputValue('#questions_0') === OLD_QUESTION, 'the form holds what is published');
  assert((await page.textContent('#embed')).includes(`data-site-id="${SITE_ID}"`), 'the embed code names the site');
  const frame = await previewShows(page, OLD_QUESTION);
  const state = await widgetState(frame);
  assert(state.colour === OLD_RGB, `the preview's colour: ${state.colour}`);
  await axe(frame, 'preview');
  await lookedAt(page, 'editor');
});

await check('the copy button copies the embed code', async () => {
  await owner.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: SITEBOT });
  await page.click('#copy-embed');
  await until(async () => (await page.textContent('#copy-status')).trim(), 'the copy status');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert(copied.includes('/v1/widget.js') && copied.includes(SITE_ID), copied);
});

await check('a wrong value is refused with the reason on the page, the form kept, nothing saved', async () => {
  await page.fill('#questions_0', ['One?', 'Two?', 'Three?', 'Four?', 'Five?', HOSTILE].join('\n'));
  await page.click('#draft-form button[type=submit]');
  await page.waitForSelector('.error');
  const error = await page.textContent('.error');
  assert(error.includes('at most 5'), error);
  assert((await page.inputValue('#questions_0')).includes(HOSTILE), 'the sent questions are kept, as text');
  await lookedAt(page, 'editor-invalid');
  await page.fill('#questions_0', 'Five?');
  await page.fill('#origins', 'http://shop.example');
  await page.click('#draft-form button[type=submit]');
  await page.waitForSelector('.error');
  assert((await page.textContent('.error')).includes('not an https origin'), 'an http origin is refused');
  assert((await page.inputValue('#origins')) === 'http://shop.example', 'the sent origins are kept');
});

await check('the owner changes the colour and the questions: the preview shows the draft', async () => {
  await page.goto(EDITOR);
  await page.fill('#color', NEW_COLOUR);
  await page.fill('#questions_0', `${NEW_QUESTION}\n${HOSTILE}`);
  await page.fill('#lang_1', 'de');
  await page.fill('#questions_1', GERMAN);
  await Promise.all([page.waitForURL('**/widget?saved=1'), page.click('#draft-form button[type=submit]')]);
  assert((await page.textContent('main')).includes('Unpublished draft'), 'the page says there is a draft');
  const frame = await previewShows(page, NEW_QUESTION);
  const state = await widgetState(frame);
  assert(JSON.stringify(state.suggestions) === JSON.stringify([NEW_QUESTION, HOSTILE]), JSON.stringify(state.suggestions));
  assert(state.colour === NEW_RGB, `the preview's colour: ${state.colour}`);
  assert(await frame.evaluate(() => window.__xss === undefined), 'the hostile suggestion is text');
  await axe(frame, 'preview-draft');
  await lookedAt(page, 'editor-draft');
  // The preview in German, through the language picker.
  await page.selectOption('#preview-lang', 'de');
  await page.click('form[target=preview] button');
  await until(async () => {
    const f = page.frames().find((x) => x.url().includes('lang=de'));
    return f && (await widgetState(f))?.suggestions.includes(GERMAN);
  }, 'the German preview');
});

await check("a visitor's host page still shows the published widget", async () => {
  await host.goto(HOST_URL);
  await host.click('[part~="launcher"]');
  const state = await until(async () => { const s = await widgetState(host); return s && s.suggestions.length && s; }, 'the suggestions');
  assert(JSON.stringify(state.suggestions) === JSON.stringify([OLD_QUESTION]), JSON.stringify(state.suggestions));
  assert(state.colour === OLD_RGB, `the host's colour before publishing: ${state.colour}`);
  await lookedAt(host, 'host-before');
});

await check('publishing with one button makes the draft what visitors get', async () => {
  await Promise.all([page.waitForURL('**/widget?published=1'), page.click('#publish')]);
  assert((await page.textContent('[role=status].done')).includes('Published'), 'the page says so');
  assert((await page.$$('#publish')).length === 0, 'nothing left to publish');
  const fresh = await visitor.newPage();
  watch(fresh);
  await fresh.goto(HOST_URL);
  await fresh.click('[part~="launcher"]');
  const state = await until(async () => { const s = await widgetState(fresh); return s && s.suggestions.includes(NEW_QUESTION) && s; }, 'the new suggestions');
  assert(JSON.stringify(state.suggestions) === JSON.stringify([NEW_QUESTION, HOSTILE]), JSON.stringify(state.suggestions));
  assert(state.colour === NEW_RGB, `the host's colour after publishing: ${state.colour}`);
  assert(await fresh.evaluate(() => window.__xss === undefined), 'the hostile suggestion is text');
  await fresh.close();
  await host.reload();
  await host.waitForSelector('[part~="launcher"]');
  if (!(await host.locator('[part~="panel"]').isVisible())) await host.click('[part~="launcher"]');
  await until(async () => (await widgetState(host))?.suggestions.includes(NEW_QUESTION), 'the reloaded host page');
  await lookedAt(host, 'host-after');
  const german = await visitor.newPage();
  watch(german);
  await german.goto(`${HOST_URL}de`);
  await german.click('[part~="launcher"]');
  await until(async () => JSON.stringify((await widgetState(german))?.suggestions) === JSON.stringify([GERMAN]), 'the German suggestion on a German page');
  await german.close();
});

await check('pressing a suggested question asks it, an answer appears, the suggestions go', async () => {
  await host.click(`[part~="suggestion"]:text-is("${NEW_QUESTION}")`);
  const mine = host.locator('[part~="message"][data-role="user"]').first();
  await mine.waitFor({ timeout: 10000 });
  assert((await mine.textContent()) === NEW_QUESTION, await mine.textContent());
  const answer = host.locator('[part~="message"][data-role="assistant"]').first();
  await answer.locator('[part~="feedback-up"]').waitFor({ timeout: 30000 });
  const text = await answer.locator('.txt').textContent();
  assert(text.length > 20, `an answer: ${text}`);
  assert((await widgetState(host)).suggestions.length === 0, 'no suggestion after the first question');
  await lookedAt(host, 'host-answered');
});

await check('a viewer has no widget editor, and a change by hand is refused', async () => {
  const viewer = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'en-US' });
  const vpage = watch(await viewer.newPage());
  await vpage.goto(VIEWER_LINK);
  await vpage.fill('#password', PASSWORD);
  await vpage.fill('#repeat', PASSWORD);
  await Promise.all([vpage.waitForURL('**/console/sites'), vpage.click('button[type=submit]')]);
  await vpage.goto(`${SITEBOT}/console/sites/${SITE_ID}`);
  assert((await vpage.$$('a[href$="/widget"]')).length === 0, 'no Widget tab');
  await lookedAt(vpage, 'viewer-site');
  const status = await vpage.evaluate(async (url) => {
    const csrf = document.querySelector('input[name=csrf]').value;
    const body = `csrf=${encodeURIComponent(csrf)}&color=%23ff0000&position=bottom-left&lang_0=en&questions_0=Hijacked`;
    const post = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body });
    const publish = await fetch(`${url}/publish`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `csrf=${encodeURIComponent(csrf)}` });
    return [post.status, publish.status];
  }, EDITOR);
  assert(JSON.stringify(status) === '[403,403]', `a viewer's changes answered ${status}`);
  const page403 = await vpage.goto(EDITOR);
  assert(page403.status() === 403, `the editor page for a viewer: ${page403.status()}`);
  assert((await vpage.$$('form[action$="/widget"], #publish, iframe')).length === 0, 'no control on the refusal page');
  await lookedAt(vpage, 'viewer-refused');
  await viewer.close();
});

await check('no script error on any page', async () => {
  assert(errors.length === 0, errors.join('\n'));
});

await browser.close();
console.log(`screenshots in ${SHOTS}`);
done();
