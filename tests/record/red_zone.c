/*
 * red_zone.c - the leak scan (lib/record/leakscan.c, mtr_lk_mark) reads a
 * stopped thread's stack from 128 bytes below its stack pointer: the red
 * zone, where a leaf function keeps its locals without moving the stack
 * pointer (x86-64 ABI; signal frames skip it, so it is intact when the
 * thread is stopped). On a stack made here (a guard page, then the
 * stack), a block whose only pointer is 64 bytes below the thread's stack
 * pointer is reachable, one whose only pointer is 256 bytes below (dead
 * stack) is lost, one held 64 bytes above (a live frame) is reachable.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record/leaks.h"
#include "../check.h"

/* One scan: the thread's stack pointer at sp, a pointer to the block at
 * sp + off; the block's verdict (MTR_LK_*). */
static int verdict_with_pointer_at(long off)
{
    long page = sysconf(_SC_PAGESIZE);
    /* guard page, two pages of stack; the block on a page of its own */
    char *m = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *blk = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || blk == MAP_FAILED || mprotect(m, (size_t)page, PROT_NONE) != 0)
        return -1;
    char *lo = m + page, *hi = m + 3 * page;
    uintptr_t sp = (uintptr_t)hi - 1024;
    uintptr_t target = (uintptr_t)blk + 16;
    memcpy((void *)(sp + off), &target, sizeof target);

    struct mtr_lk_map maps[2] = {
        {(uintptr_t)m, (uintptr_t)lo, 0, 0, 1, MTR_LK_PLAIN},
        {(uintptr_t)lo, (uintptr_t)hi, 1, 1, 1, MTR_LK_PLAIN},
    };
    struct mtr_lk_maps ms = {maps, 2, 0};
    static struct mtr_lk_thread th;
    memset(&th, 0, sizeof th);
    th.tid = 1;
    th.answered = 1;
    th.sp = sp;
    struct mtr_lk_threads ts = {&th, 1};
    struct mtr_lk_input in;
    memset(&in, 0, sizeof in);
    in.maps = &ms;
    in.threads = &ts;
    in.glibc = 0;   /* conservative: the sampled blocks are the nodes */
    struct mtr_lk_block b = {(uintptr_t)blk, (uintptr_t)blk + 64, 1, 0};
    struct mtr_lk_result res;
    memset(&res, 0, sizeof res);
    int rc = mtr_lk_mark(&in, &b, 1, &res);
    munmap(m, 3 * (size_t)page);
    munmap(blk, (size_t)page);
    return rc == 0 ? (int)b.verdict : -1;
}

int main(void)
{
    int v = verdict_with_pointer_at(-64);
    CHECK(v == MTR_LK_REACHABLE,
          "a block held only 64 bytes below a stopped thread's stack pointer (its red zone) is reachable (verdict %d)", v);
    v = verdict_with_pointer_at(-256);
    CHECK(v == MTR_LK_LOST,
          "a block whose only pointer is 256 bytes below the stack pointer (dead stack) is lost (verdict %d)", v);
    v = verdict_with_pointer_at(64);
    CHECK(v == MTR_LK_REACHABLE,
          "a block held 64 bytes above the stack pointer (a live frame) is reachable (verdict %d)", v);
    return failures ? 1 : 0;
}
