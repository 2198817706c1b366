/* chart.js - the memory-over-time chart on a canvas: total and filtered
   live bytes, resident memory (dashed, when FILE.rss is beside the trace;
   the ledger's rows beyond the heap stacked beneath when it has them),
   the peak, the filter's time ranges shaded, a hover readout and
   drag-to-select of a time range. */
'use strict';

MT.niceStep = function (span, target) {
  const raw = span / Math.max(1, target);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
};
MT.niceBytesStep = function (max, target) {
  const raw = max / Math.max(1, target);
  let unit = 1;
  while (unit * 1024 <= raw) unit *= 1024;
  for (const m of [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]) if (m * unit >= raw) return m * unit;
  return 1024 * unit;
};

MT.Chart = class {
  constructor(canvas, onSelect) {
    this.canvas = canvas;
    this.onSelect = onSelect;
    this.curve = null;
    this.ranges = [];
    this.drag = null;     /* {x0, x1} in seconds while dragging or selected */
    this.hoverT = null;
    this.m = { l: 62, r: 14, t: 12, b: 22 };
    canvas.addEventListener('mousedown', (e) => this.down(e));
    window.addEventListener('mousemove', (e) => this.move(e));
    window.addEventListener('mouseup', (e) => this.up(e));
    canvas.addEventListener('mouseleave', () => { this.hoverT = null; MT.hideTip(); this.draw(); });
  }
  set(curve, ranges) { this.curve = curve; this.ranges = ranges || []; this.draw(); }
  tOf(e) {
    const r = this.canvas.getBoundingClientRect();
    const c = this.curve, w = r.width - this.m.l - this.m.r;
    const span = c.width * c.n;
    const f = Math.min(1, Math.max(0, (e.clientX - r.left - this.m.l) / w));
    return c.t0 + f * span;
  }
  down(e) {
    if (!this.curve || e.button !== 0) return;
    const t = this.tOf(e);
    this.drag = { x0: t, x1: t, active: true };
    MT.hideTip();
    MT.$('chart-sel-bar').hidden = true;
    e.preventDefault();
  }
  move(e) {
    if (!this.curve) return;
    if (this.drag && this.drag.active) {
      MT.hideTip();
      this.drag.x1 = this.tOf(e);
      this.draw();
      return;
    }
    if (e.target !== this.canvas) return;
    this.hoverT = this.tOf(e);
    this.draw();
    const c = this.curve;
    const i = Math.min(c.n - 1, Math.max(0, Math.floor((this.hoverT - c.t0) / c.width)));
    MT.showTip(e, 't = ' + MT.fmtTime(this.hoverT), null, [
      ['total live', MT.fmtBytes(c.total[i])],
      ['filtered live', MT.fmtBytes(c.filtered[i]) + (c.total[i] ? ' (' + MT.fmtPct(c.filtered[i] / c.total[i]) + ')' : '')],
      ['filtered allocated', MT.fmtBytes(c.filtered_alloc[i]) + ' in this ' + MT.fmtTime(c.width)],
    ].concat(this.rssAt(this.hoverT)));
  }
  /* The resident-memory sample in force at time t, as a tooltip row. */
  rssAt(t) {
    const r = this.curve && this.curve.rss;
    if (!r || !r.t.length || t < r.t[0]) return [];
    let i = 0;
    while (i + 1 < r.t.length && r.t[i + 1] <= t) i++;
    return [['resident (RSS)', MT.fmtBytes(r.bytes[i])]];
  }
  up() {
    if (!this.drag || !this.drag.active) return;
    this.drag.active = false;
    let a = Math.min(this.drag.x0, this.drag.x1), b = Math.max(this.drag.x0, this.drag.x1);
    const c = this.curve;
    if (b - a < c.width * c.n / 400) { this.drag = null; this.draw(); return; }
    this.drag = { x0: a, x1: b };
    this.draw();
    this.onSelect(a, b);
  }
  clearSelection() { this.drag = null; this.draw(); }
  draw() {
    const c = this.curve;
    if (!c) return;
    const { ctx, w, h } = MT.fitCanvas(this.canvas);
    const m = this.m, pw = w - m.l - m.r, ph = h - m.t - m.b;
    ctx.clearRect(0, 0, w, h);
    const span = c.width * c.n || 1;
    let ymax = 0;
    for (let i = 0; i < c.n; i++) ymax = Math.max(ymax, c.total[i], c.filtered[i]);
    const rss = c.rss && c.rss.t.length ? c.rss : null;
    if (rss) for (const v of rss.bytes) ymax = Math.max(ymax, v);
    ymax = ymax > 0 ? ymax * 1.1 : 1;
    const X = (t) => m.l + (t - c.t0) / span * pw;
    const Y = (v) => m.t + ph - v / ymax * ph;
    /* grid and axes */
    ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    ctx.fillStyle = '#6b7280';
    ctx.strokeStyle = '#eceef2';
    ctx.lineWidth = 1;
    const ys = MT.niceBytesStep(ymax, 4);
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let v = 0; v <= ymax; v += ys) {
      const y = Math.round(Y(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(m.l, y); ctx.lineTo(w - m.r, y); ctx.stroke();
      ctx.fillText(MT.fmtBytes(v), m.l - 6, y);
    }
    const xs = MT.niceStep(span, Math.max(2, Math.floor(pw / 90)));
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (let t = Math.ceil(c.t0 / xs) * xs; t <= c.t0 + span + 1e-12; t += xs) {
      const x = Math.round(X(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, m.t); ctx.lineTo(x, m.t + ph); ctx.stroke();
      const label = MT.fmtTime(t);
      if (x + ctx.measureText(label).width / 2 <= w) ctx.fillText(label, x, m.t + ph + 5);
    }
    /* the filter's time ranges */
    const colors = { alloc: 'rgba(245,158,11,0.16)', live: 'rgba(16,185,129,0.15)', collect: 'rgba(139,92,246,0.15)' };
    const lines = { alloc: '#d97706', live: '#059669', collect: '#7c3aed' };
    for (const r of this.ranges) {
      const x0 = X(Math.max(c.t0, r.t0)), x1 = X(Math.min(c.t0 + span, r.t1));
      if (r.t1 > r.t0) {
        ctx.fillStyle = colors[r.kind];
        ctx.fillRect(x0, m.t, Math.max(1, x1 - x0), ph);
      } else {
        ctx.strokeStyle = lines[r.kind];
        ctx.setLineDash([4, 3]);
        ctx.beginPath(); ctx.moveTo(Math.round(x0) + 0.5, m.t); ctx.lineTo(Math.round(x0) + 0.5, m.t + ph); ctx.stroke();
        ctx.setLineDash([]);
      }
    }
    /* the resident-memory ledger's rows beyond the heap (docs/rss.md),
       stacked from the bottom at each reading, held until the next */
    const lg = rss && rss.ledger && rss.ledger.t.length ? rss.ledger : null;
    if (lg) {
      const layers = [['alloc', '#f4d03f'], ['stack', '#a569bd'], ['mod', '#5dade2'],
                      ['file', '#48c9b0'], ['own', '#bfc9ca']];
      for (let k = layers.length - 1; k >= 0; k--) {
        ctx.beginPath();
        ctx.moveTo(X(Math.max(lg.t[0], c.t0)), Y(0));
        for (let i = 0; i < lg.t.length; i++) {
          let v = 0;
          for (let q = 0; q <= k; q++) v += lg[layers[q][0]][i];
          const x0 = X(Math.min(Math.max(lg.t[i], c.t0), c.t0 + span));
          const x1 = X(i + 1 < lg.t.length ? Math.min(lg.t[i + 1], c.t0 + span) : c.t0 + span);
          ctx.lineTo(x0, Y(v));
          ctx.lineTo(x1, Y(v));
        }
        ctx.lineTo(X(c.t0 + span), Y(0));
        ctx.closePath();
        ctx.fillStyle = layers[k][1];
        ctx.globalAlpha = 0.55;
        ctx.fill();
        ctx.globalAlpha = 1;
      }
    }
    /* series: total (grey) and filtered (blue), as areas with a line on top */
    const series = (arr, fill, stroke) => {
      ctx.beginPath();
      ctx.moveTo(X(c.t0), Y(0));
      for (let i = 0; i < c.n; i++) {
        ctx.lineTo(X(c.t0 + i * c.width), Y(arr[i]));
        ctx.lineTo(X(c.t0 + (i + 1) * c.width), Y(arr[i]));
      }
      ctx.lineTo(X(c.t0 + span), Y(0));
      ctx.closePath();
      ctx.fillStyle = fill;
      ctx.fill();
      ctx.beginPath();
      for (let i = 0; i < c.n; i++) {
        const y = Y(arr[i]);
        if (i === 0) ctx.moveTo(X(c.t0), y); else ctx.lineTo(X(c.t0 + i * c.width), y);
        ctx.lineTo(X(c.t0 + (i + 1) * c.width), y);
      }
      ctx.strokeStyle = stroke;
      ctx.lineWidth = 1.5;
      ctx.stroke();
    };
    series(c.total, 'rgba(154,163,178,0.22)', '#9aa3b2');
    const same = c.filtered.every((v, i) => v === c.total[i]);
    if (!same) series(c.filtered, 'rgba(37,99,235,0.18)', '#2563eb');
    else {
      ctx.setLineDash([]);
      series(c.filtered, 'rgba(37,99,235,0.10)', '#2563eb');
    }
    /* resident memory (RSS) beside the heap: a dark red step line */
    if (rss) {
      ctx.beginPath();
      for (let i = 0; i < rss.t.length; i++) {
        const x = X(Math.min(Math.max(rss.t[i], c.t0), c.t0 + span)), y = Y(rss.bytes[i]);
        if (i === 0) ctx.moveTo(x, y);
        else {
          ctx.lineTo(x, Y(rss.bytes[i - 1]));
          ctx.lineTo(x, y);
        }
      }
      ctx.strokeStyle = '#b91c1c';
      ctx.lineWidth = 1.5;
      ctx.setLineDash([5, 3]);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    /* its key in the legend above the chart */
    const key = document.getElementById('rss-key');
    if (key) {
      key.hidden = !rss;
      if (rss) document.getElementById('rss-text').textContent = 'resident (RSS), peak ' + MT.fmtBytes(rss.peak) +
        (lg ? '; beneath: allocator free (yellow), stacks (purple), modules (blue), files and shm (green), memtrace (grey)' : '');
    }
    /* peak */
    const pk = c.peak;
    if (pk && pk.t >= c.t0 && pk.t <= c.t0 + span) {
      const x = Math.round(X(pk.t)) + 0.5, y = Y(pk.bytes);
      ctx.strokeStyle = '#dc2626';
      ctx.setLineDash([3, 3]);
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(x, m.t + ph); ctx.lineTo(x, y); ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = '#dc2626';
      ctx.beginPath(); ctx.arc(x, y, 3.5, 0, 2 * Math.PI); ctx.fill();
      const label = 'peak ' + MT.fmtPeak(pk) + ' at ' + MT.fmtTime(pk.t);
      ctx.font = '600 11px system-ui, "DejaVu Sans", sans-serif';
      const tw = ctx.measureText(label).width;
      ctx.textAlign = x + 8 + tw > w - m.r ? 'right' : 'left';
      ctx.textBaseline = 'bottom';
      ctx.fillText(label, ctx.textAlign === 'right' ? x - 8 : x + 8, Math.max(m.t + 12, y - 2));
    }
    /* selection being dragged or kept */
    if (this.drag) {
      const a = Math.min(this.drag.x0, this.drag.x1), b = Math.max(this.drag.x0, this.drag.x1);
      ctx.fillStyle = 'rgba(37,99,235,0.14)';
      ctx.fillRect(X(a), m.t, Math.max(1, X(b) - X(a)), ph);
      ctx.strokeStyle = '#2563eb';
      ctx.strokeRect(X(a) + 0.5, m.t + 0.5, Math.max(1, X(b) - X(a)), ph);
    }
    if (this.hoverT !== null && !(this.drag && this.drag.active)) {
      const x = Math.round(X(this.hoverT)) + 0.5;
      ctx.strokeStyle = 'rgba(17,24,39,0.35)';
      ctx.beginPath(); ctx.moveTo(x, m.t); ctx.lineTo(x, m.t + ph); ctx.stroke();
    }
    ctx.strokeStyle = '#cdd2da';
    ctx.beginPath(); ctx.moveTo(m.l + 0.5, m.t); ctx.lineTo(m.l + 0.5, m.t + ph + 0.5); ctx.lineTo(w - m.r, m.t + ph + 0.5); ctx.stroke();
  }
};
