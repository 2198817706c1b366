/* util.js - shared helpers of the viewer page: formatting, DOM building,
   the JSON API client, the page state kept in the URL, frame colours. */
'use strict';

const MT = {};

MT.$ = (id) => document.getElementById(id);

/* el('div', {class: 'x', onclick: f}, child, 'text', ...) */
MT.el = function (tag, attrs, ...kids) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const k in attrs) {
      const v = attrs[k];
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : v);
    }
  }
  for (const c of kids) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
};

MT.clear = function (e) { while (e.firstChild) e.removeChild(e.firstChild); return e; };

MT.fmtBytes = function (b) {
  if (b === null || b === undefined || !isFinite(b)) return '–';
  const a = Math.abs(b);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0, v = a;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  const s = i === 0 ? String(Math.round(v)) : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
  return (b < 0 ? '-' : '') + s + ' ' + units[i];
};

/* A peak's estimate ({estimate, lo, hi, sd} of the server, docs/estimates.md):
   "20.2 MiB (95%: 17.9 MiB – 22.4 MiB)", the bytes alone when exact. */
MT.fmtPeak = function (p) {
  if (!p) return '–';
  const v = p.estimate !== undefined ? p.estimate : p.bytes;
  if (!(p.sd > 0)) return MT.fmtBytes(v);
  return MT.fmtBytes(v) + ' (95%: ' + MT.fmtBytes(p.lo) + ' – ' + MT.fmtBytes(p.hi) + ')';
};

MT.fmtCount = function (n) {
  if (n === null || n === undefined || !isFinite(n)) return '–';
  if (Math.abs(n) >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 1 : 2) + 'M';
  if (Math.abs(n) >= 1e4) return (n / 1e3).toFixed(n >= 1e5 ? 0 : 1) + 'k';
  /* 1,234 (toLocaleString is slow for the thousands of labels a view makes) */
  return String(Math.round(n)).replace(/\B(?=(\d{3})+$)/g, ',');
};

/* The page's measures (the API's metric names): which count blocks, and
   what a value of each is called. */
MT.metrics = ['alloc', 'count', 'temporary', 'temp_bytes', 'live', 'live_objects', 'lost', 'reachable'];
MT.countMetric = (m) => m === 'count' || m === 'temporary' || m === 'live_objects';
MT.metricLabel = function (metric) {
  return { alloc: 'bytes', count: 'blocks', temporary: 'temporary blocks', temp_bytes: 'bytes in temporary blocks',
    live: 'bytes live at the end', live_objects: 'blocks live at the end',
    lost: 'bytes lost at exit', reachable: 'bytes reachable at exit' }[metric || MT.state.metric] || 'bytes';
};
/* What the call-tree endpoints are asked for a state's measure: the leak
   verdicts' measures are the bytes live at the end of the blocks with that
   verdict (the filter's verdict: clause, as `top --by lost` does). */
MT.measureQuery = function (s) {
  const v = s.metric === 'lost' || s.metric === 'reachable' ? s.metric : null;
  if (!v) return { filter: s.filter, metric: s.metric === 'alloc' ? '' : s.metric };
  return { filter: (s.filter ? s.filter + ' ' : '') + 'verdict:' + v, metric: 'live' };
};

/* A value of the chosen metric: bytes, or a count. */
MT.fmtValue = function (v, metric) {
  return MT.countMetric(metric || MT.state.metric) ? MT.fmtCount(v) + ' blocks' : MT.fmtBytes(v);
};

MT.fmtTime = function (s) {
  if (s === null || s === undefined || !isFinite(s)) return '–';
  const a = Math.abs(s);
  if (a === 0) return '0 s';
  if (a < 1e-3) return (s * 1e6).toFixed(0) + ' µs';
  if (a < 1) return (s * 1e3).toFixed(a < 0.01 ? 2 : a < 0.1 ? 1 : 0) + ' ms';
  if (a < 120) return s.toFixed(a < 10 ? 2 : 1) + ' s';
  if (a < 7200) return (s / 60).toFixed(1) + ' min';
  return (s / 3600).toFixed(1) + ' h';
};

/* Seconds as a filter time: compact, exact enough (µs). */
MT.timeArg = function (s, span) {
  /* round to about 1/500 of what is on screen, never below a microsecond */
  const step = Math.max(1e-6, span ? Math.pow(10, Math.floor(Math.log10(span / 500))) : 1e-6);
  const v = Math.max(0, Math.round(s / step) * step);
  if (v < 1) return +(v * 1e3).toFixed(3) + 'ms';
  return +v.toFixed(6) + 's';
};

MT.fmtPct = function (x) {
  if (!isFinite(x)) return '–';
  const p = x * 100;
  return (p >= 10 ? p.toFixed(1) : p >= 1 ? p.toFixed(2) : p.toFixed(3)) + '%';
};

/* Relative half-width of the 95% interval of an estimate from k samples. */
MT.noise95 = function (k) { return k > 0 ? 1.96 / Math.sqrt(k) : 1; };
MT.fmtNoise = function (v, k) {
  if (!k) return '–';
  return '± ' + MT.fmtValue(v * MT.noise95(k)) + ' (' + Math.round(100 * MT.noise95(k)) + '%)';
};

/* ------------------------------------------------------------ API */
MT.inflight = 0;
MT.setBusy = function (d) {
  MT.inflight += d;
  const b = MT.$('busy');
  if (b) b.hidden = MT.inflight <= 0;
};

MT.api = async function (endpoint, params) {
  const q = new URLSearchParams();
  /* raw: stacks as recorded, allocation plumbing included (every endpoint) */
  if (MT.state.raw && endpoint !== 'info') q.set('raw', '1');
  for (const k in params || {}) {
    if (params[k] !== undefined && params[k] !== null && params[k] !== '') q.set(k, params[k]);
  }
  const qs = q.toString();
  MT.setBusy(1);
  try {
    let r;
    /* 503: the server's memory budget is in use by other requests; it says
       when to come back (Retry-After). A few tries, then the error shows. */
    for (let attempt = 0; ; attempt++) {
      r = await fetch('api/' + endpoint + (qs ? '?' + qs : ''));
      if (r.status !== 503 || attempt >= 4) break;
      const wait = Math.min(30, Math.max(1, parseInt(r.headers.get('Retry-After'), 10) || 2));
      await new Promise((ok) => setTimeout(ok, wait * 1000));
    }
    let body;
    try { body = await r.json(); } catch (e) { body = { error: 'bad answer from the server' }; }
    if (!r.ok) {
      const err = new Error(body.error || ('HTTP ' + r.status));
      err.status = r.status;
      throw err;
    }
    return body;
  } finally {
    MT.setBusy(-1);
  }
};

/* ------------------------------------------------------------ state in the URL */
/* view: flame|table|graph|hist|treemap; dir: sites|main; min: pruning fraction;
   zoom: function ids from the root to the zoomed frame; fn: focused function. */
MT.views = ['flame', 'table', 'graph', 'hist', 'treemap', 'leaks'];   /* the tabs, keys 1-6 */
MT.state = { filter: '', view: 'flame', dir: 'sites', min: 0.001, zoom: [], q: '', fn: null, metric: 'alloc', raw: false };

MT.readUrl = function () {
  const p = new URLSearchParams(location.search);
  const s = MT.state;
  s.filter = p.get('filter') || '';
  s.view = MT.views.includes(p.get('view')) ? p.get('view') : 'flame';
  s.dir = p.get('dir') === 'main' ? 'main' : 'sites';
  const m = parseFloat(p.get('min'));
  s.min = isFinite(m) && m >= 0 && m <= 0.5 ? m : 0.001;
  s.zoom = (p.get('zoom') || '').split('.').filter((x) => /^\d+$/.test(x)).map(Number);
  s.q = p.get('q') || '';
  const fn = p.get('fn');
  s.fn = fn && /^\d+$/.test(fn) ? Number(fn) : null;
  s.metric = MT.metrics.includes(p.get('metric')) ? p.get('metric') : 'alloc';
  s.raw = p.get('raw') === '1';
};

MT.writeUrl = function (push) {
  const s = MT.state;
  const p = new URLSearchParams();
  if (s.filter) p.set('filter', s.filter);
  if (s.view !== 'flame') p.set('view', s.view);
  if (s.dir !== 'sites') p.set('dir', s.dir);
  if (s.min !== 0.001) p.set('min', String(s.min));
  if (s.zoom.length) p.set('zoom', s.zoom.join('.'));
  if (s.q) p.set('q', s.q);
  if (s.fn !== null) p.set('fn', String(s.fn));
  if (s.metric !== 'alloc') p.set('metric', s.metric);
  if (s.raw) p.set('raw', '1');
  /* keep the filter readable in the address bar: alloc:1s-2s+live:end */
  const qs = p.toString().replace(/%(3A|2F|3E|3C|3D|2C|21|40)/g, (m, h) => String.fromCharCode(parseInt(h, 16)));
  const url = location.pathname + (qs ? '?' + qs : '');
  if (url === location.pathname + location.search) return;
  if (push) history.pushState(null, '', url); else history.replaceState(null, '', url);
};

/* ------------------------------------------------------------ colours */
MT.hash = function (s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
  return h >>> 0;
};

/* A display name cut to max characters in the middle: the start of its
 * scope, "…", and the function's own name, which is never cut (''
 * when even that does not fit). A name without a scope (C's) is cut at
 * its end instead: "parse_hea…" ('' below 2 characters). */
MT.fit = function (name, max) {
  if (name.length <= max) return name;
  /* the function's own name starts after the last "::" outside <> and () */
  let depth = 0, own = 0;
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === '<' || c === '(' || c === '[' || c === '{') depth++;
    else if ((c === '>' || c === ')' || c === ']' || c === '}') && depth > 0) depth--;
    else if (depth === 0 && c === ':' && name[i + 1] === ':') own = i + 2;
  }
  const tail = name.slice(own);
  if (tail.length > max) return own === 0 && max >= 2 ? name.slice(0, max - 1) + '…' : '';
  const scoped = '…' + name.slice(own - 2);  /* "…::operator[](…)" */
  if (own === 0 || scoped.length >= max) return tail.length + 3 <= max ? '…::' + tail : tail;
  return name.slice(0, max - scoped.length) + scoped;
};

/* What an empty view says: the filter left nothing, or there was nothing. */
MT.emptyText = function (byMetric = true) {
  if (MT.state.filter) return 'no allocation passes the filter';
  if (byMetric && (MT.state.metric === 'temporary' || MT.state.metric === 'temp_bytes'))
    return 'no temporary allocation (none freed within 1 ms)';
  if (byMetric && (MT.state.metric === 'live' || MT.state.metric === 'live_objects'))
    return 'no allocation still live at the end of the trace';
  if (byMetric && MT.state.metric === 'lost') {
    /* a zero from no sample: its bound, as stats, check and top --by lost give it */
    const up = typeof App !== 'undefined' && App.info ? App.info.unsampled_upper95_bytes : 0;
    return up > 0 ? 'no lost block sampled: the lost bytes are 0 B, at most ' + MT.fmtBytes(up) + ' (95%)'
                  : 'no block lost at exit';
  }
  return 'the trace holds no allocation';
};

/* Width of one character of a monospace font (CSS font shorthand). */
MT.charWidth = function (font) {
  MT._cw = MT._cw || {};
  if (!MT._cw[font]) {
    const c = (MT._cwc = MT._cwc || document.createElement('canvas')).getContext('2d');
    c.font = font;
    MT._cw[font] = c.measureText('0123456789').width / 10 || 7.2;
  }
  return MT._cw[font];
};

/* Names of elements marked data-fit (full name in data-full) cut to the
 * element's width with MT.fit: in the middle, keeping the own name. */
MT.fitNames = function (root) {
  for (const el of root.querySelectorAll('[data-fit]')) {
    const full = el.dataset.full, cs = getComputedStyle(el);
    const max = Math.floor(el.clientWidth / MT.charWidth(cs.fontSize + ' ' + cs.fontFamily)) - 1;
    if (max > 0 && full.length > max)
      el.textContent = MT.fit(full, max) || (el.dataset.alt && MT.fit(el.dataset.alt, max)) || full;
  }
};

/* Warm flame colours, stable per function name. */
MT.frameColor = function (name) {
  const h = MT.hash(name);
  const hue = 8 + (h % 42);            /* red .. orange-yellow */
  const sat = 70 + ((h >>> 8) % 20);
  const light = 58 + ((h >>> 16) % 14);
  return 'hsl(' + hue + ',' + sat + '%,' + light + '%)';
};

/* Canvas sized to its CSS box at the device's pixel ratio. */
MT.fitCanvas = function (canvas, cssHeight) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || canvas.parentNode.clientWidth;
  const h = cssHeight !== undefined ? cssHeight : canvas.clientHeight;
  if (cssHeight !== undefined) canvas.style.height = h + 'px';
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, w, h };
};

/* Tooltip near the mouse. rows: [[label, value], ...] */
MT.showTip = function (ev, title, loc, rows) {
  const t = MT.$('tooltip');
  MT.clear(t);
  t.appendChild(MT.el('div', { class: 'tt-name' }, title));
  if (loc) t.appendChild(MT.el('div', { class: 'tt-loc' }, loc));
  if (rows && rows.length) {
    const tb = MT.el('table');
    for (const r of rows) tb.appendChild(MT.el('tr', null, MT.el('td', null, r[0]), MT.el('td', null, r[1])));
    t.appendChild(tb);
  }
  t.hidden = false;
  const pad = 14, W = window.innerWidth, H = window.innerHeight;
  const r = t.getBoundingClientRect();
  let x = ev.clientX + pad, y = ev.clientY + pad;
  if (x + r.width > W - 4) x = Math.max(4, ev.clientX - r.width - pad);
  if (y + r.height > H - 4) y = Math.max(4, ev.clientY - r.height - pad);
  t.style.left = x + 'px';
  t.style.top = y + 'px';
};
MT.hideTip = function () { MT.$('tooltip').hidden = true; };

/* A compiled search (regex, else substring); null when empty. */
MT.searchRe = function (q) {
  if (!q) return null;
  try { return new RegExp(q, 'i'); } catch (e) {
    return new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  }
};
