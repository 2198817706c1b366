#!/bin/sh
# symbols.sh - what call stacks in a trace say: C++ names demangled, file
# and line from DWARF, inlined frames as several locations of one code
# (outermost first), the recorder's own frames absent; without debug info
# the ELF symbol, and without symbols module+offset.
. tests/record/progs/lib.sh
skip_under_tsan
rate=0.0001

preload "$T/cxx.ctf" $rate "$PROGS/cxx" >/dev/null || fail "cxx ran"
"$MT_BIN" dump --raw-frames "$T/cxx.ctf" >"$T/cxx.dump" || fail "cxx trace dumps"
check "C++ names are demangled" grep -q ' std::vector<double, std::allocator<double> >\* shapes::make_many<double>(int)$' "$T/cxx.dump"
check "file:line from DWARF" grep -Eq ' [^ ]*cxx\.cc:[1-9][0-9]*:' "$T/cxx.dump"
# push() is inlined into build_list(): one code, two locations, outer first.
check "inlined frame: build_list then push under one code" awk '
    $1 == "bt" { if ($2 == idx && $3 == code && prev ~ /build_list/ && $0 ~ / push$/) found = 1
                 idx = $2; code = $3; prev = $0 }
    END { exit !found }' "$T/cxx.dump"
check "no recorder frames in stacks" sh -c "! grep -Eq ' (mtr_|memtrace_thread_start|_Znwm|malloc\$|operator new)' '$T/cxx.dump'"
summary "$T/cxx.ctf" >"$T/cxx.sum"
check "allocation site is the caller of operator new" grep -q '^SITE std::__new_allocator<double>::allocate(unsigned long, void const\*) ' "$T/cxx.sum"

cp "$PROGS/sites" "$T/sites-nodebug" && strip --strip-debug "$T/sites-nodebug"
preload "$T/nodebug.ctf" $rate "$T/sites-nodebug" >/dev/null || fail "sites-nodebug ran"
"$MT_BIN" dump --raw-frames "$T/nodebug.ctf" >"$T/nodebug.dump"
check "without debug info: the symbol, with the module as file" grep -Eq ' [^ ]*sites-nodebug:0:[0-9]+-[0-9]+ site_small_freed$' "$T/nodebug.dump"

# Names from the symbol table alone, where one address has several: the
# global one before the weak alias (the table sorted by address, aliases
# kept once).
cat >"$T/alias.c" <<'EOF'
#include <stdlib.h>
__attribute__((noinline)) void *alloc_target(size_t n) { void *p = malloc(n); __asm__ volatile("" : : "r"(p) : "memory"); return p; }
void *alloc_weak_alias(size_t n) __attribute__((weak, alias("alloc_target")));
int main(void) { for (int i = 0; i < 20000; i++) free(alloc_target(1000)); return 0; }
EOF
gcc -O1 -o "$T/alias" "$T/alias.c" || fail "alias.c builds"
preload "$T/alias.ctf" $rate "$T/alias" >/dev/null || fail "alias ran"
"$MT_BIN" dump --raw-frames "$T/alias.ctf" >"$T/alias.dump"
check "an address's global name before its weak alias" sh -c "grep -Eq ' [^ ]*alias:0:[0-9]+-[0-9]+ alloc_target\$' '$T/alias.dump' && ! grep -q alloc_weak_alias '$T/alias.dump'"

# Without symbols, and no name cache: module+offset. (strip keeps the
# build-id: with the name cache, the names sites-nodebug's symbol table gave
# above name this binary too.)
cp "$PROGS/sites" "$T/sites-stripped" && strip --strip-all "$T/sites-stripped"
(MEMTRACE_NAME_CACHE=0; export MEMTRACE_NAME_CACHE
 preload "$T/stripped.ctf" $rate "$T/sites-stripped" >/dev/null) || fail "sites-stripped ran"
"$MT_BIN" dump --raw-frames "$T/stripped.ctf" >"$T/stripped.dump"
check "without symbols: module+offset" grep -Eq ' sites-stripped\+0x[0-9a-f]+$' "$T/stripped.dump"
preload "$T/stripped-cached.ctf" $rate "$T/sites-stripped" >/dev/null || fail "sites-stripped ran again"
"$MT_BIN" dump --raw-frames "$T/stripped-cached.ctf" >"$T/stripped-cached.dump"
check "without symbols, the name cache filled by the same build-id: its symbol names" \
    grep -Eq ' [^ ]*sites-stripped:0:[0-9]+-[0-9]+ site_small_freed$' "$T/stripped-cached.dump"
finish
