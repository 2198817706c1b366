/* hostile-origin.js - in headless Chromium, pages from other origins try to
   read the viewer's API: fetch() in no-cors mode and <img src>, from another
   port of the same loopback address (same site) and from the same port under
   another name (cross site). ATTACK_URL is a small server on another port
   of 127.0.0.1 whose evil.html does that (hostile-origin.sh writes it).
   The statuses are read from Chromium's network layer, which sees the
   server's answer even when the page is not allowed to. Every such request
   must be answered 403 by the viewer; the viewer's own page must still get
   200s. Prints PASS:/FAIL: lines.
   Usage: node hostile-origin.js VIEWER_URL ATTACK_PORT PROFILE_DIR */
'use strict';
const { launch } = require('./browser.js');

const [url, attackPort, profile] = process.argv.slice(2);
const viewer = new URL(url);
const { pass, fail, finish } = require('./checks');

(async () => {
  const ctx = await launch(profile, { width: 1280, height: 720 });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    /* The raw status from the network layer (Chromium blocks the body of
       cross-origin JSON from the page, but the server has answered by then).
       The two events can come in either order. */
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Network.enable');
    let urls = new Map(), statuses = new Map();
    cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
    cdp.on('Network.responseReceivedExtraInfo', (e) => statuses.set(e.requestId, e.statusCode));
    const api = () => [...statuses].map(([id, st]) => [urls.get(id), st])
      .filter(([u]) => u && u.startsWith(viewer.origin + '/api/'));
    const reset = () => { urls = new Map(); statuses = new Map(); };
    const others = [
      ['same site (another port of 127.0.0.1)', 'http://127.0.0.1:' + attackPort + '/evil.html'],
      ['cross site (localhost, another port)', 'http://localhost:' + attackPort + '/evil.html'],
    ];
    for (const [what, at] of others) {
      reset();
      await page.goto(at);
      await page.waitForFunction(() => document.title === 'done', null, { timeout: 20000 });
      for (let i = 0; i < 30 && api().length < 3; i++) await page.waitForTimeout(100);
      const seen = api();
      if (seen.length < 3) fail(what + ': the server answered ' + seen.length + ' API requests, expected 3: ' + seen.map(([u, s]) => s + ' ' + u).join(', '));
      else if (seen.every(([, s]) => s === 403)) pass(what + ': ' + seen.length + ' API requests, all refused (403)');
      else fail(what + ': ' + seen.map(([u, s]) => s + ' ' + u).join(', '));
    }
    reset();
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
    await page.waitForTimeout(300);
    const seen = api();
    if (seen.length && seen.every(([, s]) => s === 200)) pass("the viewer's own page: " + seen.length + ' API requests, all 200');
    else fail("the viewer's own page: " + seen.map(([u, s]) => s + ' ' + u).join(', '));
  } catch (e) {
    fail('exception: ' + e.message);
  } finally {
    await ctx.close();
  }
  finish();
})();
