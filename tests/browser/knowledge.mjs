// Real-browser checks of the console's knowledge pages (#25) against a running sitebot (Debian's
// chromium, playwright-core): an editor uploads two files at once (with the upload's progress) and sees
// them listed; a file of another format is refused on the page; the editor adds a loopback website as a
// crawl source, presses "Re-sync now" and watches the crawl's progress to its end; adds a curated answer;
// a viewer has none of the controls and a write by hand is refused. axe-core on every page; every page
// kept as a screenshot at 1280x800 and 375x667. Plain Node, no test framework (see common.mjs).
//
// Environment (all required but SCREENSHOT_DIR and CHROMIUM):
//   SITEBOT_URL   https base of the running sitebot      SITE_ID       the site
//   EDITOR_LINK   an editor's one-time setup link        VIEWER_LINK   a viewer's one-time setup link
//   FILE_A, FILE_B, FILE_BAD  paths of two Markdown files to upload and of one of another format
//   TITLE_A, TITLE_B          the titles those two files' documents get
//   WEBSITE_URL   the start URL of a website on loopback the server may crawl
//   PAGES         how many documents that website's crawl makes
import { assert, checker, launch, lookedAt, need, screenshotDir, until } from './common.mjs';

const SITEBOT = need('SITEBOT_URL').replace(/\/+$/, '');
const SITE_ID = need('SITE_ID');
const EDITOR_LINK = need('EDITOR_LINK');
const VIEWER_LINK = need('VIEWER_LINK');
const [FILE_A, FILE_B, FILE_BAD] = [need('FILE_A'), need('FILE_B'), need('FILE_BAD')];
const [TITLE_A, TITLE_B] = [need('TITLE_A'), need('TITLE_B')];
const WEBSITE_URL = need('WEBSITE_URL');
const PAGES = need('PAGES');
const SHOTS = screenshotDir('sitebot-knowledge-shots-');
const PASSWORD = 'a long enough passphrase for the console';
const KB = `${SITEBOT}/console/sites/${SITE_ID}/knowledge`;

let browser;
const { check, done } = checker(() => browser);

const looked_at = lookedAt(SHOTS);

const signIn = async (page, link) => {
  await page.goto(link);
  await page.fill('#password', PASSWORD);
  await page.fill('#repeat', PASSWORD);
  await Promise.all([page.waitForURL('**/console/sites'), page.click('button[type=submit]')]);
};

browser = await launch();
const editor = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'en-US' });
const page = await editor.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });

await check('an editor finds the Knowledge tab and an empty list', async () => {
  await signIn(page, EDITOR_LINK);
  await page.goto(`${SITEBOT}/console/sites/${SITE_ID}`);
  await Promise.all([page.waitForURL(`${KB}`), page.click('nav.tabs a[href$="/knowledge"]')]);
  assert((await page.textContent('main')).includes('No documents.'), 'the empty list says so');
  await looked_at(page, 'documents-empty');
});

await check('two files uploaded at once show progress, then both are listed', async () => {
  await page.setInputFiles('#files', [FILE_A, FILE_B]);
  // The upload is held at the browser's edge while the page is looked at: the progress box must be showing
  // while the files are on their way. (Waiting for the box instead raced the redirect that follows a quick
  // upload: the next page's box is hidden again.)
  let shownWhileSending = null;
  const upload = (url) => url.pathname.endsWith('/knowledge/upload');
  await page.route(upload, async (route) => {
    shownWhileSending = await page.isVisible('#upload-progress-box');
    await route.continue();
  });
  await Promise.all([page.waitForURL(/done=uploaded/, { timeout: 60000 }), page.click('#upload-form button[type=submit]')]);
  await page.unroute(upload);
  assert(shownWhileSending === true, `the progress box showed while sending: ${shownWhileSending}`);
  assert((await page.textContent('#kb-done')).includes('Files imported: 2'), await page.textContent('#kb-done'));
  const table = await page.textContent('#documents');
  assert(table.includes(TITLE_A) && table.includes(TITLE_B), table);
  await looked_at(page, 'documents');
});

await check('a file of another format is refused on the page, with the form kept', async () => {
  await page.setInputFiles('#files', [FILE_BAD]);
  await page.click('#upload-form button[type=submit]');
  const alert = await until(async () => (await page.$('#upload-errors')) && page.textContent('#upload-errors'), 'the refusal');
  assert(alert.includes('this format is not supported') && alert.includes('Nothing was stored'), alert);
  assert(await page.$('#upload-form'), 'the form is still there');
  await looked_at(page, 'upload-refused');
});

await check('a delete asks first', async () => {
  await page.goto(KB);
  await page.click(`#documents a[href$="/delete"]`);
  assert((await page.textContent('main h2')).includes('Delete this document?'), await page.textContent('main h2'));
  await looked_at(page, 'delete-confirm');
});

await check('an editor adds a loopback website as a crawl source', async () => {
  await page.goto(`${KB}/sources`);
  assert((await page.textContent('main')).includes('No website is crawled'), 'empty at first');
  await page.fill('#url', WEBSITE_URL);
  await page.fill('#max_pages', '100');
  await Promise.all([page.waitForURL(/done=added/), page.click('form[action$="/knowledge/sources"] button[type=submit]')]);
  assert((await page.textContent('.source h3')).includes(WEBSITE_URL), await page.textContent('.source h3'));
  assert((await page.textContent('.crawl-text')).includes('Not crawling'), await page.textContent('.crawl-text'));
  await looked_at(page, 'sources');
});

await check('"Re-sync now" starts the crawl in the server and the page shows its progress to the end', async () => {
  await Promise.all([page.waitForURL(/done=started/), page.click('form[action$="/resync"] button[type=submit]')]);
  assert((await page.textContent('#kb-done')).includes('The crawl has started'), await page.textContent('#kb-done'));
  // Progress while it runs (the script polls), unless the crawl was over before this page loaded.
  const seen = [];
  const finished = await until(async () => {
    const running = await page.getAttribute('#sources', 'data-running').catch(() => null);
    const text = await page.textContent('.crawl-text').catch(() => '');
    if (text && !seen.includes(text)) seen.push(text);
    return running === 'false' && text.includes('Not crawling');
  }, 'the crawl to finish and the page to show it', 120000);
  assert(finished, 'finished');
  const state = await page.textContent('.source');
  assert(state.includes(`${PAGES} new`), `the last crawl's counts: ${state}`);
  assert(!state.includes('never'), `a last sync time: ${state}`);
  console.log(`     progress seen: ${seen.join(' → ')}`);
  assert(seen.some((s) => s.includes('Crawling')), `the progress was on the page: ${seen.join(' | ')}`);
  await looked_at(page, 'sources-synced');
});

await check('the documents list now holds the crawled pages, searchable by title', async () => {
  await page.goto(`${KB}?q=${encodeURIComponent('Page 1')}`);
  const table = await page.textContent('#documents');
  assert(table.includes('web page') && table.includes('Page 1'), table);
  await looked_at(page, 'documents-search');
});

await check('an editor adds a curated answer', async () => {
  await page.goto(`${KB}/answers`);
  await page.fill('#question', 'Do you sell gift vouchers?');
  await page.fill('#answer', 'Yes, at the front desk, from 20 euros.');
  await Promise.all([page.waitForURL(/done=added/), page.click('form[action$="/knowledge/answers"] button[type=submit]')]);
  assert((await page.textContent('.answer')).includes('from 20 euros'), await page.textContent('.answer'));
  await looked_at(page, 'answers');
  await page.click('.answer a[href*="/answers/ans_"]:not([href$="/delete"])');
  assert((await page.inputValue('#question')) === 'Do you sell gift vouchers?', 'the edit form holds the question');
  await looked_at(page, 'answer-edit');
});

const viewer = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'de-DE' });
const vpage = await viewer.newPage();
vpage.on('pageerror', (e) => errors.push(String(e)));

await check('a viewer (in German) reads the knowledge with no control, and a write by hand is refused', async () => {
  await signIn(vpage, VIEWER_LINK);
  for (const [path, name] of [['', 'viewer-documents-de'], ['/sources', 'viewer-sources-de'], ['/answers', 'viewer-answers-de']]) {
    await vpage.goto(`${KB}${path}`);
    const forms = await vpage.$$('main form[method=post]');
    assert(forms.length === 0, `${path}: ${forms.length} write forms`);
    assert((await vpage.$$('main a[href$="/delete"], main a[href*="/remove"]')).length === 0, `${path}: a delete link`);
    await looked_at(vpage, name);
  }
  assert((await vpage.textContent('main')).includes('gift vouchers'), 'the answers are readable');
  const status = await vpage.evaluate(async (kb) => {
    const csrf = document.querySelector('header input[name=csrf]').value;
    const r = await fetch(`${kb}/answers`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrf)}&question=Q&answer=A&url=` });
    return r.status;
  }, KB);
  assert(status === 403, `a viewer's write answered ${status}`);
});

await check('no script error on any page', async () => {
  assert(errors.length === 0, errors.join('\n'));
});

await browser.close();
console.log(`screenshots in ${SHOTS}`);
done();
