/*
 * cmd_run.c - 'memtrace run': run a command with the recorder preloaded
 * (LD_PRELOAD=libmemtrace.so, MEMTRACE=FILE, MEMTRACE_RATE=...), wait for
 * it, say where the trace went and exit with the command's status.
 *
 * The CLI never links the recorder: it only finds libmemtrace.so (next to
 * the memtrace binary in a build tree, in ../lib when installed, or
 * $MEMTRACE_LIB) and sets the environment.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: memtrace run [-o FILE] [--interval BYTES | --rate R] [--depth N]\n"
        "                    [--unwind MODE] [--no-follow] [--] CMD [ARGS...]\n"
        "\n"
        "Run CMD with the memtrace recorder preloaded and write a memtrace trace of\n"
        "its heap allocations (sampled, with call stacks) to FILE.\n"
        "\n"
        "  -o, --output FILE     trace file (default: CMD.PID.ctf in the current directory)\n"
        "  -i, --interval BYTES  mean bytes between samples, suffixes k, m, g\n"
        "                        (default 512k)\n"
        "  -r, --rate R          sampling probability per byte (= 1 / interval)\n"
        "  -d, --depth N         at most N frames per call stack (default 128)\n"
        "  -u, --unwind MODE     how call stacks are captured: dwarf (default; follows\n"
        "                        code built without frame pointers, e.g. distro\n"
        "                        libraries), fp (frame pointers only, cheapest), auto\n"
        "                        (frame pointers when the chain reaches the stack's\n"
        "                        base, else dwarf)\n"
        "      --no-follow       trace only CMD itself, not the processes it starts\n"
        "  -h, --help            this help\n"
        "\n"
        "Child processes (fork, exec) are traced into FILE.PID files of their own.\n"
        "When CMD ends, every trace is symbolized (see 'memtrace symbolize --help').\n"
        "The exit status is CMD's (128+N if it was killed by signal N).\n"
        "Environment: MEMTRACE_LIB overrides the path of libmemtrace.so.\n");
}

/* "512k" -> 524288; 0 on error. */
static double parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0))
        return 0;
    switch (*end) {
    case 'k': case 'K': v *= 1024; end++; break;
    case 'm': case 'M': v *= 1024.0 * 1024; end++; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    return *end ? 0 : v;
}

static int find_library(char *out, size_t len)
{
    const char *env = getenv("MEMTRACE_LIB");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    static const char *const rel[] = { "libmemtrace.so", "../lib/libmemtrace.so",
                                       "../lib64/libmemtrace.so" };
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        if (snprintf(out, len, "%s/%s", exe, rel[i]) >= (int)len)
            continue;
        if (access(out, R_OK) == 0)
            return 0;
    }
    return -1;
}

/* Print the trace files the run produced: FILE and FILE.* newer than start. */
static int report(const char *file, time_t start)
{
    struct stat st;
    int found = stat(file, &st) == 0;
    if (found)
        fprintf(stderr, "memtrace run: trace written to %s\n", file);

    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", file) >= (int)sizeof dir)
        return found;
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : file;
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    int children = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strncmp(e->d_name, base, blen) != 0 || e->d_name[blen] != '.')
                continue;
            const char *rest = e->d_name + blen + 1;
            if (!*rest || strspn(rest, "0123456789.") != strlen(rest))
                continue;
            char path[PATH_MAX + 256];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (stat(path, &st) != 0 || st.st_mtime < start)
                continue;
            if (children++ == 0)
                fprintf(stderr, "memtrace run: traces of child processes:");
            fprintf(stderr, " %s%s%s", slash ? dir : "", slash ? "/" : "", e->d_name);
        }
        closedir(d);
    }
    if (children)
        fputc('\n', stderr);
    if (!found && !children)
        fprintf(stderr, "memtrace run: no trace was written (statically linked program, "
                        "or no allocation?)\n");
    return found || children;
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "interval", required_argument, NULL, 'i' },
        { "rate", required_argument, NULL, 'r' },
        { "depth", required_argument, NULL, 'd' },
        { "unwind", required_argument, NULL, 'u' },
        { "no-follow", no_argument, NULL, 'F' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *output = NULL;
    double rate = 1.0 / 524288;
    int have_interval = 0, have_rate = 0, follow = 1;
    long depth = 0;
    const char *unwind = NULL;
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:i:r:d:u:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'i': {
            double v = parse_size(optarg);
            if (!(v >= 1)) {
                fprintf(stderr, "memtrace run: bad interval '%s' (bytes, >= 1)\n", optarg);
                return 2;
            }
            rate = 1.0 / v;
            have_interval = 1;
            break;
        }
        case 'r': {
            char *end;
            rate = strtod(optarg, &end);
            if (*end || !(rate > 0 && rate <= 1)) {
                fprintf(stderr, "memtrace run: bad rate '%s' (probability per byte, (0, 1])\n",
                        optarg);
                return 2;
            }
            have_rate = 1;
            break;
        }
        case 'd': {
            char *end;
            depth = strtol(optarg, &end, 10);
            if (*end || depth < 1 || depth > 1024) {
                fprintf(stderr, "memtrace run: bad depth '%s' (1..1024)\n", optarg);
                return 2;
            }
            break;
        }
        case 'u':
            if (strcmp(optarg, "fp") != 0 && strcmp(optarg, "dwarf") != 0 &&
                strcmp(optarg, "auto") != 0) {
                fprintf(stderr, "memtrace run: bad unwind mode '%s' (fp, dwarf or auto)\n",
                        optarg);
                return 2;
            }
            unwind = optarg;
            break;
        case 'F':
            follow = 0;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (have_interval && have_rate) {
        fprintf(stderr, "memtrace run: give --interval or --rate, not both\n");
        return 2;
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    char **cmd = argv + optind;

    char lib[PATH_MAX];
    if (find_library(lib, sizeof lib) != 0) {
        fprintf(stderr, "memtrace run: cannot find libmemtrace.so (looked next to the memtrace "
                        "binary and in ../lib; set MEMTRACE_LIB)\n");
        return 1;
    }
    if (lib[0] != '/') {
        char abs[PATH_MAX];
        if (realpath(lib, abs))
            snprintf(lib, sizeof lib, "%s", abs);
    }

    time_t start = time(NULL);
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        perror("memtrace run: pipe");
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("memtrace run: fork");
        return 1;
    }
    if (pid == 0) {
        close(pipefd[0]);
        char file[PATH_MAX + 64];
        if (output) {
            snprintf(file, sizeof file, "%s", output);
        } else {
            const char *b = strrchr(cmd[0], '/');
            snprintf(file, sizeof file, "%s.%d.ctf", b ? b + 1 : cmd[0], (int)getpid());
        }
        char rs[64];
        snprintf(rs, sizeof rs, "%.17g", rate);
        const char *old = getenv("LD_PRELOAD");
        size_t plen = strlen(lib) + (old ? strlen(old) + 2 : 1);
        char *preload = malloc(plen);
        if (!preload)
            _exit(127);
        snprintf(preload, plen, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
        setenv("LD_PRELOAD", preload, 1);
        setenv("MEMTRACE", file, 1);
        setenv("MEMTRACE_RATE", rs, 1);
        unsetenv("MEMTRACE_ROOT");
        if (unwind)
            setenv("MEMTRACE_UNWIND", unwind, 1);
        if (depth) {
            char ds[32];
            snprintf(ds, sizeof ds, "%ld", depth);
            setenv("MEMTRACE_DEPTH", ds, 1);
        }
        if (!follow)
            setenv("MEMTRACE_FOLLOW", "0", 1);
        else
            unsetenv("MEMTRACE_FOLLOW");
        /* Tell the parent the file name (it may depend on our pid). */
        ssize_t w = write(pipefd[1], file, strlen(file));
        (void)w;
        close(pipefd[1]);
        execvp(cmd[0], cmd);
        int e = errno;
        fprintf(stderr, "memtrace run: %s: %s\n", cmd[0], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    close(pipefd[1]);
    char file[PATH_MAX + 64];
    size_t flen = 0;
    ssize_t n;
    while (flen < sizeof file - 1 &&
           (n = read(pipefd[0], file + flen, sizeof file - 1 - flen)) > 0)
        flen += (size_t)n;
    file[flen] = '\0';
    close(pipefd[0]);

    /* Like a shell waiting for a foreground job: ^C is for the command. */
    struct sigaction ign, oldint, oldquit;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &oldint);
    sigaction(SIGQUIT, &ign, &oldquit);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &oldint, NULL);
    sigaction(SIGQUIT, &oldquit, NULL);

    int rc = WIFEXITED(status) ? WEXITSTATUS(status)
           : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    if (rc == 127 || rc == 126) {
        /* exec failure in the child: nothing to report */
        struct stat st;
        if (stat(file, &st) != 0)
            return rc;
    }
    symbolize_run_traces(file, start);   /* names for the raw frames: cmd_symbolize.c */
    report(file, start);
    return rc;
}
