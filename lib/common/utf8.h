/*
 * utf8.h - the one UTF-8 validator: the length of the well-formed
 * character at a place, for the escaper (lib/present/escape.c, whose
 * public mt_utf8_char is this) and the protobuf writer's strings
 * (protowire.c). Header only.
 */
#ifndef MEMTRACE_COMMON_UTF8_H
#define MEMTRACE_COMMON_UTF8_H

#include <stddef.h>

/* The length (1 to 4) of the well-formed UTF-8 character at str (n bytes
 * there), or 0 when it is not one: a stray continuation byte, an overlong
 * form, a surrogate, past U+10FFFF or cut short. */
static inline size_t mt_utf8_len(const char *str, size_t n)
{
    const unsigned char *p = (const unsigned char *)str;
    if (n == 0)
        return 0;
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t need;
    unsigned lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
        need = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        need = 3;
        if (c == 0xe0)
            lo = 0xa0;   /* overlong below U+0800 */
        else if (c == 0xed)
            hi = 0x9f;   /* surrogates U+D800..U+DFFF */
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 4;
        if (c == 0xf0)
            lo = 0x90;   /* overlong below U+10000 */
        else if (c == 0xf4)
            hi = 0x8f;   /* past U+10FFFF */
    } else {
        return 0;        /* continuation byte, overlong lead (C0, C1), F5..FF */
    }
    if (n < need || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return need;
}

#endif
