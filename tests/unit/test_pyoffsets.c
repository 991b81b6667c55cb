/* test_pyoffsets.c - the CPython layouts of user/collect/runtimes/python/pyoffsets.c
 * against each interpreter's own DWARF: 3.11 against python3.11-dbg (found
 * by the build id of /usr/bin/python3.11), 3.10, 3.12 and 3.13 against
 * pyenv's libpython3.1x.so.1.0 (built with -g); the str state bits pycode.c reads;
 * and the symbols and version that user/collect/runtimes/python/pyproc.c finds in those
 * binaries. Each version is skipped when its file is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "binsym/elf.h"
#include "user/collect/runtimes/python/pycode.h"
#include "user/collect/runtimes/python/pyoffsets.h"
#include "user/collect/runtimes/python/pyproc.h"

#define PY311 "/usr/bin/python3.11"
#define PY310 "/root/.pyenv/versions/3.10.13/lib/libpython3.10.so.1.0"
#define PY312 "/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0"
#define PY313 "/root/.pyenv/versions/3.13.0/lib/libpython3.13.so.1.0"

struct dbg {
	int fd;
	Dwarf *dw;
};

/* A typedef or struct named name, as its struct DIE. */
static int find_type(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			do {
				int tag = dwarf_tag(&child);
				const char *n = dwarf_diename(&child);
				Dwarf_Die t = child;

				if (!n || strcmp(n, name) ||
				    (tag != DW_TAG_typedef && tag != DW_TAG_structure_type))
					continue;
				while (dwarf_tag(&t) == DW_TAG_typedef) {
					Dwarf_Attribute a;

					if (!dwarf_formref_die(dwarf_attr(&t, DW_AT_type, &a), &t))
						break;
				}
				if (dwarf_tag(&t) == DW_TAG_structure_type && dwarf_hasattr(&t, DW_AT_byte_size)) {
					*out = t;
					return 0;
				}
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	return -1;
}

/* Offset of dotted member path in struct type s, or -1; *bit (if not
 * NULL): the last member's DW_AT_data_bit_offset within its struct, -1
 * when it is not a bit field. */
static long member_off(Dwarf_Die s, const char *path, long *bit)
{
	char buf[128], *save = NULL, *part;
	long total = 0, sub = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
		Dwarf_Die m;
		bool found = false;

		while (dwarf_tag(&s) == DW_TAG_typedef) {
			Dwarf_Attribute a;

			if (!dwarf_formref_die(dwarf_attr(&s, DW_AT_type, &a), &s))
				return -1;
		}
		if (dwarf_child(&s, &m) != 0)
			return -1;
		do {
			Dwarf_Attribute a;
			Dwarf_Word loc = 0, bits;

			if (dwarf_tag(&m) != DW_TAG_member || !dwarf_diename(&m) ||
			    strcmp(dwarf_diename(&m), part))
				continue;
			sub = -1;
			if (dwarf_hasattr(&m, DW_AT_data_bit_offset)) {
				if (dwarf_formudata(dwarf_attr(&m, DW_AT_data_bit_offset, &a), &bits))
					return -1;
				sub = (long)bits;
			} else if (dwarf_formudata(dwarf_attr(&m, DW_AT_data_member_location, &a),
						   &loc)) {
				return -1;
			}
			total += (long)loc;
			if (!dwarf_formref_die(dwarf_attr(&m, DW_AT_type, &a), &s))
				return -1;
			found = true;
			break;
		} while (dwarf_siblingof(&m, &m) == 0);
		if (!found)
			return -1;
	}
	if (bit)
		*bit = sub;
	return total;
}

static long off_of(Dwarf *dw, const char *type, const char *path)
{
	Dwarf_Die t;

	if (find_type(dw, type, &t))
		fail_msg("type %s not in the DWARF", type);
	return member_off(t, path, NULL);
}

/* The bit position of bit field `path` in the word its struct starts. */
static long bit_of(Dwarf *dw, const char *type, const char *path)
{
	Dwarf_Die t;
	long bit = -1;

	if (find_type(dw, type, &t))
		fail_msg("type %s not in the DWARF", type);
	if (member_off(t, path, &bit) < 0)
		return -1;
	return bit;
}

/* The value of enumerator name (an enumeration at a unit's top level), or
 * -1 when there is none. */
static long enum_value(Dwarf *dw, const char *name)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child, e;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			do {
				if (dwarf_tag(&child) != DW_TAG_enumeration_type ||
				    dwarf_child(&child, &e) != 0)
					continue;
				do {
					Dwarf_Attribute a;
					Dwarf_Sword v;

					if (dwarf_tag(&e) == DW_TAG_enumerator && dwarf_diename(&e) &&
					    !strcmp(dwarf_diename(&e), name) &&
					    !dwarf_formsdata(dwarf_attr(&e, DW_AT_const_value, &a), &v))
						return (long)v;
				} while (dwarf_siblingof(&e, &e) == 0);
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	return -1;
}

static long size_of(Dwarf *dw, const char *type)
{
	Dwarf_Die t;

	if (find_type(dw, type, &t))
		fail_msg("type %s not in the DWARF", type);
	return (long)dwarf_bytesize(&t);
}

static int open_dwarf(const char *path, struct dbg *d)
{
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		return -1;
	d->dw = dwarf_begin(d->fd, DWARF_C_READ);
	if (!d->dw) {
		close(d->fd);
		return -1;
	}
	return 0;
}

static void close_dwarf(struct dbg *d)
{
	dwarf_end(d->dw);
	close(d->fd);
}

/* python3.11-dbg's file for /usr/bin/python3.11, by build id. */
static int open_dbg(struct dbg *d)
{
	char hex[ST_BUILD_ID_HEX_MAX], path[256];
	struct st_elf *e = NULL;

	if (st_elf__open(PY311, &e))
		return -1;
	if (st_elf__build_id(e, hex)) {
		st_elf__free(e);
		return -1;
	}
	st_elf__free(e);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	return open_dwarf(path, d);
}

/* 3.11+'s thread state and _PyInterpreterFrame, and the code object
 * fields 3.10 does not have. */
static void check_311_on(Dwarf *dw, const struct st_py_layout *l)
{
	/* 3.13 renamed two frame fields (f_executable: a code object in
	 * every frame the walker names; instr_ptr: the instruction running
	 * where prev_instr was the last one started, the same unit) */
	bool v313 = l->version >= 0x030d;
	Dwarf_Die t;

	assert_int_equal(l->frame_lasti, ST_PY_NO_OFF);
	assert_false(l->tstate_pthread);
	assert_int_equal(l->interp_threads_head, off_of(dw, "PyInterpreterState", "threads.head"));
	assert_int_equal(l->tstate_native_tid, off_of(dw, "PyThreadState", "native_thread_id"));
	if (l->cframe_current_frame != ST_PY_NO_OFF) {
		assert_int_equal(l->tstate_cframe, off_of(dw, "PyThreadState", "cframe"));
		assert_int_equal(l->cframe_current_frame, off_of(dw, "_PyCFrame", "current_frame"));
	} else {
		/* 3.13: the thread state's own current_frame, no _PyCFrame */
		assert_int_equal(l->tstate_cframe, off_of(dw, "PyThreadState", "current_frame"));
		assert_int_equal(off_of(dw, "PyThreadState", "cframe"), -1);
		assert_int_not_equal(find_type(dw, "_PyCFrame", &t), 0);
	}
	assert_int_equal(l->frame_code,
			 off_of(dw, "_PyInterpreterFrame", v313 ? "f_executable" : "f_code"));
	assert_int_equal(l->frame_previous, off_of(dw, "_PyInterpreterFrame", "previous"));
	assert_int_equal(l->frame_prev_instr,
			 off_of(dw, "_PyInterpreterFrame", v313 ? "instr_ptr" : "prev_instr"));
	/* the end of an evaluation loop's run: is_entry (3.11), or the shim
	 * frames' owner value (3.12: the enumerator, and no is_entry) */
	if (l->frame_is_entry != ST_PY_NO_OFF)
		assert_int_equal(l->frame_is_entry, off_of(dw, "_PyInterpreterFrame", "is_entry"));
	else
		assert_int_equal(off_of(dw, "_PyInterpreterFrame", "is_entry"), -1);
	assert_int_equal(l->frame_owner, off_of(dw, "_PyInterpreterFrame", "owner"));
	if (l->owner_cstack != ST_PY_NO_OFF)
		assert_int_equal(l->owner_cstack, enum_value(dw, "FRAME_OWNED_BY_CSTACK"));
	else
		assert_int_equal(enum_value(dw, "FRAME_OWNED_BY_CSTACK"), -1);
	assert_true(l->frame_is_entry != ST_PY_NO_OFF || l->owner_cstack != ST_PY_NO_OFF);
	assert_int_equal(l->code_adaptive, off_of(dw, "PyCodeObject", "co_code_adaptive"));
	assert_int_equal(l->code_qualname, off_of(dw, "PyCodeObject", "co_qualname"));
	assert_int_equal(l->code_consts + 16, off_of(dw, "PyCodeObject", "co_exceptiontable"));
	/* the walker reads a frame's header in one ST_PY_FRAME_BUF read */
	assert_true(l->frame_owner < ST_PY_FRAME_BUF && l->frame_prev_instr + 8 <= ST_PY_FRAME_BUF &&
		    l->frame_code + 8 <= ST_PY_FRAME_BUF && l->frame_previous + 8 <= ST_PY_FRAME_BUF);
	assert_true(l->frame_is_entry == ST_PY_NO_OFF || l->frame_is_entry < ST_PY_FRAME_BUF);
	assert_true(ST_PY_CODE_BUF <= l->code_adaptive);
}

/* 3.10's thread state and frames (PyFrameObject, one evaluation call
 * each; no _PyInterpreterFrame) and the code object fields it lacks. */
static void check_310(Dwarf *dw, const struct st_py_layout *l)
{
	Dwarf_Die t;

	assert_int_equal(l->interp_threads_head, off_of(dw, "PyInterpreterState", "tstate_head"));
	assert_int_equal(l->tstate_native_tid, off_of(dw, "PyThreadState", "thread_id"));
	assert_int_equal(off_of(dw, "PyThreadState", "native_thread_id"), -1);
	assert_true(l->tstate_pthread);
	assert_int_equal(l->cframe_current_frame, ST_PY_NO_OFF);
	assert_int_equal(l->tstate_cframe, off_of(dw, "PyThreadState", "frame"));
	assert_int_equal(l->frame_code, off_of(dw, "PyFrameObject", "f_code"));
	assert_int_equal(l->frame_previous, off_of(dw, "PyFrameObject", "f_back"));
	assert_int_equal(l->frame_lasti, off_of(dw, "PyFrameObject", "f_lasti"));
	/* an int: the next field 4 bytes on */
	assert_int_equal(l->frame_lasti + 4, off_of(dw, "PyFrameObject", "f_lineno"));
	assert_int_not_equal(find_type(dw, "_PyInterpreterFrame", &t), 0);
	assert_true(l->frame_prev_instr == ST_PY_NO_OFF && l->frame_is_entry == ST_PY_NO_OFF &&
		    l->frame_owner == ST_PY_NO_OFF && l->owner_cstack == ST_PY_NO_OFF &&
		    l->code_adaptive == ST_PY_NO_OFF);
	assert_int_equal(off_of(dw, "PyCodeObject", "co_code_adaptive"), -1);
	assert_int_equal(off_of(dw, "PyCodeObject", "co_qualname"), -1);
	assert_int_equal(l->code_qualname, off_of(dw, "PyCodeObject", "co_name"));
	assert_int_equal(l->code_consts + 16, off_of(dw, "PyCodeObject", "co_varnames"));
	assert_true(l->frame_lasti + 4 <= ST_PY_FRAME_BUF && l->frame_code + 8 <= ST_PY_FRAME_BUF &&
		    l->frame_previous + 8 <= ST_PY_FRAME_BUF);
}

/* Every field of layout l against the DWARF of its interpreter. */
static void check_layout(Dwarf *dw, const struct st_py_layout *l)
{
	assert_int_equal(l->runtime_interp_head, off_of(dw, "_PyRuntimeState", "interpreters.head"));
	assert_int_equal(l->tstate_next, off_of(dw, "PyThreadState", "next"));
	if (l->version == 0x030a)
		check_310(dw, l);
	else
		check_311_on(dw, l);
	assert_int_equal(l->code_filename, off_of(dw, "PyCodeObject", "co_filename"));
	assert_int_equal(l->code_firstlineno, off_of(dw, "PyCodeObject", "co_firstlineno"));
	assert_int_equal(l->code_linetable, off_of(dw, "PyCodeObject", "co_linetable"));
	assert_int_equal(l->code_consts, off_of(dw, "PyCodeObject", "co_consts"));
	assert_int_equal(l->code_consts + 8, off_of(dw, "PyCodeObject", "co_names"));
	assert_int_equal(l->object_type, off_of(dw, "PyObject", "ob_type"));
	assert_int_equal(l->unicode_length, off_of(dw, "PyASCIIObject", "length"));
	assert_int_equal(l->unicode_state, off_of(dw, "PyASCIIObject", "state"));
	/* pycode.c's bit positions in the state word (one set for all
	 * versions: a version that moves them needs layout fields) */
	assert_int_equal(ST_PY_STATE_KIND, bit_of(dw, "PyASCIIObject", "state.kind"));
	assert_int_equal(ST_PY_STATE_COMPACT, bit_of(dw, "PyASCIIObject", "state.compact"));
	assert_int_equal(ST_PY_STATE_ASCII, bit_of(dw, "PyASCIIObject", "state.ascii"));
	assert_int_equal(l->unicode_ascii_data, size_of(dw, "PyASCIIObject"));
	assert_int_equal(l->unicode_compact_data, size_of(dw, "PyCompactUnicodeObject"));
	assert_int_equal(l->bytes_size, off_of(dw, "PyVarObject", "ob_size"));
	assert_int_equal(l->bytes_data, off_of(dw, "PyBytesObject", "ob_sval"));
	/* a code object's type and identity in one ST_PY_CODE_BUF read,
	 * within the smallest code object (no code units) */
	assert_true(l->object_type + 8 <= ST_PY_CODE_BUF && l->code_filename + 8 <= ST_PY_CODE_BUF &&
		    l->code_qualname + 8 <= ST_PY_CODE_BUF && l->code_linetable + 8 <= ST_PY_CODE_BUF &&
		    l->code_consts + 24 <= ST_PY_CODE_BUF && l->code_firstlineno + 4 <= ST_PY_CODE_BUF);
}

static void test_layout_311_matches_dwarf(void **state)
{
	const struct st_py_layout *l = st_py_layout__find(0x030b);
	struct dbg d;

	(void)state;
	assert_non_null(l);
	if (open_dbg(&d)) {
		skip();
		return;
	}
	check_layout(d.dw, l);
	close_dwarf(&d);
}

static void layout_matches_lib(__u16 version, const char *lib)
{
	const struct st_py_layout *l = st_py_layout__find(version);
	struct dbg d;

	assert_non_null(l);
	if (open_dwarf(lib, &d)) {
		skip();
		return;
	}
	check_layout(d.dw, l);
	close_dwarf(&d);
}

static void test_layout_310_matches_dwarf(void **state)
{
	(void)state;
	layout_matches_lib(0x030a, PY310);
}

static void test_layout_312_matches_dwarf(void **state)
{
	(void)state;
	layout_matches_lib(0x030c, PY312);
}

static void test_layout_313_matches_dwarf(void **state)
{
	(void)state;
	layout_matches_lib(0x030d, PY313);
}

static void test_elf_symbols_and_version(void **state)
{
	struct st_py_elf pe;
	char v[16];

	(void)state;
	if (access(PY311, R_OK)) {
		skip();
		return;
	}
	assert_int_equal(st_py_elf__find(PY311, PY311, &pe), 0);
	assert_true(pe.runtime != 0);
	assert_true(pe.eval != 0 && pe.eval_size > 1000);
	assert_true(pe.code_type != 0);
	/* Debian's PGO build has a cold part, named in its debug file only */
	if (!access("/usr/lib/debug/.build-id", F_OK))
		assert_true(pe.cold != 0 && pe.cold_size > 0);
	assert_int_equal(pe.version >> 16, 0x030b);
	assert_string_equal(st_py_version__str(pe.version, v, sizeof(v)), "3.11");
	/* not an interpreter */
	assert_int_equal(st_py_elf__find("/bin/true", "/bin/true", &pe), -ENOENT);
}

/* pyenv's 3.12 and 3.13: the symbols are libpython's (the executable
 * exports none), Py_Version says the version and it has a layout. */
static void lib_symbols_and_version(const char *lib, __u16 version, const char *name)
{
	struct st_py_elf pe;
	char v[16];

	if (access(lib, R_OK)) {
		skip();
		return;
	}
	assert_int_equal(st_py_elf__find(lib, lib, &pe), 0);
	assert_true(pe.runtime != 0 && pe.code_type != 0);
	assert_true(pe.eval != 0 && pe.eval_size > 1000);
	assert_int_equal(pe.version >> 16, version);
	assert_string_equal(st_py_version__str(pe.version, v, sizeof(v)), name);
	assert_non_null(st_py_layout__find((__u16)(pe.version >> 16)));
}

static void test_elf_symbols_and_version_310(void **state)
{
	(void)state;
	lib_symbols_and_version(PY310, 0x030a, "3.10");
}

static void test_elf_symbols_and_version_312(void **state)
{
	(void)state;
	lib_symbols_and_version(PY312, 0x030c, "3.12");
}

static void test_elf_symbols_and_version_313(void **state)
{
	(void)state;
	lib_symbols_and_version(PY313, 0x030d, "3.13");
}

static void test_candidates_and_unknown_versions(void **state)
{
	char v[16];

	(void)state;
	assert_true(st_py_elf__candidate("/usr/bin/python3.11"));
	assert_true(st_py_elf__candidate("/x/lib/libpython3.11.so.1.0"));
	assert_false(st_py_elf__candidate("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_non_null(st_py_layout__find(0x030b));
	assert_non_null(st_py_layout__find(0x030c));
	assert_non_null(st_py_layout__find(0x030d));
	assert_non_null(st_py_layout__find(0x030a));
	assert_null(st_py_layout__find(0x0309));
	assert_null(st_py_layout__find(0x030e));
	assert_null(st_py_layout__find(0x0200));
	/* every layout's thread-state fields are in the walker's one read
	 * of a cached thread state (bpf/pywalk.h, st_py_tstate_is()) */
	for (__u16 v = 0x030a; v <= 0x030d; v++) {
		const struct st_py_layout *l = st_py_layout__find(v);

		assert_true(l->tstate_native_tid + 8 <= ST_PY_TSTATE_BUF &&
			    l->tstate_cframe + 8 <= ST_PY_TSTATE_BUF);
	}
	assert_string_equal(st_py_version__str(0x030d00f0, v, sizeof(v)), "3.13");
	assert_string_equal(st_py_version__str(0x030a0df0, v, sizeof(v)), "3.10");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_310_matches_dwarf),
		cmocka_unit_test(test_layout_311_matches_dwarf),
		cmocka_unit_test(test_layout_312_matches_dwarf),
		cmocka_unit_test(test_layout_313_matches_dwarf),
		cmocka_unit_test(test_elf_symbols_and_version),
		cmocka_unit_test(test_elf_symbols_and_version_310),
		cmocka_unit_test(test_elf_symbols_and_version_312),
		cmocka_unit_test(test_elf_symbols_and_version_313),
		cmocka_unit_test(test_candidates_and_unknown_versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
