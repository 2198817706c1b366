#!/bin/sh
# leaks_reference.sh - the leak verdicts against the exact references, on
# progs/leaky.c with every allocation sampled:
#  - valgrind memcheck: the sites with definitely or indirectly lost blocks
#    are our lost sites; its "possibly lost" ones are blocks only an interior
#    pointer holds (held_interior; glibc's thread DTVs), which we, as
#    LeakSanitizer, call reachable;
#  - LeakSanitizer (the same source built with -fsanitize=leak): the same
#    lost sites and the same lost bytes, to the byte.
. tests/record/progs/lib.sh
# Plain programs under the preloaded recorder (a sanitizer's runtime would
# have to come first in LD_PRELOAD, and then malloc is not the recorder's).
[ "${MT_STAGE:-plain}" = plain ] || { echo "preloads the recorder into plain programs: plain stage only"; exit 77; }
command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed (scripts/install-deps.sh test)"; exit 77; }
D=$T/leaksref.$$
rm -rf "$D"; mkdir -p "$D"
SRC=tests/record/progs/leaky.c

MEMTRACE_LEAKS=1 preload "$D/a.ctf" 1 "$PROGS/leaky" exit 2>/dev/null
ours=$("$MT_BIN" top --by lost -n 0 -c 0 "$D/a.ctf" | grep -o '\(lost\|held\)_[a-z_]*' | sort -u | tr '\n' ' ')
our_bytes=$("$MT_BIN" stats --json "$D/a.ctf" | grep -o '"lost_bytes":[0-9]*' | cut -d: -f2)
echo "memtrace: lost sites: $ours($our_bytes bytes)"

# valgrind: per loss record, its kind and the first leaky.c site of its stack.
valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible --num-callers=8 \
    "$PROGS/leaky" exit >/dev/null 2>"$D/vg.txt"
vsites() {
    awk -v kind="$1" '
        / are (definitely|indirectly|possibly) lost in loss record/ {
            k = $0; sub(/.* are /, "", k); sub(/ lost.*/, "", k); on = (k == kind); found = 0; next }
        on && !found && match($0, /(lost|held)_[a-z_]+/) { print substr($0, RSTART, RLENGTH); found = 1 }
        /^==[0-9]+== $/ { on = 0 }' "$D/vg.txt" | sort -u | tr '\n' ' '
}
vg=$( (vsites definitely; vsites indirectly) | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')
vp=$(vsites possibly)
echo "valgrind: definitely + indirectly lost: $vg; possibly lost: $vp"
check "valgrind's definitely + indirectly lost sites are ours" [ "$vg" = "$ours" ]
check "valgrind's possibly lost leaky.c sites: only held_interior (an interior pointer)" [ "$vp" = "held_interior " ]

# LeakSanitizer.
if ${CC:-cc} -O1 -g -fno-omit-frame-pointer -fsanitize=leak -pthread "$SRC" -o "$D/leaky_lsan" 2>"$D/cc.txt"; then
    ASAN_OPTIONS= LSAN_OPTIONS=exitcode=0 "$D/leaky_lsan" exit >/dev/null 2>"$D/lsan.txt"
    # LeakSanitizer does not scan the red zone below another thread's stack
    # pointer: held_thread_redzone (144 bytes), which valgrind and we hold,
    # is its one false "lost", left out of the comparison
    ls=$(grep -o 'in \(lost\|held\)_[a-z_]*' "$D/lsan.txt" | cut -c4- | grep -vx held_thread_redzone | sort -u | tr '\n' ' ')
    lb=$(awk '/^(Direct|Indirect) leak of/ { s += $4 } END { print s + 0 }' "$D/lsan.txt")
    rz=$(grep -A4 '^\(Direct\|Indirect\) leak of' "$D/lsan.txt" | awk '/^(Direct|Indirect) leak of/ { n = $4 } /in held_thread_redzone/ { s += n } END { print s + 0 }')
    lb=$((lb - rz))
    echo "LeakSanitizer: lost sites: $ls($lb bytes)"
    check "LeakSanitizer's lost sites are ours" [ "$ls" = "$ours" ]
    check "LeakSanitizer's lost bytes are ours ($lb, $our_bytes)" [ "$lb" = "$our_bytes" ]
else
    echo "(no -fsanitize=leak: $(head -1 "$D/cc.txt"))"
fi
[ "$fails" = 0 ] && rm -rf "$D"
finish
