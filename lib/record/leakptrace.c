/*
 * leakptrace.c - stopping the program's other threads for the leak scan
 * with ptrace, from a small helper process, so that no thread has to take
 * a signal (a thread that blocks every signal, jemalloc's background
 * thread, stops all the same; an interrupted blocking call is restarted by
 * the kernel, never ended with EINTR).
 *
 * The helper is a clone of the scanning thread that shares the process's
 * memory (CLONE_VM, no CLONE_THREAD: a process of its own, as ptrace
 * requires) and sends no signal when it ends (exit signal 0: the program's
 * SIGCHLD handler and its wait(-1) never see it). It blocks every signal,
 * PTRACE_SEIZEs and PTRACE_INTERRUPTs each thread of the process but the
 * scanning one and the recorder's own (listed from /proc/PID/task again
 * until no new one appears), copies its registers into the thread's slot
 * (PTRACE_GETREGSET: the general ones, the vector state, the thread
 * pointer), says so, and waits until the scan is over; then it detaches
 * every thread, handing back a signal that arrived meanwhile, and exits.
 * If it dies, the kernel detaches and restarts the threads.
 *
 * Under Yama's ptrace_scope 1 a process may trace only its descendants
 * unless the tracee names its tracer: the scanning thread names the helper
 * (PR_SET_PTRACER) for the scan's duration, and clears it after. When
 * ptrace is not allowed (Yama scope 2 or 3, the program already traced by
 * a debugger, a non-dumpable process) the helper says so and the caller
 * falls back to signals (leakstop.c); so it does, without trying, under a
 * seccomp filter (which could answer ptrace or clone by killing the
 * process).
 *
 * The helper runs on the scan's own memory (its stack is mtr_lk_alloc'd)
 * and calls nothing but system calls and memcpy: it shares the scanning
 * thread's thread pointer, so it must not use its thread-local state
 * beyond errno, which the scan does not read while the helper runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__aarch64__)
#include <sys/user.h>
#include <elf.h>
#endif

#include "leaks.h"

#define HELPER_STACK (256 * 1024)
#define WAIT_MS 10000
#define HOLD_MS 600000   /* the scan's own bound, whatever happens: 10 min */
#define ROUNDS 16

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif
#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif
#ifndef NT_ARM_TLS
#define NT_ARM_TLS 0x401
#endif

enum { H_WORKING = 0, H_STOPPED = 1, H_FAILED = 2 };

struct helper {
    pid_t pid;                 /* the process */
    pid_t self;                /* the scanning thread */
    pid_t own[8];
    size_t nown;
    struct mtr_lk_thread *slots;
    size_t cap, n;
    pid_t *tids;               /* a listing of /proc/PID/task */
    pid_t *seized;
    int *sig;                  /* a signal to hand back at detach */
    size_t nseized;
    int start;                 /* futex word: 1 once the helper may begin (named as tracer) */
    int state;                 /* futex word: H_* */
    int go;                    /* futex word: 1 once the scan is over */
    int err;                   /* H_FAILED: errno of what failed */
    pid_t bad;                 /* H_FAILED: the thread it failed on, or 0 */
    char what[64];             /* H_FAILED: what failed */
};

static void nap_ms(int ms)
{
    struct timespec ts = { 0, ms * 1000 * 1000 };
    syscall(SYS_nanosleep, &ts, NULL);
}

static void wake(int *word, int v)
{
    __atomic_store_n(word, v, __ATOMIC_RELEASE);
    syscall(SYS_futex, word, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

/* Wait until *word is not `from`, at most ms milliseconds. */
static void wait_while(int *word, int from, int ms)
{
    for (int i = 0; i < ms / 100 && __atomic_load_n(word, __ATOMIC_ACQUIRE) == from; i++) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        syscall(SYS_futex, word, FUTEX_WAIT, from, &ts, NULL, 0);
    }
}

/* The registers of a stopped thread into its slot. */
static void save_regs(struct mtr_lk_thread *t)
{
    size_t used = 0;
    unsigned char *w = (unsigned char *)t->words;
    size_t room = sizeof t->words;
#if defined(__x86_64__)
    struct user_regs_struct r;
    struct iovec io = { &r, sizeof r };
    if (syscall(SYS_ptrace, PTRACE_GETREGSET, t->tid, NT_PRSTATUS, &io) == 0) {
        memcpy(w, &r, io.iov_len);
        used = io.iov_len;
        t->sp = (uintptr_t)r.rsp;
        t->tp = (uintptr_t)r.fs_base;
    }
    io.iov_base = w + used;
    io.iov_len = room - used;
    if (syscall(SYS_ptrace, PTRACE_GETREGSET, t->tid, NT_X86_XSTATE, &io) == 0)
        used += io.iov_len;
#elif defined(__aarch64__)
    struct user_pt_regs r;
    struct iovec io = { &r, sizeof r };
    if (syscall(SYS_ptrace, PTRACE_GETREGSET, t->tid, NT_PRSTATUS, &io) == 0) {
        memcpy(w, &r, io.iov_len);
        used = io.iov_len;
        t->sp = (uintptr_t)r.sp;
    }
    uint64_t tp = 0;
    io.iov_base = &tp;
    io.iov_len = sizeof tp;
    if (syscall(SYS_ptrace, PTRACE_GETREGSET, t->tid, NT_ARM_TLS, &io) == 0)
        t->tp = (uintptr_t)tp;
    io.iov_base = w + used;
    io.iov_len = room - used;
    if (syscall(SYS_ptrace, PTRACE_GETREGSET, t->tid, NT_PRFPREG, &io) == 0)
        used += io.iov_len;
#else
    (void)w;
    (void)room;
#endif
    t->nwords = used / 8;
}

static int skip(const struct helper *h, pid_t tid)
{
    if (tid == h->self)
        return 1;
    for (size_t j = 0; j < h->nown; j++)
        if (h->own[j] == tid)
            return 1;
    for (size_t j = 0; j < h->nseized; j++)
        if (h->seized[j] == tid)
            return 1;
    return 0;
}

static int fail(struct helper *h, const char *what, pid_t tid, int err)
{
    snprintf(h->what, sizeof h->what, "%s", what);
    h->bad = tid;
    h->err = err;
    return -1;
}

/* Seize and stop tid; its registers into the next slot. 0 (or gone), -1. */
static int stop_one(struct helper *h, pid_t tid)
{
    if (syscall(SYS_ptrace, PTRACE_SEIZE, tid, NULL, NULL) != 0)
        return errno == ESRCH ? 0 : fail(h, "PTRACE_SEIZE", tid, errno);
    size_t k = h->nseized++;
    h->seized[k] = tid;
    h->sig[k] = 0;
    if (syscall(SYS_ptrace, PTRACE_INTERRUPT, tid, NULL, NULL) != 0)
        return errno == ESRCH ? 0 : fail(h, "PTRACE_INTERRUPT", tid, errno);
    int status = 0;
    for (int waited = 0;; waited++) {
        pid_t r = (pid_t)syscall(SYS_wait4, tid, &status, __WALL | WNOHANG, NULL);
        if (r == tid)
            break;
        if (r < 0 && errno != EINTR)
            return errno == ECHILD ? 0 : fail(h, "wait", tid, errno);
        if (waited >= WAIT_MS)
            return fail(h, "a stop", tid, ETIMEDOUT);
        nap_ms(1);
    }
    if (!WIFSTOPPED(status))
        return 0;   /* it exited */
    if ((status >> 16) == 0)
        h->sig[k] = WSTOPSIG(status);   /* a signal on its way: handed back at detach */
    if (h->n < h->cap) {
        struct mtr_lk_thread *t = &h->slots[h->n++];
        t->tid = tid;
        save_regs(t);
        t->answered = 1;
    }
    return 0;
}

static void detach_all(struct helper *h)
{
    for (size_t k = 0; k < h->nseized; k++)
        syscall(SYS_ptrace, PTRACE_DETACH, h->seized[k], NULL, (void *)(uintptr_t)h->sig[k]);
}

static int helper_main(void *arg)
{
    struct helper *h = arg;
    sigset_t all;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
    wait_while(&h->start, 0, WAIT_MS);
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)h->pid);
    int ok = 1;
    for (int round = 0; ok; round++) {
        long n = mtr_lk_tasks_of(dir, h->tids, h->cap);
        if (n < 0) {
            ok = fail(h, "reading the list of threads", 0, errno) == 0;
            break;
        }
        size_t fresh = 0;
        for (long i = 0; i < n && ok; i++) {
            if (skip(h, h->tids[i]))
                continue;
            if (h->nseized >= h->cap) {
                ok = fail(h, "too many threads", 0, E2BIG) == 0;
                break;
            }
            fresh++;
            ok = stop_one(h, h->tids[i]) == 0;
        }
        if (!fresh)
            break;
        if (round == ROUNDS - 1)
            ok = fail(h, "threads keep being born", 0, EAGAIN) == 0;
    }
    if (!ok) {
        detach_all(h);
        wake(&h->state, H_FAILED);
        return 0;
    }
    wake(&h->state, H_STOPPED);
    wait_while(&h->go, 0, HOLD_MS);
    detach_all(h);
    return 0;
}

/* ---- the scanning thread's side ---- */

static struct {
    struct helper *h;
    void *stack;
    pid_t child;
    int named;          /* PR_SET_PTRACER was set for the helper */
} pt;

static int yama_scope(void)
{
    char b[8] = "";
    int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    return n > 0 ? b[0] - '0' : 0;
}

/* 1 if the process runs under a seccomp filter: ptrace or a clone that is
 * not a thread may then be refused, or kill the process, so the caller
 * stops the threads with signals instead. */
static int seccomp_filtered(void)
{
    char b[4096];
    const char *v;
    int got = mtr_lk_status_field("/proc/self/status", "Seccomp:", b, sizeof b, &v);
    if (got <= 0)
        return got < 0;   /* unreadable: as if filtered; no line: a kernel without seccomp */
    return *v != '0';
}

static void reap(void)
{
    int status;
    while (pt.child > 0 && syscall(SYS_wait4, pt.child, &status, __WALL, NULL) < 0 && errno == EINTR)
        ;
    if (pt.named)
        prctl(PR_SET_PTRACER, 0, 0, 0, 0);
    pt.named = 0;
    pt.child = 0;
}

static void release_memory(void)
{
    if (pt.h) {
        mtr_lk_free(pt.h->tids, pt.h->cap * sizeof(pid_t));
        mtr_lk_free(pt.h->seized, pt.h->cap * sizeof(pid_t));
        mtr_lk_free(pt.h->sig, pt.h->cap * sizeof(int));
    }
    mtr_lk_free(pt.h, sizeof *pt.h);
    mtr_lk_free(pt.stack, HELPER_STACK);
    pt.h = NULL;
    pt.stack = NULL;
}

int mtr_lk_stop_ptrace(struct mtr_lk_thread *slots, size_t cap, size_t *n, char *why,
                       size_t whylen)
{
    *n = 0;
    why[0] = 0;
    if (seccomp_filtered()) {
        snprintf(why, whylen, "the process runs under a seccomp filter");
        return -1;
    }
    pt.h = mtr_lk_alloc(sizeof *pt.h);
    pt.stack = mtr_lk_alloc(HELPER_STACK);
    struct helper *h = pt.h;
    if (!h || !pt.stack) {
        snprintf(why, whylen, "out of memory");
        release_memory();
        return -1;
    }
    h->tids = mtr_lk_alloc(cap * sizeof(pid_t));
    h->seized = mtr_lk_alloc(cap * sizeof(pid_t));
    h->sig = mtr_lk_alloc(cap * sizeof(int));
    if (!h->tids || !h->seized || !h->sig) {
        snprintf(why, whylen, "out of memory");
        release_memory();
        return -1;
    }
    h->pid = getpid();
    h->self = (pid_t)syscall(SYS_gettid);
    uintptr_t addrs[8];
    h->nown = mtr_lk_own_threads(h->own, addrs, 8);
    h->slots = slots;
    h->cap = cap;
    int scope = yama_scope();
    /* A child that shares our memory, untraced, with no signal at its end. */
    pt.child = clone(helper_main, (char *)pt.stack + HELPER_STACK - 64,
                     CLONE_VM | CLONE_UNTRACED, h);
    if (pt.child <= 0) {
        snprintf(why, whylen, "cannot start the helper process (%s)", strerror(errno));
        pt.child = 0;
        release_memory();
        return -1;
    }
    if (scope == 1 && prctl(PR_SET_PTRACER, (unsigned long)pt.child, 0, 0, 0) == 0)
        pt.named = 1;
    wake(&h->start, 1);   /* named (or no need): it may begin */
    /* Until it says, or dies (it was killed: the kernel restarts the
     * threads it held). */
    int died = 0;
    for (int i = 0; i < (ROUNDS * WAIT_MS + 5000) / 100 && !died &&
                    __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == H_WORKING; i++) {
        wait_while(&h->state, H_WORKING, 100);
        int status;
        died = syscall(SYS_wait4, pt.child, &status, __WALL | WNOHANG, NULL) == pt.child;
    }
    int state = __atomic_load_n(&h->state, __ATOMIC_ACQUIRE);
    if (died && state != H_FAILED) {   /* (one that failed says why, then ends) */
        pt.child = 0;
        if (pt.named)
            prctl(PR_SET_PTRACER, 0, 0, 0, 0);
        pt.named = 0;
        snprintf(why, whylen, "the helper process died");
        release_memory();
        return -1;
    }
    if (state != H_STOPPED) {
        if (state == H_WORKING) {   /* it never said: let it go */
            wake(&h->go, 1);
            snprintf(why, whylen, "the helper process did not answer");
        } else if (h->bad) {
            snprintf(why, whylen, "%s of thread %d: %s", h->what, (int)h->bad, strerror(h->err));
        } else {
            snprintf(why, whylen, "%s: %s", h->what, strerror(h->err));
        }
        if (died)
            pt.child = 0;   /* reaped already */
        else
            reap();
        if (pt.named)
            prctl(PR_SET_PTRACER, 0, 0, 0, 0);
        pt.named = 0;
        release_memory();
        return -1;
    }
    *n = h->n;
    return 0;
}

void mtr_lk_resume_ptrace(void)
{
    if (!pt.h)
        return;
    wake(&pt.h->go, 1);
    reap();
    release_memory();
}
