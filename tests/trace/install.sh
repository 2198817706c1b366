#!/bin/sh
# install.sh - `make install` puts the CLI, libraries, headers and pkg-config
# files under DESTDIR/PREFIX, and a program built with pkg-config against the
# installed files reads a trace; the installed `memtrace run` finds its library.
[ "$MT_STAGE" = plain ] || { echo "plain stage only"; exit 77; }
root=$MT_TMP/root prefix=/opt/memtrace
check() { if eval "$2"; then echo "PASS: $1"; else echo "FAIL: $1"; fi; }
# status DESCRIPTION STATUS LOG: PASS if STATUS is 0, else FAIL with the log
status() { if [ "$2" = 0 ]; then echo "PASS: $1"; else echo "FAIL: $1 (exit $2)"; tail -n 20 "$3"; fi; }

make -s --no-print-directory BUILD="$MT_BUILD" install DESTDIR="$root" PREFIX=$prefix >"$MT_TMP/log" 2>&1
status "make install succeeds" $? "$MT_TMP/log"
for f in bin/memtrace lib/libmemtrace.so lib/libmemtrace.a lib/libmemtrace-analyze.so lib/libmemtrace-symbolize.so \
         include/memtrace/trace.h include/memtrace/analyze.h include/memtrace/record.h \
         lib/pkgconfig/memtrace.pc share/man/man1/memtrace-run.1; do
    check "installs $f" "[ -f '$root$prefix/$f' ]"
done
check "pkg-config file names the install prefix" \
    "grep -qx 'prefix=$prefix' '$root$prefix/lib/pkgconfig/memtrace.pc'"

cat >"$MT_TMP/count.c" <<'C'
#include <memtrace/trace.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    char *err = NULL;
    mt_reader *r = mt_reader_open(argv[1], NULL, &err);
    if (!r) { fprintf(stderr, "%s\n", err); return 1; }
    mt_event ev;
    long n = 0;
    while (mt_reader_next(r, &ev) > 0) n++;
    printf("%ld\n", n);
    mt_reader_close(r);
    return 0;
}
C
flags=$(PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_PATH="$root$prefix/lib/pkgconfig" pkg-config --cflags --libs memtrace)
cc -o "$MT_TMP/count" "$MT_TMP/count.c" $flags -Wl,-rpath,"$root$prefix/lib" 2>"$MT_TMP/cc.log"
status "a program builds with pkg-config flags" $? "$MT_TMP/cc.log"
check "it reads a trace with the installed library" \
    '[ "$("$MT_TMP/count" "$MT_FIXTURES/leak.ctf")" = 12289 ]'
"$root$prefix/bin/memtrace" run -o "$MT_TMP/t.ctf" -- true 2>"$MT_TMP/run.log"
st=$?
check "installed memtrace run finds the installed library" \
    '[ $st = 0 ] && "$root$prefix/bin/memtrace" info "$MT_TMP/t.ctf" >/dev/null'
site=$(ls -d "$root$prefix"/lib/python3*/dist-packages 2>/dev/null | head -n 1)
check "installs the Python package" '[ -n "$site" ] && [ -f "$site/memtrace/__init__.py" ]'
check "the installed package knows where the library is" \
    'grep -q "LIBDIR = \"$prefix/lib\"" "$site/memtrace/_config.py"'
if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
    fixture=$PWD/$MT_FIXTURES/leak.ctf
    check "the installed package reads a trace with the installed library" \
        '[ "$(cd / && PYTHONPATH="$site" MEMTRACE_LIBDIR="$root$prefix/lib" /usr/bin/python3 -c "import memtrace, sys; print(memtrace.open(sys.argv[1]).info[\"allocations\"])" "$fixture")" = 6179 ]'
fi
