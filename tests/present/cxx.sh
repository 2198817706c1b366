#!/bin/sh
# cxx.sh - C++ programs built at -O2 -g with libstdc++ (examples/sessions.cc
# and tests/record/progs/cxx.cc): allocation sites are the program's own
# functions, not std::allocator; names are short and readable; totals are
# the same with and without --raw; --plumbing extends the list; temporary
# blocks match a count made from the dump; the report wording fixes of
# stats and info.
set -u
: "${MT_BUILD:=build}" "${MT_BIN:=build/memtrace}" "${MT_TMP:=/tmp}"
# Traces are recorded with the plain build's recorder (an ASan-built
# recorder cannot be preloaded into these programs); the reports run on
# the stage's own build.
case ${MT_STAGE:-plain} in
plain) REC=$MT_BIN ;;
asan) REC=build/memtrace; [ -x "$REC" ] || exit 77 ;;
*) exit 77 ;;
esac
command -v g++ >/dev/null || exit 77
T=$MT_TMP
. tests/lib.sh
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

S=$MT_BUILD/examples/sessions
[ -x "$S" ] || { echo "FAIL: $S not built (make examples)"; exit 1; }
"$REC" run --interval 16k -o "$T/s.ctf" -- "$S" >/dev/null 2>"$T/run.err" ||
    { echo "FAIL: sessions ran under the recorder"; cat "$T/run.err"; exit 1; }
g++ -O2 -g -o "$T/cxx" tests/record/progs/cxx.cc -lpthread || { echo "FAIL: cxx.cc builds"; exit 1; }
"$REC" run --interval 4k -o "$T/cxx.ctf" -- "$T/cxx" >/dev/null 2>&1 || { echo "FAIL: cxx ran"; exit 1; }

# --- the first site named is the user's function --------------------------
"$MT_BIN" top --json -n 0 "$T/s.ctf" >"$T/top.json"
"$MT_BIN" top --json -n 0 --raw "$T/s.ctf" >"$T/raw.json"
plumbing_re='^(std::|__gnu_cxx::|operator new|__cxa_)|^[^(]* (std::|__gnu_cxx::)'
first=$(json "$T/top.json" 'd["sites"][0]["site"]["function"]')
check "sessions: the biggest site is the program's render_reply (got '$first')" \
    test "$first" = "render_reply"
n_std=$(json "$T/top.json" 'sum(1 for s in d["sites"] if __import__("re").search(r"'"$plumbing_re"'", s["site"]["function"]))')
check "sessions: no site is allocation plumbing ($n_std are)" test "$n_std" = 0
raw_first=$(json "$T/raw.json" 'd["sites"][0]["site"]["function"]')
check "sessions --raw: sites are the innermost frames, plumbing included (got '$raw_first')" \
    sh -c "echo '$raw_first' | grep -Eq '$plumbing_re'"
live_first=$("$MT_BIN" top --by live --json "$T/s.ctf" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sites"][0]["site"]["function"])')
check "sessions: the leak's site is Registry::open_session (got '$live_first')" \
    sh -c "echo '$live_first' | grep -q '^demo::Registry::open_session('"
via=$(json "$T/top.json" '[s for s in d["sites"] if s["site"]["line"] == 39][0]["via"][0]["short"]')
check "sessions: open_session:39 is reached via std::vector<std::string>::resize (got '$via')" \
    test "$via" = "std::vector<std::string>::resize(…)"
"$MT_BIN" top -n 5 "$T/s.ctf" >"$T/top.txt"
check "sessions: top prints the plumbing as context ('via ...')" \
    grep -q '^ *via std::vector<std::string>::resize(…) 100%$' "$T/top.txt"

# --- totals are unchanged -------------------------------------------------
for f in s cxx; do
    for w in alloc_bytes live_bytes samples allocs temp_objects; do
        a=$("$MT_BIN" top --json "$T/$f.ctf" | python3 -c "import json,sys; print(json.load(sys.stdin)['total']['$w'])")
        b=$("$MT_BIN" top --json --raw "$T/$f.ctf" | python3 -c "import json,sys; print(json.load(sys.stdin)['total']['$w'])")
        check "$f: total $w the same with and without --raw ($a, $b)" test -n "$a" -a "$a" = "$b"
    done
    sa=$(json "$T/top.json" 'round(sum(s["cost"]["alloc_bytes"] for s in d["sites"]))')
    a=$("$MT_BIN" folded "$T/$f.ctf" | awk '{ s += $NF } END { printf "%.0f", s }')
    b=$("$MT_BIN" folded --raw "$T/$f.ctf" | awk '{ s += $NF } END { printf "%.0f", s }')
    check "$f: folded weights the same with and without --raw ($a, $b)" test "$a" = "$b"
done
sa=$(json "$T/top.json" 'round(sum(s["cost"]["alloc_bytes"] for s in d["sites"]))')
ta=$(json "$T/top.json" 'round(d["total"]["alloc_bytes"])')
check "sessions: the sites add up to the total ($sa, $ta)" test "$sa" = "$ta"
# (a stack may pass through std::__new_allocator<T>::construct on its way
# to an allocation elsewhere, e.g. std::thread's stack and TLS: only the
# innermost frame, the site, must never be plumbing)
check "folded: no stack ends in std::__new_allocator by default" \
    sh -c "! '$MT_BIN' folded '$T/s.ctf' | grep -q ';std::__new_allocator[^;]* [0-9]*\$'"
check "folded --raw: std::__new_allocator frames are there" \
    sh -c "'$MT_BIN' folded --raw '$T/s.ctf' | grep -q 'std::__new_allocator<'"

# top reads only the innermost codes of each stack (a shallow model) and
# loads whole stacks when a plumbing run reaches that cut: the report is the
# one made from the whole stacks (a filter on stacks forces those)
printf '*\n!main\n' >"$T/all.pl"
for f in s cxx; do
    for pl in "" "$T/all.pl"; do
        set -- ${pl:+--plumbing "$pl"}
        "$MT_BIN" top -n 0 "$@" "$T/$f.ctf" >"$T/shallow.txt"
        "$MT_BIN" top -n 0 "$@" --filter 'hide:no_such_function_anywhere' "$T/$f.ctf" | grep -v '^filter:' >"$T/whole.txt"
        check "$f: top is the same from the innermost codes as from whole stacks${pl:+ (every function but main is plumbing)}" \
            cmp -s "$T/shallow.txt" "$T/whole.txt"
    done
done

# a pipe cannot be read twice: top reads whole stacks from it at once
cat "$T/s.ctf" | "$MT_BIN" top -n 0 /dev/stdin >"$T/pipe.txt" 2>"$T/pipe.err"
"$MT_BIN" top -n 0 "$T/s.ctf" >"$T/file.txt"
check "top from a pipe (/dev/stdin) reports what top from the file does" cmp -s "$T/pipe.txt" "$T/file.txt"

# --- cxx.cc: template function, exceptions, the map -----------------------
"$MT_BIN" top --json -n 0 "$T/cxx.ctf" >"$T/cxx.json"
site_of() { json "$T/cxx.json" '" | ".join(s["short"] for s in d["sites"] if s["site"]["line"] == '"$1"')'; }
check "cxx: make_many's push_back is charged to shapes::make_many<double>(…)" \
    test "$(site_of 18)" = "shapes::make_many<double>(…)"
check "cxx: the map of strings is charged to main:61 (got '$(site_of 61)')" test "$(site_of 61)" = "main"
full=$(json "$T/cxx.json" '[s["site"]["function"] for s in d["sites"] if s["site"]["line"] == 18][0]')
check "cxx: --json keeps the full name ($full)" \
    test "$full" = "std::vector<double, std::allocator<double> >* shapes::make_many<double>(int)"
"$MT_BIN" top -n 0 -c 0 "$T/cxx.ctf" >"$T/cxx.txt"
check "cxx: top text has no std::__cxx11, char_traits or std::allocator<" \
    sh -c "! grep -Eq '__cxx11|char_traits|std::allocator<' '$T/cxx.txt'"
"$MT_BIN" top --full-names -n 0 -c 0 "$T/cxx.ctf" >"$T/cxx-full.txt"
check "cxx: top --full-names prints the names as recorded" \
    grep -q 'std::vector<double, std::allocator<double> >\* shapes::make_many<double>(int) (' "$T/cxx-full.txt"
"$MT_BIN" top --raw -n 3 -c 0 "$T/cxx.ctf" >"$T/cxx-raw.txt"
check "cxx --raw: short names of the plumbing itself (std::__new_allocator<double>::allocate(…))" \
    grep -q ' std::__new_allocator<double>::allocate(…) (' "$T/cxx-raw.txt"

# --- extending the list ---------------------------------------------------
printf '# our own allocation helpers\nshapes::make_many*   # a template\n\n' >"$T/plumbing"
"$MT_BIN" top --json -n 0 --plumbing "$T/plumbing" "$T/cxx.ctf" >"$T/cxx-pl.json"
n=$(json "$T/cxx-pl.json" 'sum(1 for s in d["sites"] if "make_many" in s["site"]["function"])')
check "--plumbing FILE: shapes::make_many is no site any more ($n are)" test "$n" = 0
m=$(json "$T/cxx-pl.json" '[v["short"] for s in d["sites"] for v in s["via"] if s["site"]["line"] == 55]')
check "--plumbing FILE: main:55 is reached via make_many ($m)" sh -c "echo \"$m\" | grep -q make_many"
n=$(MEMTRACE_PLUMBING=$T/plumbing "$MT_BIN" folded "$T/cxx.ctf" | grep -c 'make_many')
check "MEMTRACE_PLUMBING: folded stacks lose make_many too ($n lines)" test "$n" = 0
"$MT_BIN" top --plumbing "$T/nonexistent" "$T/cxx.ctf" >/dev/null 2>"$T/err"; rc=$?
check "--plumbing with a missing file: exit 2 (got $rc)" test "$rc" = 2
check "--plumbing with a missing file: the file is named" grep -q "nonexistent: No such file" "$T/err"

# --- temporary blocks -----------------------------------------------------
"$MT_BIN" dump "$T/s.ctf" >"$T/s.dump"
want=$(awk '$3 == "alloc" { split($4, a, "="); split($6, n, "="); t[a[2]] = $2; k[a[2]] = n[2] }
            $3 == "collect" { split($4, a, "="); if ($2 - t[a[2]] < 1000) s += k[a[2]] }
            END { print s + 0 }' "$T/s.dump")
got=$("$MT_BIN" stats --json "$T/s.ctf" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["temp_samples"])')
check "temporary: samples of blocks freed within 1 ms as counted from the dump ($got, $want)" test "$got" = "$want"
check "temporary: there are some" test "$want" -gt 0
tfirst=$("$MT_BIN" top --by temporary --json "$T/s.ctf" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sites"][0]["site"]["function"])')
check "top --by temporary: a site of short-lived strings first (got '$tfirst')" \
    sh -c "echo '$tfirst' | grep -Eq '^(log_event|render_reply)$'"

# --- C with allocation wrappers -------------------------------------------
cat >"$T/wrap.c" <<'EOF_C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    return p;
}
__attribute__((noinline)) char *xstrdup(const char *s)
{
    char *d = xmalloc(strlen(s) + 1);
    return strcpy(d, s);
}
__attribute__((noinline)) char **load_names(int n)
{
    char **v = xmalloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = xstrdup("a name that is long enough to be sampled now and then, really");
    return v;
}
int main(void)
{
    size_t total = 0;
    for (int r = 0; r < 200; r++) {
        char **v = load_names(500);
        for (int i = 0; i < 500; i++) {
            total += strlen(v[i]);
            free(v[i]);
        }
        free(v);
    }
    printf("%zu\n", total);
    return 0;
}
EOF_C
cc -O2 -g -o "$T/wrap" "$T/wrap.c" || fail "wrap.c builds"
"$REC" run --interval 4k -o "$T/wrap.ctf" -- "$T/wrap" >/dev/null 2>&1 || fail "wrap ran"
"$MT_BIN" top --json -n 0 "$T/wrap.ctf" >"$T/wrap.json"
names=$(json "$T/wrap.json" '",".join(sorted(set(s["site"]["function"] for s in d["sites"])))')
# (printf's buffer may be sampled too: a site inside libc's stdio)
check "C: sites behind xmalloc/xstrdup are the caller, load_names ($names)" \
    sh -c "echo '$names' | tr , '\n' | grep -qx load_names && ! echo '$names' | tr , '\n' | grep -Eqx 'xmalloc|xstrdup|malloc'"
vias=$(json "$T/wrap.json" '",".join(sorted(set(v["short"] for s in d["sites"] for v in s["via"])))')
check "C: the wrappers are the context ($vias)" test "$vias" = "xmalloc,xstrdup"

# --- report wording -------------------------------------------------------
"$MT_BIN" stats --filter 'inside:render_reply' "$T/s.ctf" >"$T/stats.txt"
check "stats --filter: live at end given for all allocations, labelled" \
    grep -q '^live at end .* (all allocations)$' "$T/stats.txt"
check "stats --filter: live at end given for the selection, labelled" \
    grep -q '^live at end 0 B (selected allocations)$' "$T/stats.txt"
"$MT_BIN" stats --filter 'collect:never' "$T/s.ctf" >"$T/stats2.txt"
check "stats: no mean lifetime when no block was freed" grep -q '^lifetime    no mean: no block was freed' "$T/stats2.txt"
check "stats: never prints 'mean 0us' for that" sh -c "! grep -q 'mean 0us' '$T/stats2.txt'"
"$MT_BIN" info "$T/s.ctf" >"$T/info.txt"
check "info: a C++ trace's sampled size is in bytes" grep -Eq '^sampled blocks: +[0-9]+ bytes$' "$T/info.txt"
check "info: a C++ trace's rate is per byte" grep -q '(1 sample every 16384 bytes)' "$T/info.txt"

# --- pprof: short names for display, full names as system names -----------
"$MT_BIN" pprof -o "$T/s.pb.gz" "$T/s.ctf" || fail "pprof writes"
if command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1; then
    go tool pprof -top -sample_index=alloc_space "$T/s.pb.gz" 2>/dev/null >"$T/pprof.txt"
    check "pprof: go tool pprof shows the short name demo::Registry::open_session(…)" \
        grep -q ' demo::Registry::open_session(…)$' "$T/pprof.txt"
    check "pprof: go tool pprof shows render_reply first" \
        sh -c "sed -n '/flat%/{n;p;q}' '$T/pprof.txt' | grep -q ' render_reply$'"
    check "pprof: no std::__new_allocator in the profile's stacks" sh -c "! grep -q __new_allocator '$T/pprof.txt'"
fi
gzip -dc "$T/s.pb.gz" | grep -aq 'demo::Registry::open_session(int)' &&
    pass "pprof: the full name is in the profile (system_name)" || fail "pprof: full name missing"
finish
