/* screenshots.js - takes the documentation's screenshots of the viewer in
   headless Chromium. Not a test: run by scripts/viewer-screenshots.sh, one
   set at a time:
     node screenshots.js ocaml LEAK_URL OCAMLOPT_URL OUTDIR PROFILE
       docs/images/viewer-*.png (the treemap too), with servers on leak.ctf and
       upstream_ocamlopt_v2.ctf;
     node screenshots.js cxx URL OUTDIR PROFILE
       docs/images/viewer-cxx-*.png, with a server on a trace of
       build/examples/sessions. */
'use strict';
const [set, ...args] = process.argv.slice(2);

/* The pictures of OCaml traces: a compiler run and a leak. */
async function ocaml(page, open, shot, leak, opt) {
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

  /* the compiler run as a treemap by call path, hovering a rectangle */
  await open(opt + '?view=treemap&dir=main');
  const tb = await page.locator('#treemap').boundingBox();
  await page.mouse.move(tb.x + tb.width * 0.12, tb.y + tb.height * 0.3);
  await page.waitForTimeout(200);
  await shot('treemap');

  /* call graph and histograms of the compiler run */
  await open(opt + '?view=graph');
  await page.waitForSelector('#graph-scroll svg');
  await shot('graph');
  await open(leak + '?view=hist');
  await shot('hist');
}

/* The pictures of the C++ example. */
async function cxx(page, open, shot, url) {
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
}

const sets = { ocaml: { urls: 2, prefix: 'viewer-', take: ocaml },
               cxx: { urls: 1, prefix: 'viewer-cxx-', take: cxx } };
const chosen = sets[set];
if (!chosen || args.length !== chosen.urls + 2) {
  console.error('usage: node screenshots.js ocaml LEAK_URL OCAMLOPT_URL OUTDIR PROFILE\n' +
                '       node screenshots.js cxx URL OUTDIR PROFILE');
  process.exit(2);
}
const urls = args.slice(0, chosen.urls), [out, profile] = args.slice(chosen.urls);

(async () => {
  const { launch } = require('./browser.js');
  const ctx = await launch(profile, { width: 1440, height: 900 }, { deviceScaleFactor: 1 });
  const page = ctx.pages()[0] || await ctx.newPage();
  const open = async (url) => {
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    await page.waitForTimeout(400);
  };
  const shot = (name) => page.screenshot({ path: out + '/' + chosen.prefix + name + '.png' });
  await chosen.take(page, open, shot, ...urls);
  await ctx.close();
})();
