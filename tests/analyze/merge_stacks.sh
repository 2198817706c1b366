#!/bin/sh
# merge_stacks.sh - several traces read as one keep every allocation's whole
# stack: the folded stacks of traces merged (OCaml fixtures of format v1, v2
# and v3 with several domains, interleaved in time or not, a trace merged
# with itself) weigh, stack by stack, the sum of each file's folded stacks.
# The merge renumbers each trace's frames and copies the part of a stack
# shared with the trace's previous allocation; a wrong shared part would
# give other stacks. (Frames without a name print their code, which the
# merge renumbers: codes are compared as 0x?.)
set -u
F=$MT_FIXTURES
T=$MT_TMP
n=0 bad=0
sum_folded() { # files... -> "stack weight" per distinct stack, summed over the files
    for f in "$@"; do "$MT_BIN" folded "$f" || return 1; done |
        sed 's/0x[0-9a-f]*/0x?/g' | awk '{ w = $NF; $NF = ""; s[$0] += w } END { for (k in s) printf "%s%d\n", k, s[k] }' | sort
}
merged() {
    "$MT_BIN" folded "$@" |
        sed 's/0x[0-9a-f]*/0x?/g' | awk '{ w = $NF; $NF = ""; s[$0] += w } END { for (k in s) printf "%s%d\n", k, s[k] }' | sort
}
for set in "$F/prodcons_v3.ctf $F/prodcons_v3.ctf" \
           "$F/prodcons_v3.ctf $F/prodcons.ctf $F/major.ctf $F/synth_edge.ctf" \
           "$F/upstream_ocamlopt_v2.ctf $F/upstream_ocamlopt_v3.ctf" \
           "$F/upstream_lists_and_sets_v1.ctf $F/leak.ctf $F/wrap.ctf"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    sum_folded $set >"$T/want" && merged $set >"$T/got"
    if [ $? = 0 ] && [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"; then
        echo "PASS: merged stacks of $(echo "$set" | sed "s|$F/||g")"
    else
        echo "FAIL: merged stacks of $(echo "$set" | sed "s|$F/||g")"
        bad=1
    fi
done
exit $bad
