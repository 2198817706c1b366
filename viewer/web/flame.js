/* flame.js - the call tree as the page holds it (MT.Tree, from /api/tree)
   and the flame graph drawn from it on a canvas (MT.Flame): icicle layout,
   click to zoom, search highlighting, hover tooltips, keyboard moves.
   Only frames at least half a pixel wide are visited, so drawing stays
   fast with a hundred thousand nodes. */
'use strict';

MT.Tree = class {
  constructor(j) {
    const n = j.n;
    this.n = n;
    this.dir = j.dir;
    this.metric = j.metric;
    this.total = j.total;
    this.truncated = !!j.truncated;
    this.maxNodes = j.max_nodes || 0;
    this.f = Int32Array.from(j.nodes.f);
    this.p = Int32Array.from(j.nodes.p);
    this.v = Float64Array.from(j.nodes.v);
    this.s = Float64Array.from(j.nodes.s);
    this.tmp = Float64Array.from(j.nodes.tmp || []);  /* temporary blocks */
    this.fid = j.funcs.id;
    this.ffull = j.funcs.name;
    this.fname = j.funcs.short || j.funcs.name;
    this.ffile = j.funcs.file;
    /* children in CSR form, in the order given (heaviest first) */
    const cnt = new Int32Array(n + 1);
    for (let i = 1; i < n; i++) cnt[this.p[i] + 1]++;
    for (let i = 0; i < n; i++) cnt[i + 1] += cnt[i];
    this.cstart = cnt;
    this.clist = new Int32Array(Math.max(0, n - 1));
    const fill = cnt.slice(0, n);
    for (let i = 1; i < n; i++) this.clist[fill[this.p[i]]++] = i;
    /* depth, x offset (fraction of the root), self */
    this.depth = new Int32Array(n);
    this.x = new Float64Array(n);
    this.self = Float64Array.from(this.v);
    const off = new Float64Array(n);
    const V = this.v[0] > 0 ? this.v[0] : 1;
    let maxd = 0;
    for (let i = 1; i < n; i++) {
      const pa = this.p[i];
      this.depth[i] = this.depth[pa] + 1;
      if (this.depth[i] > maxd) maxd = this.depth[i];
      this.x[i] = this.x[pa] + off[pa];
      off[pa] += this.v[i] / V;
      this.self[pa] -= this.v[i];
    }
    this.maxDepth = maxd;
  }
  name(i) { return i === 0 ? 'all allocations' : this.fname[this.f[i]]; }
  full(i) { return i === 0 ? 'all allocations' : this.ffull[this.f[i]]; }
  file(i) { return i === 0 ? '' : this.ffile[this.f[i]]; }
  funcId(i) { return i === 0 ? -1 : this.fid[this.f[i]]; }
  children(i) { return this.clist.subarray(this.cstart[i], this.cstart[i + 1]); }
  /* function ids from the root (excluded) down to node i */
  path(i) {
    const out = [];
    for (; i > 0; i = this.p[i]) out.push(this.funcId(i));
    return out.reverse();
  }
  /* the deepest node reached by following a path of function ids */
  resolve(path) {
    let cur = 0;
    for (const id of path) {
      let next = -1;
      for (const c of this.children(cur)) if (this.funcId(c) === id) { next = c; break; }
      if (next < 0) break;
      cur = next;
    }
    return cur;
  }
  /* matches of a regex: Uint8Array flags and the share covered (each stack once) */
  search(re) {
    const m = new Uint8Array(this.n);
    if (!re) return { match: m, value: 0, count: 0 };
    const names = this.fname.map((s) => re.test(s) ? 1 : 0);
    const covered = new Uint8Array(this.n);
    let value = 0, count = 0;
    for (let i = 1; i < this.n; i++) {
      if (names[this.f[i]]) {
        m[i] = 1; count++;
        if (!covered[this.p[i]]) value += this.v[i];
        covered[i] = 1;
      } else covered[i] = covered[this.p[i]];
    }
    return { match: m, value, count };
  }
};

/* The tooltip's rows for node i of a tree (flame graph, treemap): value,
   shares of the total and of the zoomed node, self, samples, error. */
MT.tipRows = function (t, i, zoom) {
  const rows = [
    [MT.metricLabel(), MT.fmtValue(t.v[i])],
    ['share', MT.fmtPct(t.v[i] / (t.v[0] || 1)) + ' of the filtered total'],
  ];
  if (zoom > 0) rows.push(['of zoom', MT.fmtPct(t.v[i] / (t.v[zoom] || 1))]);
  if (t.dir === 'main') rows.push(['self', MT.fmtValue(t.self[i])]);
  rows.push(['samples', MT.fmtCount(t.s[i])]);
  rows.push(['sampling error', MT.fmtNoise(t.v[i], t.s[i]) + ' at 95%']);
  return rows;
};

MT.Flame = class {
  constructor(canvas, host) {
    this.canvas = canvas;
    this.host = host;                 /* the app: callbacks onZoom, onSelect, onOpen */
    this.tree = null;
    this.zoom = 0;
    this.sel = -1;
    this.hover = -1;
    this.found = null;
    this.rowH = 18;
    canvas.addEventListener('mousemove', (e) => this.onMove(e));
    canvas.addEventListener('mouseleave', () => { this.hover = -1; MT.hideTip(); this.paint(); });
    canvas.addEventListener('click', (e) => this.onClick(e));
    canvas.addEventListener('dblclick', (e) => this.onDbl(e));
    canvas.addEventListener('keydown', (e) => this.onKey(e));
  }
  setTree(tree, zoomPath) {
    this.tree = tree;
    this.zoom = tree.resolve(zoomPath || []);
    this.sel = this.zoom;
    this.hover = -1;
    this.setSearch(this.searchRe);
  }
  setSearch(re) {
    this.searchRe = re;
    this.found = this.tree && re ? this.tree.search(re) : null;
  }
  /* the zoom the page's URL names (shared with the treemap) */
  syncZoom(path) {
    if (!this.tree) return;
    const z = this.tree.resolve(path || []);
    if (z !== this.zoom) { this.zoom = z; this.sel = z; }
  }
  zoomTo(i) {
    this.zoom = i;
    this.sel = i;
    this.draw();
    this.host.onZoom(this.tree.path(i));
  }
  /* horizontal span [x0, x1) of node i in the current zoom, in [0, 1] units */
  span(i) {
    const t = this.tree, V = t.v[0] > 0 ? t.v[0] : 1;
    const zx = t.x[this.zoom], zw = t.v[this.zoom] / V || 1;
    if (t.depth[i] <= t.depth[this.zoom]) return [0, 1];  /* ancestors: full width */
    return [(t.x[i] - zx) / zw, (t.x[i] - zx + t.v[i] / V) / zw];
  }
  draw() {
    const t = this.tree;
    const c = this.canvas;
    if (!t) return;
    const rows = Math.min(t.maxDepth + 1, 600);   /* deeper frames are not drawn */
    const { ctx, w } = MT.fitCanvas(c, Math.max(rows * this.rowH + 8, c.parentNode.clientHeight - 4));
    ctx.clearRect(0, 0, w, c.height);
    ctx.font = '11px ui-monospace, "DejaVu Sans Mono", Menlo, monospace';
    ctx.textBaseline = 'middle';
    if (!this.charW) this.charW = ctx.measureText('mmmmmmmmmm').width / 10;
    const rh = this.rowH;
    const found = this.found;
    const drawNode = (i, x0, x1) => {
      const px = x0 * w, pw = (x1 - x0) * w;
      const y = t.depth[i] * rh;
      let col;
      if (i === 0) col = '#cfd5df';
      else if (found && found.match[i]) col = '#c026d3';
      else if (found) col = '#e6e1dc';
      else col = MT.frameColor(t.name(i));
      ctx.fillStyle = col;
      ctx.fillRect(px, y, Math.max(pw - 0.6, 0.4), rh - 1);
      if (pw > 28) {
        const max = Math.floor((pw - 6) / this.charW);
        let label = t.name(i);
        if (i === 0) label = 'all allocations · ' + MT.fmtValue(t.v[0]);
        if (label.length > max) label = i === 0 ? label.slice(0, Math.max(0, max - 1)) + '…' : MT.fit(label, max);
        if (label) {
          ctx.fillStyle = found && found.match[i] ? '#fff' : '#2a1a0a';
          ctx.fillText(label, px + 3, y + rh / 2);
        }
      }
    };
    if (!(t.v[0] > 0)) {
      ctx.fillStyle = '#6b7280';
      ctx.font = '13px system-ui, "DejaVu Sans", sans-serif';
      const msg = MT.emptyText();
      ctx.fillText(msg[0].toUpperCase() + msg.slice(1) + '.', 12, rh * 2.2);
      this.snap = null;
      return;
    }
    /* ancestors of the zoomed node span the full width */
    for (let a = t.p[this.zoom]; this.zoom > 0; a = t.p[a]) {
      drawNode(a, 0, 1);
      if (a === 0) break;
    }
    /* what pruning left out under the zoomed frame: a grey block, labelled */
    {
      const z = this.zoom, ch = t.children(z);
      let sum = 0;
      for (const c of ch) sum += t.v[c];
      const rest = t.v[z] > 0 ? (t.v[z] - sum) / t.v[z] : 0;
      if (rest > 0.002 && ch.length && t.depth[z] + 1 < rows) {
        const y = (t.depth[z] + 1) * rh, x0 = (1 - rest) * w;
        ctx.fillStyle = '#eef0f3';
        ctx.fillRect(x0, y, rest * w - 0.6, rh - 1);
        if (rest * w > 60) {
          const label = (t.dir === 'sites' && z === 0 ? 'smaller sites ' : 'pruned ') + MT.fmtPct(rest);
          ctx.fillStyle = '#6b7280';
          ctx.fillText(label.length * this.charW < rest * w - 6 ? label : MT.fmtPct(rest), x0 + 3, y + rh / 2);
        }
      }
    }
    const minW = 0.35 / w;
    const stack = [this.zoom];
    while (stack.length) {
      const i = stack.pop();
      const [x0, x1] = this.span(i);
      if (x1 - x0 < minW) continue;
      if (t.depth[i] >= rows) continue;
      drawNode(i, x0, x1);
      const ch = t.children(i);
      for (let k = ch.length - 1; k >= 0; k--) stack.push(ch[k]);
    }
    /* keep the frames as a picture: hovering only repaints the outlines */
    if (!this.snap) this.snap = document.createElement('canvas');
    this.snap.width = c.width;
    this.snap.height = c.height;
    this.snap.getContext('2d').drawImage(c, 0, 0);
    this.outline(ctx, w);
  }
  /* repaint the kept picture and the hover/selection outlines */
  paint() {
    const c = this.canvas;
    if (!this.snap || this.snap.width !== c.width || this.snap.height !== c.height) {
      if (this.tree && this.tree.v[0] > 0) this.draw();
      return;
    }
    const ctx = c.getContext('2d');
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.snap, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.outline(ctx, c.width / dpr);
  }
  outline(ctx, w) {
    const t = this.tree, rh = this.rowH;
    for (const [i, color, lw] of [[this.hover, '#111827', 1], [this.sel, '#2563eb', 2]]) {
      if (i < 0 || i >= t.n) continue;
      const [x0, x1] = this.span(i);
      if (x1 <= 0 || x0 >= 1) continue;
      ctx.strokeStyle = color;
      ctx.lineWidth = lw;
      ctx.strokeRect(x0 * w + lw / 2, t.depth[i] * rh + lw / 2, Math.max((x1 - x0) * w - lw, 1), rh - 1 - lw);
    }
  }
  hit(e) {
    const t = this.tree;
    if (!t) return -1;
    const r = this.canvas.getBoundingClientRect();
    const fx = (e.clientX - r.left) / r.width;
    const d = Math.floor((e.clientY - r.top) / this.rowH);
    if (d < 0 || fx < 0 || fx > 1) return -1;
    const zd = t.depth[this.zoom];
    if (d <= zd) {
      let a = this.zoom;
      while (t.depth[a] > d) a = t.p[a];
      return a;
    }
    let cur = this.zoom;
    while (t.depth[cur] < d) {
      let next = -1;
      for (const c of t.children(cur)) {
        const [x0, x1] = this.span(c);
        if (fx >= x0 && fx < x1) { next = c; break; }
      }
      if (next < 0) return -1;
      cur = next;
    }
    return cur;
  }
  onMove(e) {
    const i = this.hit(e);
    if (i !== this.hover) { this.hover = i; this.paint(); }
    if (i < 0) { MT.hideTip(); return; }
    const t = this.tree;
    MT.showTip(e, t.full(i), t.file(i) || null, MT.tipRows(t, i, this.zoom));
  }
  onClick(e) {
    const i = this.hit(e);
    this.canvas.focus();
    if (i < 0) return;
    this.sel = i;
    this.host.onSelect(this.tree, i);
    if (i !== this.zoom) this.zoomTo(i);
    else this.draw();
  }
  onDbl(e) {
    const i = this.hit(e);
    if (i >= 0 && i === this.zoom && i > 0) this.zoomTo(this.tree.p[i]);
  }
  onKey(e) {
    const t = this.tree;
    if (!t) return;
    let s = this.sel < 0 ? this.zoom : this.sel;
    const sib = (d) => {
      if (s === 0) return s;
      const ch = t.children(t.p[s]);
      const k = ch.indexOf(s) + d;
      return k >= 0 && k < ch.length ? ch[k] : s;
    };
    switch (e.key) {
      case 'ArrowUp': if (s > 0) s = t.p[s]; break;
      case 'ArrowDown': { const ch = t.children(s); if (ch.length) s = ch[0]; break; }
      case 'ArrowLeft': s = sib(-1); break;
      case 'ArrowRight': s = sib(1); break;
      case 'Enter': this.zoomTo(s); this.host.onSelect(t, s); e.preventDefault(); return;
      case 'Escape': this.zoomTo(0); e.preventDefault(); return;
      case 'Backspace': if (this.zoom > 0) this.zoomTo(t.p[this.zoom]); e.preventDefault(); return;
      default: return;
    }
    e.preventDefault();
    this.sel = s;
    this.host.onSelect(t, s);
    this.paint();
    this.scrollTo(s);
  }
  scrollTo(i) {
    const sc = this.canvas.parentNode, y = this.tree.depth[i] * this.rowH;
    if (y < sc.scrollTop || y > sc.scrollTop + sc.clientHeight - this.rowH) sc.scrollTop = y - sc.clientHeight / 2;
  }
};
