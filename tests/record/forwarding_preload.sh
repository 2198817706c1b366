#!/bin/sh
# forwarding_preload.sh - a preload before libmemtrace.so that defines
# malloc and forwards to the next one (a counting or logging shim) leaves
# every block to the recorder: no "malloc is not the recorder's" line, and
# the trace holds the program's bytes. An allocator of its own before the
# recorder is still told (allocators.sh, with jemalloc).
. tests/record/progs/lib.sh
skip_under_tsan
D=$T/fwd
rm -rf "$D"; mkdir -p "$D"
cat > "$D/fwd.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static void *(*next)(size_t);
static unsigned long calls;
void *malloc(size_t n)
{
    if (!next)
        next = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    calls++;
    return next(n);
}
__attribute__((destructor)) static void report(void)
{
    const char *f = getenv("FWD_OUT");
    FILE *o = f ? fopen(f, "w") : NULL;
    if (o) {
        fprintf(o, "%lu\n", calls);
        fclose(o);
    }
}
C
cat > "$D/prog.c" <<'C'
#include <stdlib.h>
int main(void)
{
    void *volatile keep;
    for (int i = 0; i < 20000; i++) {   /* 20,000,000 bytes */
        keep = malloc(1000);
        free(keep);
    }
    return 0;
}
C
cc -O1 -shared -fPIC -o "$D/fwd.so" "$D/fwd.c" -ldl || fail "compile the preload"
cc -O1 -o "$D/prog" "$D/prog.c" || fail "compile the program"

env -u MEMTRACE_ROOT FWD_OUT="$D/calls" LD_PRELOAD="$D/fwd.so:$LIB" MEMTRACE="$D/t.ctf" \
    MEMTRACE_RATE=0.001 "$D/prog" 2>"$D/err" || fail "the program ran"
check "the forwarding preload took the program's mallocs ($(cat "$D/calls" 2>/dev/null) calls)" \
    sh -c "[ \$(cat '$D/calls') -ge 20000 ]"
check "no line says malloc is not the recorder's ($(head -c 200 "$D/err"))" \
    sh -c "! grep -q \"malloc is not the recorder's\" '$D/err'"
check "nothing on stderr" test ! -s "$D/err"
# 20,000 blocks of 1,000 bytes at rate 0.001: each is sampled with
# probability 1 - 0.999^1000 = 0.6323, 12,646 blocks expected (sd 68)
n=$(summary "$D/t.ctf" | sed -n 's/.* allocs=\([0-9]*\).*/\1/p')
check "the trace holds the program's blocks: $n sampled for 12,646 expected" \
    sh -c "[ '$n' -ge 12300 ] && [ '$n' -le 13000 ]"
# the recorder first: the same
env -u MEMTRACE_ROOT LD_PRELOAD="$LIB:$D/fwd.so" MEMTRACE="$D/u.ctf" MEMTRACE_RATE=0.001 \
    "$D/prog" 2>"$D/err2" || fail "the program ran, recorder first"
check "recorder first: nothing on stderr" test ! -s "$D/err2"
# operator new and delete of a C++ program, whose libstdc++-like route is
# the malloc symbol: with the shim first they must still reach it (the
# recorder's own operator new calls the symbol then, not its malloc's body),
# and their blocks are sampled all the same
cat > "$D/cxx.cc" <<'C'
int main()
{
    for (int i = 0; i < 20000; i++) {   /* 20,000,000 bytes through operator new */
        char *volatile keep = new char[1000];
        delete[] keep;
    }
    return 0;
}
C
g++ -O1 -o "$D/cxx" "$D/cxx.cc" || fail "compile the C++ program"
env -u MEMTRACE_ROOT FWD_OUT="$D/cxxcalls" LD_PRELOAD="$D/fwd.so:$LIB" MEMTRACE="$D/c.ctf" \
    MEMTRACE_RATE=0.001 "$D/cxx" 2>"$D/err3" || fail "the C++ program ran"
check "operator new reached the forwarding preload's malloc ($(cat "$D/cxxcalls" 2>/dev/null) calls for 20,000 news)" \
    sh -c "[ \$(cat '$D/cxxcalls') -ge 20000 ]"
n=$(summary "$D/c.ctf" | sed -n 's/.* allocs=\([0-9]*\).*/\1/p')
check "the trace holds the C++ program's blocks: $n sampled for 12,646 expected" \
    sh -c "[ '$n' -ge 12300 ] && [ '$n' -le 13000 ]"
# recorder first: operator new runs the recorder's malloc body directly
# and its blocks are sampled alike
env -u MEMTRACE_ROOT FWD_OUT="$D/cxxcalls2" LD_PRELOAD="$LIB:$D/fwd.so" MEMTRACE="$D/d.ctf" \
    MEMTRACE_RATE=0.001 "$D/cxx" 2>"$D/err4" || fail "the C++ program ran, recorder first"
n=$(summary "$D/d.ctf" | sed -n 's/.* allocs=\([0-9]*\).*/\1/p')
check "recorder first: the trace holds the C++ program's blocks: $n sampled for 12,646 expected" \
    sh -c "[ '$n' -ge 12300 ] && [ '$n' -le 13000 ]"
finish
