// Real-browser checks of the console against a running sitebot (Debian's chromium, playwright-core).
//
// Plain Node, no test framework: one line per check, stops at the first failure (exit 1), and ends with
// `N passed, 0 failed`. axe-core runs on every page (no serious or critical WCAG 2 A/AA violation);
// every page is kept as a screenshot at 1280x800 and at 375x667.
//
// Environment (all required but SCREENSHOT_DIR and CHROMIUM):
//   SITEBOT_URL    https base of the running sitebot (self-signed certificate is fine)
//   SITE_ID        the owner's site, whose review queue holds the card questions and a hostile one
//   OTHER_SITE_ID  a site the owner holds no role on
//   OWNER_LINK     the owner's one-time setup link      OWNER_EMAIL  the owner's e-mail address
//   VIEWER_LINK    a viewer's one-time setup link (a viewer of SITE_ID)
//   ANSWER         the answer the owner writes for the card questions
//   SCREENSHOT_DIR where the PNGs go (default: a new temporary directory, printed)
//   CHROMIUM       browser executable (default /usr/bin/chromium); nothing is ever downloaded
import { assert, checker, launch, lookedAt, need, screenshotDir } from './common.mjs';

const SITEBOT = need('SITEBOT_URL').replace(/\/+$/, '');
const SITE_ID = need('SITE_ID');
const OTHER_SITE_ID = need('OTHER_SITE_ID');
const OWNER_LINK = need('OWNER_LINK');
const OWNER_EMAIL = need('OWNER_EMAIL');
const VIEWER_LINK = need('VIEWER_LINK');
const ANSWER = need('ANSWER');
const SHOTS = screenshotDir('sitebot-console-shots-');
const PASSWORD = 'a long enough passphrase for the console';
const HOSTILE = '<img src=x onerror=window.__xss=1>';

let browser;
const { check, done } = checker(() => browser);


const looked_at = lookedAt(SHOTS);

browser = await launch();
const owner = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'en-US' });
const page = await owner.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
// Pages answered 4xx on purpose (404, 422, 401) log "Failed to load resource": not script errors.
page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });

await check('the setup link asks the owner for a password and says for whom', async () => {
  const resp = await page.goto(OWNER_LINK);
  assert(resp.status() === 200, `status ${resp.status()}`);
  assert((await page.textContent('main')).includes(OWNER_EMAIL), 'the e-mail address is shown');
  const csp = resp.headers()['content-security-policy'] || '';
  assert(csp.includes("frame-ancestors 'none'") && !csp.includes('unsafe-inline'), csp);
  await looked_at(page, 'setup');
});

await check('a password too short is refused with the reason, on the page', async () => {
  await page.fill('#password', 'short');
  await page.fill('#repeat', 'short');
  // The browser's own minlength check would stop the form: the server's is what is tested here.
  await page.evaluate(() => document.querySelectorAll('input[minlength]').forEach((i) => i.removeAttribute('minlength')));
  await page.click('button[type=submit]');
  await page.waitForSelector('.error');
  assert((await page.textContent('.error')).includes('12 characters'), await page.textContent('.error'));
});

await check('setting the password signs the owner in; the sites page lists their site only', async () => {
  await page.fill('#password', PASSWORD);
  await page.fill('#repeat', PASSWORD);
  await Promise.all([page.waitForURL('**/console/sites'), page.click('button[type=submit]')]);
  const text = await page.textContent('main');
  assert(text.includes(SITE_ID), 'the own site is listed');
  assert(!text.includes(OTHER_SITE_ID), 'the other site is not');
  await looked_at(page, 'sites');
});

await check('on a phone the sites page is one card a site, with nothing to scroll sideways', async () => {
  await page.setViewportSize({ width: 375, height: 667 });
  const fit = await page.evaluate(() => [...document.querySelectorAll('main .table-wrap')].map((w) => [w.scrollWidth, w.clientWidth]));
  const cells = await page.evaluate(() => [...document.querySelectorAll('table.cards tbody td')].map((td) => getComputedStyle(td).display));
  await page.setViewportSize({ width: 1280, height: 800 });
  assert(fit.length > 0 && fit.every(([scroll, client]) => scroll <= client), `a table scrolls sideways: ${JSON.stringify(fit)}`);
  assert(cells.length > 0 && cells.every((d) => d !== 'table-cell'), `cells stay table cells: ${cells.join(', ')}`);
});

await check("another site's page by direct URL is the same 404 as an unknown site", async () => {
  const other = await page.goto(`${SITEBOT}/console/sites/${OTHER_SITE_ID}`);
  const otherText = await page.textContent('main');
  const unknown = await page.goto(`${SITEBOT}/console/sites/00000000-0000-4000-8000-000000000000`);
  assert(other.status() === 404 && unknown.status() === 404, `${other.status()} ${unknown.status()}`);
  assert(otherText === (await page.textContent('main')), 'the two pages are the same');
  await looked_at(page, 'not-found');
});

let groupUrl;
await check('the review queue shows the card questions as one group of three, the hostile question as text', async () => {
  await page.goto(`${SITEBOT}/console/sites/${SITE_ID}`);
  const rows = await page.$$eval('tbody tr', (trs) => trs.map((tr) => ({ text: tr.querySelector('th').textContent.trim(), count: tr.querySelector('td.num').textContent.trim(), href: tr.querySelector('a').href })));
  assert(rows.length >= 2, JSON.stringify(rows));
  assert(rows[0].count === '3' && rows[0].text.includes('card'), JSON.stringify(rows));
  assert(rows.some((r) => r.text === HOSTILE), `the hostile question shown as text: ${JSON.stringify(rows)}`);
  assert((await page.$$('main img')).length === 0, 'no image was made of it');
  groupUrl = rows[0].href;
  await looked_at(page, 'review-queue');
});

await check('the group page shows every wording; the answer written there is saved and the group leaves the queue', async () => {
  await page.goto(groupUrl);
  const text = await page.textContent('main');
  assert(text.includes('Do you accept credit cards?') && text.includes('Can I pay by credit card?'), text);
  await looked_at(page, 'group');
  await page.fill('#question', 'Do you accept credit cards?');
  await page.fill('#answer', ANSWER);
  await page.fill('#url', 'https://clinic.example/payment');
  await Promise.all([page.waitForURL(`**/console/sites/${SITE_ID}`), page.click('form[action$="/answer"] button')]);
  const hrefs = await page.$$eval('tbody tr a', (as) => as.map((a) => a.href));
  assert(!hrefs.includes(groupUrl), 'the answered group is gone');
});

await check('the dashboard counts the questions, draws them per day and lists what failed', async () => {
  await page.goto(`${SITEBOT}/console/sites/${SITE_ID}/dashboard?days=7`);
  const figures = await page.$$eval('.figures dd', (dds) => dds.map((d) => d.textContent.trim()));
  assert(figures[0] === '4', `four questions: ${figures}`);
  assert((await page.$$('.chart svg rect')).length > 0, 'bars drawn');
  await page.click('details summary');
  assert((await page.$$('details tbody tr')).length === 1, 'one day of numbers');
  await looked_at(page, 'dashboard');
});

await check('the conversations page filters and opens a transcript with the hostile question as text', async () => {
  await page.goto(`${SITEBOT}/console/sites/${SITE_ID}/conversations`);
  await page.check('input[name=unanswered]');
  await Promise.all([page.waitForURL('**/conversations?**'), page.click('form.filters button')]);
  const firsts = await page.$$eval('tbody tr th a', (as) => as.map((a) => a.textContent));
  assert(firsts.includes(HOSTILE), `the hostile question as text: ${firsts}`);
  await looked_at(page, 'conversations');
  await page.click('tbody tr th a');
  await page.waitForSelector('article.exchange');
  await looked_at(page, 'conversation');
});

await check('the leads page and a lead show the hostile name and page URL as text; the audit log lists what the owner did', async () => {
  await page.goto(`${SITEBOT}/console/sites/${SITE_ID}/leads`);
  const names = await page.$$eval('tbody tr td:first-of-type', (tds) => tds.map((td) => td.textContent));
  assert(names.includes('<script>window.__xss=1</script>'), `the name as text: ${names}`);
  await looked_at(page, 'leads');
  await page.click('tbody tr th a');
  await page.waitForSelector('.facts');
  assert((await page.$$('main a[href^="javascript:"]')).length === 0, 'no javascript: link');
  // The page the visitor wrote from, sent with markup in its query: shown as text, linked, never run.
  const pageLink = await page.$eval('.facts a[rel~="noopener"]', (a) => ({ text: a.textContent, href: a.getAttribute('href') }));
  assert(pageLink.text.includes('<script>window.__xss=1</script>') && pageLink.href.startsWith('https://clinic.example/prices?'), `the page URL as text: ${JSON.stringify(pageLink)}`);
  assert((await page.$$('.facts script, .facts img')).length === 0, 'no element made from the page URL');
  const attempts = await page.$$eval('table.cards tbody tr', (rows) => rows.map((r) => r.textContent));
  assert(attempts.length >= 2 && attempts.some((a) => a.includes('500')), `the delivery attempts, the refused one first: ${attempts}`);
  await looked_at(page, 'lead');
  await page.goto(`${SITEBOT}/console/sites/${SITE_ID}/audit`);
  assert((await page.textContent('main')).includes('curated_added'), 'the answer written is in the audit log');
  await looked_at(page, 'audit');
});

await check('signing out ends the session; signing in again with the form works', async () => {
  await Promise.all([page.waitForURL('**/console/login'), page.click('header form button')]);
  const back = await page.goto(`${SITEBOT}/console/sites`);
  assert(page.url().endsWith('/console/login'), `after sign-out: ${page.url()} (${back.status()})`);
  await looked_at(page, 'login');
  await page.fill('#email', OWNER_EMAIL);
  await page.fill('#password', 'not the password at all');
  await page.click('button[type=submit]');
  await page.waitForSelector('.error');
  await looked_at(page, 'login-failed');
  await page.fill('#password', PASSWORD);
  await Promise.all([page.waitForURL('**/console/sites'), page.click('button[type=submit]')]);
});

const viewer = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'de-DE' });
const vpage = await viewer.newPage();
vpage.on('pageerror', (e) => errors.push(String(e)));

await check('a viewer (in German) reads the queue, has no write control, and a write by hand is refused', async () => {
  await vpage.goto(VIEWER_LINK);
  assert((await vpage.textContent('h1')).includes('Passwort'), await vpage.textContent('h1'));
  await vpage.fill('#password', PASSWORD);
  await vpage.fill('#repeat', PASSWORD);
  await Promise.all([vpage.waitForURL('**/console/sites'), vpage.click('button[type=submit]')]);
  await vpage.goto(`${SITEBOT}/console/sites/${SITE_ID}`);
  const href = await vpage.$eval('tbody tr a', (a) => a.href);
  await vpage.goto(href);
  assert((await vpage.$$('form[action$="/answer"], form[action$="/reviewed"]')).length === 0, 'no write form');
  await looked_at(vpage, 'group-viewer-de');
  const status = await vpage.evaluate(async (url) => {
    const csrf = document.querySelector('input[name=csrf]').value;
    const r = await fetch(`${url}/reviewed`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `csrf=${encodeURIComponent(csrf)}` });
    return r.status;
  }, href);
  assert(status === 403, `a viewer's write answered ${status}`);
});

await check('no script error on any page', async () => {
  assert(errors.length === 0, errors.join('\n'));
});

await browser.close();
console.log(`screenshots in ${SHOTS}`);
done();
