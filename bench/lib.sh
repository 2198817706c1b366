# lib.sh - what the benchmark scripts share; sourced by them after they
# cd to the top of the checkout (not run on its own):
#
#   bench_scratch PREFIX     a scratch directory in $tmp, removed at exit
#                            (bench_stop, a no-op here, is called first:
#                            scripts that start servers define their own)
#   bench_need B TARGETS FILE...
#                            make TARGETS in build directory B unless every
#                            FILE is there; stop with "build first" if not
#   median                   the median of the numbers on stdin (the mean of
#                            the middle two for an even count)
#   column COL VARIANT FILE  column COL of VARIANT's rows in a table of
#                            "ROUND VARIANT FIGURES..." rows
#   ratios COL VARIANT BASE FILE
#                            per-round ratios VARIANT / BASE of column COL of
#                            such a table (a round against itself: the fair
#                            comparison on a machine whose load changes)
#   timed NAME CMD...        runs CMD (output dropped), appends "wall_s
#                            user_s maxrss_kb sys_s" to $tmp/NAME; CMD's status
#   col_median NAME N        the median of field N of $tmp/NAME
#   bench_seconds FILE       "wall cpu" from the last "seconds=S cpu=C" line
#                            the benchmark programs (bench/*_bench.c) print
#
# With RT=1, $RUN is "chrt -f 10" (real-time priority, needs root): the
# nearest thing to an idle machine when others share it. Scripts put $RUN
# before the commands they time.

RUN=
[ "${RT:-0}" = 1 ] && RUN="chrt -f 10"

bench_stop() { :; }
bench_scratch() {
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    # the script's own status, whatever the clean-up's last command gives
    trap 'st=$?; bench_stop || true; rm -rf "$tmp"; exit $st' EXIT
    trap 'exit 130' INT TERM HUP
}

bench_need() {
    b=$1 targets=$2; shift 2
    for f in "$@"; do
        if [ ! -e "$f" ]; then
            # shellcheck disable=SC2086
            make --no-print-directory -s BUILD="$b" $targets >&2
            break
        fi
    done
    for f in "$@"; do
        [ -e "$f" ] || { echo "build first: make BUILD=$b $targets" >&2; exit 1; }
    done
}

median() {
    sort -g | awk '{ a[NR] = $1 }
        END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

column() {
    awk -v c="$1" -v v="$2" '$2 == v { print $c }' "$3"
}

ratios() {
    awk -v c="$1" -v v="$2" -v b="$3" '$2 == b { p[$1] = $c } $2 == v { x[$1] = $c }
        END { for (r in x) if (p[r] > 0) printf "%.3f\n", x[r] / p[r] }' "$4"
}

timed() {
    name=$1; shift
    st=0
    # shellcheck disable=SC2086  # $RUN: no words or two
    /usr/bin/time -f "%e %U %M %S" -o "$tmp/one" $RUN "$@" > /dev/null || st=$?
    tail -n 1 "$tmp/one" >> "$tmp/$name"
    return $st
}

col_median() {
    cut -d' ' -f"$2" "$tmp/$1" | median
}

bench_seconds() {
    sed -n 's/.*seconds=\([0-9.]*\) cpu=\([0-9.]*\).*/\1 \2/p' "$1" | tail -n 1
}
