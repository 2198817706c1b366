/*
 * memtrace.c - the CLI's entry point: finds the subcommand and runs it.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "memtrace/analyze.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"run", cmd_run, "run a program with the profiler and write a trace"},
    {"ctl", cmd_ctl, "switch the recorder of a running process on and off"},
    {"view", cmd_view, "browse a trace in the web viewer"},
    {"top", cmd_top, "allocation sites that account for the most memory"},
    {"stats", cmd_stats, "totals, peak, rates, size and lifetime histograms"},
    {"lifetimes", cmd_lifetimes, "allocation time and lifetime of each sample"},
    {"folded", cmd_folded, "collapsed stacks for flame graph tools"},
    {"diff", cmd_diff, "what changed between two traces, and is it real"},
    {"check", cmd_check, "memory budgets for CI, decided beyond the noise"},
    {"pprof", cmd_pprof, "export a gzipped pprof profile"},
    {"plot", cmd_plot, "draw memory over time or histograms as SVG"},
    {"info", cmd_info, "trace header fields and event counts"},
    {"dump", cmd_dump, "print every event in the reference text format"},
    {"recode", cmd_recode, "decode and re-encode a trace"},
    {"symbolize", cmd_symbolize, "name the raw frames of traces recorded with LD_PRELOAD"},
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
        printf("memtrace 0.1.0\n");
        return 0;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "memtrace: unknown command '%s'\n\n", name);
    usage(stderr);
    return 2;
}
