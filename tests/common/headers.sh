#!/bin/sh
# headers.sh - the public headers (include/memtrace/*.h) each compile on
# their own, in C and C++, with and without their experimental part; with
# MEMTRACE_STABLE_ONLY an experimental function is not declared, without
# it it is (existing callers compile unchanged).
set -u
T=${MT_TMP:-$(mktemp -d)}
CC=${CC:-cc}
CXX=${CXX:-c++}
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; }

for h in include/memtrace/*.h; do
    n=$(basename "$h")
    printf '#include "memtrace/%s"\nint main(void) { return 0; }\n' "$n" >"$T/one.c"
    for mode in "" "-DMEMTRACE_STABLE_ONLY"; do
        if $CC -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude $mode -c "$T/one.c" -o "$T/one.o" 2>"$T/err"; then
            pass "$n compiles alone (C${mode:+, $mode})"
        else
            fail "$n compiles alone (C${mode:+, $mode}): $(head -n 3 "$T/err")"
        fi
    done
    cp "$T/one.c" "$T/one.cc"
    if command -v "$CXX" >/dev/null 2>&1; then
        if $CXX -Wall -Wextra -Werror -Iinclude -c "$T/one.cc" -o "$T/one.o" 2>"$T/err"; then
            pass "$n compiles alone (C++)"
        else
            fail "$n compiles alone (C++): $(head -n 3 "$T/err")"
        fi
    fi
done

# one experimental function of each header that has some
for pair in "trace.h mt_writer_set_carried((mt_writer *)0, 1)" \
            "present.h mt_plot_memory_buckets((const mt_plot_options *)0)" \
            "compare.h mt_diff_fold_free((mt_diff_fold *)0)" \
            "analyze.h mt_model_scale((const mt_model *)0)"; do
    h=${pair%% *}; call=${pair#* }
    printf '#include "memtrace/%s"\nvoid f(void);\nvoid f(void) { (void)%s; }\n' "$h" "$call" >"$T/exp.c"
    $CC -std=c11 -Werror=implicit-function-declaration -Iinclude -c "$T/exp.c" -o "$T/exp.o" 2>/dev/null
    a=$?
    $CC -std=c11 -Werror=implicit-function-declaration -DMEMTRACE_STABLE_ONLY -Iinclude -c "$T/exp.c" \
        -o "$T/exp.o" 2>/dev/null
    b=$?
    if [ $a = 0 ] && [ $b != 0 ]; then
        pass "$h: ${call%%(*} declared, left out with MEMTRACE_STABLE_ONLY"
    else
        fail "$h: ${call%%(*}: default $a (want 0), stable-only $b (want non-zero)"
    fi
done
exit 0
