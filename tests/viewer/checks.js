/* checks.js - the checks of the page tests (tests/viewer/*.js), as
   tests/lib.sh has them for shell tests: a "PASS: what" or "FAIL: what
   (detail)" line per check, as tests/run.sh reads them, and the count of
   failures for the exit status. */
'use strict';

let failed = 0;
const pass = (m) => console.log('PASS: ' + m);
const fail = (m) => { failed++; console.log('FAIL: ' + m); };
const check = (m, ok, detail) => (ok ? pass(m) : fail(m + (detail !== undefined ? ' (' + detail + ')' : '')));
/* Ends the process: status 1 when a check failed. */
const finish = () => process.exit(failed ? 1 : 0);

module.exports = { pass, fail, check, finish };
