/*
 * serve.c - mt_viewer_serve: starts the HTTP server on a model and waits for
 * SIGINT or SIGTERM. The signals are blocked before the server's threads
 * start (they inherit the mask) and taken synchronously with sigwait, so no
 * handler runs in the middle of a request.
 */
#include "viewer.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "api.h"
#include "server.h"

int mt_viewer_serve(const mt_model *m, const mt_viewer_options *opts, const char *prog)
{
    vapi *api = vapi_new(m, opts->file, opts->load_seconds);
    if (!api) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    vapi_set_plumbing(api, opts->plumbing);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    signal(SIGPIPE, SIG_IGN);

    char *err = NULL;
    vsrv *srv = vsrv_start(opts->host ? opts->host : "127.0.0.1", opts->port,
                           opts->port_tries, vapi_handle, api, &err);
    if (!srv) {
        fprintf(stderr, "%s: %s\n", prog, err ? err : "cannot start the HTTP server");
        free(err);
        vapi_free(api);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return 1;
    }
    vapi_warm_up(api);
    printf("Serving %s  (press Ctrl-C to stop)\n", vsrv_url(srv));
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
