/* table.js - the tree table (allocation sites bottom-up, or top-down from
   main): sortable columns, rows that expand into callers or callees,
   keyboard moves, and the focus panel with a function's callers and
   callees (/api/function). */
'use strict';

MT.Table = class {
  constructor(host) {
    this.host = host;
    this.tree = null;
    this.open = new Set();
    this.sortKey = 'bytes';
    this.sortAsc = false;
    this.rows = [];
    this.sel = -1;          /* tree node index of the selected row */
    this.body = MT.$('tree-table').querySelector('tbody');
    this.scroll = MT.$('table-scroll');
    for (const th of MT.$('tree-table').querySelectorAll('th[data-sort]')) {
      th.addEventListener('click', () => {
        const k = th.dataset.sort;
        if (this.sortKey === k) this.sortAsc = !this.sortAsc;
        else { this.sortKey = k; this.sortAsc = k === 'name'; }
        this.render();
      });
    }
    this.scroll.addEventListener('keydown', (e) => this.onKey(e));
  }
  setTree(tree) {
    this.tree = tree;
    this.open = new Set();
    /* open single-child chains from the root, e.g. main -> run -> ... */
    let i = 0;
    while (tree.children(i).length === 1 && tree.depth[i] < 40) {
      const c = tree.children(i)[0];
      if (i > 0) this.open.add(i);
      i = c;
    }
    if (i > 0 && tree.children(i).length) this.open.add(i);
    this.sel = -1;
    this.render();
  }
  sortedChildren(i) {
    const t = this.tree, ch = Array.from(t.children(i));
    const k = this.sortKey, dir = this.sortAsc ? 1 : -1;
    const val = {
      name: (a) => t.name(a).toLowerCase(),
      bytes: (a) => t.v[a], share: (a) => t.v[a], self: (a) => t.self[a], samples: (a) => t.s[a],
      temporary: (a) => t.tmp[a] || 0,
    }[k];
    ch.sort((a, b) => { const x = val(a), y = val(b); return x < y ? -dir : x > y ? dir : 0; });
    return ch;
  }
  render() {
    const t = this.tree;
    for (const th of MT.$('tree-table').querySelectorAll('th[data-sort]')) {
      th.classList.toggle('sorted', th.dataset.sort === this.sortKey);
      th.classList.toggle('asc', this.sortAsc);
    }
    /* "self" means allocated directly here: only top-down */
    MT.$('tree-table').classList.toggle('no-self', !t || t.dir === 'sites');
    MT.clear(this.body);
    if (!t) return;
    const rows = [];
    const LIMIT = 4000;
    const walk = (i) => {
      for (const c of this.sortedChildren(i)) {
        if (rows.length >= LIMIT) return;
        rows.push(c);
        if (this.open.has(c)) walk(c);
      }
    };
    walk(0);
    this.rows = rows;
    const V = t.v[0] || 1, re = MT.searchRe(MT.state.q);
    const cs = getComputedStyle(this.body), cw = MT.charWidth('12px ' + cs.getPropertyValue('--mono'));
    const frag = document.createDocumentFragment();
    for (const i of rows) {
      const hasKids = t.children(i).length > 0;
      const pad = (t.depth[i] - 1) * 16;
      const tw = MT.el('span', { class: 'tw' }, hasKids ? (this.open.has(i) ? '▾' : '▸') : '');
      const bar = MT.el('span', { class: 'bar' });
      bar.style.width = Math.max(1, Math.round(40 * t.v[i] / V)) + 'px';
      /* the name fits the column: cut in the middle, never in its own name */
      const room = Math.floor((520 - 16 - pad - 22 - Math.max(1, Math.round(40 * t.v[i] / V))) / cw);
      const nameCell = MT.el('td', { class: 'col-name', title: t.full(i) }, tw, bar, MT.fit(t.name(i), room) || t.name(i));
      nameCell.style.paddingLeft = (8 + pad) + 'px';
      const tr = MT.el('tr', { 'data-node': String(i), class: (i === this.sel ? 'selected' : '') + (re && re.test(t.name(i)) ? ' hit' : '') },
        nameCell,
        MT.el('td', { class: 'num' }, MT.fmtValue(t.v[i])),
        MT.el('td', { class: 'num' }, MT.fmtPct(t.v[i] / V)),
        MT.el('td', { class: 'num' }, MT.fmtValue(t.self[i])),
        MT.el('td', { class: 'num' }, MT.fmtCount(t.s[i])),
        MT.el('td', { class: 'num' }, t.s[i] ? '± ' + Math.round(100 * MT.noise95(t.s[i])) + '%' : '–'),
        MT.el('td', { class: 'num', title: 'blocks freed within 1 ms' }, t.tmp.length ? MT.fmtCount(t.tmp[i]) : '–'),
        MT.el('td', { class: 'col-loc' }, t.file(i)));
      tw.addEventListener('click', (e) => { e.stopPropagation(); this.toggle(i); });
      tr.addEventListener('click', () => this.select(i, true));
      tr.addEventListener('dblclick', () => this.toggle(i));
      frag.appendChild(tr);
    }
    if (rows.length >= LIMIT) {
      frag.appendChild(MT.el('tr', null, MT.el('td', { colspan: '8', class: 'col-loc' },
        'only the first ' + LIMIT + ' rows are shown: collapse rows or raise the pruning threshold')));
    }
    if (!rows.length) {
      frag.appendChild(MT.el('tr', null, MT.el('td', { colspan: '8', class: 'col-loc' }, MT.emptyText())));
    }
    this.body.appendChild(frag);
  }
  toggle(i) {
    if (this.open.has(i)) this.open.delete(i); else if (this.tree.children(i).length) this.open.add(i);
    this.render();
  }
  select(i, focusFunction) {
    this.sel = i;
    for (const tr of this.body.querySelectorAll('tr.selected')) tr.classList.remove('selected');
    const tr = this.body.querySelector('tr[data-node="' + i + '"]');
    if (tr) {
      tr.classList.add('selected');
      const top = tr.offsetTop - 30, bottom = tr.offsetTop + tr.offsetHeight;
      if (top < this.scroll.scrollTop) this.scroll.scrollTop = top;
      else if (bottom > this.scroll.scrollTop + this.scroll.clientHeight) this.scroll.scrollTop = bottom - this.scroll.clientHeight;
    }
    this.scroll.focus({ preventScroll: true });
    if (focusFunction) this.host.focusFunction(this.tree.funcId(i));
  }
  onKey(e) {
    const t = this.tree;
    if (!t || !this.rows.length) return;
    let k = this.rows.indexOf(this.sel);
    const i = this.sel;
    switch (e.key) {
      case 'ArrowDown': k = Math.min(this.rows.length - 1, k + 1); break;
      case 'ArrowUp': k = Math.max(0, k - 1); break;
      case 'ArrowRight':
        if (i >= 0 && t.children(i).length && !this.open.has(i)) { this.toggle(i); e.preventDefault(); return; }
        k = Math.min(this.rows.length - 1, k + 1); break;
      case 'ArrowLeft':
        if (i >= 0 && this.open.has(i)) { this.toggle(i); e.preventDefault(); return; }
        if (i >= 0 && t.p[i] > 0) k = this.rows.indexOf(t.p[i]); break;
      case 'Enter': if (i >= 0) this.host.focusFunction(t.funcId(i)); e.preventDefault(); return;
      default: return;
    }
    e.preventDefault();
    if (k < 0) k = 0;
    this.select(this.rows[k], false);
  }
};

/* The focus panel: one function, its callers and callees. */
MT.renderFocus = function (panel, r, host) {
  MT.clear(panel);
  if (!r) {
    panel.appendChild(MT.el('p', { class: 'empty' },
      'Select a row (click, or ↑ ↓ then Enter) to see the function\'s callers and callees.'));
    return;
  }
  const tot = r.total || 1;
  panel.appendChild(MT.el('h3', { title: r.name }, r.short || r.name));
  if (r.file) panel.appendChild(MT.el('div', { class: 'loc' }, r.file));
  panel.appendChild(MT.el('dl', { class: 'stats' },
    MT.el('dt', null, 'allocated here'), MT.el('dd', null, MT.fmtValue(r.flat) + ' (' + MT.fmtPct(r.flat / tot) + ')'),
    MT.el('dt', null, 'here and below'), MT.el('dd', null, MT.fmtValue(r.cum) + ' (' + MT.fmtPct(r.cum / tot) + ')'),
    MT.el('dt', null, 'sampling error'), MT.el('dd', null, MT.fmtNoise(r.cum, r.cum_samples))));
  const actions = MT.el('div', { class: 'filter-buttons' },
    MT.el('button', { onclick: () => host.filterInside(r.name, false), title: 'Keep only allocations with this function on the stack' }, 'Only inside'),
    MT.el('button', { onclick: () => host.filterInside(r.name, true), title: 'Drop allocations with this function on the stack' }, 'Exclude'),
    MT.el('button', { onclick: () => host.searchFor(r.name), title: 'Highlight in the flame graph' }, 'Highlight'));
  panel.appendChild(actions);
  const list = (title, items) => {
    panel.appendChild(MT.el('h4', null, title + ' (' + items.length + ')'));
    if (!items.length) { panel.appendChild(MT.el('div', { class: 'empty' }, 'none')); return; }
    for (const it of items.slice(0, 60)) {
      panel.appendChild(MT.el('div', { class: 'row', title: it.name + (it.file ? '\n' + it.file : ''), onclick: () => host.focusFunction(it.id) },
        MT.el('span', { class: 'nm', 'data-fit': '1', 'data-full': it.short || it.name }, it.short || it.name),
        MT.el('span', { class: 'v' }, MT.fmtValue(it.v) + ' · ' + MT.fmtPct(it.v / tot))));
    }
  };
  list('Called from', r.callers);
  list('Calls', r.callees);
  /* allocation plumbing left out of the stacks, for the function's own allocations */
  if (r.via && r.via.length) list('Allocates through', r.via);
  MT.fitNames(panel);
};
