/*
 * fdsink.h - writing bytes to a file descriptor: all of them (short writes
 * and EINTR retried), directly or through a buffer. The buffered sink is
 * the write callback of mt_writer_options (include/memtrace/trace.h) for
 * those that write a whole trace at once ('memtrace recode', the
 * symbolizer's rewrite): fewer system calls than one per packet.
 * Header only: the recorder writes its trace with mt_write_full.
 */
#ifndef MT_COMMON_FDSINK_H
#define MT_COMMON_FDSINK_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes p[0..len) to fd: 0, or -1 with errno (EIO for a write that
 * wrote nothing). *written (if not NULL) grows by each byte written, also
 * on failure. */
static inline int mt_write_full(int fd, const void *p, size_t len, size_t *written)
{
    const unsigned char *s = p;
    while (len > 0) {
        ssize_t n = write(fd, s, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        s += n;
        len -= (size_t)n;
        if (written)
            *written += (size_t)n;
    }
    return 0;
}

/* A buffer of cap bytes in front of fd. */
typedef struct mt_fdsink {
    int fd;
    size_t len, cap;
    unsigned char buf[];
} mt_fdsink;

/* A sink into fd with a cap-byte buffer, or NULL when out of memory.
 * Free it with free() after mt_fdsink_flush. */
static inline mt_fdsink *mt_fdsink_new(int fd, size_t cap)
{
    mt_fdsink *s = malloc(sizeof *s + cap);
    if (s) {
        s->fd = fd;
        s->len = 0;
        s->cap = cap;
    }
    return s;
}

/* What is buffered, written: 0 or -1 with errno. */
static inline int mt_fdsink_flush(mt_fdsink *s)
{
    int rc = mt_write_full(s->fd, s->buf, s->len, NULL);
    s->len = 0;
    return rc;
}

/* Appends p[0..len) (ctx: the mt_fdsink), writing the buffer out when it
 * is full and what would not fit directly: 0 or -1 with errno. */
static inline int mt_fdsink_write(void *ctx, const void *p, size_t len)
{
    mt_fdsink *s = ctx;
    if (s->len + len > s->cap && mt_fdsink_flush(s) < 0)
        return -1;
    if (len > s->cap)
        return mt_write_full(s->fd, p, len, NULL);
    memcpy(s->buf + s->len, p, len);
    s->len += len;
    return 0;
}

#endif
