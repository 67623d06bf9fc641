// #25 email: the console's account page in Debian's headless Chromium, as an owner uses it: reached from
// the address at the top of every page, the weekly digest turned off and the site's lead e-mails turned
// on, each saved and shown as saved; axe-core (WCAG 2 A/AA, no serious or critical violation) on the
// page; screenshots at 1280x800 and 375x667 in SCREENSHOT_DIR (target/account-screenshots/ from the
// Rust test). Prints `N passed, 0 failed`.
import { assert, axeClean, checker, launch, need, screenshotDir, screenshots } from './common.mjs';

const OWNER_LINK = need('OWNER_LINK');
const OWNER_EMAIL = need('OWNER_EMAIL');
const SITE_NAME = need('SITE_NAME');
const SHOTS = screenshotDir('sitebot-account-shots-');
const PASSWORD = 'a long enough passphrase for the console';

let browser;
const { check, done } = checker(() => browser);

const axe = axeClean;
const shots = (page, name) => screenshots(page, SHOTS, name);

browser = await launch();
const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'en-US' });
const page = await context.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });

await check('the owner sets a password and reaches the account page from the address at the top', async () => {
  await page.goto(OWNER_LINK);
  await page.fill('#password', PASSWORD);
  await page.fill('#repeat', PASSWORD);
  await Promise.all([page.waitForURL('**/console/sites'), page.click('button[type=submit]')]);
  await Promise.all([page.waitForURL('**/console/account'), page.click(`a.who:has-text("${OWNER_EMAIL}")`)]);
  assert((await page.textContent('h1')).includes('Your account'), await page.textContent('h1'));
  assert(await page.isChecked('#digest'), 'the digest is on for an owner until turned off');
  const lead = page.getByLabel(`${SITE_NAME}: E-mail each new lead to the owners`);
  assert(!(await lead.isChecked()), 'lead e-mails are off until asked for');
  await axe(page, 'account');
  await shots(page, 'account');
});

await check('turning the digest off is saved and shown', async () => {
  await page.uncheck('#digest');
  await Promise.all([page.waitForURL('**/console/account?saved=1'), page.click('form[action="/console/account"] button[type=submit]')]);
  assert((await page.textContent('[role=status]')).includes('Saved.'), 'saved');
  assert(!(await page.isChecked('#digest')), 'the digest stays off');
});

await check("turning the site's lead e-mails on is saved and shown", async () => {
  const lead = page.getByLabel(`${SITE_NAME}: E-mail each new lead to the owners`);
  await lead.check();
  await Promise.all([page.waitForURL('**/console/account?saved=1'), page.locator('form[action$="/lead-email"] button[type=submit]').first().click()]);
  assert(await page.getByLabel(`${SITE_NAME}: E-mail each new lead to the owners`).isChecked(), 'lead e-mails stay on');
  await axe(page, 'account saved');
  await shots(page, 'account-saved');
});

await check('no script error on any page', async () => {
  assert(errors.length === 0, errors.join('; '));
});

await browser.close();
done();
console.log(`screenshots in ${SHOTS}`);
