// Live hand-off in two Chromium contexts against a running sitebot: a visitor on a host page (the widget)
// and a staff member in the console's inbox.
//
// Plain Node, no test framework: one line per check, stops at the first failure (exit 1), and ends with
// `N passed, 0 failed`. Times are printed, never asserted.
//
// Environment (all required but SCREENSHOT_DIR and CHROMIUM):
//   SITEBOT_URL       https base of the running sitebot
//   SITE_ID, HOST_URL the site with hand-off on (a long wait) and its host page (another origin, strict CSP)
//   MISSED_SITE_ID, MISSED_HOST_URL  a site with hand-off on and a 3 s wait, and its host page
//   STAFF_LINK        a setup link of an editor of SITE_ID (owner of MISSED_SITE_ID) whose display name is Ada
//   SCREENSHOT_DIR    where the PNGs go
import { join } from 'node:path';
import { AXE, assert, checker, launch, need, screenshotDir, sleep, until } from './common.mjs';

const SITEBOT = need('SITEBOT_URL').replace(/\/+$/, '');
const SITE_ID = need('SITE_ID');
const HOST_URL = need('HOST_URL');
const MISSED_SITE_ID = need('MISSED_SITE_ID');
const MISSED_HOST_URL = need('MISSED_HOST_URL');
const STAFF_LINK = need('STAFF_LINK');
const SHOTS = screenshotDir('sitebot-handoff-shots-');
const API = `${SITEBOT}/v1`;
const PASSWORD = 'a long enough passphrase for the console';
const HOSTILE = '<img src=x onerror=window.__xss=1> are you there?';

let browser;
const { check, done } = checker(() => browser);
const note = (s) => console.log(`     ${s}`);

/// axe-core on `page`, limited to `include` (the widget's element, or the whole document): no serious or
/// critical WCAG 2 A/AA violation. Evaluated through the DevTools protocol, so the pages' CSPs stay on.
const axe = async (page, label, include) => {
  await page.evaluate(AXE);
  const res = await page.evaluate(async (inc) => await window.axe.run(inc ? { include: [[inc]] } : document,
    { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }), include || null);
  const bad = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert(!bad.length, `${label}: ${bad.map((v) => `${v.id} (${v.impact}) at ${v.nodes.map((n) => JSON.stringify(n.target)).join(' ')}`).join('; ')}`);
};
const shot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`) });
const watch = (page, errors) => {
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) errors.push(`console: ${m.text()}`); });
};

browser = await launch();

// ---- the staff member: signs in through the setup link, opens the inbox (and is online for the site) ----
const staffCtx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, locale: 'en-US' });
const staff = await staffCtx.newPage();
const staffErrors = [];
watch(staff, staffErrors);
const inboxUrl = (site) => `${SITEBOT}/console/sites/${site}/inbox`;

await check('the staff member sets a password and opens the inbox: online for the site', async () => {
  await staff.goto(STAFF_LINK);
  await staff.fill('#password', PASSWORD);
  await staff.fill('#repeat', PASSWORD);
  await Promise.all([staff.waitForURL('**/console/sites'), staff.click('button[type=submit]')]);
  await staff.goto(inboxUrl(SITE_ID));
  await until(async () => /\b1$/.test((await staff.textContent('#inbox-online')).trim()), 'the inbox to count Ada online');
  await axe(staff, 'empty inbox');
});

// ---- the visitor ---------------------------------------------------------------------------------------
const visitorCtx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
const visitor = await visitorCtx.newPage();
const visitorErrors = [];
watch(visitor, visitorErrors);
const queries = [], personMessages = [];
visitor.on('request', (r) => {
  if (r.method() !== 'POST') return;
  if (r.url() === `${API}/query/stream` || r.url() === `${API}/query`) queries.push(r.postDataJSON());
  if (/\/v1\/conversations\/[^/]+\/messages$/.test(r.url())) personMessages.push(r.postDataJSON());
});
const W = '[part~="launcher"]';
const bar = (p) => p.locator('[part~="handoff"]');
const assistantCount = (p) => p.locator('[part~="message"][data-role="assistant"]').count();
const askWidget = async (p, q) => {
  const n = await assistantCount(p);
  await p.locator('[part~="input"]').fill(q);
  await p.locator('[part~="input"]').press('Enter');
  await p.locator('[part~="message"][data-role="assistant"]').nth(n).locator('[part~="feedback-up"]').waitFor({ timeout: 30000 });
};
const conversationOf = (p, site) => p.evaluate((k) => JSON.parse(sessionStorage.getItem(k) || '{}').cid, `sitebot:${site}`);
const staffBubbles = (p, text) => p.locator('[part~="message"][data-role="staff"]', { hasText: text });
let cid;
/// A console form's button clicked: the post, its redirect and the inbox page again.
const post = async (clicked) => { await clicked; await staff.waitForLoadState('load'); };


await check('the visitor asks the assistant, then for a person: a visible waiting state, and the contact form is not shown', async () => {
  await visitor.goto(HOST_URL);
  await visitor.locator(W).click({ timeout: 15000 });
  await askWidget(visitor, 'When is the clinic open?');
  cid = await conversationOf(visitor, SITE_ID);
  assert(/^cnv_/.test(cid || ''), `conversation id ${cid}`);
  await visitor.locator('.foot [part~="lead-open"]').click();
  await bar(visitor).waitFor({ state: 'visible', timeout: 10000 });
  assert((await bar(visitor).getAttribute('data-state')) === 'waiting', 'the bar says waiting');
  assert(/Waiting for a person/.test(await bar(visitor).textContent()), await bar(visitor).textContent());
  assert(!(await visitor.locator('[part~="lead-email"]').isVisible()), 'no contact form while a person can come');
  await shot(visitor, 'visitor-waiting');
  await axe(visitor, 'widget waiting', 'sitebot-widget');
});
const askedAt = Date.now();

await check('the inbox shows the waiting conversation with its transcript', async () => {
  const card = staff.locator(`article[id="${cid}"][data-state="waiting"]`);
  await card.waitFor({ timeout: 15000 });
  note(`the inbox showed the waiting conversation ${Date.now() - askedAt} ms after the request`);
  const text = await card.textContent();
  assert(text.includes('When is the clinic open?'), `the question is in the card: ${text}`);
  assert(/Visitor:/.test(text), text);
  // The notice outlives the page's reload: the tab's title counts the waiting visitors, and the live
  // region says a visitor is waiting (for screen readers).
  const title = await staff.title();
  assert(/^\(1\) /.test(title), `the title tells of the waiting visitor: ${title}`);
  const said = (await staff.textContent('#inbox-status')).trim();
  assert(said.length > 0, 'the live region tells of the waiting visitor');
  await shot(staff, 'staff-inbox-waiting');
  await axe(staff, 'inbox with a waiting visitor');
});

await check('while waiting the visitor can still write: to the person, not the assistant', async () => {
  const before = queries.length;
  await visitor.locator('[part~="input"]').fill('I would like to move my appointment');
  await visitor.locator('[part~="input"]').press('Enter');
  await until(() => personMessages.length === 1, 'the message to go to /messages');
  await staff.locator(`article[id="${cid}"]`, { hasText: 'I would like to move my appointment' }).waitFor({ timeout: 15000 });
  assert(queries.length === before, 'the assistant was not asked');
});

await check('Ada takes over: the widget says who joined', async () => {
  await post(staff.locator(`article[id="${cid}"] form[action$="/take"] button`).click());
  await staff.locator(`article[id="${cid}"][data-state="held"]`).waitFor();
  await until(async () => (await bar(visitor).getAttribute('data-state')) === 'held', 'the widget to show a person holds it');
  assert((await bar(visitor).textContent()).includes('Ada'), await bar(visitor).textContent());
  assert((await visitor.locator('[part~="note"]', { hasText: 'Ada joined the conversation.' }).count()) === 1, 'one joined note');
});

const reply = async (text) => {
  const box = staff.locator(`#reply-${cid}`);
  await box.fill(text);
  const sent = Date.now();
  await post(staff.locator(`article[id="${cid}"] form[action$="/reply"] button`).click());
  await staffBubbles(visitor, text.slice(0, 20)).first().waitFor({ timeout: 15000 });
  return Date.now() - sent;
};

await check('her replies appear in the widget with her name; a hostile one only as text', async () => {
  const took = await reply('Hello, I am Ada. How can I help?');
  note(`staff reply shown in the widget ${took} ms after the click`);
  const first = staffBubbles(visitor, 'How can I help?');
  assert((await first.locator('.who').textContent()) === 'Ada', 'the name above the message');
  await reply(HOSTILE);
  const hostile = staffBubbles(visitor, 'are you there?');
  assert((await hostile.textContent()).includes('<img src=x'), 'the markup is shown as text');
  assert(await visitor.evaluate(() => window.__xss === undefined), 'no script ran');
  assert(await hostile.locator('img').count() === 0, 'no element was made from it');
  await shot(visitor, 'visitor-held');
  await shot(staff, 'staff-inbox-held');
  await axe(visitor, 'widget held', 'sitebot-widget');
  await axe(staff, 'inbox holding a conversation');
});

await check('the visitor\'s message reaches the console and is not answered by the assistant', async () => {
  const before = { queries: queries.length, answers: await assistantCount(visitor) };
  await visitor.locator('[part~="input"]').fill('Can I come on Friday at 3?');
  await visitor.locator('[part~="input"]').press('Enter');
  await staff.locator(`article[id="${cid}"]`, { hasText: 'Can I come on Friday at 3?' }).waitFor({ timeout: 15000 });
  await sleep(500);
  assert(queries.length === before.queries, 'no question went to the assistant');
  assert((await assistantCount(visitor)) === before.answers, 'no answer from the assistant');
  assert((await visitor.locator('[part~="message"][data-role="user"]', { hasText: 'Can I come on Friday at 3?' }).count()) === 1, 'shown once');
});

await check('a reload shows the conversation once and keeps listening', async () => {
  await visitor.reload();
  await bar(visitor).waitFor({ state: 'visible', timeout: 15000 });
  assert((await bar(visitor).getAttribute('data-state')) === 'held', 'still with Ada');
  for (const text of ['How can I help?', 'are you there?']) assert((await staffBubbles(visitor, text).count()) === 1, `"${text}" once after the reload`);
  assert((await visitor.locator('[part~="message"][data-role="user"]', { hasText: 'Can I come on Friday at 3?' }).count()) === 1, 'the visitor\'s message once');
  await reply('Friday at 3 is free.');
  assert((await staffBubbles(visitor, 'Friday at 3 is free.').count()) === 1, 'the reply after the reload, once');
});

await check('a dropped connection resumes where it stopped: nothing lost, nothing twice', async () => {
  await visitorCtx.setOffline(true);
  await sleep(300);
  const box = staff.locator(`#reply-${cid}`);
  await box.fill('Sent while you were offline.');
  await post(staff.locator(`article[id="${cid}"] form[action$="/reply"] button`).click());
  await sleep(500);
  await visitorCtx.setOffline(false);
  await staffBubbles(visitor, 'Sent while you were offline.').first().waitFor({ timeout: 20000 });
  await reply('And this one after it.');
  await sleep(300);
  for (const text of ['Sent while you were offline.', 'And this one after it.', 'Friday at 3 is free.']) {
    assert((await staffBubbles(visitor, text).count()) === 1, `"${text}" once`);
  }
});

await check('on a phone (375 px) the conversation with a person fits, with nothing sideways', async () => {
  await visitor.setViewportSize({ width: 375, height: 667 });
  await sleep(200);
  const wide = await visitor.evaluate(() => {
    const r = document.querySelector('sitebot-widget').shadowRoot.querySelector('[part~="panel"]').getBoundingClientRect();
    return { right: r.right, width: r.width, scroll: document.querySelector('sitebot-widget').shadowRoot.querySelector('.log').scrollWidth };
  });
  assert(wide.right <= 375 && wide.scroll <= 375, JSON.stringify(wide));
  await shot(visitor, 'phone-visitor-held');
  await visitor.setViewportSize({ width: 1280, height: 800 });
  await staff.setViewportSize({ width: 375, height: 667 });
  await shot(staff, 'phone-staff-inbox-held');
  assert(await staff.evaluate(() => document.documentElement.scrollWidth) <= 375, 'the inbox fits a phone');
  await staff.setViewportSize({ width: 1280, height: 800 });
});

await check('after "hand back" the assistant answers again', async () => {
  await post(staff.locator(`article[id="${cid}"] form[action$="/hand-back"] button`).click());
  await bar(visitor).waitFor({ state: 'hidden', timeout: 15000 });
  await visitor.locator('[part~="note"]', { hasText: 'The assistant is answering again.' }).waitFor();
  const before = queries.length;
  await askWidget(visitor, 'And on Saturdays?');
  assert(queries.length === before + 1 && queries[before].conversationId === cid, 'the follow-up went to the assistant in the same conversation');
  await shot(visitor, 'visitor-handed-back');
  await axe(visitor, 'widget handed back', 'sitebot-widget');
  assert(visitorErrors.length === 0 && staffErrors.length === 0, `script errors: ${[...visitorErrors, ...staffErrors].join(' | ')}`);
});

// ---- the second site: nobody online, then nobody taking it within the wait -------------------------------
const late = await (await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } })).newPage();
const lateErrors = [];
watch(late, lateErrors);

await check('nobody online: an unanswered question offers a person, and the contact form opens at once', async () => {
  await late.goto(MISSED_HOST_URL);
  await late.locator(W).click({ timeout: 15000 });
  await askWidget(late, 'Do you repair bicycles?');
  const offer = late.locator('[part~="message"][data-role="assistant"] [part~="lead-open"]');
  await offer.waitFor();
  await offer.click();
  await late.locator('[part~="lead-email"]').waitFor({ state: 'visible', timeout: 10000 });
  assert(!(await bar(late).isVisible()), 'no waiting state');
  await late.locator('.lead button.sec').first().click();
});

let inbox;
await check('the visitor can cancel the wait: back to the assistant, said once', async () => {
  inbox = await staffCtx.newPage();
  await inbox.goto(inboxUrl(MISSED_SITE_ID));
  await until(async () => /\b1$/.test((await inbox.textContent('#inbox-online')).trim()), 'Ada online for the second site');
  await late.locator('.foot [part~="lead-open"]').click();
  await bar(late).waitFor({ state: 'visible', timeout: 10000 });
  await late.locator('[part~="handoff-cancel"]').click();
  await bar(late).waitFor({ state: 'hidden', timeout: 10000 });
  await late.locator('[part~="note"]', { hasText: 'The chat with a person has ended.' }).waitFor();
  await sleep(300);
  assert((await late.locator('[part~="note"]', { hasText: 'The chat with a person has ended.' }).count()) === 1, 'said once');
  assert(await late.locator('.foot [part~="lead-open"]').isVisible(), 'the offer is back');
});

await check('nobody takes it within the wait: the contact form opens by itself, and its lead is sent', async () => {
  await late.locator('.foot [part~="lead-open"]').click();
  await bar(late).waitFor({ state: 'visible', timeout: 10000 });
  await late.locator('[part~="input"]').fill('Please call me back, my tooth hurts');
  await late.locator('[part~="input"]').press('Enter');
  const started = Date.now();
  await late.locator('[part~="lead-email"]').waitFor({ state: 'visible', timeout: 20000 });
  note(`the contact form opened ${Date.now() - started} ms after the message (the site's wait is 3 s)`);
  assert((await late.locator('.lead').textContent()).includes('Nobody could join right now'), 'says why');
  await shot(late, 'visitor-missed-form');
  await axe(late, 'contact form after a missed wait', 'sitebot-widget');
  await late.locator('[part~="lead-email"]').fill('late@example.com');
  await late.locator('[part~="lead-submit"]').click();
  await late.locator('.lead .ok:not([hidden])', { hasText: 'Thank you!' }).waitFor({ timeout: 15000 });
  assert(lateErrors.length === 0, lateErrors.join(' | '));
  await inbox.close();
});

await check('the owner\'s hand-off settings page: accessible, a wrong value refused with the reason, then saved', async () => {
  const settings = await staffCtx.newPage();
  watch(settings, staffErrors);
  await settings.goto(`${SITEBOT}/console/sites/${MISSED_SITE_ID}/settings`);
  assert(await settings.locator('#enabled').isChecked(), 'hand-off is on');
  await axe(settings, 'settings');
  await settings.fill('#hours', 'Mon-Fri 9-17');
  await settings.click('form[action$="/settings"] button[type=submit]');
  await settings.locator('.error[role=alert]', { hasText: 'Opening hours' }).waitFor();
  await axe(settings, 'settings with an error');
  await settings.fill('#hours', 'Mon-Sun 00:00-24:00');
  await settings.fill('#timezone', 'Europe/Berlin');
  await settings.click('form[action$="/settings"] button[type=submit]');
  await settings.locator('[role=status]', { hasText: 'Saved.' }).waitFor();
  assert((await settings.inputValue('#timezone')) === 'Europe/Berlin', 'the new time zone is shown');
  await shot(settings, 'staff-settings');
  await settings.setViewportSize({ width: 375, height: 667 });
  await shot(settings, 'phone-staff-settings');
  assert(await settings.evaluate(() => document.documentElement.scrollWidth) <= 375, 'the settings fit a phone');
  assert(staffErrors.length === 0, staffErrors.join(' | '));
  await settings.close();
});

await browser.close();
done();
