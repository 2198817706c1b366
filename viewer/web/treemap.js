/* treemap.js - the call tree (MT.Tree, the flame graph's) as a squarified
   treemap (MT.Treemap): from main, rectangles nested by callee; from the
   allocation sites, one rectangle per site (flat; zooming into a site shows
   its callers). Areas are proportional to the measure within the rectangle
   they are drawn in. Rectangles are focusable HTML elements (names always
   as text) with aria-labels; arrows move between neighbours, Enter zooms
   in, Backspace / Escape zoom out, hover shows a tooltip. Children too small
   to see (under MIN_AREA px²) are pooled into one "other" rectangle and at
   most MAX_ELEMENTS rectangles are made, so a tree of a million nodes draws
   as fast as a small one. */
'use strict';

/* Squarified layout (Bruls, Huizing, van Wijk): values (descending, > 0,
   summing to the area of the rectangle) into rectangles [x, y, w, h] whose
   sides are as close to squares as the order allows. */
MT.squarify = function (values, x, y, w, h) {
  const out = new Array(values.length);
  let i = 0;
  const n = values.length;
  /* worst aspect ratio of a row of sum s, largest a, smallest b, along side L */
  const worst = (s, a, b, L) => Math.max(L * L * a / (s * s), (s * s) / (L * L * b));
  while (i < n) {
    const L = Math.min(w, h);
    if (!(L > 0)) {   /* nothing left to give: degenerate rectangles */
      for (; i < n; i++) out[i] = [x, y, Math.max(w, 0), Math.max(h, 0)];
      break;
    }
    let s = values[i], cur = worst(s, values[i], values[i], L), j = i + 1;
    for (; j < n; j++) {
      const s2 = s + values[j], nw = worst(s2, values[i], values[j], L);
      if (nw > cur) break;
      s = s2;
      cur = nw;
    }
    if (j === n) s = w * h;   /* the last row takes what rounding left */
    if (w >= h) {             /* a column on the left */
      const cw = Math.min(w, s / h);
      let yy = y;
      for (let k = i; k < j; k++) {
        const hh = k === j - 1 ? y + h - yy : values[k] / cw;
        out[k] = [x, yy, cw, hh];
        yy += hh;
      }
      x += cw;
      w -= cw;
    } else {                  /* a row along the top */
      const rh = Math.min(h, s / w);
      let xx = x;
      for (let k = i; k < j; k++) {
        const ww = k === j - 1 ? x + w - xx : values[k] / rh;
        out[k] = [xx, y, ww, rh];
        xx += ww;
      }
      y += rh;
      h -= rh;
    }
    i = j;
  }
  return out;
};

MT.Treemap = class {
  constructor(box, host) {
    this.box = box;
    this.host = host;        /* the app: callbacks onZoom, onSelect */
    this.tree = null;
    this.zoom = 0;
    this.found = null;
    this.items = [];         /* what was drawn: {el, i, kind, parent, r, level} */
    this.byEl = new Map();   /* element -> item */
    this.byNode = new Map(); /* tree node -> item */
    this.cur = null;         /* key of the rectangle that has the roving tabindex */
    this.MIN_AREA = 120;     /* px²: smaller children go into "other" */
    this.MAX_ELEMENTS = 2500;
    this.HEAD = 15;          /* height of a parent's name band */
    this.MAX_BANDS = 4;      /* levels of nesting drawn below the zoomed node */
    this.MAX_SHARED = 8;     /* and of those sharing a band beside siblings */
    this.font = '11px ui-monospace, "DejaVu Sans Mono", Menlo, monospace';
    box.addEventListener('mousemove', (e) => this.onMove(e));
    box.addEventListener('mouseleave', () => MT.hideTip());
    box.addEventListener('click', (e) => this.onClick(e));
    box.addEventListener('keydown', (e) => this.onKey(e));
    box.addEventListener('focusin', (e) => this.onFocus(e));
    box.addEventListener('focusout', () => { MT.hideTip(); this.ring.hidden = true; });
    /* the focus ring: over everything (a parent's own outline would be
       under its children) */
    this.ring = MT.el('div', { class: 'tm-ring', 'aria-hidden': 'true', hidden: true });
    /* drawn for the box's size: again when it changes (window, bars above) */
    this.size = '';
    if (window.ResizeObserver) {
      new ResizeObserver(() => {
        if (this.tree && !box.closest('[hidden]') && box.clientWidth + 'x' + box.clientHeight !== this.size) this.draw();
      }).observe(box);
    }
  }
  setTree(tree, zoomPath) {
    this.tree = tree;
    this.zoom = tree.resolve(zoomPath || []);
    this.cur = null;
    this.setSearch(this.searchRe);
  }
  setSearch(re) {
    this.searchRe = re;
    this.found = this.tree && re ? this.tree.search(re) : null;
  }
  /* the zoom the page's URL names (shared with the flame graph) */
  syncZoom(path) {
    if (!this.tree) return;
    const z = this.tree.resolve(path || []);
    if (z !== this.zoom) { this.zoom = z; this.cur = null; }
  }
  zoomTo(i, focusKey) {
    this.zoom = i;
    this.cur = focusKey || null;
    this.draw();
    this.host.onZoom(this.tree.path(i));
    this.focusCurrent();
  }
  /* nested (callees inside their callers) from main; flat from the sites */
  nests() { return this.tree.dir === 'main'; }
  key(it) { return it.kind === 'node' ? 'n' + it.i : it.kind + it.parent; }
  /* What fills rectangle r for node i: its children, "other" for the ones
     too small to see, and the rest of i's value (self / pruned). Areas are
     proportional to the values. */
  layout(i, r) {
    const t = this.tree, V = t.v[i];
    const area = r[2] * r[3];
    if (!(V > 0) || !(area > 0)) return [];
    const scale = area / V, nodes = [];
    let sum = 0, other = 0, nOther = 0, lone = -1;
    for (const c of t.children(i)) {
      const v = t.v[c];
      if (!(v > 0)) continue;
      sum += v;
      if (v * scale < this.MIN_AREA) { other += v; nOther++; lone = c; } else nodes.push({ kind: 'node', i: c, v });
    }
    /* one small child: itself rather than "1 other" */
    if (nOther === 1) { nodes.push({ kind: 'node', i: lone, v: other }); nOther = 0; other = 0; }
    nodes.sort((a, b) => b.v - a.v);
    const rest = V - sum;
    let items, rects;
    /* children that the layout makes thinner than 6 px join "other" too
       (they come last: the smallest) */
    for (let pass = 0; ; pass++) {
      items = nodes.slice();
      if (rest > V * 1e-9) items.push({ kind: 'rest', v: rest });
      if (nOther) items.push({ kind: 'other', v: other, n: nOther });
      items.sort((a, b) => b.v - a.v);
      rects = MT.squarify(items.map((it) => it.v * scale), r[0], r[1], r[2], r[3]);
      if (pass === 3) break;
      let thin = Infinity;
      items.forEach((it, k) => { if (it.kind === 'node' && Math.min(rects[k][2], rects[k][3]) < 6) thin = Math.min(thin, it.v); });
      if (thin === Infinity) break;
      while (nodes.length && nodes[nodes.length - 1].v <= thin) { const x = nodes.pop(); other += x.v; nOther++; }
    }
    items.forEach((it, k) => { it.r = rects[k]; it.parent = i; });
    return items;
  }
  draw() {
    const t = this.tree, box = this.box;
    /* a redraw (new tree, direction, size) keeps the focus in the treemap */
    const had = box.contains(document.activeElement);
    MT.clear(box);
    this.items = [];
    this.byEl = new Map();
    this.byNode = new Map();
    if (!t) return;
    const W = box.clientWidth, H = box.clientHeight;
    this.size = W + 'x' + H;
    if (!(t.v[0] > 0)) {
      const msg = MT.emptyText();
      box.appendChild(MT.el('div', { class: 'tm-empty' }, msg[0].toUpperCase() + msg.slice(1) + '.'));
      return;
    }
    this.charW = MT.charWidth(this.font);
    const frag = document.createDocumentFragment();
    const allBands = [];
    /* breadth first, so that the element budget cuts the deepest levels */
    let queue = [{ i: this.zoom, r: [0, 0, W, H], level: 0, band: null, bands: 0, shared: 0 }], count = 0;
    while (queue.length) {
      const next = [];
      for (const q of queue) {
        const items = this.layout(q.i, q.r);
        if (count + items.length > this.MAX_ELEMENTS) continue;   /* drawn as a leaf */
        count += items.length;
        /* a child that is nearly all of its parent shares the parent's band */
        const only = q.band && items.length && items[0].kind === 'node' && items[0].v >= 0.9 * t.v[q.i] ? items[0] : null;
        for (const it of items) {
          it.level = q.level + 1;
          const band = it === only ? q.band : null;
          const bands = band ? q.bands : q.bands + 1;
          /* a recursion that allocates a little at each level nests as deep
             as it goes: only so many of those levels are drawn */
          const shared = band && items.length > 1 ? q.shared + 1 : q.shared;
          const nest = it.kind === 'node' && this.nests() && t.children(it.i).length > 0 &&
            bands <= this.MAX_BANDS && shared <= this.MAX_SHARED &&
            it.r[2] >= 40 && it.r[3] >= (band ? 20 : this.HEAD + 18);
          /* slivers of "other" or the rest are left to the parent's colour */
          if (it.kind !== 'node' && (it.r[2] < 4 || it.r[3] < 4)) continue;
          const el = this.element(it, nest, band);
          frag.appendChild(el);
          it.el = el;
          this.items.push(it);
          this.byEl.set(el, it);
          if (it.kind === 'node') this.byNode.set(it.i, it);
          if (!nest) continue;
          let inner;
          if (band) {
            /* named in the band above: the rectangle is only its children's */
            band.chain.push(it.i);
            inner = { i: it.i, r: it.r, level: it.level, band, bands, shared };
          } else {
            const b = { el: el.firstChild, chain: [it.i], w: it.r[2] };
            allBands.push(b);
            inner = { i: it.i, r: [it.r[0] + 2, it.r[1] + this.HEAD, it.r[2] - 4, it.r[3] - this.HEAD - 2], level: it.level, band: b, bands, shared };
          }
          next.push(inner);
        }
      }
      queue = next;
    }
    for (const b of allBands) this.fillBand(b);
    box.appendChild(frag);
    this.ring.hidden = true;
    box.appendChild(this.ring);
    /* the roving tabindex: the current rectangle, else the largest at the top */
    const top = this.items.filter((it) => it.parent === this.zoom);
    let cur = this.items.find((it) => this.key(it) === this.cur && it.parent === this.zoom);
    if (!cur) cur = top[0];
    this.cur = cur ? this.key(cur) : null;
    if (cur) cur.el.tabIndex = 0;
    if (had) this.focusCurrent();
    box.setAttribute('aria-label', 'Treemap of ' + (t.dir === 'main' ? 'call paths' : 'allocation sites') +
      (this.zoom > 0 ? ' in ' + t.full(this.zoom) : '') + ': ' + top.length + ' rectangles; arrows move, Enter zooms in, Backspace zooms out');
  }
  /* the label of a "rest" rectangle: what of the parent is not in its children */
  restName(p) {
    const t = this.tree;
    if (p === 0) return t.dir === 'sites' ? 'smaller sites' : 'pruned';
    return t.dir === 'sites' ? 'other callers' : 'self';
  }
  restText(p) {
    const t = this.tree;
    if (p === 0) return t.dir === 'sites' ? 'allocation sites below the pruning threshold' : 'call paths below the pruning threshold';
    return t.dir === 'sites' ? 'stacks that end in ' + t.name(p) + ', and callers below the pruning threshold'
      : 'allocated in ' + t.name(p) + ' itself, and callees below the pruning threshold';
  }
  element(it, nest, band) {
    const t = this.tree, r = it.r, V = t.v[0] || 1;
    const el = document.createElement('div');
    let css = 'left:' + r[0].toFixed(2) + 'px;top:' + r[1].toFixed(2) + 'px;width:' + r[2].toFixed(2) + 'px;height:' + r[3].toFixed(2) + 'px';
    el.setAttribute('role', 'treeitem');
    el.setAttribute('aria-level', String(it.level));
    el.tabIndex = -1;
    const share = MT.fmtPct(it.v / V) + ' of the total';
    let name, cls;
    if (it.kind === 'node') {
      name = t.name(it.i);
      cls = 'tm-node';
      el.setAttribute('data-i', String(it.i));
      el.setAttribute('data-fn', String(t.funcId(it.i)));
      let col = MT.frameColor(name);
      if (this.found) col = this.found.match[it.i] ? '#c026d3' : '#e6e1dc';
      if (this.found && this.found.match[it.i]) cls += ' tm-hit';
      if (!(nest && band)) css += ';background:' + col;   /* a band's sharer: its children only */
      el.setAttribute('aria-label', t.full(it.i) + ', ' + MT.fmtValue(it.v) + ', ' + share +
        (t.children(it.i).length ? ', ' + t.children(it.i).length + (t.dir === 'main' ? ' callee' : ' caller') +
          (t.children(it.i).length > 1 ? 's' : '') : ''));
      if (nest) cls += band ? ' tm-chain' : ' tm-parent';
    } else {
      name = it.kind === 'other' ? 'other (' + MT.fmtCount(it.n) + ')' : this.restName(it.parent);
      cls = 'tm-node tm-' + it.kind;
      el.setAttribute('data-k', it.kind);
      el.setAttribute('data-p', String(it.parent));
      el.setAttribute('aria-label', (it.kind === 'other' ? MT.fmtCount(it.n) + ' smaller ' + (t.dir === 'main' ? 'callees' : 'entries')
        : name + ': ' + this.restText(it.parent)) + ', ' + MT.fmtValue(it.v) + ', ' + share);
    }
    el.className = cls;
    el.style.cssText = css;
    if (nest && !band) {
      el.appendChild(MT.el('div', { class: 'tm-head' }));   /* filled by fillBand */
    } else if (!nest && r[2] >= 24 && r[3] >= 13) {
      const max = Math.floor((r[2] - 8) / this.charW);   /* borders and padding */
      const label = it.kind === 'node' ? MT.fit(name, max) : name.length <= max ? name : '';
      if (label) el.appendChild(MT.el('span', { class: 'tm-label' }, label));
      if (label && r[3] >= 28) {
        const val = MT.fmtValue(it.v) + ' · ' + MT.fmtPct(it.v / V);
        const txt = val.length <= max ? val : MT.fmtValue(it.v).length <= max ? MT.fmtValue(it.v) : '';
        if (txt) el.appendChild(MT.el('span', { class: 'tm-label tm-val' }, txt));
      }
    }
    return el;
  }
  /* A parent's band: its name, those of the children that fill it
     ("main › run › parse", the last ones kept when they do not all fit),
     each hoverable and clickable, and the value. */
  fillBand(b) {
    const t = this.tree, cw = this.charW;
    const first = b.chain[0];
    const val = '  ' + MT.fmtValue(t.v[first]);
    let room = Math.floor((b.w - 8) / cw);
    const showVal = room > val.length + 12;
    if (showVal) room -= val.length;
    const names = [];
    for (let k = b.chain.length - 1; k >= 0; k--) {
      const sep = names.length ? 3 : 0;
      const nm = t.name(b.chain[k]);
      if (nm.length + sep <= room) { names.unshift([b.chain[k], nm]); room -= nm.length + sep; continue; }
      if (!names.length) { const f = MT.fit(nm, room); if (f) names.unshift([b.chain[k], f]); room = 0; }
      if (k > 0 && room >= 4) { names.unshift([-1, '…']); }
      break;
    }
    names.forEach(([i, nm], k) => {
      if (k) b.el.appendChild(document.createTextNode(' › '));
      b.el.appendChild(i >= 0 ? MT.el('span', { 'data-i': String(i) }, nm) : document.createTextNode(nm));
    });
    if (showVal) b.el.appendChild(MT.el('span', { class: 'tm-hval' }, val));
  }
  /* the drawn item of an element (a band's name span stands for its node) */
  itemOf(target) {
    const el = target && target.closest ? target.closest('[data-i],[data-k]') : null;
    if (!el || !this.box.contains(el)) return null;
    return el.dataset.k ? this.byEl.get(el) || null : this.byNode.get(+el.dataset.i) || null;
  }
  tip(ev, it) {
    const t = this.tree;
    if (it.kind === 'node') {
      MT.showTip(ev, t.full(it.i), t.file(it.i) || null, MT.tipRows(t, it.i, this.zoom));
      return;
    }
    const V = t.v[0] || 1;
    const rows = [[MT.metricLabel(), MT.fmtValue(it.v)], ['share', MT.fmtPct(it.v / V) + ' of the filtered total']];
    if (this.zoom > 0) rows.push(['of zoom', MT.fmtPct(it.v / (t.v[this.zoom] || 1))]);
    if (it.kind === 'other') {
      MT.showTip(ev, MT.fmtCount(it.n) + ' smaller ' + (t.dir === 'main' ? 'callees' : 'entries') + (it.parent > 0 ? ' of ' + t.name(it.parent) : ''),
        'each too small to draw; zoom in or narrow the filter to see them', rows);
    } else {
      MT.showTip(ev, this.restName(it.parent), this.restText(it.parent), rows);
    }
  }
  onMove(e) {
    const it = this.itemOf(e.target);
    if (!it) { MT.hideTip(); return; }
    this.tip(e, it);
  }
  onClick(e) {
    const it = this.itemOf(e.target);
    if (!it) return;
    this.setCurrent(it);
    if (it.kind !== 'node') { it.el.focus({ preventScroll: true }); return; }
    this.host.onSelect(this.tree, it.i);
    if (this.tree.children(it.i).length && it.i !== this.zoom) this.zoomTo(it.i);
    else it.el.focus({ preventScroll: true });
  }
  onFocus(e) {
    const it = this.itemOf(e.target);
    if (!it || it.el !== e.target) return;
    this.setCurrent(it);
    /* ring, tooltip and status line when the keyboard brought the focus
       (after a click the mouse is there, with its tooltip, and the status
       line tells what was clicked) */
    let keyboard = true;
    try { keyboard = it.el.matches(':focus-visible'); } catch (err) { /* older browsers: always */ }
    if (!keyboard) { this.ring.hidden = true; return; }
    if (it.kind === 'node') this.host.onSelect(this.tree, it.i);
    const rs = this.ring.style;
    rs.left = it.r[0] + 'px'; rs.top = it.r[1] + 'px'; rs.width = it.r[2] + 'px'; rs.height = it.r[3] + 'px';
    this.ring.hidden = false;
    const r = it.el.getBoundingClientRect();
    this.tip({ clientX: r.left + Math.min(r.width / 2, 40), clientY: r.top + Math.min(r.height / 2, 20) }, it);
  }
  setCurrent(it) {
    for (const x of this.items) if (x.el.tabIndex === 0 && x !== it) x.el.tabIndex = -1;
    it.el.tabIndex = 0;
    this.cur = this.key(it);
  }
  focusCurrent() {
    const it = this.items.find((x) => this.key(x) === this.cur);
    if (it) it.el.focus({ preventScroll: true });
  }
  /* the neighbour of item a in a direction, among its siblings: the nearest
     centre that way, preferring the ones in line */
  neighbour(a, dx, dy) {
    const cx = a.r[0] + a.r[2] / 2, cy = a.r[1] + a.r[3] / 2;
    let best = null, bs = Infinity;
    for (const b of this.items) {
      if (b === a || b.parent !== a.parent) continue;
      const bx = b.r[0] + b.r[2] / 2, by = b.r[1] + b.r[3] / 2;
      const along = (bx - cx) * dx + (by - cy) * dy;
      if (along <= 0.5) continue;
      const across = Math.abs((bx - cx) * dy) + Math.abs((by - cy) * dx);
      const s = along + 2 * across;
      if (s < bs) { bs = s; best = b; }
    }
    return best;
  }
  onKey(e) {
    const t = this.tree;
    if (!t || e.ctrlKey || e.metaKey || e.altKey) return;
    const a = this.itemOf(e.target);
    const dirs = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (dirs[e.key]) {
      e.preventDefault();
      if (!a) return;
      const b = this.neighbour(a, dirs[e.key][0], dirs[e.key][1]);
      if (b) { this.setCurrent(b); b.el.focus({ preventScroll: true }); }
      return;
    }
    switch (e.key) {
      case 'Home': case 'End': {
        e.preventDefault();
        if (!a) return;
        const sib = this.items.filter((x) => x.parent === a.parent);
        const b = e.key === 'Home' ? sib[0] : sib[sib.length - 1];
        if (b) { this.setCurrent(b); b.el.focus({ preventScroll: true }); }
        return;
      }
      case 'Enter': case ' ':
        e.preventDefault();
        if (a && a.kind === 'node' && t.children(a.i).length) { this.host.onSelect(t, a.i); this.zoomTo(a.i); }
        return;
      case 'Backspace':
        e.preventDefault();
        if (this.zoom > 0) this.zoomTo(t.p[this.zoom], 'n' + this.zoom);
        return;
      case 'Escape':
        e.preventDefault();
        if (this.zoom > 0) {
          /* back to the top, on the outermost frame of where we were */
          let k = this.zoom;
          while (t.p[k] > 0) k = t.p[k];
          this.zoomTo(0, 'n' + k);
        }
        return;
      default:
    }
  }
};
