#!/bin/sh
# attach_othertracer.sh - the end of an attach while another tracer (a
# debugger, strace) holds the process: the detach cannot ptrace it, and
# says so by that tracer's PID, that the recording goes on, and how to end
# it (not "no CAP_SYS_PTRACE here", the advice for a container); once the
# other tracer lets go, 'memtrace attach --detach PID' ends the recording,
# and the program runs on and ends cleanly.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
MT=$PWD/$MT_BIN
cd "$T" || exit 1

cat >target.c <<'EOF2'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
    printf("ready\n");
    fflush(stdout);
    while (access("stop", F_OK) != 0) {
        free(malloc(1000));
        usleep(1000);
    }
    printf("done\n");
    return 0;
}
EOF2
# seizer PID: ptraces PID's main thread (PTRACE_SEIZE: it keeps running)
# until the file "let-go" appears, then lets go.
cat >seizer.c <<'EOF2'
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    if (argc != 2 || ptrace(PTRACE_SEIZE, atoi(argv[1]), NULL, NULL) != 0) {
        perror("seizer");
        return 1;
    }
    printf("seized\n");
    fflush(stdout);
    while (access("let-go", F_OK) != 0)
        usleep(10000);
    return 0;   /* exiting detaches */
}
EOF2
cc -O1 -g -o target target.c && cc -O1 -g -o seizer seizer.c ||
    { echo "FAIL: cannot build the test programs"; exit 1; }
wait_for() { for i in $(seq 3000); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

rm -f stop let-go
./target >target.out 2>&1 &
tp=$!
wait_for target.out ready
"$MT" attach -o t.ctf $tp >attach.log 2>&1 &
ap=$!
wait_for attach.log "recording\|not permitted\|refused by Yama" || fail "the attach starts ($(cat attach.log))"
if grep -q "not permitted\|refused by Yama" attach.log; then   # no ptrace here (a container, Yama)
    wait $ap; touch stop; wait $tp
    echo "ptrace is not permitted here: $(cat attach.log)"
    exit 77
fi
./seizer $tp >seizer.out 2>&1 &
sp=$!
wait_for seizer.out seized || fail "the other tracer holds the process ($(cat seizer.out))"
kill -INT $ap
wait $ap
st=$?
check "the detach under another tracer fails (exit $st)" test $st != 0
check "naming that tracer ($(tail -n 1 attach.log))" grep -q "traced by process $sp now" attach.log
check "saying the recording goes on and how to end it" grep -q "attach --detach $tp" attach.log
check "not blaming a missing capability" sh -c "! grep -q CAP_SYS_PTRACE attach.log"
touch let-go
wait $sp
"$MT" attach --detach $tp >detach.log 2>&1
st=$?
check "once it let go, --detach ends the recording (exit $st: $(cat detach.log))" test $st = 0
check "the trace is complete: the recorder marked its end" sh -c "'$MT' info t.ctf | grep -q '^end: *marked by the recorder'"
check "the program still runs" kill -0 $tp
touch stop
wait $tp
st=$?
check "and ends cleanly (exit $st)" test $st = 0
finish
