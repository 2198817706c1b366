/*
 * namecache.c - the name cache's files: one per module build-id in the
 * cache directory (the CLI's default: $XDG_CACHE_HOME/memtrace/names),
 * named by the build-id in hex, holding the chains the module's debug
 * information gave for the offsets symbolized so far; a module without
 * debug information here has HEX.sym instead, the names its symbol table
 * gave (namecache.h, mts_names_from).
 *
 * A cache file is the caller's own: the directory and the file must belong
 * to the caller and be writable by no one else; links are never followed
 * (O_NOFOLLOW); the path to the directory is walked one component at a
 * time along directories no other user can change (mts_namecache_open_dir),
 * and files are made and renamed relative to the directory's descriptor;
 * a file over MTS_NAMECACHE_MAX_BYTES is not read. Its
 * content is checked before anything of it is used: magic, build-id,
 * every length against what is left, and a CRC-32 of the whole. Anything
 * else is refused with one warning and the caller names from the debug
 * information as if there were no cache.
 *
 * Layout (integers little-endian):
 *   "MTNAMES1", u8 idlen, id[idlen], u32 count,
 *   count x { u64 offset, u8 n, n x location },
 *   u32 crc32 of all that precedes.
 * location: u32 line, u32 start_char, u32 end_char, u8 flags
 *   (1: the file is the module's own path, written without it: a symbol
 *   without source names the module as its file, whatever path it is
 *   loaded from), [u16 len, file bytes], u16 len, function bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "namecache.h"

#define MAGIC "MTNAMES1"
#define MAX_CHAIN 255
#define MAX_STR 0xFFFF
#define FLAG_MODULE_PATH 1

static void say(mt_warning_fn warn, void *ctx, const char *fmt, ...)
{
    char msg[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (warn)
        warn(ctx, msg);
    else
        fprintf(stderr, "%s\n", msg);
}

int mts_namecache_path(char *out, size_t cap, const char *dir, const unsigned char *id,
                       size_t idlen, const char *suffix)
{
    if (idlen == 0 || idlen > 64)
        return -1;
    int n = snprintf(out, cap, "%s/", dir);
    if (n < 0 || (size_t)n + 2 * idlen + strlen(suffix) + 1 > cap)
        return -1;
    for (size_t i = 0; i < idlen; i++)
        n += snprintf(out + n, cap - (size_t)n, "%02x", id[i]);
    snprintf(out + n, cap - (size_t)n, "%s", suffix);
    return 0;
}

static int file_name(char *out, size_t cap, const char *dir, const unsigned char *id, size_t idlen,
                     enum mts_names_from from)
{
    return mts_namecache_path(out, cap, dir, id, idlen, from == MTS_NAMES_SYMTAB ? ".sym" : "");
}

int mts_namecache_private(const struct stat *st)
{
    return st->st_uid == geteuid() && !(st->st_mode & 022);
}

/* ---------------------------------------------------------------- reading */

struct in {
    const unsigned char *p, *end;
};

static int get(struct in *in, void *out, size_t n)
{
    if ((size_t)(in->end - in->p) < n)
        return -1;
    memcpy(out, in->p, n);
    in->p += n;
    return 0;
}

static int get_u(struct in *in, size_t n, uint64_t *v)
{
    unsigned char b[8];
    if (get(in, b, n) != 0)
        return -1;
    *v = 0;
    for (size_t i = n; i-- > 0;)
        *v = *v << 8 | b[i];
    return 0;
}

/* A string of the file, copied NUL-terminated to *cur (scratch room for
 * every byte left and a terminator each: the caller's), into *s. */
static int get_str(struct in *in, char **cur, const char **s)
{
    uint64_t len;
    if (get_u(in, 2, &len) != 0 || get(in, *cur, (size_t)len) != 0 || memchr(*cur, 0, (size_t)len))
        return -1;
    (*cur)[len] = 0;
    *s = *cur;
    *cur += len + 1;
    return 0;
}

/* Parses the content; NULL, or what is wrong with it. */
static const char *parse(const unsigned char *data, size_t size, const unsigned char *id,
                         size_t idlen, const char *modpath, mts_cache_entry_fn fn, void *ctx)
{
    if (size < sizeof MAGIC - 1 + 1 + 4 + 4 || memcmp(data, MAGIC, sizeof MAGIC - 1) != 0)
        return "not a name cache file";
    uint32_t want = (uint32_t)data[size - 4] | (uint32_t)data[size - 3] << 8 |
                    (uint32_t)data[size - 2] << 16 | (uint32_t)data[size - 1] << 24;
    if ((uint32_t)crc32(crc32(0L, Z_NULL, 0), data, (uInt)(size - 4)) != want)
        return "its checksum does not match (truncated or damaged)";
    struct in in = {data + sizeof MAGIC - 1, data + size - 4};
    uint64_t len, count;
    unsigned char fid[64];
    if (get_u(&in, 1, &len) != 0 || len != idlen || get(&in, fid, idlen) != 0 ||
        memcmp(fid, id, idlen) != 0)
        return "it is another build-id's";
    if (get_u(&in, 4, &count) != 0)
        return "truncated";
    mt_location locs[MAX_CHAIN];
    /* an entry's strings: at most the bytes left and 2 terminators a location */
    char *scratch = malloc(size + 2 * MAX_CHAIN);
    if (!scratch)
        return "out of memory";
    const char *bad = NULL;
    for (uint64_t e = 0; e < count && !bad; e++) {
        uint64_t off, n;
        if (get_u(&in, 8, &off) != 0 || get_u(&in, 1, &n) != 0 || off == 0) {
            bad = "a bad entry";
            break;
        }
        char *cur = scratch;
        for (uint64_t i = 0; i < n && !bad; i++) {
            const char *file = modpath, *func = NULL;
            uint64_t line, sc, ec, flags;
            if (get_u(&in, 4, &line) != 0 || get_u(&in, 4, &sc) != 0 || get_u(&in, 4, &ec) != 0 ||
                get_u(&in, 1, &flags) != 0 || (flags & ~(uint64_t)FLAG_MODULE_PATH))
                bad = "a bad location";
            else if (!(flags & FLAG_MODULE_PATH) && get_str(&in, &cur, &file) != 0)
                bad = "a bad file name";
            else if (get_str(&in, &cur, &func) != 0)
                bad = "a bad function name";
            if (bad)
                break;
            locs[i] = (mt_location){.filename = file,
                                    .defname = func,
                                    .line = (uint32_t)line,
                                    .start_char = (uint32_t)sc,
                                    .end_char = (uint32_t)ec};
        }
        if (!bad && fn(ctx, off, locs, (size_t)n) != 0)
            bad = "out of memory";
    }
    free(scratch);
    if (!bad && in.p != in.end)
        bad = "bytes after its last entry";
    return bad;
}

/* May users other than the caller write to the directory st? */
static int others_write(const struct stat *st)
{
    return (st->st_mode & 002) || ((st->st_mode & 020) && st->st_gid != getegid());
}

/* May a directory on the way to the cache (st) be trusted not to be
 * changed by another user? NULL, or why not. */
static const char *trusted_dir(const struct stat *st)
{
    if (st->st_uid != geteuid() && st->st_uid != 0)
        return "it belongs to another user";
    if (others_write(st) && !(st->st_mode & S_ISVTX))
        return "others may write to it (and it is not sticky)";
    return NULL;
}

int mts_namecache_open_dir(const char *dir, int create, const char **why)
{
    *why = NULL;
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) {
        *why = "path too long";
        return -1;
    }
    /* O_PATH on the way: a directory one may search but not list (0711) */
    int dfd = open(p[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat dst, st;
    if (dfd < 0 || fstat(dfd, &dst) != 0) {
        *why = strerror(errno);
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    char *save = NULL;
    const char *bad = NULL;
    int at = p[0] == '/', upto = at;   /* the path to dfd's directory; to c's end */
    for (char *c = strtok_r(p, "/", &save); c && !bad; c = strtok_r(NULL, "/", &save)) {
        int is_last = save == NULL || strspn(save, "/") == strlen(save);
        upto = (int)(c - p) + (int)strlen(c);
        if ((bad = trusted_dir(&dst)) != NULL) {
            upto = at;   /* (the directory c is in) */
            break;
        }
        if (fstatat(dfd, c, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT && create && mkdirat(dfd, c, 0700) != 0 && errno != EEXIST) {
                bad = strerror(errno);
                break;
            }
            if (errno == ENOENT && !create) {
                close(dfd);
                return -1;   /* none yet */
            }
            if (fstatat(dfd, c, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                bad = strerror(errno);
                break;
            }
        }
        int link = S_ISLNK(st.st_mode);
        if (others_write(&dst) && st.st_uid != geteuid() && st.st_uid != 0)
            bad = link ? "a symbolic link of another user in a directory others may write to"
                       : "another user's, in a directory others may write to";
        else if (link && st.st_uid != geteuid() && st.st_uid != 0)
            bad = "a symbolic link of another user (not followed)";
        else if (link && is_last)
            bad = "not a directory (links are not followed)";
        if (bad)
            break;
        int nfd = openat(dfd, c, O_PATH | O_DIRECTORY | O_CLOEXEC | (link ? 0 : O_NOFOLLOW));
        struct stat nst;
        if (nfd < 0 || fstat(nfd, &nst) != 0) {
            bad = errno == ENOTDIR || errno == ELOOP ? "not a directory" : strerror(errno);
            if (nfd >= 0)
                close(nfd);
            break;
        }
        if (!link && (nst.st_dev != st.st_dev || nst.st_ino != st.st_ino)) {
            close(nfd);
            bad = "it changed while it was opened";
            break;
        }
        close(dfd);
        dfd = nfd;
        dst = nst;
        at = upto;
    }
    if (bad) {   /* said of the path up to the component it is about */
        close(dfd);
        static __thread char msg[PATH_MAX + 128];
        snprintf(msg, sizeof msg, "%.*s: %s", upto ? upto : 1, upto ? dir : ".", bad);
        *why = msg;
        return -1;
    }
    if (!mts_namecache_private(&dst)) {
        close(dfd);
        *why = "it belongs to another user or others may write to it";
        return -1;
    }
    int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);   /* to list it */
    close(dfd);
    if (rfd < 0)
        *why = strerror(errno);
    return rfd;
}

int mts_namecache_create(int dfd, const char *base, char *tmp, size_t cap, const char **why)
{
    static unsigned seq;
    for (int tries = 0; tries < 16; tries++) {
        unsigned n = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
        if (snprintf(tmp, cap, ".%s.tmp.%ld.%u", base, (long)getpid(), n) >= (int)cap) {
            *why = "path too long";
            return -1;
        }
        int fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST) {
            if (fd < 0)
                *why = strerror(errno);
            return fd;
        }
    }
    *why = "no free temporary name";
    return -1;
}

int mts_namecache_commit(int dfd, int fd, const char *tmp, const char *base, int ok,
                         const char **why)
{
    if (close(fd) != 0 && ok == 0) {
        *why = strerror(errno);
        ok = -1;
    }
    if (ok == 0 && renameat(dfd, tmp, dfd, base) != 0) {
        *why = strerror(errno);
        ok = -1;
    }
    if (ok != 0)
        unlinkat(dfd, tmp, 0);
    return ok == 0 ? 0 : -1;
}

int mts_namecache_load(const char *dir, const unsigned char *id, size_t idlen,
                       enum mts_names_from from, const char *modpath, mts_cache_entry_fn fn, void *ctx,
                       mt_warning_fn warn, void *warn_ctx)
{
    char path[PATH_MAX];
    if (file_name(path, sizeof path, dir, id, idlen, from) != 0)
        return 0;
    const char *why;
    int dfd = mts_namecache_open_dir(dir, 0, &why);
    if (dfd < 0) {
        if (why)
            say(warn, warn_ctx, "name cache %s not used: %s", dir, why);
        return why ? MTS_NAMECACHE_DIR_REFUSED : 0;
    }
    const char *base = strrchr(path, '/') + 1;
    int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int e = errno;
    close(dfd);
    if (fd < 0) {
        if (e == ENOENT)
            return 0;
        say(warn, warn_ctx, "name cache file %s not used: %s", path,
            e == ELOOP ? "a symbolic link (not followed)" : strerror(e));
        return -1;
    }
    struct stat st;
    unsigned char *data = NULL;
    const char *bad = NULL;
    int corrupt = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        bad = "not a regular file";
    else if (!mts_namecache_private(&st))
        bad = "it belongs to another user or others may write to it";
    else if ((uint64_t)st.st_size > MTS_NAMECACHE_MAX_BYTES)
        bad = "larger than the cap";
    else if (!(data = malloc((size_t)st.st_size + 1)))
        bad = "out of memory";
    else {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
            if (r <= 0) {
                if (r < 0 && errno == EINTR)
                    continue;
                break;
            }
            got += (size_t)r;
        }
        bad = got != (size_t)st.st_size ? "it could not be read whole"
                                        : parse(data, got, id, idlen, modpath, fn, ctx);
        corrupt = bad && strcmp(bad, "out of memory") != 0;
    }
    close(fd);
    free(data);
    if (bad) {
        say(warn, warn_ctx, "name cache file %s ignored: %s", path, bad);
        return corrupt ? MTS_NAMECACHE_CORRUPT : -1;
    }
    return 1;
}

/* ---------------------------------------------------------------- writing */

struct out {
    unsigned char *buf;
    size_t len, cap;
    int full;
};

static void put(struct out *o, const void *p, size_t n)
{
    if (o->full)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n)
            cap *= 2;
        unsigned char *b = realloc(o->buf, cap);
        if (!b) {
            o->full = 1;
            return;
        }
        o->buf = b;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

static void put_u(struct out *o, size_t n, uint64_t v)
{
    unsigned char b[8];
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    put(o, b, n);
}

/* One entry, unless a string is too long for the format. */
static void put_entry(struct out *o, const char *modpath, uint64_t off, const mt_location *l,
                      size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *f = l[i].filename ? l[i].filename : "", *d = l[i].defname ? l[i].defname : "";
        if (strlen(f) > MAX_STR || strlen(d) > MAX_STR)
            return;
    }
    put_u(o, 8, off);
    put_u(o, 1, n);
    for (size_t i = 0; i < n; i++) {
        const char *f = l[i].filename ? l[i].filename : "", *d = l[i].defname ? l[i].defname : "";
        int own = strcmp(f, modpath) == 0;
        put_u(o, 4, l[i].line);
        put_u(o, 4, l[i].start_char);
        put_u(o, 4, l[i].end_char);
        put_u(o, 1, own ? FLAG_MODULE_PATH : 0);
        if (!own) {
            put_u(o, 2, strlen(f));
            put(o, f, strlen(f));
        }
        put_u(o, 2, strlen(d));
        put(o, d, strlen(d));
    }
}

/* A temporary file of mts_namecache_create's (".BASE.tmp.PID.N") whose
 * writer is gone (killed while writing)? */
static int stale_temporary(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    if (name[0] != '.' || !t)
        return 0;
    char *end;
    long pid = strtol(t + 5, &end, 10);
    return pid > 0 && *end == '.' && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 &&
           errno == ESRCH;
}

size_t mts_namecache_scan(int dfd, const char *suffix, long long *bytes)
{
    *bytes = 0;
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t n = 0, sl = strlen(suffix);
    struct dirent *e;
    struct stat st;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (stale_temporary(e->d_name)) {
            unlinkat(dfd, e->d_name, 0);
            continue;
        }
        n += e->d_name[0] != '.';
        if (((len > sl && strcmp(e->d_name + len - sl, suffix) == 0) || strstr(e->d_name, ".tmp.")) &&
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            *bytes += st.st_size;
    }
    closedir(d);
    return n;
}

int mts_namecache_save(const char *dir, const unsigned char *id, size_t idlen,
                       enum mts_names_from from, const char *modpath, const mt_loctab *frames,
                       mt_warning_fn warn, void *warn_ctx)
{
    char path[PATH_MAX], tmp[PATH_MAX + 200];
    if (file_name(path, sizeof path, dir, id, idlen, from) != 0)
        return -1;
    const char *why, *base = strrchr(path, '/') + 1;
    int dfd = mts_namecache_open_dir(dir, 1, &why);
    if (dfd < 0) {
        say(warn, warn_ctx, "name cache %s not written: %s", dir, why ? why : "cannot create it");
        return MTS_NAMECACHE_DIR_REFUSED;
    }
    struct stat st;
    int exists = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
    long long bytes;
    size_t nfiles = exists ? 0 : mts_namecache_scan(dfd, ".debug", &bytes);
    if (nfiles >= MTS_NAMECACHE_MAX_FILES) {
        close(dfd);
        return 0;   /* full: the modules cached so far keep their files */
    }

    struct out o = {0};
    put(&o, MAGIC, sizeof MAGIC - 1);
    put_u(&o, 1, idlen);
    put(&o, id, idlen);
    size_t count_at = o.len;
    put_u(&o, 4, 0);
    uint32_t count = 0;
    for (size_t i = 0; frames->slots && i <= frames->mask && !o.full; i++) {
        const mt_location *l;
        size_t n, before = o.len;
        if (!frames->slots[i].locs ||
            mt_loctab_find(frames, frames->slots[i].code, &l, &n) != 0)
            continue;
        put_entry(&o, modpath, frames->slots[i].code, l, n);
        if (o.len + 4 > MTS_NAMECACHE_MAX_BYTES) {   /* the cap: this entry is left out */
            o.len = before;
            break;
        }
        count += o.len != before;
    }
    if (o.full) {
        free(o.buf);
        close(dfd);
        say(warn, warn_ctx, "name cache file %s not written: out of memory", path);
        return -1;
    }
    for (int i = 0; i < 4; i++)
        o.buf[count_at + i] = (unsigned char)(count >> (8 * i));
    put_u(&o, 4, (uint32_t)crc32(crc32(0L, Z_NULL, 0), o.buf, (uInt)o.len));

    int fd = mts_namecache_create(dfd, base, tmp, sizeof tmp, &why);
    int rc = fd < 0 ? -1 : 0;
    for (size_t done = 0; rc == 0 && done < o.len;) {
        ssize_t w = write(fd, o.buf + done, o.len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            why = w < 0 ? strerror(errno) : "short write";
            rc = -1;
            break;
        }
        done += (size_t)w;
    }
    free(o.buf);
    if (fd >= 0)
        rc = mts_namecache_commit(dfd, fd, tmp, base, rc, &why);
    close(dfd);
    if (rc != 0)
        say(warn, warn_ctx, "name cache file %s not written: %s", path, why ? why : "out of memory");
    return rc;
}
