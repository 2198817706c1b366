/* filter.js - the filter editor: the filter text (the engine's language,
   the same as `memtrace ... --filter` and the page URL) shown as a list of
   readable sentences with inputs, and turned back into text. */
'use strict';

MT.Filter = {};

/* Split filter text into clause strings (spaces separate clauses, except
   inside "quoted strings" and /regexes/). */
MT.Filter.split = function (text) {
  const out = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && /\s/.test(text[i])) i++;
    if (i >= n) break;
    let j = i, quote = null;
    const colon = () => text.lastIndexOf(':', j - 1) >= i;
    while (j < n) {
      const c = text[j];
      if (quote) {
        if (c === '\\') { j += 2; continue; }
        if (c === quote) quote = null;
        j++;
        continue;
      }
      if (/\s/.test(c)) break;
      if ((c === '"' || c === '/') && colon() && text[j - 1] === ':') quote = c;
      j++;
    }
    out.push(text.slice(i, j));
    i = j;
  }
  return out;
};

/* "105062us" -> "105.062ms": the same time, easier to read. */
MT.Filter.prettyTime = function (v) {
  const m = /^(\d+)(us|ms)$/.exec(v || '');
  if (!m) return v;
  const n = parseInt(m[1], 10);
  if (m[2] === 'us' && n >= 1000) return n >= 1e6 ? (n / 1e6) + 's' : (n / 1e3) + 'ms';
  if (m[2] === 'ms' && n >= 1000) return (n / 1e3) + 's';
  return v;
};

/* "A-B", "<=B", ">=A", "A" -> {a, b} (strings, '' when open). */
MT.Filter.parseRange = function (v) {
  let m, r;
  if ((m = /^<=?(.*)$/.exec(v))) r = { a: '', b: m[1] };
  else if ((m = /^>=?(.*)$/.exec(v))) r = { a: m[1], b: '' };
  else if ((m = /^([^-]*)-([^-]*)$/.exec(v))) r = { a: m[1], b: m[2] };
  else r = { a: v, b: v };
  return { a: MT.Filter.prettyTime(r.a), b: MT.Filter.prettyTime(r.b) };
};

MT.Filter.range = function (a, b) {
  a = (a || '').replace(/\s+/g, '');
  b = (b || '').replace(/\s+/g, '');
  if (a && b) return a === b ? a : a + '-' + b;
  if (a) return '>=' + a;
  if (b) return '<=' + b;
  return null;
};

MT.Filter.pattern = function (p) {
  p = p || '';
  if (!p) return null;
  if (/^\/.*\/$/.test(p) && p.length > 1) return p;
  if (/^[^\s"\/\\!]+$/.test(p)) return p;
  return '"' + p.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
};

MT.Filter.unpattern = function (v) {
  if (v.length >= 2 && v[0] === '"' && v[v.length - 1] === '"') {
    return v.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return v;
};

/* An exact-name regex for a function. */
MT.Filter.exact = function (name) {
  return '/^' + name.replace(/[.[\]()*+?{}|^$\\]/g, '\\$&').replace(/\//g, '\\/') + '$/';
};

/* One clause string -> a row object the editor shows. */
MT.Filter.toRow = function (clause) {
  let neg = false, s = clause;
  if (s[0] === '!') { neg = true; s = s.slice(1); }
  const k = s.indexOf(':');
  const kind = k > 0 ? s.slice(0, k) : '';
  const v = k > 0 ? s.slice(k + 1) : '';
  const r = MT.Filter.parseRange(v);
  switch (kind) {
    case 'alloc': case 'size': case 'lifetime':
      return { kind, neg, a: r.a, b: r.b };
    case 'live':
      if (v === 'peak' || v === 'end') return { kind, neg, mode: v };
      if (r.a === r.b) return { kind, neg, mode: 'at', a: r.a };
      return { kind, neg, mode: 'between', a: r.a, b: r.b };
    case 'collect':
      if (v === 'never') return { kind, neg, mode: 'never' };
      return { kind, neg, mode: 'between', a: r.a, b: r.b };
    case 'source':
      return { kind, neg, sources: v.split(',') };
    case 'kind':
      return { kind, neg, kinds: v.split(',') };
    case 'inside': case 'hide':
      return { kind, neg, pat: MT.Filter.unpattern(v) };
    default:
      return { kind: 'raw', text: clause };
  }
};

MT.Filter.rowText = function (r) {
  const neg = r.neg ? '!' : '';
  let v;
  switch (r.kind) {
    case 'alloc': case 'size': case 'lifetime':
      v = MT.Filter.range(r.a, r.b); break;
    case 'live':
      if (r.mode === 'peak' || r.mode === 'end') v = r.mode;
      else if (r.mode === 'at') v = (r.a || '').replace(/\s+/g, '') || null;
      else v = MT.Filter.range(r.a, r.b);
      break;
    case 'collect':
      v = r.mode === 'never' ? 'never' : MT.Filter.range(r.a, r.b); break;
    case 'source':
      v = (r.sources || []).filter(Boolean).join(',') || null; break;
    case 'kind':
      v = (r.kinds || []).filter(Boolean).join(',') || null; break;
    case 'inside': case 'hide':
      v = MT.Filter.pattern(r.pat); break;
    default:
      return (r.text || '').trim() || null;
  }
  return v === null ? null : neg + r.kind + ':' + v;
};

MT.Filter.rowsText = function (rows) {
  return rows.map(MT.Filter.rowText).filter(Boolean).join(' ');
};

/* What "+ add a condition" offers. */
MT.Filter.templates = [
  ['alloc', 'allocated between…', { kind: 'alloc', a: '', b: '' }],
  ['live', 'live at a time or in a range…', { kind: 'live', mode: 'between', a: '', b: '' }],
  ['livepeak', 'live at the peak', { kind: 'live', mode: 'peak' }],
  ['liveend', 'live at the end (never freed)', { kind: 'live', mode: 'end' }],
  ['collect', 'freed between…', { kind: 'collect', mode: 'between', a: '', b: '' }],
  ['size', 'of size…', { kind: 'size', a: '', b: '' }],
  ['lifetime', 'with a lifetime of…', { kind: 'lifetime', a: '', b: '' }],
  ['inside', 'inside a function…', { kind: 'inside', pat: '' }],
  ['notinside', 'not inside a function…', { kind: 'inside', neg: true, pat: '' }],
  ['kind', 'made by malloc or mmap…', { kind: 'kind', kinds: ['mmap'] }],
  ['source', 'from heap…', { kind: 'source', sources: ['external'] }],
  ['hide', 'hiding frames…', { kind: 'hide', pat: '' }],
];

/* The editor widget. onChange(text) whenever a row changes. */
MT.FilterEditor = class {
  constructor(box, onChange, onSubmit) {
    this.box = box;
    this.rows = [];
    this.onChange = onChange;
    this.onSubmit = onSubmit;
  }
  setText(text) {
    this.rows = MT.Filter.split(text || '').map(MT.Filter.toRow);
    this.render();
  }
  text() { return MT.Filter.rowsText(this.rows); }
  add(row) {
    this.rows.push(Object.assign({ neg: false }, JSON.parse(JSON.stringify(row))));
    this.render();
    this.changed();
    const inputs = this.box.querySelectorAll('.frow:last-child input');
    if (inputs.length) inputs[0].focus();
  }
  /* replace the first non-negated row of a kind (or add) */
  put(row) {
    const k = this.rows.findIndex((r) => r.kind === row.kind && !r.neg);
    if (k >= 0) this.rows[k] = Object.assign({ neg: false }, row); else this.rows.push(Object.assign({ neg: false }, row));
    this.render();
    this.changed();
  }
  changed() { this.onChange(this.text()); }
  render() {
    const box = MT.clear(this.box);
    if (!this.rows.length) {
      box.appendChild(MT.el('div', { class: 'filter-empty' }, 'Showing every allocation.'));
      return;
    }
    this.rows.forEach((r, idx) => box.appendChild(this.renderRow(r, idx)));
  }
  renderRow(r, idx) {
    const self = this;
    const input = (key, ph, cls) => {
      const e = MT.el('input', { value: r[key] || '', placeholder: ph, class: cls, spellcheck: 'false', 'aria-label': ph });
      e.addEventListener('input', () => { r[key] = e.value; self.changed(); });
      e.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') self.onSubmit(); });
      return e;
    };
    const select = (key, options, rerender) => {
      const e = MT.el('select');
      for (const [v, label] of options) e.appendChild(MT.el('option', { value: v, selected: r[key] === v }, label));
      e.addEventListener('change', () => { r[key] = e.value; self.changed(); if (rerender) self.render(); });
      return e;
    };
    const not = r.neg && r.kind !== 'inside' ? MT.el('b', null, 'not ') : null;
    const row = MT.el('div', { class: 'frow', 'data-kind': r.kind });
    const add = (...xs) => { for (const x of xs) if (x) row.appendChild(typeof x === 'string' ? document.createTextNode(x) : x); };
    switch (r.kind) {
      case 'alloc': add(not, 'allocated between', input('a', 'start'), 'and', input('b', 'end')); break;
      case 'live':
        add(not, 'live', select('mode', [['at', 'at'], ['between', 'somewhere between'], ['peak', 'at the peak'], ['end', 'at the end']], true));
        if (r.mode === 'at') add(input('a', 'time'));
        if (r.mode === 'between') add(input('a', 'start'), 'and', input('b', 'end'));
        break;
      case 'collect':
        add(not, select('mode', [['between', 'freed between'], ['never', 'never freed']], true));
        if (r.mode === 'between') add(input('a', 'start'), 'and', input('b', 'end'));
        break;
      case 'size': add(not, 'of size', input('a', 'min, e.g. 4k'), 'to', input('b', 'max, e.g. 1M')); break;
      case 'lifetime': add(not, 'living', input('a', 'min, e.g. 10ms'), 'to', input('b', 'max, e.g. 2s')); break;
      case 'inside': {
        const s = MT.el('select');
        s.appendChild(MT.el('option', { value: '0', selected: !r.neg }, 'inside'));
        s.appendChild(MT.el('option', { value: '1', selected: r.neg }, 'not inside'));
        s.addEventListener('change', () => { r.neg = s.value === '1'; self.changed(); });
        add(s, 'function', input('pat', 'name part or /regex/', 'wide'));
        break;
      }
      case 'hide': add(not, 'hiding frames', input('pat', 'name part or /regex/', 'wide'), '(keeping their cost)'); break;
      case 'source': {
        add(not, 'from');
        for (const src of ['minor', 'major', 'external']) {
          const cb = MT.el('input', { type: 'checkbox', checked: (r.sources || []).includes(src) });
          cb.style.width = 'auto';
          cb.addEventListener('change', () => {
            const set = new Set(r.sources || []);
            if (cb.checked) set.add(src); else set.delete(src);
            r.sources = ['minor', 'major', 'external'].filter((x) => set.has(x));
            self.changed();
          });
          add(MT.el('label', null, cb, src));
        }
        break;
      }
      case 'kind': {
        add(not, 'made by');
        for (const k of ['malloc', 'mmap']) {
          const cb = MT.el('input', { type: 'checkbox', checked: (r.kinds || []).includes(k) });
          cb.style.width = 'auto';
          cb.addEventListener('change', () => {
            const set = new Set(r.kinds || []);
            if (cb.checked) set.add(k); else set.delete(k);
            r.kinds = ['malloc', 'mmap'].filter((x) => set.has(x));
            self.changed();
          });
          add(MT.el('label', null, cb, k));
        }
        break;
      }
      default: add('clause', input('text', 'clause', 'wide'));
    }
    const x = MT.el('button', { class: 'x', title: 'Remove this condition', 'aria-label': 'Remove' }, '×');
    x.addEventListener('click', () => { self.rows.splice(idx, 1); self.render(); self.changed(); });
    row.appendChild(x);
    return row;
  }
};

/* Time ranges a filter names, for shading the memory chart:
   [{kind, t0, t1}] in seconds (t1 = t0 for an instant). */
MT.Filter.timeRanges = function (text, end, peak) {
  const secs = (s) => {
    const m = /^([0-9.]+)(us|ms|s|m|h)?$/.exec(s);
    if (!m) return null;
    const k = { us: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 }[m[2] || 's'];
    return parseFloat(m[1]) * k;
  };
  const out = [];
  for (const c of MT.Filter.split(text || '')) {
    const r = MT.Filter.toRow(c);
    if (r.neg || !['alloc', 'live', 'collect'].includes(r.kind)) continue;
    if (r.mode === 'peak') { out.push({ kind: 'live', t0: peak, t1: peak }); continue; }
    if (r.mode === 'end') { out.push({ kind: 'live', t0: end, t1: end }); continue; }
    if (r.mode === 'never') continue;
    const a = r.a ? secs(r.a) : 0, b = r.b ? secs(r.b) : end;
    if (a === null || b === null) continue;
    out.push({ kind: r.kind, t0: a, t1: r.mode === 'at' ? a : b });
  }
  return out;
};
