/*
 * attach_call.c - calling a function inside another process with ptrace
 * (see attach_call.h).
 *
 * Which thread: the call runs the loader and the recorder's start, which
 * take the allocator's and the loader's locks. A thread interrupted in user
 * code may hold them (inside malloc); a thread blocked in a system call
 * that the kernel restarts (-ERESTART* in rax at the stop) is waiting, not
 * working, so it holds no lock of libc's that the call could need. The
 * other threads keep running, so a lock one of them holds is released as
 * usual. Threads are ranked by the system call /proc/PID/task/TID/syscall
 * shows: read, accept, wait ... (restarted as they were), then nanosleep,
 * poll (restarted through the kernel's restart block, which a signal
 * during our call could overwrite), then epoll_wait (the kernel makes it
 * return EINTR after any stop: event loops retry), and futex last: a
 * thread waiting for one of libc's own locks may hold another (fork
 * waits for each malloc arena while holding the ones before it), which
 * the loader's malloc would then wait for forever. A thread just
 * back from a call that only waits is as good. When every thread runs user
 * code (a busy single-threaded interpreter), one is followed from system
 * call to system call (PTRACE_SYSCALL) until a wait, a write or socket
 * traffic returns: never mmap, brk, read or close, which malloc and the
 * loader make while holding their locks. Whatever the call, a thread
 * running a signal handler (a signal frame on its stack) is never taken:
 * the handler may have interrupted malloc or the loader. A thread whose
 * call put a signal mask of its own in place comes after every other
 * waiting one (see hold_signals).
 *
 * The call: the registers and the FPU/vector state (PTRACE_GETREGSET
 * NT_X86_XSTATE) are saved; the stack pointer goes below the red zone,
 * aligned as the ABI wants at a call, with a return address of 0, so the
 * function's return faults at address 0: that SIGSEGV stop (rip 0) is the
 * end of the call and is never delivered. orig_rax is -1 during the call
 * (no system call restart), and the saved registers, put back afterwards,
 * make the kernel restart the interrupted call when the thread resumes.
 * The calls run with the thread's signals blocked but the synchronous ones
 * (hold_signals), its mask put back at release; a signal that still stops
 * the thread during the call is held back and sent again (tgkill) once the
 * thread is back where it was. A call the kernel would restart through the
 * restart block is restarted afresh instead (attach_release).
 */
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach_call.h"
#include "proc_trace.h"

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516
#define MAX_DEFERRED 16
#define XSTATE_MAX 16384

struct attach_thread {
    pid_t pid, tid;
    int memfd;
#if defined(__x86_64__)
    struct user_regs_struct regs;
#endif
    unsigned char xstate[XSTATE_MAX];
    size_t xstate_len;
    uint64_t cursor;                /* next free byte (downwards) for attach_push */
    int deferred[MAX_DEFERRED], ndeferred;
    uint64_t errno_at;              /* the thread's errno, put back at release */
    int errno_was;
    int broken;                     /* the thread's state could not be put back */
    uint64_t sigmask;               /* the thread's signal mask, put back at release */
    int mask_set;                   /* the calls run with another mask */
};

pid_t attach_tid(const attach_thread *t)
{
    return t->tid;
}

static long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Waits for tid to stop (or end), at most timeout_ms; 1 stopped, 0 timed
 * out, -1 gone. The polls come 10 us apart at first, then twice as far
 * apart up to 200 us: most stops follow a PTRACE_CONT or PTRACE_SYSCALL
 * within microseconds, and a thread followed from system call to system
 * call stops several times for each of them (with a fixed 200 us, a
 * thread taking a signal every 500 us barely ran between its stops). */
static int wait_stop(pid_t tid, int *status, int timeout_ms)
{
    long until = mono_ms() + timeout_ms;
    long pause_ns = 10 * 1000;
    for (;;) {
        pid_t r = waitpid(tid, status, __WALL | WNOHANG);
        if (r == tid)
            return WIFSTOPPED(*status) ? 1 : -1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (mono_ms() >= until)
            return 0;
        struct timespec ts = { 0, pause_ns };
        nanosleep(&ts, NULL);
        if (pause_ns < 200 * 1000)
            pause_ns *= 2;
    }
}

/* The rank of the system call a thread is blocked in (see above): 1, 2,
 * 3 or 4 (futex); RANK_RUNNING for a thread not blocked in one. */
#define RANK_RUNNING 5
static int rank_of(long nr)
{
    switch (nr) {
    case SYS_futex:
        return 4;
    case SYS_read: case SYS_readv: case SYS_write: case SYS_accept: case SYS_accept4:
    case SYS_recvfrom: case SYS_recvmsg: case SYS_wait4: case SYS_waitid: case SYS_pause:
    case SYS_rt_sigsuspend: case SYS_select: case SYS_pselect6: case SYS_connect:
    case SYS_sendto: case SYS_sendmsg: case SYS_pread64: case SYS_flock:
        return 1;
    case SYS_epoll_wait: case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
        return 3;
    default:
        return 2;
    }
}

struct cand {
    pid_t tid;
    int rank;
    int swaps;   /* its call runs with a mask of its own (see swaps_mask) */
};

/* A system call that puts a signal mask of its own in place while it
 * waits (rt_sigsuspend; ppoll, pselect6, epoll_pwait given a mask): the
 * thread's own mask is then not readable until the call returns, so the
 * calls could not run with SIGSEGV unblocked (see attach_call). Taken
 * after every other waiting thread. */
static int swaps_mask(long nr, const unsigned long long a[6])
{
    switch (nr) {
    case SYS_rt_sigsuspend: return 1;
    case SYS_ppoll: return a[3] != 0;
    case SYS_pselect6: return a[5] != 0;
    case SYS_epoll_pwait: return a[4] != 0;
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2: return a[4] != 0;
#endif
    default: return 0;
    }
}

static int cand_key(const struct cand *c)
{
    return c->rank == RANK_RUNNING ? 2 : c->swaps;
}

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (cand_key(x) != cand_key(y))
        return cand_key(x) - cand_key(y);
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

struct cand_list {
    pid_t pid;
    struct cand *v;
    size_t n, cap;
};

/* proc_task_each's callback: tid as a candidate, its rank from the
 * system call it is in (/proc/PID/task/TID/syscall). */
static int add_candidate(int tid, void *ctx)
{
    struct cand_list *l = ctx;
    char sp[96], buf[256];
    snprintf(sp, sizeof sp, "/proc/%d/task/%d/syscall", (int)l->pid, tid);
    int fd = open(sp, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (k <= 0)
        return 0;
    buf[k] = '\0';
    int running = buf[0] < '0' || buf[0] > '9';   /* "running" or "-1 ...": not in a call */
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct cand *c = realloc(l->v, cap * sizeof *c);
        if (!c)
            return 1;
        l->v = c;
        l->cap = cap;
    }
    struct cand *c = &l->v[l->n++];
    c->tid = (pid_t)tid;
    c->rank = RANK_RUNNING;
    c->swaps = 0;
    if (!running) {
        /* "NR ARG1 ... ARG6 SP PC" */
        unsigned long long a[6] = { 0 };
        char *q = buf;
        long nr = strtol(q, &q, 10);
        for (int i = 0; i < 6; i++)
            a[i] = strtoull(q, &q, 16);
        c->rank = rank_of(nr);
        c->swaps = swaps_mask(nr, a);
    }
    return 0;
}

/* The threads of pid blocked in a system call, best first. */
static size_t candidates(pid_t pid, struct cand **out)
{
    struct cand_list l = { pid, NULL, 0, 0 };
    proc_task_each((int)pid, add_candidate, &l);
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, cand_cmp);
    *out = l.v;
    return l.n;
}

#if defined(__x86_64__)

static int get_state(attach_thread *t)
{
    if (ptrace(PTRACE_GETREGS, t->tid, NULL, &t->regs) != 0)
        return -1;
    struct iovec iov = { t->xstate, sizeof t->xstate };
    if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) == 0) {
        t->xstate_len = iov.iov_len;
    } else {
        /* No XSAVE: the legacy FPU/SSE area. */
        struct user_fpregs_struct *fp = (struct user_fpregs_struct *)t->xstate;
        if (ptrace(PTRACE_GETFPREGS, t->tid, NULL, fp) != 0)
            return -1;
        t->xstate_len = 0;
    }
    return 0;
}

static int put_state(attach_thread *t)
{
    int rc = ptrace(PTRACE_SETREGS, t->tid, NULL, &t->regs);
    if (t->xstate_len) {
        struct iovec iov = { t->xstate, t->xstate_len };
        rc |= ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov);
    } else {
        rc |= ptrace(PTRACE_SETFPREGS, t->tid, NULL, t->xstate);
    }
    return rc;
}

/* ---- Is the thread running a signal handler? */

struct range {
    uint64_t lo, hi;
};

/* The executable mappings of pid (*nx of them) and the mapping holding sp
 * (*stack). */
static struct range *exec_ranges(pid_t pid, uint64_t sp, size_t *nx, struct range *stack)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    struct range *v = NULL;
    size_t n = 0, cap = 0;
    int at_start = 1;   /* the next fgets begins a line (a long name is read in pieces) */
    stack->lo = stack->hi = 0;
    *nx = 0;
    if (!f)
        return NULL;
    while (fgets(line, sizeof line, f)) {
        int starts = at_start;
        at_start = strchr(line, '\n') != NULL;
        unsigned long long lo, hi;
        char perms[8];
        if (!starts || sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3)
            continue;
        if (sp >= lo && sp < hi) {
            stack->lo = lo;
            stack->hi = hi;
        }
        if (perms[2] != 'x')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct range *w = realloc(v, cap * sizeof *w);
            if (!w)
                break;
            v = w;
        }
        v[n].lo = lo;
        v[n].hi = hi;
        n++;
    }
    fclose(f);
    *nx = n;
    return v;
}

static int in_ranges(const struct range *v, size_t n, uint64_t a)
{
    for (size_t i = 0; i < n; i++)
        if (a >= v[i].lo && a < v[i].hi)
            return 1;
    return 0;
}

#define STACK_SCAN_MAX (1u << 20)

/* 1 if the thread's stack, from its stack pointer up, holds a signal frame
 * the kernel built: a return address to a restorer (mov $15,%rax;
 * syscall: rt_sigreturn), then a ucontext with flags of its own (at most
 * UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS), no link, and a
 * saved instruction pointer in executable memory. Such a thread runs a
 * handler that may have interrupted anything: malloc holding its arena's
 * lock, the loader holding its own; a call on it could wait for those
 * forever. 0 if none was seen (or the stack cannot be read). */
static int in_signal_handler(int memfd, pid_t pid, uint64_t sp)
{
    static const unsigned char restorer[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
    size_t nx;
    struct range st;
    struct range *x = exec_ranges(pid, sp, &nx, &st);
    if (!x || !st.hi) {
        free(x);
        return 0;
    }
    uint64_t end = st.hi - sp > STACK_SCAN_MAX ? sp + STACK_SCAN_MAX : st.hi;
    uint64_t buf[4096];
    uint64_t known = 0;   /* the restorer, once one was found */
    int found = 0;
    for (uint64_t at = sp & ~(uint64_t)7; at < end && !found; at += sizeof buf) {
        size_t want = end - at < sizeof buf ? (size_t)(end - at) : sizeof buf;
        ssize_t k = pread(memfd, buf, want, (off_t)at);
        if (k <= 0)
            break;
        for (size_t i = 0; i < (size_t)k / 8 && !found; i++) {
            uint64_t w = buf[i];
            if (!in_ranges(x, nx, w))
                continue;
            if (w != known) {
                unsigned char code[9];
                if (pread(memfd, code, sizeof code, (off_t)w) != sizeof code ||
                    memcmp(code, restorer, sizeof code) != 0)
                    continue;
                known = w;
            }
            /* the ucontext after it: uc_flags, uc_link, uc_stack (3
             * words), then the registers r8 ... r15, rdi, rsi, rbp, rbx,
             * rdx, rax, rcx, rsp, rip */
            uint64_t uc[5 + 17];
            if (pread(memfd, uc, sizeof uc, (off_t)(at + i * 8 + 8)) != sizeof uc)
                continue;
            if (uc[0] <= 7 && uc[1] == 0 && in_ranges(x, nx, uc[5 + 16]))
                found = 1;
        }
    }
    free(x);
    return found;
}

/* A system call that only waits: a thread just back from one (stopped on
 * its way out) is in a libc wrapper, not inside malloc or the loader. */
static int waits_only(long nr)
{
    switch (nr) {
    case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_futex: case SYS_epoll_wait:
    case SYS_epoll_pwait: case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
    case SYS_accept: case SYS_accept4: case SYS_wait4: case SYS_waitid: case SYS_pause:
    case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
        return 1;
    default:
        return 0;
    }
}

/* 1 if the stopped thread's registers show a blocking system call that was
 * interrupted (and will be restarted, or for rank 3 returns EINTR), or a
 * waiting one that just returned. */
static int in_blocking_call(const attach_thread *t, int rank)
{
    long long ax = (long long)t->regs.rax, nr = (long long)t->regs.orig_rax;
    if (nr < 0)
        return 0;
    if (ax == -ERESTARTSYS || ax == -ERESTARTNOINTR || ax == -ERESTARTNOHAND ||
        ax == -ERESTART_RESTARTBLOCK)
        return 1;
    if (rank == 3 && ax == -EINTR)
        return 1;
    return waits_only((long)nr);
}

/* A system call after which a thread is in a libc wrapper, holding none of
 * the allocator's or the loader's locks: the waiting ones, writes, file
 * syncs and locks, socket traffic (never made inside malloc or dlopen;
 * the loader reads with read and pread64, maps, and closes). */
static int safe_exit(long nr)
{
    return waits_only(nr) || nr == SYS_write || nr == SYS_writev || nr == SYS_pwrite64 ||
           nr == SYS_fsync || nr == SYS_fdatasync || nr == SYS_fcntl || nr == SYS_ftruncate ||
           nr == SYS_sendto || nr == SYS_sendmsg || nr == SYS_recvfrom || nr == SYS_recvmsg;
}

/* A thread running user code (no system call to borrow it in): follow it
 * from system call to system call (PTRACE_SYSCALL) until one of the
 * safe_exit ones returns, at most timeout_ms. 1 stopped there (state
 * read), 0 not in time (the thread is stopped, not in a call), -1 gone. */
static int wait_safe_exit(attach_thread *t, int timeout_ms)
{
    long until = mono_ms() + timeout_ms;
    int sig = 0;
    for (;;) {
        if (ptrace(PTRACE_SYSCALL, t->tid, NULL, (void *)(long)sig) != 0)
            return -1;
        sig = 0;
        int st;
        long left = until - mono_ms();
        /* (a thread that stops all the time, at a signal's or a system
         * call's stop, never lets wait_stop time out: the time is
         * checked here too) */
        int w = left > 0 ? wait_stop(t->tid, &st, (int)left) : 0;
        if (w < 0)
            return -1;
        if (w == 0) {
            /* Stopped where it is: the interrupt, asked again after each
             * other stop (a signal's stop may take its place), for a
             * bounded number of stops. */
            ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
            int n = 0;
            while ((w = wait_stop(t->tid, &st, 2000)) == 1 && (st >> 16) != PTRACE_EVENT_STOP &&
                   n++ < 10000) {
                int s2 = WSTOPSIG(st);
                if (s2 != SIGTRAP && s2 != (SIGTRAP | 0x80) && t->ndeferred < MAX_DEFERRED)
                    t->deferred[t->ndeferred++] = s2;
                ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
                ptrace(PTRACE_CONT, t->tid, NULL, NULL);
            }
            return w == 1 && (st >> 16) == PTRACE_EVENT_STOP ? 0 : -1;
        }
        if ((st >> 16) == PTRACE_EVENT_STOP)
            continue;
        if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
            sig = WSTOPSIG(st);   /* the thread's own signal: delivered */
            continue;
        }
        struct __ptrace_syscall_info info;
        if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, (void *)sizeof info, &info) <= 0)
            continue;
        if (info.op == PTRACE_SYSCALL_INFO_EXIT && get_state(t) == 0 &&
            safe_exit((long)t->regs.orig_rax) &&
            !in_signal_handler(t->memfd, t->pid, t->regs.rsp))
            return 1;   /* (a write made by a handler may have interrupted malloc) */
    }
}

/* Seizes and interrupts tid; 0 stopped, -1 with errno. */
static int seize(pid_t tid)
{
    if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD) != 0)
        return -1;
    if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0) {
        int e = errno;
        ptrace(PTRACE_DETACH, tid, NULL, NULL);
        errno = e;
        return -1;
    }
    for (;;) {
        int st;
        int w = wait_stop(tid, &st, 2000);
        if (w < 0) {
            errno = ESRCH;
            return -1;
        }
        if (w == 0) {
            ptrace(PTRACE_DETACH, tid, NULL, NULL);
            errno = EBUSY;
            return -1;
        }
        if ((st >> 16) == PTRACE_EVENT_STOP)
            return 0;
        /* A signal on its way to the thread: let it go on, the interrupt
         * stop follows. */
        ptrace(PTRACE_CONT, tid, NULL, (void *)(long)WSTOPSIG(st));
    }
}

#define SIGBIT(s) (1ULL << ((s) - 1))

/* The calls run with every signal blocked but the synchronous ones: the
 * program's handlers do not run inside the loader or the recorder's start
 * on the borrowed thread (a signal for it waits, pending, until it is put
 * back), and SIGSEGV, which ends each call, is not blocked: the kernel
 * resets the handler of a fault signal the thread blocks to SIG_DFL (a
 * crash reporter installed with SA_RESETHAND, or any other, would be
 * lost). Not for a thread whose call put a mask of its own in place
 * (swaps_mask): its mask is unknown until the call returns. */
static void hold_signals(attach_thread *t)
{
    const struct user_regs_struct *r = &t->regs;
    unsigned long long a[6] = { r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9 };
    if ((long long)r->orig_rax >= 0 && swaps_mask((long)r->orig_rax, a))
        return;
    uint64_t during = ~(SIGBIT(SIGSEGV) | SIGBIT(SIGBUS) | SIGBIT(SIGFPE) | SIGBIT(SIGILL) |
                        SIGBIT(SIGTRAP));
    if (ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof t->sigmask, &t->sigmask) == 0 &&
        ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof during, &during) == 0)
        t->mask_set = 1;
}

static int process_gone(pid_t pid)
{
    char p[32];
    snprintf(p, sizeof p, "/proc/%d", (int)pid);
    return access(p, F_OK) != 0;
}

static attach_thread *borrow_once(pid_t pid, long until, int *errnum, char *why, size_t cap)
{
    struct cand *c;
    size_t n = candidates(pid, &c);
    if (n == 0) {
        *errnum = process_gone(pid) ? ESRCH : EBUSY;
        snprintf(why, cap, *errnum == ESRCH ? "no such process"
                                            : "no thread of the process is waiting in a system "
                                              "call (all are running): try again, or attach "
                                              "when it is less busy");
        return NULL;
    }
    attach_thread *t = calloc(1, sizeof *t);
    if (!t) {
        free(c);
        *errnum = ENOMEM;
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    t->pid = pid;
    t->memfd = -1;
    *errnum = EBUSY;
    snprintf(why, cap, "no thread of the process could be borrowed safely (none waited in a "
                       "system call or came back from a write or a wait within 3 s): try again");
    for (size_t i = 0; i < n; i++) {
        if (seize(c[i].tid) != 0) {
            /* ESRCH names the thread: one that ended since the list was
             * read (a short-lived worker, a recorder's writer thread going
             * after a detach) leaves the others to try, and this round to
             * be tried again; only a process gone ends the attach. */
            if (errno == EPERM || (errno == ESRCH && process_gone(pid))) {
                *errnum = errno;
                snprintf(why, cap, "%s", errno == ESRCH ? "no such process" : strerror(errno));
                break;
            }
            continue;
        }
        t->tid = c[i].tid;
        t->ndeferred = 0;
        if (get_state(t) != 0) {
            ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
            continue;
        }
        if (t->memfd < 0) {
            char mp[64];
            snprintf(mp, sizeof mp, "/proc/%d/mem", (int)pid);
            t->memfd = open(mp, O_RDWR | O_CLOEXEC);
            if (t->memfd < 0) {
                *errnum = errno;
                snprintf(why, cap, "%s: %s", mp, strerror(errno));
                ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
                break;
            }
        }
        int ok = in_blocking_call(t, c[i].rank) && !in_signal_handler(t->memfd, pid, t->regs.rsp);
        /* A running thread once no waiting one could be taken (the
         * waiting come first): followed to a safe point, for 2 s at most
         * and never past the attach's deadline. */
        long left = until - mono_ms();
        if (!ok && c[i].rank == RANK_RUNNING && left > 0 &&
            wait_safe_exit(t, left < 2000 ? (int)left : 2000) == 1)
            ok = 1;
        if (!ok) {
            ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
            for (int k = 0; k < t->ndeferred; k++)
                syscall(SYS_tgkill, pid, t->tid, t->deferred[k]);
            t->ndeferred = 0;
            continue;
        }
        hold_signals(t);
        t->cursor = (t->regs.rsp - 256) & ~(uint64_t)15;   /* below the red zone */
        free(c);
        return t;
    }
    free(c);
    if (t->memfd >= 0)
        close(t->memfd);
    free(t);
    return NULL;
}

struct seccomp_find {
    pid_t pid, tid;
    int mode;
};

/* proc_task_each's callback: stops at a thread under a seccomp mode. */
static int find_seccomp(int tid, void *ctx)
{
    struct seccomp_find *f = ctx;
    char sp[96], line[256];
    snprintf(sp, sizeof sp, "/proc/%d/task/%d/status", (int)f->pid, tid);
    FILE *fp = fopen(sp, "re");
    if (!fp)
        return 0;
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, "Seccomp:", 8)) {
            f->mode = atoi(line + 8);
            f->tid = (pid_t)tid;
            break;
        }
    fclose(fp);
    return f->mode != 0;
}

int attach_seccomp(pid_t pid, char *why, size_t cap)
{
    struct seccomp_find f = { pid, 0, 0 };
    proc_task_each((int)pid, find_seccomp, &f);
    int mode = f.mode;
    pid_t tid = f.tid;
    if (!mode)
        return 0;
    snprintf(why, cap, "thread %d runs under seccomp %s (Seccomp: %d in its /proc status): "
                       "loading the recorder maps code and makes system calls the program "
                       "never made, which the filter may forbid or answer by killing the "
                       "process; not attached (start it under 'memtrace run' instead)",
             (int)tid, mode == 1 ? "strict mode" : "filtering", mode);
    return 1;
}

attach_thread *attach_borrow(pid_t pid, int *errnum, char *why, size_t cap)
{
    /* Threads come and go from their system calls: a few rounds, 3 s at
     * most. */
    long until = mono_ms() + 3000;
    for (;;) {
        attach_thread *t = borrow_once(pid, until, errnum, why, cap);
        if (t || *errnum == EPERM || *errnum == ESRCH || *errnum == ENOMEM ||
            mono_ms() >= until)
            return t;
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

uint64_t attach_push(attach_thread *t, const void *data, size_t n)
{
    t->cursor = (t->cursor - n) & ~(uint64_t)15;
    if (pwrite(t->memfd, data, n, (off_t)t->cursor) != (ssize_t)n)
        return 0;
    return t->cursor;
}

int attach_read_string(attach_thread *t, uint64_t addr, char *out, size_t cap)
{
    ssize_t k = pread(t->memfd, out, cap - 1, (off_t)addr);
    if (k <= 0) {
        out[0] = '\0';
        return -1;
    }
    out[k] = '\0';
    return 0;
}

int attach_call(attach_thread *t, uint64_t fn, const uint64_t *args, int nargs, uint64_t *ret,
                int timeout_ms, char *why, size_t cap)
{
    struct user_regs_struct r = t->regs;
    uint64_t sp = (t->cursor - 64) & ~(uint64_t)15;
    uint64_t zero = 0;
    sp -= 8;   /* at the function's entry rsp + 8 is 16-aligned */
    if (pwrite(t->memfd, &zero, sizeof zero, (off_t)sp) != sizeof zero) {
        snprintf(why, cap, "cannot write the process's stack: %s", strerror(errno));
        return -1;
    }
    unsigned long long *reg[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };
    for (int i = 0; i < nargs && i < 6; i++)
        *reg[i] = args[i];
    r.rsp = sp;
    r.rip = fn;
    r.rax = 0;
    r.orig_rax = (unsigned long long)-1;   /* no system call restart for the call */
    r.eflags &= ~(0x400ULL | 0x100ULL);   /* DF and TF clear */
    if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r) != 0 ||
        ptrace(PTRACE_CONT, t->tid, NULL, NULL) != 0) {
        snprintf(why, cap, "cannot start the call: %s", strerror(errno));
        return -1;
    }
    long until = mono_ms() + timeout_ms;
    for (;;) {
        int st;
        long left = until - mono_ms();
        int w = wait_stop(t->tid, &st, left > 0 ? (int)left : 0);
        if (w < 0) {
            t->broken = 1;
            snprintf(why, cap, "the process ended during the call");
            return -1;
        }
        if (w == 0) {
            /* Cut short: stop the thread and put it back. */
            ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
            while ((w = wait_stop(t->tid, &st, 2000)) == 1 && (st >> 16) != PTRACE_EVENT_STOP) {
                int sig = WSTOPSIG(st);
                if (sig != SIGTRAP && sig != SIGSEGV && t->ndeferred < MAX_DEFERRED)
                    t->deferred[t->ndeferred++] = sig;
                ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
                ptrace(PTRACE_CONT, t->tid, NULL, NULL);
            }
            if (w != 1)
                t->broken = 1;
            snprintf(why, cap, "the call did not return within %d ms (abandoned)", timeout_ms);
            return -1;
        }
        int sig = WSTOPSIG(st);
        if ((st >> 16) == PTRACE_EVENT_STOP) {
            ptrace(PTRACE_CONT, t->tid, NULL, NULL);
            continue;
        }
        if (sig == SIGSEGV) {
            struct user_regs_struct now;
            if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) == 0 && now.rip == 0) {
                *ret = now.rax;
                return 0;
            }
            snprintf(why, cap, "the call faulted at 0x%llx (abandoned)", now.rip);
            return -1;
        }
        if (t->ndeferred < MAX_DEFERRED)
            t->deferred[t->ndeferred++] = sig;
        ptrace(PTRACE_CONT, t->tid, NULL, NULL);
    }
}

int attach_keep_errno(attach_thread *t, uint64_t errno_location)
{
    uint64_t at = 0;
    char why[128];
    if (!errno_location ||
        attach_call(t, errno_location, NULL, 0, &at, 2000, why, sizeof why) != 0 || !at ||
        pread(t->memfd, &t->errno_was, sizeof t->errno_was, (off_t)at) != sizeof t->errno_was)
        return -1;
    t->errno_at = at;
    return 0;
}

void attach_release(attach_thread *t)
{
    if (!t)
        return;
    if (!t->broken && t->errno_at)
        if (pwrite(t->memfd, &t->errno_was, sizeof t->errno_was, (off_t)t->errno_at) < 0)
            t->errno_at = 0;   /* (nothing more to do) */
    if (!t->broken) {
        /* A call the kernel would restart through the thread's restart
         * block (nanosleep, clock_nanosleep, poll, a futex wait with a
         * timeout: the time left) is made again afresh, with its own
         * arguments: the calls made on the thread may have overwritten
         * that block, and the restart would then run another call's
         * (a sleep returning early with an error). -ERESTARTNOHAND does
         * that: restarted from the start when no handler runs, EINTR
         * when one does, as -ERESTART_RESTARTBLOCK itself. */
        if ((long long)t->regs.orig_rax >= 0 &&
            (long long)t->regs.rax == -ERESTART_RESTARTBLOCK)
            t->regs.rax = (unsigned long long)-ERESTARTNOHAND;
        put_state(t);
    }
    if (t->mask_set)
        ptrace(PTRACE_SETSIGMASK, t->tid, (void *)sizeof t->sigmask, &t->sigmask);
    ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
    for (int i = 0; i < t->ndeferred; i++)
        syscall(SYS_tgkill, t->pid, t->tid, t->deferred[i]);
    if (t->memfd >= 0)
        close(t->memfd);
    free(t);
}

#else /* not x86-64 */

attach_thread *attach_borrow(pid_t pid, int *errnum, char *why, size_t cap)
{
    (void)pid;
    *errnum = ENOSYS;
    snprintf(why, cap, "attaching is implemented for x86-64 only");
    return NULL;
}

uint64_t attach_push(attach_thread *t, const void *data, size_t n)
{
    (void)t;
    (void)data;
    (void)n;
    return 0;
}

int attach_call(attach_thread *t, uint64_t fn, const uint64_t *args, int nargs, uint64_t *ret,
                int timeout_ms, char *why, size_t cap)
{
    (void)t; (void)fn; (void)args; (void)nargs; (void)ret; (void)timeout_ms;
    snprintf(why, cap, "attaching is implemented for x86-64 only");
    return -1;
}

int attach_keep_errno(attach_thread *t, uint64_t errno_location)
{
    (void)t;
    (void)errno_location;
    return -1;
}

int attach_read_string(attach_thread *t, uint64_t addr, char *out, size_t cap)
{
    (void)t;
    (void)addr;
    if (cap)
        out[0] = '\0';
    return -1;
}

void attach_release(attach_thread *t)
{
    free(t);
}

#endif
