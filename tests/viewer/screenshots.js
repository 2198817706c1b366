/* screenshots.js - takes the documentation's screenshots of the viewer
   (docs/images/viewer-*.png) in headless Chromium. Not a test: run by
   scripts/viewer-screenshots.sh with two servers, one on leak.ctf and one
   on upstream_ocamlopt_v2.ctf. Usage: node screenshots.js LEAK_URL OCAMLOPT_URL OUTDIR PROFILE */
'use strict';
const { chromium } = require('playwright-core');
const [leak, opt, out, profile] = process.argv.slice(2);

(async () => {
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1,
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  const open = async (url) => {
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    await page.waitForTimeout(400);
  };
  const shot = (name) => page.screenshot({ path: out + '/viewer-' + name + '.png' });

  /* flame graph of a compiler run, hovering a frame */
  await open(opt);
  const fb = await page.locator('#flame').boundingBox();
  await page.mouse.move(fb.x + fb.width * 0.06, fb.y + 18 * 2 + 9);
  await page.waitForTimeout(200);
  await shot('flame');

  /* the leak: select the middle of the run on the chart */
  await open(leak + '?filter=live:end');
  const cb = await page.locator('#chart').boundingBox();
  await page.mouse.move(cb.x + 62 + (cb.width - 76) * 0.45, cb.y + cb.height / 2);
  await page.mouse.down();
  await page.mouse.move(cb.x + 62 + (cb.width - 76) * 0.75, cb.y + cb.height / 2, { steps: 6 });
  await page.mouse.up();
  await page.waitForTimeout(200);
  await shot('select');
  await page.click('#chart-sel-bar button[data-sel="alloc"]');
  await page.waitForFunction(() => document.getElementById('busy').hidden);
  await page.waitForTimeout(400);

  /* ... in the table, with the top site's callers and callees */
  await page.click('.tabs button[data-view="table"]');
  await page.waitForSelector('#tree-table tbody tr[data-node]');
  await page.click('#tree-table tbody tr[data-node]');
  await page.waitForSelector('#focus-panel h3');
  await page.keyboard.press('ArrowRight');
  await page.waitForTimeout(300);
  await shot('table');

  /* call graph and histograms of the compiler run */
  await open(opt + '?view=graph');
  await page.waitForSelector('#graph-scroll svg');
  await shot('graph');
  await open(leak + '?view=hist');
  await shot('hist');
  await ctx.close();
})();
