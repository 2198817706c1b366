#!/bin/sh
# ctl_args.sh - 'memtrace ctl' with too many or too few arguments: a usage
# error (2) that says which argument is wrong, not the whole help.
. tests/record/progs/lib.sh
M=$MT_BIN
"$M" ctl 123 start extra >"$T/out" 2>"$T/err"; st=$?
check "an extra argument: exit 2 ($st)" test "$st" = 2
check "an extra argument: named: $(head -n 1 "$T/err")" \
    grep -q "^memtrace ctl: unexpected argument 'extra' after '123 start'" "$T/err"
check "an extra argument: not the whole help" sh -c "! grep -q '^usage:' '$T/err'"
"$M" ctl 123 >"$T/out" 2>"$T/err"; st=$?
check "no action: exit 2, says an action is missing ($st: $(head -n 1 "$T/err"))" \
    sh -c "test $st = 2 && grep -q 'expected an action after the process id' '$T/err'"
"$M" ctl >"$T/out" 2>"$T/err"; st=$?
check "nothing: exit 2, says what is expected ($st)" \
    sh -c "test $st = 2 && grep -q 'expected a process id and an action' '$T/err'"
finish
