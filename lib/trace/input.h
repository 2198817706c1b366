/*
 * input.h - the reader's byte source: a file descriptor read in large
 * blocks into a buffer that only grows when one packet does not fit, or a
 * caller's memory block used in place. The reader asks for "the next n bytes"
 * and gets a pointer that stays valid until it asks again.
 */
#ifndef MT_TRACE_INPUT_H
#define MT_TRACE_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct mt_input {
    int fd;              /* -1 when reading from memory */
    uint8_t *buf;        /* owned buffer (fd only) */
    size_t cap;
    const uint8_t *data; /* valid bytes are data[0..len) */
    size_t len;
    size_t pos;          /* next unconsumed byte in data */
    uint64_t base;       /* file offset of data[0] */
    int eof;             /* no more bytes will come */
    int error;           /* errno of a failed read, else 0 */
} mt_input;

void mt_input_init_fd(mt_input *in, int fd);
void mt_input_init_memory(mt_input *in, const void *data, size_t size);
void mt_input_free(mt_input *in);

/* Makes up to n bytes from the current position available at
 * in->data + in->pos; returns how many are (fewer than n only at the end of
 * the input or after a read error). Moves previously returned bytes. */
size_t mt_input_fill(mt_input *in, size_t n);

static inline uint64_t mt_input_offset(const mt_input *in)
{
    return in->base + in->pos;
}

#endif
