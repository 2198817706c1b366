/* e2e.js - end-to-end test of the viewer page in headless Chromium (the
   system's /usr/bin/chromium, driven by playwright-core; no browser is
   downloaded). Usage: node e2e.js URL TOP_SITE PROFILE_DIR [SHOTS_DIR]
   Prints PASS:/FAIL: lines; with SHOTS_DIR also saves screenshots. */
'use strict';
const { launch } = require('./browser.js');

const [url, topSite, profile, shots] = process.argv.slice(2);
const { pass, fail, check, finish } = require('./checks');

/* Painted pixels of a canvas (alpha > 0). */
const inked = (page, id) => page.evaluate((id) => {
  const c = document.getElementById(id);
  if (!c || !c.width || !c.height) return 0;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
  return n;
}, id);
const tableRows = (page) => page.$$eval('#tree-table tbody tr', (rs) => rs.map((r) => Array.from(r.cells).map((c) => c.textContent)));

(async () => {
  const ctx = await launch(profile, { width: 1440, height: 900 });
  const errors = [];
  let step = 'start';
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    /* the bad-filter step's 400 answer is logged by Chromium: expected */
    page.on('console', (m) => { if (m.type() === 'error' && !/status of 400/.test(m.text())) errors.push(m.text()); });
    /* any request off this server would be a bug (the page must work offline) */
    const origin = new URL(url).origin;
    const foreign = [];
    page.on('request', (r) => { if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) foreign.push(r.url()); });

    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
    check('page loads and reports ready', (await page.$eval('body', (b) => b.dataset.ready)) === '1' &&
      (await page.$$('#tree-table, #flame')).length > 0);
    check('info panel shows the executable', (await page.textContent('#info')).includes('leak.exe'));
    check('memory chart drawn', (await inked(page, 'chart')) > 2000, await inked(page, 'chart'));
    check('flame graph drawn', (await inked(page, 'flame')) > 2000, await inked(page, 'flame'));
    if (shots) await page.screenshot({ path: shots + '/flame.png' });

    /* hover a frame: the tooltip names it with bytes and error */
    const box = await page.locator('#flame').boundingBox();
    await page.mouse.move(box.x + 40, box.y + 18 + 9);
    const tip = await page.textContent('#tooltip');
    check('hovering a frame shows name, bytes and sampling error', /bytes/.test(tip) && /sampling error/.test(tip) && tip.length > 20, tip);

    /* search highlights and sums */
    await page.fill('#search', 'Leak');
    await page.waitForFunction(() => /frames/.test(document.getElementById('crumbs').textContent));
    check('search reports matching frames and their share', /search .*: \d+ frames, .*%/.test(await page.textContent('#crumbs')));
    await page.fill('#search', '');

    /* the table names the top allocation site */
    await page.click('.tabs button[data-view="table"]');
    await page.waitForSelector('#tree-table tbody tr[data-node]');
    const before = await tableRows(page);
    check('table: top allocation site is ' + topSite, before[0][0].includes(topSite), before[0][0]);
    await page.click('#tree-table tbody tr[data-node]');
    await page.waitForSelector('#focus-panel h3');
    check('selecting a row shows its callers', (await page.textContent('#focus-panel')).includes('Called from'));
    /* keyboard: down moves the selection to the next row */
    const rowNodes = await page.$$eval('#tree-table tbody tr[data-node]', (rs) => rs.map((r) => r.dataset.node));
    const sel0 = await page.$eval('#tree-table tr.selected', (r) => r.dataset.node).catch(() => null);
    await page.keyboard.press('ArrowDown');
    const sel = await page.$eval('#tree-table tr.selected', (r) => r.dataset.node).catch(() => null);
    check('keyboard moves the selection to the next row', sel0 === rowNodes[0] && rowNodes.length > 1 && sel === rowNodes[1],
      'before ' + sel0 + ', after ' + sel + ', rows ' + rowNodes.slice(0, 3).join(','));

    /* drag on the chart over the first quarter, apply as "allocated in range" */
    const cb = await page.locator('#chart').boundingBox();
    await page.mouse.move(cb.x + 62 + 2, cb.y + cb.height / 2);
    await page.mouse.down();
    await page.mouse.move(cb.x + 62 + (cb.width - 76) * 0.25, cb.y + cb.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForSelector('#chart-sel-bar:not([hidden])');
    if (shots) await page.screenshot({ path: shots + '/select.png' });
    step = 'apply the chart selection';
    await page.click('#chart-sel-bar button[data-sel="alloc"]');
    await page.waitForFunction(() => /filter=alloc:/.test(location.search), null, { timeout: 10000 });
    step = 'wait for the filtered table';
    await page.waitForFunction(() => document.getElementById('busy').hidden, null, { timeout: 10000 });
    await page.waitForTimeout(300);
    const after = await tableRows(page);
    check('time filter changes the table', JSON.stringify(after) !== JSON.stringify(before));
    const ftext = await page.inputValue('#filter-text');
    check('filter text shows the range', /^alloc:/.test(ftext), ftext);
    check('filter shown as a sentence', (await page.textContent('#filter-rows')).includes('allocated between'));
    check('chart still drawn with the filtered curve', (await inked(page, 'chart')) > 2000);

    /* reload: same view from the URL */
    const urlBefore = page.url();
    await page.reload();
    await page.waitForSelector('body[data-ready="1"]', { timeout: 20000 });
    await page.waitForSelector('#tree-table tbody tr[data-node]');
    await page.waitForTimeout(200);
    check('reload keeps the URL', page.url() === urlBefore);
    check('reload keeps the filter', (await page.inputValue('#filter-text')) === ftext);
    check('reload keeps the table view', !(await page.$eval('#view-table', (e) => e.hidden)));
    const reloaded = await tableRows(page);
    check('reload shows the same table', JSON.stringify(reloaded) === JSON.stringify(after));
    if (shots) {
      await page.click('#tree-table tbody tr[data-node]');
      await page.waitForSelector('#focus-panel h3');
      await page.screenshot({ path: shots + '/table.png' });
    }

    /* a bad filter is refused with the engine's message, page unchanged */
    await page.fill('#filter-text', 'size:>=4parsecs');
    await page.click('#filter-apply');
    await page.waitForSelector('#filter-error:not([hidden])');
    check('bad filter shows the error', /filter: column/.test(await page.textContent('#filter-error')));
    check('bad filter leaves the URL alone', page.url() === urlBefore);

    /* the other views */
    await page.keyboard.press('Escape');
    await page.locator('body').press('3');
    await page.waitForSelector('#graph-scroll svg .gnode');
    check('call graph drawn with boxes and edges', (await page.$$('#graph-scroll .gnode')).length > 2 && (await page.$$('#graph-scroll .gedge')).length > 1);
    if (shots) await page.screenshot({ path: shots + '/graph.png' });
    await page.locator('body').press('4');
    await page.waitForTimeout(300);
    check('histograms drawn', (await inked(page, 'hist-size')) > 500 && (await inked(page, 'hist-life')) > 500);
    if (shots) await page.screenshot({ path: shots + '/hist.png' });
    await page.locator('body').press('1');
    await page.locator('body').press('d');
    await page.waitForFunction(() => /dir=main/.test(location.search));
    await page.waitForTimeout(300);
    check('direction switch: flame graph from main drawn', (await inked(page, 'flame')) > 2000);
    if (shots) await page.screenshot({ path: shots + '/main.png' });
    /* keyboard in the flame graph: down to the heaviest child, Enter zooms, Esc resets */
    step = 'flame graph keyboard';
    await page.focus('#flame');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /zoom=\d+\.\d+/.test(location.search), null, { timeout: 5000 });
    check('keyboard: arrows and Enter zoom the flame graph', /Reset zoom/.test(await page.textContent('#crumbs')));
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !/zoom=/.test(location.search), null, { timeout: 5000 });
    await page.waitForTimeout(200);
    check('keyboard: Esc resets the zoom', !/Reset zoom/.test(await page.textContent('#crumbs')) && !/zoom=/.test(page.url()),
      await page.textContent('#crumbs'));

    /* points of interest: a call path opens zoomed in the flame graph from main */
    step = 'point of interest';
    await page.locator('#poi .poi-item').nth(await page.$$eval('#poi h3', (hs) => {
      /* index of the first item after the "Heaviest call paths" heading */
      let n = 0;
      for (const el of document.querySelectorAll('#poi > *')) {
        if (el.tagName === 'H3' && /call paths/.test(el.textContent)) return n;
        if (el.classList.contains('poi-item')) n++;
      }
      return 0;
    })).click();
    await page.waitForFunction(() => /zoom=\d/.test(location.search) && /dir=main/.test(location.search));
    await page.waitForFunction(() => /Reset zoom/.test(document.getElementById('crumbs').textContent), null, { timeout: 10000 });
    check('a heaviest call path opens zoomed from main', (await inked(page, 'flame')) > 1000);
    /* measure by blocks */
    await page.selectOption('#metric', 'count');
    await page.waitForFunction(() => /metric=count/.test(location.search));
    await page.waitForFunction(() => /blocks/.test(document.getElementById('poi').textContent), null, { timeout: 10000 });
    check('measuring blocks instead of bytes: the table counts blocks',
      (await page.textContent('#th-value')) === 'Blocks' && /metric=count/.test(page.url()),
      await page.textContent('#th-value'));

    check('no request left this server', foreign.length === 0, foreign.join(' '));
    check('no script errors', errors.length === 0, errors.join(' | '));
  } catch (e) {
    fail('browser test aborted at step "' + step + '": ' + e.message.split('\n')[0]);
  } finally {
    await ctx.close();
  }
  finish();
})();
