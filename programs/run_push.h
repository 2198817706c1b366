/*
 * run_push.h - 'memtrace run --push URL': the push options and, while the
 * program runs, one profile per interval handed to lib/push (run_push.c).
 */
#ifndef MEMTRACE_RUN_PUSH_H
#define MEMTRACE_RUN_PUSH_H

#include "memtrace/analyze.h"
#include "options.h"

#define RUN_PUSH_MAX_LABELS 32

typedef struct run_push_opts {
    const char *url, *format, *tenant, *auth_file;
    double every_s;                 /* 0: 60 */
    const char *labels[RUN_PUSH_MAX_LABELS];   /* "k=v" */
    int n_labels;
    const char *cmd;                /* "run": messages say "memtrace run: ..." */
} run_push_opts;

/* OPT_CALL function of the push options (ctx a run_push_opts, opt the
 * option's "--name"): records arg, or 2 after the message. */
int run_push_take(void *ctx, const char *arg, const char *opt);

/* The push options as entries of a command's table (options.h), P a
 * run_push_opts *. RUN_PUSH_OPTS: each with its help (run);
 * RUN_PUSH_MORE_OPTS: all but --push, without help lines, for a command
 * whose --push help says they are as for run. */
#define RUN_PUSH_OPT_(NAME, META, HELP, P)                                                  \
    OPT(NAME, 0, OPT_CALL, NULL, META, HELP, .fn = run_push_take, .ctx = (P))
#define RUN_PUSH_MORE_(P, EVERY, FORMAT, LABEL, TENANT, AUTH)                                \
    RUN_PUSH_OPT_("push-every", "T", EVERY, P), RUN_PUSH_OPT_("push-format", "F", FORMAT, P),  \
    RUN_PUSH_OPT_("label", "K=V", LABEL, P), RUN_PUSH_OPT_("push-tenant", "ID", TENANT, P),    \
    RUN_PUSH_OPT_("push-auth-file", "FILE", AUTH, P)
#define RUN_PUSH_MORE_OPTS(P) RUN_PUSH_MORE_(P, NULL, NULL, NULL, NULL, NULL)
#define RUN_PUSH_OPTS(P)                                                                    \
    RUN_PUSH_OPT_("push", "URL",                                                            \
                  "send a heap profile every --push-every and at the end\n"                  \
                  "to Pyroscope, Parca or an OpenTelemetry collector, from\n"                \
                  "this process (queue of 16, retries; drops counted in\n"                   \
                  "the summary; docs/fleet.md)", P),                                         \
    RUN_PUSH_MORE_(P, "how often (at least 100ms; default 60s)",                             \
                   "pyroscope, parca, otlp or pyroscope-ingest (guessed\n"                   \
                   "from a URL ending /push.v1.PusherService/Push,\n"                        \
                   "/profiles/writeraw, /v1development/profiles or\n"                        \
                   "/ingest)",                                                               \
                   "a label on every profile (repeatable; service_name\n"                    \
                   "defaults to the program's name)",                                        \
                   "send X-Scope-OrgID: ID",                                                 \
                   "one line, 'Bearer TOKEN' or 'USER:PASSWORD';\n"                          \
                   "refused unless only its owner may read it")

typedef struct run_push run_push;

/* Checks the options together and starts the sender; NULL with a message
 * when they are wrong (*bad set) or when no push was asked (*bad 0). */
run_push *run_push_begin(const run_push_opts *o, const char *cmd, int *bad);
/* One profile of selection s (inuse at its live time, alloc since the
 * recording's previous push) of program name/pid, queued for sending.
 * whole: s is all its trace will ever hold (a finished piece, the
 * recording's end); else the allocations of its latest microsecond wait
 * for the next push, whose read may hold more of that microsecond (times
 * are microseconds: the next interval starts after this one's end). */
void run_push_profile(run_push *p, const mt_selection *s, const char *name, int pid, int whole);
/* Ends (a bounded drain) and prints the summary line on stderr. */
void run_push_end(run_push *p, const char *cmd);
double run_push_every(const run_push *p);
/* From now on the counts are kept in FILE.push (runfiles.h) for 'memtrace
 * ctl PID status' (file: the run's FILE, as its processes have it in
 * MEMTRACE), after every profile; removed by run_push_end. */
void run_push_status_at(run_push *p, const char *file);
/* What FILE.push says, for 'ctl status': one line into buf ("" none). */
void run_push_status_read(const char *file, char *buf, size_t cap);

#endif
