/* screenshots_cxx.js - the documentation's screenshots of the viewer on
   the C++ example (docs/images/viewer-cxx-*.png) in headless Chromium. Not
   a test: run by scripts/viewer-screenshots.sh with a server on a trace of
   build/examples/sessions. Usage: node screenshots_cxx.js URL OUTDIR PROFILE */
'use strict';
const { chromium } = require('playwright-core');
const [url, out, profile] = process.argv.slice(2);

(async () => {
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1,
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  const open = async (u) => {
    await page.goto(u);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    await page.waitForTimeout(400);
  };
  const shot = (name) => page.screenshot({ path: out + '/viewer-cxx-' + name + '.png' });

  /* flame graph from the allocation sites: the program's functions at the
     bottom, short names; hovering one shows its full name */
  await open(url);
  const fb = await page.locator('#flame').boundingBox();
  await page.mouse.move(fb.x + fb.width * 0.75, fb.y + 18 * 1 + 9);
  await page.waitForTimeout(250);
  await shot('flame');

  /* the table by temporary blocks */
  await open(url + '?view=table&metric=temporary');
  await page.waitForSelector('#tree-table tbody tr[data-node]');
  await page.click('#tree-table tbody tr[data-node]');
  await page.waitForSelector('#focus-panel h3');
  await page.waitForTimeout(300);
  await shot('temporary');

  /* call graph: short names in the boxes */
  await open(url + '?view=graph');
  await page.waitForSelector('#graph-scroll svg');
  await shot('graph');
  await ctx.close();
})();
