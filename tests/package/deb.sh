#!/bin/sh
# deb.sh - `make deb` builds the Debian packages memtrace, libmemtrace0,
# libmemtrace-dev and python3-memtrace with dpkg-buildpackage; lintian finds
# no error; each package holds only its part; and, unpacked into a scratch
# root, the installed files alone run a program under the recorder, report
# on its trace, serve the viewer's help, import the Python package and build
# a program with pkg-config: nothing from the build tree.
set -u
. tests/lib.sh
[ "${MT_STAGE:-plain}" = plain ] || { echo "plain stage only"; exit 77; }
for t in dpkg-buildpackage dh lintian; do
    command -v $t >/dev/null 2>&1 || { echo "$t missing (scripts/install-deps.sh test)"; exit 77; }
done
version=$(cat VERSION)
so=${version%%.*}
pkgbuild=$MT_TMP/pkgbuild
make -s --no-print-directory BUILD="$pkgbuild" deb >"$MT_TMP/deb.log" 2>&1
st=$?
check "make deb builds the packages" [ $st = 0 ]
[ $st = 0 ] || { tail -n 30 "$MT_TMP/deb.log"; finish; }
d=$pkgbuild/deb
arch=$(dpkg --print-architecture)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for p in memtrace_${version}_$arch libmemtrace${so}_${version}_$arch libmemtrace-dev_${version}_$arch \
         python3-memtrace_${version}_all; do
    check "builds $p.deb" [ -f "$d/$p.deb" ]
done
lintian --fail-on error --display-level '>=warning' "$d/memtrace_${version}_$arch.changes" >"$MT_TMP/lintian.log" 2>&1
st=$?
check "lintian reports no error" [ $st = 0 ]
[ $st = 0 ] || grep '^E:' "$MT_TMP/lintian.log" | head -n 20

# what each package holds
contents() { dpkg-deb -c "$d/$1" | awk '{print $6}'; }
contents "memtrace_${version}_$arch.deb" >"$MT_TMP/cli.txt"
contents "libmemtrace${so}_${version}_$arch.deb" >"$MT_TMP/lib.txt"
contents "libmemtrace-dev_${version}_$arch.deb" >"$MT_TMP/dev.txt"
check "memtrace holds the CLI and its man pages" \
    sh -c "grep -qx './usr/bin/memtrace' '$MT_TMP/cli.txt' && grep -q 'man1/memtrace-top.1' '$MT_TMP/cli.txt' && grep -q 'man1/memtrace.1' '$MT_TMP/cli.txt'"
check "memtrace holds no library or header" sh -c "! grep -q '\.so\|include/' '$MT_TMP/cli.txt'"
check "libmemtrace$so holds the libraries under their sonames" \
    sh -c "grep -qx './usr/lib/$triplet/libmemtrace.so.$so' '$MT_TMP/lib.txt' && grep -qx './usr/lib/$triplet/libmemtrace-analyze.so.$so' '$MT_TMP/lib.txt'"
check "libmemtrace$so holds no bare .so link, header or static library" \
    sh -c "! grep -q '\.so\$\|include/\|\.a\$' '$MT_TMP/lib.txt'"
check "libmemtrace-dev holds the headers, links, static libraries and pkg-config files" \
    sh -c "grep -q 'include/memtrace/record.h' '$MT_TMP/dev.txt' && grep -qx './usr/lib/$triplet/libmemtrace.so' '$MT_TMP/dev.txt' && grep -q 'libmemtrace.a' '$MT_TMP/dev.txt' && grep -q 'pkgconfig/memtrace.pc' '$MT_TMP/dev.txt'"
check "libmemtrace.so.$so's soname is its file name" \
    sh -c "dpkg-deb -x '$d/libmemtrace${so}_${version}_$arch.deb' '$MT_TMP/libonly' && readelf -d '$MT_TMP/libonly/usr/lib/$triplet/libmemtrace.so.$version' | grep -q 'SONAME.*\[libmemtrace.so.$so\]'"

# installed into a scratch root: only its files are used
root=$MT_TMP/root
for f in "$d"/*.deb; do
    case $f in *dbgsym*) continue ;; esac
    dpkg-deb -x "$f" "$root" || fail "unpacks $f"
done
M=$root/usr/bin/memtrace
check "memtrace --version prints the one version and the commit" \
    sh -c "'$M' --version | grep -qx 'memtrace $version (commit [0-9a-f]*)'"
cc -O1 -g -o "$MT_TMP/leaky" examples/leaky.c 2>"$MT_TMP/cc.log" || { cat "$MT_TMP/cc.log"; fail "builds examples/leaky.c"; }
# from /, with nothing of the build tree on any path
(cd / && env -u MEMTRACE_LIB -u LD_LIBRARY_PATH "$M" run -o "$MT_TMP/leaky.ctf" -- "$MT_TMP/leaky") \
    >"$MT_TMP/run.out" 2>&1
st=$?
check "the installed memtrace run records the demo program" [ $st = 0 ]
check "the recorder it preloaded is the installed libmemtrace.so.$so" \
    sh -c "cd / && env -u MEMTRACE_LIB '$M' run -o '$MT_TMP/maps.ctf' -- /bin/cat /proc/self/maps 2>/dev/null | grep -q '$root/usr/lib/$triplet/libmemtrace.so.$so\|$root/usr/lib/$triplet/libmemtrace.so.$version'"
(cd / && "$M" top --by live -n 3 "$MT_TMP/leaky.ctf") >"$MT_TMP/top.out" 2>&1
check "the installed memtrace top finds the demo's leak" grep -q 'parse_message' "$MT_TMP/top.out"
check "the installed memtrace view --help" sh -c "'$M' view --help | grep -q 'memtrace view'"
check "man memtrace-top is installed" [ -f "$root/usr/share/man/man1/memtrace-top.1.gz" ]
site=$root/usr/lib/python3/dist-packages
if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
    out=$(cd / && PYTHONPATH="$site" MEMTRACE_LIBDIR="$root/usr/lib/$triplet" /usr/bin/python3 -c "
import memtrace, memtrace._lib as l, sys
t = memtrace.open(sys.argv[1])
print(memtrace.__version__, l.lib_path.startswith(sys.argv[2]), t.info['allocations'] > 0)
" "$MT_TMP/leaky.ctf" "$root" 2>&1)
    check "the installed Python package reads the trace with the installed library ($out)" \
        [ "$out" = "$version True True" ]
fi
flags=$(PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_PATH="$root/usr/lib/$triplet/pkgconfig" pkg-config --cflags --libs memtrace)
cat >"$MT_TMP/ver.c" <<'C'
#include <memtrace/trace.h>
int main(void) { return 0; }
C
cc -o "$MT_TMP/ver" "$MT_TMP/ver.c" $flags 2>"$MT_TMP/cc2.log"
check "a program builds against libmemtrace-dev with pkg-config" [ $? = 0 ]
finish
