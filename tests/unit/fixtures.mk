# fixtures.mk - ELF files the unit tests read (included by the Makefile).
# Function addresses and sizes come from nm, build ids from readelf.
OBJCOPY ?= objcopy
NM      ?= nm
READELF ?= readelf

FX_DIR    := $(B)/fixtures
FX_SRC    := tests/unit/fixtures
FX_MK     := tests/unit/fixtures.mk
FX_CFLAGS := -O1 -g -fno-inline -fno-optimize-sibling-calls -fno-reorder-functions \
	     -fno-toplevel-reorder -falign-functions=1 -Wall -Wextra -Werror

UNIT_FIXTURES := $(addprefix $(FX_DIR)/,fx_pie fx_pie.nm libfx.so libfx.so.nm \
	fx_bid fx_bid.debug fx_bid.nm fx_bid.buildid fx_dl fx_dl.debug fx_dl.nm)

# Data fixtures (test_datasym): one source with globals and frame
# variables, as a PIE with and without -g (and without a build id), a shared library (gcc, and clang
# for an rbp-based DW_AT_frame_base), and that library stripped with its
# debug file next to it (.gnu_debuglink; same addresses as libfxdata.so).
FX_DATA := $(addprefix $(FX_DIR)/,fx_data fx_data.nm fx_data_nog fx_data_nog.nm \
	fx_data_nobid fx_data_nobid.nm libfxdata.so \
	libfxdata.so.nm libfxdata_clang.so libfxdata_strip.so libfxdata_strip.so.debug)
UNIT_FIXTURES += $(FX_DATA)

# Two different programs claiming one build id (issue 12: a user's binary
# carrying another's build id must not lend it its symbols).
FX_SAME_ID := 0x5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a
FX_SAME := $(addprefix $(FX_DIR)/,fx_same_a fx_same_a.nm fx_same_b fx_same_b.nm)
UNIT_FIXTURES += $(FX_SAME)

$(FX_DIR)/fx_same_a: $(FX_SRC)/fx_main.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIE -pie -Wl,--build-id=$(FX_SAME_ID) $< -o $@

$(FX_DIR)/fx_same_b: $(FX_SRC)/fx_data.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIE -pie -Wl,--build-id=$(FX_SAME_ID) $< -o $@

$(FX_DIR)/fx_same_a.nm $(FX_DIR)/fx_same_b.nm: $(FX_DIR)/%.nm: $(FX_DIR)/%
	$(NM) -S --defined-only $< > $@

# Stripped programs (test_entry_names): a PIE (fx_pie without .symtab)
# and a position-dependent one, whose _start and main are found from the
# entry code and .eh_frame; the unstripped files' nm gives the truth.
FX_ENTRY := $(addprefix $(FX_DIR)/,fx_pie_strip fx_nopie fx_nopie.nm fx_nopie_strip)
UNIT_FIXTURES += $(FX_ENTRY)

$(FX_DIR)/fx_nopie: $(FX_SRC)/fx_main.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fno-pie -no-pie $< -o $@

$(FX_DIR)/fx_nopie.nm: $(FX_DIR)/fx_nopie
	$(NM) -S --defined-only $< > $@

$(FX_DIR)/fx_pie_strip $(FX_DIR)/fx_nopie_strip $(FX_DIR)/fx_spie_strip: $(FX_DIR)/%_strip: $(FX_DIR)/%
	$(OBJCOPY) --strip-all $< $@

# A static-pie program (ET_DYN with neither PT_INTERP nor DT_NEEDED, as
# the dynamic loader itself is): the kernel enters it at _start.
FX_ENTRY += $(addprefix $(FX_DIR)/,fx_spie fx_spie.nm fx_spie_strip)
UNIT_FIXTURES += $(addprefix $(FX_DIR)/,fx_spie fx_spie.nm fx_spie_strip)

$(FX_DIR)/fx_spie: $(FX_SRC)/fx_main.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIE -static-pie $< -o $@

$(FX_DIR)/fx_spie.nm: $(FX_DIR)/fx_spie
	$(NM) -S --defined-only $< > $@

# Layouts of lld (test_loadmap): fx_lld, a PIE whose executable segment
# starts in the file page the read-only one ends in (file offset and
# address differ by a page); fx_lld2x, a second executable segment
# (section farcode at 0x400000) sharing a file page with .text.
FX_LLD_CFLAGS := -O1 -g -fno-inline -fno-optimize-sibling-calls -Wall -Wextra -Werror \
		 -fuse-ld=lld -fPIE -pie
FX_LAYOUT := $(addprefix $(FX_DIR)/,fx_lld fx_lld.nm fx_lld2x fx_lld2x.nm libfx_prelink.so \
	libfx_prelink.so.nm)
UNIT_FIXTURES += $(FX_LAYOUT)

$(FX_DIR)/fx_lld: $(FX_SRC)/fx_layout.c $(FX_MK)
	@mkdir -p $(@D)
	$(CLANG) $(FX_LLD_CFLAGS) $< -o $@

$(FX_DIR)/fx_lld2x: $(FX_SRC)/fx_layout.c $(FX_MK)
	@mkdir -p $(@D)
	$(CLANG) $(FX_LLD_CFLAGS) -Wl,--section-start=farcode=0x400000 $< -o $@

# As prelink lays a library out: every address 0x3000000000 up (above 4 GiB).
$(FX_DIR)/libfx_prelink.so: $(FX_SRC)/fx_lib.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIC -shared -Wl,-Ttext-segment=0x3000000000 $< -o $@

$(FX_DIR)/fx_lld.nm $(FX_DIR)/fx_lld2x.nm $(FX_DIR)/libfx_prelink.so.nm: $(FX_DIR)/%.nm: $(FX_DIR)/%
	$(NM) -S --defined-only $< > $@

# Symbols bounded by the CFI (test_symtab): fx_guess, a size-0 assembly
# symbol before static functions whose symbols are discarded; its nm from
# before (fx_guess.full: the static functions' addresses).
FX_GUESS := $(addprefix $(FX_DIR)/,fx_guess fx_guess.nm)
UNIT_FIXTURES += $(FX_GUESS)

$(FX_DIR)/fx_guess.full: $(FX_SRC)/fx_guess.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIE -pie $< -o $@

$(FX_DIR)/fx_guess: $(FX_DIR)/fx_guess.full
	$(OBJCOPY) --discard-all $< $@

$(FX_DIR)/fx_guess.nm: $(FX_DIR)/fx_guess.full
	$(NM) -S --defined-only $< > $@

# The test binaries need them too when built one by one.
$(B)/tests/test_symbolizer $(B)/tests/test_procmaps $(B)/tests/test_datasym \
$(B)/tests/test_loadmap $(B)/tests/test_symtab $(B)/tests/test_unwind_modules \
$(B)/tests/test_unwinder: $(UNIT_FIXTURES)

# PIE executable and shared library, with .symtab. The library is linked at
# 0x10000 so that its ELF vaddrs differ from its file offsets.
$(FX_DIR)/fx_pie: $(FX_SRC)/fx_main.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIE -pie $< -o $@

$(FX_DIR)/libfx.so: $(FX_SRC)/fx_lib.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIC -shared -Wl,-Ttext-segment=0x10000 $< -o $@

# Stripped, debug file found by build id (no debuglink).
$(FX_DIR)/fx_bid.full: $(FX_SRC)/fx_main.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIE -pie -Wl,--build-id=sha1 $< -o $@

$(FX_DIR)/fx_bid: $(FX_DIR)/fx_bid.full
	$(OBJCOPY) --strip-all $< $@

$(FX_DIR)/fx_bid.buildid: $(FX_DIR)/fx_bid
	$(READELF) -n $< | sed -n 's/^ *Build ID: *//p' > $@.tmp && test -s $@.tmp && mv $@.tmp $@

# Stripped, debug file found by .gnu_debuglink (no build id).
$(FX_DIR)/fx_dl.full: $(FX_SRC)/fx_main.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIE -pie -Wl,--build-id=none $< -o $@

$(FX_DIR)/fx_dl: $(FX_DIR)/fx_dl.full $(FX_DIR)/fx_dl.debug
	cd $(FX_DIR) && $(OBJCOPY) --strip-all --add-gnu-debuglink=fx_dl.debug fx_dl.full fx_dl

$(FX_DIR)/%.debug: $(FX_DIR)/%.full
	$(OBJCOPY) --only-keep-debug $< $@

$(FX_DIR)/fx_pie.nm $(FX_DIR)/libfx.so.nm: $(FX_DIR)/%.nm: $(FX_DIR)/%
	$(NM) -S --defined-only $< > $@

$(FX_DIR)/fx_bid.nm $(FX_DIR)/fx_dl.nm: $(FX_DIR)/%.nm: $(FX_DIR)/%.full
	$(NM) -S --defined-only $< > $@

# ---- data fixtures -------------------------------------------------------
FX_DATA_SRC := $(FX_SRC)/fx_data.c

$(FX_DIR)/fx_data: $(FX_DATA_SRC) $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIE -pie $< -o $@

$(FX_DIR)/fx_data_nog: $(FX_DATA_SRC) $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(filter-out -g,$(FX_CFLAGS)) -g0 -fPIE -pie $< -o $@

$(FX_DIR)/fx_data_nobid: $(FX_DATA_SRC) $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(filter-out -g,$(FX_CFLAGS)) -g0 -fPIE -pie -Wl,--build-id=none $< -o $@

$(FX_DIR)/libfxdata.so: $(FX_DATA_SRC) $(FX_MK)
	@mkdir -p $(@D)
	$(CC) $(FX_CFLAGS) -fPIC -shared -Wl,-Ttext-segment=0x10000 $< -o $@

# clang with frame pointers: DW_AT_frame_base is DW_OP_reg6 (rbp)
$(FX_DIR)/libfxdata_clang.so: $(FX_DATA_SRC) $(FX_MK)
	@mkdir -p $(@D)
	$(CLANG) -O1 -g -fno-omit-frame-pointer -fno-inline -Wall -Wextra -Werror \
		-fPIC -shared $< -o $@

$(FX_DIR)/libfxdata_strip.so.debug: $(FX_DIR)/libfxdata.so
	$(OBJCOPY) --only-keep-debug $< $@

$(FX_DIR)/libfxdata_strip.so: $(FX_DIR)/libfxdata.so $(FX_DIR)/libfxdata_strip.so.debug
	cd $(FX_DIR) && $(OBJCOPY) --strip-all --add-gnu-debuglink=libfxdata_strip.so.debug \
		libfxdata.so libfxdata_strip.so

$(FX_DIR)/fx_data.nm $(FX_DIR)/fx_data_nog.nm $(FX_DIR)/fx_data_nobid.nm \
		$(FX_DIR)/libfxdata.so.nm: $(FX_DIR)/%.nm: $(FX_DIR)/%
	$(NM) -S --defined-only $< > $@

# test_unwind_tables links a gcc-built DRAP function (see fx_realign.c), -O2
# like the test itself, whatever compiler and sanitizers build the test.
$(FX_DIR)/fx_realign.o: $(FX_SRC)/fx_realign.c $(FX_MK)
	@mkdir -p $(@D)
	$(CC) -O2 -g -fPIE -Wall -Wextra -Werror -c $< -o $@

$(B)/tests/test_unwind_tables: $(FX_DIR)/fx_realign.o

# test_cfi_eval compiles the fixtures' CFI both ways
$(B)/tests/test_cfi_eval: $(UNIT_FIXTURES) | $(FX_DIR)/fx_realign.o

# Inlined frames and source lines (issue 11): a C++ program built -O2 -g,
# whose helpers (a namespaced template, a member function, a lambda) are
# inlined; test_srcinfo compares with eu-addr2line -i, test_inline.py
# profiles it. Frame pointers kept for the profiler's default unwinder.
CXX ?= g++
CLANGXX ?= clang++
FX_INLINE := $(addprefix $(FX_DIR)/,fx_inline fx_inline.nm)
UNIT_FIXTURES += $(FX_INLINE)

$(FX_DIR)/fx_inline: $(FX_SRC)/fx_inline.cpp $(FX_MK)
	@mkdir -p $(@D)
	$(CXX) -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror $< -o $@

$(FX_DIR)/fx_inline.nm: $(FX_DIR)/fx_inline
	$(NM) -S --defined-only $< > $@

# Inline frames' names (issue 21): every kind of C++ name inlined, by g++
# and by clang++; test_srcinfo compares with binutils' addr2line -C -f -i.
FX_NAMES := $(addprefix $(FX_DIR)/,fx_names fx_names.nm fx_names_clang fx_names_clang.nm)
UNIT_FIXTURES += $(FX_NAMES)

$(FX_DIR)/fx_names: $(FX_SRC)/fx_names.cpp $(FX_MK)
	@mkdir -p $(@D)
	$(CXX) -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror $< -o $@

$(FX_DIR)/fx_names_clang: $(FX_SRC)/fx_names.cpp $(FX_MK)
	@mkdir -p $(@D)
	$(CLANGXX) -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror $< -o $@

$(FX_DIR)/fx_names.nm $(FX_DIR)/fx_names_clang.nm: $(FX_DIR)/%.nm: $(FX_DIR)/%
	$(NM) -S --defined-only $< > $@

$(B)/tests/test_srcinfo: $(FX_INLINE) $(FX_NAMES) $(FX_DATA)
# test_inline.py profiles it
WORKLOAD_EXTRA += $(FX_DIR)/fx_inline
