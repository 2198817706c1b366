/*
 * closefds.c - a daemon's start: closes every descriptor from 3 up (what
 * it inherited, and whatever a preloaded library opened), opens a socket
 * pair, then allocates for a while with stacks of many frames while it
 * passes bytes through the pair. Checks that each byte read is the byte
 * written and that nothing else arrives on either end: a library that kept
 * using descriptor numbers it had before the close would read the
 * program's bytes or write its own into the program's stream.
 *
 *   closefds ROUNDS
 * Prints "pipe N" for each pipe among its descriptors from 3 up before it
 * closes them, "fds SV0 SV1", and at the end "ok" (exit 0) or what went
 * wrong (exit 1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int sv[2];

/* A frame of its own per level: stacks of depth levels at the malloc. */
__attribute__((noinline)) static size_t deep(int level, size_t n)
{
    if (level > 0) {
        size_t r = deep(level - 1, n + 1);
        __asm__ volatile("" : : "r"(r) : "memory");
        return r + 1;
    }
    char *p = malloc(64 + n % 4000);
    if (!p)
        return 0;
    p[0] = (char)n;
    size_t r = (size_t)p[0];
    free(p);
    return r;
}

/* Nothing may be waiting on fd: returns 0, or prints what came. */
static int quiet(int fd, const char *which)
{
    char buf[64];
    ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (k > 0) {
        printf("unexpected %zd bytes on %s\n", k, which);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 2000;
    struct rlimit rl;
    long maxfd = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (long)rl.rlim_cur : 65536;
    for (long fd = 3; fd < maxfd; fd++) {
        struct stat st;
        if (fstat((int)fd, &st) == 0 && S_ISFIFO(st.st_mode))
            printf("pipe %ld\n", fd);
    }
    for (long fd = 3; fd < maxfd; fd++)
        close((int)fd);
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        printf("socketpair: %s\n", strerror(errno));
        return 1;
    }
    printf("fds %d %d\n", sv[0], sv[1]);
    fflush(stdout);
    int bad = 0;
    size_t sink = 0;
    for (long i = 0; i < rounds && !bad; i++) {
        char c = (char)('a' + i % 26), got = 0;
        if (send(sv[0], &c, 1, 0) != 1) {
            printf("send: %s\n", strerror(errno));
            return 1;
        }
        for (int k = 0; k < 20; k++)
            sink += deep(20 + (int)((i + k) % 80), (size_t)i);
        if (recv(sv[1], &got, 1, MSG_DONTWAIT) != 1) {
            printf("round %ld: the byte written is gone\n", i);
            bad = 1;
        } else if (got != c) {
            printf("round %ld: read %d, wrote %d\n", i, got, c);
            bad = 1;
        }
        bad |= quiet(sv[0], "the writing end") | quiet(sv[1], "the reading end");
    }
    printf("%s\n", bad ? "FAILED" : "ok");
    return bad || sink == (size_t)-1;
}
