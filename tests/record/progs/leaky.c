/*
 * leaky.c - blocks with known fates at exit, one allocation site (a
 * function named after the fate) each, for tests/record/leaks.sh:
 *
 *   lost_dropped      a block whose only pointer was dropped
 *   lost_list_node    every node of a dropped linked list (40 nodes)
 *   lost_ring_node    a ring of 8 blocks pointing at each other, dropped
 *   lost_child        a block only a lost block points to
 *   held_global       a block a global points to
 *   held_interior     a block a global points into the middle of
 *   held_table        a heap table of pointers, held by a global
 *   held_table_entry  the 200 blocks of that table (reachable only through it)
 *   held_stack        a block a live frame of the exiting thread holds
 *   held_tls          a block a thread-local variable of the main thread holds
 *   held_thread_tls   a block another (still running) thread's TLS holds
 *   held_thread_stack a block another running thread holds on its stack
 *   held_thread_reg   (x86-64) a block another thread holds in a register only
 *   held_thread_redzone (x86-64) a block another thread holds only in the
 *                     red zone, the 128 bytes below its stack pointer that
 *                     a leaf function may use without moving it
 *   lost_big          a dropped 256 KiB block (malloc maps it by itself)
 *   lost_before_free  a dropped block right before a free chunk in one of
 *                     malloc's bins, whose list (in main_arena) points at
 *                     that chunk's header: the dropped block's last word
 *   held_big          a 256 KiB block a global holds
 *   held_by_big       a block only held_big points to
 *
 * Usage: leaky [MODE]; MODE exit (default: exit() from a frame holding
 * held_stack), thread-exit (exit() called by another thread), _exit
 * (_exit: no scan), fork (a child does the same and exits first),
 * blocked (a thread that blocks every signal is running at exit), sleep
 * (prints "ready", then waits to be killed: for 'memtrace ctl PID scan';
 * meanwhile a thread that blocks every signal runs, and another sleeps in
 * nanosleep and prints "EINTR" if a sleep ends early), seccomp (exit, under
 * a seccomp filter that kills the process on ptrace, as a hardened
 * service's may).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

struct node { struct node *next; char pad[40]; };

void *g_held;
char *g_interior;
void **g_table;
__thread void *t_held;
static volatile int threads_ready;

NOINLINE void *lost_dropped(void) { return malloc(100); }
NOINLINE struct node *lost_list_node(void) { return calloc(1, sizeof(struct node)); }
NOINLINE struct node *lost_ring_node(void) { return calloc(1, sizeof(struct node)); }
NOINLINE void *lost_child(void) { return malloc(72); }
NOINLINE void *held_global(void) { return malloc(200); }
NOINLINE char *held_interior(void) { return malloc(300); }
NOINLINE void **held_table(void) { return calloc(200, sizeof(void *)); }
NOINLINE void *held_table_entry(void) { return malloc(48); }
NOINLINE void *held_stack(void) { return malloc(120); }
NOINLINE void *held_tls(void) { return malloc(88); }
NOINLINE void *held_thread_tls(void) { return malloc(96); }
NOINLINE void *held_thread_stack(void) { return malloc(104); }
NOINLINE void *held_thread_reg(void) { return malloc(112); }
NOINLINE void *held_thread_redzone(void) { return malloc(144); }
NOINLINE void *lost_big(void) { return malloc(256 << 10); }
NOINLINE void *lost_before_free(void) { return malloc(5000); }
static void *volatile g_after;
NOINLINE void **held_big(void) { return calloc(1, 256 << 10); }
NOINLINE void *held_by_big(void) { return malloc(136); }
void **g_big;

static void scrub(void)
{
    /* Leave no stale copy of a dropped pointer in dead stack. */
    volatile char junk[4096];
    memset((char *)junk, 0, sizeof junk);
}

NOINLINE static void make_lost(void)
{
    for (int i = 0; i < 3; i++) {
        void *p = lost_dropped();
        __asm__ volatile("" : : "r"(p) : "memory");
    }
    struct node *head = NULL;
    for (int i = 0; i < 40; i++) {
        struct node *n = lost_list_node();
        n->next = head;
        head = n;
    }
    struct node *first = lost_ring_node(), *prev = first;
    for (int i = 1; i < 8; i++) {
        struct node *n = lost_ring_node();
        prev->next = n;
        prev = n;
    }
    prev->next = first;
    void *big = lost_big();
    __asm__ volatile("" : : "r"(big) : "memory");
    struct node *parent = lost_list_node();
    parent->next = lost_child();
    parent = NULL;
    head = first = prev = NULL;
}

NOINLINE static void make_held(void)
{
    g_held = held_global();
    g_interior = held_interior() + 150;
    g_table = held_table();
    for (int i = 0; i < 200; i++)
        g_table[i] = held_table_entry();
    t_held = held_tls();
    g_big = held_big();
    g_big[1000] = held_by_big();
}

static void *thread_tls_main(void *arg)
{
    (void)arg;
    t_held = held_thread_tls();
    __atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);
    for (;;)
        pause();
    return NULL;
}

static void *thread_stack_main(void *arg)
{
    (void)arg;
    void *volatile keep = held_thread_stack();
    __atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);
    for (;;)
        pause();
    return keep;
}

#if defined(__x86_64__)
static void *thread_reg_main(void *arg)
{
    (void)arg;
    void *p = held_thread_reg();
    __atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);
    /* Spin with the pointer in r12 only. */
    __asm__ volatile("mov %0, %%r12\n\txor %0, %0\n1:\tpause\n\tjmp 1b" : "+r"(p) : : "r12", "memory");
    return NULL;
}

static void *thread_redzone_main(void *arg)
{
    (void)arg;
    void *p = held_thread_redzone();
    __atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);
    /* Spin with the pointer 64 bytes below the stack pointer only (as a
     * leaf function keeps its locals), no register holding it: malloc may
     * have left copies in the scratch registers and the vector ones, which
     * the scan reads too, so those are cleared. */
    __asm__ volatile("mov %0, -64(%%rsp)\n\txor %0, %0\n\t"
                     "xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\txor %%edx, %%edx\n\t"
                     "xor %%esi, %%esi\n\txor %%edi, %%edi\n\txor %%r8d, %%r8d\n\t"
                     "xor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\txor %%r11d, %%r11d\n\t"
                     "pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\t"
                     "pxor %%xmm3, %%xmm3\n\tpxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
                     "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\tpxor %%xmm8, %%xmm8\n\t"
                     "pxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
                     "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\tpxor %%xmm14, %%xmm14\n\t"
                     "pxor %%xmm15, %%xmm15\n"
                     "1:\tpause\n\tjmp 1b"
                     : "+r"(p)
                     :
                     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "xmm0", "xmm1",
                       "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                       "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory");
    return NULL;
}
#endif

static void *blocker_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    __atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);
    for (;;)
        usleep(100000);
    return NULL;
}

static void *sleeper_main(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);
    for (;;) {
        struct timespec ts = { 86400, 0 };
        if (nanosleep(&ts, NULL) != 0 && errno == EINTR) {
            printf("EINTR\n");
            fflush(stdout);
        }
    }
    return NULL;
}

static void *exiter_main(void *arg)
{
    (void)arg;
    void *volatile keep = held_stack();
    scrub();
    exit(0);
    return keep;
}

/* Just before the exit (no malloc after it could take the free chunk):
 * [lost_before_free][100 KB freed: in a bin][kept, so that the freed one
 * is not the top]. */
NOINLINE static void drop_before_free(void)
{
    void *a = lost_before_free();
    void *b = malloc(100000);
    g_after = malloc(5000);
    __asm__ volatile("" : : "r"(a), "r"(b) : "memory");
    free(b);
}

NOINLINE static void finish(const char *mode)
{
    void *volatile keep = held_stack();
    drop_before_free();
    scrub();
    if (!strcmp(mode, "_exit"))
        _exit(0);
    if (!strcmp(mode, "sleep")) {
        pthread_t t;
        int want = __atomic_load_n(&threads_ready, __ATOMIC_ACQUIRE) + 2;
        pthread_create(&t, NULL, sleeper_main, NULL);
        pthread_create(&t, NULL, blocker_main, NULL);
        while (__atomic_load_n(&threads_ready, __ATOMIC_ACQUIRE) < want)
            usleep(1000);
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (!strcmp(mode, "thread-exit")) {
        pthread_t t;
        pthread_create(&t, NULL, exiter_main, NULL);
        for (;;)
            pause();
    }
    exit(0);
    (void)keep;
}

static void run(const char *mode)
{
    pthread_t t;
    make_lost();
    scrub();
    make_held();
    pthread_create(&t, NULL, thread_tls_main, NULL);
    pthread_create(&t, NULL, thread_stack_main, NULL);
    int want = 2;
    if (!strcmp(mode, "blocked")) {
        pthread_create(&t, NULL, blocker_main, NULL);
        want++;
    }
#if defined(__x86_64__)
    pthread_create(&t, NULL, thread_reg_main, NULL);
    pthread_create(&t, NULL, thread_redzone_main, NULL);
    want += 2;
#endif
    while (__atomic_load_n(&threads_ready, __ATOMIC_ACQUIRE) < want)
        usleep(1000);
    finish(mode);
}

/* A seccomp filter: ptrace kills the process; everything else is allowed. */
static void no_ptrace(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof f[0], f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("leaky: seccomp");
        exit(3);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    if (!strcmp(mode, "seccomp")) {
        no_ptrace();
        mode = "exit";
    }
    if (!strcmp(mode, "fork")) {
        pid_t c = fork();
        if (c == 0)
            run("exit");
        int st;
        waitpid(c, &st, 0);
        mode = "exit";
    }
    run(mode);
    return 0;
}
