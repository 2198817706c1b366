#!/bin/sh
# attach_churn.sh - 'memtrace attach' on a process whose threads come and
# go, and on one whose main thread has ended:
#  - a chain of short-lived threads (each sleeps 200 us in nanosleep,
#    starts the next and ends), three threads that wait in read() inside a
#    signal handler (never taken: the handler may hold malloc's locks) and
#    a main thread that computes and writes a byte every few milliseconds.
#    The attach tries the waiting threads first: by the time the handler
#    threads have been looked at, the chain's thread it saw waiting has
#    ended (as a recorder's writer thread does just after a detach). Each
#    of eight attaches must pass it over, take the main thread at its next
#    write and record; none may say that the running process is gone;
#  - a process whose main thread ended by pthread_exit while another runs
#    on is refused with that reason, not as a process that has exited.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
MT=$PWD/$MT_BIN
cd "$T" || exit 1

cat >churn.c <<'EOF2'
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int never[2];   /* a pipe nobody writes */
static void on_usr1(int s)
{
    char c;
    (void)s;
    if (read(never[0], &c, 1) < 0)   /* waits in the handler for good */
        _exit(3);
}
static void *in_handler(void *arg)
{
    (void)arg;
    pthread_kill(pthread_self(), SIGUSR1);
    return NULL;
}
static void *link_of_chain(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 200 * 1000 };
    nanosleep(&ts, NULL);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    while (pthread_create(&t, &a, link_of_chain, NULL) != 0)
        nanosleep(&ts, NULL);
    pthread_attr_destroy(&a);
    return NULL;
}
int main(void)
{
    int devnull = open("/dev/null", O_WRONLY);
    if (pipe(never) != 0)
        return 2;
    signal(SIGUSR1, on_usr1);
    pthread_t t;
    for (int k = 0; k < 3; k++) {
        pthread_create(&t, NULL, in_handler, NULL);
        pthread_detach(t);
    }
    pthread_create(&t, NULL, link_of_chain, NULL);
    pthread_detach(t);
    printf("ready\n");
    fflush(stdout);
    volatile unsigned long x = 1;
    for (unsigned long i = 0; access("stop", F_OK) != 0; i++) {
        free(malloc(64 + (x & 1023)));
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        if (i % 2000 == 0 && write(devnull, "x", 1) != 1)
            return 1;
    }
    printf("done\n");
    return 0;
}
EOF2
cat >mainexit.c <<'EOF2'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void *work(void *arg)
{
    (void)arg;
    while (access("stop", F_OK) != 0)
        usleep(1000);
    printf("done\n");
    exit(0);
}
int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, work, NULL);
    printf("ready\n");
    fflush(stdout);
    pthread_exit(NULL);
}
EOF2
cc -O1 -g -o churn churn.c -lpthread && cc -O1 -g -o mainexit mainexit.c -lpthread ||
    { echo "FAIL: cannot build the test programs"; exit 1; }
wait_ready() { for i in $(seq 3000); do grep -q ready "$1" && return 0; sleep 0.1; done; return 1; }

rm -f stop
./churn >churn.out 2>&1 &
cp=$!
wait_ready churn.out
recorded=0 gone=0
for r in 1 2 3 4 5 6 7 8; do
    rm -f "a$r.ctf"*
    "$MT" attach -o "a$r.ctf" --duration 20ms $cp >"a$r.log" 2>&1
    st=$?
    if [ $st = 2 ]; then   # no ptrace here (a container, Yama)
        touch stop; wait $cp
        echo "ptrace is not permitted here: $(cat "a$r.log")"
        exit 77
    fi
    if [ $st = 0 ] && grep -q "recording $cp" "a$r.log"; then recorded=$((recorded + 1))
    else
        grep -qi "no such process\|has exited" "a$r.log" && gone=$((gone + 1))
        echo "  attach $r (exit $st): $(cat "a$r.log")"
    fi
done
check "no attach says the running process is gone ($gone of 8 did)" test $gone = 0
check "every attach records, passing over the thread that ended ($recorded of 8 did)" test $recorded = 8
check "the program still runs after the attaches" kill -0 $cp
touch stop
wait $cp
st=$?
check "the program ends cleanly (exit $st)" test $st = 0
check "and says so" grep -q done churn.out

rm -f stop
./mainexit >mainexit.out 2>&1 &
mp=$!
wait_ready mainexit.out
# until its main thread has ended (a zombie leader; a bound far above it)
for i in $(seq 3000); do
    [ "$(sed 's/.*) //' /proc/$mp/stat | cut -c1)" = Z ] && break
    sleep 0.1
done
"$MT" attach -o m.ctf --duration 20ms $mp >m.log 2>&1
st=$?
check "a process whose main thread ended is refused (exit $st)" test $st != 0
check "with that reason ($(cat m.log))" grep -q "main thread has ended" m.log
check "and nothing written" test ! -e m.ctf
touch stop
wait $mp
st=$?
check "it runs on and ends cleanly (exit $st)" test $st = 0
finish
