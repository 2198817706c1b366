# Makefile - builds everything into $(BUILD) (default build/).
#
#   make            libraries and the CLI
#   make demo       install what is missing, profile the bundled example, show the result
#   make test       install what is missing, run every test (plain, ASan+UBSan, TSan; CHECKS=1)
#   make CHECKS=1   the same, with MT_ASSERT's invariants checked (lib/common/check.h)
#   make bench      benchmarks (see docs/PERFORMANCE.md)
#   make fuzz       build the libFuzzer targets (trace reader, filter language)
#   make install    PREFIX=/usr/local DESTDIR= [LIBDIR=$(PREFIX)/lib]
#   make deb        Debian packages (dpkg-buildpackage) into $(BUILD)/deb/
#   make wheel      the Python package as a wheel into $(BUILD)/wheel/
#
# Layers follow the data's path; each is a directory under lib/:
#   lib/common   what several layers share: the unit grammar, the names of a
#                run's files, hashes, thread start, write sinks, vectors,
#                safe files, the location table, the raw-frame and control
#                protocol definitions, assertions (check.h), the normal
#                distribution, the warning fallback (mostly header only;
#                the rest is compiled with the codec)
#   lib/record   in the profiled process: sampling, unwinding, tracing
#   lib/trace    the trace codec (reader, writer)
#   lib/analyze  the model built from a trace, filters, estimates
#   lib/present  reports: tables, JSON, folded stacks, pprof, SVG plots
#   lib/symbolize  names for the raw frames of recorded traces (libdw), for the CLI
#   lib/push     sending profiles to profiling engines (libcurl), for the CLI
#   lib/inject   calls into a running process with ptrace (memtrace attach), for the CLI
#   lib/launch   a command started with the recorder preloaded (memtrace run), for the CLI
# programs/ holds the CLI, viewer/ the web viewer (server and page).

PREFIX ?= /usr/local
# where the libraries go (Debian: $(PREFIX)/lib/<multiarch triplet>); the CLI
# also looks for the recorder there
LIBDIR ?= $(PREFIX)/lib
# One version for the CLI, the libraries, the packages and the Python
# package: the file VERSION. The libraries' sonames carry its major number.
VERSION := $(shell cat VERSION)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
# The commit the build comes from: git's, or the file COMMIT a source copy
# carries (make deb writes it), or "unknown".
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || cat COMMIT 2>/dev/null || echo unknown)
# where `make install` puts the Python package (python/memtrace): the
# interpreter's own site directory under PREFIX (Debian: .../pythonX.Y/dist-packages)
PYTHON_SITE ?= $(PREFIX)/lib/$(shell /usr/bin/python3 -c 'import sys; print("python%d.%d/dist-packages" % sys.version_info[:2])' 2>/dev/null || echo python3/dist-packages)
DESTDIR ?=
BUILD ?= build
CC ?= cc
SANITIZE ?=
OPT ?= -O2

CPPFLAGS += -Iinclude -Ilib/common -D_GNU_SOURCE
# CHECKS=1: MT_ASSERT's invariants checked (lib/common/check.h); on in every
# build `make test` makes and by default under a sanitizer, off in `make`.
CHECKS ?= $(if $(SANITIZE),1,0)
ifeq ($(CHECKS),1)
CPPFLAGS += -DMT_CHECKS=1
endif
CFLAGS ?= $(OPT) -g
WARN := -Wall -Wextra -Werror
ALL_CFLAGS = -std=gnu11 $(WARN) -fPIC -fno-omit-frame-pointer $(CFLAGS)
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# lib/common's few compiled parts (the hash seed, the safe file opener, the
# location table, the TRACE.rss format) go with the codec, which every other part links, the
# recorder included.
# The protobuf wire codec (lib/common/protowire.c) is shared by the analysis
# and presentation layers only: it goes with the analysis library.
COMMON_SRC  := $(filter-out lib/common/protowire.c,$(wildcard lib/common/*.c))
TRACE_SRC   := $(wildcard lib/trace/*.c) $(COMMON_SRC)
RECORD_SRC  := $(wildcard lib/record/*.c)
ANALYZE_SRC := $(wildcard lib/analyze/*.c) lib/common/protowire.c
PRESENT_SRC := $(wildcard lib/present/*.c)
SYMBOLIZE_SRC := $(wildcard lib/symbolize/*.c)
VIEWER_SRC  := $(wildcard viewer/*.c)
CLI_SRC     := $(wildcard programs/*.c)
# lib/push: sending profiles to profiling engines (libcurl), the CLI's only
# (libcurl and libmicrohttpd are loaded at first use, lib/common/dynlib.h: not linked)
PUSH_SRC    := $(wildcard lib/push/*.c)
# lib/inject: calls into another process with ptrace (memtrace attach), the CLI's only
INJECT_SRC  := $(wildcard lib/inject/*.c)
# lib/launch: 'memtrace run' starting a command with the recorder preloaded, the CLI's only
LAUNCH_SRC  := $(wildcard lib/launch/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
TRACE_OBJ   := $(call obj,$(TRACE_SRC))
RECORD_OBJ  := $(call obj,$(RECORD_SRC))
ANALYZE_OBJ := $(call obj,$(ANALYZE_SRC))
PRESENT_OBJ := $(call obj,$(PRESENT_SRC))
SYMBOLIZE_OBJ := $(call obj,$(SYMBOLIZE_SRC))
VIEWER_OBJ  := $(call obj,$(VIEWER_SRC))
CLI_OBJ     := $(call obj,$(CLI_SRC)) $(call obj,$(PUSH_SRC)) $(call obj,$(INJECT_SRC)) $(call obj,$(LAUNCH_SRC))

# The viewer's page (viewer/web/*) compiled into the CLI as a generated C file.
VIEWER_WEB     := $(sort $(wildcard viewer/web/*))
VIEWER_GEN_C   := $(BUILD)/gen/viewer_assets.c
VIEWER_GEN_OBJ := $(BUILD)/gen/viewer_assets.o

# Libraries each layer links against.
RECORD_LIBS  := -lpthread -ldl
ANALYZE_LIBS := -lpcre2-8 -lz -lm
CLI_LIBS     := -lpcre2-8 -ldw -lelf -lz -lm -lpthread -ldl
SYMBOLIZE_LIBS := -ldw -lelf -lz -lpthread -ldl
# libdw is for the symbolizer (lib/symbolize), which only the CLI links
# (and libmemtrace-symbolize.so, which the Python package loads).

LIB_TRACE_A   := $(BUILD)/libmemtrace-trace.a
LIB_A         := $(BUILD)/libmemtrace.a
LIB_SO        := $(BUILD)/libmemtrace.so
LIB_ANALYZE_A := $(BUILD)/libmemtrace-analyze.a
LIB_ANALYZE_SO := $(BUILD)/libmemtrace-analyze.so
LIB_SYMBOLIZE_A := $(BUILD)/libmemtrace-symbolize.a
LIB_SYMBOLIZE_SO := $(BUILD)/libmemtrace-symbolize.so
CLI           := $(BUILD)/memtrace

.PHONY: all cli libs examples test demo bench fuzz install clean deps-build deps-test deps-bench tests-build
all: libs cli examples
libs: $(LIB_SO) $(LIB_A) $(LIB_TRACE_A) $(LIB_ANALYZE_A) $(LIB_ANALYZE_SO) $(LIB_SYMBOLIZE_A) \
    $(LIB_SYMBOLIZE_SO)
cli: $(CLI)

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/cflags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The codec alone: what the CLI and the analysis engine link.
$(LIB_TRACE_A): $(TRACE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# libmemtrace: codec + recorder. This is what a profiled program preloads or links.
$(LIB_A): $(TRACE_OBJ) $(RECORD_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
# The version script keeps the exports to the public API and the malloc family.
$(LIB_SO): $(TRACE_OBJ) $(RECORD_OBJ) lib/record/exports.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libmemtrace.so.$(SOVERSION) -Wl,-z,now -Wl,--version-script=lib/record/exports.map $(LDFLAGS) -o $@ $(TRACE_OBJ) $(RECORD_OBJ) $(RECORD_LIBS)
	ln -sf $(notdir $@) $@.$(SOVERSION)

# libmemtrace-analyze: the analysis engine and reports. The shared library
# carries its own copy of the codec so that a program (or a Python process)
# that analyses traces never loads the recorder, which would interpose its
# malloc; the static one goes with libmemtrace-trace.a.
$(LIB_ANALYZE_A): $(ANALYZE_OBJ) $(PRESENT_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(LIB_ANALYZE_SO): $(ANALYZE_OBJ) $(PRESENT_OBJ) $(TRACE_OBJ)
	$(CC) -shared -Wl,-soname,libmemtrace-analyze.so.$(SOVERSION) $(LDFLAGS) -o $@ $(ANALYZE_OBJ) $(PRESENT_OBJ) $(TRACE_OBJ) $(ANALYZE_LIBS)
	ln -sf $(notdir $@) $@.$(SOVERSION)

# The symbolizer of recorded traces (libdw): linked into the CLI only, never
# into a profiled program.
$(LIB_SYMBOLIZE_A): $(SYMBOLIZE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
# The same as a shared library for the Python package, which hands its namer
# to libmemtrace-analyze.so (docs/python.md): it takes the codec from that
# library (found beside it) instead of a copy of its own, and exports only
# memtrace/symbolize.h. libmemtrace-analyze.so never needs it. Installed
# in the loader's own directories (Debian's packages) it needs no run path.
SYMBOLIZE_RPATH ?= -Wl,-rpath,'$$ORIGIN'
$(LIB_SYMBOLIZE_SO): $(SYMBOLIZE_OBJ) $(LIB_ANALYZE_SO) lib/symbolize/exports.map
	$(CC) -shared -Wl,-soname,libmemtrace-symbolize.so.$(SOVERSION) -Wl,--version-script=lib/symbolize/exports.map \
	    $(SYMBOLIZE_RPATH) $(LDFLAGS) -o $@ $(SYMBOLIZE_OBJ) $(LIB_ANALYZE_SO) $(SYMBOLIZE_LIBS)
	ln -sf $(notdir $@) $@.$(SOVERSION)

# The CLI: codec + analysis + reports + viewer + symbolizer, statically; never the recorder.
$(CLI): $(CLI_OBJ) $(VIEWER_OBJ) $(VIEWER_GEN_OBJ) $(LIB_ANALYZE_A) $(LIB_SYMBOLIZE_A) $(LIB_TRACE_A)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(VIEWER_OBJ) $(VIEWER_GEN_OBJ) $(LIB_ANALYZE_A) $(LIB_SYMBOLIZE_A) $(LIB_TRACE_A) $(CLI_LIBS)

# The version, the commit and where the libraries are installed, for the CLI
# (--version; the recorder's library looked for in LIBDIR): rewritten only
# when one of them changes, so that a new commit rebuilds two objects.
BUILDINFO_H := $(BUILD)/gen/buildinfo.h
$(BUILDINFO_H): FORCE
	@mkdir -p $(dir $@)
	@printf '#define MEMTRACE_VERSION "%s"\n#define MEMTRACE_COMMIT "%s"\n#define MEMTRACE_LIBDIR "%s"\n#define MEMTRACE_SOVERSION "%s"\n#define MULTIARCH_TRIPLET "%s"\n' \
	    '$(VERSION)' '$(COMMIT)' '$(LIBDIR)' '$(SOVERSION)' '$(MULTIARCH)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
# The compiler flags every object was built with: rewritten when they
# change (CHECKS=1 or not, OPT, ...), which rebuilds every object.
$(BUILD)/gen/cflags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CPPFLAGS) $(ALL_CFLAGS)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/obj/programs/memtrace.o $(BUILD)/obj/lib/launch/library.o: $(BUILDINFO_H)
$(BUILD)/obj/programs/memtrace.o $(BUILD)/obj/lib/launch/library.o: CPPFLAGS += -I$(BUILD)/gen
.PHONY: FORCE
FORCE:

$(VIEWER_GEN_C): $(VIEWER_WEB) scripts/embed-assets.sh
	@mkdir -p $(dir $@)
	sh scripts/embed-assets.sh $@ $(VIEWER_WEB)
$(VIEWER_GEN_OBJ): $(VIEWER_GEN_C) viewer/assets.h
	$(CC) $(CPPFLAGS) -Iviewer $(ALL_CFLAGS) -c $< -o $@

# ---------------------------------------------------------------- tests
# tests/trace/*.c and tests/analyze/*.c, tests/present/*.c: unit tests linked
# against the codec (and the analysis engine). Shell tests (*.sh) need no build step.
TEST_TRACE_BIN   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/trace/*.c))
TEST_ANALYZE_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/analyze/*.c tests/present/*.c))
# tests/common/*.c: unit tests of lib/common's header-only mechanisms.
TEST_COMMON_BIN  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/common/*.c))
# tests/push/*.c: unit tests of lib/push's parts that need no network.
TEST_PUSH_BIN    := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/push/*.c))
# tests/programs/NAME.c: unit tests of the CLI's programs/NAME.c, linked with its object alone.
TEST_PROGRAMS_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/programs/*.c))
TEST_BINS := $(TEST_COMMON_BIN) $(TEST_TRACE_BIN) $(TEST_ANALYZE_BIN) $(TEST_PUSH_BIN) $(TEST_PROGRAMS_BIN)

$(TEST_COMMON_BIN): $(BUILD)/tests/%: tests/%.c $(wildcard lib/common/*.h) $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) $(call obj,$(COMMON_SRC)) -lpthread

$(TEST_TRACE_BIN): $(BUILD)/tests/%: tests/%.c $(LIB_TRACE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Ilib -o $@ $< $(LDFLAGS) $(LIB_TRACE_A) -lm
$(TEST_ANALYZE_BIN): $(BUILD)/tests/%: tests/%.c $(LIB_ANALYZE_A) $(LIB_TRACE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Ilib -o $@ $< $(LDFLAGS) $(LIB_ANALYZE_A) $(LIB_TRACE_A) $(ANALYZE_LIBS)

$(TEST_PUSH_BIN): $(BUILD)/tests/%: tests/%.c $(call obj,lib/push/payload.c) $(LIB_ANALYZE_A) $(LIB_TRACE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Ilib -o $@ $< $(LDFLAGS) $(call obj,lib/push/payload.c) $(LIB_ANALYZE_A) $(LIB_TRACE_A) $(ANALYZE_LIBS)

$(TEST_PROGRAMS_BIN): $(BUILD)/tests/programs/%: tests/programs/%.c $(BUILD)/obj/programs/%.o $(LIB_ANALYZE_A) $(LIB_TRACE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Iprograms -o $@ $< $(LDFLAGS) $(BUILD)/obj/programs/$*.o $(LIB_ANALYZE_A) $(LIB_TRACE_A) $(ANALYZE_LIBS)

# tests/tools/*.c: programs the shell tests run (generators of hostile traces),
# not tests themselves.
TEST_TOOLS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/tools/*.c))
tests-build: $(TEST_BINS) record-tests examples $(TEST_TOOLS) $(BUILD)/bench/viewer-gen $(BUILD)/bench/gen_trace

$(TEST_TOOLS): $(BUILD)/tests/%: tests/%.c $(LIB_TRACE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Ilib -o $@ $< $(LDFLAGS) $(LIB_TRACE_A)

# tests/record/*.c: unit tests linked with the recorder's objects (which then
# replace malloc in the test binary itself, even ahead of TSan's). tests/record/progs/*.c, *.cc:
# programs the shell tests run under the recorder; they are plain programs
# (not instrumented, never linked with the recorder; summary uses the codec).
TEST_RECORD_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/record/*.c))
RECORD_PROGS := $(patsubst tests/record/progs/%.c,$(BUILD)/tests/record/progs/%,$(wildcard tests/record/progs/*.c)) \
    $(patsubst tests/record/progs/%.cc,$(BUILD)/tests/record/progs/%,$(wildcard tests/record/progs/*.cc))
PROG_FLAGS := -O1 -g -fno-omit-frame-pointer -Wall -Iinclude -D_GNU_SOURCE
.PHONY: record-tests
record-tests: $(TEST_RECORD_BIN) $(RECORD_PROGS) $(BUILD)/tests/record/linked-app $(LIB_SO)
# A program linked with libmemtrace.so (not preloaded).
$(BUILD)/tests/record/linked-app: tests/record/linked/app.c $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(PROG_FLAGS) -o $@ $< $(LDFLAGS) -L$(BUILD) -lmemtrace -Wl,-rpath,$(abspath $(BUILD))
# Under TSan the malloc entry points themselves must not be instrumented:
# they run before TSan's runtime is initialized (and the sampled-block
# table they consult on free, in threads TSan is still starting).
ifneq ($(findstring thread,$(SANITIZE)),)
$(BUILD)/obj/lib/record/interpose.o $(BUILD)/obj/lib/record/real.o $(BUILD)/obj/lib/record/sampled.o: ALL_CFLAGS += -fno-sanitize=thread -DMT_UNDER_TSAN
endif
$(TEST_RECORD_BIN): $(BUILD)/tests/%: tests/%.c $(TRACE_OBJ) $(RECORD_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Ilib -o $@ $< $(LDFLAGS) $(TRACE_OBJ) $(RECORD_OBJ) $(RECORD_LIBS) -lm
$(BUILD)/tests/record/progs/%: tests/record/progs/%.c $(LIB_TRACE_A)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(PROG_FLAGS) -o $@ $< $(LDFLAGS) $(LIB_TRACE_A) -lpthread -ldl -lm
$(BUILD)/tests/record/progs/%: tests/record/progs/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(PROG_FLAGS) -o $@ $< $(LDFLAGS) -lpthread

# ---------------------------------------------------------------- fuzzing, examples
# libFuzzer targets (need clang): $(BUILD)/fuzz/fuzz_reader for the trace
# reader, $(BUILD)/fuzz/fuzz_filter for the filter language,
# $(BUILD)/fuzz/fuzz_allocindex for the viewer's allocation index. Each compiles
# the sources it needs itself, instrumented. See fuzz/*.c.
FUZZ_READER := $(BUILD)/fuzz/fuzz_reader
FUZZ_FILTER := $(BUILD)/fuzz/fuzz_filter
FUZZ_ALLOCINDEX := $(BUILD)/fuzz/fuzz_allocindex
FUZZ_PROFILE := $(BUILD)/fuzz/fuzz_profile
fuzz: $(FUZZ_READER) $(FUZZ_FILTER) $(FUZZ_ALLOCINDEX) $(FUZZ_PROFILE)
$(FUZZ_READER): fuzz/fuzz_reader.c $(TRACE_SRC) $(wildcard lib/trace/*.h lib/common/*.h) include/memtrace/trace.h
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -Iinclude -Ilib/common -D_GNU_SOURCE -DMT_CHECKS=1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -o $@ fuzz/fuzz_reader.c $(TRACE_SRC)
# The filter language (parser, printer, regexes applied to a model): fuzz/fuzz_filter.c,
# with the dictionary fuzz/filter.dict.
$(FUZZ_FILTER): fuzz/fuzz_filter.c $(TRACE_SRC) $(ANALYZE_SRC) $(wildcard lib/trace/*.h lib/common/*.h lib/analyze/*.h) include/memtrace/analyze.h
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -Iinclude -Ilib/common -D_GNU_SOURCE -DMT_CHECKS=1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -o $@ fuzz/fuzz_filter.c $(TRACE_SRC) $(ANALYZE_SRC) $(ANALYZE_LIBS) -lpthread
# The allocation index (lib/analyze/allocindex.c), folded against a small trace's model.
$(FUZZ_ALLOCINDEX): fuzz/fuzz_allocindex.c $(TRACE_SRC) $(ANALYZE_SRC) $(wildcard lib/trace/*.h lib/common/*.h lib/analyze/*.h) include/memtrace/analyze.h include/memtrace/stream.h
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -Iinclude -Ilib/common -D_GNU_SOURCE -DMT_CHECKS=1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -o $@ fuzz/fuzz_allocindex.c $(TRACE_SRC) $(ANALYZE_SRC) $(ANALYZE_LIBS) -lpthread

# pprof profiles as input: the decoder and the model built from it (fuzz/fuzz_profile.c).
$(FUZZ_PROFILE): fuzz/fuzz_profile.c $(TRACE_SRC) $(ANALYZE_SRC) $(wildcard lib/trace/*.h lib/common/*.h lib/analyze/*.h) include/memtrace/analyze.h
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -Iinclude -Ilib/common -D_GNU_SOURCE -DMT_CHECKS=1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -o $@ fuzz/fuzz_profile.c $(TRACE_SRC) $(ANALYZE_SRC) $(ANALYZE_LIBS) -lpthread

# Example programs written against the public API: $(BUILD)/examples/NAME.
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
# C++ examples: programs to profile, built like release builds (-O2 -g).
EXAMPLE_CXX_BIN := $(patsubst examples/%.cc,$(BUILD)/examples/%,$(wildcard examples/*.cc))
examples: $(EXAMPLE_BIN) $(EXAMPLE_CXX_BIN)
$(EXAMPLE_CXX_BIN): $(BUILD)/examples/%: examples/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -pthread -o $@ $<
$(EXAMPLE_BIN): $(BUILD)/examples/%: examples/%.c $(LIB_TRACE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Ilib -o $@ $< $(LDFLAGS) $(LIB_TRACE_A)

# Benchmark helpers written against the codec (trace generator, decoder),
# and the forwarding shim (a preload that records nothing: the floor under
# the recorder's wrappers, bench/cost.sh and bench/wrapshare.sh).
BENCH_SO := $(BUILD)/bench/forward_shim.so
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(filter-out bench/forward_shim.c,$(wildcard bench/*.c)))
.PHONY: bench-tools
bench-tools: $(BENCH_BIN) $(BENCH_SO)
$(BENCH_BIN): $(BUILD)/bench/%: bench/%.c $(LIB_TRACE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Ilib -o $@ $< $(LDFLAGS) $(LIB_TRACE_A)
$(BENCH_SO): bench/forward_shim.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $< -ldl

deps-build:
	@sh scripts/install-deps.sh build
deps-test:
	@sh scripts/install-deps.sh test
deps-bench:
	@sh scripts/install-deps.sh bench

test: deps-test
	@$(MAKE) --no-print-directory CHECKS=1 all tests-build
	@sh tests/run-all.sh

demo: deps-build
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) sh scripts/demo.sh

bench: deps-bench
	@$(MAKE) --no-print-directory all
	@sh bench/run.sh

# ---------------------------------------------------------------- install
# Each shared library is installed under its full version with the soname's
# link beside it, and the bare name's link for linking (libmemtrace-dev).
SHARED_LIBS := libmemtrace libmemtrace-analyze libmemtrace-symbolize
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include/memtrace $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/memtrace
	for l in $(SHARED_LIBS); do \
	    install -m 755 $(BUILD)/$$l.so $(DESTDIR)$(LIBDIR)/$$l.so.$(VERSION) && \
	    ln -sf $$l.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$$l.so.$(SOVERSION) && \
	    ln -sf $$l.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/$$l.so || exit 1; done
	install -m 644 $(LIB_A) $(LIB_ANALYZE_A) $(LIB_SYMBOLIZE_A) $(DESTDIR)$(LIBDIR)/
	install -m 644 include/memtrace/*.h $(DESTDIR)$(PREFIX)/include/memtrace/
	for pc in memtrace memtrace-analyze; do \
	    sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	        scripts/$$pc.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/$$pc.pc; done
	if ls docs/man/*.1 >/dev/null 2>&1; then install -m 644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/; fi
	install -d $(DESTDIR)$(PYTHON_SITE)/memtrace
	install -m 644 python/memtrace/*.py $(DESTDIR)$(PYTHON_SITE)/memtrace/
	printf 'LIBDIR = "%s"\n' "$(LIBDIR)" > $(DESTDIR)$(PYTHON_SITE)/memtrace/_config.py

# ---------------------------------------------------------------- packages
# Debian packages (debian/): built by dpkg-buildpackage from a copy of the
# sources in $(BUILD)/deb/memtrace-$(VERSION) (dh's clean step would remove
# this build), which carries the commit in its file COMMIT.
DEB_SRC := $(BUILD)/deb/memtrace-$(VERSION)
.PHONY: deb wheel
deb:
	rm -rf $(BUILD)/deb && mkdir -p $(DEB_SRC)
	tar -cf - --exclude=./$(BUILD) --exclude=./build --exclude=./.git --exclude=./tests --exclude=./bench \
	    --exclude=./fuzz --exclude=node_modules --exclude=__pycache__ . | tar -C $(DEB_SRC) -xf -
	echo $(COMMIT) > $(DEB_SRC)/COMMIT
	cd $(DEB_SRC) && DEB_BUILD_OPTIONS="$${DEB_BUILD_OPTIONS:-parallel=2}" dpkg-buildpackage -us -uc -b
# The Python package as a pure-Python wheel (it loads the installed
# libmemtrace-analyze.so.$(SOVERSION)); Debian's python3-build, no network.
wheel:
	rm -rf $(BUILD)/wheel && mkdir -p $(BUILD)/wheel/src
	cp -r python/pyproject.toml python/README.md python/memtrace $(BUILD)/wheel/src/
	cd $(BUILD)/wheel/src && /usr/bin/python3 -m build --no-isolation --wheel --outdir .. . >../build.log 2>&1 \
	    || { tail -n 20 ../build.log; exit 1; }

clean:
	rm -rf $(BUILD)

-include $(wildcard $(BUILD)/obj/*/*/*.d $(BUILD)/obj/*/*.d)
