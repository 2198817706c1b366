#!/bin/sh
# cxx.sh - the viewer on a C++ program built at -O2 -g (examples/sessions):
# points of interest and flame graphs start at the program's functions, not
# std::allocator (and do with --raw); function lists carry short names beside
# the full ones; temporary blocks are a measure; compare mode skips the
# same plumbing as memtrace diff (and keeps it with raw=1); names cut to a width keep
# the function's own name (MT.fit of the page, run in node).
set -u
. "$(dirname "$0")/lib.inc"
# traces are recorded with the plain build's recorder (see tests/present/cxx.sh)
case ${MT_STAGE:-plain} in
plain) REC=$MT_BIN ;;
asan) REC=build/memtrace; [ -x "$REC" ] || exit 77 ;;
*) exit 77 ;;
esac
command -v curl >/dev/null || { echo "curl missing"; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
S=$MT_BUILD/examples/sessions
[ -x "$S" ] || { echo "FAIL: $S not built (make examples)"; exit 1; }
"$REC" run --interval 16k -o "$MT_TMP/s.ctf" -- "$S" >/dev/null 2>&1 || { echo "FAIL: sessions ran"; exit 1; }

get() { curl -s -o "$MT_TMP/body" -w '%{http_code}' "$VIEW_URL$1"; }
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$MT_TMP/body"; }
std_re='^(std::|operator new|__gnu_cxx::)|^[^(]* std::'

start_viewer "$MT_TMP/s.ctf" --port 0 || exit 1
check "hotspots: 200" test "$(get api/hotspots)" = 200
first=$(json 'j["sites"][0]["name"]')
check "hotspots: the first site is the program's render_reply (got '$first')" test "$first" = "render_reply"
n=$(json 'sum(1 for s in j["sites"] if __import__("re").search(r"'"$std_re"'", s["name"]))')
check "hotspots: no site is allocation plumbing ($n are)" test "$n" = 0
check "tree: 200" test "$(get 'api/tree?dir=sites')" = 200
roots=$(json '",".join(j["funcs"]["name"][j["nodes"]["f"][i]] for i in range(1, len(j["nodes"]["p"])) if j["nodes"]["p"][i] == 0)')
check "flame from the sites: no root is plumbing ($roots)" sh -c "! echo '$roots' | tr , '\n' | grep -Eq '$std_re'"
check "tree: funcs.short beside funcs.name" \
    test "$(json 'len(j["funcs"]["short"]) == len(j["funcs"]["name"]) > 0')" = True
short=$(json '[s for n, s in zip(j["funcs"]["name"], j["funcs"]["short"]) if n.startswith("demo::Registry::open_session(")][0]')
check "tree: open_session's short name is demo::Registry::open_session(…) (got '$short')" \
    test "$short" = "demo::Registry::open_session(…)"
get api/hotspots >/dev/null
id=$(json '[s["id"] for s in j["sites"] if s["name"].startswith("demo::Registry::open_session(")][0]')
check "function: 200" test "$(get "api/function?id=$id")" = 200
via=$(json '",".join(v["short"] for v in j["via"])')
check "function: open_session allocates through std::vector<std::string>::resize(…) ($via)" \
    sh -c "echo '$via' | tr , '\n' | grep -qx 'std::vector<std::string>::resize(…)'"
check "function: and through std::make_unique ($via)" \
    sh -c "echo '$via' | grep -q 'std::make_unique<demo::Session>()'"
check "hotspots by temporary: 200" test "$(get 'api/hotspots?metric=temporary')" = 200
tfirst=$(json 'j["sites"][0]["name"]')
check "hotspots by temporary: short-lived strings first (got '$tfirst')" \
    sh -c "echo '$tfirst' | grep -Eq '^(log_event|render_reply)$'"
check "hotspots by temp_bytes: 200" test "$(get 'api/hotspots?metric=temp_bytes')" = 200
check "hotspots raw=1: 200" test "$(get 'api/hotspots?raw=1')" = 200
first=$(json 'j["sites"][0]["name"]')
check "hotspots raw=1: stacks as recorded, the first site is plumbing (got '$first')" \
    sh -c "echo '$first' | grep -Eq '$std_re'"
get api/hotspots >/dev/null
first=$(json 'j["sites"][0]["name"]')
check "hotspots after raw=1: the default sites again (got '$first')" test "$first" = "render_reply"
check "raw=2: 400" test "$(get 'api/hotspots?raw=2')" = 400
check "raw=2: the error names the parameter" grep -q 'parameter raw' "$MT_TMP/body"
a=$(get 'api/stats' >/dev/null; json 'j["total"]["alloc_bytes"]')
b=$(get 'api/stats?raw=1' >/dev/null; json 'j["total"]["alloc_bytes"]')
check "raw=1 changes no total ($a, $b)" test -n "$a" -a "$a" = "$b"
stop_viewer

start_viewer "$MT_TMP/s.ctf" --port 0 --raw || exit 1
get api/hotspots >/dev/null
first=$(json 'j["sites"][0]["name"]')
check "view --raw: the first site is plumbing (got '$first')" sh -c "echo '$first' | grep -Eq '$std_re'"
stop_viewer

printf 'render_reply\n' >"$MT_TMP/pl"
start_viewer "$MT_TMP/s.ctf" --port 0 --plumbing "$MT_TMP/pl" || exit 1
get api/hotspots >/dev/null
n=$(json 'sum(1 for s in j["sites"] if s["name"] == "render_reply")')
check "view --plumbing FILE: render_reply is no site any more" test "$n" = 0
stop_viewer
"$MT_BIN" view --port 0 --plumbing "$MT_TMP/missing" "$MT_TMP/s.ctf" >/dev/null 2>"$MT_TMP/err"; rc=$?
check "view --plumbing with a missing file: exit 2 (got $rc)" test "$rc" = 2
check "view --plumbing with a missing file: says which" grep -q 'missing: No such file' "$MT_TMP/err"

# compare mode: the sites are those of memtrace diff, plumbing skipped
"$REC" run --interval 16k -o "$MT_TMP/s2.ctf" -- "$S" >/dev/null 2>&1 || fail "sessions ran again"
start_viewer "$MT_TMP/s.ctf" "$MT_TMP/s2.ctf" --port 0 || exit 1
VIEW_URL=${VIEW_URL%compare.html}
check "compare by site: 200" test "$(get 'api/compare?key=site&limit=100')" = 200
n=$(json 'sum(1 for e in j["entries"] if __import__("re").search(r"'"$std_re"'", e["function"]))')
check "compare by site: no site is allocation plumbing ($n are)" test "$n" = 0
"$MT_BIN" diff --key site --all "$MT_TMP/s.ctf" "$MT_TMP/s2.ctf" >"$MT_TMP/diff" 2>&1
# (the table's rows: an indented rank, then the columns; not the summary
# line "1 of 9 sites differ significantly", which starts with a number too)
nd=$(grep -cE '^ +[0-9]+ {2,}' "$MT_TMP/diff")
ne=$(json 'j["n_entries"]')
check "compare by site: as many sites as memtrace diff ($ne, $nd)" test "$ne" = "$nd"
check "compare raw=1: 200" test "$(get 'api/compare?key=site&raw=1&limit=100')" = 200
n=$(json 'sum(1 for e in j["entries"] if __import__("re").search(r"'"$std_re"'", e["function"]))')
check "compare raw=1: the stacks as recorded, plumbing sites ($n)" test "$n" -gt 0
stop_viewer

# the page itself in headless Chromium, with an empty trace beside
here=$(cd "$(dirname "$0")" && pwd)
if [ -x /usr/bin/chromium ] && command -v node >/dev/null && [ -d "$here/node_modules/playwright-core" ]; then
    "$REC" run -o "$MT_TMP/empty.ctf" -- /bin/true >/dev/null 2>&1
    start_viewer "$MT_TMP/s.ctf" --port 0 -q || exit 1
    url1=$VIEW_URL
    start_viewer "$MT_TMP/empty.ctf" --port 0 -q || exit 1
    profile=$(mktemp -d "$MT_TMP/chromium-profile.XXXXXX")
    (cd "$here" && timeout 180 node cxx_page.js "$url1" "$VIEW_URL" "$profile") || fails=$((fails + 1))
fi

# MT.fit: shortening in the middle, never inside the function's own name;
# a C name (no scope) too long for its box is cut at its end with "…"
# (a flame graph box is not left blank)
if command -v node >/dev/null; then
    node -e '
const src = require("fs").readFileSync(process.argv[1], "utf8");
const m = src.match(/MT\.fit = function[\s\S]*?\n};/);
if (!m) { console.log("FAIL: MT.fit not found in util.js"); process.exit(0); }
const MT = {}; eval(m[0]);
const name = "std::map<int, std::string>::operator[](…)";
const cases = [[60, name], [30, "std::map<int, …::operator[](…)"], [16, "…::operator[](…)"],
  [13, "operator[](…)"], [10, ""], [8, "parse_it"], [5, "pars…"], [2, "p…"], [1, ""]];
for (const [w, want] of cases) {
  const got = MT.fit(w <= 8 ? "parse_it" : name, w);
  const ok = got === want && got.length <= w;
  console.log((ok ? "PASS" : "FAIL") + ": MT.fit(" + w + ") = \"" + got + "\"" + (ok ? "" : " want \"" + want + "\""));
}' viewer/web/util.js | tee "$MT_TMP/fit"
    grep -q FAIL "$MT_TMP/fit" && fails=$((fails + 1))
fi
finish
