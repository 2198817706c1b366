/* compare.js - the compare page: reads its state from the URL (by, at, key,
   filter, alpha, a, b), asks /api/compare_info, /api/compare_curves and
   /api/compare, and draws both curves, the differential flame graph (call
   paths; red grew, blue shrank, strength by significance, grey within the
   noise) and the table of differences. */
'use strict';

const $ = (id) => document.getElementById(id);
const state = { by: 'alloc', at: '', key: 'site', filter: '', alpha: '', a: '', b: '' };
let info = null;
let flameNodes = [];   /* drawn rectangles, for hovering */
let last = null;       /* the answers drawn, redrawn on resize */

function readUrl() {
  const p = new URLSearchParams(location.search);
  for (const k of Object.keys(state)) state[k] = p.get(k) || (k === 'by' ? 'alloc' : k === 'key' ? 'site' : '');
}

function writeUrl() {
  const p = new URLSearchParams();
  for (const k of Object.keys(state)) if (state[k]) p.set(k, state[k]);
  history.replaceState(null, '', location.pathname + (p.toString() ? '?' + p : ''));
}

let busy = 0;
async function api(endpoint, params) {
  const q = new URLSearchParams();
  for (const k in params) if (params[k] !== undefined && params[k] !== '') q.set(k, params[k]);
  busy++; $('busy').hidden = false;
  try {
    const r = await fetch('api/' + endpoint + (q.toString() ? '?' + q : ''));
    let body;
    try { body = await r.json(); } catch (e) { body = { error: 'bad answer from the server' }; }
    if (!r.ok) throw new Error(body.error || 'HTTP ' + r.status);
    return body;
  } finally {
    if (--busy === 0) $('busy').hidden = true;
  }
}

function isBytes() { return state.by === 'alloc' || state.by === 'live'; }

function fmt(v, sign) {
  const s = sign && v > 0 ? '+' : '';
  if (!isBytes()) return s + (Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3));
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let a = Math.abs(v), u = 0;
  while (a >= 1024 && u < units.length - 1) { a /= 1024; u++; }
  const t = u === 0 ? a.toFixed(0) : a >= 100 ? a.toFixed(0) : a >= 10 ? a.toFixed(1) : a.toFixed(2);
  return s + (v < 0 ? '-' : '') + t + ' ' + units[u];
}
function fmtBytes(v) { const b = state.by; state.by = 'alloc'; const r = fmt(v); state.by = b; return r; }
function fmtP(p) { return p < 1e-10 ? '<1e-10' : p < 0.001 ? p.toExponential(1) : p.toFixed(3); }
function fmtTime(us) { return us >= 1e6 ? (us / 1e6).toFixed(3) + 's' : us >= 1e3 ? (us / 1e3).toPrecision(3) + 'ms' : us + 'us'; }

/* Abramowitz & Stegun 7.1.26 for erfc (absolute error < 1.5e-7), and the
   normal quantile by bisection on it: the z a test needs at level q. */
function erfc(x) {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * Math.exp(-x * x);
  return x >= 0 ? y : 2 - y;
}
function zFor(twoSided) {
  let lo = 0, hi = 40;
  for (let i = 0; i < 80; i++) {
    const mid = (lo + hi) / 2;
    if (erfc(mid / Math.SQRT2) > twoSided) lo = mid; else hi = mid;
  }
  return hi;
}

/* ------------------------------------------------------------ curves */
function sizeCanvas(c) {
  const r = window.devicePixelRatio || 1;
  const w = c.clientWidth, h = parseInt(c.getAttribute('height'), 10);
  c.width = Math.max(1, Math.floor(w * r));
  c.height = Math.floor(h * r);
  c.style.height = h + 'px';
  const g = c.getContext('2d');
  g.setTransform(r, 0, 0, r, 0, 0);
  return { g, w, h };
}

const BASE_COLOR = '#64748b', NEW_COLOR = '#ea580c';

/* A time as the filter language writes it, in microseconds (null if not). */
function parseTime(t, end, peak) {
  if (t === 'end') return end;
  if (t === 'peak') return peak;
  const m = /^([0-9.]+)(us|ms|s|m|h)?$/.exec(t);
  if (!m) return null;
  const f = { us: 1, ms: 1e3, s: 1e6, m: 6e7, h: 3.6e9 }[m[2] || 's'];
  return parseFloat(m[1]) * f;
}
/* A window [from, to] (a moment: from == to), or null. */
function parseWindow(t, end, peak) {
  if (!t) return null;
  const i = t.indexOf('-');
  if (i < 0) { const v = parseTime(t, end, peak); return v === null ? null : [v, v]; }
  const a = i ? parseTime(t.slice(0, i), end, peak) : 0, b = t.slice(i + 1) ? parseTime(t.slice(i + 1), end, peak) : end;
  return a === null || b === null ? null : [a, Math.min(b, end)];
}

function drawCurves(cv) {
  const { g, w, h } = sizeCanvas($('curves'));
  g.clearRect(0, 0, w, h);
  const sides = [['base', BASE_COLOR], ['new', NEW_COLOR]];
  const tmax = Math.max(cv.base.end_us, cv.new.end_us, 1);
  const ymax = Math.max(cv.base.peak, cv.new.peak, ...cv.base.filtered, ...cv.new.filtered, 1);
  const L = 70, B = 20, T = 8;
  g.strokeStyle = '#e2e5ea'; g.fillStyle = '#6b7280'; g.font = '11px sans-serif';
  for (let i = 0; i <= 4; i++) {
    const y = T + (h - T - B) * (1 - i / 4);
    g.beginPath(); g.moveTo(L, y); g.lineTo(w - 6, y); g.stroke();
    g.fillText(fmtBytes(ymax * i / 4), 4, y + 4);
  }
  for (let i = 0; i <= 4; i++) g.fillText(fmtTime(Math.round(tmax * i / 4)), L + (w - L - 40) * i / 4, h - 5);
  if (info && info.same_trace) {
    /* the two windows: shaded ranges, or lines at two moments */
    [[state.a, 'rgba(100,116,139,0.18)', BASE_COLOR], [state.b, 'rgba(234,88,12,0.16)', NEW_COLOR]].forEach(([wtxt, fill, line]) => {
      const r = parseWindow(wtxt, tmax, cv.new.peak_us);
      if (!r) return;
      const x0 = L + (w - L - 6) * (r[0] / tmax), x1 = L + (w - L - 6) * (r[1] / tmax);
      if (r[1] > r[0]) { g.fillStyle = fill; g.fillRect(x0, T, Math.max(1, x1 - x0), h - T - B); }
      else { g.strokeStyle = line; g.setLineDash([4, 3]); g.beginPath(); g.moveTo(x0, T); g.lineTo(x0, h - B); g.stroke(); g.setLineDash([]); }
    });
  }
  for (const [k, color] of sides) {
    const s = cv[k];
    g.strokeStyle = color; g.lineWidth = 2; g.beginPath();
    s.filtered.forEach((v, i) => {
      const x = L + (w - L - 6) * ((s.t0 + i * s.width) / tmax);
      const y = T + (h - T - B) * (1 - v / ymax);
      if (i) g.lineTo(x, y); else g.moveTo(x, y);
    });
    g.stroke();
  }
  $('curve-legend').innerHTML = '';
  for (const [k, color] of sides) {
    const span = document.createElement('span');
    span.style.color = color;
    span.textContent = (k === 'base' ? '— base ' : '   — new ') + 'peak ' + fmtBytes(cv[k].peak) + ' at ' + fmtTime(cv[k].peak_us);
    $('curve-legend').appendChild(span);
  }
}

/* ------------------------------------------------------------ differential flame graph */
function buildTree(d) {
  const root = { name: 'all', kids: new Map(), base: 0, new: 0, delta: 0, var: 0, w: 0, sig: null };
  for (const e of d.entries) {
    const parts = e.name.split(';');
    const w = Math.max(e.base, e.new);
    let n = root, path = '';
    const add = (x) => { x.base += e.base; x.new += e.new; x.delta += e.delta; x.var += e.se * e.se; x.w += w; };
    add(n);
    for (const p of parts) {
      path += (path ? ';' : '') + p;
      if (!n.kids.has(p)) n.kids.set(p, { name: p, path, kids: new Map(), base: 0, new: 0, delta: 0, var: 0, w: 0, sig: null });
      n = n.kids.get(p);
      add(n);
    }
    n.entry = e;
  }
  return root;
}

function countNodes(n) { let k = 1; for (const c of n.kids.values()) k += countNodes(c); return k; }

function colorOf(n, zcrit) {
  const z = n.var > 0 ? n.delta / Math.sqrt(n.var) : 0;
  if (Math.abs(z) < zcrit || n.delta === 0) return { fill: '#d7dbe1', z, noise: true };
  const s = Math.min(1, 0.35 + (Math.abs(z) - zcrit) / 6);
  const light = 88 - 45 * s;
  return { fill: n.delta > 0 ? `hsl(2, 78%, ${light}%)` : `hsl(218, 78%, ${light}%)`, z, noise: false };
}

function drawFlame(d) {
  const root = buildTree(d);
  const m = countNodes(root);
  const alpha = d.alpha || 0.05;
  /* a node is coloured only when |z| passes the Bonferroni bar over every
     node drawn: what is left grey is within the noise */
  const zcrit = zFor(alpha / m);
  let depth = 0;
  (function walk(n, k) { depth = Math.max(depth, k); for (const c of n.kids.values()) walk(c, k + 1); })(root, 0);
  const RH = 18, rows = Math.min(depth + 1, 60);
  $('dflame').setAttribute('height', String(Math.max(60, rows * RH + 4)));
  const { g, w } = sizeCanvas($('dflame'));
  flameNodes = [];
  g.font = '11px sans-serif';
  g.textBaseline = 'middle';
  const total = root.w || 1;
  (function draw(n, x, k, width) {
    if (k >= rows || width < 0.5) return;
    const c = colorOf(n, zcrit);
    g.fillStyle = c.fill;
    g.fillRect(x, k * RH, Math.max(0.5, width - 1), RH - 1);
    if (width > 30) {
      g.fillStyle = c.noise ? '#374151' : '#111827';
      g.save(); g.beginPath(); g.rect(x, k * RH, width - 2, RH); g.clip();
      g.fillText(n.name, x + 3, k * RH + RH / 2);
      g.restore();
    }
    flameNodes.push({ x, y: k * RH, w: width, h: RH, n, z: c.z, noise: c.noise });
    let cx = x;
    const kids = [...n.kids.values()].sort((a, b) => b.w - a.w);
    for (const ch of kids) {
      const cw = width * (ch.w / (n.w || 1));
      draw(ch, cx, k + 1, cw);
      cx += cw;
    }
  })(root, 0, 0, w * (root.w / total));
  const col = flameNodes.filter((r) => !r.noise && r.n !== root);
  window.MTC.flame = { nodes: flameNodes.length, zcrit, coloured: col.length,
    colouredPaths: col.map((r) => ({ path: r.n.path, grew: r.n.delta > 0, z: r.z })) };
}

function showTip(ev) {
  const r = $('dflame').getBoundingClientRect();
  const x = ev.clientX - r.left, y = ev.clientY - r.top;
  const hit = flameNodes.find((f) => x >= f.x && x < f.x + f.w && y >= f.y && y < f.y + f.h);
  const tip = $('tooltip');
  if (!hit) { tip.hidden = true; return; }
  const n = hit.n;
  const se = Math.sqrt(n.var);
  let text = n.name + '\nbase ' + fmt(n.base) + '  new ' + fmt(n.new) + '\nΔ ' + fmt(n.delta, true) +
    ' ± ' + fmt(se) + '   z ' + hit.z.toFixed(1) + (hit.noise ? '   (within the noise)' : hit.n.delta > 0 ? '   grew' : '   shrank');
  if (n.entry) text += '\nthis path: p(Holm) ' + (n.entry.tested ? fmtP(n.entry.p_adj) : '- (too few samples)');
  tip.textContent = text;
  tip.hidden = false;
  tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 420) + 'px';
  tip.style.top = ev.clientY + 14 + 'px';
}

/* ------------------------------------------------------------ table */
function drawTable(d) {
  const tb = $('dtable').tBodies[0];
  tb.textContent = '';
  d.entries.slice(0, 300).forEach((e, i) => {
    const tr = document.createElement('tr');
    tr.className = e.significant ? 'sig' : e.tested ? '' : 'noise';
    const cells = [i + 1, fmt(e.base), fmt(e.new), fmt(e.delta, true), fmt(e.se), e.z.toFixed(1),
      e.tested ? fmtP(e.p_adj) : '-', e.significant ? '*' : '', e.name];
    cells.forEach((v, k) => {
      const td = document.createElement('td');
      td.textContent = v;
      if (k === 8) td.className = 'name';
      if (k === 3 && e.significant) td.className = e.delta > 0 ? 'grew' : 'shrank';
      tr.appendChild(td);
    });
    tb.appendChild(tr);
  });
  const t = d.total;
  $('summary').textContent = 'total ' + fmt(t.base) + ' → ' + fmt(t.new) + ': Δ ' + fmt(t.delta, true) + ' ± ' + fmt(t.se) +
    ', z ' + t.z.toFixed(1) + ', p ' + fmtP(t.p) + '.  ' + d.n_significant + ' of ' + d.n_entries + ' ' +
    (d.key === 'path' ? 'call paths' : d.key === 'function' ? 'functions' : 'sites') +
    ' differ significantly (Holm at ' + (100 * d.alpha) + '% over ' + d.n_tested + ')';
}

/* ------------------------------------------------------------ loading */
async function refresh() {
  $('error').hidden = true;
  const live = state.by === 'live' || state.by === 'live_count';
  const common = { filter: state.filter, by: state.by, alpha: state.alpha, at: info.same_trace ? '' : state.at };
  if (info.same_trace) { common.a = state.a; common.b = state.b; }
  $('at-label').hidden = info.same_trace || !live;
  try {
    const [cv, flame, table] = await Promise.all([
      api('compare_curves', { filter: state.filter, n: 400 }),
      /* the flame graph: the largest changes (all of them in any normal trace) */
      api('compare', Object.assign({ key: 'path', sort: 'size', limit: 20000 }, common)),
      api('compare', Object.assign({ key: state.key, limit: 1000 }, common)),
    ]);
    last = { cv, flame };
    drawCurves(cv);
    drawFlame(flame);
    const t = table;
    drawTable(t);
    $('summary').textContent += '  (flame graph: ' + flame.n_significant + ' of ' + flame.n_entries + ' call paths differ' +
      (flame.entries.length < flame.n_entries ? '; the ' + flame.entries.length + ' largest changes drawn' : '') + ')';
    window.MTC.diff = { key: t.key, n_significant: t.n_significant, first: t.entries.length ? t.entries[0] : null };
  } catch (e) {
    $('error').textContent = e.message;
    $('error').hidden = false;
    window.MTC.error = e.message;
  }
  document.body.dataset.ready = '1';
}

function fillForm() {
  for (const k of ['by', 'at', 'key', 'filter', 'alpha']) $(k).value = state[k];
  $('wa').value = state.a; $('wb').value = state.b;
}

async function main() {
  window.MTC = {};
  readUrl();
  try {
    info = await api('compare_info', {});
  } catch (e) {
    $('error').textContent = 'not in compare mode: start it with memtrace view BASE NEW (' + e.message + ')';
    $('error').hidden = false;
    document.body.dataset.ready = '1';
    return;
  }
  if (info.same_trace) {
    $('win-a-label').hidden = $('win-b-label').hidden = false;
    if (!state.a) state.a = info.a;
    if (!state.b) state.b = info.b;
    $('title').textContent = info.new + ': window ' + (state.a || '?') + ' → ' + (state.b || '?');
  } else {
    $('title').textContent = info.base + ' → ' + info.new;
  }
  if (info.same_trace && /^[^-]*$/.test(state.a) && state.a && (state.by === 'alloc' || state.by === 'count')) state.by = 'live';
  fillForm();
  $('controls').addEventListener('submit', (ev) => {
    ev.preventDefault();
    for (const k of ['by', 'at', 'key', 'filter', 'alpha']) state[k] = $(k).value.trim();
    state.a = $('wa').value.trim(); state.b = $('wb').value.trim();
    writeUrl();
    refresh();
  });
  $('dflame').addEventListener('mousemove', showTip);
  $('dflame').addEventListener('mouseleave', () => { $('tooltip').hidden = true; });
  let timer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => { if (last) { drawCurves(last.cv); drawFlame(last.flame); } }, 100);
  });
  writeUrl();
  await refresh();
}
main();
