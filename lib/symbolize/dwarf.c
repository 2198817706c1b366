/*
 * dwarf.c - module offset -> locations, with libdw (elfutils), outside the
 * profiled process.
 *
 * A trace names its modules by path, and a trace can come from anyone: the
 * paths and the files they lead to are untrusted. A path is looked up once
 * (a keyed hash table of the spellings met); it leads to a module only if
 * it is a regular file, and modules are keyed by (device, inode), so one
 * file spelled many ways (/dir/./lib.so, /dir/././lib.so) is loaded once.
 * Every file read here (modules, separate debug files) is opened by
 * open_regular: stat first, then open without blocking, and used only if
 * the descriptor is the same regular file and starts like an ELF file (a
 * FIFO, a device or a compressed file is never read). At most max_open
 * modules are open at once (each holds up to three descriptors: module,
 * debug file, dwz file); the least recently used one is closed past that
 * and opened again when a later frame needs it.
 *
 * Each open module is reported to a Dwfl of its own. Separate debug
 * information is found by find_debuginfo under the debug root
 * (/usr/lib/debug, or the caller's: mts_dwarf_set_debug_root; written
 * /usr/lib/debug below), in this order: by build-id in
 * /usr/lib/debug/.build-id (libdw's own search, which checks the id: that
 * directory is the system's and trusted); by name (.gnu_debuglink, else
 * MODULE.debug) in the module's directory, its .debug/ and /usr/lib/debug
 * under the module's real directory, a name with a '/' in it never being
 * followed, and the file checked against the module's build-id, or without
 * one against the debuglink's CRC (files up to MAX_CRC_BYTES, not sparse);
 * a dwz file (.gnu_debugaltlink) at its path only under /usr/lib/debug,
 * else by its last component in the module's directory, its .dwz/,
 * /usr/lib/debug and /usr/lib/debug/.dwz, checked against the build-id the
 * link records; then, only when the caller gave a server
 * (mts_dwarf_set_debuginfod: symbolize --debuginfod URL), that debuginfod
 * server by build-id, through libdebuginfod (loaded on first need), which
 * caches what it fetches where it always does. That client takes its
 * server from DEBUGINFOD_URLS, read at each query: the variable is set to
 * the caller's URL for the query and unset again (the CLI clears any
 * inherited value at start, so that neither this client nor libdw's own
 * ever asks a server the user did not name on the command line). After a
 * server cannot be reached, it is not asked again. When the caller keeps
 * inflated copies of debug files (mts_dwarf_set_debug_copies: the name
 * cache's directory, debugcache.c), the copy of the build-id wanted comes
 * before all that, and a compressed debug file found is copied inflated
 * and the copy read instead; the build-id search in /usr/lib/debug is then
 * done here rather than by libdw (whose own search hands libdw the file it
 * opened, whatever descriptor the hook returns).
 *
 * For an address with DWARF: the line table gives file:line of the
 * innermost location; the scope DIEs around the address give the
 * function, and each DW_TAG_inlined_subroutine on the way out adds the
 * location of its call site in the enclosing function. Function names are
 * linkage names demangled with the C++ runtime's __cxa_demangle (loaded on
 * first need), else the DWARF name. Without DWARF: the ELF symbol with the
 * module as file name and no line, found by bisection in a table of the
 * module's function symbols sorted once (libdw's dwfl_module_addrinfo scans
 * the whole symbol table at each call). Without a symbol either: nothing (the
 * raw frame stays).
 *
 * A stripped module's MiniDebugInfo (.gnu_debugdata: an xz-compressed
 * symbol table of the functions .dynsym leaves out, as Fedora ships) is
 * libdw's to read: dwfl_module_getsymtab includes it.
 *
 * Return addresses point after the call instruction: lookups use addr - 1.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "hash.h"
#include "radix.h"
#include "rawframe.h"
#include "warn.h"
#include "dwarf.h"
#include "debugcache.h"

#define DEBUG_ROOT "/usr/lib/debug"
#define MAX_CRC_BYTES ((off_t)1 << 30)   /* debug files checked by CRC: at most 1 GiB */
#define MAX_OPEN_MODULES 1024

struct sym {
    GElf_Addr lo, hi;    /* [lo, hi) in the Dwfl's addresses; hi = lo when unsized */
    const char *name;    /* owned by libdw */
    int rank;            /* binding preference: global 0, weak 1, local 2 */
};

enum { MOD_NEW, MOD_OK, MOD_BAD };

struct module {          /* one file on disk */
    dev_t dev;
    ino_t ino;
    char *path;          /* the spelling it was first met by */
    int state;           /* MOD_NEW: never opened; MOD_BAD: not an ELF module we can read */
    uint32_t fp;         /* fingerprint of the file, once opened */
    Dwfl *dwfl;          /* NULL when not open now */
    Dwfl_Module *mod;
    Dwarf_Addr bias;     /* address in the Dwfl = offset + bias */
    struct sym *syms;    /* function symbols sorted by lo; built on first need */
    size_t nsyms;
    int syms_built;
    struct module *newer, *older;   /* the open modules, most recently used first */
};

struct name {            /* a module path as the trace spells it */
    uint64_t hash;
    char *path;
    struct module *mod;  /* NULL: no regular file there */
};

struct mts_dwarf {
    struct name **names;         /* open addressing, keyed by mt_hash_bytes */
    size_t names_mask, nnames;
    struct module **mods;        /* open addressing, keyed by (dev, ino) */
    size_t mods_mask, nmods;
    struct module *newest, *oldest;
    size_t nopen, max_open;
    Dwfl_Callbacks cb;
    char *debuginfo_path;
    char *(*demangle)(const char *, char *, size_t *, int *);
    int demangle_tried;
    /* libdebuginfod, loaded on the first query to dfd_url */
    char *dfd_url;               /* NULL: no server (the default) */
    mt_warning_fn dfd_warn;
    void *dfd_warn_ctx;
    void *dfd_client;
    int (*dfd_find)(void *, const unsigned char *, int, char **);
    void (*dfd_end)(void *);
    int dfd_tried, dfd_dead;
    /* inflated copies of debug files (debugcache.c); NULL: none */
    char *copies_dir;
    mt_warning_fn copies_warn;
    void *copies_warn_ctx;
};

/* Opens path for reading only if it is a regular file that starts like an
 * ELF file: never blocks on a FIFO, never reads a device. *st is the file's. */
static int open_regular(const char *path, struct stat *st)
{
    struct stat before;
    if (stat(path, &before) != 0 || !S_ISREG(before.st_mode))
        return -1;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char magic[4];
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_dev != before.st_dev ||
        st->st_ino != before.st_ino || pread(fd, magic, 4, 0) != 4 ||
        memcmp(magic, ELFMAG, SELFMAG) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                          GElf_Addr base, const char *file_name, const char *debuglink,
                          GElf_Word crc, char **debuginfo_file_name);
static int find_debug_file(Dwfl_Module *mod, void **userdata, const char *modname,
                           GElf_Addr base, const char *file_name, const char *debuglink,
                           GElf_Word crc, char **debuginfo_file_name);

mts_dwarf *mts_dwarf_new(void)
{
    mts_dwarf *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    elf_version(EV_CURRENT);
    d->cb.find_elf = dwfl_build_id_find_elf;
    d->cb.find_debuginfo = find_debuginfo;
    d->cb.section_address = dwfl_offline_section_address;
    d->cb.debuginfo_path = &d->debuginfo_path;
    /* descriptors: three per open module at most, some left for the rest */
    struct rlimit rl;
    size_t lim = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        lim = (size_t)rl.rlim_cur;
    d->max_open = lim > 32 + 3 * 4 ? (lim - 32) / 3 : 4;
    if (d->max_open > MAX_OPEN_MODULES)
        d->max_open = MAX_OPEN_MODULES;
    return d;
}

static void close_module(mts_dwarf *d, struct module *m)
{
    if (!m->dwfl)
        return;
    dwfl_end(m->dwfl);
    m->dwfl = NULL;
    m->mod = NULL;
    free(m->syms);   /* its names were libdw's */
    m->syms = NULL;
    m->nsyms = 0;
    m->syms_built = 0;
    if (m->newer)
        m->newer->older = m->older;
    else
        d->newest = m->older;
    if (m->older)
        m->older->newer = m->newer;
    else
        d->oldest = m->newer;
    m->newer = m->older = NULL;
    d->nopen--;
}

void mts_dwarf_free(mts_dwarf *d)
{
    if (!d)
        return;
    for (size_t i = 0; d->mods && i <= d->mods_mask; i++) {
        struct module *m = d->mods[i];
        if (!m)
            continue;
        close_module(d, m);
        free(m->path);
        free(m);
    }
    free(d->mods);
    for (size_t i = 0; d->names && i <= d->names_mask; i++)
        if (d->names[i]) {
            free(d->names[i]->path);
            free(d->names[i]);
        }
    free(d->names);
    if (d->dfd_client && d->dfd_end)
        d->dfd_end(d->dfd_client);
    free(d->dfd_url);
    free(d->debuginfo_path);
    free(d->copies_dir);
    free(d);
}

/* ------------------------------------------------------- the two tables */

static uint64_t inode_hash(dev_t dev, ino_t ino)
{
    return mt_hash_mix(mt_hash_u64((uint64_t)ino), (uint64_t)dev);
}

/* Doubles a table of pointers whose keys hash(p) gives; 0 or -1. */
static int grow_table(void ***slots, size_t *mask, uint64_t (*hash)(const void *))
{
    size_t cap = *slots ? 2 * (*mask + 1) : 64;
    void **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; *slots && i <= *mask; i++) {
        if (!(*slots)[i])
            continue;
        size_t j = hash((*slots)[i]) & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = (*slots)[i];
    }
    free(*slots);
    *slots = t;
    *mask = cap - 1;
    return 0;
}

static uint64_t name_hash(const void *p)
{
    return ((const struct name *)p)->hash;
}

static uint64_t module_hash(const void *p)
{
    const struct module *m = p;
    return inode_hash(m->dev, m->ino);
}

/* The module of the file at st, a new one (not opened yet) if first met. */
static struct module *module_of(mts_dwarf *d, const char *path, const struct stat *st)
{
    if ((d->nmods + 1) * 2 > (d->mods ? d->mods_mask + 1 : 0) &&
        grow_table((void ***)&d->mods, &d->mods_mask, module_hash) != 0)
        return NULL;
    size_t j = inode_hash(st->st_dev, st->st_ino) & d->mods_mask;
    for (; d->mods[j]; j = (j + 1) & d->mods_mask)
        if (d->mods[j]->dev == st->st_dev && d->mods[j]->ino == st->st_ino)
            return d->mods[j];
    struct module *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        return NULL;
    }
    m->dev = st->st_dev;
    m->ino = st->st_ino;
    d->mods[j] = m;
    d->nmods++;
    return m;
}

/* The entry of a module path, made on first sight; NULL when out of memory. */
static struct name *name_of_path(mts_dwarf *d, const char *path)
{
    if ((d->nnames + 1) * 2 > (d->names ? d->names_mask + 1 : 0) &&
        grow_table((void ***)&d->names, &d->names_mask, name_hash) != 0)
        return NULL;
    uint64_t h = mt_hash_bytes(path, strlen(path));
    size_t j = h & d->names_mask;
    for (; d->names[j]; j = (j + 1) & d->names_mask)
        if (d->names[j]->hash == h && strcmp(d->names[j]->path, path) == 0)
            return d->names[j];
    struct name *n = calloc(1, sizeof *n);
    if (!n || !(n->path = strdup(path))) {
        free(n);
        return NULL;
    }
    n->hash = h;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        n->mod = module_of(d, path, &st);
    d->names[j] = n;
    d->nnames++;
    return n;
}

int mts_dwarf_set_debuginfod(mts_dwarf *d, const char *url, mt_warning_fn warn, void *ctx)
{
    free(d->dfd_url);
    d->dfd_url = url && *url ? strdup(url) : NULL;
    d->dfd_warn = warn;
    d->dfd_warn_ctx = ctx;
    return url && *url && !d->dfd_url ? -1 : 0;
}

int mts_dwarf_set_debug_root(mts_dwarf *d, const char *root)
{
    if (root && (root[0] != '/' || strchr(root, ':')))
        return -1;   /* libdw's path list: absolute entries split at ':' */
    char *copy = root ? strdup(root) : NULL;
    if (root && !copy)
        return -1;
    free(d->debuginfo_path);
    d->debuginfo_path = copy;   /* libdw's build-id search looks there only */
    return 0;
}

int mts_dwarf_set_debug_copies(mts_dwarf *d, const char *dir, mt_warning_fn warn, void *ctx)
{
    char *copy = dir ? strdup(dir) : NULL;
    if (dir && !copy)
        return -1;
    free(d->copies_dir);
    d->copies_dir = copy;
    d->copies_warn = warn;
    d->copies_warn_ctx = ctx;
    return 0;
}

/* The directory of separate debug files: the caller's, else DEBUG_ROOT. */
static const char *debug_root(const mts_dwarf *d)
{
    return d && d->debuginfo_path ? d->debuginfo_path : DEBUG_ROOT;
}

/* ------------------------------------------------------------- modules */

/* Opens m (again), closing the least recently used module past max_open;
 * 0, or -1 when it cannot be used. */
static int open_module(mts_dwarf *d, struct module *m)
{
    if (m->dwfl) {   /* the most recently used now */
        if (m->newer) {
            m->newer->older = m->older;
            if (m->older)
                m->older->newer = m->newer;
            else
                d->oldest = m->newer;
            m->newer = NULL;
            m->older = d->newest;
            d->newest->newer = m;
            d->newest = m;
        }
        return 0;
    }
    if (m->state == MOD_BAD)
        return -1;
    struct stat st;
    int fd = open_regular(m->path, &st);
    if (fd < 0 || st.st_dev != m->dev || st.st_ino != m->ino) {
        if (fd >= 0)
            close(fd);
        m->state = MOD_BAD;
        return -1;
    }
    while (d->nopen >= d->max_open && d->oldest)
        close_module(d, d->oldest);
    m->dwfl = dwfl_begin(&d->cb);
    if (!m->dwfl) {
        close(fd);
        return -1;   /* out of memory: perhaps not next time */
    }
    dwfl_report_begin(m->dwfl);
    const char *base = strrchr(m->path, '/');
    /* the descriptor is libdw's from here on, unless it fails */
    m->mod = dwfl_report_elf(m->dwfl, base ? base + 1 : m->path, m->path, fd, 0, false);
    if (!m->mod)
        close(fd);
    dwfl_report_end(m->dwfl, NULL, NULL);
    uint32_t fp = 0;
    if (m->mod) {   /* find_debuginfo's context */
        void **ud;
        dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
        *ud = d;
    }
    if (m->mod && dwfl_module_getelf(m->mod, &m->bias)) {
        const unsigned char *bits;
        GElf_Addr vaddr;
        int len = dwfl_module_build_id(m->mod, &bits, &vaddr);
        fp = len > 0 ? mt_raw_fingerprint(bits, (size_t)len, 0)
                     : mt_raw_fingerprint(NULL, 0, (uint64_t)st.st_size);
    }
    /* the file opened again must be the one first read */
    if (!fp || (m->state == MOD_OK && fp != m->fp)) {
        dwfl_end(m->dwfl);
        m->dwfl = NULL;
        m->mod = NULL;
        m->state = MOD_BAD;
        return -1;
    }
    m->fp = fp;
    m->state = MOD_OK;
    m->older = d->newest;
    if (d->newest)
        d->newest->newer = m;
    else
        d->oldest = m;
    d->newest = m;
    d->nopen++;
    return 0;
}

/* ------------------------------------------------ separate debug files */

/* The build-id that the debug file for this call must have: the module's,
 * or, when libdw asks for the dwz file of a debug file it has already
 * opened, the one .gnu_debugaltlink names. 0 when there is none. */
static int wanted_id(Dwfl_Module *mod, int *alt, const unsigned char **id)
{
    Dwarf_Addr dwbias = (Dwarf_Addr)-1;
    dwfl_module_info(mod, NULL, NULL, NULL, &dwbias, NULL, NULL, NULL);
    *alt = dwbias != (Dwarf_Addr)-1;   /* a debug file is there already */
    if (!*alt) {
        GElf_Addr vaddr;
        int len = dwfl_module_build_id(mod, id, &vaddr);
        return len > 0 ? len : 0;
    }
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(mod, &bias);   /* the one already loaded */
    const char *altname;
    const void *bits = NULL;
    ssize_t len = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &altname, &bits) : -1;
    *id = bits;
    return len > 0 && len < INT_MAX ? (int)len : 0;
}

/* Is fd the debug file wanted: the same build-id, or without one the
 * debuglink's CRC (check_crc)? */
static int is_wanted(int fd, const struct stat *st, const unsigned char *id, int idlen,
                     int check_crc, GElf_Word crc)
{
    if (idlen > 0) {
        Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        const void *fid = NULL;
        ssize_t flen = e ? dwelf_elf_gnu_build_id(e, &fid) : -1;
        int ok = flen == idlen && memcmp(fid, id, (size_t)idlen) == 0;
        if (e)
            elf_end(e);
        return ok;
    }
    if (!check_crc)
        return 1;
    /* at most MAX_CRC_BYTES, and not mostly holes (a sparse file costs its
     * maker nothing and its reader a full pass) */
    if (st->st_size > MAX_CRC_BYTES || (off_t)st->st_blocks * 512 < st->st_size / 8)
        return 0;
    unsigned char buf[65536];
    uLong c = crc32(0L, Z_NULL, 0);
    off_t off = 0;
    ssize_t n;
    while ((n = pread(fd, buf, sizeof buf, off)) > 0 && off < MAX_CRC_BYTES) {
        c = crc32(c, buf, (uInt)n);
        off += n;
    }
    return n == 0 && (GElf_Word)c == crc;
}

/* Tries dir/sub/file (sub may be NULL); the descriptor, or -1. */
static int try_debug_file(const char *dir, const char *sub, const char *file,
                          const struct stat *main_st, const unsigned char *id, int idlen,
                          int check_crc, GElf_Word crc, char **found)
{
    char path[PATH_MAX];
    int len = sub ? snprintf(path, sizeof path, "%s/%s/%s", dir, sub, file)
                  : snprintf(path, sizeof path, "%s/%s", dir, file);
    if (len < 0 || len >= (int)sizeof path)
        return -1;
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0)
        return -1;
    if ((st.st_dev == main_st->st_dev && st.st_ino == main_st->st_ino) ||
        !is_wanted(fd, &st, id, idlen, check_crc, crc) || !(*found = strdup(path))) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Is path absolute, under root, without "." or ".." components? */
static int under_debug_root(const char *root, const char *path)
{
    size_t n = strlen(root);
    if (strncmp(path, root, n) != 0 || path[n] != '/')
        return 0;
    for (const char *p = path + n; *p; p++)
        if (p[0] == '/' && p[1] == '.' &&
            (p[2] == '/' || p[2] == '\0' || (p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
            return 0;
    return 1;
}

static void dfd_warning(mts_dwarf *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void dfd_warning(mts_dwarf *d, const char *fmt, ...)
{
    char msg[PATH_MAX + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mt_warn(d->dfd_warn, d->dfd_warn_ctx, msg);
}

/* The debug file of build-id id from the caller's debuginfod server (the
 * top of this file); module names it in messages. */
static int debuginfod_fd(mts_dwarf *d, const unsigned char *id, int idlen, const char *module,
                         char **found)
{
    if (!d || idlen <= 0 || !d->dfd_url || d->dfd_dead)
        return -1;
    if (!d->dfd_tried) {
        d->dfd_tried = 1;
        void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
        void *(*begin)(void) = h ? (void *(*)(void))dlsym(h, "debuginfod_begin") : NULL;
        d->dfd_find = h ? (int (*)(void *, const unsigned char *, int, char **))
                              dlsym(h, "debuginfod_find_debuginfo") : NULL;
        d->dfd_end = h ? (void (*)(void *))dlsym(h, "debuginfod_end") : NULL;
        if (begin && d->dfd_find && d->dfd_end)
            d->dfd_client = begin();
        if (!d->dfd_client)
            dfd_warning(d, "cannot ask %s: libdebuginfod (Debian: libdebuginfod1) is not "
                        "installed", d->dfd_url);
    }
    if (!d->dfd_client) {
        d->dfd_dead = 1;
        return -1;
    }
    char hex[2 * 64 + 1] = "";
    for (int i = 0; i < idlen && i < 64; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    char *path = NULL;
    setenv("DEBUGINFOD_URLS", d->dfd_url, 1);
    int fd = d->dfd_find(d->dfd_client, id, idlen, &path);
    unsetenv("DEBUGINFOD_URLS");
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -EINVAL;
    }
    if (fd >= 0) {
        *found = path;
        return fd;
    }
    free(path);
    if (fd == -ENOENT)
        dfd_warning(d, "%s has no debug information for build-id %s (%s)", d->dfd_url, hex,
                    module ? module : "?");
    else {
        dfd_warning(d, "cannot get debug information from %s: %s; not asking it again",
                    d->dfd_url, strerror(-fd));
        d->dfd_dead = 1;
    }
    return -1;
}

/* libdw's find_debuginfo hook (see the top of this file): the debug file
 * found, or its inflated copy (debugcache.c) when the caller keeps them. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                          GElf_Addr base, const char *file_name, const char *debuglink,
                          GElf_Word crc, char **debuginfo_file_name)
{
    mts_dwarf *d = userdata ? *userdata : NULL;
    int alt, make = 0;
    const unsigned char *id = NULL;
    int idlen = d && d->copies_dir ? wanted_id(mod, &alt, &id) : 0;
    if (idlen > 0) {   /* the copy first: made from a file found and checked before */
        *debuginfo_file_name = NULL;
        int fd = mts_debugcache_open(d->copies_dir, id, (size_t)idlen, debuginfo_file_name,
                                     &make, d->copies_warn, d->copies_warn_ctx);
        if (fd >= 0)
            return fd;
    }
    int fd = find_debug_file(mod, userdata, modname, base, file_name, debuglink, crc,
                             debuginfo_file_name);
    if (fd >= 0 && make)
        fd = mts_debugcache_make(d->copies_dir, id, (size_t)idlen, fd, debuginfo_file_name,
                                 d->copies_warn, d->copies_warn_ctx);
    return fd;
}

/* The debug file of mod, searched as the top of this file says. */
static int find_debug_file(Dwfl_Module *mod, void **userdata, const char *modname,
                           GElf_Addr base, const char *file_name, const char *debuglink,
                           GElf_Word crc, char **debuginfo_file_name)
{
    mts_dwarf *d = userdata ? *userdata : NULL;
    const char *root = debug_root(d);
    *debuginfo_file_name = NULL;
    int alt;
    const unsigned char *id = NULL;
    int idlen = wanted_id(mod, &alt, &id);
    if (alt && idlen == 0)
        return -1;   /* a dwz file is found only by its build-id */

    /* 1. /usr/lib/debug/.build-id/xx/yyyy.debug: opened here when the
     * caller keeps inflated copies (libdw's own search hands libdw the
     * file it opened, whatever descriptor this returns), else by libdw */
    if (idlen > 0 && !alt && d && d->copies_dir) {
        char rest[2 * 64 + sizeof ".debug"] = "", sub[sizeof ".build-id/xx"];
        for (int i = 1; i < idlen && i < 64; i++)
            snprintf(rest + 2 * (i - 1), 3, "%02x", id[i]);
        strcat(rest, ".debug");
        snprintf(sub, sizeof sub, ".build-id/%02x", id[0]);
        struct stat none = {0};
        int fd = try_debug_file(root, sub, rest, &none, id, idlen, 0, 0, debuginfo_file_name);
        if (fd >= 0)
            return fd;
    } else if (idlen > 0) {
        int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
                                              debuglink, crc, debuginfo_file_name);
        if (fd >= 0)
            return fd;
        free(*debuginfo_file_name);
        *debuginfo_file_name = NULL;
    }

    /* 2. by name */
    const char *mainfile = NULL;
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
    if (!file_name)
        file_name = mainfile;
    struct stat main_st = {0};
    if (!file_name || stat(file_name, &main_st) != 0)
        return -1;
    int fd = -1;
    if (alt) {
        /* the dwz file: where .gnu_debugaltlink says if that is under
         * /usr/lib/debug, else its last component in the module's
         * directory, its .dwz/, /usr/lib/debug and /usr/lib/debug/.dwz */
        if (debuglink && debuglink[0] == '/' && under_debug_root(root, debuglink))
            fd = try_debug_file("", NULL, debuglink + 1, &main_st, id, idlen, 0, 0,
                                debuginfo_file_name);
        const char *b = debuglink ? strrchr(debuglink, '/') : NULL;
        b = b ? b + 1 : debuglink;
        char dir[PATH_MAX];
        const char *slash = strrchr(file_name, '/');
        int dl = slash ? (int)(slash - file_name) : -1;
        if (b && *b && strcmp(b, ".") != 0 && strcmp(b, "..") != 0) {
            if (fd < 0 && dl >= 0 && snprintf(dir, sizeof dir, "%.*s", dl, file_name) < (int)sizeof dir) {
                fd = try_debug_file(dir, NULL, b, &main_st, id, idlen, 0, 0, debuginfo_file_name);
                if (fd < 0)
                    fd = try_debug_file(dir, ".dwz", b, &main_st, id, idlen, 0, 0,
                                        debuginfo_file_name);
            }
            if (fd < 0)
                fd = try_debug_file(root, NULL, b, &main_st, id, idlen, 0, 0,
                                    debuginfo_file_name);
            if (fd < 0)
                fd = try_debug_file(root, ".dwz", b, &main_st, id, idlen, 0, 0,
                                    debuginfo_file_name);
        }
    } else if (!debuglink || (!strchr(debuglink, '/') && strcmp(debuglink, ".") != 0 &&
                              strcmp(debuglink, "..") != 0 && *debuglink)) {
        /* in the directory of the module as named and of its real path */
        char given[PATH_MAX], *real = realpath(file_name, NULL);
        snprintf(given, sizeof given, "%s", file_name);
        char *dirs[2] = {real && strcmp(real, given) == 0 ? NULL : given, real};
        char made[PATH_MAX];
        const char *base_name = strrchr(file_name, '/');
        base_name = base_name ? base_name + 1 : file_name;
        const char *name = debuglink;
        int check = debuglink != NULL && crc != 0;
        if (!debuglink && snprintf(made, sizeof made, "%s.debug", base_name) < (int)sizeof made)
            name = made;
        for (int k = 0; k < 2 && fd < 0 && name; k++) {
            if (!dirs[k])
                continue;
            char *slash = strrchr(dirs[k], '/');
            if (!slash)
                continue;
            *slash = '\0';
            const char *dir = dirs[k][0] ? dirs[k] : "/";
            fd = try_debug_file(dir, NULL, name, &main_st, id, idlen, check, crc,
                                debuginfo_file_name);
            if (fd < 0)
                fd = try_debug_file(dir, ".debug", name, &main_st, id, idlen, check, crc,
                                    debuginfo_file_name);
            /* /usr/lib/debug/DIR: only for a real path (no "..") */
            if (fd < 0 && k == 1)
                fd = try_debug_file(root, dir + 1, name, &main_st, id, idlen, check,
                                    crc, debuginfo_file_name);
            if (fd < 0 && !debuglink) {   /* as libdw: the module's own name there too */
                fd = try_debug_file(dir, ".debug", base_name, &main_st, id, idlen, 0, 0,
                                    debuginfo_file_name);
                if (fd < 0 && k == 1)
                    fd = try_debug_file(root, dir + 1, base_name, &main_st, id, idlen,
                                        0, 0, debuginfo_file_name);
            }
            *slash = '/';
        }
        free(real);
    }
    if (fd >= 0)
        return fd;

    /* 3. debuginfod */
    return debuginfod_fd(d, id, idlen, file_name, debuginfo_file_name);
}

static char *name_of(mts_dwarf *d, const char *raw)
{
    if (!raw)
        return strdup("??");
    if (raw[0] == '_' && raw[1] == 'Z') {
        if (!d->demangle_tried) {
            d->demangle_tried = 1;
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h)
                d->demangle = (char *(*)(const char *, char *, size_t *, int *))
                    dlsym(h, "__cxa_demangle");
        }
        if (d->demangle) {
            int status = -1;
            char *s = d->demangle(raw, NULL, NULL, &status);
            if (s && status == 0)
                return s;
            free(s);
        }
    }
    return strdup(raw);
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *n = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
        n = dwarf_formstring(&a);
    return n ? n : dwarf_diename(die);
}

static int is_function(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
}

/* File name of the call site of an inlined subroutine. */
static const char *call_file(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    Dwarf_Word idx;
    Dwarf_Die cu;
    Dwarf_Files *files;
    size_t nfiles;
    if (!dwarf_attr(die, DW_AT_call_file, &a) || dwarf_formudata(&a, &idx) != 0)
        return NULL;
    if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 ||
        idx >= nfiles)
        return NULL;
    return dwarf_filesrc(files, idx, NULL, NULL);
}

static int call_line(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    Dwarf_Word line;
    if (!dwarf_attr(die, DW_AT_call_line, &a) || dwarf_formudata(&a, &line) != 0)
        return 0;
    return (int)line;
}

static void add(mts_dwarf *d, mt_location *out, size_t *n, size_t max, const char *file,
                int line, const char *fn)
{
    if (*n >= max)
        return;
    out[*n].filename = strdup(file ? file : "??");
    out[*n].defname = name_of(d, fn);
    out[*n].line = line > 0 ? (uint32_t)line : 0;
    out[*n].start_char = 0;
    out[*n].end_char = 0;
    (*n)++;
}

static int by_address(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

/* s[0..n) in address order, equal addresses in table order (a radix sort
 * of the addresses packed above the indices: a large module's table, cc1's
 * 29,000 symbols, in a fraction of qsort's time). -1 when the addresses
 * and indices do not fit in 64 bits or memory is short: qsort then. */
static int sort_by_address(struct sym *s, size_t n)
{
    GElf_Addr top = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].lo > top)
            top = s[i].lo;
    unsigned idx_bits = mt_bits_for(n), addr_bits = mt_bits_for(top);
    if (n < 2 || idx_bits + addr_bits > 64)
        return n < 2 ? 0 : -1;
    uint64_t *keys = malloc(n * sizeof *keys), *tmp = malloc(n * sizeof *tmp);
    struct sym *out = malloc(n * sizeof *out);
    uint64_t *sorted = NULL;
    if (keys && tmp && out) {
        for (size_t i = 0; i < n; i++)
            keys[i] = (uint64_t)s[i].lo << idx_bits | i;
        sorted = mt_radix_sort(keys, tmp, n, idx_bits, addr_bits);
    }
    if (sorted) {
        uint64_t mask = ((uint64_t)1 << idx_bits) - 1;
        for (size_t i = 0; i < n; i++)
            out[i] = s[sorted[i] & mask];
        memcpy(s, out, n * sizeof *s);
    }
    free(keys);
    free(tmp);
    free(out);
    return sorted ? 0 : -1;
}

static void build_symbols(struct module *m)
{
    m->syms_built = 1;
    int n = dwfl_module_getsymtab(m->mod);
    if (n <= 0)
        return;
    m->syms = malloc((size_t)n * sizeof *m->syms);
    if (!m->syms)
        return;
    for (int i = 0; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        /* (an empty name is not read here but where the symbol is found:
         * reading each of 29,000 names costs a cache miss apiece) */
        if (!name || sym.st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC))
            continue;
        int bind = GELF_ST_BIND(sym.st_info);
        m->syms[m->nsyms++] = (struct sym){
            addr, addr + sym.st_size, name,
            bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2};
    }
    if (sort_by_address(m->syms, m->nsyms) != 0)
        qsort(m->syms, m->nsyms, sizeof *m->syms, by_address);
    /* One entry per address: the preferred name (a name before none, then
     * by_address's first) stays, with the largest end. */
    size_t k = 0;
    for (size_t i = 0; i < m->nsyms; i++)
        if (k == 0 || m->syms[k - 1].lo != m->syms[i].lo) {
            m->syms[k++] = m->syms[i];
        } else {
            GElf_Addr hi = m->syms[i].hi > m->syms[k - 1].hi ? m->syms[i].hi : m->syms[k - 1].hi;
            int empty = !*m->syms[k - 1].name, other_empty = !*m->syms[i].name;
            if (empty != other_empty ? empty : by_address(&m->syms[i], &m->syms[k - 1]) < 0)
                m->syms[k - 1] = m->syms[i];
            m->syms[k - 1].hi = hi;
        }
    m->nsyms = k;
}

/* The function symbol whose range holds pc; an unsized symbol holds
 * everything up to the next symbol. */
static const char *symbol_at(struct module *m, GElf_Addr pc)
{
    if (!m->syms_built)
        build_symbols(m);
    size_t lo = 0, hi = m->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct sym *s = &m->syms[lo - 1];
    if (pc < s->hi || (s->hi == s->lo && (lo == m->nsyms || pc < m->syms[lo].lo)))
        return *s->name ? s->name : NULL;
    return NULL;
}

/* Locations for pc (already minus 1), innermost first; returns count. */
static size_t lookup(mts_dwarf *d, struct module *m, const char *path, Dwarf_Addr pc,
                     mt_location *out, size_t max)
{
    size_t n = 0;
    Dwfl_Module *mod = m->mod;
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *l = dwfl_module_getsrc(mod, pc);
    if (l)
        file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);

    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
    Dwarf_Die *scopes = NULL;
    int ns = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
    int fi = -1;
    for (int i = 0; i < ns; i++)
        if (is_function(&scopes[i])) {
            fi = i;
            break;
        }
    if (fi >= 0 && dwarf_tag(&scopes[fi]) == DW_TAG_inlined_subroutine) {
        Dwarf_Die *chain = NULL;
        int nc = dwarf_getscopes_die(&scopes[fi], &chain);
        for (int j = 0; j < nc; j++) {
            if (!is_function(&chain[j]))
                continue;
            add(d, out, &n, max, file, line, die_name(&chain[j]));
            if (dwarf_tag(&chain[j]) != DW_TAG_inlined_subroutine)
                break;
            file = call_file(&chain[j]);
            line = call_line(&chain[j]);
        }
        free(chain);
    } else if (fi >= 0) {
        add(d, out, &n, max, file, line, die_name(&scopes[fi]));
    }
    free(scopes);
    if (n > 0)
        return n;

    /* No DWARF function: the symbol table. */
    const char *symname = symbol_at(m, pc);
    if (symname)
        add(d, out, &n, max, file ? file : path, file ? line : 0, symname);
    return n;
}

int mts_dwarf_has_dwarf(mts_dwarf *d, const char *path)
{
    struct name *n = name_of_path(d, path);
    if (!n || !n->mod || open_module(d, n->mod) != 0)
        return -1;
    Dwarf_Addr bias;
    return dwfl_module_getdwarf(n->mod->mod, &bias) != NULL;
}

int mts_dwarf_build_id(mts_dwarf *d, const char *path, uint32_t fingerprint,
                       const unsigned char **id)
{
    struct name *n = name_of_path(d, path);
    if (!n || !n->mod || open_module(d, n->mod) != 0)
        return MTS_NO_MODULE;
    if (fingerprint && n->mod->fp != fingerprint)
        return MTS_CHANGED;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(n->mod->mod, id, &vaddr);
    return len > 0 ? len : 0;
}

int mts_dwarf_lookup(mts_dwarf *d, const char *path, uint32_t fingerprint, uint64_t offset,
                     mt_location *out, size_t max)
{
    struct name *n = name_of_path(d, path);
    if (!n || !n->mod || open_module(d, n->mod) != 0)
        return MTS_NO_MODULE;
    struct module *m = n->mod;
    if (fingerprint && m->fp != fingerprint)
        return MTS_CHANGED;
    if (max == 0 || offset == 0)
        return MTS_NO_SYMBOL;
    mt_location tmp[max];
    size_t k = lookup(d, m, path, (Dwarf_Addr)(offset + m->bias - 1), tmp, max);
    if (k == 0)
        return MTS_NO_SYMBOL;
    for (size_t i = 0; i < k; i++)   /* outermost first */
        out[i] = tmp[k - 1 - i];
    return (int)k;
}
