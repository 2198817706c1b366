#!/bin/sh
# no_circles.sh - lib/analyze's files call one another without a circle
# (scripts/calls.sh over the build's objects: the planner calls the
# builder, never the reverse; the builder's four files count as one), its
# headers include one another without a circle, and the script does see a
# circle: two small objects that call each other.
set -u
. tests/lib.sh
T=${MT_TMP:-/tmp}
B=${MT_BUILD:-build}
ls "$B"/obj/lib/analyze/*.o > /dev/null 2>&1 || { echo "FAIL: no objects in $B/obj/lib/analyze"; exit 1; }
out=$(sh scripts/calls.sh "$B/obj/lib/analyze" 2>&1); rc=$?
check "no circle among lib/analyze's files" [ $rc = 0 ] && [ -z "$out" ]
[ -z "$out" ] || echo "$out"
# its private headers include one another without a circle either
hdr_loop=$(cd lib/analyze && for h in *.h; do
    sed -n 's/^#include "\([a-z_]*\.h\)".*/\1/p' "$h" | while read -r d; do
        [ -f "$d" ] && echo "$h $d"; done; done | tsort 2>&1 >/dev/null)
check "no circle among lib/analyze's headers" [ -z "$hdr_loop" ]
[ -z "$hdr_loop" ] || echo "$hdr_loop"
# the planner's files call the builder's, and not the reverse
edges=$(sh scripts/calls.sh "$B/obj/lib/analyze" edges)
check "read.c calls merge.c (the planner reads)" sh -c 'printf "%s\n" "$1" | grep -qx "read merge"' - "$edges"
check "the builder calls nothing of read.c" sh -c '! printf "%s\n" "$1" | grep -q "^build read$"' - "$edges"
# the planner's own words stay in lib/analyze: how a read goes (the whole
# model as a fallback, a folded model, an index fold) is asked of mt_read
# and mt_read_figures, never named by the programs, the viewer, the
# reports or the bindings (lib/analyze's unit tests, which drive the
# builder through its private load.h, may)
planner_words='STREAM_WHOLE|MTA_FIG_WHOLE|mt_model_is_folded|report_fold|from_index'
outside() { # DIR...: the lines naming a planner word outside lib/analyze
    find "$@" -type f \( -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.js' -o -name '*.sh' \) \
        ! -path 'lib/analyze/*' ! -path 'tests/analyze/*' 2>/dev/null |
        xargs -r grep -nwE "$planner_words" 2>/dev/null
}
words=$(outside programs viewer lib include python fuzz bench scripts tests)
check "the planner's words appear nowhere outside lib/analyze" [ -z "$words" ]
[ -z "$words" ] || echo "$words"
mkdir -p "$T/words/programs"
printf 'int x(void) { return STREAM_WHOLE; }\n' > "$T/words/programs/cmd_x.c"
planted=$(cd "$T/words" && outside programs)
check "a program naming one is found" [ -n "$planted" ]
# a known circle: a.c calls b.c, b.c calls a.c
mkdir -p "$T/circle"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' > "$T/a.c"
printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\nint c(void) { return 2; }\n' > "$T/b.c"
printf 'int c(void);\nint d(void) { return c(); }\n' > "$T/d.c"
for f in a b d; do cc -c -o "$T/circle/$f.o" "$T/$f.c" || fail "compiling $f.c"; done
out=$(sh scripts/calls.sh "$T/circle" 2>&1); rc=$?
check "a circle of two files is found (exit 1)" [ $rc = 1 ]
check "it names both files" sh -c 'printf "%s\n" "$1" | grep -q "^circle: " && printf "%s\n" "$1" | grep -qw a && printf "%s\n" "$1" | grep -qw b && ! printf "%s\n" "$1" | grep -qw d' - "$out"
finish
