// #25 oidc: the sign-in page with single sign-on configured, in Debian's headless Chromium: the SSO button
// is there beside the password form, in English and in German; axe-core (WCAG 2 A/AA, no serious or
// critical violation) on each; screenshots at 1280x800 and 375x667. Prints `N passed, 0 failed`.
import { assert, axeClean, checker, launch, need, screenshotDir, screenshots } from './common.mjs';

const SITEBOT = need('SITEBOT_URL').replace(/\/+$/, '');
const SHOTS = screenshotDir('sitebot-sso-shots-');

let browser;
const { check, done } = checker(() => browser);
browser = await launch();

for (const [locale, name] of [['en-US', 'sso-login'], ['de-DE', 'sso-login-de']]) {
  await check(`the sign-in page offers single sign-on (${locale})`, async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${SITEBOT}/console/login`);
    const sso = page.locator('a.button[href="/console/oidc/start"]');
    assert(await sso.isVisible(), 'the single sign-on button is shown');
    assert(await page.locator('#password').isVisible(), 'the password form is there too (local passwords on)');
    // No user exists yet, but people of the allowed domains can sign on: no "nobody can sign in yet".
    assert(!(await page.textContent('body')).includes('sitebot user add'), 'no note that nobody can sign in');
    await axeClean(page, name);
    await screenshots(page, SHOTS, name);
    assert(errors.length === 0, errors.join('; '));
    await context.close();
  });
}

await browser.close();
done();
console.log(`screenshots in ${SHOTS}`);
