#!/bin/sh
# calls.sh - the calls between the source files of one library directory,
# from their object files (nm: who defines a symbol, who uses it), and the
# circles among them. lib/analyze's layers call only downwards: a circle
# of files means a file below reaches back up (the builder reading the
# planner's state, say).
#
#   scripts/calls.sh OBJDIR [edges]
#
# Prints "circle: FILE FILE ..." for each circle found (tsort's loops) and
# exits 1, or prints nothing and exits 0; with "edges", prints every
# "CALLER CALLEE" line instead. The builder's files (build*.c: one pass
# split over four files that call each other, build.h) count as one.
set -eu
dir=$1
[ -d "$dir" ] || { echo "calls.sh: $dir: no such directory" >&2; exit 2; }
edges=$(for o in "$dir"/*.o; do
    f=$(basename "$o" .o)
    case $f in build*) f=build ;; esac
    nm "$o" | awk -v f="$f" '$1 == "U" { print "U", f, $2 } NF == 3 && $2 ~ /^[TDBR]$/ { print "D", f, $3 }'
done | awk '$1 == "D" { def[$3] = $2; next } { use[n++] = $2 " " $3 }
           END { for (i = 0; i < n; i++) { split(use[i], p, " ");
                   if ((p[2] in def) && def[p[2]] != p[1]) print p[1], def[p[2]] } }' | sort -u)
if [ "${2:-}" = edges ]; then
    printf '%s\n' "$edges"
    exit 0
fi
# tsort names the files of one loop at a time on stderr; drop an edge of
# each loop found and ask again, to list them all
found=0
while :; do
    loop=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null | grep -v 'input contains a loop' |
           sed 's/^tsort: //' | tr '\n' ' ' | sed 's/ *$//')
    [ -n "$loop" ] || break
    echo "circle: $loop"
    found=1
    set -- $loop
    edges=$(printf '%s\n' "$edges" | grep -v "^$1 $2\$" || true)
done
exit $found
