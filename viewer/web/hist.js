/* hist.js - size and lifetime histograms of the filtered allocations
   (/api/hist), as bar charts on canvases with hover readouts. */
'use strict';

MT.Hist = class {
  constructor(canvas, kind) {
    this.canvas = canvas;
    this.kind = kind;        /* 'size' | 'lifetime' */
    this.h = null;
    this.bars = [];
    canvas.addEventListener('mousemove', (e) => this.move(e));
    canvas.addEventListener('mouseleave', () => MT.hideTip());
  }
  set(h) { this.h = h; this.draw(); }
  label(v) { return this.kind === 'size' ? MT.fmtBytes(v) : MT.fmtTime(v / 1e6); }
  draw() {
    const h = this.h;
    if (!h) return;
    const { ctx, w, h: H } = MT.fitCanvas(this.canvas);
    ctx.clearRect(0, 0, w, H);
    const m = { l: 62, r: 10, t: 10, b: 40 };
    let first = h.bytes.findIndex((v) => v > 0), last = h.bytes.length - 1;
    while (last > 0 && !(h.bytes[last] > 0)) last--;
    const items = [];
    if (first >= 0) for (let i = first; i <= last; i++) items.push({ i, v: h.bytes[i], lo: h.lo[i], hi: h.hi[i] });
    if (this.kind === 'lifetime' && h.never_collected && h.never_collected.alloc_bytes > 0) {
      items.push({ i: -1, v: h.never_collected.alloc_bytes, never: true });
    }
    ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    if (!items.length) {
      ctx.fillStyle = '#6b7280';
      ctx.fillText(MT.emptyText(false), m.l, m.t + 20);
      this.bars = [];
      return;
    }
    const vmax = Math.max(...items.map((x) => x.v)) * 1.08;
    const pw = w - m.l - m.r, ph = H - m.t - m.b;
    const ys = MT.niceBytesStep(vmax, 4);
    ctx.strokeStyle = '#eceef2';
    ctx.fillStyle = '#6b7280';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (let v = 0; v <= vmax; v += ys) {
      const y = Math.round(m.t + ph - v / vmax * ph) + 0.5;
      ctx.beginPath(); ctx.moveTo(m.l, y); ctx.lineTo(w - m.r, y); ctx.stroke();
      ctx.fillText(MT.fmtBytes(v), m.l - 6, y);
    }
    const bw = pw / items.length;
    this.bars = [];
    const every = Math.max(1, Math.ceil(60 / bw));
    items.forEach((it, k) => {
      const x = m.l + k * bw, bh = it.v / vmax * ph;
      ctx.fillStyle = it.never ? '#9aa3b2' : (this.kind === 'size' ? '#f59e0b' : '#10b981');
      ctx.fillRect(x + 1, m.t + ph - bh, Math.max(1, bw - 2), bh);
      this.bars.push({ x0: x, x1: x + bw, it });
      if (k % every === 0 || it.never) {
        ctx.save();
        ctx.fillStyle = '#6b7280';
        ctx.textAlign = 'center';
        ctx.textBaseline = 'top';
        if (it.never) {
          ctx.textAlign = 'right';
          ctx.fillText('never freed', Math.min(w - 2, x + bw), m.t + ph + 18);
        } else {
          ctx.fillText(this.label(it.lo), x + bw / 2, m.t + ph + 6);
        }
        ctx.restore();
      }
    });
    ctx.fillStyle = '#6b7280';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    ctx.fillText(this.kind === 'size' ? 'block size (bucket start), bytes allocated' : 'lifetime (bucket start), bytes allocated', m.l + pw / 2, H - 2);
  }
  move(e) {
    const r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left;
    const b = this.bars.find((b) => x >= b.x0 && x < b.x1);
    if (!b) { MT.hideTip(); return; }
    const it = b.it, h = this.h;
    if (it.never) {
      MT.showTip(e, 'never freed', 'also counted in the bars, with a lifetime up to the end of the trace', [['bytes', MT.fmtBytes(it.v)], ['samples', MT.fmtCount(h.never_collected.samples)]]);
      return;
    }
    MT.showTip(e, this.label(it.lo) + ' – ' + this.label(it.hi), null, [
      ['bytes', MT.fmtBytes(it.v)],
      ['blocks', MT.fmtCount(h.count[it.i]) + (h.count_se && h.count[it.i] > 0
        ? ' ± ' + MT.fmtCount(1.96 * h.count_se[it.i]) + ' at 95% (a count\'s own error)' : '')],
      ['samples', MT.fmtCount(h.samples[it.i])],
      ['sampling error', MT.fmtNoise(it.v, h.samples[it.i]).replace(/ blocks/, '')],
    ]);
  }
};
