#!/bin/sh
# reload.sh - a library dlclose'd and another loaded at its place is named by
# its own symbols: cfiprog (tests/record/cfi/) dlopens A, allocates through
# it, dlcloses it, then B, then A again. A and B are the same code built
# under two names for the allocating function (cfilib_leaf and
# cfilib_leaf_b), so B's return addresses are exactly A's: the recorder's
# module table, its per-address cache and the trace writer's code cache all
# meet the same addresses with another library behind them. Known answer:
# the stacks' leaf names, in trace order, are A's, then B's, then A's.
. tests/record/progs/lib.sh
skip_under_tsan
command -v "${CC:-cc}" >/dev/null 2>&1 || { echo "FAIL: no C compiler (${CC:-cc})"; exit 1; }
D=tests/record/cfi
P=$T/reloadprog
"${CC:-cc}" -std=gnu11 -O2 -g -o "$P" $D/cfiprog.c -ldl -lpthread ||
    { fail "cfiprog.c builds"; finish; }
"${CC:-cc}" -std=gnu11 -O2 -g -shared -fPIC -o "$T/reload-a.so" $D/cfilib.c &&
"${CC:-cc}" -std=gnu11 -O2 -g -shared -fPIC -Dcfilib_leaf=cfilib_leaf_b -o "$T/reload-b.so" $D/cfilib.c ||
    { fail "cfilib.c builds"; finish; }

rm -f "$T/reload.ctf"
preload "$T/reload.ctf" 0.001 "$P" dlopen "$T/reload-a.so" "$T/reload-b.so" 20000 >"$T/reload.out" 2>&1 ||
    fail "cfiprog dlopen ran ($(tail -n 3 "$T/reload.out"))"
"$MT_BIN" dump "$T/reload.ctf" >"$T/reload.dump" 2>"$T/reload.err"
check "the trace reads back whole ($(head -c 200 "$T/reload.err"))" test ! -s "$T/reload.err"

# One line per stack through the library: "LEAF-NAME LEAF-ADDRESS-LOW-48-BITS"
# (the address as the code carries it, without any high bits).
awk 'function out() {
         if (n >= 4 && name[n - 1] == "cfilib_work" && name[n - 2] == "use_library")
             print name[n], substr(pc[n], length(pc[n]) - 11)
         n = 0
     }
     $1 == "ev" { out(); next }
     $1 == "bt" { n++; name[n] = $NF; pc[n] = $3 }
     END { out() }' "$T/reload.dump" >"$T/reload.leaf"
# The runs of equal leaf names, in trace order, with their lengths.
runs=$(awk '$1 != last { if (NR > 1) printf "%s:%d ", last, k; last = $1; k = 0 } { k++ }
            END { if (NR) printf "%s:%d", last, k }' "$T/reload.leaf")
order=$(echo "$runs" | tr ' ' '\n' | cut -d: -f1 | tr '\n' ' ')
check "stacks through the library name A, then B, then A again ($runs)" \
    test "$order" = "cfilib_leaf cfilib_leaf_b cfilib_leaf "
for r in $runs; do
    check "each library's turn has its samples (${r#*:} in ${r%:*})" test "${r#*:}" -ge 100
done
# The case the test is about: B really ran at A's addresses.
same=$(awk '$1 == "cfilib_leaf" { a[$2] = 1 } $1 == "cfilib_leaf_b" { b[$2] = 1 }
            END { k = 0; for (p in a) if (p in b) k++; print k }' "$T/reload.leaf")
check "B's allocating frames, named as B's, lay at A's addresses ($same addresses shared)" test "$same" -ge 1
finish
