#!/bin/sh
# attach_safepoint.sh - 'memtrace attach' borrows a thread only where the
# calls it makes (dlopen, the recorder's start) cannot wait for a lock the
# thread holds: a busy program whose SIGALRM handler writes 2000 times a
# second, interrupting malloc and free, with one busy thread and with two,
# is attached and detached five times each; every time the attach ends
# (recorded, or refused with a reason), the program's heap checks hold,
# its later dlopen works, and it ends cleanly. A process under a seccomp
# filter is refused with a message, its mappings untouched.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
MT=$PWD/$MT_BIN
cd "$T" || exit 1

cat >busyalrm.c <<'EOF2'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
static int devnull;
static volatile long bad, rounds;
static void on_alrm(int s)
{
    (void)s;
    if (write(devnull, "x", 1) != 1)   /* a write made by the handler */
        bad++;
}
/* malloc and free all the time, each block's contents checked */
static void *busy(void *arg)
{
    (void)arg;
    void *keep[64] = { 0 };
    for (unsigned i = 0; access("stop", F_OK) != 0; i++) {
        for (int k = 0; k < 2000; k++) {
            unsigned j = (i * 2000 + k) % 64;
            if (keep[j]) {
                unsigned char *p = keep[j];
                if (p[0] != (unsigned char)j || p[99] != (unsigned char)j)
                    bad++;
                free(p);
            }
            unsigned char *p = malloc(100 + k % 300);
            if (p) {
                memset(p, (int)j, 100);
                keep[j] = p;
            }
        }
        __atomic_add_fetch(&rounds, 1, __ATOMIC_RELAXED);
        if (i % 4 == 0 && write(devnull, "y", 1) != 1)   /* now and then, a write of its own */
            bad++;
    }
    for (int j = 0; j < 64; j++)
        free(keep[j]);
    return NULL;
}
int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    devnull = open("/dev/null", O_WRONLY);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alrm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 500 }, { 0, 500 } };
    setitimer(ITIMER_REAL, &it, NULL);
    pthread_t t;
    if (threads > 1)
        pthread_create(&t, NULL, busy, NULL);
    printf("ready\n");
    fflush(stdout);
    busy(NULL);
    if (threads > 1)
        pthread_join(t, NULL);
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    /* the loader's lock is free: a dlopen works */
    void *h = dlopen("libm.so.6", RTLD_NOW);
    printf("dlopen %s\n", h ? "works" : dlerror());
    printf("bad %ld\n", bad);
    return 0;
}
EOF2
cc -O1 -g -o busyalrm busyalrm.c -lpthread -ldl || { echo "FAIL: cannot build the test program"; exit 1; }

for n in 1 2; do
    d=$PWD/t$n
    mkdir -p "$d"
    ( cd "$d" && exec ../busyalrm $n ) >"$d/out" 2>&1 &
    p=$!
    for i in $(seq 300); do grep -q ready "$d/out" 2>/dev/null && break; sleep 0.1; done
    ok=0 refused=0 other="" harm=""
    for k in 1 2 3 4 5; do
        "$MT" attach --duration 200ms -i 64k -o "$d/a$k.ctf" $p >"$d/a$k.log" 2>&1
        rc=$?
        if [ $rc = 0 ]; then ok=$((ok + 1))
        elif [ $rc = 1 ] && grep -q 'could be borrowed safely' "$d/a$k.log"; then refused=$((refused + 1))
        elif grep -q 'did not return within\|faulted\|ended during' "$d/a$k.log"; then
            harm="$harm [$rc: $(tr '\n' ' ' <"$d/a$k.log")]"
        else other="$other [$rc: $(tr '\n' ' ' <"$d/a$k.log")]"; fi
    done
    # A call that hangs (a lock the borrowed thread holds itself) or faults
    # is the harm looked for; other outcomes (a writer too busy to finish
    # the trace on a loaded machine) are shown.
    check "$n thread(s): 5 attaches, no call on the borrowed thread hung or faulted ($ok recorded, $refused refused for want of a safe thread)$other$harm" \
        test -z "$harm"
    check "$n thread(s): at least one of them recorded" test $ok -gt 0
    kill -0 $p 2>/dev/null
    check "$n thread(s): the program is alive" test $? = 0
    touch "$d/stop"
    # the program ends by itself once told; a bound far above its work
    for i in $(seq 600); do grep -q '^bad' "$d/out" 2>/dev/null && break; sleep 0.1; done
    kill -0 $p 2>/dev/null && { kill -KILL $p; echo "(killed: it did not end)" >>"$d/out"; }
    wait $p
    rc=$?
    check "$n thread(s): it ends cleanly, its heap checks hold, its dlopen works ($(tr '\n' ' ' <"$d/out")exit $rc)" \
        sh -c "[ $rc = 0 ] && grep -q '^bad 0$' '$d/out' && grep -q '^dlopen works$' '$d/out'"
done

# A process under a seccomp filter that traps executable mappings: refused
# before anything is loaded.
cat >filtered.c <<'EOF2'
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int main(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        printf("no seccomp\n");
        return 0;
    }
    free(malloc(1000));   /* its heap made before its maps are read */
    printf("ready\n");
    fflush(stdout);
    long n = 0;
    while (access("stop.filtered", F_OK) != 0) {
        free(malloc(1000));
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        n++;
    }
    printf("ran %s\n", n > 0 ? "on" : "not");
    return 0;
}
EOF2
if cc -O1 -o filtered filtered.c 2>/dev/null; then
    rm -f stop.filtered; ./filtered >filtered.out 2>&1 &
    pf=$!
    for i in $(seq 300); do grep -q 'ready\|no seccomp' filtered.out 2>/dev/null && break; sleep 0.1; done
    if grep -q ready filtered.out; then
        cp /proc/$pf/maps filtered.maps.before
        "$MT" attach --duration 200ms -o filtered.ctf $pf >filtered.log 2>&1
        rc=$?
        check "a process under a seccomp filter is refused: exit 1, says why ($(cat filtered.log))" \
            sh -c "[ $rc = 1 ] && grep -q 'seccomp' filtered.log"
        cp /proc/$pf/maps filtered.maps.after   # (cmp on /proc/PID/maps itself sees its size, 0)
        check "nothing was mapped into it" cmp -s filtered.maps.before filtered.maps.after
        touch stop.filtered
        wait $pf
        rc=$?
        check "it runs on and ends cleanly (exit $rc)" sh -c "[ $rc = 0 ] && grep -q '^ran on$' filtered.out"
    else
        wait $pf
        echo "no seccomp filters here: the seccomp refusal is not tested"
    fi
else
    echo "no seccomp headers: the seccomp refusal is not tested"
fi
finish
