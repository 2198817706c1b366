#!/bin/sh
# attach_signals.sh - 'memtrace attach' leaves the signal handlers and the
# signal mask of the process exactly as they were: a SIGSEGV handler
# installed with SA_SIGINFO | SA_NODEFER | SA_RESETHAND (redis's crash
# reporter), handlers with SA_ONSTACK, SA_RESTART and masks of their own,
# an ignored signal, a real-time one; each sigaction (handler, flags, mask)
# as the program reads it, and /proc/PID/status's SigCgt/SigIgn/SigBlk,
# compared before the attach, during it and after the detach, with the
# borrowed thread blocking SIGSEGV or not. The one change allowed is
# glibc's own handler for its internal signal 33 (SIGSETXID), which glibc
# installs when a single-threaded process creates its first thread (the
# recorder's), and which glibc needs from then on. The program's sleeps,
# interrupted by each borrowing, never end in an error.
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
MT=$PWD/$MT_BIN
cd "$T" || exit 1

cat >sigkeep.c <<'EOF2'
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static void on_segv(int s, siginfo_t *si, void *uc) { (void)s; (void)si; (void)uc; _exit(3); }
static void on_bus(int s, siginfo_t *si, void *uc) { (void)s; (void)si; (void)uc; _exit(4); }
static void on_usr1(int s) { (void)s; }
static void on_term(int s) { (void)s; }
static const char *who(void *h)
{
    return h == (void *)on_segv ? "on_segv" : h == (void *)on_bus ? "on_bus"
         : h == (void *)on_usr1 ? "on_usr1" : h == (void *)on_term ? "on_term"
         : h == (void *)SIG_DFL ? "SIG_DFL" : h == (void *)SIG_IGN ? "SIG_IGN" : "other";
}
static void set(const char *tag, const sigset_t *m, FILE *f)
{
    fprintf(f, " %s", tag);
    for (int k = 1; k < 65; k++)
        if (sigismember(m, k) == 1)
            fprintf(f, " %d", k);
}
static void dump(const char *name)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    for (int s = 1; s < 65; s++) {
        struct sigaction a;
        if (s == 32 || s == 33 || s == SIGKILL || s == SIGSTOP)
            continue;   /* glibc's own (not readable), and the two fixed */
        if (sigaction(s, NULL, &a) != 0) {
            fprintf(f, "%d unreadable\n", s);
            continue;
        }
        void *h = (a.sa_flags & SA_SIGINFO) ? (void *)a.sa_sigaction : (void *)a.sa_handler;
        fprintf(f, "%d %s flags %#x", s, who(h), (unsigned)a.sa_flags);
        set("mask", &a.sa_mask, f);
        fprintf(f, "\n");
    }
    sigset_t m;
    sigprocmask(SIG_BLOCK, NULL, &m);
    set("blocked", &m, f);
    fprintf(f, "\n");
    fclose(f);
    rename(tmp, name);
}
static void handle(int sig, void *fn, int flags, int also)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    if (flags & SA_SIGINFO)
        a.sa_sigaction = (void (*)(int, siginfo_t *, void *))fn;
    else
        a.sa_handler = (void (*)(int))fn;
    a.sa_flags = flags;
    sigemptyset(&a.sa_mask);
    if (also)
        sigaddset(&a.sa_mask, also);
    sigaction(sig, &a, NULL);
}
int main(int argc, char **argv)
{
    handle(SIGSEGV, (void *)on_segv, SA_SIGINFO | SA_NODEFER | SA_RESETHAND, 0);
    handle(SIGBUS, (void *)on_bus, SA_SIGINFO | SA_ONSTACK, SIGUSR1);
    handle(SIGUSR1, (void *)on_usr1, SA_RESTART, SIGUSR2);
    handle(SIGTERM, (void *)on_term, 0, SIGINT);
    handle(SIGRTMIN + 2, (void *)on_usr1, SA_RESTART, 0);
    signal(SIGPIPE, SIG_IGN);
    if (argc > 2) {   /* "block": the thread the attach borrows blocks them */
        sigset_t m;
        sigemptyset(&m);
        sigaddset(&m, SIGSEGV);
        sigaddset(&m, SIGBUS);
        sigaddset(&m, SIGUSR2);
        sigprocmask(SIG_BLOCK, &m, NULL);
    }
    printf("ready\n");
    fflush(stdout);
    static const char *const at[] = { "before", "during", "after1", "after2" };
    long errors = 0;
    while (access("stop", F_OK) != 0) {
        for (int i = 0; i < 4; i++) {
            char req[64], out[64];
            snprintf(req, sizeof req, "%s.req", at[i]);
            snprintf(out, sizeof out, "%s.sig", at[i]);
            if (access(req, F_OK) == 0 && access(out, F_OK) != 0)
                dump(out);
        }
        for (int k = 0; k < 20; k++)
            free(malloc(100 + k * 50));
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        if (nanosleep(&ts, NULL) != 0)
            errors++;
    }
    printf("sleep errors %ld\n", errors);
    return 0;
}
EOF2
cc -O1 -g -o sigkeep sigkeep.c || { echo "FAIL: cannot build the test program"; exit 1; }

ask() { # ask DIR NAME: the program's own view of its handlers into DIR/NAME.sig
    touch "$1/$2.req"
    for i in $(seq 600); do [ -f "$1/$2.sig" ] && return 0; sleep 0.05; done
    return 1
}
status() { grep -E '^Sig(Cgt|Ign|Blk)' /proc/$1/status; }

for mode in plain block; do
    d=$PWD/$mode
    mkdir -p "$d"
    ( cd "$d" && exec ../sigkeep "$d" $([ $mode = block ] && echo block) ) >"$d/out" 2>&1 &
    p=$!
    for i in $(seq 300); do grep -q ready "$d/out" 2>/dev/null && break; sleep 0.1; done
    ask "$d" before
    status $p >"$d/before.status"
    "$MT" attach -i 16k -o "$d/one.ctf" $p >"$d/attach1.log" 2>&1 &
    a=$!
    for i in $(seq 300); do grep -q 'recording\|memtrace attach:' "$d/attach1.log" 2>/dev/null && break; sleep 0.1; done
    ask "$d" during
    kill -INT $a 2>/dev/null
    wait $a
    check "$mode: attach and detach: exit $? ($(tr '\n' ' ' <"$d/attach1.log"))" grep -q 'detached from' "$d/attach1.log"
    ask "$d" after1
    status $p >"$d/after1.status"
    check "$mode: every handler, its flags and mask, and the thread's mask after the detach as before" \
        cmp -s "$d/before.sig" "$d/after1.sig"
    check "$mode: the program's handlers stay in place while attached (SIGSEGV's SA_RESETHAND one too)" \
        sh -c "grep -E '^(7|10|11|13|15|36) ' '$d/before.sig' >'$d/b.own'; grep -E '^(7|10|11|13|15|36) ' '$d/during.sig' >'$d/d.own'; grep -q '^11 on_segv' '$d/b.own' && cmp -s '$d/b.own' '$d/d.own'"
    check "$mode: the thread's signal mask while attached is its own" \
        sh -c "[ \"\$(tail -1 '$d/before.sig')\" = \"\$(tail -1 '$d/during.sig')\" ]"
    # SigCgt: as before, but glibc's signal 33 (bit 32) once the process
    # has had a second thread.
    cb=$(sed -n 's/^SigCgt:\t*//p' "$d/before.status") ca=$(sed -n 's/^SigCgt:\t*//p' "$d/after1.status")
    check "$mode: SigCgt after the detach is SigCgt before plus glibc's signal 33 at most ($cb -> $ca)" \
        sh -c "[ \$(( 0x$ca & ~(1 << 32) )) = \$(( 0x$cb & ~(1 << 32) )) ]"
    # SigIgn: as before, but where the process was started with glibc's
    # signal 33 ignored (a parent's disposition survives exec), glibc's
    # handler takes its place when the second thread comes, as SigCgt says.
    ib=$(sed -n 's/^SigIgn:\t*//p' "$d/before.status") ia=$(sed -n 's/^SigIgn:\t*//p' "$d/after1.status")
    check "$mode: SigIgn after the detach is SigIgn before less glibc's signal 33 at most ($ib -> $ia)" \
        sh -c "[ \$(( 0x$ia & ~(1 << 32) )) = \$(( 0x$ib & ~(1 << 32) )) ] && [ \$(( 0x$ia & ~0x$ib )) = 0 ]"
    bb=$(sed -n 's/^SigBlk:\t*//p' "$d/before.status") ba=$(sed -n 's/^SigBlk:\t*//p' "$d/after1.status")
    check "$mode: SigBlk as before ($bb -> $ba)" [ "$bb" = "$ba" ]
    "$MT" attach --duration 300ms -i 16k -o "$d/two.ctf" $p >"$d/attach2.log" 2>&1
    check "$mode: a second attach: exit $?" grep -q 'detached from' "$d/attach2.log"
    ask "$d" after2
    status $p >"$d/after2.status"
    check "$mode: after the second detach: every handler as before" cmp -s "$d/before.sig" "$d/after2.sig"
    check "$mode: after the second detach: SigCgt, SigIgn, SigBlk as after the first" \
        cmp -s "$d/after1.status" "$d/after2.status"
    touch "$d/stop"
    wait $p
    rc=$?
    check "$mode: the program ends cleanly, none of its sleeps failed ($(tail -1 "$d/out"), exit $rc)" \
        sh -c "[ $rc = 0 ] && grep -q '^sleep errors 0$' '$d/out'"
done
finish
