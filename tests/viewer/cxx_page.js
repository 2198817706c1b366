/* cxx_page.js - the viewer page on a C++ trace and on an empty one, in
   headless Chromium (run by tests/viewer/cxx.sh): hovering a flame frame
   shows the full name; table rows and points of interest show short names
   that end with the function's own name, the full name in their title;
   an empty trace says so instead of blaming the filter.
   Usage: node cxx_page.js CXX_URL EMPTY_URL PROFILE_DIR */
'use strict';
const { launch } = require('./browser.js');

const [cxx, empty, profile] = process.argv.slice(2);
const { check, finish } = require('./checks');

(async () => {
  const ctx = await launch(profile, { width: 1440, height: 900 });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const open = async (u) => {
      await page.goto(u);
      await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
      await page.waitForTimeout(300);
    };

    await open(cxx);
    /* the flame graph from the sites: hover each frame of the first row
       above the root until the tooltip names open_session */
    const fb = await page.locator('#flame').boundingBox();
    let tip = '';
    for (let x = 0.02; x < 1 && !/open_session/.test(tip); x += 0.04) {
      await page.mouse.move(fb.x + fb.width * x, fb.y + 18 + 9);
      await page.waitForTimeout(60);
      tip = await page.$eval('#tooltip .tt-name', (e) => e.textContent).catch(() => '');
    }
    check('flame: hovering open_session shows its full name', tip === 'demo::Registry::open_session(int)', tip);

    const poi = await page.$$eval('#poi .poi-item .nm', (es) => es.map((e) => [e.textContent, e.closest('.poi-item').title]));
    const os = poi.find(([, title]) => title.startsWith('demo::Registry::open_session(int)'));
    check('points of interest: open_session listed with its full name in the title', !!os, JSON.stringify(poi));
    if (os) check('points of interest: its name ends with the own name "open_session(…)"', /open_session\(…\)$/.test(os[0]), os[0]);
    check('points of interest: no std:: site', !poi.some(([t]) => /^std::/.test(t)), JSON.stringify(poi));

    await page.click('.tabs button[data-view="table"]');
    await page.waitForSelector('#tree-table tbody tr[data-node]');
    const rows = await page.$$eval('#tree-table tbody tr[data-node] td.col-name', (cs) => cs.map((c) => [c.textContent.replace(/^[▸▾]/, ''), c.title]));
    const r = rows.find(([, title]) => title === 'demo::Registry::open_session(int)');
    check('table: open_session row shows the short name, the full one on hover', r && r[0] === 'demo::Registry::open_session(…)', JSON.stringify(rows));

    /* the focus panel of open_session lists the plumbing it allocates through */
    await page.click('#tree-table tbody tr[data-node]:has(td[title="demo::Registry::open_session(int)"])');
    await page.waitForFunction(() => /open_session/.test((document.querySelector('#focus-panel h3') || {}).textContent || ''));
    const focus = await page.$eval('#focus-panel', (e) => e.textContent);
    /* (cut in the middle to fit the panel: "std::vector<s…::resize(…)") */
    check('focus panel: "Allocates through" std::vector<…>::resize(…)',
      /Allocates through[\s\S]*std::vector<[^·]*::resize\(…\)/.test(focus), focus.slice(0, 300));

    const cells = await page.$$eval('#tree-table tbody tr[data-node]', (rs) => rs.map((r) => Array.from(r.cells).map((c) => c.textContent)));
    const heads = await page.$$eval('#tree-table thead th', (hs) => hs.map((h) => h.textContent));
    const ti = heads.indexOf('Temporary');
    check('table: a Temporary column', ti >= 0, heads.join('|'));
    const le = cells.find((c) => /^.?log_event$/.test(c[0]));
    check('table: log_event makes temporary blocks', le && ti >= 0 && /^[0-9.]+[kM]?$/.test(le[ti]) && le[ti] !== '0', le && le[ti]);

    await page.selectOption('#metric', 'temporary');
    await page.waitForFunction(() => document.getElementById('busy').hidden);
    await page.waitForTimeout(300);
    const head = await page.$eval('#th-value', (e) => e.textContent);
    check('table by temporary blocks counts blocks', head === 'Blocks', head);
    /* "allocator frames": the stacks as recorded, in the URL too */
    await page.check('#raw');
    await page.waitForFunction(() => document.getElementById('busy').hidden && /raw=1/.test(location.search));
    await page.waitForTimeout(300);
    const rawPoi = await page.$$eval('#poi .poi-item', (es) => es.map((e) => e.title.split('\n')[0]));
    check('allocator frames on: a std:: site among the points of interest', rawPoi.some((t) => /(^|\s)std::/.test(t)), JSON.stringify(rawPoi.slice(0, 4)));
    await page.uncheck('#raw');
    await page.waitForFunction(() => document.getElementById('busy').hidden && !/raw=1/.test(location.search));
    check('no page errors', errors.length === 0, errors.join('; '));

    await open(empty);
    const msg = await page.$eval('#poi', (e) => e.textContent);
    check('empty trace: says the trace holds no allocation', /the trace holds no allocation/.test(msg), msg);
    check('empty trace: does not blame a filter', !/passes the filter/.test(msg), msg);
    await open(empty + '?filter=' + encodeURIComponent('size:>1G'));
    const msg2 = await page.$eval('#poi', (e) => e.textContent);
    check('with a filter: says no allocation passes it', /no allocation passes the filter/.test(msg2), msg2);
  } catch (e) {
    check('page steps', false, e.message);
  }
  await ctx.close();
  finish();
})();
