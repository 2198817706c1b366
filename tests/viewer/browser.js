/* browser.js - the headless Chromium every page test (and
   bench/viewer-page.js) drives: Debian's /usr/bin/chromium through
   playwright-core, with a persistent profile in PROFILE (a scratch
   directory), no network of its own, no first-run or sync, and the given
   viewport. Returns the browser context. */
'use strict';
const { chromium } = require('playwright-core');

async function launch(profile, viewport = { width: 1440, height: 900 }, extra = {}) {
  return chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport,
    ...extra,
  });
}

module.exports = { launch };
