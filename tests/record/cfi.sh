#!/bin/sh
# cfi.sh - the DWARF walk's fast path (lib/record/cfi.c, cfiwalk.c) walks
# what libunwind walks: with MTR_CFI_CHECK (a test-only switch) every walk
# the fast path completes is done again by libunwind and compared, and each
# process reports its counts at exit. On real code built with -O2
# -fomit-frame-pointer (VLAs and alloca: RBP-based CFAs; qsort with an
# allocating comparator: frames in glibc; threads; a library dlopen'ed,
# dlclose'd, another loaded at its place), C++ through libstdc++ (std::sort,
# std::function, exceptions), allocations in a signal handler (libunwind's
# walk: a signal frame), and unmodified python3 and gcc: no mismatch, the
# fast path does the walks it should, and the stacks are the known chains.
. tests/record/progs/lib.sh
skip_under_tsan
[ "$(uname -m)" = x86_64 ] || { echo "the fast path is x86_64's only"; exit 77; }
command -v "${CC:-cc}" >/dev/null 2>&1 || { echo "FAIL: no C compiler (${CC:-cc})"; exit 1; }
command -v "${CXX:-c++}" >/dev/null 2>&1 || { echo "FAIL: no C++ compiler (${CXX:-c++})"; exit 1; }
unset MEMTRACE_UNWIND   # the default unwinder: dwarf
rate=0.001
D=tests/record/cfi
P=$T/cfiprog
"${CC:-cc}" -std=gnu11 -O2 -g -fomit-frame-pointer -o "$P" $D/cfiprog.c -ldl -lpthread ||
    { fail "cfiprog.c builds"; finish; }
"${CXX:-c++}" -O2 -g -fomit-frame-pointer -o "$P-cxx" $D/cfiprog.cc ||
    { fail "cfiprog.cc builds"; finish; }
"${CC:-cc}" -std=gnu11 -O2 -g -fomit-frame-pointer -shared -fPIC -o "$T/cfilib-a.so" $D/cfilib.c &&
"${CC:-cc}" -std=gnu11 -O2 -g -fomit-frame-pointer -shared -fPIC -DCFILIB_RBP -o "$T/cfilib-b.so" $D/cfilib.c ||
    { fail "cfilib.c builds"; finish; }

# traced NAME CMD...: CMD under the recorder (default unwinder) with the
# check on; its counts summed over its processes in $T/NAME.sum:
# "walks fast fallback mismatches processes".
traced() {
    name=$1; shift
    rm -f "$T/$name.chk"
    MTR_CFI_CHECK=$T/$name.chk; export MTR_CFI_CHECK
    preload "$T/$name.ctf" $rate "$@" >"$T/$name.out" 2>&1 || fail "$name ran ($(tail -n 3 "$T/$name.out"))"
    unset MTR_CFI_CHECK
    awk '$1 == "cfi-check" { w += $3; f += $4; b += $5; m += $6; p++ }
         END { print w + 0, f + 0, b + 0, m + 0, p + 0 }' "$T/$name.chk" 2>/dev/null >"$T/$name.sum" ||
        echo "0 0 0 0 0" >"$T/$name.sum"
}
# agrees NAME MINFAST: no mismatch, and at least MINFAST% of the walks by the fast path.
agrees() {
    read -r w f b m p <"$T/$1.sum"
    check "$1: walks checked against libunwind ($w in $p processes)" test "$w" -ge 100
    check "$1: no mismatch with libunwind ($m of $f fast walks)" test "$m" -eq 0
    check "$1: the fast path did at least $2% of the walks ($f fast, $b by libunwind)" \
        test $((100 * f)) -ge $(($2 * w))
}
# chain NAME ERE MIN WHAT: at least MIN% of NAME's stacks match ERE.
chain() {
    stacks "$T/$1.ctf" >"$T/$1.st"
    p=$(share "$T/$1.st" "$2")
    check "$1: $4 ($p% of stacks)" test "$p" -ge "$3"
}

traced vla "$P" vla 20000
agrees vla 99
chain vla '^main > cfi_vla_outer > cfi_alloca_mid > cfi_vla_leaf$' 95 \
    "RBP-based frames (VLA, alloca): main > cfi_vla_outer > cfi_alloca_mid > cfi_vla_leaf"

traced qsort "$P" qsort 2000
agrees qsort 99
chain qsort '^main > cfi_sort > .*qsort.* > cfi_cmp$' 95 "frames inside glibc's qsort: main > cfi_sort > qsort... > cfi_cmp"

traced threads "$P" threads 20000
agrees threads 99
chain threads '^thread_main > cfi_thread_mid > cfi_thread_leaf$' 95 \
    "four threads: thread_main > cfi_thread_mid > cfi_thread_leaf"

traced dlopen "$P" dlopen "$T/cfilib-a.so" "$T/cfilib-b.so" 20000
agrees dlopen 99
chain dlopen '^main > use_library > cfilib_work > cfilib_leaf$' 95 \
    "two libraries in turn at one place: main > use_library > cfilib_work > cfilib_leaf"

# A signal frame: the fast path hands the walk to libunwind, which goes
# through it to main.
traced signal "$P" signal 20000
read -r w f b m p <"$T/signal.sum"
check "signal: the walks in a signal handler are libunwind's ($b of $w)" \
    sh -c "[ $w -ge 100 ] && [ $((100 * b)) -ge $((95 * w)) ] && [ $m -eq 0 ]"
chain signal '^main > .* > handler > cfi_in_handler$' 95 "through the signal frame: main > ... > handler > cfi_in_handler"

traced cxx-sort "$P-cxx" sort 300
agrees cxx-sort 99
chain cxx-sort '^main > cxx_sort > .* > cxx_less > ' 80 "std::sort's frames: main > cxx_sort > ... > cxx_less > ..."
traced cxx-function "$P-cxx" function 20000
agrees cxx-function 99
chain cxx-function '^main > cxx_call > .*_M_invoke' 95 "std::function: main > cxx_call > ..._M_invoke..."
traced cxx-throw "$P-cxx" throw 5000
agrees cxx-throw 99
chain cxx-throw '^main > cxx_thrower1 > cxx_thrower2 > cxx_thrower3 > __cxa_allocate_exception$' 10 \
    "exceptions: main > cxx_thrower1 > cxx_thrower2 > cxx_thrower3 > __cxa_allocate_exception"
p=$(grep cxx_thrower3 "$T/cxx-throw.st" | grep -vc '^main > cxx_thrower1 > cxx_thrower2 > cxx_thrower3')
check "cxx-throw: every stack through cxx_thrower3 has its three callers ($p without)" test "$p" -eq 0

# Real, unmodified programs.
if command -v python3 >/dev/null 2>&1; then
    traced python python3 -c '
import json
d = [{"a": i, "b": str(i) * 5} for i in range(100000)]
s = json.dumps(d)
print(len(json.loads(s)), len(sorted(d, key=lambda x: x["b"])))'
    agrees python 90
else
    fail "python3 is installed (scripts/install-deps.sh test)"
fi
printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void) { printf("%%d\\n", rand()); return 0; }\n' >"$T/hello.c"
traced gcc "${CC:-cc}" -O2 -o "$T/hello" "$T/hello.c"
agrees gcc 90
finish
