#!/bin/sh
# hostile-regex.sh - a regex filter over the engine's limits gets 400 with
# the engine's message and the viewer keeps serving: regex bombs that
# overflow the stack or eat all memory when compiled, from every endpoint
# (a link to the page or any page's <img> can send one), and, on a trace
# with names of thousands of 'a's, backtracking regexes stopped at their
# limit when applied, also on a folded trace. A dead or hung server fails
# the test. Needs the
# engine's bounded regexes (PCRE2 with limits, mt_select_err): with glibc
# regcomp the first bomb kills the server.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "curl missing"; exit 77; }

alive() { # alive WHAT: the process is there and answers at once
    code=$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "${VIEW_URL}api/info")
    if kill -0 "$VIEW_PID" 2>/dev/null && [ "$code" = 200 ]; then
        pass "server alive after $1"
    else
        fail "server dead or hung after $1 (info -> $code)"
        exit 1
    fi
}
bad() { # bad ENDPOINT FILTER: 400 with an "error" naming the regex, within 20 s
    got=$(curl -s -o "$MT_TMP/body" --max-time 20 -w '%{http_code} %{time_total}' -G \
          --data-urlencode "filter=$2" "${VIEW_URL}api/$1")
    set -- "$1" "$2" $got
    if [ "$3" = 400 ] && grep -q '"error":"filter: .*regular expression' "$MT_TMP/body"; then
        pass "$1 with $2 -> 400 in $4 s: $(head -c 160 "$MT_TMP/body")"
    else
        fail "$1 with $2 -> $3 after $4 s: $(head -c 160 "$MT_TMP/body" 2>/dev/null)"
    fi
}

start_viewer "$MT_FIXTURES/prodcons.ctf" --port 0 -q || exit 1
for re in '(.*){1,32767}' '(a{32767}){32767}'; do
    for ep in tree filter hotspots; do
        bad "$ep" "inside:/$re/"
        alive "$ep with inside:/$re/"
    done
    bad curve "hide:/$re/"
    alive "curve with hide:/$re/"
done
stop_viewer

# backtracking at match time, on long names (the engine's test generator)
gen=$MT_BUILD/tests/tools/gen_hostile
if [ ! -x "$gen" ]; then
    echo "($gen not built: regexes at match time not tested)"
    exit 0
fi
ASAN_OPTIONS=detect_leaks=0 "$gen" names "$MT_TMP/names.ctf" || { fail "gen_hostile names"; exit 1; }
# whole model, and folded (big traces: the regex is applied while the trace
# is read again for the filter)
for args in "" "--fold-above 0"; do
    # shellcheck disable=SC2086
    start_viewer "$MT_TMP/names.ctf" --port 0 -q $args || exit 1
    for re in '(a|a)*[^a]$' '(a*)*\1[^a]$'; do
        bad tree "inside:/$re/"
        alive "tree with inside:/$re/${args:+ ($args)}"
    done
    stop_viewer
done
