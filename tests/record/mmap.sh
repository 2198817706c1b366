#!/bin/sh
# mmap.sh - anonymous memory the program maps itself is sampled like
# malloc, per byte, with its stack: partial munmap, mremap grow/shrink/move
# and MAP_FIXED over a mapping free exactly the bytes that go; glibc's own
# mapping of a 64 MiB malloc block is counted once; file mappings and
# PROT_NONE reservations are not counted (tests/record/progs/mmaps.c).
. tests/record/progs/lib.sh
# Sanitizer builds of the recorder leave mmap to the sanitizer.
[ "${MT_STAGE:-plain}" = plain ] || exit 77
rate=0.00006   # a sample every ~16 KiB: thousands of samples per case

out=$(preload "$T/m.ctf" $rate "$PROGS/mmaps" "$T/mapped.file")
check "mmaps ran under the recorder" test "$out" = ok
summary "$T/m.ctf" >"$T/m.sum" || fail "trace readable"

# near SITE FIELD(alloc|live) MIB TOLERANCE%: estimate within tolerance.
near() {
    v=$(awk -v s="$1" '$1 == "SITE" && $2 == s { print ($3 "" == "" ? 0 : '"$([ "$2" = alloc ] && echo '$3' || echo '$4')"') }' "$T/m.sum")
    v=${v:-0}
    check "$1: $2 $v bytes is $3 MiB within $4%" awk -v v="$v" -v m="$3" -v t="$4" \
        'BEGIN { e = m * 1048576; d = v - e; if (d < 0) d = -d; exit !(e == 0 ? v == 0 : d <= e * t / 100) }'
}
near partial_site alloc 64 10
near partial_site live 32 10
near remap_site live 16 15
near remap_grow alloc 32 10
near remap_grow live 8 20
near fixed_site live 4 25
near fixed_over live 4 25
near gone_site alloc 16 15
near gone_site live 0 0
near big_malloc alloc 64 10
check "no file mapping counted" sh -c "! grep -q '^SITE file_site' '$T/m.sum'"
check "no PROT_NONE reservation counted" sh -c "! grep -q '^SITE none_site' '$T/m.sum'"
total=$(awk '$1 == "SITE" { s += $3 } END { printf "%.0f", s }' "$T/m.sum")
# 64 + 16 + 32 + 8 + 4 + 16 + 64 MiB = 204 MiB allocated in all; a 64 MiB
# malloc counted twice (block and glibc's mapping) would make it 268.
check "everything allocated ($total bytes) is 204 MiB within 8%" \
    awk -v v="$total" 'BEGIN { e = 204 * 1048576; d = v - e; if (d < 0) d = -d; exit !(d <= e * 0.08) }'

# Threads mapping and unmapping at once, children forked meanwhile.
out=$(MEMTRACE_FOLLOW=0 preload "$T/t.ctf" $rate "$PROGS/mmaps" threads)
check "8 threads mapping and unmapping, forks meanwhile: no harm" test "$out" = ok
summary "$T/t.ctf" >"$T/t.sum" || fail "threads: trace readable (every collect names a live allocation)"
cp "$T/t.sum" "$T/m.sum.bak"; cp "$T/t.sum" "$T/m.sum"
near thread_site live 8 25
near thread_site alloc 3213 8
cp "$T/m.sum.bak" "$T/m.sum"

# Every report can tell the kinds apart: the filter, stats, info.
B=$MT_BIN
"$B" folded --filter kind:mmap "$T/m.ctf" >"$T/mm.folded"
"$B" folded --filter kind:malloc "$T/m.ctf" >"$T/ml.folded"
check "kind:mmap selects the mappings, not the malloc block" \
    sh -c "grep -q partial_site '$T/mm.folded' && ! grep -q big_malloc '$T/mm.folded'"
check "kind:malloc selects the malloc block only" \
    sh -c "grep -q big_malloc '$T/ml.folded' && ! grep -q partial_site '$T/ml.folded'"
check "stats names both kinds" sh -c "'$B' stats '$T/m.ctf' | grep -q '^  mmap ' && '$B' stats '$T/m.ctf' | grep -q '^  malloc '"
check "top says how much of each kind there is" sh -c "'$B' top '$T/m.ctf' | grep -q '^kinds: malloc .*, mmap '"
check "info counts allocations by kind" sh -c "'$B' info '$T/m.ctf' | grep -q '^by kind: *malloc [1-9][0-9]*, mmap [1-9]'"
# A record of a mapping is one sample point carrying the whole mapping's
# size: info estimates the bytes from the samples (as stats does) and
# counts the mappings by their points, never adding up their sizes.
"$B" info "$T/m.ctf" >"$T/info"
got=$(sed -n 's/^allocated: *\([0-9]*\) bytes in .*/\1/p' "$T/info")
st=$("$B" stats --json "$T/m.ctf" | awk 'match($0, /"total": *\{"alloc_bytes": *[0-9]+/) {
    s = substr($0, RSTART, RLENGTH); sub(/.*: */, "", s); print s }')
check "info's allocated bytes (${got:-none}) are stats' (${st:-none})" test "${got:-x}" = "${st:-y}"
check "info's allocated bytes (${got:-none}) are 204 MiB within 8%" \
    awk -v v="${got:-0}" 'BEGIN { e = 204 * 1048576; d = v - e; if (d < 0) d = -d; exit !(d <= e * 0.08) }'
sb=$(sed -n 's/^sampled blocks: *\([0-9]*\) bytes$/\1/p' "$T/info")
check "info's sampled blocks (${sb:-none} bytes) are the malloc blocks: 64 MiB and small ones" \
    test "${sb:-0}" -ge 67108864 -a "${sb:-0}" -lt 68157440
maps=$(sed -n 's/^mapped: *[0-9]* sample points in about \([0-9]*\) mappings.*/\1/p' "$T/info")
check "info estimates 6 mappings (${maps:-none}) within one" test "${maps:-0}" -ge 5 -a "${maps:-0}" -le 7
"$B" top --filter kind:brk "$T/m.ctf" >/dev/null 2>"$T/kind.err"; st=$?
check "a bad kind is a clear error (exit $st)" sh -c "test $st = 2 && grep -q \"unknown kind 'brk' (use malloc, mmap)\" '$T/kind.err'"
finish
