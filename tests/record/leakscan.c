/*
 * leakscan.c - unit test of the leak scan at exit (lib/record/leaks*.c),
 * linked with the recorder's objects, so that the sanitizer stages run the
 * scan itself under ASan and UBSan (preloaded, the recorder's malloc would
 * not be the program's there). A child starts tracing with MEMTRACE_LEAKS=1
 * at rate 1, drops a block and a list, keeps a block and the block it points
 * to in globals, and exits; the parent reads the child's trace back, each
 * allocation with its verdict (sizes tell the blocks apart), and checks:
 * no held block is ever called lost (the invariant, whatever the mode);
 * with glibc's malloc underneath (heap mode), every dropped block is lost.
 * Under a sanitizer the allocator is the sanitizer's (conservative mode).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memtrace/record.h"
#include "memtrace/trace.h"

static int failures;
#define CHECK(cond, ...) do { \
    if (cond) { printf("PASS: "); printf(__VA_ARGS__); printf("\n"); } \
    else { failures++; printf("FAIL: "); printf(__VA_ARGS__); printf("  [%s:%d]\n", __FILE__, __LINE__); } \
} while (0)

enum { DROPPED = 1001, NODE = 1002, HELD = 1003, HELD_CHILD = 1004, NODES = 30 };
void **held;

__attribute__((noinline)) static void make_lost(void)
{
    void *p = malloc(DROPPED);
    __asm__ volatile("" : : "r"(p) : "memory");
    void **head = NULL;
    for (int i = 0; i < NODES; i++) {
        void **n = malloc(NODE);
        *n = head;
        head = n;
    }
    __asm__ volatile("" : : "r"(head) : "memory");
}

__attribute__((noinline)) static void scrub(void)
{
    volatile char junk[8192];
    memset((char *)junk, 0, sizeof junk);
}

static void child(const char *path)
{
    setenv("MEMTRACE_LEAKS", "1", 1);
    if (memtrace_start_tracing(path, 1.0, NULL) != 0)
        _exit(3);
    make_lost();
    scrub();
    held = malloc(HELD);
    held[0] = malloc(HELD_CHILD);
    exit(0);
}

int main(void)
{
#if defined(__SANITIZE_THREAD__)
    printf("the scan stops threads with a signal TSan intercepts: not under TSan\n");
    return 77;
#endif
    char dir[] = "/tmp/mt-leakscan.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256], side[300];
    snprintf(path, sizeof path, "%s/t.ctf", dir);
    snprintf(side, sizeof side, "%s.leaks", path);
    pid_t pid = fork();
    if (pid == 0)
        child(path);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child exits 0 after the scan");
    FILE *f = fopen(side, "r");
    char line[256] = "", mode[32] = "";
    if (f) {
        if (fgets(line, sizeof line, f) && fgets(line, sizeof line, f))
            sscanf(line, "scan %*s %31s", mode);
        fclose(f);
    }
    CHECK(mode[0], "the child wrote its verdicts (mode %s)", mode);
    int heap = !strcmp(mode, "heap");

    char *err = NULL;
    mt_reader *r = mt_reader_open(path, NULL, &err);
    CHECK(r != NULL, "the trace reads%s%s", err ? ": " : "", err ? err : "");
    int n[5][3];   /* per kind of block: none, lost, reachable */
    memset(n, 0, sizeof n);
    mt_event ev;
    while (r && mt_reader_next(r, &ev) == 1) {
        if (ev.kind != MT_EVENT_ALLOC)
            continue;
        int k = ev.length == DROPPED ? 1 : ev.length == NODE ? 2 : ev.length == HELD ? 3
                : ev.length == HELD_CHILD ? 4 : 0;
        if (ev.verdict >= 0 && ev.verdict <= 2)
            n[k][ev.verdict]++;
    }
    mt_timedelta t;
    CHECK(r && mt_reader_scan(r, &t), "the reader has the scan");
    mt_reader_close(r);
    CHECK(n[3][MT_VERDICT_LOST] == 0 && n[4][MT_VERDICT_LOST] == 0,
          "no held block is called lost (held: %d reachable, child: %d reachable)",
          n[3][MT_VERDICT_REACHABLE], n[4][MT_VERDICT_REACHABLE]);
    CHECK(n[3][MT_VERDICT_REACHABLE] == 1 && n[4][MT_VERDICT_REACHABLE] == 1,
          "both held blocks are reachable");
    CHECK(n[2][MT_VERDICT_LOST] + n[1][MT_VERDICT_LOST] > 0,
          "dropped blocks are found lost (%d of %d list nodes, %d of 1 block)",
          n[2][MT_VERDICT_LOST], NODES, n[1][MT_VERDICT_LOST]);
    if (heap)
        CHECK(n[2][MT_VERDICT_LOST] == NODES && n[1][MT_VERDICT_LOST] == 1,
              "heap mode: every dropped block is lost");
    unlink(side);
    unlink(path);
    char rss[300];
    snprintf(rss, sizeof rss, "%s.rss", path);
    unlink(rss);
    rmdir(dir);
    return failures ? 1 : 0;
}
