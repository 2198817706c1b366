/* leaks_page.js - the viewer's Leaks tab in headless Chromium (run by
   tests/viewer/leaks.sh). Usage:
     node leaks_page.js LEAK_URL HTML_URL PROFILE_DIR LEAKS_JSON ALL_JSON
   LEAK_URL serves tests/fixtures/memtrace/leak.ctf, HTML_URL a trace whose
   function names are HTML markup; LEAKS_JSON and ALL_JSON are
   `memtrace leaks --json` of leak.ctf, suspects and every site. */
'use strict';
const fs = require('fs');
const { launch } = require('./browser.js');
const { check, fail, finish } = require('./checks.js');

const [leak, html, profile, leaksJson, allJson, verdicts, verdictsStats] = process.argv.slice(2);
const vstats = JSON.parse(fs.readFileSync(verdictsStats, 'utf8'));
const cli = JSON.parse(fs.readFileSync(leaksJson, 'utf8'));
const cliAll = JSON.parse(fs.readFileSync(allJson, 'utf8'));
const rows = (page) => page.evaluate(() => Array.from(document.querySelectorAll('#leaks tbody tr')).map((tr) => ({
  name: tr.querySelector('button').textContent, suspect: tr.classList.contains('suspect'),
  points: ((tr.querySelector('polyline') || { getAttribute: () => '' }).getAttribute('points') || '').split(' ').filter(Boolean).length,
  verdict: tr.lastChild.textContent,
})));

(async () => {
  const ctx = await launch(profile, { width: 1440, height: 900 });
  const errors = [];
  let step = 'start';
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

    step = 'open with key 6';
    await page.goto(leak);
    await page.waitForSelector('#flame');
    await page.keyboard.press('6');
    await page.waitForSelector('#leaks tbody tr', { timeout: 20000 });
    check('key 6 opens the Leaks tab', new URL(page.url()).searchParams.get('view') === 'leaks');
    let r = await rows(page);
    const want = cli.sites.map((s) => s.short).sort();
    check('the suspects are those of memtrace leaks --json (' + want.join(', ') + ')',
      JSON.stringify(r.map((x) => x.name).sort()) === JSON.stringify(want), r.map((x) => x.name).join(', '));
    check('each suspect row is marked and says so', r.every((x) => x.suspect && x.verdict === 'suspect'));
    check('each has a sparkline of its live bytes (120 points)', r.every((x) => x.points === 120), r.map((x) => x.points).join(','));
    const head = await page.textContent('#leaks .leaks-head');
    check('the header counts suspects and sites as the CLI does', head.includes(`${cli.n_suspects} suspects among ${cli.n_sites} sites`), head);

    step = 'all sites';
    await page.check('#leaks-all');
    await page.waitForFunction((n) => document.querySelectorAll('#leaks tbody tr').length === n, cliAll.sites.length, { timeout: 20000 });
    r = await rows(page);
    check('"all sites" lists every site (' + cliAll.sites.length + ')', r.length === cliAll.sites.length);
    check('sites that are not suspects are not marked', r.filter((x) => !x.suspect).length === cliAll.sites.length - cli.n_suspects);

    step = 'focus a site';
    const first = cli.sites[0].short;
    await page.click(`#leaks tbody button:text-is("${first}")`);
    await page.waitForFunction(() => new URL(location.href).searchParams.get('view') === 'table', null, { timeout: 20000 });
    check('a suspect\'s name leads to its callers and callees (the table, focused)', new URL(page.url()).searchParams.get('fn') !== null);

    step = 'filter';
    const u = new URL(leak);
    u.searchParams.set('view', 'leaks');
    u.searchParams.set('filter', 'size:<20');
    await page.goto(u.toString());
    await page.waitForSelector('#leaks .leaks-head', { timeout: 20000 });
    const api = await page.evaluate(async () => (await fetch('api/leaks?filter=' + encodeURIComponent('size:<20'))).json());
    const head2 = await page.textContent('#leaks .leaks-head');
    check('the filter applies (' + api.n_sites + ' sites of blocks under 20 bytes)', head2.includes(`among ${api.n_sites} sites`), head2);

    step = 'hostile names';
    const h = new URL(html);
    h.searchParams.set('view', 'leaks');
    await page.goto(h.toString());
    await page.waitForSelector('#leaks .leaks-head', { timeout: 20000 });
    await page.check('#leaks-all');
    await page.waitForFunction(() => document.querySelectorAll('#leaks tbody tr').length > 0, null, { timeout: 20000 });
    const markup = await page.evaluate(() => ({
      tags: document.querySelectorAll('#leaks img, #leaks script, #leaks i, #leaks div div').length,
      text: document.querySelector('#leaks tbody').textContent,
      ran: window.__pwned || false,
    }));
    check('names that are HTML markup are shown as text', markup.tags === 0 && markup.text.includes('<') && !markup.ran, JSON.stringify(markup).slice(0, 200));

    step = 'verdict measures';
    await page.goto(leak);
    await page.waitForSelector('#flame');
    const hiddenNoVerdicts = await page.evaluate(() => Array.from(document.querySelectorAll('#metric option[data-verdicts]')).every((o) => o.hidden));
    check('a trace without verdicts: no lost/reachable measures offered', hiddenNoVerdicts);
    await page.goto(verdicts);
    await page.waitForFunction(() => typeof App !== 'undefined' && App.info && App.tree, null, { timeout: 20000 });
    const shown = await page.evaluate(() => Array.from(document.querySelectorAll('#metric option[data-verdicts]')).map((o) => !o.hidden));
    check('a trace with verdicts: the Measure menu offers bytes lost and reachable at exit', shown.length === 2 && shown.every(Boolean));
    for (const [m, key] of [['lost', 'lost_bytes'], ['reachable', 'reachable_bytes']]) {
      await page.selectOption('#metric', m);
      await page.waitForFunction((m) => App.tree && App.treeKey && App.treeKey.includes('verdict:' + m), m, { timeout: 20000 });
      const total = await page.evaluate(() => App.tree.v[0]);
      check(`measure ${m}: the flame graph weighs ${vstats[key]} bytes, as stats counts (${total})`, Math.abs(total - vstats[key]) < 1);
    }

    check('no script errors', errors.length === 0, errors.join(' | '));
  } catch (e) {
    fail('aborted at step "' + step + '": ' + e.message.split('\n')[0]);
  } finally {
    await ctx.close();
  }
  finish();
})();
