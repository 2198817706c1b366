/*
 * unwind.c - the allocating thread's call stack: a frame-pointer walk, a
 * DWARF walk (cfiwalk.c's, else libunwind's), the choice between them (MEMTRACE_UNWIND),
 * and the stack bounds that keep the frame-pointer walk inside the stack.
 *
 * Frame pointers: a walk costs about 1 ns per frame, takes no lock and
 * allocates nothing. Code built without frame pointers (Debian's glibc,
 * libstdc++ and most distro libraries) breaks the chain or silently skips
 * the caller of a function without one (the user function that called
 * strdup).
 *
 * DWARF: on x86_64 first the recorder's own walk (cfiwalk.c, with the
 * rules cfi.c reads from .eh_frame, cached per return address): a look-up
 * and two bounded stack reads a frame, no lock, no allocation. Any frame
 * it cannot do (a rule that is not simple, a signal frame, a read outside
 * the stack, a thread without known bounds) hands the whole walk to
 * libunwind's unw_backtrace, which caches a template per call site and
 * costs about 7 ns per frame once warm (docs/PERFORMANCE.md). Debian's
 * libunwind.a is not position-independent, so it cannot be linked into
 * this shared object. Linking libunwind.so would put its exported
 * _Unwind_* and backtrace into the program's global scope, where they can
 * take over the program's C++ exception unwinding. So it is loaded with
 * dlopen(RTLD_LOCAL) instead: a locally loaded library's symbols are never
 * used to bind anybody else's references, so the program keeps libgcc's
 * _Unwind_* and glibc's backtrace. The loading (dlopen allocates and takes
 * the loader lock) and libunwind's first-use allocations happen in
 * mtr_unwind_setup, outside the malloc path, with the re-entrancy guard
 * set; in the malloc path unw_backtrace runs inside the guard too, so
 * whatever it allocates is never sampled. The fast walk is used only where
 * libunwind is loaded, so that it always has its fallback.
 *
 * Bounds: the main thread's come from __libc_stack_end and RLIMIT_STACK;
 * other threads' are read by a pthread_create wrapper in the new thread
 * before its start routine runs (pthread_getattr_np allocates and takes a
 * lock, so it must never run inside malloc). With frame pointers, a thread
 * with unknown bounds (raw clone, alternate signal stack) gets only the
 * allocation site.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfi.h"
#include "recconf.h"
#include "real.h"
#include "unwind.h"
#include "unwpipe.h"

extern char __start_mt_hooks[] MT_HIDDEN;
extern char __stop_mt_hooks[] MT_HIDDEN;
extern char __start_mt_tstart[] MT_HIDDEN;
extern char __stop_mt_tstart[] MT_HIDDEN;
extern void *__libc_stack_end;

/* How far below __libc_stack_end main's frame may lie for a chain that
 * ends there to count as complete (auto mode; see fp_walk). */
#define MAIN_BASE_SLACK 1024
static uintptr_t main_stack_hi;
/* libc's code, where main's caller lives (found by mtr_unwind_setup). */
static uintptr_t libc_text_lo, libc_text_hi;
/* The executable's entry point, _start: the outermost frame of a DWARF walk
 * on the main thread returns a few bytes into it (glibc 2.36: +0x26). */
static uintptr_t entry_pc;
#define START_SLACK 64

static int in_hooks(uintptr_t pc)
{
    return pc >= (uintptr_t)__start_mt_hooks && pc < (uintptr_t)__stop_mt_hooks;
}

/* ---------------------------------------------------------------------- */
/* Frame-pointer walk                                                      */

/* Walks the frame-pointer chain. Sets *complete when the chain ended where
 * the thread's stack begins (at our thread trampoline, or at main's frame
 * on the main thread), i.e. no frame was lost at the outer end; callers
 * skipped by code without frame pointers in the middle go unnoticed.
 * Two loops: the recorder's own frames (the hook section), then the
 * thread's, where each frame costs a bounds check, two loads, three tests
 * and a store. */
static MT_HOOK size_t fp_walk(uintptr_t *out, size_t max, int *truncated, int *complete)
{
    struct mtr_thread *t = &mtr_tls;
    uintptr_t *fp = __builtin_frame_address(0);
    uintptr_t lo = t->stack_lo, hi = t->stack_hi;
    int known = hi && (uintptr_t)fp >= lo && (uintptr_t)fp < hi;
    /* our thread trampoline's code: the thread's own code ends there */
    const uintptr_t ts_lo = (uintptr_t)__start_mt_tstart;
    const uintptr_t ts_len = (uintptr_t)__stop_mt_tstart - ts_lo;
    size_t n = 0;

    *truncated = 0;
    *complete = 0;
    for (;;) {
        if (known && (uintptr_t)fp + 2 * sizeof(uintptr_t) > hi)
            return 0;
        uintptr_t ret = fp[1];
        uintptr_t *next = (uintptr_t *)fp[0];
        if (ret == 0)
            return 0;
        if (ret - ts_lo < ts_len) {
            *complete = 1;
            return 0;
        }
        if (!in_hooks(ret))
            break;
        if ((uintptr_t)next <= (uintptr_t)fp || ((uintptr_t)next & 7))
            return 0;
        fp = next;
    }
    if (!known) {
        /* Without the stack's bounds, only the allocation site. */
        if (max == 0) {
            *truncated = 1;
            return 0;
        }
        out[0] = fp[1];
        return 1;
    }
    const uintptr_t last = hi - 2 * sizeof(uintptr_t);   /* the highest frame inside the stack */
    for (;;) {
        uintptr_t ret = fp[1];
        uintptr_t *next = (uintptr_t *)fp[0];
        if (ret == 0)
            break;
        if (ret - ts_lo < ts_len) {
            *complete = 1;
            break;
        }
        if (n == max) {
            *truncated = 1;
            break;
        }
        out[n++] = ret;
        if ((uintptr_t)next <= (uintptr_t)fp || ((uintptr_t)next & 7)) {
            /* A chain whose last frame is main's covered the whole main
             * thread's stack: that frame lies just below __libc_stack_end
             * (libc's start-up frames take 272 bytes in glibc 2.36), its
             * return address is in libc, and it is not the recorder's own
             * frame (a chain broken right at the malloc call by libc code
             * without frame pointers would otherwise look the same). */
            if (hi == main_stack_hi && hi - (uintptr_t)fp < MAIN_BASE_SLACK &&
                n >= 2 && out[n - 1] >= libc_text_lo && out[n - 1] < libc_text_hi)
                *complete = 1;
            break;
        }
        fp = next;
        if ((uintptr_t)fp > last)
            break;
    }
    return n;
}

/* ---------------------------------------------------------------------- */
/* DWARF walk (libunwind, loaded by mtr_unwind_setup)                      */

typedef int (*unw_backtrace_fn)(void **buffer, int size);

enum { MODE_FP, MODE_DWARF, MODE_AUTO };
static int unwind_mode = MODE_FP;          /* until mtr_unwind_setup */
static unw_backtrace_fn dwarf_backtrace;   /* NULL: libunwind not loaded */

/* libunwind takes locks of its own (its caches, dl_iterate_phdr). A fork
 * while another thread is inside unw_backtrace would leave them held in the
 * child, whose first DWARF walk would then hang. Walks hold this lock for
 * reading; fork takes it for writing, so it happens between walks. */
static pthread_rwlock_t dwarf_lock = PTHREAD_RWLOCK_INITIALIZER;
static int dwarf_locked_for_fork;

/* Frames above the caller of malloc that a DWARF walk sees: mtr_unwind
 * (with the walk below inlined), the sampler's and the entry points'
 * frames. */
#define DWARF_SLACK 16

/* The fast path (cfiwalk.c) is on: x86_64, libunwind loaded, the rule
 * cache mapped. */
static int cfi_on;

/* The test-only check (MTR_CFI_CHECK=FILE, not a user setting): every walk
 * the fast path completes is done again by libunwind and the two stacks
 * compared; each process appends "cfi-check pid walks fast fallback
 * mismatches" to FILE at exit. */
static const char *check_path;
static char check_path_buf[512];
static unsigned long check_walks, check_fast, check_fallback, check_mismatch;

/* The recorder's own frames dropped, then at most max of the program's,
 * up to our thread trampoline (as in fp_walk). */
static inline __attribute__((always_inline)) size_t
dwarf_filter(const uintptr_t *buf, int got, uintptr_t *out, size_t max, int *truncated)
{
    size_t i = 0, n = 0;

    *truncated = 0;
    if (got <= 0)
        return 0;
    while (i < (size_t)got && in_hooks(buf[i]))
        i++;   /* the recorder's own frames */
    for (; i < (size_t)got; i++) {
        uintptr_t pc = buf[i];
        if (pc >= (uintptr_t)__start_mt_tstart && pc < (uintptr_t)__stop_mt_tstart)
            break;   /* our thread trampoline, as in fp_walk */
        if (n == max) {
            *truncated = 1;
            break;
        }
        out[n++] = pc;
    }
    return n;
}

static MT_HOOK __attribute__((cold)) void dwarf_check(const uintptr_t *out, size_t n, int truncated,
                                                        size_t max, int cap)
{
    void *buf[cap];
    uintptr_t again[max + 1];
    int t2;
    pthread_rwlock_rdlock(&dwarf_lock);
    int got = dwarf_backtrace(buf, cap);
    pthread_rwlock_unlock(&dwarf_lock);
    size_t n2 = dwarf_filter((const uintptr_t *)buf, got, again, max, &t2);
    if (n2 != n || t2 != truncated || memcmp(again, out, n * sizeof *out) != 0)
        __atomic_add_fetch(&check_mismatch, 1, __ATOMIC_RELAXED);
}

/* Inlined into mtr_unwind: one frame fewer to walk and discard. The fast
 * path first (it drops the recorder's frames itself and stops as
 * dwarf_filter does); libunwind's unw_backtrace for the whole walk when it
 * cannot do some frame. */
static inline __attribute__((always_inline)) size_t dwarf_walk(uintptr_t *out, size_t max, int *truncated)
{
    int cap = (int)(max + DWARF_SLACK + 1);
    int got = cfi_on ? mtr_cfi_backtrace(out, max, truncated) : -1;
    int fast = got >= 0;
    size_t n;
    if (fast) {
        n = (size_t)got;
    } else {
        uintptr_t buf[cap];
        pthread_rwlock_rdlock(&dwarf_lock);
        got = dwarf_backtrace((void **)buf, cap);
        pthread_rwlock_unlock(&dwarf_lock);
        n = dwarf_filter(buf, got, out, max, truncated);
    }
    if (__builtin_expect(check_path != NULL, 0)) {
        __atomic_add_fetch(&check_walks, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(fast ? &check_fast : &check_fallback, 1, __ATOMIC_RELAXED);
        if (fast)
            dwarf_check(out, n, *truncated, max, cap);
    }
    return n;
}

/* Writes the check's counts (see check_path). */
__attribute__((destructor)) static void dwarf_check_report(void)
{
    if (!check_path)
        return;
    char line[160];
    int len = snprintf(line, sizeof line, "cfi-check %ld %lu %lu %lu %lu\n", (long)getpid(),
                       check_walks, check_fast, check_fallback, check_mismatch);
    int fd = open(check_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0 && len > 0) {
        ssize_t w = write(fd, line, (size_t)len);
        (void)w;
    }
    if (fd >= 0)
        close(fd);
}

void mtr_unwind_fork_prepare(void)
{
    dwarf_locked_for_fork = pthread_rwlock_wrlock(&dwarf_lock) == 0;
}

void mtr_unwind_fork_parent(void)
{
    if (dwarf_locked_for_fork)
        pthread_rwlock_unlock(&dwarf_lock);
    dwarf_locked_for_fork = 0;
}

/* glibc's rwlock remembers its writer by thread id, which differs in the
 * child: unlocking there would not release it. Start afresh instead. */
void mtr_unwind_fork_child(void)
{
    pthread_rwlock_init(&dwarf_lock, NULL);
    dwarf_locked_for_fork = 0;
    check_walks = check_fast = check_fallback = check_mismatch = 0;
}

static int in_libc(uintptr_t pc)
{
    return pc >= libc_text_lo && pc < libc_text_hi;
}

/* A main-thread stack ends in start-up code: libc's __libc_start_call_main
 * (and __libc_start_main and the executable's _start, for DWARF walks).
 * Those frames would root every stack above main; drop them. Only when the
 * walk really reached start-up code (_start, or a frame-pointer chain that
 * ended at main's frame), and never down to nothing (blocks allocated by
 * start-up code itself keep their stack). */
static size_t trim_startup(uintptr_t *out, size_t n, int fp_reached_main)
{
    if (n == 0 || !main_stack_hi || mtr_tls.stack_hi != main_stack_hi || !libc_text_hi)
        return n;
    size_t k = n;
    if (out[k - 1] - entry_pc < START_SLACK)
        k--;
    else if (!fp_reached_main)
        return n;
    while (k > 0 && in_libc(out[k - 1]))
        k--;
    return k > 0 ? k : n;
}

MT_HOOK size_t mtr_unwind(uintptr_t *out, size_t max, int *truncated)
{
    int complete;
    size_t n;
    switch (__atomic_load_n(&unwind_mode, __ATOMIC_ACQUIRE)) {
    case MODE_DWARF:
        n = dwarf_walk(out, max, truncated);
        return *truncated ? n : trim_startup(out, n, 0);
    case MODE_AUTO:
        n = fp_walk(out, max, truncated, &complete);
        if (complete || *truncated)
            return *truncated ? n : trim_startup(out, n, complete);
        n = dwarf_walk(out, max, truncated);
        return *truncated ? n : trim_startup(out, n, 0);
    default:
        n = fp_walk(out, max, truncated, &complete);
        return *truncated ? n : trim_startup(out, n, complete);
    }
}

/* Loads libunwind and warms it up: its first unw_backtrace on a thread
 * allocates (trace cache, pthread key) and reads the modules' unwind
 * tables. Runs outside the malloc path, inside mtr_enter. */
static int load_libunwind(void)
{
#ifdef __SANITIZE_THREAD__
    /* Under ThreadSanitizer, libunwind's thread-exit destructor (its
     * per-thread cache) locks a mutex through TSan's interceptors after
     * TSan has torn the thread down, and crashes: frame pointers only. */
    return -1;
#endif
    /* libunwind opens a pipe at initialization and keeps it (it probes
     * memory by writing to it on its slower paths): its pipe2, read, write
     * and close are rebound before the first walk so that the pipe lives
     * at 200 and above and never reads or writes a descriptor of the
     * program's (unwpipe.c). A libunwind whose pipe cannot be guarded is
     * not used. */
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    unw_backtrace_fn f = h ? (unw_backtrace_fn)dlsym(h, "unw_backtrace") : NULL;
    if (f && mtr_unwpipe_guard(h) < 4)
        f = NULL;   /* pipe2, read, write and close: one slot each at least */
    if (f) {
        void *warm[DWARF_SLACK];
        f(warm, DWARF_SLACK);
    }
    if (!h)
        return -1;
    if (!f) {
        dlclose(h);
        return -1;
    }
    dwarf_backtrace = f;
    return 0;
}

/* libc's executable segment: the module that holds __libc_start_main. */
extern int __libc_start_main();

static int find_libc_text(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    if (info->dlpi_addr != (uintptr_t)base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            libc_text_lo = info->dlpi_addr + ph->p_vaddr;
            libc_text_hi = libc_text_lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

/* MT_UNWIND_* set by mtr_unwind_choose, 0: none. */
static int chosen;

void mtr_unwind_choose(int mode)
{
    chosen = mode;
}

void mtr_unwind_setup(void)
{
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return;
    mtr_enter();
    /* the mode chosen (attach), else MEMTRACE_UNWIND (none in privileged
     * processes) */
    int asked = chosen, mode = chosen;
    const char *m = chosen ? NULL : secure_getenv(mt_recconf_env(MT_RC_UNWIND));
    if (m && *m) {
        asked = 1;
        mode = mt_recconf_unwind(m);
        if (mode < 0)
            fprintf(stderr, "memtrace: %s=%s: expected %s; using dwarf\n",
                    mt_recconf_env(MT_RC_UNWIND), m, mt_recconf_expected(MT_RC_UNWIND));
    }
    int want = mode == MT_UNWIND_FP ? MODE_FP : mode == MT_UNWIND_AUTO ? MODE_AUTO : MODE_DWARF;
    Dl_info di;
    if (dladdr((void *)__libc_start_main, &di) && di.dli_fbase)
        dl_iterate_phdr(find_libc_text, di.dli_fbase);
    entry_pc = (uintptr_t)getauxval(AT_ENTRY);
    if (want != MODE_FP && load_libunwind() != 0) {
        const char *why = dlerror();
        if (asked)
            fprintf(stderr, "memtrace: cannot load libunwind.so.8 (%s); "
                    "using frame pointers\n", why ? why : "no unw_backtrace");
        want = MODE_FP;
    }
    if (want != MODE_FP && mtr_cfi_setup(&dwarf_lock) == 0)
        cfi_on = 1;
    const char *cp = secure_getenv("MTR_CFI_CHECK");
    if (cp && *cp && strlen(cp) < sizeof check_path_buf) {
        memcpy(check_path_buf, cp, strlen(cp) + 1);
        check_path = check_path_buf;
    }
    mtr_leave();
    __atomic_store_n(&unwind_mode, want, __ATOMIC_RELEASE);
}

void mtr_unwind_init_main_thread(void)
{
    struct mtr_thread *t = &mtr_tls;
    struct rlimit rl;
    uintptr_t hi = (uintptr_t)__libc_stack_end;
    uintptr_t size = (uintptr_t)1 << 30;

    if (!hi || syscall(SYS_gettid) != getpid())
        return;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < size)
        size = rl.rlim_cur;
    t->stack_hi = hi;
    t->stack_lo = hi > size ? hi - size : 0;
    main_stack_hi = hi;
}

/* ---------------------------------------------------------------------- */
/* pthread_create wrapper: learn each new thread's stack bounds.           */

struct thread_start {
    void *(*fn)(void *);
    void *arg;
};

static void record_bounds(void)
{
    pthread_attr_t a;
    void *addr;
    size_t size;

    mtr_enter();
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        if (pthread_attr_getstack(&a, &addr, &size) == 0) {
            mtr_tls.stack_lo = (uintptr_t)addr;
            mtr_tls.stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&a);
    }
    mtr_leave();
}

/* In a section of its own: stacks stop at it (see mtr_unwind), so traces
 * show the thread's start routine as the outermost frame. */
__attribute__((section("mt_tstart"), noinline)) static void *memtrace_thread_start(void *p)
{
    struct thread_start s = *(struct thread_start *)p;
    mtr_real.free(p);
    record_bounds();
    void *r = s.fn(s.arg);
    /* Uses r after the call, so the call is not turned into a jump: the
     * start routine's return address must lie in this section. */
    __asm__ volatile("" : : "r"(r) : "memory");
    return r;
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *,
                                 void *(*)(void *), void *);

__attribute__((visibility("default")))
int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                   void *(*fn)(void *), void *arg)
{
    static pthread_create_fn real;
    pthread_create_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        mtr_enter();
        f = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
        mtr_leave();
        if (!f)
            return EAGAIN;
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    struct thread_start *s = mtr_real.malloc(sizeof *s);
    if (!s)
        return f(th, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    int rc = f(th, attr, memtrace_thread_start, s);
    if (rc != 0)
        mtr_real.free(s);
    return rc;
}
