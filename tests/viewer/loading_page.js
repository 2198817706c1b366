/* loading_page.js - the viewer page while the server is still reading the
   trace: a progress bar, then the trace once loaded. Usage:
   node loading_page.js URL GO_FILE PROFILE_DIR (GO_FILE is created when the
   bar has been seen: the test then feeds the rest of the trace). Prints
   PASS:/FAIL: lines. With a fourth argument "folded" (and GO_FILE -): a
   folded trace's page instead: ready, says it is folded, curve drawn. */
'use strict';
const fs = require('fs');
const { launch } = require('./browser.js');

const [url, goFile, profile, mode] = process.argv.slice(2);
const { check, finish } = require('./checks');

(async () => {
  const ctx = await launch(profile, { width: 1280, height: 800 });
  const errors = [];
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    if (mode === 'folded') {
      await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
      check('folded trace: the info panel says so', (await page.textContent('#info')).includes('folded'));
      const inked = await page.evaluate(() => {
        const c = document.getElementById('chart');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
        return n;
      });
      check('folded trace: memory chart drawn', inked > 2000, inked);
      check('folded trace: flame graph rows in the table or flame view', (await page.$$('#flame')).length > 0);
      check('no script errors', errors.length === 0, errors.join('; '));
      return;
    }
    await page.waitForSelector('#loading:not([hidden])', { timeout: 10000 });
    const pct = await page.textContent('#loading-pct');
    check('page shows a progress bar while loading', /read|%/.test(pct), pct);
    check('progress names the trace', (await page.textContent('#loading-file')).includes('pipe-whole.ctf'));
    fs.writeFileSync(goFile, '');
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    check('then the trace: progress gone, info shown',
      (await page.$eval('#loading', (e) => e.hidden)) && (await page.textContent('#info')).includes('viewer-bench-workload'));
    check('no script errors', errors.length === 0, errors.join('; '));
  } catch (e) {
    check('page run', false, e.message);
    if (goFile !== '-' && !fs.existsSync(goFile)) fs.writeFileSync(goFile, '');
  } finally {
    await ctx.close();
  }
  finish();
})();
