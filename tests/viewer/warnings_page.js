/* warnings_page.js - the viewer page shows the reader's warnings about the
   trace: a "⚠ N warning(s)" mark beside the title whose tooltip holds them,
   and a Warning row each in the Trace panel; none on a sound trace. Usage:
   node warnings_page.js URL PROFILE_DIR EXPECTED (EXPECTED: the one warning's
   text, or "" for none). Prints PASS:/FAIL: lines. */
'use strict';
const { launch } = require('./browser.js');
const { check, finish } = require('./checks');

const [url, profile, expected] = process.argv.slice(2);

(async () => {
  const ctx = await launch(profile, { width: 1280, height: 800 });
  const errors = [];
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    const mark = await page.$eval('#trace-warnings', (e) => ({ hidden: e.hidden, text: e.textContent, title: e.title }));
    const info = await page.textContent('#info');
    if (expected) {
      check('the mark beside the title is shown', !mark.hidden && mark.text === '⚠ 1 warning', JSON.stringify(mark));
      check('its tooltip is the warning', mark.title === expected, mark.title);
      check('the Trace panel has a Warning row with it', info.includes('Warning' + expected), info);
    } else {
      check('a sound trace: no mark', mark.hidden && mark.text === '', JSON.stringify(mark));
      check('a sound trace: no Warning row', !info.includes('Warning'), info);
    }
    check('no script errors', errors.length === 0, errors.join('; '));
  } catch (e) {
    check('page run', false, e.message);
  } finally {
    await ctx.close();
  }
  finish();
})();
