/*
 * input.c - unit test of lib/trace/input.c, the reader's byte source: a
 * memory block is read in place; a pipe that delivers its bytes in short
 * writes gives every byte asked for, the right bytes at the right file
 * offsets, across a request larger than one read block (the buffer grows)
 * and many small ones (the tail slides to the front); the end gives what
 * is left; a descriptor that cannot be read gives nothing and its errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/input.h"
#include "../check.h"

#define TOTAL 700001

static unsigned char byte_at(size_t off)
{
    return (unsigned char)(off * 31 + 7 + (off >> 9));
}

int main(void)
{
    unsigned char mem[100];
    for (size_t i = 0; i < sizeof mem; i++)
        mem[i] = byte_at(i);
    mt_input in;
    mt_input_init_memory(&in, mem, sizeof mem);
    size_t got = mt_input_fill(&in, 10);
    CHECK(got == 10 && in.data + in.pos == mem, "memory: 10 bytes given in place");
    in.pos += 95;
    got = mt_input_fill(&in, 10);
    CHECK(got == 5 && mt_input_offset(&in) == 95 && in.data[in.pos] == byte_at(95),
          "memory: at offset 95 of 100, 5 bytes left (%zu)", got);
    mt_input_free(&in);

    /* A pipe written in writes of 777 bytes by another process. */
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        unsigned char chunk[777];
        for (size_t off = 0; off < TOTAL;) {
            size_t n = TOTAL - off < sizeof chunk ? TOTAL - off : sizeof chunk;
            for (size_t i = 0; i < n; i++)
                chunk[i] = byte_at(off + i);
            ssize_t w = write(fds[1], chunk, n);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    mt_input_init_fd(&in, fds[0]);
    int wrong = 0;
    /* one request larger than a read block (256 KiB), then steps of 1000
     * bytes of which 999 are consumed (the tail slides) */
    got = mt_input_fill(&in, 300000);
    for (size_t i = 0; i < got; i++)
        wrong += in.data[in.pos + i] != byte_at(mt_input_offset(&in) + i);
    CHECK(got == 300000 && wrong == 0, "pipe: 300000 bytes at once from writes of 777 (%zu, %d wrong)",
          got, wrong);
    in.pos += 300000;
    size_t steps = 0, short_at = 0;
    for (;;) {
        uint64_t off = mt_input_offset(&in);
        got = mt_input_fill(&in, 1000);
        for (size_t i = 0; i < got; i++)
            wrong += in.data[in.pos + i] != byte_at(off + i);
        if (got < 1000) {
            short_at = off;
            break;
        }
        in.pos += 999;
        steps++;
    }
    /* the last full request starts at TOTAL - 1000 at most */
    CHECK(wrong == 0 && got == TOTAL - short_at && in.eof && !in.error,
          "pipe: %zu requests of 1000 bytes, every byte at its offset, the last %zu at the end "
          "(%d wrong)", steps, got, wrong);
    mt_input_free(&in);
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the writer wrote everything");

    mt_input_init_fd(&in, 987654);   /* no such descriptor */
    got = mt_input_fill(&in, 10);
    CHECK(got == 0 && in.eof && in.error == EBADF, "an unreadable descriptor: 0 bytes, EBADF (%s)",
          strerror(in.error));
    mt_input_free(&in);
    return failures != 0;
}
