#!/bin/sh
# rss_ledger.sh - the resident-memory ledger (docs/rss.md) on a real
# program with known answers: a heap fragmented on purpose (a million
# blocks of 100 bytes, every other one freed: glibc keeps 500,000 free
# chunks of 112 bytes), where the row "allocator: free but resident"
# must show the 56,000,000 bytes freed and the live heap's interval must
# hold the 58,000,000 bytes live; the rows add up to RSS exactly, which
# agrees with the program's own VmRSS; the same on jemalloc and tcmalloc,
# from their own statistics, and on mimalloc from its committed bytes; memory committed in a reservation with
# mprotect (V8's heap) is the program's mappings; memory mapped behind the recorder's
# back (a raw system call) lands in "unexplained", and check
# --max-unexplained passes without it and fails with it; an old (version
# 1) FILE.rss still reads; a damaged ledger line is reported by line.
. tests/record/progs/lib.sh
skip_under_tsan
B=$MT_BIN
[ -r /proc/self/smaps ] || { echo "no /proc/self/smaps"; exit 77; }
out=$(preload "$T/f.ctf" 0.001 "$PROGS/fragment" 1000000)
check "fragment ran ($out)" test "${out%% *}" = ok
vmrss=${out#ok }
check "FILE.rss is of version 2" sh -c "head -1 '$T/f.ctf.rss' | grep -q '^memtrace-rss 2 '"
check "it holds ledger lines" grep -q '^L ' "$T/f.ctf.rss"

"$B" rss --at end --json "$T/f.ctf" >"$T/l.json" 2>"$T/err"
check "memtrace rss --json runs" test -s "$T/l.json"
py() { python3 -c "import json,sys; L=json.load(open('$T/l.json')); R={r['row']:r for r in L['rows']}; $1"; }
if command -v python3 >/dev/null 2>&1; then
    check "the rows add up to RSS exactly" py "sys.exit(sum(r['bytes'] for r in L['rows']) != L['rss_bytes'])"
    check "RSS within 2% of the program's own VmRSS ($vmrss)" \
        py "sys.exit(abs(L['rss_bytes'] - $vmrss) > 0.02 * $vmrss)"
    check "the allocator is glibc" py "sys.exit(L['allocator'] != 'glibc')"
    # 500,000 free chunks of 112 bytes; the top chunk's slack on top of it
    check "free but resident holds the 56,000,000 bytes freed" \
        py "f=R['allocator_free_resident']['bytes']; sys.exit(not (56000000 <= f <= 56000000 + 4*1048576))"
    # 500,000 live blocks of 100 bytes and the 8,000,000-byte array
    # a 95% interval misses one run in twenty by design: the check allows
    # twice its half-width (about 4 standard errors, one run in 15,000)
    check "the live heap's estimate is within twice its 95% half-width of the 58,000,000 bytes live" \
        py "h=R['live_heap']; w=(h['hi']-h['lo'])/2; sys.exit(not (abs(h['bytes'] - 58000000) <= 2 * w))"
    check "the live heap's interval is narrow (within 10%)" \
        py "h=R['live_heap']; sys.exit(not (h['hi'] - h['lo'] < 0.1 * 58000000))"
    check "in use per the allocator: 500,000 chunks of 112 bytes and the array" \
        py "h=R['live_heap']['bytes']+R['allocator_in_use_unsampled']['bytes']; sys.exit(not (56000000 + 8000000 <= h <= 56000000 + 8100000 + 1048576))"
    check "unexplained at most 2% of RSS" py "sys.exit(abs(L['unexplained_bytes']) > 0.02 * L['rss_bytes'])"
    check "the recorder's own memory is shown" py "sys.exit(not R['recorder']['bytes'] > 0)"
    check "modules' code and data are shown" py "sys.exit(not R['modules']['bytes'] > 0)"
fi
"$B" rss --json "$T/f.ctf" >"$T/p.json"
if command -v python3 >/dev/null 2>&1; then
    check "--at peak: the JSON says it is the largest reading, and how many there were" \
        python3 -c "import json,sys; L=json.load(open('$T/p.json')); sys.exit(not (L['at'] == 'largest reading' and L['readings'] >= 1))"
    check "... with the true peak (high-water mark) at least the reading's RSS" \
        python3 -c "import json,sys; L=json.load(open('$T/p.json')); sys.exit(not (L['true_peak_rss_bytes'] >= L['rss_bytes'] > 0))"
fi
check "--at peak: the text says the reading is not the true peak" \
    sh -c "'$B' rss '$T/f.ctf' | grep -q 'the largest RSS of [0-9]* readings*, not the true peak (high-water mark '"
check "--at end: no such line" sh -c "! '$B' rss --at end '$T/f.ctf' | grep -q 'not the true peak'"
check "text report: the free-but-resident row" sh -c "'$B' rss '$T/f.ctf' | grep -q 'allocator: free but resident'"
"$B" plot -o "$T/f.svg" "$T/f.ctf"
check "plot stacks the ledger's rows beyond the heap" grep -q "allocator: free but resident, metadata" "$T/f.svg"
check "... as areas" grep -q "<polygon" "$T/f.svg"
check "stats shows the ledger" sh -c "'$B' stats '$T/f.ctf' | grep -q '^RSS ledger'"
check "stats --json has rss_ledger" sh -c "'$B' stats --json '$T/f.ctf' | grep -q '\"rss_ledger\":{'"
check "... null under a filter (the rows need every allocation)" \
    sh -c "'$B' stats --json --filter kind:mmap '$T/f.ctf' | grep -q '\"rss_ledger\":null'"
for r in whole one-thread two-threads; do
    check "stats' ledger the same on the route $r" sh -c \
        "test \"\$('$B' --route=$r stats --json '$T/f.ctf' | sed 's/.*\"rss_ledger\"://')\" = \"\$('$B' stats --json '$T/f.ctf' | sed 's/.*\"rss_ledger\"://')\""
done

"$B" check --max-unexplained 5% "$T/f.ctf" >"$T/c.txt"
check "check --max-unexplained 5%: holds (exit 0)" test $? = 0
out=$(preload "$T/g.ctf" 0.001 "$PROGS/fragment" 1000000 64)
check "fragment with 64 MiB mapped behind the recorder's back ran" test "${out%% *}" = ok
"$B" rss --at end --json "$T/g.ctf" >"$T/l.json"
if command -v python3 >/dev/null 2>&1; then
    check "those 64 MiB are unexplained" \
        py "sys.exit(abs(L['unexplained_bytes'] - (64 << 20)) > 0.02 * L['rss_bytes'])"
fi
"$B" check --max-unexplained 5% "$T/g.ctf" >"$T/c.txt"
check "check --max-unexplained 5%: exceeded (exit 1)" test $? = 1
check "... and says so" grep -q "FAIL  unexplained resident memory" "$T/c.txt"
"$B" check --max-unexplained 100MiB "$T/g.ctf" >/dev/null
check "check --max-unexplained 100MiB: holds (exit 0)" test $? = 0
"$B" check --max-unexplained 5x "$T/g.ctf" 2>"$T/err" >/dev/null
check "check --max-unexplained 5x: a usage error (exit 2)" test $? = 2

# The same heap on jemalloc and tcmalloc (preloaded after the recorder):
# their own statistics give the allocator's rows; both round 100 bytes up
# to 112.
libdir() { for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do [ -e "$d/$1" ] && { echo "$d/$1"; return; }; done; }
for a in "jemalloc:$(libdir libjemalloc.so.2)" "tcmalloc:$(libdir libtcmalloc_minimal.so.4)"; do
    name=${a%%:*} so=${a#*:}
    if [ -z "$so" ]; then
        echo "PASS: $name not installed here (scripts/install-deps.sh test installs it): skipped"
        continue
    fi
    rm -f "$T/$name.ctf" "$T/$name.ctf.rss"
    out=$(env -u MEMTRACE_ROOT LD_PRELOAD="$LIB $so" MEMTRACE="$T/$name.ctf" MEMTRACE_RATE=0.001 \
          "$PROGS/fragment" 1000000)
    check "$name: fragment ran" test "${out%% *}" = ok
    "$B" rss --at end --json "$T/$name.ctf" >"$T/l.json"
    if command -v python3 >/dev/null 2>&1; then
        check "$name: the allocator is named" py "sys.exit(L['allocator'] != '$name')"
        check "$name: the rows add up to RSS exactly" \
            py "sys.exit(sum(r['bytes'] for r in L['rows']) != L['rss_bytes'])"
        check "$name: free but resident holds the 56,000,000 bytes freed" \
            py "f=R['allocator_free_resident']['bytes']; sys.exit(not (56000000 <= f <= 56000000 + 4*1048576))"
        check "$name: in use, 56,000,000 bytes of small blocks and the 8 MB array (within 2%)" \
            py "h=R['live_heap']['bytes']+R['allocator_in_use_unsampled']['bytes']; sys.exit(not (64000000 <= h <= 1.02 * 64388608))"
        check "$name: unexplained at most 5% of RSS" \
            py "sys.exit(abs(L['unexplained_bytes']) > 0.05 * L['rss_bytes'])"
    fi
done

# mimalloc (preloaded) says only how much it has committed: its free but
# resident row is that, at most the anonymous memory, less the live heap;
# 500,000 freed blocks of 112 bytes and the 12 bytes of rounding on each
# of the 500,000 live ones: at least 62,000,000 bytes.
so=$(libdir libmimalloc.so.2)
if [ -z "$so" ]; then
    echo "PASS: mimalloc not installed here (scripts/install-deps.sh test installs it): skipped"
else
    rm -f "$T/mi.ctf" "$T/mi.ctf.rss"
    out=$(env -u MEMTRACE_ROOT LD_PRELOAD="$LIB $so" MEMTRACE="$T/mi.ctf" MEMTRACE_RATE=0.001 \
          "$PROGS/fragment" 1000000)
    check "mimalloc: fragment ran" test "${out%% *}" = ok
    check "mimalloc: the ledger line has its committed bytes" grep -q '^L .* a_commit=[0-9]* .*alloc=mimalloc' "$T/mi.ctf.rss"
    "$B" rss --at end --json "$T/mi.ctf" >"$T/l.json"
    if command -v python3 >/dev/null 2>&1; then
        check "mimalloc: the allocator is named" py "sys.exit(L['allocator'] != 'mimalloc')"
        check "mimalloc: the rows add up to RSS exactly" \
            py "sys.exit(sum(r['bytes'] for r in L['rows']) != L['rss_bytes'])"
        check "mimalloc: free but resident holds the 56,000,000 bytes freed and the 6,000,000 of rounding" \
            py "f=R['allocator_free_resident']; sys.exit(not (f['hi'] >= 62000000 and f['bytes'] <= 62000000 + 16*1048576))"
        check "mimalloc: no in-use row (mimalloc does not count its bytes in use)" \
            py "sys.exit('allocator_in_use_unsampled' in R)"
        check "mimalloc: unexplained at most 5% of RSS" \
            py "sys.exit(abs(L['unexplained_bytes']) > 0.05 * L['rss_bytes'])"
    fi
    check "mimalloc: text report names the source" sh -c "'$B' rss '$T/mi.ctf' | grep -q 'mimalloc committed'"
fi

# Memory committed in a reservation with mprotect, as V8 grows its heap:
# 64 MiB committed in a 256 MiB PROT_NONE reservation, 16 MiB of it
# decommitted; the W^X flips of 4 MiB are not a second commit.
out=$(preload "$T/v.ctf" 0.001 "$PROGS/reserve")
check "reserve ran (a failing mprotect still fails as before)" test "$out" = ok
"$B" rss --at end --json "$T/v.ctf" >"$T/l.json"
if command -v python3 >/dev/null 2>&1; then
    # a 95% interval misses one run in twenty by design: the check allows
    # twice its half-width (about 4 standard errors, one run in 15,000)
    check "the 48 MiB committed are the program's mappings (within twice the 95% half-width)" \
        py "m=R['program_maps']; w=(m['hi']-m['lo'])/2; sys.exit(not (w > 0 and abs(m['bytes'] - 48 * 1048576) <= 2 * w))"
    check "with them, unexplained at most 5% of RSS" \
        py "sys.exit(abs(L['unexplained_bytes']) > 0.05 * L['rss_bytes'])"
fi

# A peak between the regular readings: RSS rising 32 MiB at a time, four
# times, each step held until a reading covers it. Readings come on a
# regular (slow) tick, whose sample line has its PEAK figure, or, when RSS
# is 1/16 above the largest reading so far, on the next tick at the same
# pace, a fast one (PEAK "-"). Each step waits for the event, so the
# program ends on any machine; and with four steps, at least one reading
# falls on a fast tick unless every step happened to meet a slow tick first.
out=$(preload "$T/pk.ctf" 0.001 "$PROGS/peaks" "$T/pk.ctf.rss" 4)
check "peaks ran ($out)" test "$out" = ok
fast=$(awk '/^L / { if (prev ~ /^[0-9]/ && split(prev, f, " ") == 5 && f[5] == "-") n++ } { prev = $0 } END { print n + 0 }' "$T/pk.ctf.rss")
check "readings taken between the regular ones, when RSS rose ($fast)" test "$fast" -ge 1
"$B" rss --json "$T/pk.ctf" >"$T/p.json"
if command -v python3 >/dev/null 2>&1; then
    check "--at peak: the largest reading holds the last step's 128 MiB, within 10% of the true peak" \
        python3 -c "import json,sys; L=json.load(open('$T/p.json')); sys.exit(not (L['rss_bytes'] >= 128 << 20 and L['rss_bytes'] >= 0.9 * L['true_peak_rss_bytes']))"
fi

# An old FILE.rss (version 1: sample lines only) still reads.
cp "$T/f.ctf" "$T/old.ctf"
sed -e '1s/^memtrace-rss 2 /memtrace-rss 1 /' -e '/^L /d' "$T/f.ctf.rss" >"$T/old.ctf.rss"
p=$("$B" stats --json "$T/old.ctf" 2>"$T/err" | sed -n 's/.*"peak_rss_bytes":\([0-9null]*\).*/\1/p')
check "a version 1 FILE.rss reads: peak RSS $p" test "${p:-null}" != null
check "... without a warning" test ! -s "$T/err"
"$B" rss "$T/old.ctf" >/dev/null 2>"$T/err"
check "memtrace rss on it: no ledger, exit 1" test $? = 1
check "... saying why" grep -q "no ledger readings" "$T/err"

# A damaged ledger line stops reading there, with the line named.
cp "$T/f.ctf" "$T/bad.ctf"
{ sed -n 1,2p "$T/f.ctf.rss"; echo "L 12 rss=x"; sed -n '3,$p' "$T/f.ctf.rss"; } >"$T/bad.ctf.rss"
"$B" stats "$T/bad.ctf" >/dev/null 2>"$T/err"
check "damaged ledger line: stats still works" test $? = 0
check "... the warning names line 3" grep -q "bad.ctf.rss: line 3:" "$T/err"
finish
