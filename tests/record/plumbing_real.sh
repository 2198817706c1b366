#!/bin/sh
# plumbing_real.sh - the allocation wrappers of a real, unmodified program
# are plumbing: Debian's perl allocates through Perl_safesysmalloc and
# Perl_safesysrealloc, and its sites must be their callers (Perl_sv_grow
# for the strings this script builds, Perl_av_extend_guts for its array),
# with the wrapper as context ("via"), while --raw still shows the wrapper.
. tests/record/progs/lib.sh
skip_under_tsan
command -v perl >/dev/null || { echo "perl not installed"; exit 77; }
"$MT_BIN" run -o "$T/perl.ctf" -- perl -e \
    'my @a; push @a, "x" x 100 . $_ for 1..300000; print scalar(@a), "\n"' \
    >"$T/perl.out" 2>"$T/perl.err" || fail "perl ran under memtrace run"
check "perl did its work" grep -qx 300000 "$T/perl.out"
"$MT_BIN" top -n 5 "$T/perl.ctf" >"$T/top" 2>&1
"$MT_BIN" top --raw -n 5 "$T/perl.ctf" >"$T/raw" 2>&1
# a site line: rank, value, unit, share, cum, err, function (file)
sites() { awk '$1 ~ /^[0-9]+$/ && NF >= 8 { print $7 }' "$1"; }
sites "$T/top" >"$T/top.sites"
sites "$T/raw" >"$T/raw.sites"
check "no site is Perl_safesys*: $(tr '\n' ' ' <"$T/top.sites")" \
    sh -c "test -s '$T/top.sites' && ! grep -q '^Perl_safesys' '$T/top.sites'"
check "the strings' site is Perl_sv_grow, via Perl_safesysmalloc" \
    sh -c "grep -A1 ' Perl_sv_grow ' '$T/top' | grep -q 'via Perl_safesysmalloc'"
check "the array's site is Perl_av_extend_guts" grep -q ' Perl_av_extend_guts ' "$T/top"
check "--raw: the first site is the wrapper ($(head -1 "$T/raw.sites"))" \
    sh -c "head -1 '$T/raw.sites' | grep -q '^Perl_safesys'"
a=$(sed -n 's/.*total \([0-9.]* [KMG]iB\).*/\1/p' "$T/top"); b=$(sed -n 's/.*total \([0-9.]* [KMG]iB\).*/\1/p' "$T/raw")
check "totals equal with and without --raw ($a, $b)" test -n "$a" -a "$a" = "$b"
finish
