#!/bin/sh
# attach_leaks.sh - 'memtrace attach --leaks PID': before detaching, the
# recorder judges every block sampled since the attach and still live, into
# FILE.leaks, and the program runs on to a normal end. progs/growing.c keeps
# every session in a global list: its growing site is reachable, nothing is
# lost (a reachable block is never called lost); without --leaks there are
# no verdicts.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
G=$PWD/$PROGS/growing
MT=$PWD/$MT_BIN
cd "$T" || exit 1
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

"$G" 3000000 >/dev/null 2>&1 &
p=$!
sleep 0.3
"$MT" attach --leaks --duration 1s --interval 4k -o a.ctf $p >a.log 2>&1
rc=$?
if [ $rc = 2 ]; then
    echo "ptrace is not permitted here: $(cat a.log)"
    kill $p; wait $p
    exit 77
fi
check "attach --leaks records and detaches (exit $rc)" [ $rc = 0 ]
wait $p
check "the program runs on to a normal end (exit $?)" [ $? = 0 ]
check "the verdicts are written beside the trace (a.ctf.leaks)" [ -s a.ctf.leaks ]
"$MT" stats --json a.ctf >a.json 2>/dev/null
# (how much grows in the second of recording depends on the CPU the program
# gets: any reachable bytes, none lost, is the answer on a loaded machine too)
r=$(json a.json 'd.get("reachable_bytes", 0) > 0') l=$(json a.json 'd.get("lost_bytes")')
check "the growing sessions, held by a global list, are reachable ($r)" [ "$r" = True ]
check "nothing is called lost (lost bytes $l)" [ "$l" = 0 ]
"$MT" top --by reachable -n 1 a.ctf >top.txt 2>&1
check "top --by reachable names the growing site" grep -q "leak_session (.*growing.c" top.txt
check "stats says the recording started mid-run" sh -c "'$MT' stats a.ctf | grep -q 'attached'"

"$G" 3000000 >/dev/null 2>&1 &
p=$!
sleep 0.3
"$MT" attach --duration 300ms -o b.ctf $p >b.log 2>&1
wait $p
check "without --leaks: no verdicts" [ ! -e b.ctf.leaks ]
finish
