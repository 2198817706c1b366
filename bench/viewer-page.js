/* viewer-page.js - measures the viewer page in headless Chromium: time to
   get and build the call tree, flame-graph redraw, hover and zoom times
   with a large tree, and the treemap of the same tree (draw, zoom). Usage: node viewer-page.js URL PROFILE_DIR
   (playwright-core from tests/viewer/node_modules; system Chromium). */
'use strict';
const path = require('path');
const { launch } = require(path.join(__dirname, '../tests/viewer/browser.js'));

const [url, profile] = process.argv.slice(2);
const median = (a) => { const s = a.slice().sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };

(async () => {
  const ctx = await launch(profile, { width: 1440, height: 900 });
  const page = ctx.pages()[0] || await ctx.newPage();
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
  const ready = (Date.now() - t0) / 1000;
  const r = await page.evaluate(() => {
    const f = App.flame, t = App.tree, out = {};
    out.nodes = t.n;
    const time = (fn, n) => { const xs = []; for (let i = 0; i < n; i++) { const a = performance.now(); fn(i); xs.push(performance.now() - a); } return xs; };
    out.draw = time(() => f.draw(), 30);
    /* hover: hit test + redraw, across the canvas */
    const c = f.canvas.getBoundingClientRect();
    out.hover = time((i) => f.onMove({ clientX: c.left + (i * 37) % c.width, clientY: c.top + 10 + (i * 18) % 400 }), 60);
    MT.hideTip();
    /* zoom into the heaviest child chain and back */
    out.zoom = time((i) => {
      let k = 0;
      for (let d = 0; d < 3 + (i % 5); d++) { const ch = t.children(k); if (!ch.length) break; k = ch[0]; }
      f.zoomTo(i % 2 ? 0 : k);
    }, 20);
    out.search = time((i) => { f.setSearch(MT.searchRe(i % 2 ? 'f1' : 'f2')); f.draw(); }, 10);
    /* the treemap of the same tree: draw, and zoom into the largest
       rectangle that has children and back */
    App.setView('treemap');
    const tm = App.treemap;
    out.treemap = time(() => tm.draw(), 20);
    out.treemapRects = tm.items.length;
    out.treemapZoom = time((i) => {
      const it = tm.items.find((x) => x.kind === 'node' && x.parent === tm.zoom && t.children(x.i).length);
      tm.zoomTo(i % 2 || !it ? 0 : it.i);
    }, 10);
    MT.hideTip();
    return out;
  });
  /* the tree fetch + parse + build, measured from the page */
  const build = await page.evaluate(async () => {
    const a = performance.now();
    const j = await MT.api('tree', App.treeParams());
    const b = performance.now();
    const t = new MT.Tree(j);
    return { fetch: b - a, build: performance.now() - b, n: t.n };
  });
  console.log(JSON.stringify({
    ready_s: ready, nodes: r.nodes,
    draw_ms_median: median(r.draw), draw_ms_max: Math.max(...r.draw),
    hover_ms_median: median(r.hover), hover_ms_max: Math.max(...r.hover),
    zoom_ms_median: median(r.zoom), search_ms_median: median(r.search),
    treemap_draw_ms_median: median(r.treemap), treemap_draw_ms_max: Math.max(...r.treemap),
    treemap_rects: r.treemapRects, treemap_zoom_ms_median: median(r.treemapZoom),
    tree_fetch_ms: build.fetch, tree_build_ms: build.build,
  }));
  await ctx.close();
})();
