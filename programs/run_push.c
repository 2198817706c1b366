/*
 * run_push.c - the push options of 'memtrace run' and the profiles they
 * send: each interval's snapshot (run_snapshots.c) becomes a gzipped pprof
 * in Pyroscope's or Parca's JSON envelope, or an OTLP request, queued on
 * lib/push's sender. Labels: __name__=memory, service_name (the program's
 * name unless --label service_name=... says otherwise), then --label's.
 */
#include "run_push.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memtrace/present.h"
#include "control_proto.h"
#include "runfiles.h"
#include "safefile.h"
#include "../lib/push/push.h"

struct run_push {
    mt_push *sender;
    mt_push_format format;
    double every_s;
    mt_push_label labels[RUN_PUSH_MAX_LABELS + 2];
    char *owned[RUN_PUSH_MAX_LABELS];
    int n_labels, has_service;
    /* OTLP: the interval's allocations come after prev_end of the
     * recording that started at prev_start (trace times, microseconds) */
    unsigned long long prev_start;
    long long prev_end;
    int prev_pid;
    char build_id[81];
    char *url;             /* where (for the status file) */
    char *status_path;     /* FILE.push, or NULL */
};

/* The labels of every profile: __name__, service_name (set per profile
 * unless --label gives it), then --label's, as copies p owns. */
static void take_labels(run_push *p, const run_push_opts *o)
{
    p->labels[p->n_labels++] = (mt_push_label){ "__name__", "memory" };
    p->labels[p->n_labels++] = (mt_push_label){ "service_name", NULL };   /* set per profile */
    for (int i = 0; i < o->n_labels; i++) {
        char *kv = strdup(o->labels[i]);
        if (!kv)
            continue;
        p->owned[i] = kv;
        char *eq = strchr(kv, '=');
        *eq = '\0';
        if (!strcmp(kv, "service_name")) {
            p->labels[1].value = eq + 1;
            p->has_service = 1;
        } else {
            p->labels[p->n_labels++] = (mt_push_label){ kv, eq + 1 };
        }
    }
}

/* c: 0x100 + the option's place in run_push_take's list; 1 taken, -1
 * after the message */
static int run_push_option(run_push_opts *o, const char *cmd, int c, const char *arg)
{
    switch (c) {
    case 0x100:
        o->url = arg;
        return 1;
    case 0x101: {
        long long ms = mt_ctl_time_ms_at_least(arg, 100);
        if (ms < 0) {
            fprintf(stderr, "memtrace %s: --push-every %s: expected a time of at least 100ms, "
                            "such as 60s or 5m\n", cmd, arg);
            return -1;
        }
        o->every_s = ms / 1000.0;
        return 1;
    }
    case 0x102:
        if (!mt_push_format_named(arg)) {
            fprintf(stderr, "memtrace %s: --push-format %s: expected pyroscope, parca, otlp or "
                            "pyroscope-ingest\n", cmd, arg);
            return -1;
        }
        o->format = arg;
        return 1;
    case 0x103: {
        const char *eq = strchr(arg, '=');
        char name[128];
        size_t k = eq ? (size_t)(eq - arg) : 0;
        if (k >= sizeof name)
            k = 0;
        memcpy(name, arg, k);
        name[k] = '\0';
        if (!eq || !mt_push_label_name_ok(name) || !strcmp(name, "__name__")) {
            fprintf(stderr, "memtrace %s: --label %s: expected NAME=VALUE, NAME of letters, "
                            "digits and _ (not starting with a digit; not __name__)\n", cmd, arg);
            return -1;
        }
        if (o->n_labels >= RUN_PUSH_MAX_LABELS) {
            fprintf(stderr, "memtrace %s: --label: at most %d labels\n", cmd,
                    RUN_PUSH_MAX_LABELS);
            return -1;
        }
        o->labels[o->n_labels++] = arg;
        return 1;
    }
    case 0x104:
        if (!*arg || strpbrk(arg, "\r\n")) {
            fprintf(stderr, "memtrace %s: --push-tenant: expected a tenant ID on one line\n", cmd);
            return -1;
        }
        o->tenant = arg;
        return 1;
    case 0x105:
        o->auth_file = arg;
        return 1;
    }
    return 0;
}

int run_push_take(void *ctx, const char *arg, const char *opt)
{
    static const char *const names[] = { "--push", "--push-every", "--push-format", "--label",
                                         "--push-tenant", "--push-auth-file" };
    run_push_opts *o = ctx;
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (!strcmp(opt, names[i]))
            return run_push_option(o, o->cmd, 0x100 + i, arg) > 0 ? 0 : 2;
    return 2;
}

double run_push_every(const run_push *p)
{
    return p->every_s;
}

run_push *run_push_begin(const run_push_opts *o, const char *cmd, int *bad)
{
    *bad = 0;
    if (!o->url) {
        if (o->every_s || o->format || o->tenant || o->auth_file || o->n_labels) {
            fprintf(stderr, "memtrace %s: --push-every, --push-format, --label, --push-tenant "
                            "and --push-auth-file need --push URL\n", cmd);
            *bad = 1;
        }
        return NULL;
    }
    *bad = 1;
    if (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0) {
        fprintf(stderr, "memtrace %s: --push %s: expected an http:// or https:// URL\n", cmd,
                o->url);
        return NULL;
    }
    mt_push_format f = o->format ? mt_push_format_named(o->format) : mt_push_format_of_url(o->url);
    if (!f) {
        fprintf(stderr, "memtrace %s: --push %s: give --push-format pyroscope, parca, otlp or "
                        "pyroscope-ingest (the URL's path does not say: "
                        ".../push.v1.PusherService/Push, .../profiles/writeraw, "
                        ".../v1development/profiles, .../ingest)\n", cmd, o->url);
        return NULL;
    }
    char *auth = NULL;
    if (o->auth_file) {
        char buf[256];
        const char *why = NULL;
        if (!(auth = mt_push_read_auth(o->auth_file, buf, sizeof buf, &why))) {
            fprintf(stderr, "memtrace %s: --push-auth-file %s: %s\n", cmd, o->auth_file, why);
            return NULL;
        }
    }
    run_push *p = calloc(1, sizeof *p);
    char *url = mt_push_endpoint(o->url, f);
    if (!p || !url) {
        fprintf(stderr, "memtrace %s: out of memory\n", cmd);
        free(p);
        free(url);
        free(auth);
        return NULL;
    }
    p->format = f;
    p->every_s = o->every_s ? o->every_s : 60;
    take_labels(p, o);
    mt_push_config c = { .url = url, .format = f, .tenant = o->tenant, .auth = auth };
    p->url = strdup(url);
    char *err = NULL;
    p->sender = mt_push_start(&c, &err);
    if (auth) {
        memset(auth, 0, strlen(auth));
        free(auth);
    }
    free(url);
    if (!p->sender) {
        fprintf(stderr, "memtrace %s: --push: %s\n", cmd, err ? err : "cannot start");
        free(err);
        for (int i = 0; i < RUN_PUSH_MAX_LABELS; i++)
            free(p->owned[i]);
        free(p->url);
        free(p);
        return NULL;
    }
    *bad = 0;
    return p;
}

/* the gzipped pprof of s in memory (malloc'd), through a memory file;
 * alloc_* from delta when it is not NULL */
static uint8_t *pprof_bytes(const mt_selection *s, const mt_selection *delta, long long from,
                            size_t *len)
{
    int fd = memfd_create("memtrace-push", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    mt_pprof_options po = { .level = 6 };
    char *err = NULL;
    uint8_t *b = NULL;
    struct stat st;
    if (mt_write_pprof_fd_interval(fd, s, delta, from, &po, &err) == 0 && fstat(fd, &st) == 0 && st.st_size > 0 &&
        (b = malloc((size_t)st.st_size))) {
        if (pread(fd, b, (size_t)st.st_size, 0) != st.st_size) {
            free(b);
            b = NULL;
        } else {
            *len = (size_t)st.st_size;
        }
    }
    free(err);
    close(fd);
    return b;
}

/* The GNU build-id of /proc/PID/exe, or once the process is gone of the
 * file the trace names as its executable, as hex into out ("" if none). */
static void exe_build_id(int pid, const char *exe, char *out, size_t cap)
{
    out[0] = '\0';
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && exe && exe[0] == '/')
        fd = open(exe, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    Elf_Scn *scn = NULL;
    while (e && !out[0] && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t off = 0, noff, doff;
        GElf_Nhdr nh;
        while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz * 2 < cap) {
                const unsigned char *b = (const unsigned char *)d->d_buf + doff;
                for (size_t i = 0; i < nh.n_descsz; i++)
                    snprintf(out + 2 * i, 3, "%02x", b[i]);
                break;
            }
        }
    }
    if (e)
        elf_end(e);
    close(fd);
}

/* The interval since the previous push of the same recording (trace
 * times, microseconds: after *from, 0 for a recording's first push, up to
 * *end included) and its allocations (*delta; NULL for all of s's). A read
 * of a trace being written may end inside a microsecond whose other events
 * come later: unless s is whole, *end stops before s's latest microsecond,
 * whose allocations the next push counts. 0, or -1 when the selection
 * cannot be made. */
static int interval(run_push *p, const mt_selection *s, int pid, int whole, long long *from,
                    long long *end, mt_selection **delta)
{
    const mt_model *m = mt_selection_model(s);
    const mt_trace_info *info = mt_model_info(m);
    *from = 0;
    *delta = NULL;
    if (pid == p->prev_pid && (unsigned long long)info->start_time == p->prev_start)
        *from = p->prev_end;
    else if (p->format == MT_PUSH_OTLP)
        exe_build_id(pid, info->executable_name, p->build_id, sizeof p->build_id);
    *end = (long long)mt_model_end(m);
    if (!whole && *end > *from)
        *end -= 1;
    if (*from <= 0 && whole)
        return 0;
    char text[96];
    if (*from <= 0)
        snprintf(text, sizeof text, "alloc:-%lldus", *end);
    else if (*end > *from)
        snprintf(text, sizeof text, "alloc:%lldus-%lldus", *from + 1, *end);
    else   /* nothing after the previous push's end yet */
        snprintf(text, sizeof text, "alloc:<0us");
    if (*end < *from)
        *end = *from;
    char *err = NULL;
    mt_filter *f = mt_filter_parse(text, &err, NULL);
    mt_plumbing *pl = mt_plumbing_new(1);
    *delta = f ? mt_select_sites(m, f, MT_TIME_END, pl, NULL) : NULL;
    mt_plumbing_free(pl);
    mt_filter_free(f);
    free(err);
    return *delta ? 0 : -1;
}

/* the next interval starts where this one ended */
static void interval_done(run_push *p, const mt_selection *s, int pid, long long end)
{
    p->prev_pid = pid;
    p->prev_start = (unsigned long long)mt_model_info(mt_selection_model(s))->start_time;
    p->prev_end = end;
}

/* The OTLP request of s: alloc_* of the interval, inuse_* now. */
static uint8_t *otlp_bytes(run_push *p, const mt_selection *s, const mt_selection *delta,
                           long long from, long long end, const char *name, int pid,
                           size_t *len)
{
    const mt_trace_info *info = mt_model_info(mt_selection_model(s));
    const char *names[RUN_PUSH_MAX_LABELS], *values[RUN_PUSH_MAX_LABELS];
    size_t n = 0;
    for (int i = 2; i < p->n_labels; i++) {
        names[n] = p->labels[i].name;
        values[n++] = p->labels[i].value;
    }
    mt_otlp_options o = {
        .alloc = delta,
        .service_name = p->has_service ? p->labels[1].value : name,
        .pid = pid,
        .executable_name = name,
        .build_id_hex = p->build_id[0] ? p->build_id : NULL,
        .start_unix_nano = ((unsigned long long)info->start_time + (unsigned long long)from) * 1000,
        .end_unix_nano = ((unsigned long long)info->start_time + (unsigned long long)end) * 1000 + 1,
        .attribute_names = names,
        .attribute_values = values,
        .n_attributes = n,
    };
    unsigned char *out = NULL;
    char *err = NULL;
    if (mt_otlp_request(s, &o, &out, len, &err) != 0)
        out = NULL;
    free(err);
    return out;
}

void run_push_status_at(run_push *p, const char *file)
{
    char path[PATH_MAX + 16];
    if (!p || mt_runname_push_status(path, sizeof path, file) < 0)
        return;
    free(p->status_path);
    p->status_path = strdup(path);
}

/* FILE.push now: written aside and renamed (a reader never sees half),
 * never through a link planted there (safefile.h) */
static void publish(run_push *p)
{
    if (!p->status_path)
        return;
    mt_push_stats st;
    mt_push_stats_now(p->sender, &st);
    char line[512];
    mt_push_summary(&st, line, sizeof line);
    mt_outfile of;
    const char *why;
    FILE *f = mt_outfile_fopen(&of, p->status_path, &why);
    if (f) {
        int bad = fprintf(f, "%d %s\n%s\n", (int)getpid(), p->url ? p->url : "?", line) < 0;
        mt_outfile_fclose(&of, f, bad, &why);
    }
}

void run_push_status_read(const char *file, char *buf, size_t cap)
{
    char path[PATH_MAX + 16], text[1024];
    buf[0] = '\0';
    if (mt_runname_push_status(path, sizeof path, file) < 0)
        return;
    /* (the process names FILE: looked at first, opened for reading only
     * if it is a regular file, never a device or a FIFO, never a link) */
    int o = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (o < 0)
        return;
    int fd = -1;
    if (fstat(o, &st) == 0 && S_ISREG(st.st_mode)) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", o);
        fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    }
    close(o);
    if (fd < 0)
        return;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return;
    text[n] = '\0';
    int pid = 0, at = 0;
    char url[512];
    char *nl = strchr(text, '\n');
    if (!nl || sscanf(text, "%d %511s%n", &pid, url, &at) < 2 || pid <= 0)
        return;
    char *line = nl + 1;
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "push: ", 6) != 0)
        return;
    char e_url[2048], e_line[4096];
    mt_text_escape(e_url, sizeof e_url, url);   /* whoever wrote it chose these bytes */
    mt_text_escape(e_line, sizeof e_line, line + 6);
    int alive = kill((pid_t)pid, 0) == 0 || errno == EPERM;
    snprintf(buf, cap, "push to %s by process %d: %s%s", e_url, pid, e_line,
             alive ? "" : " (that process has ended)");
}

void run_push_profile(run_push *p, const mt_selection *s, const char *name, int pid, int whole)
{
    if (!p)
        return;
    size_t len = 0;
    long long from, end;
    mt_selection *delta;
    if (interval(p, s, pid, whole, &from, &end, &delta) != 0)
        return;
    publish(p);   /* (the counts so far: this one is not queued yet) */
    if (p->format == MT_PUSH_OTLP) {
        uint8_t *b = otlp_bytes(p, s, delta, from, end, name, pid, &len);
        mt_selection_free(delta);
        if (b) {
            interval_done(p, s, pid, end);
            mt_push_submit(p->sender, b, len);
        }
        return;
    }
    uint8_t *gz = pprof_bytes(s, delta, from, &len);
    mt_selection_free(delta);
    char *body = NULL;
    if (gz && !p->has_service)
        p->labels[1].value = name;
    if (gz && p->format == MT_PUSH_PYROSCOPE_INGEST) {
        /* the gzipped pprof itself; the interval in Unix seconds */
        unsigned long long t0 = mt_model_info(mt_selection_model(s))->start_time;
        char *q = mt_push_ingest_query(p->labels, (size_t)p->n_labels,
                                       (long long)((t0 + (unsigned long long)from) / 1000000),
                                       (long long)((t0 + (unsigned long long)end) / 1000000));
        if (q) {
            interval_done(p, s, pid, end);
            mt_push_submit_query(p->sender, gz, len, q);
        } else {
            free(gz);
        }
        return;
    }
    if (gz) {
        if (p->format == MT_PUSH_PYROSCOPE)
            body = mt_push_pyroscope_body(p->labels, (size_t)p->n_labels, gz, len);
        else if (p->format == MT_PUSH_PARCA)
            body = mt_push_parca_body(p->labels, (size_t)p->n_labels, gz, len);
    }
    free(gz);
    if (body) {
        interval_done(p, s, pid, end);
        mt_push_submit(p->sender, (uint8_t *)body, strlen(body));
    }
}

void run_push_end(run_push *p, const char *cmd)
{
    if (!p)
        return;
    mt_push_stats st;
    /* what is still queued gets one more try, within a bound */
    mt_push_finish(p->sender, 10, &st);
    char line[512];
    mt_push_summary(&st, line, sizeof line);
    fprintf(stderr, "memtrace %s: %s\n", cmd, line);
    for (int i = 0; i < RUN_PUSH_MAX_LABELS; i++)
        free(p->owned[i]);
    if (p->status_path)
        unlink(p->status_path);
    free(p->status_path);
    free(p->url);
    free(p);
}
