#!/bin/sh
# regex_limits.sh - filters the viewer cannot afford: a regex bomb that
# glibc's regcomp turned into a stack overflow (the whole viewer died), and
# regexes that backtrack exponentially on the trace's names (they ran for
# minutes, after the client left). Each gets a 400 that says which limit,
# quickly, and the viewer goes on serving. Also: the tree answer says
# whether the tree was cut at its node limit.
set -u
. "$(dirname "$0")/lib.inc"
command -v curl >/dev/null || { echo "curl missing"; exit 77; }
GEN=$MT_BUILD/tests/tools/gen_hostile
[ -x "$GEN" ] || { echo "FAIL: $GEN not built (make tests-build)"; exit 1; }
"$GEN" names "$MT_TMP/names.ctf" || exit 1

start_viewer "$MT_TMP/names.ctf" --port 0 || exit 1
base=${VIEW_URL%/}
get() { # get URL: status in $code, body in $MT_TMP/body
    code=$(curl -s -m 20 -o "$MT_TMP/body" -w '%{http_code}' "$1")
}
for q in 'inside:/(.*){1,32767}/' 'inside:/(a|a)*[^a]$/' 'hide:/(a*)*\1[^a]$/'; do
    enc=$(printf '%s' "$q" | od -An -tx1 -v | tr -d ' \n' | sed 's/../%&/g')
    for ep in tree hotspots curve; do
        get "$base/api/$ep?filter=$enc"
        if [ "$code" = 400 ] && grep -q '"error":"filter: .*\(too large\|backtracking steps\)' "$MT_TMP/body"; then
            pass "/api/$ep with $q -> 400: $(head -c 160 "$MT_TMP/body")"
        else
            fail "/api/$ep with $q -> $code: $(head -c 200 "$MT_TMP/body")"
        fi
    done
done
get "$base/api/tree?filter=inside:main"
if [ "$code" = 200 ] && grep -q '"truncated":false' "$MT_TMP/body"; then
    pass "the viewer still serves after them; the tree says it is not truncated"
else
    fail "after the hostile filters: $code $(head -c 200 "$MT_TMP/body")"
fi
stop_viewer
exit 0
