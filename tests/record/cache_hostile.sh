#!/bin/sh
# cache_hostile.sh - the name cache (and the inflated debug copies beside
# it) when the user points XDG_CACHE_HOME at a directory another user can
# write to: what that user plants there (a link to a directory of the
# victim's choosing, a directory of their own, a FIFO, a parent of their
# own) is refused with a warning; nothing is created or written outside
# the cache, nothing hangs, and the trace is the one named without a
# cache. The victim is root (root runs `sudo memtrace` with an inherited
# environment); what the other user (nobody) plants is made by root and
# given to nobody (the test's directory is closed to nobody).
. tests/record/progs/lib.sh
skip_under_tsan
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to stand for two users"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
unset MEMTRACE_NAME_CACHE MEMTRACE_DEBUG_ROOT
prog=$T/prog
cp "$PROGS/sites" "$prog"
id=$(readelf -n "$prog" | awk '/Build ID:/ { print $3 }')
[ -n "$id" ] || { echo "the test program has no build-id"; exit 77; }
preload_raw "$T/raw.ctf" 0.0001 "$prog" >/dev/null || fail "the program ran"
sym() { # COPY: symbolizes a copy of the raw trace (bounded); its stderr in COPY.err
    cp "$T/raw.ctf" "$T/$1.ctf"
    timeout 300 "$MT_BIN" symbolize "$T/$1.ctf" 2>"$T/$1.err"
}
XDG_CACHE_HOME=$T/none MEMTRACE_NAME_CACHE=0 sym ref || fail "the reference"
# The victim's directory the planted link points to: root's, not others'.
mkdir -m 0700 "$T/victim"
nothing_in_victim() { test -z "$(ls -A "$T/victim")"; }
refused() { # WHAT COPY PATTERN
    check "$1: exit 0, warned ($3), the reference trace" sh -c \
        "grep -q '$3' '$T/$2.err' && cmp -s '$T/ref.ctf' '$T/$2.ctf'"
    check "$1: nothing made in the directory the link points to" nothing_in_victim
}
shared() { # MODE: a fresh shared directory, root's, of that mode
    rm -rf "$T/shared"; mkdir "$T/shared"; chmod "$1" "$T/shared"
}
export XDG_CACHE_HOME="$T/shared"

# 1. Writable by others, not sticky: anyone can rename what is in it.
shared 0777
plant_link() { ln -s "$1" "$2" && chown -h nobody "$2"; }   # planted by nobody
plant_link "$T/victim" "$T/shared/memtrace" || fail "nobody plants a link"
sym nosticky; st=$?
check "non-sticky shared directory: exit 0 ($st)" test "$st" = 0
refused "non-sticky shared directory" nosticky "shared: others may write to it (and it is not sticky)"

# 2. Sticky (like /tmp), another user's link: never followed.
shared 1777
plant_link "$T/victim" "$T/shared/memtrace"
sym link
refused "another user's link in a sticky directory" link "memtrace: a symbolic link of another user in a directory others may write to"

# 2b. Not shared, but the link is another user's (they chose where it leads).
rm -rf "$T/shared"; mkdir -m 0755 "$T/shared"
plant_link "$T/victim" "$T/shared/memtrace"
sym link2
refused "another user's link in the user's directory" link2 "memtrace: a symbolic link of another user (not followed)"

# 3. Sticky, a directory of the other user's (they could swap names in it).
shared 1777
mkdir -m 0777 "$T/shared/memtrace"; chown nobody "$T/shared/memtrace"
plant_link "$T/victim" "$T/shared/memtrace/names"
sym otherdir
refused "another user's directory in a sticky directory" otherdir "memtrace: another user.s, in a directory others may write to"

# 4. A parent of another user's (not writable by others, but theirs).
rm -rf "$T/shared"; mkdir -m 0755 "$T/shared"; chown nobody "$T/shared"
sym parent
refused "a parent of another user's" parent "shared: it belongs to another user"
chown 0 "$T/shared"

# 5. Sticky, root's own link to its own directory: followed, the cache works.
shared 1777
mkdir -m 0700 "$T/own"
ln -s "$T/own" "$T/shared/memtrace"
sym own
check "own link in a sticky directory: followed, the cache file made there" \
    sh -c "test -f '$T/own/names/$id' && cmp -s '$T/ref.ctf' '$T/own.ctf'"
sym own2
check "own link: the next run names from the cache, the same trace" \
    sh -c "grep -q 'from the name cache' '$T/own2.err' && cmp -s '$T/ref.ctf' '$T/own2.ctf'"

# 6. FIFOs where the cache file and the inflated copy go (the victim's
# own directory: only a FIFO the victim made, but never waited on).
rm -f "$T/own/names/$id"; mkfifo "$T/own/names/$id" "$T/own/names/$id.debug"
sym fifo; st=$?
check "FIFO as the cache file: exit 0 ($st), refused, the reference trace" sh -c \
    "grep -q 'not a regular file' '$T/fifo.err' && cmp -s '$T/ref.ctf' '$T/fifo.ctf'"
check "FIFO: left as it is, never written through" test -p "$T/own/names/$id"
finish
