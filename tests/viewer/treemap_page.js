/* treemap_page.js - the viewer's treemap in headless Chromium (run by
   tests/viewer/treemap.sh). Usage:
     node treemap_page.js LEAK_URL HTML_URL BIG_URL PROFILE_DIR
   LEAK_URL serves tests/fixtures/memtrace/leak.ctf, HTML_URL a trace whose
   function names are HTML markup (gen_hostile html), BIG_URL one with
   tens of thousands of call paths (viewer-gen). Prints PASS:/FAIL: lines. */
'use strict';
const { launch } = require('./browser.js');

const [leak, html, big, profile] = process.argv.slice(2);
let failed = 0;
const check = (m, ok, detail) => {
  if (!ok) failed++;
  console.log((ok ? 'PASS: ' : 'FAIL: ') + m + (ok || detail === undefined ? '' : ' (' + detail + ')'));
};

/* What the treemap shows: its box and every rectangle. */
const shown = (page) => page.evaluate(() => {
  const box = document.getElementById('treemap').getBoundingClientRect();
  const rects = Array.from(document.querySelectorAll('#treemap [role=treeitem]')).map((e) => {
    const r = e.getBoundingClientRect(), lab = e.querySelector('.tm-label');
    return { fn: e.dataset.fn === undefined ? null : +e.dataset.fn, i: e.dataset.i === undefined ? null : +e.dataset.i,
      kind: e.dataset.k || 'node', level: +e.getAttribute('aria-level'), label: e.getAttribute('aria-label'),
      text: lab ? lab.textContent : null, head: (e.querySelector('.tm-head') || {}).textContent || null,
      x: r.left, y: r.top, w: r.width, h: r.height, tab: e.tabIndex };
  });
  return { box: { x: box.left, y: box.top, w: box.width, h: box.height }, rects };
});
/* An API answer, asked by the page itself. */
const api = (page, q) => page.evaluate(async (q) => (await fetch('api/' + q)).json(), q);
/* The children of a tree node, by function id: {id: v} */
const childrenOf = (j, node) => {
  const out = {};
  for (let k = 0; k < j.n; k++) if (j.nodes.p[k] === node && j.nodes.v[k] > 0) out[j.funcs.id[j.nodes.f[k]]] = j.nodes.v[k];
  return out;
};
const nodeOf = (j, path) => {   /* the node reached by function ids from the root */
  let cur = 0;
  for (const id of path) {
    let next = -1;
    for (let k = 0; k < j.n && next < 0; k++) if (j.nodes.p[k] === cur && j.funcs.id[j.nodes.f[k]] === id) next = k;
    if (next < 0) return -1;
    cur = next;
  }
  return cur;
};
/* The rectangles at the top of the view (aria-level 1) by function id. */
const topFns = (s) => s.rects.filter((r) => r.level === 1 && r.kind === 'node').map((r) => r.fn).sort((a, b) => a - b);
/* Each top rectangle's area against its value's share of the zoomed node;
   a pixel off on each side is allowed. */
const areasMatch = (s, kids, total) => {
  const A = s.box.w * s.box.h, bad = [];
  let n = 0;
  for (const r of s.rects.filter((x) => x.level === 1 && x.kind === 'node')) {
    const v = kids[r.fn];
    const want = v / total * A, got = r.w * r.h;
    if (!(Math.abs(got - want) <= r.w + r.h + 1)) bad.push(r.label + ': ' + got.toFixed(0) + ' px² for ' + want.toFixed(0));
    n++;
  }
  return { ok: n >= 2 && !bad.length, detail: n + ' rectangles' + (bad.length ? ': ' + bad.join('; ') : '') };
};
const ready = async (page) => {
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  await page.waitForFunction(() => document.getElementById('busy').hidden, null, { timeout: 20000 });
  await page.waitForSelector('#treemap [role=treeitem]', { timeout: 20000 });
  await page.waitForTimeout(150);
};
const zoomParam = (page) => new URL(page.url()).searchParams.get('zoom') || '';

(async () => {
  const ctx = await launch(profile, { width: 1440, height: 900 });
  const errors = [];
  let step = 'start';
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

    /* ---- by site, on the leak fixture: key 5 from the flame graph */
    step = 'open by site';
    await page.goto(leak);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    await page.locator('body').press('5');
    await page.waitForFunction(() => /view=treemap/.test(location.search));
    await ready(page);
    check('key 5 opens the treemap, the keyboard focus on its largest rectangle',
      await page.evaluate(() => document.activeElement.getAttribute('role') === 'treeitem' &&
        document.activeElement.getAttribute('aria-level') === '1' && !document.querySelector('#treemap .tm-ring').hidden));
    let s = await shown(page);
    const sites = await api(page, 'tree?dir=sites');
    const siteKids = childrenOf(sites, 0);
    check('treemap drawn: one rectangle per allocation site (' + topFns(s).length + ')',
      JSON.stringify(topFns(s)) === JSON.stringify(Object.keys(siteKids).map(Number).sort((a, b) => a - b)),
      JSON.stringify(topFns(s)) + ' vs ' + JSON.stringify(Object.keys(siteKids)));
    let m = areasMatch(s, siteKids, sites.total);
    check('by site: areas proportional to the API\'s bytes (' + m.detail + ')', m.ok);
    check('by site: the "by site" button is pressed', await page.$eval('#crumbs .seg[aria-pressed=true]', (b) => b.textContent) === 'by site');
    /* colours: the flame graph's colour of the same name */
    const colours = await page.evaluate(() => Array.from(document.querySelectorAll('#treemap [data-i]')).filter((e) => e.getAttribute('role')).map((e) => {
      const probe = document.createElement('div');
      probe.style.background = MT.frameColor(App.tree.name(+e.dataset.i));
      document.body.appendChild(probe);
      const want = getComputedStyle(probe).backgroundColor;
      probe.remove();
      return getComputedStyle(e).backgroundColor === want;
    }));
    check('colours are the flame graph\'s for the same names (' + colours.length + ')', colours.length > 2 && colours.every(Boolean));
    /* labels: the name, value and share */
    const biggest = s.rects.filter((r) => r.level === 1 && r.kind === 'node').sort((a, b) => b.w * b.h - a.w * a.h)[0];
    const bigName = sites.funcs.short[sites.funcs.id.indexOf(biggest.fn)];
    check('the largest rectangle is labelled with its name (' + biggest.text + ')', biggest.text === bigName, bigName);
    check('its aria-label gives name, bytes and share (' + biggest.label + ')',
      biggest.label.startsWith(sites.funcs.name[sites.funcs.id.indexOf(biggest.fn)] + ', ') && / MiB, [\d.]+% of the total/.test(biggest.label));
    check('one rectangle is in the tab order (roving tabindex)', s.rects.filter((r) => r.tab === 0).length === 1);

    /* hover: a tooltip with name, value and share */
    step = 'hover';
    await page.mouse.move(biggest.x + biggest.w / 2, biggest.y + biggest.h / 2);
    await page.waitForSelector('#tooltip:not([hidden])');
    const tip = await page.textContent('#tooltip');
    check('hover: tooltip with the name, bytes and share', tip.includes(bigName) && /bytes\s*[\d.]+ MiB/.test(tip) && /% of the filtered total/.test(tip), tip);

    /* mouse: click zooms into the site (its callers), Zoom out goes back */
    step = 'mouse zoom';
    const before = topFns(s);
    await page.mouse.click(biggest.x + biggest.w / 2, biggest.y + biggest.h / 2);
    await page.waitForFunction(() => /zoom=\d/.test(location.search));
    await page.waitForTimeout(100);
    s = await shown(page);
    const zoomed = nodeOf(sites, [biggest.fn]);
    const callers = childrenOf(sites, zoomed);
    check('click zooms in: the rectangles are the site\'s callers (' + JSON.stringify(topFns(s)) + ')',
      JSON.stringify(topFns(s)) === JSON.stringify(Object.keys(callers).map(Number).sort((a, b) => a - b)) &&
      JSON.stringify(topFns(s)) !== JSON.stringify(before), JSON.stringify(callers));
    m = areasMatch(s, callers, sites.nodes.v[zoomed]);
    check('zoomed: areas proportional to the callers\' bytes (' + m.detail + ')', m.ok || Object.keys(callers).length < 2);
    const crumbs = await page.textContent('#crumbs');
    check('breadcrumb names the zoomed site (' + crumbs + ')', crumbs.includes(bigName) && /Zoom out/.test(crumbs));
    await page.click('#crumbs button:has-text("Zoom out")');
    await page.waitForFunction(() => !/zoom=/.test(location.search));
    await page.waitForTimeout(100);
    s = await shown(page);
    check('the Zoom out button goes back to all sites', JSON.stringify(topFns(s)) === JSON.stringify(before), JSON.stringify(topFns(s)));
    /* two levels in, then the breadcrumb's first crumb back to the top */
    await page.mouse.click(biggest.x + biggest.w / 2, biggest.y + biggest.h / 2);
    await page.waitForFunction(() => /zoom=\d/.test(location.search));
    s = await shown(page);
    const inner = s.rects.filter((r) => r.level === 1 && r.kind === 'node').sort((a, b) => b.w * b.h - a.w * a.h)[0];
    await page.mouse.click(inner.x + inner.w / 2, inner.y + inner.h / 2);
    await page.waitForFunction(() => /zoom=\d+\.\d+/.test(location.search));
    await page.click('#crumbs button.crumb >> nth=0');
    await page.waitForFunction(() => !/zoom=/.test(location.search));
    s = await shown(page);
    check('the breadcrumb\'s first crumb zooms out to the top from two levels in', JSON.stringify(topFns(s)) === JSON.stringify(before));

    /* ---- by call path: nested by callee; the keyboard */
    step = 'by call path';
    await page.click('#crumbs .seg:has-text("by call path")');
    await page.waitForFunction(() => /dir=main/.test(location.search));
    await ready(page);
    s = await shown(page);
    const main = await api(page, 'tree?dir=main');
    const nested = s.rects.filter((r) => r.level >= 3 && r.kind === 'node');
    check('by call path: callees nested inside their callers (' + nested.length + ' rectangles 3 levels down)', nested.length >= 2);
    const head = s.rects.map((r) => r.head).filter(Boolean).join(' | ');
    check('by call path: a band names the caller and the callee that fills it (' + head + ')', /0x[0-9a-f]+ › Dune__exe__Leak/.test(head));
    step = 'keyboard';
    await page.focus('#treemap [tabindex="0"]');
    const path0 = zoomParam(page);
    await page.keyboard.press('Enter');
    await page.waitForFunction((z) => (new URL(location.href).searchParams.get('zoom') || '') !== z, path0);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /zoom=\d+\.\d+/.test(location.search));
    await page.waitForTimeout(100);
    const ids = zoomParam(page).split('.').map(Number);
    const zn = nodeOf(main, ids);
    s = await shown(page);
    const kids = childrenOf(main, zn);
    check('keyboard: Enter twice zooms two levels in, to ' + main.funcs.short[main.nodes.f[zn]] + ' (' + JSON.stringify(topFns(s)) + ')',
      zn > 0 && JSON.stringify(topFns(s)) === JSON.stringify(Object.keys(kids).map(Number).sort((a, b) => a - b)));
    m = areasMatch(s, kids, main.nodes.v[zn]);
    check('zoomed by call path: areas proportional to the callees\' bytes (' + m.detail + ')', m.ok);
    /* the focus ring: over the focused rectangle, above everything there */
    const focus = () => page.evaluate(() => {
      const e = document.activeElement, ring = document.querySelector('#treemap .tm-ring');
      const a = e.getBoundingClientRect(), b = ring.getBoundingClientRect();
      return { label: e.getAttribute('aria-label'), level: e.getAttribute('aria-level'),
        ring: !ring.hidden && Math.abs(a.left - b.left) < 1 && Math.abs(a.top - b.top) < 1 && Math.abs(a.width - b.width) < 1 &&
          Math.abs(a.height - b.height) < 1 && parseFloat(getComputedStyle(ring).borderTopWidth) >= 2 &&
          ring === ring.parentNode.lastElementChild && +getComputedStyle(ring).zIndex > 0 };
    });
    const f0 = await focus();
    await page.keyboard.press('ArrowRight');
    let f1 = await focus();
    if (f1.label === f0.label) { await page.keyboard.press('ArrowDown'); f1 = await focus(); }
    check('keyboard: an arrow moves the focus to a neighbouring rectangle (' + f0.label + ' -> ' + f1.label + ')',
      f1.label !== f0.label && f1.level === '1');
    check('keyboard: the focused rectangle is outlined, on top', f1.ring && f0.ring);
    const tip2 = await page.textContent('#tooltip');
    check('keyboard: the focused rectangle\'s tooltip shows', await page.$eval('#tooltip', (t) => !t.hidden) && tip2.length > 10);
    await page.keyboard.press('Backspace');
    await page.waitForFunction(() => !/zoom=\d+\.\d+/.test(location.search));
    await page.waitForTimeout(100);
    const f2 = await focus();
    check('keyboard: Backspace zooms out one level, onto where we were (' + f2.label + ')',
      zoomParam(page).split('.').length === 1 && zoomParam(page) !== '' && f2.label.startsWith(main.funcs.name[main.nodes.f[zn]]));
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !/zoom=/.test(location.search));
    check('keyboard: Escape zooms out to the top', zoomParam(page) === '' && !/Zoom out/.test(await page.textContent('#crumbs')));
    /* the focused rectangle is a parent: its callees stay in sight */
    const hidden = await page.evaluate(() => {
      const e = document.activeElement, out = [];
      for (const c of document.querySelectorAll('#treemap [role=treeitem][aria-level="3"]')) {
        const r = c.getBoundingClientRect(), at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        if (!at || e === at || e.contains(at)) out.push(c.getAttribute('aria-label') + ' under the focused one');
      }
      return { focused: e.getAttribute('aria-level'), out };
    });
    check('keyboard: a focused parent leaves its callees visible', hidden.focused === '1' && !hidden.out.length, hidden.out.join('; '));

    /* ---- the filter and the measure change the values */
    step = 'filter';
    await page.click('#crumbs .seg:has-text("by site")');
    await page.waitForFunction(() => !/dir=main/.test(location.search));
    await ready(page);
    const labels0 = (await shown(page)).rects.map((r) => r.label).join('\n');
    await page.fill('#filter-text', 'live:end');
    await page.press('#filter-text', 'Enter');
    await page.waitForFunction(() => /filter=live:end/.test(location.search));
    await ready(page);
    s = await shown(page);
    const live = await api(page, 'tree?dir=sites&filter=live:end');
    m = areasMatch(s, childrenOf(live, 0), live.total);
    check('filter live:end: areas follow the filtered values (' + m.detail + ')', m.ok);
    check('filter live:end: the values shown change', s.rects.map((r) => r.label).join('\n') !== labels0);
    step = 'measure';
    await page.selectOption('#metric', 'count');
    await page.waitForFunction(() => /metric=count/.test(location.search));
    await ready(page);
    s = await shown(page);
    const count = await api(page, 'tree?dir=sites&filter=live:end&metric=count');
    m = areasMatch(s, childrenOf(count, 0), count.total);
    check('measure blocks: areas follow the block counts (' + m.detail + ')', m.ok);
    check('measure blocks: labels count blocks', s.rects.every((r) => / blocks, /.test(r.label)), s.rects[0].label);
    await page.selectOption('#metric', 'live');
    await page.fill('#filter-text', '');
    await page.press('#filter-text', 'Enter');
    await page.waitForFunction(() => /metric=live/.test(location.search) && !/filter=/.test(location.search));
    await ready(page);
    s = await shown(page);
    const lv = await api(page, 'tree?dir=sites&metric=live');
    m = areasMatch(s, childrenOf(lv, 0), lv.total);
    check('measure bytes live at the end, no filter: areas follow them (' + m.detail + ')', m.ok);

    /* ---- names that are HTML markup stay text */
    step = 'hostile names';
    await page.goto(html + '?view=treemap');
    await ready(page);
    s = await shown(page);
    const hj = await api(page, 'tree?dir=sites');
    const names = hj.funcs.name.filter((n) => n !== 'main');
    const missing = names.filter((n) => s.rects.filter((r) => r.label && r.label.startsWith(n + ', ')).length !== 1);
    check('hostile names: each markup name labels exactly one rectangle, as text (' + names.length + ')', names.length >= 5 && !missing.length, missing.join(' | '));
    const injected = await page.evaluate(() => ({
      elements: document.querySelectorAll('#view-treemap img, #view-treemap script, #view-treemap svg, #view-treemap b, #view-treemap i, #crumbs img, #tooltip img').length,
      pwned: document.body.dataset.pwned || '',
      nodes: document.querySelectorAll('#treemap [role=treeitem]').length,
    }));
    check('hostile names: no element made from a name, no handler ran (' + JSON.stringify(injected) + ')',
      injected.elements === 0 && injected.pwned === '' && injected.nodes === s.rects.length);
    const img = s.rects.find((r) => r.label.startsWith('<img'));
    await page.mouse.move(img.x + img.w / 2, img.y + img.h / 2);
    await page.waitForSelector('#tooltip:not([hidden])');
    const tt = await page.$eval('#tooltip', (e) => ({ name: e.querySelector('.tt-name').textContent, loc: e.querySelector('.tt-loc').textContent,
      tags: e.querySelectorAll('img, i, b, script, svg').length }));
    check('hostile names: the tooltip shows the markup of the name and file as text (' + tt.name + ', ' + tt.loc + ')',
      tt.name === names.find((n) => n.startsWith('<img')) && tt.loc === '<i>file</i>.c' && tt.tags === 0);
    await page.mouse.click(img.x + img.w / 2, img.y + img.h / 2);
    await page.waitForFunction(() => /zoom=/.test(location.search));
    const crumb = await page.$eval('#crumbs nav.path', (e) => ({ text: e.textContent, tags: e.querySelectorAll('img').length }));
    check('hostile names: the breadcrumb shows the markup as text (' + crumb.text + ')', crumb.tags === 0 && crumb.text.includes('<img'));
    await page.waitForTimeout(300);
    check('hostile names: still no handler ran', await page.evaluate(() => !document.body.dataset.pwned));

    /* ---- a tree of tens of thousands of nodes */
    step = 'big tree';
    await page.goto(big + '?view=treemap&dir=main&min=0');
    await ready(page);
    const perf = await page.evaluate(() => {
      const times = [];
      for (let k = 0; k < 5; k++) { const a = performance.now(); App.treemap.draw(); times.push(performance.now() - a); }
      times.sort((a, b) => a - b);
      return { nodes: App.tree.n, ms: times[2], rects: document.querySelectorAll('#treemap [role=treeitem]').length,
        other: document.querySelectorAll('#treemap .tm-other').length };
    });
    check('big tree: ' + perf.nodes + ' nodes drawn in ' + perf.ms.toFixed(1) + ' ms as ' + perf.rects + ' rectangles, ' + perf.other + ' of them "other"',
      perf.nodes > 20000 && perf.ms < 400 && perf.rects > 50 && perf.rects <= 2500 && perf.other > 0);
    s = await shown(page);
    const o = s.rects.filter((r) => r.kind === 'other').sort((a, b) => b.w * b.h - a.w * a.h)[0];
    await page.mouse.move(o.x + o.w / 2, o.y + o.h / 2);
    await page.waitForSelector('#tooltip:not([hidden])');
    check('big tree: hovering "other" says how many smaller callees it holds', /\d+ smaller callees/.test(await page.textContent('#tooltip')));
    /* labels too long for their rectangle are shortened with "…" and fit */
    await page.goto(big + '?view=treemap&min=0');
    await ready(page);
    const fits = await page.evaluate(() => {
      let cut = 0, bad = [];
      for (const e of document.querySelectorAll('#treemap [data-i][role=treeitem]')) {
        const l = e.querySelector('.tm-label');
        if (!l) continue;
        const name = App.tree.name(+e.dataset.i);
        if (l.textContent !== name) {
          cut++;
          if (!l.textContent.includes('…') || l.textContent.length >= name.length) bad.push(l.textContent + ' for ' + name);
        }
        if (l.scrollWidth > l.clientWidth + 1) bad.push(l.textContent + ' overflows');
      }
      return { cut, bad: bad.slice(0, 5) };
    });
    check('labels too long are shortened with "…" and fit their rectangle (' + fits.cut + ' shortened)', fits.cut > 0 && !fits.bad.length, fits.bad.join('; '));

    check('no script errors', errors.length === 0, errors.join(' | '));
  } catch (e) {
    fail('aborted at step "' + step + '": ' + e.message.split('\n')[0]);
  } finally {
    await ctx.close();
  }
  process.exit(failed ? 1 : 0);
})();

function fail(m) { failed++; console.log('FAIL: ' + m); }
