/* loading_page.js - the viewer page while the server is still reading the
   trace: a progress bar, then the trace once loaded. Usage:
   node loading_page.js URL GO_FILE PROFILE_DIR (GO_FILE is created when the
   bar has been seen: the test then feeds the rest of the trace). Prints
   PASS:/FAIL: lines. */
'use strict';
const fs = require('fs');
const { chromium } = require('playwright-core');

const [url, goFile, profile] = process.argv.slice(2);
let failed = 0;
const check = (m, ok, detail) => { if (!ok) failed++; console.log((ok ? 'PASS: ' : 'FAIL: ') + m + (!ok && detail !== undefined ? ' (' + detail + ')' : '')); };

(async () => {
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 800 },
  });
  const errors = [];
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
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
    if (!fs.existsSync(goFile)) fs.writeFileSync(goFile, '');
  } finally {
    await ctx.close();
  }
  process.exit(failed ? 1 : 0);
})();
