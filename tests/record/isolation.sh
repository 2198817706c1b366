#!/bin/sh
# isolation.sh - the recorder changes nothing the program can see of its own
# process but the presence of libmemtrace: same loaded objects
# (dl_iterate_phdr) except libmemtrace.so (and, with DWARF unwinding, the
# privately loaded libunwind.so.8 and its liblzma.so.5); no new signal
# handler but on the fatal signals the program left at their default
# (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: the trace written out before
# the program dies of the same signal); every new descriptor close-on-exec, none a socket; GMP's memory
# functions stay GMP's (loading gnutls would replace them). DEBUGINFOD_URLS
# is set, as on a Debian desktop, pointing at a port that refuses.
. tests/record/progs/lib.sh
skip_under_tsan
P=$PROGS/namespace
export DEBUGINFOD_URLS=http://127.0.0.1:9/

env -u LD_PRELOAD -u MEMTRACE "$P" >"$T/plain" || fail "plain run"
grep -q '^GMP realloc in libgmp.so.10$' "$T/plain" || { echo "libgmp.so.10 not installed"; exit 77; }
for mode in fp dwarf; do
    MEMTRACE_UNWIND=$mode preload_raw "$T/$mode.ctf" 0.001 "$P" >"$T/$mode" || fail "$mode: profiled run"
    sed -n 's/^OBJ //p' "$T/plain" | sort >"$T/plain.obj"
    sed -n 's/^OBJ //p' "$T/$mode" | sort >"$T/$mode.obj"
    comm -13 "$T/plain.obj" "$T/$mode.obj" | tr '\n' ' ' >"$T/$mode.added"
    want="libmemtrace.so "
    [ $mode = dwarf ] && want="liblzma.so.5 libmemtrace.so libunwind.so.8 "
    check "$mode: loaded objects: plain + $want(added: $(cat "$T/$mode.added"))" \
        test "$(cat "$T/$mode.added")" = "$want"
    check "$mode: no object of the program's gone" sh -c "comm -23 '$T/plain.obj' '$T/$mode.obj' | grep -q . && exit 1 || exit 0"
    check "$mode: GMP's realloc is still libgmp's ($(sed -n 's/^GMP //p' "$T/$mode"))" \
        grep -q '^GMP realloc in libgmp.so.10$' "$T/$mode"
    # The one exception: the fatal signals the program leaves at their
    # default get the handler that writes out the queued events, then
    # re-raises the signal (lib/record/fatal.c): SIGILL 4, SIGABRT 6,
    # SIGBUS 7, SIGFPE 8, SIGSEGV 11.
    fatal='^SIG (4|6|7|8|11) handler$'
    grep '^SIG' "$T/plain" | grep -Ev "$fatal" >"$T/plain.sig"
    grep '^SIG' "$T/$mode" | grep -Ev "$fatal" >"$T/$mode.sig"
    check "$mode: no signal handler installed but the fatal signals'" cmp -s "$T/plain.sig" "$T/$mode.sig"
    check "$mode: the five fatal signals left at their default are handled" \
        test "$(grep -Ec "$fatal" "$T/$mode")" = 5
    grep '^FD' "$T/$mode" | grep -v ' cloexec=1' | sed 's/ \/.*//' | sort >"$T/$mode.keep"
    grep '^FD' "$T/plain" | grep -v ' cloexec=1' | sed 's/ \/.*//' | sort >"$T/plain.keep"
    check "$mode: every new descriptor is close-on-exec" cmp -s "$T/plain.keep" "$T/$mode.keep"
    check "$mode: no socket" sh -c "! grep -q '^FD [0-9]* socket' '$T/$mode'"
    check "$mode: one trace descriptor" test "$(grep -c '^FD [0-9]* trace cloexec=1' "$T/$mode")" = 1
    check "$mode: trace complete and readable" sh -c "'$MT_BIN' info '$T/$mode.ctf' >/dev/null 2>&1"
done
# The environment: what the launcher set (LD_PRELOAD, MEMTRACE*), nothing else.
sed -n 's/^ENV //p' "$T/plain" | sort >"$T/plain.env"
sed -n 's/^ENV //p' "$T/fp" | sort >"$T/fp.env"
extra=$(comm -13 "$T/plain.env" "$T/fp.env" | grep -v -e '^LD_PRELOAD$' -e '^MEMTRACE' | tr '\n' ' ')
check "environment: nothing but LD_PRELOAD and MEMTRACE* added ($extra)" test -z "$extra"
finish
