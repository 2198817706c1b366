/* hostile-page.js - what the page shows when the server holds back, in
   headless Chromium: a call tree cut at the server's node limit shows a
   notice (not a silently smaller flame graph), and a 503 from a server busy
   with other requests is retried after Retry-After rather than shown as an
   error. Usage: node hostile-page.js URL PROFILE_DIR. Prints PASS:/FAIL:. */
'use strict';
const { launch } = require('./browser.js');

const [url, profile] = process.argv.slice(2);
const { pass, fail, finish } = require('./checks');

(async () => {
  const ctx = await launch(profile, { width: 1280, height: 800 });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    /* the first tree request is answered 503 once, as a busy server would */
    let busy = 0;
    await page.route(/\/api\/tree\?/, async (route) => {
      if (busy++ === 0) {
        await route.fulfill({ status: 503, headers: { 'Retry-After': '1' }, contentType: 'application/json',
          body: '{"error":"server busy: test","status":503}' });
      } else {
        await route.continue();
      }
    });
    const t0 = Date.now();
    await page.goto(url + '?dir=main&min=0');
    await page.waitForSelector('body[data-ready="1"]', { timeout: 90000 });
    await page.waitForSelector('#truncated', { timeout: 90000 });
    const text = await page.textContent('#truncated');
    if (/truncated at .*2,?000,?000/i.test(text) || /truncated at 2/i.test(text)) pass('truncated tree: the page says so: "' + text + '"');
    else fail('truncated tree notice: "' + text + '"');
    if (busy >= 2) pass('a 503 on the tree was retried (' + busy + ' requests, ' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)');
    else fail('503 not retried (' + busy + ' tree requests)');
    const err = await page.evaluate(() => { const e = document.querySelector('.error, #error'); return e && !e.hidden ? e.textContent : ''; });
    if (!/busy/.test(err || '')) pass('no error shown for the retried 503');
    else fail('error shown: ' + err);
  } catch (e) {
    fail('exception: ' + e.message);
  } finally {
    await ctx.close();
  }
  finish();
})();
