/*
 * rawframe.h - the raw, module-relative frame that the recorder writes for a
 * return address and that `memtrace symbolize` replaces with functions,
 * files and lines (docs/format.md, "Raw frames"):
 *
 *   filename   the module's absolute path ("/usr/lib/x86_64-linux-gnu/libz.so.1")
 *   defname    "BASENAME+0xOFFSET", OFFSET = return address - load bias, in hex
 *              (the module's own virtual address, what addr2line -e takes)
 *   line       0 (none)
 *   start_char low 8 bits, end_char high 10 bits of the module's fingerprint:
 *              18 bits of its GNU build-id, else of its file size; 0 = unknown
 *
 * Header-only so that the recorder and the symbolizer share it without
 * linking each other.
 */
#ifndef MT_TRACE_RAWFRAME_H
#define MT_TRACE_RAWFRAME_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Fingerprint of a module from its build-id bytes (len > 0) or, without
 * one, from its size in bytes. Never 0. */
static inline uint32_t mt_raw_fingerprint(const unsigned char *build_id, size_t len,
                                          uint64_t file_size)
{
    uint32_t h = 2166136261u;   /* FNV-1a over whatever identifies the file */
    if (len > 0) {
        for (size_t i = 0; i < len; i++)
            h = (h ^ build_id[i]) * 16777619u;
    } else {
        for (int i = 0; i < 8; i++)
            h = (h ^ (unsigned char)(file_size >> (8 * i))) * 16777619u;
        h ^= 0x5a5a5u;   /* a size never looks like a build-id by accident */
    }
    h = (h ^ (h >> 18)) & 0x3FFFFu;
    return h ? h : 1;
}

static inline void mt_raw_fingerprint_split(uint32_t fp, uint32_t *start_char,
                                            uint32_t *end_char)
{
    *start_char = fp & 0xFFu;
    *end_char = (fp >> 8) & 0x3FFu;
}

static inline uint32_t mt_raw_fingerprint_join(uint32_t start_char, uint32_t end_char)
{
    return (start_char & 0xFFu) | (end_char & 0x3FFu) << 8;
}

/* Is (filename, defname, line) a raw frame? Sets *offset when it is. */
static inline int mt_raw_parse(const char *filename, const char *defname, uint32_t line,
                               uint64_t *offset)
{
    if (line != 0 || !filename || !defname || filename[0] != '/')
        return 0;
    const char *base = strrchr(filename, '/') + 1;
    size_t blen = strlen(base);
    if (blen == 0 || strncmp(defname, base, blen) != 0 || strncmp(defname + blen, "+0x", 3))
        return 0;
    const char *hex = defname + blen + 3;
    if (!*hex || strspn(hex, "0123456789abcdef") != strlen(hex) || strlen(hex) > 16)
        return 0;
    *offset = strtoull(hex, NULL, 16);
    return 1;
}

#endif
