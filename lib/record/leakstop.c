/*
 * leakstop.c - stopping the program's other threads for the leak scan, and
 * saving what they hold in registers: with ptrace from a helper process
 * first (leakptrace.c: no thread has to take a signal), and with a signal
 * to each thread where ptrace is not allowed (below).
 *
 * The signal way: each thread (listed from /proc/self/task; the
 * recorder's own are left alone) is sent a real-time signal with tgkill.
 * Its handler copies the interrupted registers (the general ones and the
 * vector state, where a copy loop may hold a pointer), the stack pointer
 * and the thread pointer into the thread's slot, says it has stopped, and
 * waits on a futex until the scan is done. Threads born meanwhile are
 * caught by listing again. A thread that blocks the signal (its SigBlk in
 * /proc, looked at while waiting), or does not answer within STOP_WAIT_MS
 * all the same (a machine too loaded to run it), makes the scan give up: a
 * thread running during the scan could hide a reachable block from it. A
 * thread that has gone counts as answered.
 *
 * The handler is ours only while a scan runs; a signal it did not expect
 * (not a tgkill of this process's) goes to the program's handler. After a
 * thread failed to answer, ours stays in place for good (it then ignores
 * the late signal), since the program's default action would kill it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "leaks.h"
#include "sigsave.h"

#define STOP_WAIT_MS 10000
#define MAX_THREADS 16384
#define ROUNDS 8

static struct {
    int active;
    int go;
    unsigned nslots, stopped, left;
    pid_t pid;
    struct mtr_lk_thread *slots;
    unsigned cap;
    struct sigaction old;
    struct mtr_sigsave exact;   /* the disposition before ours, put back as it was */
    int installed, keep;
} st;

static int stop_signal(void)
{
    return SIGRTMAX - 3;
}

static uintptr_t uc_sp(const ucontext_t *uc)
{
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.sp;
#elif defined(__i386__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_ESP];
#else
    (void)uc;
    return 0;
#endif
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    if (st.old.sa_flags & SA_SIGINFO) {
        if (st.old.sa_sigaction)
            st.old.sa_sigaction(sig, si, uc);
    } else if (st.old.sa_handler != SIG_DFL && st.old.sa_handler != SIG_IGN) {
        st.old.sa_handler(sig);
    }
}

static void handler(int sig, siginfo_t *si, void *ucv)
{
    if (si->si_code != SI_TKILL || si->si_pid != st.pid) {
        chain(sig, si, ucv);
        return;
    }
    if (!__atomic_load_n(&st.active, __ATOMIC_ACQUIRE))
        return;   /* late: the scan is over */
    int saved = errno;
    const ucontext_t *uc = ucv;
    unsigned k = __atomic_fetch_add(&st.nslots, 1, __ATOMIC_ACQ_REL);
    if (k < st.cap) {
        struct mtr_lk_thread *t = &st.slots[k];
        t->tid = (pid_t)syscall(SYS_gettid);
        t->sp = uc_sp(uc);
        t->tp = (uintptr_t)pthread_self();
        size_t n = sizeof uc->uc_mcontext;
        memcpy(t->words, &uc->uc_mcontext, n);
#if defined(__x86_64__)
        /* The vector registers: the fxsave area, and the xsave state after
         * it when the kernel says there is one. */
        const unsigned char *fp = (const unsigned char *)uc->uc_mcontext.fpregs;
        if (fp) {
            size_t f = 512;
            uint32_t magic, ext;
            memcpy(&magic, fp + 464, 4);
            memcpy(&ext, fp + 468, 4);
            if (magic == 0x46505853u && ext > f)
                f = ext;
            if (f > sizeof t->words - n)
                f = sizeof t->words - n;
            memcpy((unsigned char *)t->words + n, fp, f);
            n += f;
        }
#endif
        t->nwords = n / 8;
        __atomic_store_n(&t->answered, 1, __ATOMIC_RELEASE);
    }
    __atomic_fetch_add(&st.stopped, 1, __ATOMIC_ACQ_REL);
    /* Wait for the scan; at most a minute whatever happens. */
    for (int i = 0; i < 600 && !__atomic_load_n(&st.go, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        syscall(SYS_futex, &st.go, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    }
    __atomic_fetch_add(&st.left, 1, __ATOMIC_ACQ_REL);
    errno = saved;
}

static void nap_ms(int ms)
{
    struct timespec ts = { 0, ms * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

static int answered(pid_t tid)
{
    unsigned n = __atomic_load_n(&st.nslots, __ATOMIC_ACQUIRE);
    if (n > st.cap)
        n = st.cap;
    for (unsigned i = 0; i < n; i++)
        if (__atomic_load_n(&st.slots[i].answered, __ATOMIC_ACQUIRE) && st.slots[i].tid == tid)
            return 1;
    return 0;
}

/* tid is one of the recorder's threads (it may have said so since). */
static int own(pid_t tid)
{
    pid_t tids[8];
    uintptr_t addrs[8];
    size_t n = mtr_lk_own_threads(tids, addrs, 8);
    for (size_t i = 0; i < n; i++)
        if (tids[i] == tid)
            return 1;
    return 0;
}

static int gone(pid_t tid)
{
    return syscall(SYS_tgkill, st.pid, tid, 0) != 0 && errno == ESRCH;
}

/* 1 if thread tid blocks signal sig (its SigBlk line). */
static int blocks(pid_t tid, int sig)
{
    char path[64], buf[4096];
    const char *p;
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    if (mtr_lk_status_field(path, "SigBlk:", buf, sizeof buf, &p) <= 0)
        return 0;
    unsigned long long mask = 0;
    for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
        mask = mask * 16 + (unsigned)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    return sig >= 1 && sig <= 64 && ((mask >> (sig - 1)) & 1);
}

static void release(void)
{
    __atomic_store_n(&st.go, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &st.go, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
    unsigned want = __atomic_load_n(&st.stopped, __ATOMIC_ACQUIRE);
    for (int i = 0; i < STOP_WAIT_MS && __atomic_load_n(&st.left, __ATOMIC_ACQUIRE) < want; i++)
        nap_ms(1);
    __atomic_store_n(&st.active, 0, __ATOMIC_RELEASE);
    if (st.installed && !st.keep &&
        __atomic_load_n(&st.left, __ATOMIC_ACQUIRE) == __atomic_load_n(&st.stopped, __ATOMIC_ACQUIRE)) {
        mtr_sig_restore(stop_signal(), &st.exact);
        st.installed = 0;
    }
}

static int by_ptrace;   /* the threads stopped now were stopped with ptrace */

static int stop_by_signal(struct mtr_lk_threads *t, struct mtr_lk_thread *slots, pid_t *bad)
{
    *bad = 0;
    size_t slots_bytes = (size_t)MAX_THREADS * sizeof(struct mtr_lk_thread);
    size_t list_bytes = 2 * (size_t)MAX_THREADS * sizeof(pid_t);
    pid_t *tids = mtr_lk_alloc(list_bytes);
    if (!tids) {
        mtr_lk_free(slots, slots_bytes);
        *bad = -1;
        return -1;
    }
    pid_t *signaled = tids + MAX_THREADS;
    size_t nsig = 0;
    pid_t own_tids[8];
    uintptr_t own_addr[8];
    size_t nown = mtr_lk_own_threads(own_tids, own_addr, 8);
    pid_t self = (pid_t)syscall(SYS_gettid);

    st.pid = getpid();
    st.slots = slots;
    st.cap = MAX_THREADS;
    st.nslots = st.stopped = st.left = 0;
    st.go = 0;
    __atomic_store_n(&st.active, 1, __ATOMIC_RELEASE);
    if (!st.installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = handler;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigfillset(&sa.sa_mask);
        if (mtr_sig_save(stop_signal(), &st.exact) != 0 ||
            sigaction(stop_signal(), &sa, &st.old) != 0) {
            __atomic_store_n(&st.active, 0, __ATOMIC_RELEASE);
            mtr_lk_free(tids, list_bytes);
            mtr_lk_free(slots, slots_bytes);
            *bad = -1;
            return -1;
        }
        st.installed = 1;
    }

    int ok = 1;
    for (int round = 0; round < ROUNDS && ok; round++) {
        long n = mtr_lk_tasks(tids, MAX_THREADS);
        if (n < 0) {
            ok = 0;
            *bad = -1;
            break;
        }
        size_t fresh = 0;
        for (long i = 0; i < n; i++) {
            pid_t tid = tids[i];
            int skip = tid == self;
            for (size_t j = 0; j < nown && !skip; j++)
                skip = own_tids[j] == tid;
            for (size_t j = 0; j < nsig && !skip; j++)
                skip = signaled[j] == tid;
            if (skip || nsig >= MAX_THREADS)
                continue;
            if (syscall(SYS_tgkill, st.pid, tid, stop_signal()) == 0) {
                signaled[nsig++] = tid;
                fresh++;
            }
        }
        if (!fresh)
            break;
        /* Every thread signaled answers, or has gone. */
        for (size_t i = 0; i < nsig && ok; i++) {
            int waited = 0;
            while (!answered(signaled[i]) && !gone(signaled[i]) && !own(signaled[i])) {
                /* A thread that blocks the signal is the program's, unless
                 * a recorder thread is starting (it blocks them all). */
                if (waited++ >= STOP_WAIT_MS ||
                    (waited % 50 == 0 && !mtr_lk_own_threads_coming() &&
                     blocks(signaled[i], stop_signal()))) {
                    ok = 0;
                    *bad = signaled[i];
                    break;
                }
                nap_ms(1);
            }
        }
        if (round == ROUNDS - 1)
            ok = 0;   /* threads keep being born */
    }
    if (!ok) {
        st.keep = 1;
        release();
        mtr_lk_free(tids, list_bytes);
        mtr_lk_free(slots, slots_bytes);
        return -1;
    }
    mtr_lk_free(tids, list_bytes);
    t->v = slots;
    t->n = __atomic_load_n(&st.nslots, __ATOMIC_ACQUIRE);
    if (t->n > st.cap)
        t->n = st.cap;
    return 0;
}

int mtr_lk_stop(struct mtr_lk_threads *t, char *why, size_t whylen)
{
    t->v = NULL;
    t->n = 0;
    size_t slots_bytes = (size_t)MAX_THREADS * sizeof(struct mtr_lk_thread);
    struct mtr_lk_thread *slots = mtr_lk_alloc(slots_bytes);
    if (!slots) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    char pwhy[160];
    size_t n = 0;
    if (mtr_lk_stop_ptrace(slots, MAX_THREADS, &n, pwhy, sizeof pwhy) == 0) {
        by_ptrace = 1;
        t->v = slots;
        t->n = n;
        return 0;
    }
    mtr_lk_free(slots, slots_bytes);   /* fresh (zero) slots for the signal way */
    if (!(slots = mtr_lk_alloc(slots_bytes))) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    pid_t bad;
    if (stop_by_signal(t, slots, &bad) == 0)
        return 0;
    if (bad > 0)
        snprintf(why, whylen, "thread %d did not stop for the scan: ptrace is not allowed (%s) "
                 "and the thread blocks signal %d, or did not run for 10 s", (int)bad, pwhy,
                 stop_signal());
    else
        snprintf(why, whylen, "cannot stop the program's threads (ptrace: %s)", pwhy);
    return -1;
}

void mtr_lk_resume(struct mtr_lk_threads *t)
{
    if (by_ptrace) {
        by_ptrace = 0;
        mtr_lk_resume_ptrace();
        mtr_lk_free(t->v, (size_t)MAX_THREADS * sizeof(struct mtr_lk_thread));
        t->v = NULL;
        t->n = 0;
        return;
    }
    release();
    mtr_lk_free(t->v, (size_t)MAX_THREADS * sizeof(struct mtr_lk_thread));
    t->v = NULL;
    t->n = 0;
}
