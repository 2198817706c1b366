/*
 * run_traces.c - unit test of programs/run_traces.c, what `memtrace run`'s
 * summary and an empty report's hint know of a run's traces:
 * run_trace_files finds FILE and the traces its processes wrote beside it
 * (FILE.PID, FILE.PID.K, FILE-NNNN, pieces), sorted by name and spelled as
 * FILE is, and leaves out side files (.rss, .leaks, .mtidx), look-alike
 * names, links, directories, files older than the run and another user's
 * (counted); run_trace_read gives a fixture trace's known counts (leak.ctf:
 * 6179 sampled blocks, 6187 samples, pid 11730, 49496000 bytes, its end
 * not marked), and for a cut trace, a file that is no trace and a link,
 * what went wrong; run_trace_cmp_bytes puts the largest first.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_traces.h"
#include "../check.h"

static char dir[4096];

/* dir/name, in a buffer the next call reuses. */
static const char *at(const char *name)
{
    static char buf[4200];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static void touch(const char *name, long age)
{
    int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age;
    t[1] = t[0];
    utimensat(AT_FDCWD, at(name), t, 0);
}

/* names under dir, joined by spaces, in a buffer the next call reuses. */
static const char *under(const char *const *names, size_t n)
{
    static char out[16384];
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s/%s", i ? " " : "", dir,
                     names[i]) < 0)
            break;
    return out;
}

/* The paths found, joined by spaces, in a buffer the next call reuses. */
static const char *found(const char *file, const struct timespec *since, uid_t owner,
                         size_t *foreign, size_t *n)
{
    static char out[4096];
    char **v;
    *n = run_trace_files(file, since, owner, foreign, &v);
    out[0] = '\0';
    for (size_t i = 0; i < *n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", v[i]);
    run_trace_files_free(v, *n);
    return out;
}

static int copy(const char *from, const char *to, size_t limit)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[4096];
    size_t n, total = 0;
    while (in && out && total < limit && (n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (n > limit - total)
            n = limit - total;
        fwrite(buf, 1, n, out);
        total += n;
    }
    int ok = in && out;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

static void test_files(void)
{
    const char *run[] = {"app.ctf", "app.ctf.123", "app.ctf.123.2", "app.ctf.45",
                         "app.ctf-0002", "app.ctf.45.part0003"};
    const char *not_run[] = {"app.ctf.rss", "app.ctf.123.leaks", "app.ctf.mtidx", "app.ctfx",
                             "app.ctf.x1", "app.ctf.12a", "other.ctf.123"};
    for (size_t i = 0; i < sizeof run / sizeof *run; i++)
        touch(run[i], 0);
    for (size_t i = 0; i < sizeof not_run / sizeof *not_run; i++)
        touch(not_run[i], 0);
    char target[4200];
    snprintf(target, sizeof target, "%s", at("app.ctf.123"));
    symlink(target, at("app.ctf.77"));   /* a link: never followed */
    mkdir(at("app.ctf.88"), 0755);                  /* a directory */

    size_t n, foreign = 99;
    const char *all = found(at("app.ctf"), NULL, getuid(), &foreign, &n);
    const char *sorted[] = {"app.ctf", "app.ctf-0002", "app.ctf.123", "app.ctf.123.2",
                            "app.ctf.45", "app.ctf.45.part0003"};
    const char *want = under(sorted, 6);
    CHECK(n == 6 && strcmp(all, want) == 0 && foreign == 0,
          "FILE first, then the run's other traces by name; no side file, look-alike, link or "
          "directory (%zu: %s)", n, all);

    /* relative FILE: relative paths */
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) && chdir(dir) == 0) {
        const char *rel = found("app.ctf.45", NULL, getuid(), NULL, &n);
        CHECK(n == 2 && strcmp(rel, "app.ctf.45 app.ctf.45.part0003") == 0,
              "a relative FILE gives paths spelled relative, a child's pieces with it (%s)", rel);
        if (chdir(cwd) != 0)
            perror(cwd);
    }

    /* another owner's: none listed, every one counted */
    found(at("app.ctf"), NULL, getuid() + 1, &foreign, &n);
    CHECK(n == 0 && foreign == 6, "another user's files are not the run's: none listed, %zu "
          "counted (%zu listed)", foreign, n);

    /* files older than the run's start */
    touch("app.ctf.45", 3600);
    touch("app.ctf.45.part0003", 3600);
    struct timespec since;
    clock_gettime(CLOCK_REALTIME, &since);
    since.tv_sec -= 60;
    const char *recent = found(at("app.ctf"), &since, getuid(), NULL, &n);
    want = under(sorted, 4);
    CHECK(n == 4 && strcmp(recent, want) == 0,
          "files older than the run's start are left out (%zu: %s)", n, recent);

    const char *none = found(at("missing.ctf"), NULL, getuid(), NULL, &n);
    CHECK(n == 0 && !*none, "no FILE and no sibling: nothing (%zu)", n);
}

static void test_read(const char *fixtures)
{
    char leak[4200];
    snprintf(leak, sizeof leak, "%s/leak.ctf", fixtures);
    run_trace t;
    run_trace_read(leak, &t);
    CHECK(t.readable && t.complete && !t.ended && !t.why[0],
          "leak.ctf: read to its end without a warning, its end not marked (%s)", t.why);
    CHECK(t.allocs == 6179 && t.samples == 6187,
          "leak.ctf: 6179 sampled blocks, 6187 samples (%llu, %llu)",
          (unsigned long long)t.allocs, (unsigned long long)t.samples);
    CHECK(t.pid == 11730 && strcmp(t.command, "fixture:leak") == 0,
          "leak.ctf: pid 11730, command from its context (%llu, %s)",
          (unsigned long long)t.pid, t.command);
    CHECK(t.bytes == 6187.0 * 1000 * 8,
          "leak.ctf: 6187 samples of 1000 words of 8 bytes: 49496000 bytes (%.0f)", t.bytes);

    run_trace cut;
    CHECK(copy(leak, at("cut.ctf"), 3000) == 0, "cut.ctf written");
    run_trace_read(at("cut.ctf"), &cut);
    CHECK(cut.readable && !cut.complete && strstr(cut.why, "offset 621") &&
              strstr(cut.why, "truncated") && cut.allocs < t.allocs,
          "a trace cut at 3000 bytes: readable, not complete, why names the offset (%s)",
          cut.why);

    run_trace junk;
    FILE *f = fopen(at("junk.ctf"), "w");
    if (f) {
        fputs("not a trace at all\n", f);
        fclose(f);
    }
    run_trace_read(at("junk.ctf"), &junk);
    CHECK(!junk.readable && !junk.complete && strstr(junk.why, "junk.ctf"),
          "not a trace: not readable, why names the file (%s)", junk.why);

    run_trace link;
    symlink(leak, at("link.ctf"));
    run_trace_read(at("link.ctf"), &link);
    CHECK(!link.readable && strstr(link.why, "not a regular file"),
          "a link is not read: \"not a regular file\" (%s)", link.why);

    run_trace v[3] = {cut, t, junk};
    qsort(v, 3, sizeof *v, run_trace_cmp_bytes);
    CHECK(v[0].bytes == t.bytes && v[2].bytes == 0, "by bytes: the largest first (%.0f %.0f %.0f)",
          v[0].bytes, v[1].bytes, v[2].bytes);
}

int main(void)
{
    const char *tmp = getenv("MT_TMP"), *fixtures = getenv("MT_FIXTURES");
    snprintf(dir, sizeof dir, "%s/run_traces", tmp ? tmp : "/tmp");
    mkdir(dir, 0755);
    test_files();
    test_read(fixtures ? fixtures : "tests/fixtures/memtrace");
    return failures != 0;
}
