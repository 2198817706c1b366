/*
 * attach_target.c - a process as 'memtrace attach' sees it before touching
 * it (see attach_target.h): /proc/PID/status, maps, environ, ns/mnt, and
 * the dynamic symbols of its C library (libelf), read through
 * /proc/PID/root so that a process in a container is read as it sees its
 * files (attach_files.c: never a path or link the process could have
 * planted); and its pidfd and start time, its identity for the whole
 * attach.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach_files.h"
#include "attach_target.h"
#include "proc_trace.h"

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int is_libc(const char *path)
{
    const char *b = base_name(path);
    return strcmp(b, "libc.so.6") == 0 || (strncmp(b, "libc-2.", 7) == 0 && strstr(b, ".so"));
}

static int is_recorder(const char *path)
{
    return strstr(base_name(path), "libmemtrace.so") != NULL;
}

static int read_maps(attach_target *t)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)t->pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, off;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off, &name_at) < 4 ||
            !name_at)
            continue;
        char *name = line + name_at;
        name[strcspn(name, "\n")] = '\0';
        if (name[0] != '/')
            continue;
        if (!t->libc[0] && off == 0 && is_libc(name)) {
            snprintf(t->libc, sizeof t->libc, "%s", name);
            t->libc_base = lo;
            t->libc_end = hi;
        }
        if (!t->recorder[0] && off == 0 && is_recorder(name)) {
            snprintf(t->recorder, sizeof t->recorder, "%s", name);
            t->rec_base = lo;
            t->rec_end = hi;
        }
    }
    fclose(f);
    return 0;
}

static ino_t ns_ino(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Field 22 of /proc/PID/stat (after the name in parentheses, which may
 * hold anything), or 0. */
static unsigned long long start_time_of(pid_t pid)
{
    char path[64];
    size_t len;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char *s = proc_read_file(path, &len);
    unsigned long long v = 0;
    if (!s)
        return 0;
    char *end = s + len, *p = NULL;
    for (char *q = s; q < end; q++)
        if (*q == ')')
            p = q;   /* the last one closes the name */
    if (p) {
        int field = 2;
        for (; p < end && field < 22; p++)
            if (*p == ' ')
                field++;
        if (field == 22) {
            char num[32];
            size_t n = 0;
            while (p < end && n < sizeof num - 1 && *p >= '0' && *p <= '9')
                num[n++] = *p++;
            num[n] = '\0';
            v = strtoull(num, NULL, 10);
        }
    }
    free(s);
    return v;
}

void attach_target_close(attach_target *t)
{
    if (t->pidfd >= 0)
        close(t->pidfd);
    t->pidfd = -1;
}

int attach_target_exited(const attach_target *t)
{
    struct pollfd p = { t->pidfd, POLLIN, 0 };
    return t->pidfd < 0 || poll(&p, 1, 0) != 0;
}

/* /proc/PID/status, NUL-terminated; NULL with errno set when it cannot
 * be read. */
static char *read_status(pid_t pid, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *st = proc_read_file(path, len);
    if (!st)
        return NULL;
    char *nst = realloc(st, *len + 1);
    if (!nst) {
        free(st);
        errno = ENOMEM;
        return NULL;
    }
    nst[*len] = '\0';
    return nst;
}

/* The value of status field key (its name, the colon and the tab): the
 * text after it on its line, or NULL when no line starts with it. */
static const char *status_field(const char *st, const char *key)
{
    size_t k = strlen(key);
    for (const char *l = st; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, key, k))
            return l + k;
    return NULL;
}

pid_t attach_target_tracer_now(const attach_target *t)
{
    size_t len;
    char *st = read_status(t->pid, &len);
    const char *v = st ? status_field(st, "TracerPid:\t") : NULL;
    pid_t tracer = v ? (pid_t)atoi(v) : 0;   /* atoi stops at the line's end */
    free(st);
    return tracer;
}

int attach_target_same(const attach_target *t)
{
    if (attach_target_exited(t) || syscall(SYS_pidfd_send_signal, t->pidfd, 0, NULL, 0) != 0)
        return 0;
    return start_time_of(t->pid) == t->start_time && t->start_time != 0;
}

struct live_count {
    pid_t pid;
    int n;
};

/* proc_task_each's callback: counts the threads other than the leader
 * that have not ended. */
static int count_live(int tid, void *ctx)
{
    struct live_count *c = ctx;
    if (tid == (int)c->pid)
        return 0;
    char sp[96];
    snprintf(sp, sizeof sp, "/proc/%d/task/%d/stat", (int)c->pid, tid);
    size_t len;
    char *st = proc_read_file(sp, &len);
    if (!st)
        return 0;
    char *paren = memrchr(st, ')', len);
    if (paren && paren + 2 < st + len && paren[2] != 'Z' && paren[2] != 'X')
        c->n++;
    free(st);
    return 0;
}

/* Threads of pid other than its leader that have not ended. */
static int live_threads(pid_t pid)
{
    struct live_count c = { pid, 0 };
    proc_task_each((int)pid, count_live, &c);
    return c.n;
}

int attach_target_read(pid_t pid, attach_target *t, char *why, size_t cap)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (t->pidfd < 0) {
        int e = errno;
        snprintf(why, cap, e == ESRCH ? "no such process"
                           : e == ENOSYS ? "this kernel has no pidfd_open (Linux 5.6 or later "
                                           "is needed to attach safely)"
                                         : "pidfd_open: %s", strerror(e));
        errno = e;
        return -1;
    }
    t->start_time = start_time_of(pid);
    char path[64];
    size_t len;
    char *st = read_status(pid, &len);
    if (!st) {
        int e = errno;
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
        snprintf(why, cap, e == ENOENT ? "no such process" : e == ENOMEM ? "out of memory" : "%s: %s",
                 path, strerror(e));
        errno = e == ENOENT ? ESRCH : e;
        return -1;
    }
    const char *v;
    if ((v = status_field(st, "Name:\t")))
        sscanf(v, "%63[^\n]", t->comm);
    if ((v = status_field(st, "State:\t")))
        t->state = *v;
    if ((v = status_field(st, "TracerPid:\t")))
        t->tracer = (pid_t)atoi(v);
    if ((v = status_field(st, "Uid:\t")))
        t->uid = (uid_t)strtoul(v, NULL, 10);
    if ((v = status_field(st, "Gid:\t")))
        t->gid = (gid_t)strtoul(v, NULL, 10);
    if ((v = status_field(st, "Groups:\t"))) {
        char *e;
        while (t->ngroups < 64) {
            unsigned long g = strtoul(v, &e, 10);
            if (e == v)
                break;
            t->groups[t->ngroups++] = (gid_t)g;
            v = e;
        }
    }
    free(st);
    /* The files in /proc/PID of a process that is not dumpable (it changed
     * credentials, or prctl(PR_SET_DUMPABLE, 0)) belong to root. */
    struct stat ps;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    t->nondumpable = stat(path, &ps) == 0 && ps.st_uid == 0 && t->uid != 0;
    if (t->state == 'Z' || t->state == 'X') {
        /* A leader that ended by pthread_exit stays a zombie while its
         * other threads run: the process lives, but its /proc/PID files
         * (maps, mem) are the ended thread's, empty. */
        int others = live_threads(pid) > 0;
        errno = others ? EINVAL : ESRCH;
        snprintf(why, cap, others ? "its main thread has ended (pthread_exit) while other "
                                    "threads run on: such a process cannot be attached (its "
                                    "memory map is no longer readable through its PID); start "
                                    "it under 'memtrace run' instead"
                                  : "the process has exited");
        return -1;
    }
    if (read_maps(t) != 0) {
        int e = errno;
        snprintf(why, cap, "/proc/%d/maps: %s", (int)pid, strerror(e));
        errno = e;
        return -1;
    }
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    char *env = proc_read_file(path, &len);
    if (env) {
        char *pre = proc_environ_value(env, len, "LD_PRELOAD");
        char *mt = proc_environ_value(env, len, "MEMTRACE");
        t->preloaded = (pre && strstr(pre, "libmemtrace")) || (mt && *mt);
        free(pre);
        free(mt);
        free(env);
    }
    snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
    ino_t a = ns_ino("/proc/self/ns/mnt"), b = ns_ino(path);
    t->same_mnt = a && a == b;
    return 0;
}

int attach_target_same_file(const attach_target *t, const char *path)
{
    struct stat a, b;
    char why[256];
    int fd = attach_open_in_root(t, path, 0, why, sizeof why);
    if (fd < 0)
        return 0;
    int same = fstat(fd, &b) == 0 && stat(path, &a) == 0 && a.st_dev == b.st_dev &&
               a.st_ino == b.st_ino;
    close(fd);
    return same;
}

/* name in the dynamic symbols of the object mapped at base..end from
 * file (its path in the maps). */
static uint64_t symbol_in(const attach_target *t, const char *file, uint64_t base, uint64_t end,
                          const char *name)
{
    int fd = attach_open_mapped(t, file, base, end);
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    uint64_t found = 0;
    GElf_Ehdr eh;
    if (!e || !gelf_getehdr(e, &eh)) {
        if (e)
            elf_end(e);
        close(fd);
        return 0;
    }
    Elf_Scn *scn = NULL, *dynsym = NULL, *versym = NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_DYNSYM)
            dynsym = scn;
        else if (sh.sh_type == SHT_GNU_versym)
            versym = scn;
    }
    GElf_Shdr sh;
    Elf_Data *d = dynsym ? elf_getdata(dynsym, NULL) : NULL;
    Elf_Data *vd = versym ? elf_getdata(versym, NULL) : NULL;
    if (d && gelf_getshdr(dynsym, &sh) && sh.sh_entsize) {
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value ||
                GELF_ST_TYPE(s.st_info) != STT_FUNC)
                continue;
            const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
            if (!nm || strcmp(nm, name) != 0)
                continue;
            GElf_Versym v = 0;
            if (vd && gelf_getversym(vd, (int)i, &v) && (v & 0x8000))
                continue;   /* a hidden (old) version */
            found = (eh.e_type == ET_DYN ? base : 0) + s.st_value;
            break;
        }
    }
    elf_end(e);
    close(fd);
    return found;
}

uint64_t attach_target_libc_symbol(const attach_target *t, const char *name)
{
    return t->libc[0] ? symbol_in(t, t->libc, t->libc_base, t->libc_end, name) : 0;
}

uint64_t attach_target_recorder_symbol(const attach_target *t, const char *name)
{
    return t->recorder[0] ? symbol_in(t, t->recorder, t->rec_base, t->rec_end, name) : 0;
}
