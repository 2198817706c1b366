#!/bin/sh
# run_command.sh - a trace names its process by the command that started
# it, not by a process title set later: a worker that writes its title over
# its argv (as PostgreSQL's "postgres: ... startup" and nginx's "nginx:
# worker process" do) before its first sample is listed in `memtrace run`'s
# summary, and in `memtrace info`, under the command as executed.
. tests/record/progs/lib.sh
skip_under_tsan
D=$T/cmd
rm -rf "$D"; mkdir -p "$D"
cat > "$D/title.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static void work(int n)
{
    for (int i = 0; i < n; i++) {
        void *volatile p = malloc(4096);
        free(p);
    }
}
int main(int argc, char **argv)
{
    pid_t pid = fork();
    if (pid == 0) {   /* the worker: its title over its argv, then its work */
        size_t room = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[0]);
        memset(argv[0], 0, room);
        strncpy(argv[0], "title: worker", room);
        work(8192);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    work(4096);
    return 0;
}
C
cc -O1 -o "$D/title" "$D/title.c" || fail "compile"
M=$PWD/$MT_BIN
(cd "$D" && "$M" run -i 64k -o t.ctf -- ./title with-an-argument-long-enough) 2>"$D/err" ||
    fail "memtrace run"
# the worker allocated 32 MiB, the parent 16 MiB: two rows, worker first
rows=$(grep -c ' t\.ctf' "$D/err")
check "two traces in the summary ($rows)" test "$rows" = 2
check "no row is named by the worker's title" sh -c "! grep -q 'title: worker' '$D/err'"
check "both rows name the command as executed" \
    test "$(grep -c 'title with-an-argument-long-enough  *t\.ctf' "$D/err")" = 2
w=$(ls "$D" | sed -n 's/^\(t\.ctf\.[0-9]*\)$/\1/p' | head -1)
"$M" info "$D/$w" >"$D/info" 2>&1
check "the worker's trace: context is the command as executed ($(grep -i '^context' "$D/info"))" \
    grep -q '^context: *\./title with-an-argument-long-enough$' "$D/info"
finish
