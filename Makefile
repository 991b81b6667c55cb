# stacktreed - see README.md. `make`, `make test`, `make demo`, `make bench`.
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
PREFIX   ?= /usr/local
VERSION  := 0.1.0

# BPF_DEFS=-DST_JAVA_PARTS: a bench build of the BPF object with the Java
# walker's per-part timers (bpf/java.bpf.h; bench/java_parts.py reads them).
# SANITIZE=1: user space built with ASan+UBSan into build-san/ (BPF unchanged);
# `make test SANITIZE=1` runs the unit tests and the integration tests of
# tests/integration/sanitized.txt against that build.
SANITIZE ?=
ifeq ($(SANITIZE),1)
B        := build-san
# clang: its UBSan honours log_path (gcc's prints to stderr only)
UCC      := $(CLANG)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
B        := build
SAN_FLAGS :=
UCC      := $(CC)
endif
# UCC builds stacktreed, stacktree and the unit tests; CC the workloads and
# test fixtures, whose code generation the tests depend on.
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

PKGS     := libbpf libelf libdw json-c
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -DST_VERSION=\"$(VERSION)\" \
	    -I. -Ibpf -I$(B) $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(SAN_FLAGS) \
	    $(shell pkg-config --cflags libdebuginfod 2>/dev/null)
# libdebuginfod (libdebuginfod-dev): its header here; the library itself is
# dlopen()ed only when debug files are fetched (binsym/debuginfod.c), so
# libcurl and its ~30 libraries stay out of every other run.
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lbpf -lelf -ldw -ljson-c) \
	    -lprotobuf-c -lz -lm -liberty -lssl -lcrypto -pthread
PROTOC_C ?= protoc-c

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(B)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS    := $(patsubst bpf/%.bpf.c,$(B)/%.skel.h,$(BPF_SRCS))

MAINS    := user/stacktreed.c user/stacktree.c
# sources and headers at any depth of the stage folders (user/collect/unwind/, ...)
SRC_DIRS := user common binsym
LIB_SRCS := $(filter-out $(MAINS),$(shell find $(SRC_DIRS) -name '*.c' | sort))
HDRS     := $(shell find $(SRC_DIRS) bpf tests -name '*.h')
LIB_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRCS))
# pprof's profile.proto -> protobuf-c sources, generated into build/proto/
PROTO_GEN := $(B)/proto/profile.pb-c.c $(B)/proto/profile.pb-c.h
LIB_OBJS += $(B)/obj/$(B)/proto/profile.pb-c.o
LIB      := $(B)/libstacktree.a

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
WORKLOADS  := $(patsubst tests/workloads/%.c,$(B)/workloads/%,$(wildcard tests/workloads/*.c))

.SECONDARY:
.PHONY: all clean test check unit integration demo bench soak deps test-deps install uninstall fuzz fuzz-regress spread build-tests
all: $(B)/stacktreed $(B)/stacktree

$(B)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) common/hash.h $(B)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(B) -Ibpf -I. \
		-Wall -Werror $(BPF_DEFS) -c $< -o $@

$(B)/%.skel.h: $(B)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(B)/obj/%.o: %.c $(SKELS) $(HDRS)
	@mkdir -p $(@D)
	$(UCC) $(CFLAGS) -c $< -o $@

$(PROTO_GEN) &: proto/profile.proto
	@mkdir -p $(B)
	$(PROTOC_C) --c_out=$(B) $<

# every object whose source includes the generated header
$(B)/obj/user/output/pprof.o $(B)/obj/user/model/pprof_read.o: $(B)/proto/profile.pb-c.h

$(LIB): $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/stacktreed: $(B)/obj/user/stacktreed.o $(LIB)
	$(UCC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(B)/stacktree: $(B)/obj/user/stacktree.o $(LIB)
	$(UCC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# ---- tests ---------------------------------------------------------------
$(B)/tests/%: tests/unit/%.c $(LIB) $(wildcard tests/unit/*.h tests/unit/fixtures/*.h)
	@mkdir -p $(@D)
	$(UCC) $(CFLAGS) $< $(filter %.o,$^) $(LIB) -o $@ $(LDLIBS) -lcmocka

# Workloads are built with frame pointers; see tests/workloads/README.
WL_CFLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline \
	     -fno-optimize-sibling-calls -D_GNU_SOURCE -Wall -Wextra -Werror
$(B)/workloads/%: tests/workloads/%.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) $< -o $@ -lm -lpthread

-include tests/unit/fixtures.mk
-include tests/workloads/extra.mk

# `make integration T="test_a test_b"` runs only the tests whose names contain
# one of the words.
# Sanitizer reports go to files under $(SAN_LOGS) as well as failing the
# process; the runners print them and fail when any exists.
SAN_LOGS := $(CURDIR)/$(B)/sanitizer-logs
SAN_ENV  := ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1:log_path=$(SAN_LOGS)/asan \
	    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(SAN_LOGS)/ubsan \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	    ST_SANITIZER_LOGS=$(SAN_LOGS)
RUN_ENV  := STACKTREE_BUILD=$(CURDIR)/$(B) $(if $(SAN_FLAGS),$(SAN_ENV))

unit: $(UNIT_BINS) $(UNIT_FIXTURES)
	@$(if $(SAN_FLAGS),rm -rf $(SAN_LOGS) && mkdir -p $(SAN_LOGS) &&) \
		$(RUN_ENV) tests/unit/run.sh $(UNIT_BINS)

integration: all $(WORKLOADS) $(WORKLOAD_EXTRA)
	@$(if $(SAN_FLAGS),rm -rf $(SAN_LOGS) && mkdir -p $(SAN_LOGS) &&) \
		$(RUN_ENV) tests/integration/run.sh $(T)

# The stages read in order: no include from a later stage into an earlier one;
# every relative link of README.md, docs/ and kernel-notes/ resolves.
check:
	scripts/check-includes.sh
	scripts/check-doc-links.sh
	@# the benchmarks and the test harness compile (no test imports bench/)
	python3 -m py_compile bench/*.py tests/integration/*.py

test: test-deps check
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) integration
	$(MAKE) fuzz-regress

# ---- fuzzing (libFuzzer, clang) ---------------------------------------------
# tests/fuzz/fuzz_NAME.c defines LLVMFuzzerTestOneInput; its seed corpus
# (and every crasher found so far) is tests/fuzz/corpus/NAME/.
# `make fuzz FUZZ_SECONDS=N` fuzzes each target for N seconds, as many at
# once as there are CPUs (FUZZ_JOBS=N: N at once);
# `make fuzz-regress` (part of `make test`) runs each target once over its
# committed corpus.
FUZZ_SECONDS ?= 60
FB         := build-fuzz
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,$(FB)/%,$(FUZZ_SRCS))
FUZZ_FLAGS := -O1 -g -std=gnu11 -D_GNU_SOURCE -DST_VERSION=\"$(VERSION)\" -I. -Ibpf -I$(B) \
	      $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -Wall -Wextra -Werror \
	      -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJS  := $(patsubst %.c,$(FB)/obj/%.o,$(LIB_SRCS)) $(FB)/obj/$(B)/proto/profile.pb-c.o

$(FB)/obj/%.o: %.c $(SKELS) $(PROTO_GEN) $(HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FB)/%: tests/fuzz/%.c $(FUZZ_OBJS) $(wildcard tests/fuzz/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) -o $@ $(LDLIBS)

# tests/fuzz/jvm_seed.c: fuzz_jvm's seeds from a running JVM (by hand, as root)
$(B)/tests/jvm_seed: tests/fuzz/jvm_seed.c $(LIB) tests/fuzz/jvm_image.h
	@mkdir -p $(@D)
	$(UCC) $(CFLAGS) $< $(LIB) -o $@ $(LDLIBS)

fuzz: $(FUZZ_BINS)
	@tests/fuzz/run.sh fuzz $(FUZZ_SECONDS) $(FUZZ_BINS)

fuzz-regress: $(FUZZ_BINS)
	@tests/fuzz/run.sh regress 0 $(FUZZ_BINS)

# everything `make test` builds, without running anything: `make -j N
# build-tests` first builds it N jobs at once (.ci/run), where the suite's
# own recipes then find it made (the tests themselves run one at a time;
# the rule is here, below the variables it lists)
build-tests: all $(UNIT_BINS) $(UNIT_FIXTURES) $(WORKLOADS) $(WORKLOAD_EXTRA) $(FUZZ_BINS)

# deps: what building and running need (`make demo`); test-deps: that and
# everything the tests, fuzzing and benchmarks use (`make test`, .ci/run)
deps:
	@scripts/deps.sh build

test-deps:
	@scripts/deps.sh test

demo: deps
	$(MAKE) all $(B)/workloads/demo
	@scripts/demo.sh

bench: all $(WORKLOADS) $(B)/workloads/java/stamp
	@bench/run.sh

# The integration suite RUNS times (LOAD=1: the other CPUs kept busy), with
# pass counts and the spread of what each test measures (not part of test);
# T="word ..." runs only the tests whose names contain one of the words.
RUNS ?= 20
spread: all $(WORKLOADS) $(WORKLOAD_EXTRA)
	@$(if $(SAN_FLAGS),rm -rf $(SAN_LOGS) && mkdir -p $(SAN_LOGS) &&) \
		$(RUN_ENV) bench/spread.py -n $(RUNS) $(if $(LOAD),--load) $(or $(T),test_)

# 10 minutes system-wide with processes coming and going, then 10 minutes
# of 300 new processes a second, with the daemon's own RSS slope (not part
# of test; SOAK_SECONDS=0 skips the first, SOAK_CHURN_SECONDS sets the
# second's length, SOAK_CHURN its rate: bench/soak.sh)
soak: all $(WORKLOADS)
	@bench/soak.sh

# `make install DESTDIR=... PREFIX=... BINDIR=... SBINDIR=...`: the daemon in
# sbin (it needs root or capabilities), the report tool in bin, the man
# pages, the systemd unit (ExecStart naming SBINDIR) and bash completion;
# `make uninstall` with the same variables removes exactly those files.
BINDIR   ?= $(PREFIX)/bin
SBINDIR  ?= $(PREFIX)/sbin
MANDIR   ?= $(PREFIX)/share/man
UNITDIR  ?= $(PREFIX)/lib/systemd/system
COMPDIR  ?= $(PREFIX)/share/bash-completion/completions
INSTALLED := $(SBINDIR)/stacktreed $(BINDIR)/stacktree $(MANDIR)/man8/stacktreed.8 \
	     $(MANDIR)/man1/stacktree.1 $(UNITDIR)/stacktreed.service \
	     $(COMPDIR)/stacktreed $(COMPDIR)/stacktree

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(UNITDIR) $(DESTDIR)$(COMPDIR)
	install -m 0755 $(B)/stacktreed $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(B)/stacktree $(DESTDIR)$(BINDIR)/
	install -m 0644 man/stacktreed.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 man/stacktree.1 $(DESTDIR)$(MANDIR)/man1/
	sed 's|@SBINDIR@|$(SBINDIR)|g' dist/stacktreed.service > $(DESTDIR)$(UNITDIR)/stacktreed.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/stacktreed.service
	install -m 0644 dist/stacktreed.bash-completion $(DESTDIR)$(COMPDIR)/stacktreed
	ln -sf stacktreed $(DESTDIR)$(COMPDIR)/stacktree

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

clean:
	rm -rf build build-san $(FB)
