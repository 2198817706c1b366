/* graph.js - the call graph in the pprof style: one box per function
   (paths that meet at a function join there), edges caller -> callee with
   widths by cost. Laid out in layers (longest path from the roots, back
   edges set aside), rows ordered by the barycentre heuristic, drawn as SVG. */
'use strict';

MT.Graph = class {
  constructor(box, host) { this.box = box; this.host = host; }
  set(g) {
    const box = MT.clear(this.box);
    const NS = 'http://www.w3.org/2000/svg';
    const S = (tag, attrs, ...kids) => {
      const e = document.createElementNS(NS, tag);
      for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
      for (const c of kids) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
      return e;
    };
    const nodes = g.nodes.slice(0, 40);
    if (!nodes.length) {
      box.appendChild(MT.el('div', { class: 'graph-empty' }, 'No function reaches the threshold for this filter.'));
      return;
    }
    const N = nodes.length;
    const edges = g.edges.filter((e) => e.from < N && e.to < N && e.from !== e.to);
    const total = g.total || 1;
    /* break cycles: DFS from the heaviest roots; back edges are drawn but not ranked */
    const out = nodes.map(() => []), inn = nodes.map(() => []);
    edges.forEach((e, k) => { out[e.from].push(k); inn[e.to].push(k); });
    const state = new Uint8Array(N), back = new Uint8Array(edges.length);
    const dfs = (v) => {
      const stack = [[v, 0]];
      state[v] = 1;
      while (stack.length) {
        const top = stack[stack.length - 1];
        const [u, k] = top;
        if (k >= out[u].length) { state[u] = 2; stack.pop(); continue; }
        top[1]++;
        const ei = out[u][k], w = edges[ei].to;
        if (state[w] === 1) back[ei] = 1;
        else if (state[w] === 0) { state[w] = 1; stack.push([w, 0]); }
      }
    };
    for (let v = 0; v < N; v++) if (!inn[v].length && !state[v]) dfs(v);
    for (let v = 0; v < N; v++) if (!state[v]) dfs(v);
    /* longest-path ranks in topological order */
    const indeg = new Int32Array(N);
    edges.forEach((e, k) => { if (!back[k]) indeg[e.to]++; });
    const rank = new Int32Array(N), queue = [];
    for (let v = 0; v < N; v++) if (!indeg[v]) queue.push(v);
    while (queue.length) {
      const u = queue.shift();
      for (const k of out[u]) {
        if (back[k]) continue;
        const w = edges[k].to;
        rank[w] = Math.max(rank[w], rank[u] + 1);
        if (--indeg[w] === 0) queue.push(w);
      }
    }
    const nr = Math.max(...rank) + 1;
    const layers = Array.from({ length: nr }, () => []);
    for (let v = 0; v < N; v++) layers[rank[v]].push(v);
    const pos = new Float64Array(N);
    const setPos = () => layers.forEach((L) => L.forEach((v, i) => { pos[v] = i; }));
    setPos();
    for (let sweep = 0; sweep < 6; sweep++) {
      const down = sweep % 2 === 0;
      for (let r = down ? 1 : nr - 2; down ? r < nr : r >= 0; r += down ? 1 : -1) {
        const bc = (v) => {
          const ks = down ? inn[v] : out[v];
          const ps = ks.filter((k) => !back[k]).map((k) => pos[down ? edges[k].from : edges[k].to]);
          return ps.length ? ps.reduce((a, b) => a + b, 0) / ps.length : pos[v];
        };
        const b = new Map(layers[r].map((v) => [v, bc(v)]));
        layers[r].sort((x, y) => b.get(x) - b.get(y));
        layers[r].forEach((v, i) => { pos[v] = i; });
      }
    }
    /* boxes */
    const short = (s) => MT.fit(s, 38) || s;
    const dims = nodes.map((n) => {
      const fs = 11 + Math.round(7 * Math.sqrt(n.flat / total));
      const lines = [short(n.short || n.name), 'self ' + MT.fmtValue(n.flat) + ' (' + MT.fmtPct(n.flat / total) + ')',
        'total ' + MT.fmtValue(n.cum) + ' (' + MT.fmtPct(n.cum / total) + ')'];
      const wch = Math.max(lines[0].length * fs * 0.62, 150);
      return { fs, lines, w: Math.round(wch + 16), h: fs + 2 * 14 + 10 };
    });
    const gapX = 26, gapY = 56;
    const rowW = layers.map((L) => L.reduce((a, v) => a + dims[v].w + gapX, -gapX));
    const W = Math.max(...rowW) + 40;
    const X = new Float64Array(N), Y = new Float64Array(N);
    let y = 20;
    layers.forEach((L, r) => {
      let x = 20 + (W - 40 - rowW[r]) / 2;
      const hmax = Math.max(...L.map((v) => dims[v].h));
      for (const v of L) { X[v] = x; Y[v] = y + (hmax - dims[v].h) / 2; x += dims[v].w + gapX; }
      y += hmax + gapY;
    });
    const H = y;
    /* shrink wide graphs to the pane (down to 60%), scroll the rest */
    const scale = Math.max(0.6, Math.min(1, (box.clientWidth - 8) / W));
    const svg = S('svg', { width: Math.round(W * scale), height: Math.round(H * scale), viewBox: '0 0 ' + W + ' ' + H });
    svg.appendChild(S('defs', {}, S('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '9', markerHeight: '9', markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' },
      S('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#7c8594' }))));
    edges.forEach((e, k) => {
      const a = e.from, b = e.to;
      const x1 = X[a] + dims[a].w / 2, y1 = Y[a] + dims[a].h, x2 = X[b] + dims[b].w / 2, y2 = Y[b];
      const share = e.v / total;
      let d;
      if (!back[k] && y2 > y1) {
        const my = (y1 + y2) / 2;
        d = 'M' + x1 + ' ' + y1 + ' C' + x1 + ' ' + my + ' ' + x2 + ' ' + my + ' ' + x2 + ' ' + (y2 - 1);
      } else {
        const sx = X[a] + dims[a].w, ex = X[b] + dims[b].w;
        const bulge = Math.max(sx, ex) + 60;
        d = 'M' + sx + ' ' + (Y[a] + dims[a].h / 2) + ' C' + bulge + ' ' + (Y[a] + dims[a].h / 2) + ' ' + bulge + ' ' + (Y[b] + dims[b].h / 2) + ' ' + ex + ' ' + (Y[b] + dims[b].h / 2);
      }
      const p = S('path', { class: 'gedge', d, 'stroke-width': (1 + 7 * share).toFixed(2), 'marker-end': 'url(#arrow)', 'stroke-dasharray': share < 0.01 ? '4 3' : '' });
      p.appendChild(S('title', {}, (nodes[a].short || nodes[a].name) + ' → ' + (nodes[b].short || nodes[b].name) + '\n' + MT.fmtValue(e.v) + ' (' + MT.fmtPct(share) + ')'));
      svg.appendChild(p);
      if (share >= 0.02 && !back[k]) {
        svg.appendChild(S('text', { class: 'glabel', x: (x1 + x2) / 2 + 6, y: (y1 + y2) / 2 + 3 }, MT.fmtValue(e.v)));
      }
    });
    nodes.forEach((n, v) => {
      const share = n.cum / total;
      const fill = 'hsl(' + (28 - 24 * share).toFixed(0) + ', ' + (55 + 35 * share).toFixed(0) + '%, ' + (94 - 34 * share).toFixed(0) + '%)';
      const gnode = S('g', { class: 'gnode', transform: 'translate(' + X[v] + ',' + Y[v] + ')' });
      gnode.appendChild(S('rect', { width: dims[v].w, height: dims[v].h, fill, rx: 4 }));
      const d = dims[v];
      gnode.appendChild(S('text', { x: 8, y: d.fs + 4, 'font-size': d.fs, 'font-weight': 600 }, d.lines[0]));
      gnode.appendChild(S('text', { x: 8, y: d.fs + 4 + 15 }, d.lines[1]));
      gnode.appendChild(S('text', { x: 8, y: d.fs + 4 + 29 }, d.lines[2]));
      gnode.appendChild(S('title', {}, n.name + (n.file ? '\n' + n.file : '') + '\nsamples: ' + n.samples + ', ' + MT.fmtNoise(n.cum, n.samples) + ' at 95%'));
      gnode.addEventListener('click', () => this.host.focusFunction(n.id, true));
      svg.appendChild(gnode);
    });
    box.appendChild(svg);
    const root = layers[0][0];
    box.scrollLeft = Math.max(0, (X[root] + dims[root].w / 2) * scale - box.clientWidth / 2);
    box.scrollTop = 0;
  }
};
