# Workloads that need more than one source file (included by the Makefile).
$(B)/workloads/libwork.so: tests/workloads/lib/libwork.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -fPIC -shared $< -o $@

$(B)/workloads/uselib: tests/workloads/uselib.c tests/workloads/workload.h $(B)/workloads/libwork.so
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) $< -o $@ -L$(B)/workloads -lwork -Wl,-rpath,'$$ORIGIN'

WORKLOAD_EXTRA += $(B)/workloads/libwork.so

# Unresolved frames (issue 11, item 7): a library stripped of its symbol
# table (.dynsym stays: only its exported function keeps a name).
STRIP ?= strip
$(B)/workloads/libstripped.so: tests/workloads/lib/libstripped.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -fPIC -shared $< -o $@
	$(STRIP) --strip-all $@

$(B)/workloads/stripped: tests/workloads/stripped.c tests/workloads/workload.h \
			 $(B)/workloads/libstripped.so
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) $< -o $@ -L$(B)/workloads -lstripped -Wl,-rpath,'$$ORIGIN'

WORKLOAD_EXTRA += $(B)/workloads/libstripped.so

# The BPF program includes the DWARF unwinder (bpf/unwind.h, issue 4).
$(B)/bpf/sample.bpf.o: bpf/unwind.h bpf/unwind_step.h

# DWARF unwinding (issue 4): nofp and its libraries are built WITHOUT frame
# pointers, as distributions build most code; qsort_nocfi is qsort.c with
# frame pointers but no CFI at all (--unwind auto mixes both).
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -D_GNU_SOURCE -Wall -Wextra -Werror
$(B)/workloads/libnofp.so: tests/workloads/lib/nofplib.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -fPIC -shared $< -o $@

$(B)/workloads/libnofpdl.so: tests/workloads/lib/nofpdl.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -fPIC -shared $< -o $@

$(B)/workloads/nofp: tests/workloads/nofp.c tests/workloads/workload.h \
		     $(B)/workloads/libnofp.so $(B)/workloads/libnofpdl.so
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) $< -o $@ -L$(B)/workloads -lnofp -ldl -Wl,-rpath,'$$ORIGIN'

$(B)/workloads/qsort_nocfi: tests/workloads/qsort.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables $< -o $@

WORKLOAD_EXTRA += $(B)/workloads/libnofp.so $(B)/workloads/libnofpdl.so \
		  $(B)/workloads/qsort_nocfi

# Many executable mappings (issue 23, item 5): manylibs dlopen()s N tiny
# libraries, one object linked MANYLIBS_N times with build ids of their own
# (so that each is a module of its own), all without frame pointers.
MANYLIBS_N ?= 400
$(B)/workloads/manylibs.d/stamp: tests/workloads/lib/manylib.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -fPIC -c $< -o $(@D)/manylib.o
	@echo "linking $(MANYLIBS_N) libraries into $(@D)"
	@for i in $$(seq 0 $$(($(MANYLIBS_N) - 1))); do \
		$(CC) -shared $(@D)/manylib.o -o $(@D)/libmany$$i.so \
			-Wl,--build-id=0x$$(printf '%040x' $$((i + 1))) || exit 1; \
	done
	touch $@

$(B)/workloads/manylibs: tests/workloads/manylibs.c tests/workloads/workload.h \
			 $(B)/workloads/manylibs.d/stamp
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) $< -o $@ -ldl

# Any ELF layout (issue 20): layout.c linked by GNU ld and by lld, the same
# compiler and flags (no frame pointers) for both.
LAYOUT_CFLAGS := -O2 -g -fomit-frame-pointer -D_GNU_SOURCE -Wall -Wextra -Werror
$(B)/workloads/layout: tests/workloads/layout.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CLANG) $(LAYOUT_CFLAGS) -fuse-ld=bfd $< -o $@

$(B)/workloads/layout_lld: tests/workloads/layout.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CLANG) $(LAYOUT_CFLAGS) -fuse-ld=lld $< -o $@

WORKLOAD_EXTRA += $(B)/workloads/layout_lld

# A fake interpreter of a version without a layout (issue 19): reported once
# by name, profiled natively.
$(B)/workloads/fakepy314: tests/workloads/fakepy.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -DFAKE_VERSION=0x030e00f0 $< -o $@

WORKLOAD_EXTRA += $(B)/workloads/fakepy314

# Java (issue 32): tests/integration/test_java.py runs the unit tests of the
# VMStructs reader, of the HotSpot frame rule and of the code blob step on
# live JVMs (their test_live_jvm, test_live).
WORKLOAD_EXTRA += $(B)/tests/test_vmstructs $(B)/tests/test_hotspot_step $(B)/tests/test_hsblob

# The Java accuracy workload (issue 32, item 4; tests/workloads/java/):
# Ledger (phases with their own CPU clock) and JfrFold (a JFR recording's
# samples as folded stacks), built with JDK 17's javac for
# tests/integration/test_java_accuracy.py and `make bench`; without that
# javac they are not built, said once, and those tests skip.
JAVAC17 ?= /usr/lib/jvm/java-17-openjdk-amd64/bin/javac
JAVA_WL_SRCS := $(wildcard tests/workloads/java/*.java)
$(B)/workloads/java/stamp: $(JAVA_WL_SRCS)
	@mkdir -p $(@D)
	@if [ -x "$(JAVAC17)" ]; then \
		echo "$(JAVAC17) -> $(@D)" && \
		$(JAVAC17) --release 17 -g -d $(@D) $(JAVA_WL_SRCS) && touch $@; \
	else \
		echo "no JDK 17 javac ($(JAVAC17)): the Java accuracy workload is not built;" \
		     "test_java_accuracy skips (Debian: apt-get install openjdk-17-jdk-headless)"; \
	fi

WORKLOAD_EXTRA += $(B)/workloads/java/stamp

# Deep stacks (issue 35, item 2): a C recursion of any depth, -O2 with
# frame pointers and without them (DWARF).
$(B)/workloads/deeprec_o2: tests/workloads/deeprec.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-omit-frame-pointer -D_GNU_SOURCE -Wall -Wextra -Werror $< -o $@

$(B)/workloads/deeprec_o2_nofp: tests/workloads/deeprec.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) $< -o $@

WORKLOAD_EXTRA += $(B)/workloads/deeprec_o2 $(B)/workloads/deeprec_o2_nofp

# ld.so's lazy-binding resolver made hot (issue 35, item 5): lazybind
# dlopen()s liblazycall.so, which calls the 4096 functions of liblazyfns.so
# through its PLT, linked -z lazy: every call of a fresh dlopen() is bound
# by _dl_runtime_resolve (an rbx-based CFA) and _dl_fixup.
$(B)/workloads/liblazyfns.so: tests/workloads/lib/lazyfns.c tests/workloads/lib/lazyfns.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -fPIC -shared $< -o $@

$(B)/workloads/liblazycall.so: tests/workloads/lib/lazycall.c tests/workloads/lib/lazyfns.h \
			       $(B)/workloads/liblazyfns.so
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -fPIC -shared $< -o $@ -L$(B)/workloads -llazyfns \
		-Wl,-z,lazy -Wl,-rpath,'$$ORIGIN'

$(B)/workloads/lazybind: tests/workloads/lazybind.c tests/workloads/workload.h \
			 $(B)/workloads/liblazycall.so
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) $< -o $@ -ldl

WORKLOAD_EXTRA += $(B)/workloads/liblazyfns.so $(B)/workloads/liblazycall.so

# A 32-bit process (ia32 compat): --unwind fp walks it with the kernel's
# walk of 4-byte frames (bpf/walk.bpf.h, fp_stack_compat()). No libc: clang
# links it alone, without 32-bit development files.
$(B)/workloads/ia32: tests/workloads/ia32/ia32.c
	@mkdir -p $(@D)
	$(CLANG) -m32 -O1 -g -fno-omit-frame-pointer -fno-inline -nostdlib -static -fno-pie \
		$< -o $@

WORKLOAD_EXTRA += $(B)/workloads/ia32
