/* leaks.js - the Leaks tab: the sites whose live memory keeps growing
   (/api/leaks, as `memtrace leaks`), each with its growth rate and error,
   what it holds at the end, and a sparkline of its live bytes over the
   whole trace with the tested window shaded. */
'use strict';

MT.Leaks = class {
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.all = false;
  }

  set(d) {
    const box = MT.clear(this.root);
    if (!d.available) {
      box.appendChild(MT.el('p', { class: 'leaks-note' }, d.reason));
      return;
    }
    const head = MT.el('div', { class: 'leaks-head' });
    head.appendChild(MT.el('span', null,
      `${d.n_suspects} suspect${d.n_suspects === 1 ? '' : 's'} among ${d.n_sites} sites ` +
      `(${d.n_tested} with enough samples to be tested): sites whose live memory grows from ` +
      `${MT.fmtTime(d.from)} to ${MT.fmtTime(d.to)} and is still held at the end.`));
    const cb = MT.el('input', { type: 'checkbox', id: 'leaks-all' });
    cb.checked = this.all;
    cb.addEventListener('change', () => { this.all = cb.checked; this.host.loadLeaks(); });
    head.appendChild(MT.el('label', { title: 'list every site with samples, not only suspects' }, cb, ' all sites'));
    box.appendChild(head);
    if (!d.sites.length) {
      box.appendChild(MT.el('p', { class: 'leaks-note' },
        'No site\'s live memory grows beyond the noise and stays held to the end.' +
        (d.min_growth > 0 ? ` At this sampling rate a leak would have to grow by about ${MT.fmtBytes(d.min_growth)}/s to be found here 80% of the time.` : '')));
      return;
    }
    const table = MT.el('table', { class: 'leaks-table' });
    table.appendChild(MT.el('thead', null, MT.el('tr', null,
      MT.el('th', { class: 'col-spark', title: 'live bytes over the whole trace; the tested window is shaded' }, 'Live bytes'),
      MT.el('th', null, 'Site'),
      MT.el('th', { class: 'num', title: 'least-squares slope of the site\'s live bytes over the window' }, 'Growth'),
      MT.el('th', { class: 'num', title: 'standard error of the growth' }, '±'),
      MT.el('th', { class: 'num' }, 'Live at end'),
      MT.el('th', { class: 'num', title: 'share of the site\'s bytes whose blocks outlive the window (Kaplan-Meier)' }, 'Kept'),
      MT.el('th', { class: 'num', title: 'p-value of "no growth", corrected for the sites tested (Holm)' }, 'p'),
      MT.el('th', null, 'Verdict'))));
    const body = MT.el('tbody');
    for (const s of d.sites) {
      const verdict = s.suspect ? 'suspect' : (s.tested && s.growth > 0 && s.p_adj < d.alpha ? 'given back' : '–');
      const where = s.file ? `${s.file}${s.line ? ':' + s.line : ''}` : '';
      const name = MT.el('button', { class: 'linkish', title: `${s.name}\n${where}\nclick: callers and callees` },
        s.short || s.name);
      if (s.id !== undefined) name.addEventListener('click', () => this.host.focusFunction(s.id, true));
      body.appendChild(MT.el('tr', { class: s.suspect ? 'suspect' : '' },
        MT.el('td', { class: 'col-spark' }, this.spark(s.curve, d.from / (d.to || 1))),
        MT.el('td', null, name, where ? MT.el('span', { class: 'loc' }, ' ' + where) : null),
        MT.el('td', { class: 'num' }, (s.growth >= 0 ? '+' : '−') + MT.fmtBytes(Math.abs(s.growth)) + '/s'),
        MT.el('td', { class: 'num' }, MT.fmtBytes(s.growth_se) + '/s'),
        MT.el('td', { class: 'num' }, MT.fmtBytes(s.live_end)),
        MT.el('td', { class: 'num' }, s.kept === null ? '–' : Math.round(100 * s.kept) + '%'),
        MT.el('td', { class: 'num' }, s.tested ? (s.p_adj < 1e-9 ? '<1e-9' : s.p_adj < 0.001 ? s.p_adj.toExponential(0) : s.p_adj.toFixed(3)) : 'untested'),
        MT.el('td', null, verdict)));
    }
    table.appendChild(body);
    box.appendChild(table);
  }

  /* An SVG sparkline of v (evenly spaced over the trace), the window from
     share `from` of the time axis to the end shaded. */
  spark(v, from) {
    const W = 160, H = 30, NS = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('width', W);
    svg.setAttribute('height', H);
    svg.setAttribute('role', 'img');
    const max = Math.max(1, ...v);
    svg.setAttribute('aria-label', `live bytes over time, highest ${MT.fmtBytes(max)}`);
    const shade = document.createElementNS(NS, 'rect');
    shade.setAttribute('x', (W * Math.min(Math.max(from, 0), 1)).toFixed(1));
    shade.setAttribute('y', 0);
    shade.setAttribute('width', (W * (1 - Math.min(Math.max(from, 0), 1))).toFixed(1));
    shade.setAttribute('height', H);
    shade.setAttribute('class', 'spark-window');
    svg.appendChild(shade);
    const pts = v.map((y, i) => `${(W * i / Math.max(1, v.length - 1)).toFixed(1)},${(H - 2 - (H - 4) * y / max).toFixed(1)}`);
    const line = document.createElementNS(NS, 'polyline');
    line.setAttribute('points', pts.join(' '));
    line.setAttribute('class', 'spark-line');
    svg.appendChild(line);
    return svg;
  }
};
