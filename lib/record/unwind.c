/*
 * unwind.c - frame-pointer unwinding of the allocating thread's stack, and
 * the stack bounds that keep it from ever reading outside the stack.
 *
 * Why frame pointers: a walk costs about 1 ns per frame, takes no lock and
 * allocates nothing, which is what a malloc slow path needs; DWARF
 * unwinders cost 6-100x more per frame and some allocate on first use.
 * Code built without frame pointers breaks or shortens the chain (see
 * docs/recorder.md).
 *
 * Bounds: the main thread's come from __libc_stack_end and RLIMIT_STACK;
 * other threads' are read by a pthread_create wrapper in the new thread
 * before its start routine runs (pthread_getattr_np allocates and takes a
 * lock, so it must never run inside malloc). A thread with unknown bounds
 * (raw clone, alternate signal stack) gets only the allocation site.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "real.h"
#include "unwind.h"

extern char __start_mt_hooks[] MT_HIDDEN;
extern char __stop_mt_hooks[] MT_HIDDEN;
extern char __start_mt_tstart[] MT_HIDDEN;
extern char __stop_mt_tstart[] MT_HIDDEN;
extern void *__libc_stack_end;

static int in_hooks(uintptr_t pc)
{
    return pc >= (uintptr_t)__start_mt_hooks && pc < (uintptr_t)__stop_mt_hooks;
}

size_t mtr_unwind(uintptr_t *out, size_t max, int *truncated)
{
    struct mtr_thread *t = &mtr_tls;
    uintptr_t *fp = __builtin_frame_address(0);
    uintptr_t lo = t->stack_lo, hi = t->stack_hi;
    int known = hi && (uintptr_t)fp >= lo && (uintptr_t)fp < hi;
    int skipping = 1;
    size_t n = 0;

    *truncated = 0;
    while (fp) {
        if (known && (uintptr_t)fp + 2 * sizeof(uintptr_t) > hi)
            break;
        uintptr_t ret = fp[1];
        uintptr_t *next = (uintptr_t *)fp[0];
        if (ret == 0)
            break;
        if (ret >= (uintptr_t)__start_mt_tstart && ret < (uintptr_t)__stop_mt_tstart)
            break;   /* our thread trampoline: the thread's own code ends here */
        if (skipping && in_hooks(ret)) {
            /* still inside the recorder's own frames */
        } else {
            skipping = 0;
            if (n == max) {
                *truncated = 1;
                break;
            }
            out[n++] = ret;
            if (!known)
                break;
        }
        if ((uintptr_t)next <= (uintptr_t)fp || ((uintptr_t)next & 7))
            break;
        if (!known && !skipping)
            break;
        fp = next;
    }
    return n;
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
    mtr_real_free(p);
    record_bounds();
    return s.fn(s.arg);
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
    struct thread_start *s = mtr_real_malloc(sizeof *s);
    if (!s)
        return f(th, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    int rc = f(th, attr, memtrace_thread_start, s);
    if (rc != 0)
        mtr_real_free(s);
    return rc;
}
