/* app.js - the viewer page's wiring: loads the trace info, keeps the page
   state (filter, view, direction, zoom, search) in the URL, fetches what
   the current view needs from the JSON API and hands it to the widgets. */
'use strict';

const App = {
  info: null,
  tree: null,
  treeKey: '',
  stats: null,
  curve: null,
  loaded: {},       /* view -> key of the data it shows */
  seq: 0,
};

App.showError = function (msg) {
  const e = MT.$('filter-error');
  e.textContent = msg || '';
  e.hidden = !msg;
};

App.renderInfo = function () {
  const i = App.info, dl = MT.clear(MT.$('info'));
  const row = (k, v, title) => { if (v === null || v === undefined || v === '') return; dl.appendChild(MT.el('dt', null, k)); dl.appendChild(MT.el('dd', { title: title || null }, String(v))); };
  const start = new Date(i.start_time_us / 1000);
  row('Executable', i.executable);
  row('PID', i.pid);
  row('Host', i.host);
  row('Started', isNaN(start) ? '' : start.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));
  row('Duration', MT.fmtTime(i.duration));
  const every = i.one_in_bytes;
  // 524288 reads better as "512 KiB" (recorder intervals are set in KiB); 8000 as "8,000 bytes".
  const kib = every >= 1024 && Math.abs(every / 1024 - Math.round(every / 1024)) < 1e-3;
  row('Sampling', '1 in ' + (kib ? MT.fmtBytes(every) : MT.fmtCount(every) + ' bytes'), 'rate ' + i.sample_rate + ' per ' + i.word_size + '-bit word');
  row('Context', i.context);
  row('Events', MT.fmtCount(i.events) + ' (' + MT.fmtCount(i.allocs) + ' sampled blocks)');
  row('Allocated', MT.fmtBytes(i.total.alloc_bytes) + ' (est.)', i.total.samples + ' samples');
  row('Peak live', MT.fmtPeak(i.peak) + ' at ' + MT.fmtTime(i.peak_time),
      i.peak.sd > 0 ? 'estimated, with its 95% interval; the estimated curve reaches ' + MT.fmtBytes(i.peak.curve_max) +
        ': its highest point reads high where memory stays near its peak (docs/estimates.md)' : 'exact: every byte sampled');
  row('Live at end', MT.fmtBytes(i.live_at_end));
  row('Format', 'memtrace v' + i.format_version + (i.word_size === 64 ? ' (OCaml)' : ' (C)'));
  if (i.folded) row('Served', 'folded (a big trace)', 'the memory curve is downsampled; a new filter reads the trace again (about ' + MT.fmtTime(i.load_seconds) + ')');
  row('File', i.file);
  MT.$('trace-title').textContent = i.executable + '  ·  pid ' + i.pid + '  ·  ' + i.file;
  /* what the reader warned while loading (a damaged or cut trace...): the viewer's stderr says the same */
  const warned = i.warnings || [], w = MT.$('trace-warnings');
  for (const msg of warned) row('Warning', msg);
  w.textContent = warned.length ? '⚠ ' + warned.length + (warned.length > 1 ? ' warnings' : ' warning') : '';
  w.title = warned.join('\n');
  w.hidden = !warned.length;
  document.title = 'memtrace · ' + (i.executable || '').split('/').pop();
};

App.renderPoi = function (h, live) {
  const box = MT.clear(MT.$('poi'));
  const tot = h.total || 1;
  const item = (name, v, title, onclick, of, metric) => MT.el('div', { class: 'poi-item', title, onclick },
    MT.el('span', { class: 'nm', 'data-fit': '1', 'data-full': name }, name), MT.el('span', { class: 'v' }, MT.fmtValue(v, metric) + ' · ' + MT.fmtPct(v / (of || tot))));
  box.appendChild(MT.el('h3', null, 'Top allocation sites'));
  if (!h.sites.length) box.appendChild(MT.el('div', { class: 'filter-empty' }, MT.emptyText()));
  for (const s of h.sites.slice(0, 4)) box.appendChild(item(s.short || s.name, s.v, s.name + '\n' + s.file + '\nclick: callers and callees', () => App.focusFunction(s.id, true)));
  /* what is still live at the end: where leaks show up first */
  const lv = live ? live.sites.filter((s) => s.v > 0).slice(0, 4) : [];
  if (lv.length) {
    box.appendChild(MT.el('h3', { title: 'Allocation sites by bytes never freed (of those that pass the filter)' }, 'Still live at the end'));
    for (const s of lv) box.appendChild(item(s.short || s.name, s.v, s.name + '\n' + s.file + '\nbytes allocated here and never freed\nclick: callers and callees', () => App.focusFunction(s.id, true), live.total, 'alloc'));
  }
  box.appendChild(MT.el('h3', null, 'Heaviest call paths'));
  for (const p of h.paths.slice(0, 4)) {
    const fr = p.frames;
    const at = (f) => (f.short || f.name) + (f.line ? ':' + f.line : '');
    const leaf = fr.length ? at(fr[fr.length - 1]) : '(no stack)';
    const via = fr.length > 1 ? ' ← ' + at(fr[fr.length - 2]) : '';
    const title = fr.map((f) => f.name + (f.line ? ':' + f.line : '')).reverse().join('\n  called from ') + '\nclick: zoom on this path';
    const it = item(leaf + via, p.v, title, () => App.focusPath(fr.map((f) => f.id)));
    it.firstChild.dataset.alt = leaf;  /* when the caller does not fit */
    box.appendChild(it);
  }
  const fns = h.functions.filter((f) => f.v < tot * 0.999).slice(0, 5);
  if (fns.length) {
    box.appendChild(MT.el('h3', null, 'Heaviest functions (with callees)'));
    for (const f of fns) box.appendChild(item(f.short || f.name, f.v, f.name + '\n' + f.file, () => App.focusFunction(f.id, true)));
  }
  MT.fitNames(box);
};

App.renderStatus = function () {
  const c = App.curve, i = App.info;
  if (!c || !i) return;
  const sel = c.selected, all = i.total.alloc_bytes || 1;
  MT.$('status').textContent = (MT.state.filter ? 'Filter keeps ' : 'All allocations: ') +
    MT.fmtBytes(sel.alloc_bytes) + ' allocated (' + MT.fmtPct(sel.alloc_bytes / all) + ' of all, ' +
    MT.fmtCount(sel.samples) + ' samples)  ·  peak of the filtered: ' + MT.fmtPeak(c.filtered_peak) +
    ' at ' + MT.fmtTime(c.filtered_peak.t) + '  ·  still live at the end: ' + MT.fmtBytes(sel.live_bytes) +
    App.kindsText(c);
};

/* "· by kind: malloc 1 MiB, mmap 2 MiB" when more than one kind made the
   selection, and the peak resident memory when the trace has it. */
App.kindsText = function (c) {
  const k = c.selected_by_kind || {}, names = Object.keys(k);
  let t = names.length > 1 || names.includes('mmap')
    ? '  ·  by kind: ' + names.map((n) => n + ' ' + MT.fmtBytes(k[n])).join(', ') : '';
  if (c.rss) t += '  ·  peak resident (RSS): ' + MT.fmtBytes(c.rss.peak);
  return t;
};

App.renderCrumbs = function () {
  const c = MT.clear(MT.$('crumbs')), st = MT.state, t = App.tree;
  if ((st.view === 'flame' || st.view === 'table' || st.view === 'treemap') && t) {
    if (st.view === 'treemap') App.treemapCrumbs(c, t);
    else c.appendChild(MT.el('span', null, st.dir === 'sites' ? 'Allocation sites, callers beneath.' : 'From main, callees beneath.'));
    if (st.view === 'flame') {
      const z = App.flame.zoom;
      if (z > 0) {
        const chain = [];
        for (let k = z; k > 0; k = t.p[k]) chain.push(k);
        chain.reverse();
        c.appendChild(MT.el('button', { onclick: () => App.flame.zoomTo(0), title: 'Esc' }, 'Reset zoom'));
        c.appendChild(MT.el('button', { onclick: () => App.flame.zoomTo(t.p[z]), title: 'Backspace' }, 'Zoom out'));
        const names = chain.slice(-4).map((k) => t.name(k));
        c.appendChild(MT.el('span', { class: 'path', title: chain.map((k) => t.name(k)).join(' › ') }, (chain.length > 4 ? '… › ' : '') + names.join(' › ')));
      } else {
        c.appendChild(MT.el('span', null, 'Click a frame to zoom, hover for details.'));
      }
    }
    if (st.q && App.flame.found) {
      const f = App.flame.found;
      c.appendChild(MT.el('span', { class: 'path' }, '  search “' + st.q + '”: ' + f.count + ' frames, ' +
        MT.fmtValue(f.value) + ' = ' + MT.fmtPct(f.value / (t.v[0] || 1)) + ' of the filtered total'));
    }
    if (t.truncated) {
      c.appendChild(MT.el('span', { class: 'warn', id: 'truncated', title: 'The server stops building the tree at ' +
        MT.fmtCount(t.maxNodes) + ' nodes; what did not fit is missing, not pruned. Raise "Prune below" or narrow the filter.' },
        'Tree truncated at ' + MT.fmtCount(t.maxNodes) + ' nodes: some call paths are missing'));
    }
    c.appendChild(MT.el('span', { class: 'right' }, MT.fmtCount(t.n) + ' nodes'));
  } else if (st.view === 'graph') {
    c.appendChild(MT.el('span', null, 'Functions where call paths meet are drawn once. Box text: self and total; edges: cost through the call. Functions under 0.5% are left out. Click a box for its callers and callees.'));
  } else if (st.view === 'hist') {
    c.appendChild(MT.el('span', null, 'Bytes allocated by the filtered allocations, per power-of-two bucket.'));
  }
};

/* The treemap's bar: by call path or by site (the direction), and where it
   is zoomed: each frame from the top a button that zooms out to it. */
App.treemapCrumbs = function (c, t) {
  const st = MT.state;
  const by = (dir, label, title) => MT.el('button', { class: 'seg', 'aria-pressed': String(st.dir === dir), title,
    onclick: () => { if (st.dir !== dir) { MT.$('dir').value = dir; MT.$('dir').dispatchEvent(new Event('change')); } } }, label);
  c.appendChild(MT.el('span', { class: 'segs', role: 'group', 'aria-label': 'Rectangles' },
    by('main', 'by call path', 'Nested by callee, from main (d)'), by('sites', 'by site', 'One rectangle per allocation site (d)')));
  const z = App.treemap.zoom;
  if (z > 0) {
    const chain = [];
    for (let k = z; k > 0; k = t.p[k]) chain.push(k);
    chain.push(0);
    chain.reverse();
    c.appendChild(MT.el('button', { onclick: () => App.treemap.zoomTo(t.p[z], 'n' + z), title: 'Backspace' }, 'Zoom out'));
    const nav = MT.el('nav', { class: 'path', 'aria-label': 'Zoomed into' });
    const shown = chain.length > 5 ? [0, -1].concat(chain.slice(-4)) : chain;
    shown.forEach((k, n) => {
      if (n) nav.appendChild(document.createTextNode(' › '));
      const name = k === 0 ? 'all' : MT.fit(t.name(k), 32) || t.name(k).slice(0, 31) + '…';
      if (k < 0) nav.appendChild(document.createTextNode('…'));
      else if (k === z) nav.appendChild(MT.el('span', { 'aria-current': 'true', title: t.full(k) }, name));
      else {
        /* back to k, on the frame below it on the way here */
        const below = chain[chain.indexOf(k) + 1];
        nav.appendChild(MT.el('button', { class: 'crumb', title: (k === 0 ? 'all allocations' : t.full(k)) + (k === 0 ? ' (Esc)' : ''),
          onclick: () => App.treemap.zoomTo(k, 'n' + below) }, name));
      }
    });
    c.appendChild(nav);
  } else {
    c.appendChild(MT.el('span', null, st.dir === 'main' ? 'Callees inside their callers; click or Enter to zoom in, hover for details.'
      : 'One rectangle per allocation site; click or Enter for its callers.'));
  }
};

App.treeParams = function () {
  const s = MT.state;
  const q = MT.measureQuery(s);
  return { filter: q.filter, dir: s.dir, min: s.min, metric: q.metric, raw: s.raw ? 1 : '' };
};

App.loadView = async function () {
  const s = MT.state, seq = App.seq;
  const key = JSON.stringify([s.filter, s.metric, s.raw]);
  try {
    if (s.view === 'flame' || s.view === 'table' || s.view === 'treemap') {
      const p = App.treeParams(), tkey = JSON.stringify(p);
      if (App.treeKey !== tkey) {
        const j = await MT.api('tree', p);
        if (seq !== App.seq) return;
        App.tree = new MT.Tree(j);
        App.treeKey = tkey;
        App.flame.setTree(App.tree, s.zoom);
        App.flame.setSearch(MT.searchRe(s.q));
        App.treemap.setTree(App.tree, s.zoom);
        App.treemap.setSearch(MT.searchRe(s.q));
        App.table.setTree(App.tree);
      }
      /* the flame graph and the treemap share the zoom (the URL's) */
      if (s.view === 'flame') { App.flame.syncZoom(s.zoom); App.flame.draw(); }
      else if (s.view === 'treemap') { App.treemap.syncZoom(s.zoom); App.treemap.draw(); }
      else App.table.render();
      if (s.view === 'table') App.loadFocus();
    } else if (s.view === 'graph' && App.loaded.graph !== key) {
      const q = MT.measureQuery(s);
      const g = await MT.api('graph', { filter: q.filter, min: 0.005, metric: q.metric });
      if (seq !== App.seq) return;
      App.graph.set(g);
      App.loaded.graph = key;
    } else if (s.view === 'hist' && App.loaded.hist !== key) {
      const h = await MT.api('hist', { filter: s.filter });
      if (seq !== App.seq) return;
      App.hists[0].set(h.size);
      App.hists[1].set(h.lifetime);
      App.loaded.hist = key;
    } else if (s.view === 'hist') {
      App.hists.forEach((h) => h.draw());
    } else if (s.view === 'leaks' && App.loaded.leaks !== key + App.leaks.all) {
      const d = await MT.api('leaks', { filter: s.filter, all: App.leaks.all ? 1 : '' });
      if (seq !== App.seq) return;
      App.leaks.set(d);
      App.loaded.leaks = key + App.leaks.all;
    }
  } catch (e) {
    App.showError(e.message);
  }
  App.renderCrumbs();
};

App.loadLeaks = function () { App.loaded.leaks = null; return App.loadView(); };

App.loadFocus = async function () {
  const s = MT.state, panel = MT.$('focus-panel');
  if (s.fn === null) { MT.renderFocus(panel, null, App); return; }
  try {
    const q = MT.measureQuery(s);
    const r = await MT.api('function', { filter: q.filter, id: s.fn, metric: q.metric });
    MT.renderFocus(panel, r, App);
  } catch (e) {
    MT.renderFocus(panel, null, App);
  }
};

/* Everything that depends on the filter. */
App.refresh = async function () {
  const s = MT.state, seq = ++App.seq;
  App.loaded = {};
  const q = MT.measureQuery(s);
  /* a fixed bucket count (about a pixel each) so that answers can be shared */
  const curveP = MT.api('curve', { filter: s.filter, n: 1200 });
  const poiP = MT.api('hotspots', { filter: q.filter, metric: q.metric });
  const liveP = MT.api('hotspots', { filter: s.filter, metric: 'live', only: 'sites' }).catch(() => null);
  const viewP = App.loadView();
  try {
    const [curve, poi, live] = await Promise.all([curveP, poiP, liveP]);
    if (seq !== App.seq) return;
    App.curve = curve;
    App.chart.set(curve, MT.Filter.timeRanges(s.filter, curve.end, curve.peak.t));
    App.renderPoi(poi, live);
    App.renderStatus();
  } catch (e) {
    App.showError(e.message);
  }
  await viewP;
};

/* Check a filter text with the server, then make it the page's filter. */
App.applyText = async function (text) {
  let canon;
  try {
    canon = (await MT.api('filter', { filter: text })).filter;
  } catch (e) {
    App.showError(e.message);
    MT.$('filter-text').classList.add('bad');
    return;
  }
  App.showError('');
  MT.$('filter-text').classList.remove('bad');
  MT.state.filter = canon;
  MT.$('filter-text').value = canon;
  App.editor.setText(canon);
  App.chart.clearSelection();
  MT.$('chart-sel-bar').hidden = true;
  MT.writeUrl(true);
  await App.refresh();
};

App.setView = function (v) {
  MT.state.view = v;
  for (const b of document.querySelectorAll('.tabs > button')) b.setAttribute('aria-selected', String(b.dataset.view === v));
  for (const name of MT.views) MT.$('view-' + name).hidden = name !== v;
  MT.writeUrl(false);
  const loading = App.loadView();
  if (v === 'flame') MT.$('flame').focus({ preventScroll: true });
  if (v === 'table') MT.$('table-scroll').focus({ preventScroll: true });
  if (v === 'treemap') loading.then(() => { if (MT.state.view === 'treemap') App.treemap.focusCurrent(); });
};

/* Host callbacks used by the widgets. */
App.onZoom = function (path) {
  MT.state.zoom = path;
  MT.writeUrl(false);
  App.renderCrumbs();
};
App.onSelect = function (tree, i) {
  const v = tree.v[i];
  MT.$('status').textContent = tree.name(i) + (tree.file(i) ? '  (' + tree.file(i) + ')' : '') + '  ·  ' +
    MT.fmtValue(v) + '  ·  ' + MT.fmtPct(v / (tree.v[0] || 1)) + '  ·  ' + MT.fmtNoise(v, tree.s[i]) + ' at 95%';
};
App.focusFunction = function (id, toTable) {
  MT.state.fn = id;
  if (toTable && MT.state.view !== 'table') App.setView('table');
  else MT.writeUrl(false);
  if (App.tree) {
    const t = App.tree;
    for (const c of t.children(0)) if (t.funcId(c) === id) { App.table.select(c, false); break; }
  }
  App.loadFocus();
};
App.focusPath = function (ids) {
  const s = MT.state;
  s.dir = 'main';
  MT.$('dir').value = 'main';
  s.zoom = ids;
  App.treeKey = '';   /* rebuild the flame graph at that zoom */
  MT.writeUrl(true);
  App.setView('flame');
};
App.filterInside = function (name, neg) {
  App.editor.rows.push({ kind: 'inside', neg, pat: MT.Filter.exact(name) });
  App.applyText(App.editor.text());
};
App.searchFor = function (name) {
  MT.state.q = '^' + name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$';
  MT.$('search').value = MT.state.q;
  App.flame.setSearch(MT.searchRe(MT.state.q));
  App.treemap.setSearch(MT.searchRe(MT.state.q));
  App.setView('flame');
};

App.syncControls = function () {
  const s = MT.state;
  MT.$('dir').value = s.dir;
  MT.$('metric').value = s.metric;
  MT.$('raw').checked = s.raw;
  MT.$('th-value').textContent = MT.countMetric(s.metric) ? 'Blocks' : 'Bytes';
  MT.$('prune').value = String(Math.round(s.min * 100 * 1000) / 1000);
  MT.$('search').value = s.q;
  MT.$('filter-text').value = s.filter;
  App.editor.setText(s.filter);
  for (const b of document.querySelectorAll('.tabs > button')) b.setAttribute('aria-selected', String(b.dataset.view === s.view));
  for (const name of MT.views) MT.$('view-' + name).hidden = name !== s.view;
};

/* While the server is still reading the trace (api/status says "loading"),
   a progress bar instead of an empty page; resolves once it is loaded. */
App.waitLoaded = async function () {
  const box = MT.$('loading');
  for (let shown = false; ; shown = true) {
    let s;
    try {
      s = await (await fetch('api/status')).json();
    } catch (e) {
      box.hidden = true;
      return;  /* the info request reports the error */
    }
    if (s.state !== 'loading') {
      box.hidden = true;
      if (s.state === 'failed') App.showError('cannot load the trace: ' + s.error);
      return;
    }
    const f = s.total > 0 ? Math.min(1, s.done / s.total) : 0;
    MT.$('loading-file').textContent = s.file;
    MT.$('loading-bar').style.width = (f * 100).toFixed(1) + '%';
    /* a pipe has no size: then only what was read */
    MT.$('loading-pct').textContent = s.total > 0 ? Math.floor(f * 100) + '% (' + MT.fmtBytes(s.done) + ' of ' + MT.fmtBytes(s.total) + ')'
      : MT.fmtBytes(s.done) + ' read';
    box.hidden = false;
    document.body.dataset.loading = '1';
    await new Promise((ok) => setTimeout(ok, shown ? 300 : 100));
  }
};

/* Big traces: a new filter reads the trace again; the busy sign says how far. */
App.watchReading = function () {
  if (App.readingTimer || !App.info || !App.info.folded) return;
  App.readingTimer = setInterval(async () => {
    const b = MT.$('busy');
    if (b.hidden) { b.textContent = 'computing…'; return; }
    try {
      const s = await (await fetch('api/status')).json();
      const r = (s.reading || [])[0];
      b.textContent = r && r.total ? 'reading the trace for the filter… ' + Math.floor(100 * r.done / r.total) + '%' : 'computing…';
    } catch (e) { /* the sign stays as it is */ }
  }, 500);
};

App.init = async function () {
  MT.readUrl();
  App.flame = new MT.Flame(MT.$('flame'), App);
  App.treemap = new MT.Treemap(MT.$('treemap'), App);
  App.leaks = new MT.Leaks(MT.$('leaks'), App);
  App.table = new MT.Table(App);
  App.graph = new MT.Graph(MT.$('graph-scroll'), App);
  App.hists = [new MT.Hist(MT.$('hist-size'), 'size'), new MT.Hist(MT.$('hist-life'), 'lifetime')];
  App.editor = new MT.FilterEditor(MT.$('filter-rows'),
    (text) => { MT.$('filter-text').value = text; },
    () => App.applyText(MT.$('filter-text').value));
  App.chart = new MT.Chart(MT.$('chart'), (a, b) => {
    MT.$('chart-sel-text').textContent = MT.fmtTime(a) + ' – ' + MT.fmtTime(b) + ': only show allocations';
    MT.$('chart-sel-bar').hidden = false;
    App.sel = [a, b];
  });
  for (const btn of MT.$('chart-sel-bar').querySelectorAll('button')) {
    btn.addEventListener('click', () => {
      const k = btn.dataset.sel;
      MT.$('chart-sel-bar').hidden = true;
      if (k === 'cancel') { App.chart.clearSelection(); return; }
      const [a, b] = App.sel;
      App.editor.put({ kind: k, mode: 'between', a: MT.timeArg(a, App.curve.end), b: MT.timeArg(b, App.curve.end) });
      App.applyText(App.editor.text());
    });
  }
  const add = MT.$('filter-add');
  for (const [v, label] of MT.Filter.templates) add.appendChild(MT.el('option', { value: v }, label));
  add.addEventListener('change', () => {
    const t = MT.Filter.templates.find((x) => x[0] === add.value);
    add.value = '';
    if (t) App.editor.add(t[2]);
  });
  MT.$('filter-text').addEventListener('keydown', (e) => { if (e.key === 'Enter') App.applyText(MT.$('filter-text').value); });
  MT.$('filter-apply').addEventListener('click', () => App.applyText(MT.$('filter-text').value));
  MT.$('filter-clear').addEventListener('click', () => App.applyText(''));
  for (const b of document.querySelectorAll('.tabs > button')) b.addEventListener('click', () => App.setView(b.dataset.view));
  MT.$('dir').addEventListener('change', () => { MT.state.dir = MT.$('dir').value; MT.state.zoom = []; MT.writeUrl(true); App.loadView(); });
  MT.$('metric').addEventListener('change', () => {
    const mv = MT.$('metric').value;
    MT.state.metric = MT.metrics.includes(mv) ? mv : 'alloc';
    MT.$('th-value').textContent = MT.countMetric(MT.state.metric) ? 'Blocks' : 'Bytes';
    MT.writeUrl(true);
    App.refresh();
  });
  MT.$('raw').addEventListener('change', () => {
    MT.state.raw = MT.$('raw').checked;
    MT.state.zoom = [];
    MT.writeUrl(true);
    App.refresh();
  });
  MT.$('prune').addEventListener('change', () => {
    const v = parseFloat(MT.$('prune').value);
    if (!(v >= 0 && v <= 50)) { MT.$('prune').value = String(MT.state.min * 100); return; }
    MT.state.min = v / 100;
    MT.writeUrl(false);
    App.loadView();
  });
  let searchTimer = null;
  MT.$('search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      MT.state.q = MT.$('search').value;
      MT.writeUrl(false);
      App.flame.setSearch(MT.searchRe(MT.state.q));
      App.treemap.setSearch(MT.searchRe(MT.state.q));
      if (MT.state.view === 'flame') App.flame.draw(); else if (MT.state.view === 'table') App.table.render();
      else if (MT.state.view === 'treemap') App.treemap.draw();
      App.renderCrumbs();
    }, 120);
  });
  MT.$('help-btn').addEventListener('click', () => { MT.$('help').hidden = false; });
  MT.$('help-close').addEventListener('click', () => { MT.$('help').hidden = true; });
  document.addEventListener('keydown', (e) => {
    const tag = (e.target.tagName || '').toLowerCase();
    if (tag === 'input' || tag === 'select' || tag === 'textarea' || e.ctrlKey || e.metaKey || e.altKey) {
      if (e.key === 'Escape' && e.target.id === 'search') e.target.blur();
      return;
    }
    if (e.key === '/') { e.preventDefault(); MT.$('search').focus(); }
    else if (e.key === '?') MT.$('help').hidden = !MT.$('help').hidden;
    else if (e.key === 'Escape' && !MT.$('help').hidden) MT.$('help').hidden = true;
    else if (/^[1-9]$/.test(e.key) && MT.views[+e.key - 1]) App.setView(MT.views[+e.key - 1]);
    else if (e.key === 'd') { MT.$('dir').value = MT.state.dir === 'sites' ? 'main' : 'sites'; MT.$('dir').dispatchEvent(new Event('change')); }
  });
  window.addEventListener('resize', () => {
    App.chart.draw();
    if (MT.state.view === 'flame') App.flame.draw();
    if (MT.state.view === 'hist') App.hists.forEach((h) => h.draw());
  });
  window.addEventListener('popstate', () => {
    MT.readUrl();
    App.syncControls();
    App.treeKey = '';
    App.refresh();
  });
  App.syncControls();
  await App.waitLoaded();
  try {
    App.info = await MT.api('info');
    /* the leak verdicts' measures, for a trace that has verdicts */
    for (const o of document.querySelectorAll('#metric option[data-verdicts]')) o.hidden = !App.info.verdicts;
    App.renderInfo();
    App.watchReading();
  } catch (e) {
    App.showError('cannot reach the server: ' + e.message);
    return;
  }
  /* a filter from the URL is checked like a typed one */
  if (MT.state.filter) {
    try { MT.state.filter = (await MT.api('filter', { filter: MT.state.filter })).filter; } catch (e) { App.showError(e.message); }
    App.editor.setText(MT.state.filter);
    MT.$('filter-text').value = MT.state.filter;
  }
  await App.refresh();
  document.body.dataset.ready = '1';
};

App.init();
