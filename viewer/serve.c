/*
 * serve.c - mt_viewer_serve and mt_viewer_serve_file: start the HTTP server
 * on a model (or on a trace being loaded in a thread of its own) and wait
 * for SIGINT or SIGTERM. The signals are blocked before the server's
 * threads start (they inherit the mask) and taken synchronously with
 * sigwait, so no handler runs in the middle of a request; a failed load
 * wakes the waiting thread with SIGUSR1.
 */
#include "viewer.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "big.h"
#include "server.h"

/* Settings of the process for serving. */
static void prepare_process(void)
{
    /* Few malloc arenas: with one per thread, memory freed by one request
     * sits in its thread's arena, out of reach of the others and of
     * malloc_trim's budget; requests are few and heavy, not many and small. */
    mallopt(M_ARENA_MAX, 2);
    /* Room for every connection the server takes (1024 is a common soft
     * limit on descriptors; the hard limit is usually higher). */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < VSRV_MAX_CONNECTIONS + 64) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > VSRV_MAX_CONNECTIONS + 64
                          ? VSRV_MAX_CONNECTIONS + 64
                          : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Start listening and print the URLs; NULL after printing an error. */
static vsrv *open_server(vapi *api, const mt_viewer_options *opts, const char *prog)
{
    char *err = NULL;
    vsrv_config cfg = {opts->host, opts->port, opts->port_tries, opts->allow_hosts};
    vsrv *srv = vsrv_open(&cfg, vapi_handle, api, &err);
    if (!srv) {
        fprintf(stderr, "%s: %s\n", prog, err ? err : "cannot start the HTTP server");
        free(err);
        return NULL;
    }
    vapi_warm_up(api);
    if (vsrv_exposed(srv))
        fprintf(stderr,
                "%s: warning: listening on %s port %d: anyone who can reach this machine "
                "there can read the trace (function and file names, the command line); "
                "see docs/viewer.md\n",
                prog,
                vsrv_wildcard(srv) ? (strchr(opts->host, ':') ? "every network interface (::, IPv6 and IPv4)"
                                                              : "every network interface (0.0.0.0, IPv4)")
                                   : opts->host,
                vsrv_port(srv));
    printf("Serving %s  (press Ctrl-C to stop)\n", vsrv_url(srv));
    size_t n_urls;
    const char *const *urls = vsrv_urls(srv, &n_urls);
    for (size_t i = 1; i < n_urls; i++)
        printf("  also at %s\n", urls[i]);
    fflush(stdout);
    return srv;
}

static void block_signals(sigset_t *set, sigset_t *old)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, set, old);
    signal(SIGPIPE, SIG_IGN);
}

static void say_stopping(const char *prog, int sig)
{
    fprintf(stderr, "%s: stopping (%s)\n", prog,
            sig == SIGINT ? "interrupted" : sig == SIGTERM ? "terminated" : "hangup");
}

/* The API set up by opts and the server listening, with the signals that
 * stop it blocked in set (old: the mask before); NULL (api freed, mask
 * restored, message printed) on failure. */
static vsrv *start(vapi *api, const mt_viewer_options *opts, const char *prog, sigset_t *set,
                   sigset_t *old)
{
    if (!api) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return NULL;
    }
    vapi_set_plumbing(api, opts->plumbing);
    vapi_set_budget(api, opts->memory ? opts->memory : MT_VIEWER_DEFAULT_MEMORY);
    block_signals(set, old);
    vsrv *srv = open_server(api, opts, prog);
    if (!srv) {
        vapi_free(api);
        pthread_sigmask(SIG_SETMASK, old, NULL);
    }
    return srv;
}

int mt_viewer_serve(const mt_model *m, const mt_viewer_options *opts, const char *prog)
{
    prepare_process();
    vapi *api = vapi_new_loading(opts->file);
    if (api) {
        vapi_set_prog(api, prog);   /* (FILE.rss's warnings) */
        if (vapi_ready(api, m, NULL, opts->load_seconds) < 0) {
            vapi_free(api);
            api = NULL;
        }
    }
    if (api && opts->trace_files && opts->n_trace_files > 0)
        vapi_set_rss(api, mt_rss_load_many(opts->trace_files, opts->n_trace_files, m, vapi_warning,
                                           api));
    sigset_t set, old;
    vsrv *srv = start(api, opts, prog, &set, &old);
    if (!srv)
        return 1;
    int sig = 0;
    do
        sigwait(&set, &sig);
    while (sig == SIGUSR1);
    say_stopping(prog, sig);
    vsrv_stop(srv);
    vapi_free(api);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Loading while serving                                               */

/* The loading thread's state, on the heap: a viewer stopped while it loads
 * returns with the thread still reading, so the thread keeps nothing of
 * its caller's (whose frame is gone by then) but what `lock` guards: the
 * caller's callbacks run under it until the caller abandons the thread,
 * and never after. */
struct loader {
    char *file;                  /* the trace (a copy) */
    int folded, no_index;        /* mt_viewer_load's */
    vapi *api;
    mt_model *model;             /* whole model, or NULL */
    vfold *fold;                 /* big trace, or NULL */
    char *error;
    int finished;                /* set (atomically) when the thread is done */
    pthread_mutex_t lock;
    int abandoned;               /* the caller returned: no callback of its from here on */
    const mt_viewer_load *load;  /* the caller's callbacks: read under lock, while not abandoned */
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void loader_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct loader *l = ctx;
    vapi_progress(l->api, done, total);
    pthread_mutex_lock(&l->lock);
    if (!l->abandoned && l->load->on_progress)
        l->load->on_progress(l->load->progress_ctx, done, total);
    pthread_mutex_unlock(&l->lock);
}

static void *load_thread(void *arg)
{
    struct loader *l = arg;
    double t0 = now_seconds();
    const mt_model *m = NULL;
    if (l->folded) {
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        l->fold = vfold_load(l->file, NULL, NULL, !l->no_index, loader_progress, l,
                             vapi_warning, l->api, &l->error);
        m = l->fold ? vfold_model(l->fold) : NULL;
        /* what reading it again for a filter will take: the growth of the
         * process's high-water mark while it was read */
        getrusage(RUSAGE_SELF, &after);
        if (after.ru_maxrss > before.ru_maxrss)
            vapi_set_reread_bytes(l->api, (size_t)(after.ru_maxrss - before.ru_maxrss) * 1024);
    } else {
        /* a small trace: every allocation (the whole model) */
        mt_read_request rq = {
            .paths = (const char *const *)&l->file,
            .n = 1,
            .on_progress = loader_progress,
            .progress_ctx = l,
            .on_warning = vapi_warning,   /* "memtrace view: warning: ...", and on the page */
            .warning_ctx = l->api,
        };
        m = l->model = mt_read(&rq, &l->error);
    }
    double secs = now_seconds() - t0;
    if (m && vapi_ready(l->api, m, l->fold, secs) < 0) {
        m = NULL;
        free(l->error);
        l->error = NULL;
    }
    if (!m && !l->error)
        l->error = strdup("out of memory");
    pthread_mutex_lock(&l->lock);
    if (!l->abandoned && l->load->on_loaded)
        l->load->on_loaded(l->load->progress_ctx, m, secs, l->error);
    pthread_mutex_unlock(&l->lock);
    if (l->fold)
        vfold_report_index(l->fold);   /* (after the progress line) */
    if (!m) {
        vapi_failed(l->api, l->error);
        pthread_mutex_lock(&l->lock);
        if (!l->abandoned)
            kill(getpid(), SIGUSR1);  /* wake the serving thread (not one that has gone) */
        pthread_mutex_unlock(&l->lock);
    }
    __atomic_store_n(&l->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

int mt_viewer_serve_file(const mt_viewer_options *opts, const mt_viewer_load *load,
                         const char *prog)
{
    prepare_process();
    vapi *api = vapi_new_loading(opts->file);
    if (api)
        vapi_set_prog(api, prog);
    sigset_t set, old;
    vsrv *srv = start(api, opts, prog, &set, &old);
    if (!srv)
        return 1;
    struct loader *l = calloc(1, sizeof *l);
    pthread_t th;
    if (!l) {
        fprintf(stderr, "%s: out of memory\n", prog);
        vsrv_stop(srv);
        vapi_free(api);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return 1;
    }
    l->file = strdup(opts->file);
    l->folded = load->folded;
    l->no_index = load->no_index;
    l->load = load;
    l->api = api;
    pthread_mutex_init(&l->lock, NULL);
    if (!l->file || pthread_create(&th, NULL, load_thread, l) != 0) {
        fprintf(stderr, "%s: cannot start the loading thread\n", prog);
        vsrv_stop(srv);
        vapi_free(api);
        free(l->file);
        free(l);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return 1;
    }
    int sig = 0;
    sigwait(&set, &sig);
    int failed = sig == SIGUSR1;
    if (failed) {
        /* the loading thread ends right after its signal: joined, its
         * error is read after it was written (for the thread sanitizer too) */
        pthread_join(th, NULL);
        fprintf(stderr, "%s: %s\n", prog, l->error ? l->error : "cannot load the trace");
    }
    else
        say_stopping(prog, sig);
    if (!failed && !__atomic_load_n(&l->finished, __ATOMIC_ACQUIRE)) {
        /* stopped while loading: requests waiting for the model give up,
         * the process ends with the loading thread still reading, which
         * calls none of the caller's callbacks from here on */
        pthread_mutex_lock(&l->lock);
        l->abandoned = 1;
        pthread_mutex_unlock(&l->lock);
        vapi_failed(api, "the viewer was stopped");
        vsrv_stop(srv);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return 0;
    }
    if (!failed)
        pthread_join(th, NULL);
    vsrv_stop(srv);
    vapi_free(api);
    mt_model_free(l->model);
    vfold_free(l->fold);
    free(l->error);
    free(l->file);
    pthread_mutex_destroy(&l->lock);
    free(l);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return failed ? 1 : 0;
}
