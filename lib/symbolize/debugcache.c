/*
 * debugcache.c - inflated copies of separate debug files in the name
 * cache's directory (debugcache.h).
 *
 * libdw inflates every zlib-compressed debug section of a debug file when
 * it opens it (libc6-dbg's libc: about 0.1 CPU s, two thirds of it in
 * zlib); the copy is that
 * file with those sections stored inflated, which libdw maps as it is.
 * It is made once per build-id, from the debug file dwarf.c found and
 * checked, and used for that build-id only. DWARF read from it is the
 * same DWARF, so names are byte for byte those of the shipped file.
 *
 * The same safety as the name cache's files (namecache.c): the directory
 * and the copy must be the caller's and writable by no one else, links are
 * never followed, a copy over MTS_DEBUGCACHE_MAX_FILE is neither read nor
 * written, and none is written once the copies in the directory would
 * pass MTS_DEBUGCACHE_MAX_TOTAL or the directory holds
 * MTS_NAMECACHE_MAX_FILES files (the modules copied so far keep theirs).
 * A copy is written to a temporary file renamed into place, and ends in a
 * trailer: "MTINFLT1", then the CRC-32 of everything before it (u32 LE),
 * checked whole before each use, with the build-id of its ELF notes.
 * Anything else is refused with one warning; a damaged copy is then made
 * again from the shipped file.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "debugcache.h"
#include "namecache.h"

#define TRAILER "MTINFLT1"
#define TRAILER_LEN (sizeof TRAILER - 1 + 4)
#define SUFFIX ".debug"

static void say(mt_warning_fn warn, void *ctx, const char *what, const char *path, const char *why)
{
    char msg[PATH_MAX + 256];
    snprintf(msg, sizeof msg, "inflated debug file %s %s: %s", path, what, why);
    if (warn)
        warn(ctx, msg);
    else
        fprintf(stderr, "%s\n", msg);
}

/* CRC-32 of fd's first len bytes (mapped: libdw maps the same pages
 * next); 0, or -1 when they cannot be read. */
static int crc_of(int fd, off_t len, uint32_t *out)
{
    if (len <= 0)
        return -1;
    unsigned char *p = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    uLong c = crc32(0L, Z_NULL, 0);
    for (off_t at = 0; at < len;) {   /* zlib takes at most 4 GiB a call */
        size_t n = len - at < ((off_t)1 << 30) ? (size_t)(len - at) : (size_t)1 << 30;
        c = crc32(c, p + at, (uInt)n);
        at += (off_t)n;
    }
    munmap(p, (size_t)len);
    *out = (uint32_t)c;
    return 0;
}

/* Is the copy open at fd (size bytes) whole and build-id id's? NULL, or why not. */
static const char *check_copy(int fd, off_t size, const unsigned char *id, size_t idlen)
{
    unsigned char t[TRAILER_LEN];
    uint32_t crc;
    if (size < (off_t)(TRAILER_LEN + 64) ||
        pread(fd, t, TRAILER_LEN, size - (off_t)TRAILER_LEN) != (ssize_t)TRAILER_LEN ||
        memcmp(t, TRAILER, sizeof TRAILER - 1) != 0)
        return "no trailer (truncated or not a copy)";
    if (crc_of(fd, size - (off_t)TRAILER_LEN, &crc) != 0)
        return "it could not be read whole";
    if (crc != ((uint32_t)t[8] | (uint32_t)t[9] << 8 | (uint32_t)t[10] << 16 |
                (uint32_t)t[11] << 24))
        return "its checksum does not match (damaged)";
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const void *fid = NULL;
    ssize_t flen = e ? dwelf_elf_gnu_build_id(e, &fid) : -1;
    int same = flen == (ssize_t)idlen && memcmp(fid, id, idlen) == 0;
    if (e)
        elf_end(e);
    return same ? NULL : "it is another build-id's";
}

/* The copy at path opened and checked: its descriptor; -1 when there is
 * none; -2 when it is refused (said), -3 when it is damaged (said: to be
 * made again). */
static int open_copy(int dfd, const char *path, const unsigned char *id, size_t idlen,
                     mt_warning_fn warn, void *ctx)
{
    int fd = openat(dfd, strrchr(path, '/') + 1,
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return -1;
        say(warn, ctx, "not used", path,
            errno == ELOOP ? "a symbolic link (not followed)" : strerror(errno));
        return -2;
    }
    struct stat st;
    const char *bad = NULL;
    int damaged = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        bad = "not a regular file";
    else if (!mts_namecache_private(&st))
        bad = "it belongs to another user or others may write to it";
    else if (st.st_size > MTS_DEBUGCACHE_MAX_FILE)
        bad = "larger than the cap";
    else
        damaged = (bad = check_copy(fd, st.st_size, id, idlen)) != NULL;
    if (!bad)
        return fd;
    close(fd);
    say(warn, ctx, "ignored", path, bad);
    return damaged ? -3 : -2;
}

/* The inflated size of the ELF file e if it has a compressed section
 * (headers and sections, a bound); 0 when it has none, -1 when it cannot
 * be read. */
static long long inflated_size(Elf *e)
{
    GElf_Ehdr eh;
    if (!gelf_getehdr(e, &eh))
        return -1;
    long long total = (long long)eh.e_ehsize + (long long)eh.e_phnum * eh.e_phentsize;
    int any = 0;
    for (Elf_Scn *s = elf_nextscn(e, NULL); s; s = elf_nextscn(e, s)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(s, &sh))
            return -1;
        long long size = sh.sh_type == SHT_NOBITS ? 0 : (long long)sh.sh_size;
        if (sh.sh_flags & SHF_COMPRESSED) {
            GElf_Chdr ch;
            if (!gelf_getchdr(s, &ch))
                return -1;
            size = (long long)ch.ch_size;
            any = 1;
        }
        total += size + (long long)sh.sh_addralign + (long long)eh.e_shentsize;
    }
    return any ? total : 0;
}

/* Writes the ELF file in (every compressed section inflated) to out, then
 * the trailer. 0, or -1 with *why. */
static int write_copy(Elf *in, int out, const char **why)
{
    *why = "libelf could not write it";
    Elf *o = elf_begin(out, ELF_C_WRITE, NULL);
    GElf_Ehdr eh;
    size_t phnum;
    int rc = -1;
    if (!o || !gelf_getehdr(in, &eh) || !gelf_newehdr(o, gelf_getclass(in)) ||
        elf_getphdrnum(in, &phnum) != 0)
        goto out;
    if (phnum > 0) {
        if (!gelf_newphdr(o, phnum))
            goto out;
        for (size_t i = 0; i < phnum; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(o, (int)i, &ph))
                goto out;
        }
    }
    for (Elf_Scn *s = elf_nextscn(in, NULL); s; s = elf_nextscn(in, s)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(s, &sh))
            goto out;
        if ((sh.sh_flags & SHF_COMPRESSED) && (elf_compress(s, 0, 0) != 1 || !gelf_getshdr(s, &sh))) {
            *why = "a section could not be inflated";
            goto out;
        }
        Elf_Scn *os = elf_newscn(o);
        if (!os)
            goto out;
        for (Elf_Data *d = elf_getdata(s, NULL); d; d = elf_getdata(s, d)) {
            Elf_Data *od = elf_newdata(os);
            if (!od)
                goto out;
            *od = *d;
        }
        if (!gelf_update_shdr(os, &sh))
            goto out;
    }
    GElf_Ehdr oh;
    if (!gelf_getehdr(o, &oh))
        goto out;
    memcpy(oh.e_ident, eh.e_ident, EI_NIDENT);
    oh.e_type = eh.e_type;
    oh.e_machine = eh.e_machine;
    oh.e_version = eh.e_version;
    oh.e_entry = eh.e_entry;
    oh.e_flags = eh.e_flags;
    oh.e_shstrndx = eh.e_shstrndx;
    if (!gelf_update_ehdr(o, &oh))
        goto out;
    off_t len = elf_update(o, ELF_C_WRITE);
    if (len <= 0)
        goto out;
    unsigned char t[TRAILER_LEN];
    uint32_t crc;
    memcpy(t, TRAILER, sizeof TRAILER - 1);
    if (crc_of(out, len, &crc) != 0) {
        *why = "it could not be read back";
        goto out;
    }
    for (int i = 0; i < 4; i++)
        t[8 + i] = (unsigned char)(crc >> (8 * i));
    errno = 0;
    if (pwrite(out, t, sizeof t, len) != (ssize_t)sizeof t) {
        *why = errno ? strerror(errno) : "short write";
        goto out;
    }
    rc = 0;
out:
    if (o)
        elf_end(o);
    return rc;
}

/* Makes the copy at path from fd; 0 when made, -1 (said when it failed,
 * not when it is not to be made). */
static int make_copy(int dfd, const char *path, int fd, mt_warning_fn warn, void *ctx)
{
    Elf *in = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    long long size = in ? inflated_size(in) : -1;
    int rc = -1;
    long long total;
    size_t files = mts_namecache_scan(dfd, SUFFIX, &total);
    if (size > 0 && size <= MTS_DEBUGCACHE_MAX_FILE && total + size <= MTS_DEBUGCACHE_MAX_TOTAL &&
        files < MTS_NAMECACHE_MAX_FILES) {
        char tmp[PATH_MAX + 200];
        const char *why = NULL;
        const char *base = strrchr(path, '/') + 1;
        int out = mts_namecache_create(dfd, base, tmp, sizeof tmp, &why);
        if (out >= 0)
            rc = mts_namecache_commit(dfd, out, tmp, base, write_copy(in, out, &why), &why);
        if (rc != 0)
            say(warn, ctx, "not written", path, why ? why : "cannot create it");
    }
    if (in)
        elf_end(in);
    return rc;
}

int mts_debugcache_open(const char *dir, const unsigned char *id, size_t idlen, char **name,
                        int *make, mt_warning_fn warn, void *warn_ctx)
{
    char path[PATH_MAX];
    const char *why;
    *make = 0;
    if (!dir || mts_namecache_path(path, sizeof path, dir, id, idlen, SUFFIX) != 0)
        return -1;
    int dfd = mts_namecache_open_dir(dir, 0, &why);
    if (dfd < 0) {
        *make = !why;   /* none yet: made with the copy */
        return -1;      /* (else the name cache says why) */
    }
    int fd = open_copy(dfd, path, id, idlen, warn, warn_ctx);
    close(dfd);
    *make = fd == -1 || fd == -3;
    char *copy_name = fd >= 0 ? strdup(path) : NULL;
    if (fd >= 0 && !copy_name) {
        close(fd);
        return -1;
    }
    if (fd >= 0) {
        free(*name);
        *name = copy_name;
    }
    return fd >= 0 ? fd : -1;
}

int mts_debugcache_make(const char *dir, const unsigned char *id, size_t idlen, int fd,
                        char **name, mt_warning_fn warn, void *warn_ctx)
{
    char path[PATH_MAX];
    const char *why;
    if (!dir || fd < 0 || mts_namecache_path(path, sizeof path, dir, id, idlen, SUFFIX) != 0)
        return fd;
    int dfd = mts_namecache_open_dir(dir, 1, &why);
    if (dfd < 0)
        return fd;   /* (the name cache says why) */
    int copy = make_copy(dfd, path, fd, warn, warn_ctx) == 0
                   ? open_copy(dfd, path, id, idlen, warn, warn_ctx) : -1;
    close(dfd);
    char *copy_name = copy >= 0 ? strdup(path) : NULL;
    if (!copy_name) {
        if (copy >= 0)
            close(copy);
        return fd;
    }
    close(fd);
    free(*name);
    *name = copy_name;
    return copy;
}
