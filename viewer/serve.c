/*
 * serve.c - mt_viewer_serve: starts the HTTP server on a model and waits for
 * SIGINT or SIGTERM. The signals are blocked before the server's threads
 * start (they inherit the mask) and taken synchronously with sigwait, so no
 * handler runs in the middle of a request.
 */
#include "viewer.h"

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "api.h"
#include "server.h"

int mt_viewer_serve(const mt_model *m, const mt_viewer_options *opts, const char *prog)
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
    vapi *api = vapi_new(m, opts->file, opts->load_seconds);
    if (!api) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    vapi_set_plumbing(api, opts->plumbing);
    vapi_set_budget(api, opts->memory ? opts->memory : MT_VIEWER_DEFAULT_MEMORY);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    signal(SIGPIPE, SIG_IGN);

    char *err = NULL;
    vsrv_config cfg = {opts->host, opts->port, opts->port_tries, opts->allow_hosts};
    vsrv *srv = vsrv_open(&cfg, vapi_handle, api, &err);
    if (!srv) {
        fprintf(stderr, "%s: %s\n", prog, err ? err : "cannot start the HTTP server");
        free(err);
        vapi_free(api);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return 1;
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

    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "%s: stopping (%s)\n", prog,
            sig == SIGINT ? "interrupted" : sig == SIGTERM ? "terminated" : "hangup");
    vsrv_stop(srv);
    vapi_free(api);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return 0;
}
