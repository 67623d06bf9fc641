// Real-browser checks of the console's site settings and users pages (#25) against a running sitebot
// (Debian's chromium, playwright-core). One line per check, stops at the first failure (exit 1), ends
// with `N passed, 0 failed`. axe-core runs on every page (no serious or critical WCAG 2 A/AA violation);
// every page is kept as a screenshot at 1280x800 and at 375x667.
//
// Environment (all required but SCREENSHOT_DIR and CHROMIUM):
//   SITEBOT_URL   https base of the running sitebot (self-signed certificate is fine)
//   SITE_ID       the site the owner and the viewer hold a role on
//   OWNER_LINK    the owner's one-time setup link     VIEWER_LINK  the viewer's
//   RECEIVER_URL  a webhook receiver the test event goes to (http on loopback: the server allows it)
//   SCREENSHOT_DIR where the PNGs go (default: a new temporary directory)
//   CHROMIUM      browser executable (default /usr/bin/chromium); nothing is ever downloaded
import { assert, checker, launch, lookedAt, need, screenshotDir } from './common.mjs';

const SITEBOT = need('SITEBOT_URL').replace(/\/+$/, '');
const SITE_ID = need('SITE_ID');
const OWNER_LINK = need('OWNER_LINK');
const VIEWER_LINK = need('VIEWER_LINK');
const RECEIVER_URL = need('RECEIVER_URL');
const SHOTS = screenshotDir('sitebot-settings-shots-');
const PASSWORD = 'a long enough passphrase for the console';
const SETTINGS = `${SITEBOT}/console/sites/${SITE_ID}/settings`;
const USERS = `${SITEBOT}/console/sites/${SITE_ID}/users`;

let browser;
const { check, done } = checker(() => browser);

const looked_at = lookedAt(SHOTS);

const signUp = async (page, link) => {
  await page.goto(link);
  await page.fill('#password', PASSWORD);
  await page.fill('#repeat', PASSWORD);
  await Promise.all([page.waitForURL('**/console/sites'), page.click('button[type=submit]')]);
};

browser = await launch();
const owner = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'en-US' });
const page = await owner.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });

await check('the owner opens the settings page from the site tabs: site, webhook, credentials, hand-off, disable', async () => {
  await signUp(page, OWNER_LINK);
  await page.goto(`${SITEBOT}/console/sites/${SITE_ID}`);
  await Promise.all([page.waitForURL('**/settings'), page.click('nav.tabs a[href$="/settings"]')]);
  for (const id of ['#site', '#webhook', '#credentials', '#danger', '#hours']) assert(await page.$(id), `${id} on the page`);
  assert(!(await page.$('#site-tier')) && !(await page.$('form[action$="/delete"]')), 'tier and delete are for admins');
  await looked_at(page, 'settings');
});

await check('saving the site shows "Saved." with the new name, shown as text', async () => {
  await page.fill('#site-name', 'Praxis <Müller>');
  await page.selectOption('#site-currency', 'CHF');
  await Promise.all([page.waitForURL('**/settings?saved=site*'), page.click('#site button[type=submit]')]);
  assert((await page.textContent('#site [role=status]')).includes('Saved.'), 'saved');
  assert((await page.inputValue('#site-name')) === 'Praxis <Müller>', await page.inputValue('#site-name'));
  assert((await page.textContent('h1')) === 'Praxis <Müller>', await page.textContent('h1'));
});

await check('a wrong language is refused on the page with the reason, the typed values kept', async () => {
  await page.fill('#site-name', 'Not saved');
  await page.fill('#site-lang', 'e!n');
  await page.click('#site button[type=submit]');
  await page.waitForSelector('#site .error');
  assert((await page.textContent('#site .error')).includes('BCP 47'), await page.textContent('#site .error'));
  assert((await page.inputValue('#site-name')) === 'Not saved', 'the typed name is kept');
  await looked_at(page, 'settings-error');
});

await check('the webhook is saved and "send a test event" shows the receiver\'s status, not the body of a private-network receiver', async () => {
  await page.goto(SETTINGS);
  await page.fill('#webhook-url', RECEIVER_URL);
  await page.check('input[name=events][value="lead.captured"]');
  await Promise.all([page.waitForURL('**/settings?saved=webhook*'), page.click('form[action$="/settings/webhook"] button')]);
  assert((await page.inputValue('#webhook-url')) === RECEIVER_URL, 'the URL is saved');
  await page.click('form[action$="/webhook/test"] button');
  await page.waitForSelector('.notice');
  const notice = await page.textContent('.notice');
  // The receiver is on loopback: its status and timing are shown, what it answered is not.
  assert(notice.includes('Test event sent') && notice.includes('200') && !notice.includes('answered 200') && notice.includes('private network'), notice);
  await looked_at(page, 'settings-test-event');
});

await check('a new signing secret is shown once, and gone after a reload', async () => {
  await page.goto(SETTINGS);
  await page.click('form[action$="/rotate-secret"] button');
  await page.waitForSelector('#shown-secret');
  const secret = await page.inputValue('#shown-secret');
  assert(secret.startsWith('whsec_'), secret);
  await looked_at(page, 'settings-secret');
  await page.goto(SETTINGS);
  assert(!(await page.content()).includes(secret), 'not shown again');
});

await check('the users page lists the owner and the viewer; an invitation shows the setup link once', async () => {
  await page.goto(USERS);
  const text = await page.textContent('main');
  assert(text.includes('viewer@example.com') && text.includes('owner@example.com'), text);
  await looked_at(page, 'users');
  await page.fill('#invite-email', 'ed@example.com');
  await page.selectOption('#invite-role', 'editor');
  await page.click('#invite button[type=submit]');
  await page.waitForSelector('#setup-link');
  const link = await page.inputValue('#setup-link');
  assert(link.startsWith(`${SITEBOT}/console/setup/`), link);
  assert((await page.textContent('tbody')).includes('ed@example.com'), 'the new user is listed');
  await looked_at(page, 'users-invited');
});

const viewer = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'de-DE' });
const vpage = await viewer.newPage();
vpage.on('pageerror', (e) => errors.push(String(e)));

await check('a viewer has neither tab, and both pages by URL are refused (403)', async () => {
  await signUp(vpage, VIEWER_LINK);
  await vpage.goto(`${SITEBOT}/console/sites/${SITE_ID}`);
  assert(!(await vpage.$('nav.tabs a[href$="/settings"]')) && !(await vpage.$('nav.tabs a[href$="/users"]')), 'no settings or users tab');
  const s = await vpage.goto(SETTINGS);
  assert(s.status() === 403, `settings: ${s.status()}`);
  await looked_at(vpage, 'settings-viewer');
  const u = await vpage.goto(USERS);
  assert(u.status() === 403, `users: ${u.status()}`);
  await looked_at(vpage, 'users-viewer');
});

await check('no script error on any page', async () => {
  assert(errors.length === 0, errors.join('\n'));
});

await browser.close();
done();
