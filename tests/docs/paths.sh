#!/bin/sh
# paths.sh - every file the maps of the code name exists: each path or
# file name in ARCHITECTURE.md and tests/README.md (a source, header,
# script, test, page or directory, with or without its directory) names a
# file of the checkout, so that the maps cannot point at files that were
# renamed or removed. A name with a slash is looked for from the top, from
# tests/ (tests/README.md's "record/leaks.sh"), from lib/ and include/; a
# bare name ("interpose.c", the rows' files) anywhere in the checkout; a
# pattern ("viewer/*.sh") must match a file.
set -u
. tests/lib.sh
T=$MT_TMP

# The files of the checkout (git's list when there is one, else find's).
if git ls-files -co --exclude-standard >"$T/files" 2>/dev/null && [ -s "$T/files" ]; then :; else
    find . -path ./build -prune -o -type f -print | sed 's|^\./||' >"$T/files"
fi
sed 's|.*/||' "$T/files" | sort -u >"$T/basenames"
sed -n 's|/[^/]*$||p' "$T/files" | sort -u >"$T/dirs.tmp"
# every parent directory too
while read -r d; do
    while [ -n "$d" ]; do echo "$d"; case $d in */*) d=${d%/*} ;; *) d= ;; esac; done
done <"$T/dirs.tmp" | sort -u >"$T/dirs"

exists() { # NAME: a tracked file, directory or a pattern's match
    _e=$1
    case $_e in
        */) grep -qxF "${_e%/}" "$T/dirs"; return ;;
        */*'*'*) for _f in $_e; do [ -e "$_f" ] && return 0; done; return 1 ;;
        *'*'*) grep -q "^$(printf '%s' "$_e" | sed 's/\./\\./g; s/\*/.*/g')\$" "$T/basenames" ;;
        */*) grep -qxF "$_e" "$T/files" || grep -qxF "$_e" "$T/dirs" ;;
        *) grep -qxF "$_e" "$T/basenames" ;;
    esac
}

for doc in ARCHITECTURE.md tests/README.md; do
    # file names with the extensions of this tree, and directories in
    # backquotes ("`lib/record/`"); not addresses (://), nor placeholders (<layer>)
    grep -o '[A-Za-z0-9_./*+-]*\.\(c\|h\|cc\|sh\|md\|py\|js\|awk\|proto\|map\)\b' "$doc" |
        grep -v '^[./]' >"$T/names"
    grep -o '`[A-Za-z0-9_.+-]*/[A-Za-z0-9_./+-]*/`' "$doc" | tr -d '`' >>"$T/names"
    sort -u "$T/names" >"$T/uniq"
    total=0 missing=""
    while read -r n; do
        total=$((total + 1))
        found=0
        for cand in "$n" "tests/$n" "lib/$n" "include/$n"; do
            if exists "$cand"; then found=1; break; fi
        done
        [ $found = 1 ] || missing="$missing $n"
    done <"$T/uniq"
    if [ -z "$missing" ] && [ "$total" -gt 20 ]; then
        pass "$doc: all $total file names it gives exist"
    else
        fail "$doc: $total names, missing:${missing:- none (too few names read)}"
    fi
done

# The check itself sees a missing file: a stale name is caught.
printf 'see `lib/record/engine.c` and record/engine.c\n' >"$T/stale.md"
grep -o '[A-Za-z0-9_./*+-]*\.\(c\|h\)\b' "$T/stale.md" | sort -u >"$T/uniq"
stale=0
while read -r n; do
    ok=0
    for cand in "$n" "tests/$n" "lib/$n" "include/$n"; do exists "$cand" && ok=1; done
    [ $ok = 1 ] || stale=$((stale + 1))
done <"$T/uniq"
check "a name of a file that no longer exists is reported (record/engine.c: $stale of 2)" [ "$stale" = 2 ]
finish
