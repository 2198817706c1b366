#!/bin/sh
# pprof.sh - every fixture exported with 'memtrace pprof' is accepted by Go's
# own 'go tool pprof', with Go's heap sample types, one sample per distinct
# stack (pprof merges stacks whose locations print alike), inlined frames as several lines of one location, and totals equal
# to an independent awk replay of the reference dump (tests/analyze/expect.awk):
# alloc_space = all samples x bytes per sample, inuse_space = what is never
# collected (or live at --at peak). Output errors: an unwritable path, a
# full disk (/dev/full) named by their cause, exit 1.
set -u
: "${MT_BIN:=build/memtrace}" "${MT_FIXTURES:=tests/fixtures/memtrace}" "${MT_TMP:=/tmp}"
here=$(cd "$(dirname "$0")" && pwd)
expect=$here/../analyze/expect.awk
. tests/lib.sh
if ! command -v go >/dev/null 2>&1; then
    echo "FAIL: 'go' not found: install golang-go (scripts/install-deps.sh test)"
    exit 1
fi
# Go must not depend on the caller's environment (HOME may be unset in CI).
HOME=$MT_TMP/home GOCACHE=$MT_TMP/gocache GOPATH=$MT_TMP/gopath GOFLAGS= GO111MODULE=off
export HOME GOCACHE GOPATH GOFLAGS GO111MODULE
mkdir -p "$HOME" "$GOCACHE" "$GOPATH"
near() { # near WHAT GOT WANT (integers; sums of rounded per-stack values)
    if awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 1e-9 * (w < 0 ? -w : w) + 1) }'
    then pass "$1"; else fail "$1: got '$2', want '$3'"; fi
}
near_n() { # near_n WHAT GOT WANT N: within N/2 + 1 (N values rounded one by one)
    if awk -v g="$2" -v w="$3" -v n="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && w != "" && d <= n / 2 + 1) }'
    then pass "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}
raw_sum() { # raw_sum COLUMN RAWFILE: sum of a value column of the samples
    awk -v c="$1" '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
        s && /:/ { split($0, a, ":"); n = split(a[1], v, " "); t += v[c] } END { printf "%.0f\n", t }' "$2"
}
for ctf in "$MT_FIXTURES"/*.ctf; do
    name=$(basename "$ctf" .ctf)
    dump=$MT_TMP/$name.txt
    fixture_text "$name" > "$dump" || { fails=$((fails + 1)); continue; }
    awk -v what=totals -f "$expect" "$dump" > "$MT_TMP/want"
    want() { sed -n "s/^$1=//p" "$MT_TMP/want"; }
    out=$MT_TMP/$name.pb.gz
    if ! "$MT_BIN" pprof -o "$out" "$ctf" 2> "$MT_TMP/err"; then
        fail "$name: memtrace pprof failed: $(head -n 2 "$MT_TMP/err")"; continue
    fi
    if ! go tool pprof -symbolize=none -raw "$out" > "$MT_TMP/raw" 2> "$MT_TMP/goerr"; then
        fail "$name: go tool pprof rejects the profile: $(head -n 3 "$MT_TMP/goerr")"; continue
    fi
    pass "$name: accepted by go tool pprof"
    types=$(sed -n '/^Samples:/{n;p;q}' "$MT_TMP/raw" | tr -s ' ' | sed 's/^ //;s/ $//')
    [ "$types" = "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes" ] &&
        grep -q '^PeriodType: space bytes' "$MT_TMP/raw" &&
        pass "$name: Go heap sample types" || fail "$name: sample types '$types'"
    near "$name: alloc_space total" "$(raw_sum 2 "$MT_TMP/raw")" "$(want alloc_bytes)"
    near "$name: inuse_space total (never collected)" "$(raw_sum 4 "$MT_TMP/raw")" "$(want live_end_bytes)"
    # every allocation site keeps its function, file and line
    awk -v what=sites -f "$expect" "$dump" | awk -F '\t' '$3 != "" { print $2 " " $3 ":" $4 }' | sort -u > "$MT_TMP/sites"
    sed -n '/^Locations/,/^Mappings/p' "$MT_TMP/raw" | sed 's/^ *[0-9]*: 0x[0-9a-f]* M=[0-9]* //; s/ s=[0-9]*$//' |
        sed 's/^ *//' | sort -u > "$MT_TMP/locs"
    missing=$(comm -23 "$MT_TMP/sites" "$MT_TMP/locs" | head -n 3)
    [ -s "$MT_TMP/sites" ] && [ -z "$missing" ] &&
        pass "$name: every allocation site is a location with its function, file and line ($(wc -l < "$MT_TMP/sites"))" ||
        fail "$name: sites missing from the profile's locations: $missing"
    # synth_edge has names that differ only after a NUL byte, which C strings cannot keep apart
    [ "$name" = synth_edge ] && continue
    # object counts are rounded per stack: allow half an object per sample line
    # (synth_edge, with sizes up to 2^40 words, is 1e-5 off: not checked)
    lines=$(awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 } s && /:/ { c++ } END { print c + 0 }' "$MT_TMP/raw")
    near_n "$name: alloc_objects total" "$(raw_sum 1 "$MT_TMP/raw")" "$(want alloc_objects)" "$lines"
    near_n "$name: inuse_objects total (never collected)" "$(raw_sum 3 "$MT_TMP/raw")" "$(want live_end_objects)" "$lines"
    # (a stack deeper than 1024 frames keeps its 1023 innermost ones under
    # a [truncated] frame: stacks that differ only further out are one)
    # (each stack printed as one line, then counted by sort -u: building
    # the stacks as awk strings took minutes on upstream_lists_and_sets_v1)
    stacks=$(awk 'function done() { if (!n) return
                      if (nf <= 1024) { printf "s"; for (i = 1; i <= nf; i++) printf " %s|%s", ix[i], fr[i] }
                      else { printf "T"; for (i = nf - 1022; i <= nf; i++) printf " %s", fr[i] }
                      printf "\n" }
        /^ev .* alloc /{ done(); n = 1; nf = 0; next } /^ev /{ done(); n = 0; next }
        /^  bt /{ if ($4 == "?") l = $3; else { l = $0; sub(/^  bt [0-9]+ [^ ]+ /, "", l); sub(/:[0-9]+-[0-9]+ /, " ", l) }
                  fr[++nf] = l; ix[nf] = $2 }
        END { done() }' "$dump" | LC_ALL=C sort -u | wc -l)
    samples=$(awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 } s && /:/ { c++ } END { print c + 0 }' "$MT_TMP/raw")
    [ "$samples" = "$stacks" ] && pass "$name: one sample per distinct stack ($samples)" ||
        fail "$name: $samples samples for $stacks distinct stacks"
done
# inlined frames: a location of upstream_ocamlopt_v2 with several lines
ctf=$MT_FIXTURES/upstream_ocamlopt_v2.ctf
go tool pprof -symbolize=none -raw "$MT_TMP/upstream_ocamlopt_v2.pb.gz" 2>/dev/null |
    sed -n '/^Locations/,/^Mappings/p' | grep -q '^  *[A-Za-z_].* [^ ]*:[0-9]* s=' &&
    pass "inlined frames become extra lines of one location" || fail "no location with inlined lines"
# --at peak: inuse is the live memory at the peak
awk -v what=totals -f "$expect" "$MT_TMP/leak.txt" > "$MT_TMP/want"
"$MT_BIN" pprof --at peak -o "$MT_TMP/peak.pb.gz" "$MT_FIXTURES/leak.ctf" &&
    go tool pprof -symbolize=none -raw "$MT_TMP/peak.pb.gz" > "$MT_TMP/raw" 2>/dev/null
near "leak: --at peak inuse_space = peak live bytes" "$(raw_sum 4 "$MT_TMP/raw")" "$(sed -n 's/^peak_bytes=//p' "$MT_TMP/want")"
# --filter: only what is never collected
"$MT_BIN" pprof --filter 'collect:never' -o "$MT_TMP/f.pb.gz" "$MT_FIXTURES/leak.ctf" &&
    go tool pprof -symbolize=none -raw "$MT_TMP/f.pb.gz" > "$MT_TMP/raw" 2>/dev/null
near "leak: --filter collect:never alloc_space = bytes never collected" "$(raw_sum 2 "$MT_TMP/raw")" \
    "$(sed -n 's/^live_end_bytes=//p' "$MT_TMP/want")"
# pprof's own report agrees on the top allocation site and the total
go tool pprof -symbolize=none -top -sample_index=alloc_space "$MT_TMP/leak.pb.gz" > "$MT_TMP/top" 2>/dev/null
grep -q 'of 47.20MB total' "$MT_TMP/top" && grep -q 'Stdlib__List.init_aux' "$MT_TMP/top" &&
    pass "go tool pprof -top: total 47.20MB (49496000 bytes) and the top site" ||
    { fail "go tool pprof -top output unexpected"; head -n 8 "$MT_TMP/top"; }
# profile.proto's strings are UTF-8 (stricter decoders than go tool pprof's,
# as Parca's and Pyroscope's, refuse the whole profile otherwise): names
# with invalid bytes are written with U+FFFD
if "$MT_BUILD/tests/tools/gen_hostile" names "$MT_TMP/names.ctf" 2>/dev/null &&
    "$MT_BIN" pprof -o "$MT_TMP/names.pb.gz" "$MT_TMP/names.ctf" 2>/dev/null; then
    if python3 - "$MT_TMP/names.pb.gz" <<'PY'
import gzip, sys
b = gzip.open(sys.argv[1]).read()
def varint(i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
i = n = 0
while i < len(b):
    key, i = varint(i)
    if key & 7 == 0: _, i = varint(i)
    elif key & 7 == 2:
        l, i = varint(i)
        if key >> 3 == 6:
            b[i:i + l].decode("utf-8"); n += 1
        i += l
    else: sys.exit("unexpected wire type")
sys.exit(0 if n > 10 else "too few strings")
PY
    then pass "hostile names: every string of the profile is valid UTF-8"
    else fail "hostile names: the profile has strings that are not UTF-8"; fi
else
    fail "hostile names: profile not written"
fi
# the profile's time and duration (profile.proto fields 9 and 10, in ns):
# a trace started at 1700000000 s whose last event is 9 s in
# (gen_hostile nostack)
if "$MT_BUILD/tests/tools/gen_hostile" nostack "$MT_TMP/nine.ctf" 2>/dev/null &&
    "$MT_BIN" pprof -o "$MT_TMP/nine.pb.gz" "$MT_TMP/nine.ctf" 2>/dev/null; then
    got=$(python3 - "$MT_TMP/nine.pb.gz" <<'PY'
import gzip, sys
b = gzip.open(sys.argv[1]).read()
def varint(i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
i, f = 0, {}
while i < len(b):
    key, i = varint(i)
    if key & 7 == 0:
        v, i = varint(i); f[key >> 3] = v
    elif key & 7 == 2:
        l, i = varint(i); i += l
    else: sys.exit("unexpected wire type")
print(f.get(9), f.get(10))
PY
)
    check "pprof: time_nanos 1700000000 s and duration_nanos 9 s, in nanoseconds (got $got)" \
        test "$got" = "1700000000000000000 9000000000"
else
    fail "pprof of gen_hostile nostack: profile not written"
fi
# errors
"$MT_BIN" pprof -o "$MT_TMP/nodir/x.pb.gz" "$MT_FIXTURES/leak.ctf" 2> "$MT_TMP/err"
[ $? = 1 ] && grep -q 'memtrace pprof: .*nodir' "$MT_TMP/err" && pass "unwritable output: exit 1 with the path" ||
    fail "unwritable output: $(cat "$MT_TMP/err")"
"$MT_BIN" pprof "$MT_FIXTURES/leak.ctf" 2>/dev/null; [ $? = 2 ] && pass "missing -o: exit 2" || fail "missing -o"
# a full disk: the write's own cause, with the path (it said "No such file
# or directory", the errno of a later call)
"$MT_BIN" pprof -o /dev/full "$MT_FIXTURES/prodcons.ctf" 2> "$MT_TMP/err"
[ $? = 1 ] && grep -qx 'memtrace pprof: /dev/full: No space left on device' "$MT_TMP/err" &&
    pass "-o /dev/full: exit 1, 'No space left on device' with the path" ||
    fail "-o /dev/full: $(cat "$MT_TMP/err")"
"$MT_BIN" pprof -o - "$MT_FIXTURES/leak.ctf" 2> "$MT_TMP/err" >/dev/full
[ $? = 1 ] && grep -q 'No space left on device' "$MT_TMP/err" &&
    pass "-o - into /dev/full: exit 1, 'No space left on device'" || fail "-o - into /dev/full: $(cat "$MT_TMP/err")"
finish
