/*
 * memtrace.c - the CLI's entry point: finds the subcommand and runs it.
 */
#include <stdio.h>
#include <string.h>

#include "buildinfo.h"   /* generated: MEMTRACE_VERSION, MEMTRACE_COMMIT */
#include "commands.h"
#include "trace_names.h"
#include "memtrace/analyze.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    int names;   /* reads traces for reports: raw frames named as they are read */
};

static const struct command commands[] = {
    {"run", cmd_run, "run a program with the profiler and write a trace", 0},
    {"ctl", cmd_ctl, "switch the recorder of a running process on and off", 0},
    {"attach", cmd_attach, "record a running process (not started under memtrace) for a while", 0},
    {"view", cmd_view, "browse a trace in the web viewer", 1},
    {"top", cmd_top, "allocation sites that account for the most memory", 1},
    {"stats", cmd_stats, "totals, peak, rates, size and lifetime histograms", 1},
    {"rss", cmd_rss, "where the resident memory went: a ledger that adds up to RSS", 1},
    {"leaks", cmd_leaks, "leak suspects: sites whose live memory keeps growing", 1},
    {"lifetimes", cmd_lifetimes, "allocation time and lifetime of each sample", 1},
    {"folded", cmd_folded, "collapsed stacks for flame graph tools", 1},
    {"diff", cmd_diff, "what changed between two traces, and is it real", 1},
    {"check", cmd_check, "memory budgets for CI, decided beyond the noise", 1},
    {"pprof", cmd_pprof, "export a gzipped pprof profile", 1},
    {"plot", cmd_plot, "draw memory over time or histograms as SVG", 1},
    {"info", cmd_info, "trace header fields and event counts", 0},
    {"dump", cmd_dump, "print every event in the reference text format", 1},
    {"recode", cmd_recode, "decode and re-encode a trace", 0},
    {"symbolize", cmd_symbolize, "write names into LD_PRELOAD traces, to read them elsewhere", 0},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out,
            "usage: memtrace COMMAND [ARGS...]\n"
            "\n"
            "A statistical memory profiler for C and C++ programs, reading and\n"
            "writing memtrace traces (.ctf).\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "'memtrace COMMAND --help' describes a command; docs/ has a page for each.\n"
            "Example: memtrace run -o app.ctf -- ./app && memtrace top app.ctf\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    /* --route=SPEC (tests and benchmarks): force how traces are read */
    if (!strncmp(argv[1], "--route=", 8)) {
        if (mt_read_force(argv[1] + 8) < 0) {
            fprintf(stderr, "memtrace: --route: unknown route '%s' (auto, whole, one-thread, "
                            "two-threads, qsort, comma-separated)\n", argv[1] + 8);
            return 2;
        }
        argc--;
        argv++;
        if (argc < 2) {
            usage(stderr);
            return 2;
        }
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        if (argc > 2 && strcmp(name, "help") == 0) {
            char *sub[] = {argv[2], "--help", NULL};
            for (size_t i = 0; i < N_COMMANDS; i++)
                if (!strcmp(commands[i].name, argv[2]))
                    return commands[i].run(2, sub);
        }
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        printf("memtrace %s (commit %s)\n", MEMTRACE_VERSION, MEMTRACE_COMMIT);
        return 0;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, name)) {
            if (commands[i].names)
                trace_names_start();
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "memtrace: unknown command '%s'\n\n", name);
    usage(stderr);
    return 2;
}
