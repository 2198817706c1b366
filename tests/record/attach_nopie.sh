#!/bin/sh
# attach_nopie.sh - 'memtrace attach' on an executable built without -fPIE
# that takes malloc's address (as node 20 does): its dynamic symbol malloc
# is undefined with the value of its own PLT stub, which dlsym returns. The
# recorder must take the C library's malloc as the allocator, not that stub
# (the stub jumps through the GOT slot the attach redirects: endless
# recursion, SIGSEGV). At --interval 4k the program runs on, its calls from
# the executable, through the function pointer and from a shared library
# are recorded in the known 1:2:3 ratio of their bytes, and after detach
# every GOT slot of the redirected functions, in every module, holds what
# it held before the attach (read from /proc/PID/mem).
. tests/record/progs/lib.sh
skip_under_tsan
[ "${MT_STAGE:-plain}" = plain ] || { echo "ptrace injection of the plain build's library: plain stage only"; exit 77; }
MT=$PWD/$MT_BIN
cd "$T" || exit 1

cat >np_lib.c <<'EOF2'
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) int nopie_lib_alloc(int i)
{
    char *p = malloc(3000);
    if (!p)
        return 1;
    memset(p, i, 3000);
    int bad = p[2999] != (char)i;
    free(p);
    return bad;
}
EOF2
cat >np.c <<'EOF2'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int nopie_lib_alloc(int i);
void *(*volatile nopie_take)(size_t);
__attribute__((noinline)) static int nopie_exe_alloc(int i)
{
    char *p = malloc(1000);
    if (!p)
        return 1;
    memset(p, i, 1000);
    int bad = p[999] != (char)i;
    free(p);
    return bad;
}
__attribute__((noinline)) static int nopie_pointer_alloc(int i)
{
    char *p = nopie_take(2000);
    if (!p)
        return 1;
    memset(p, i, 2000);
    int bad = p[1999] != (char)i;
    free(p);
    return bad;
}
int main(int argc, char **argv)
{
    long bad = 0;
    /* malloc's address taken in code built without -fPIE: an absolute
     * address, so its canonical address is this executable's PLT stub */
    nopie_take = malloc;
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; access(argv[1], F_OK) != 0; i++) {
        for (int k = 0; k < 50; k++)
            bad += nopie_exe_alloc(i + k) + nopie_pointer_alloc(i + k) + nopie_lib_alloc(i + k);
        struct timespec ts = { 0, 200 * 1000 };
        nanosleep(&ts, NULL);
    }
    printf("bad %ld\n", bad);
    return argc > 2;
}
EOF2
if ! cc -shared -fPIC -O1 -g -fno-omit-frame-pointer -o libnp.so np_lib.c ||
    ! cc -no-pie -fno-pie -O1 -g -fno-omit-frame-pointer -o np np.c -L. -lnp -Wl,-rpath,"$PWD"; then
    echo "FAIL: cannot build the non-PIE test program"
    exit 1
fi
# The shape of node's executable: not PIE, malloc undefined with a value.
check "the test program is not PIE" sh -c "readelf -hW np | grep -q 'Type: *EXEC'"
check "its malloc symbol is undefined with its PLT stub's address" \
    sh -c "readelf --dyn-syms -W np | awk '\$8 ~ /^malloc(@|\$)/ && \$7 == \"UND\" && \$2 !~ /^0+\$/' | grep -q ."

# Every JUMP_SLOT/GLOB_DAT slot naming a redirected function in every
# module of the process: "module offset name value" lines.
NAMES='malloc|calloc|realloc|reallocarray|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|free_sized|free_aligned_sized|mmap|mmap64|munmap|mremap|mprotect'
slots() { # slots PID
    awk '$6 ~ /^\// && $3 == "00000000" { split($1, a, "-"); if (!($6 in s)) { s[$6] = a[1]; print $6, a[1] } }' \
        /proc/$1/maps | while read -r mod lo; do
        case "$mod" in *libmemtrace*) continue ;; esac
        if readelf -hW "$mod" 2>/dev/null | grep -q 'Type: *EXEC'; then base=0; else base=$((0x$lo)); fi
        readelf -rW "$mod" 2>/dev/null | awk -v n="^($NAMES)(@|\$)" \
            '($3 == "R_X86_64_JUMP_SLOT" || $3 == "R_X86_64_GLOB_DAT") && $5 ~ n { sub(/@.*/, "", $5); print $1, $5 }' |
        while read -r off name; do
            v=$(dd if=/proc/$1/mem bs=8 count=1 iflag=skip_bytes skip=$((0x$off + base)) 2>/dev/null | od -An -tx8 | tr -d ' ')
            echo "$mod $off $name ${v:-unreadable}"
        done
    done
}

rm -f stop; LD_BIND_NOW=1 ./np stop >np.out 2>&1 &
p=$!
for i in $(seq 100); do grep -q ready np.out 2>/dev/null && break; sleep 0.1; done
slots $p >before.slots
check "slots found in the executable, its library and libc ($(wc -l <before.slots))" \
    sh -c "grep -q '^$PWD/np [0-9a-f]* malloc ' before.slots && grep -q '^$PWD/libnp.so [0-9a-f]* malloc ' before.slots"
"$MT" attach --duration 60s -i 4k -o np.ctf $p >attach.log 2>&1 &
a=$!
# Wait for the recording to start (a generous bound, not a race), then
# read the slots while attached.
for i in $(seq 300); do grep -q 'recording\|memtrace attach:' attach.log 2>/dev/null && break; sleep 0.1; done
slots $p >during.slots
lo=$(awk '/libmemtrace/ { split($1, a, "-"); print a[1]; exit }' /proc/$p/maps)
hi=$(awk '/libmemtrace/ { split($1, a, "-"); h = a[2] } END { print h }' /proc/$p/maps)
v=$(awk -v m="$PWD/np" '$1 == m && $3 == "malloc" { print $4; exit }' during.slots)
check "while attached the executable's malloc slot points into libmemtrace ($v in $lo-$hi)" \
    sh -c "[ -n '$v' ] && [ -n '$lo' ] && [ \$((0x$v)) -ge \$((0x$lo)) ] && [ \$((0x$v)) -lt \$((0x$hi)) ]"
sleep 1
kill -INT $a 2>/dev/null
wait $a
rc=$?
check "attach to a non-PIE executable at 4k records and detaches: exit 0 ($(tr '\n' ' ' <attach.log))" test $rc = 0
slots $p >after.all
# (libunwind and liblzma, loaded by the attach, were not there before)
awk 'NR == FNR { m[$1] = 1; next } $1 in m' before.slots after.all >after.slots
check "after detach every slot the attach touched holds its value from before ($(diff before.slots after.slots | grep -c '^>') differ)" \
    cmp -s before.slots after.slots
into=0
while read -r mod off name v; do
    case "$v" in *[!0-9a-f]*|'') continue ;; esac
    [ $((0x$v)) -ge $((0x$lo)) ] && [ $((0x$v)) -lt $((0x$hi)) ] && into=$((into + 1))
done <after.all
check "and no slot of any module points into libmemtrace ($into do)" test "$into" = 0
kill -0 $p 2>/dev/null
check "the program is alive after the attach" test $? = 0
touch stop
wait $p
rc=$?
check "it ends cleanly ($(tail -1 np.out), exit $rc)" sh -c "[ $rc = 0 ] && grep -q '^bad 0$' np.out"

"$MT" folded --raw np.ctf >np.folded 2>&1
sum() { awk -v f="$1" '$0 ~ f { s += $NF } END { print s + 0 }' np.folded; }
e=$(sum nopie_exe_alloc) q=$(sum nopie_pointer_alloc) l=$(sum nopie_lib_alloc)
check "the executable's calls are recorded ($e bytes)" test "$e" -gt 0
check "the calls through malloc's address are recorded ($q bytes)" test "$q" -gt 0
check "the shared library's calls are recorded ($l bytes)" test "$l" -gt 0
# 1000, 2000 and 3000 bytes per round: shares 1/6, 2/6, 3/6 of the three.
check "their bytes are in the program's 1:2:3 ratio (exe $e, pointer $q, lib $l)" \
    awk -v e="$e" -v q="$q" -v l="$l" 'BEGIN { t = e + q + l; exit !(t > 0 &&
        e / t > 1/6 - 0.04 && e / t < 1/6 + 0.04 && q / t > 2/6 - 0.04 && q / t < 2/6 + 0.04 &&
        l / t > 3/6 - 0.04 && l / t < 3/6 + 0.04) }'

# Node.js itself (Debian's node is such an executable), when installed:
# Buffers come from its allocator through calloc/malloc.
if command -v node >/dev/null 2>&1 && readelf -hW "$(command -v node)" | grep -q 'Type: *EXEC'; then
    cat >busy.js <<'EOF2'
const fs = require('fs');
let keep = [], n = 0;
console.log('ready');
function work() {
    for (let i = 0; i < 100; i++) {
        const b = Buffer.alloc(65536 + i);
        b[i] = 1;
        keep.push(b);
        if (keep.length > 64) keep.shift();
        n++;
    }
    if (fs.existsSync('stop.node')) { console.log('buffers ' + (n > 0 ? 'made' : 'none')); return; }
    setImmediate(work);
}
work();
EOF2
    rm -f stop.node; node busy.js >node.out 2>&1 &
    pn=$!
    for i in $(seq 300); do grep -q ready node.out 2>/dev/null && break; sleep 0.1; done
    "$MT" attach --duration 1s -i 4k -o node.ctf $pn >node.log 2>&1
    rc=$?
    check "attach to node at 4k: exit 0 ($(tr '\n' ' ' <node.log))" test $rc = 0
    kill -0 $pn 2>/dev/null
    check "node is alive after the attach" test $? = 0
    "$MT" info node.ctf >node.info 2>&1
    check "its trace has samples ($(grep '^samples' node.info))" grep -q '^samples: *[1-9]' node.info
    touch stop.node
    wait $pn
    rc=$?
    check "node ends cleanly ($(tail -1 node.out), exit $rc)" sh -c "[ $rc = 0 ] && grep -q '^buffers made$' node.out"
else
    echo "no node (or a PIE one) here: the Node.js case is not tested"
fi
finish
