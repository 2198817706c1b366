/*
 * rss.c - the process's resident memory next to its heap: TRACE.rss, a
 * small text file written beside the trace by the writer thread, read by
 * the analysis tools (docs/format.md, "Resident memory"; its lines are
 * lib/common/rssformat.c's).
 *
 * Every interval (MEMTRACE_RSS_MS, default 100 ms) one sample line
 *     TIME_US RSS_BYTES HEAP_BYTES MAPPED_BYTES PEAK_RSS_BYTES
 * TIME_US in µs since the epoch (the trace's clock); RSS from
 * /proc/self/statm. The slower figures are taken about once a second (and
 * at the end), "-" otherwise: HEAP and MAPPED from glibc's mallinfo2
 * (bytes in use in malloc's arenas, and in blocks malloc mapped for
 * itself; less often when it is slow, see MALLINFO_RATIO), PEAK from VmHWM
 * in /proc/self/status. At the same slow ticks, when its cost allows
 * (LEDGER_RATIO), at a tick whose RSS is 1/16 above the largest reading's
 * (at the same pace), and at the end, a ledger line: /proc/self/smaps by kind
 * of mapping (smaps.c), the allocator's own statistics (allocstats.c) and
 * the recorder's own memory (own.c); docs/rss.md. The first line is
 *     memtrace-rss 2 PID START_US
 * naming the trace's process and start time. Each line is one write(2),
 * so a killed process leaves whole lines. The file is opened for each line
 * and closed again: the program never sees a descriptor of ours besides the
 * trace's (docs/recorder.md, "What the program sees").
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "allocstats.h"
#include "leaks.h"
#include "own.h"
#include "rss.h"
#include "rssformat.h"
#include "smaps.h"
#include "runfiles.h"

#define SLOW_EVERY_US 1000000
/* mallinfo2 walks every free chunk with the arena locks held: it is asked
 * again only after MALLINFO_RATIO times as long as it took, so that it
 * holds malloc's locks at most 0.1% of the time. */
#define MALLINFO_RATIO 1000
/* A ledger reading (smaps walks every mapping's page tables) is taken
 * again only after LEDGER_RATIO times the CPU time it took: at most 0.1%
 * of one CPU. */
#define LEDGER_RATIO 1000

static struct {
    int on;                     /* writing TRACE.rss */
    char path[4200];
    int64_t interval_us;
    int64_t last_us, last_slow_us;
    int64_t mallinfo_next_us;   /* no mallinfo2 before this time */
    int64_t ledger_next_us;     /* no ledger reading before this time */
    int64_t ledger_rss_max;     /* the largest RSS of a ledger reading so far */
    long page;
    char image[PATH_MAX];       /* the recorder's own file, "" if unknown */
} rs;

/* Appends one line to TRACE.rss; a failure (disk full, the file replaced)
 * stops the samples, the trace goes on. */
static void append(const char *line, size_t n)
{
    int fd = open(rs.path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || write(fd, line, n) != (ssize_t)n)
        rs.on = 0;
    if (fd >= 0)
        close(fd);
}

void mtr_rss_open(const char *trace_path, pid_t pid, int64_t start_us, int interval_ms)
{
    rs.on = 0;
    mt_runname side = { .kind = MT_RUNFILE_RSS };
    if (interval_ms <= 0 || mt_runname_make(rs.path, sizeof rs.path, trace_path, &side) < 0)
        return;
    /* As the trace: never through a symbolic link, only a file of ours. */
    int fd = open(rs.path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
             ftruncate(fd, 0) == 0;
    close(fd);
    if (!ok)
        return;
    rs.on = 1;
    rs.interval_us = (int64_t)interval_ms * 1000;
    rs.last_us = rs.last_slow_us = rs.mallinfo_next_us = rs.ledger_rss_max = 0;
    /* the first reading after a second: a short process pays for one, at its end */
    rs.ledger_next_us = start_us + SLOW_EVERY_US;
    rs.page = sysconf(_SC_PAGESIZE);
    Dl_info di;
    rs.image[0] = '\0';
    /* smaps names files by their real path (realpath: a caller's buffer,
     * no allocation) */
    if (dladdr((void *)mtr_rss_open, &di) && di.dli_fname && di.dli_fname[0] &&
        !realpath(di.dli_fname, rs.image))
        rs.image[0] = '\0';
    char line[96];
    int n = mt_rssf_header(line, sizeof line, (long)pid, (long long)start_us);
    if (n > 0)
        append(line, (size_t)n);
}

static long long statm_rss(void)
{
    char buf[128];
    long long size, res;
    if (mtr_proc_read("/proc/self/statm", buf, sizeof buf) < 0 ||
        sscanf(buf, "%lld %lld", &size, &res) != 2)
        return -1;
    return res * rs.page;
}

static long long peak_rss(void)
{
    char buf[4096];
    const char *v;
    long long kb;
    if (mtr_lk_status_field("/proc/self/status", "VmHWM:", buf, sizeof buf, &v) != 1 ||
        sscanf(v, "%lld", &kb) != 1)
        return -1;
    return kb * 1024;
}

static int64_t mono_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static long long proc_threads(void)
{
    char buf[4096];
    const char *v;
    long long n;
    return mtr_lk_status_field("/proc/self/status", "Threads:", buf, sizeof buf, &v) == 1 &&
                   sscanf(v, "%lld", &n) == 1 ? n : -1;
}

static int64_t cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* glibc's mallinfo2 into *g, paced (MALLINFO_RATIO) from now. 1 if taken. */
static int take_mallinfo(int64_t now_us, struct mtr_glibc_stats *g)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    int64_t a = mono_us();
    struct mallinfo2 mi = mallinfo2();
    rs.mallinfo_next_us = now_us + (mono_us() - a) * MALLINFO_RATIO;
    g->uordblks = mi.uordblks;
    g->hblkhd = mi.hblkhd;
    g->fordblks = mi.fordblks;
    return 1;
#else
    (void)now_us;
    (void)g;
    return 0;
#endif
}

static char ledger_line[MT_RSSF_MAX_LINE];   /* written after the sample line */
static int ledger_len;

/* One ledger line: smaps by kind, then at once the allocator's figures
 * (glibc's into *g, *have_g set), the recorder's own. Paced by the CPU
 * time it took (LEDGER_RATIO): waiting for malloc's locks costs none. */
static void ledger(int64_t now_us, struct mtr_glibc_stats *g, int *have_g)
{
    int64_t t0 = mono_us(), c0 = cpu_us();
    mt_rssf_ledger l;
    mt_rssf_ledger_clear(&l);
    l.time_us = now_us;
    long long image_rss = 0, mapped = 0;
    if (mtr_smaps_read(&l, rs.image[0] ? rs.image : NULL, &image_rss) != 0) {
        rs.ledger_next_us = now_us + (cpu_us() - c0) * LEDGER_RATIO;
        return;
    }
    if (mtr_allocstats_glibc())
        *have_g = take_mallinfo(now_us, g);
    mtr_allocstats_read(&l, *have_g ? g : NULL);
    long long own = mtr_own_resident(&mapped);
    if (own < 0)
        own = 0;
    if (own > l.anon)
        own = l.anon;   /* mincore and smaps a moment apart */
    l.anon -= own;
    l.own = own + image_rss;
    l.threads = proc_threads();
    l.cost_us = mono_us() - t0;
    if (l.rss > rs.ledger_rss_max)
        rs.ledger_rss_max = l.rss;
    rs.ledger_next_us = now_us + (cpu_us() - c0) * LEDGER_RATIO;
    int n = mt_rssf_ledger_line(ledger_line, sizeof ledger_line, &l);
    ledger_len = n > 0 ? n : 0;
}

/* slow: the slower figures too; with_ledger: a ledger line if one is due
 * (force_ledger: whatever its pace). */
static void sample(int64_t now_us, int slow, int with_ledger, int force_ledger)
{
    long long rss = statm_rss();
    if (rss < 0)
        return;
    long long heap = -1, mapped = -1, peak = -1;
    struct mtr_glibc_stats g;
    int have_g = 0;
    /* RSS 1/16 above the largest reading so far: a reading now, between
     * the regular ones (at the same pace), so that a peak is not missed */
    if (!slow && with_ledger && rs.ledger_rss_max > 0 &&
        rss > rs.ledger_rss_max + rs.ledger_rss_max / 16 && now_us >= rs.ledger_next_us)
        ledger(now_us, &g, &have_g);
    if (slow) {
        if (with_ledger && (force_ledger || now_us >= rs.ledger_next_us))
            ledger(now_us, &g, &have_g);
        else if (now_us >= rs.mallinfo_next_us)
            have_g = take_mallinfo(now_us, &g);
        if (have_g) {
            heap = (long long)(g.uordblks + g.hblkhd);
            mapped = (long long)g.hblkhd;
        }
        peak = peak_rss();
        rs.last_slow_us = now_us;
    }
    char line[160];
    int n = mt_rssf_sample(line, sizeof line, (long long)now_us, rss, heap, mapped, peak);
    if (n > 0)
        append(line, (size_t)n);
    if (ledger_len > 0 && rs.on)
        append(ledger_line, (size_t)ledger_len);
    ledger_len = 0;
    rs.last_us = now_us;
}

void mtr_rss_tick(int64_t now_us, int force)
{
    if (!rs.on || (!force && now_us - rs.last_us < rs.interval_us))
        return;
    /* force: the process is dying (tracer.c); no smaps walk then */
    sample(now_us, force || now_us - rs.last_slow_us >= SLOW_EVERY_US, !force, 0);
}

int64_t mtr_rss_due_us(int64_t now_us)
{
    if (!rs.on)
        return INT64_MAX;
    int64_t d = rs.last_us + rs.interval_us - now_us;
    return d > 0 ? d : 0;
}

void mtr_rss_close(int64_t now_us)
{
    if (!rs.on)
        return;
    sample(now_us, 1, 1, 1);
    rs.on = 0;
}

void mtr_rss_forget(void)
{
    rs.on = 0;
}
