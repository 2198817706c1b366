#!/bin/sh
# attach_reserve.sh - memory a program commits with mprotect in a PROT_NONE
# reservation (as V8 grows its heap) after 'memtrace attach': progs/reserve.c
# reserves 256 MiB once the recorder is attached, commits 64 MiB of it in
# pieces of 256 KiB, flips 4 MiB W^X and decommits 16 MiB, then holds the
# 48 MiB committed until the detach. The ledger read at the detach must
# hold those 48 MiB in the program's own mappings (95% interval), the
# trace must name the mprotect calls' site, and the program must see its
# mprotect calls behave as before (a failing one still fails) and end
# cleanly after the detach, its GOT slot for mprotect redirected while
# attached and given back its value at the detach.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
[ -r /proc/self/smaps ] || { echo "no /proc/self/smaps"; exit 77; }
R=$PWD/$PROGS/reserve
MT=$PWD/$MT_BIN
cd "$T" || exit 1

# wait_for FILE PATTERN: until a line of FILE matches (a bound far above
# the wait: 120 s on a loaded machine)
wait_for() {
    for i in $(seq 1200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}

# slot PID: the value in reserve's GOT slot for mprotect (bound at start:
# LD_BIND_NOW), in hex
off=$(readelf -rW "$R" | awk '$3 == "R_X86_64_JUMP_SLOT" && $5 ~ /^mprotect(@|$)/ { print $1; exit }')
slot() {
    base=$(awk -v r="$R" '$6 == r { split($1, a, "-"); print a[1]; exit }' /proc/$1/maps)
    dd if=/proc/$1/mem bs=8 count=1 iflag=skip_bytes skip=$((0x$off + 0x$base)) 2>/dev/null | od -An -tx8 | tr -d ' '
}

rm -f go go.stop
LD_BIND_NOW=1 "$R" go >run.out 2>&1 &
p=$!
wait_for run.out ready || fail "reserve did not start"
before=$(slot $p)
"$MT" attach -i 16k -o v.ctf $p >attach.log 2>&1 &
a=$!
wait_for attach.log 'recording\|memtrace attach:'
if grep -q 'not permitted\|ptrace' attach.log && ! grep -q recording attach.log; then
    touch go go.stop; wait $p; wait $a
    echo "ptrace is not permitted here: $(cat attach.log)"
    exit 77
fi
check "attached ($(tr '\n' ' ' <attach.log))" grep -q recording attach.log
during=$(slot $p)
lo=$(awk '/libmemtrace/ { split($1, a, "-"); print a[1]; exit }' /proc/$p/maps)
hi=$(awk '/libmemtrace/ { split($1, a, "-"); h = a[2] } END { print h }' /proc/$p/maps)
check "while attached, the program's mprotect slot points into libmemtrace ($during in $lo-$hi)" \
    sh -c "[ -n '$during' ] && [ -n '$lo' ] && [ \$((0x$during)) -ge \$((0x$lo)) ] && [ \$((0x$during)) -lt \$((0x$hi)) ]"
touch go
check "reserve committed its memory while attached" wait_for run.out held
kill -INT $a 2>/dev/null
wait $a
rc=$?
check "the attach detaches cleanly: exit 0 ($(tr '\n' ' ' <attach.log))" test $rc = 0
after=$(slot $p)
check "after detach the mprotect slot holds its value from before ($before, now $after)" \
    sh -c "[ -n '$before' ] && [ '$before' = '$after' ]"
touch go.stop
wait $p
rc=$?
check "reserve ends cleanly after the detach: its mprotect calls behaved as before (exit $rc)" test $rc = 0
check "... and printed ok" grep -q '^ok$' run.out

"$MT" symbolize -q v.ctf >/dev/null 2>&1
check "FILE.rss has ledger lines" grep -q '^L ' v.ctf.rss
"$MT" rss --at end --json v.ctf >l.json 2>err
check "memtrace rss reads the attached recording's ledger" test -s l.json
if command -v python3 >/dev/null 2>&1; then
    py() { python3 -c "import json,sys; L=json.load(open('l.json')); R={r['row']:r for r in L['rows']}; $1"; }
    # a 95% interval misses one run in twenty by design: the check allows
    # twice its half-width (about 4 standard errors, one run in 15,000)
    check "the 48 MiB committed after the attach are the program's mappings (within twice the 95% half-width)" \
        py "m=R['program_maps']; w=(m['hi']-m['lo'])/2; sys.exit(not (w > 0 and abs(m['bytes'] - 48 * 1048576) <= 2 * w))"
    check "with them, unexplained at most 5% of RSS" \
        py "sys.exit(abs(L['unexplained_bytes']) > 0.05 * L['rss_bytes'])"
fi
check "the commits are sampled as mmap memory from main's mprotect calls" \
    sh -c "'$MT' top -f kind:mmap v.ctf 2>/dev/null | grep -q 'main (.*reserve.c'"
finish
