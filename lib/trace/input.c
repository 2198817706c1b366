/*
 * input.c - buffered byte source for the reader (see input.h).
 *
 * Reading uses read(2) into a buffer of READ_BLOCK bytes rather than mmap:
 * memory stays bounded for pipes and huge files, and large sequential reads
 * cost less than the page faults of a fresh mapping.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "input.h"

#define READ_BLOCK (256 * 1024)

void mt_input_init_fd(mt_input *in, int fd)
{
    memset(in, 0, sizeof *in);
    in->fd = fd;
}

void mt_input_init_memory(mt_input *in, const void *data, size_t size)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    in->data = data;
    in->len = size;
    in->eof = 1;
}

void mt_input_free(mt_input *in)
{
    free(in->buf);
    in->buf = NULL;
}

size_t mt_input_fill(mt_input *in, size_t n)
{
    MT_ASSERT(in->pos <= in->len);   /* the reader consumes only what it was given */
    size_t have = in->len - in->pos;
    if (have >= n || in->eof)
        return have < n ? have : n;
    /* Slide the unconsumed tail to the front of the buffer. */
    if (in->pos > 0) {
        if (have > 0)
            memmove(in->buf, in->buf + in->pos, have);
        in->base += in->pos;
        in->len = have;
        in->pos = 0;
    }
    while (in->len < n && !in->eof) {
        if (in->len == in->cap) {
            /* Grow only when the buffer is full of real bytes: a packet
             * that claims a huge size costs memory only if the bytes exist. */
            size_t cap = in->cap ? in->cap * 2 : READ_BLOCK;
            uint8_t *buf = realloc(in->buf, cap);
            if (!buf) {
                in->error = ENOMEM;
                in->eof = 1;
                break;
            }
            in->buf = buf;
            in->cap = cap;
            in->data = buf;
        }
        ssize_t got = read(in->fd, in->buf + in->len, in->cap - in->len);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            in->error = errno;
            in->eof = 1;
        } else if (got == 0) {
            in->eof = 1;
        } else {
            in->len += (size_t)got;
        }
    }
    MT_ASSERT(in->fd < 0 || in->len <= in->cap);
    have = in->len - in->pos;
    return have < n ? have : n;
}
