#!/bin/sh
# install-deps.sh - installs the Debian packages a make target needs, if missing.
#
#   scripts/install-deps.sh build   compiler, libdw, zlib, libmicrohttpd, libunwind, PCRE2, libcurl
#   scripts/install-deps.sh test    build + what the tests use (clang fuzzer,
#                                   Go's pprof, Chromium, Node, sqlite3, the
#                                   allocators jemalloc, tcmalloc, mimalloc
#                                   and redis for the recorder's tests,
#                                   Debian's debuginfod server and client
#                                   for symbolize --debuginfod, valgrind for
#                                   the leak verdicts' reference, strace for a
#                                   program already traced (ptrace refused),
#                                   pandas,
#                                   matplotlib and Jupyter for the Python
#                                   package's tests, debhelper, dh-python and
#                                   lintian for the Debian packages, python3-build
#                                   and python3-venv for the wheel, ...)
#   scripts/install-deps.sh bench   test + heaptrack and hyperfine for comparisons
#
# Idempotent and quick when everything is present. Needs root (or sudo) only
# when something is missing. Set MEMTRACE_NO_INSTALL=1 to only report.
set -eu

profile=${1:-build}

build_pkgs="gcc make libc6-dev pkg-config libdw-dev libelf-dev zlib1g-dev libmicrohttpd-dev xz-utils libunwind-dev libpcre2-dev libcurl4-openssl-dev"
test_pkgs="$build_pkgs clang libclang-rt-14-dev golang-go chromium sqlite3 python3 g++ procps curl libgmp-dev libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 redis-server redis-tools debuginfod libdebuginfod1 valgrind python3-pandas python3-matplotlib jupyter-nbconvert python3-ipykernel"
# a program already traced (the leak scan's ptrace refused)
test_pkgs="$test_pkgs strace"
# the Debian packages and the wheel (tests/package)
test_pkgs="$test_pkgs dpkg-dev debhelper dh-python lintian python3-build python3-wheel python3-setuptools python3-venv python3-numpy"
# libc's compressed separate debug file (tests/record/symbolize_debugcopy.sh)
test_pkgs="$test_pkgs libc6-dbg"
# the push tests' independent decoders (tests/push)
test_pkgs="$test_pkgs python3-protobuf protobuf-compiler"
bench_pkgs="$test_pkgs heaptrack hyperfine"

case "$profile" in
    build) pkgs=$build_pkgs ;;
    test) pkgs=$test_pkgs ;;
    bench) pkgs=$bench_pkgs ;;
    *) echo "usage: $0 build|test|bench" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

# Node.js and npm (for the browser tests' driver) count as present when the
# commands exist, whichever packaging provides them: a nodejs from another
# source bundles npm and conflicts with Debian's npm package.
if [ "$profile" != build ]; then
    command -v node >/dev/null 2>&1 || missing="$missing nodejs"
    command -v npm >/dev/null 2>&1 || missing="$missing npm"
fi

[ -z "$missing" ] && exit 0

if [ "${MEMTRACE_NO_INSTALL:-0}" = 1 ]; then
    echo "install-deps: missing Debian packages:$missing" >&2
    exit 1
fi

echo "install-deps: installing$missing" >&2
if [ "$(id -u)" = 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "install-deps: not root and no sudo; install as root:$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >&2
