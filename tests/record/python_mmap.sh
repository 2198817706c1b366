#!/bin/sh
# python_mmap.sh - a real program whose memory mostly does not come from
# malloc: python3 keeps its small objects in 1 MiB arenas it maps itself.
# With malloc alone the heap explains a fraction of the resident memory;
# with the arenas sampled as kind mmap (with their stacks) the estimated
# peak comes within a quarter of the peak RSS recorded in FILE.rss.
. tests/record/progs/lib.sh
[ "${MT_STAGE:-plain}" = plain ] || exit 77   # sanitizer builds leave mmap alone
py=/usr/bin/python3
[ -x $py ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
B=$MT_BIN

out=$(preload "$T/py.ctf" 0.00001 $py -c '
d = [(i, str(i)) for i in range(1500000)]
print(len(d))')
check "python3 ran under the recorder" test "$out" = 1500000
check "resident memory recorded beside the trace" test -s "$T/py.ctf.rss"

json() { # json FILTER KEY: a number from memtrace stats --json
    "$B" stats --json ${1:+--filter "$1"} "$T/py.ctf" |
        $py -c 'import json, sys; v = json.load(sys.stdin)[sys.argv[1]]; print(int(v) if v is not None else -1)' "$2"
}
rss=$(json "" peak_rss_bytes)
all=$(json "" peak_bytes)
heap=$(json kind:malloc peak_filtered_bytes)
mapped=$(json kind:mmap peak_filtered_bytes)
echo "peak RSS $rss, peak live: all $all, malloc $heap, mmap $mapped"
check "peak RSS ($rss) is known and above 100 MiB" test "$rss" -gt 104857600
check "malloc alone leaves most of RSS unexplained (peak $heap)" test $((rss - heap)) -gt $((rss / 2))
check "mmap arenas are sampled (peak $mapped)" test "$mapped" -gt $((rss / 4))
gap=$((rss - all)); [ $gap -lt 0 ] && gap=$((-gap))
check "with mmap counted, peak live ($all) is within 25% of peak RSS ($rss)" test $gap -lt $((rss / 4))

# The arenas come with their stacks: two frames or more (the allocator
# function and its callers).
deep=$("$B" folded --filter kind:mmap "$T/py.ctf" | awk -F';' 'NF >= 2 { n++ } END { print n + 0 }')
check "mmap allocations have stacks ($deep stacks of 2+ frames)" test "$deep" -gt 0
check "kind:malloc and kind:mmap split the trace" sh -c \
    "test \$(( $heap > 0 && $mapped > 0 )) = 1"
finish
