#!/bin/sh
# push_options.sh - the push options (programs/run_push.c's table fragment,
# shared by run, attach and ctl --push): every bad value is refused before
# anything starts (no program run, no process touched), with exit 2 and one
# line naming the command, the option, the value and what was expected;
# options that need --push without it, a URL that is not http(s), a URL
# whose path names no engine without --push-format, an auth file others
# may read or that is missing, a 33rd label.
set -u
: "${MT_BIN:?}" "${MT_TMP:?}"
. tests/lib.sh
M=$MT_BIN
T=$MT_TMP
URL=http://127.0.0.1:9/ingest   # never reached: every case fails first

# refused WHAT LINE CMD...: exit 2, stderr exactly LINE, stdout empty, and
# the program run would have left no mark
refused() {
    what=$1 line=$2; shift 2
    rm -f "$T/ran"
    "$@" >"$T/out" 2>"$T/err"; rc=$?
    printf '%s\n' "$line" >"$T/expected"
    if [ $rc = 2 ] && cmp -s "$T/err" "$T/expected" && [ ! -s "$T/out" ] && [ ! -e "$T/ran" ]; then
        pass "$what"
    else
        fail "$what: exit $rc: $(head -c 400 "$T/err")"
    fi
}
ran="touch $T/ran"

refused "run: a push interval under 100ms" \
    "memtrace run: --push-every 50ms: expected a time of at least 100ms, such as 60s or 5m" \
    "$M" run --push "$URL" --push-every 50ms -- $ran
refused "run: an unknown format" \
    "memtrace run: --push-format foo: expected pyroscope, parca, otlp or pyroscope-ingest" \
    "$M" run --push "$URL" --push-format foo -- $ran
LBAD="expected NAME=VALUE, NAME of letters, digits and _ (not starting with a digit; not __name__)"
for l in 1a=b __name__=x noeq "a-b=c" "=v"; do
    refused "run: label '$l' refused" "memtrace run: --label $l: $LBAD" "$M" run --push "$URL" --label "$l" -- $ran
done
set --
i=0
while [ $i -lt 33 ]; do set -- "$@" --label "l$i=v"; i=$((i + 1)); done
refused "run: a 33rd label" "memtrace run: --label: at most 32 labels" "$M" run --push "$URL" "$@" -- $ran
refused "run: a tenant of two lines" "memtrace run: --push-tenant: expected a tenant ID on one line" \
    "$M" run --push "$URL" --push-tenant "$(printf 'a\nb')" -- $ran
refused "run: push options without --push" \
    "memtrace run: --push-every, --push-format, --label, --push-tenant and --push-auth-file need --push URL" \
    "$M" run --label k=v -- $ran
refused "run: a URL that is not http(s)" \
    "memtrace run: --push ftp://x: expected an http:// or https:// URL" "$M" run --push ftp://x -- $ran
refused "run: a URL whose path names no engine" \
    "memtrace run: --push http://h/unknown: give --push-format pyroscope, parca, otlp or pyroscope-ingest (the URL's path does not say: .../push.v1.PusherService/Push, .../profiles/writeraw, .../v1development/profiles, .../ingest)" \
    "$M" run --push http://h/unknown -- $ran
printf 'Bearer x\n' >"$T/token"
chmod 644 "$T/token"
refused "run: an auth file others may read" \
    "memtrace run: --push-auth-file $T/token: readable by others than its owner (chmod 600 it)" \
    "$M" run --push "$URL" --push-auth-file "$T/token" -- $ran
refused "run: a missing auth file" \
    "memtrace run: --push-auth-file $T/none: No such file or directory" \
    "$M" run --push "$URL" --push-auth-file "$T/none" -- $ran

# the same fragment in attach's and ctl's tables: their own names, nothing touched
refused "attach: push options without --push" \
    "memtrace attach: --push-every, --push-format, --label, --push-tenant and --push-auth-file need --push URL" \
    "$M" attach --label k=v 1
refused "attach: a push interval under 100ms" \
    "memtrace attach: --push-every 1ms: expected a time of at least 100ms, such as 60s or 5m" \
    "$M" attach --push "$URL" --push-every 1ms 1
refused "ctl: a URL that is not http(s)" \
    "memtrace ctl: --push ftp://x: expected an http:// or https:// URL" "$M" ctl --push ftp://x 1 start
refused "ctl: push options without --push" \
    "memtrace ctl: --push-every, --push-format, --label, --push-tenant and --push-auth-file need --push URL" \
    "$M" ctl --push-format parca 1 start
finish
