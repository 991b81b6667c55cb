/* pyoffsets.c - the table of CPython structure layouts (see pyoffsets.h).
 *
 * Each entry is checked field by field against its interpreter's DWARF
 * (x86-64) by tests/unit/test_pyoffsets.c: 3.11 against Debian's
 * python3.11-dbg, 3.10, 3.12 and 3.13 against pyenv's libpython3.10.so.1.0
 * (3.10.13), libpython3.12.so.1.0 (3.12.1) and libpython3.13.so.1.0
 * (3.13.0). Another version gets an entry once it is checked the same way.
 * Fields a version does not have are ST_PY_NO_OFF; frame_lasti and
 * tstate_pthread are 3.10's alone (the others': ST_PY_NO_OFF and 0).
 */
#include <stdio.h>

#include "user/collect/runtimes/python/pyoffsets.h"

static const struct st_py_layout layouts[] = {
	{
		/* 3.10: PyFrameObjects, one evaluation call each (f_back,
		 * f_lasti an index of code units), the thread state's frame
		 * and thread_id (pthread_self()) where 3.11 has cframe and
		 * native_thread_id; the interpreter's tstate_head; co_name
		 * for co_qualname (which 3.10 does not have: a method is its
		 * name alone); co_varnames after co_names where 3.11 has
		 * co_exceptiontable (st_py_ident() reads the three pointers
		 * after co_consts, whichever they are); str headers as 3.11's. */
		.version = 0x030a,
		.runtime_interp_head = 32,
		.interp_threads_head = 8,
		.tstate_next = 8,
		.tstate_native_tid = 176,
		.tstate_pthread = 1,
		.tstate_cframe = 24,
		.cframe_current_frame = ST_PY_NO_OFF,
		.frame_code = 32,
		.frame_previous = 24,
		.frame_prev_instr = ST_PY_NO_OFF,
		.frame_lasti = 96,
		.frame_is_entry = ST_PY_NO_OFF,
		.frame_owner = ST_PY_NO_OFF,
		.owner_cstack = ST_PY_NO_OFF,
		.code_adaptive = ST_PY_NO_OFF,
		.code_qualname = 112,
		.code_filename = 104,
		.code_firstlineno = 40,
		.code_consts = 56,
		.code_linetable = 120,
		.object_type = 8,
		.unicode_length = 16,
		.unicode_state = 32,
		.unicode_ascii_data = 48,
		.unicode_compact_data = 72,
		.bytes_size = 16,
		.bytes_data = 32,
	},
	{
		.version = 0x030b,
		.runtime_interp_head = 40,
		.interp_threads_head = 16,
		.tstate_next = 8,
		.tstate_native_tid = 160,
		.tstate_cframe = 56,
		.cframe_current_frame = 8,
		.frame_code = 32,
		.frame_previous = 48,
		.frame_prev_instr = 56,
		.frame_is_entry = 68,
		.frame_owner = 69,
		.frame_lasti = ST_PY_NO_OFF,
		.owner_cstack = ST_PY_NO_OFF,
		.code_adaptive = 184,
		.code_qualname = 128,
		.code_filename = 112,
		.code_firstlineno = 72,
		.code_consts = 24,
		.code_linetable = 136,
		.object_type = 8,
		.unicode_length = 16,
		.unicode_state = 32,
		.unicode_ascii_data = 48,
		.unicode_compact_data = 72,
		.bytes_size = 16,
		.bytes_data = 32,
	},
	{
		/* 3.12: no is_entry: each C-level entry into the evaluation
		 * loop pushes a shim frame owned by the C stack (owner
		 * FRAME_OWNED_BY_CSTACK, 3) under the frames it runs; f_code
		 * first in the frame; the interpreter's thread list, the
		 * thread id and co_firstlineno elsewhere; co_code_adaptive
		 * further out (the monitoring fields); str headers 8 bytes
		 * smaller (no wstr; the state bits where 3.11 has them) */
		.version = 0x030c,
		.runtime_interp_head = 40,
		.interp_threads_head = 72,
		.tstate_next = 8,
		.tstate_native_tid = 144,
		.tstate_cframe = 56,
		.cframe_current_frame = 0,
		.frame_code = 0,
		.frame_previous = 8,
		.frame_prev_instr = 56,
		.frame_is_entry = ST_PY_NO_OFF,
		.frame_owner = 70,
		.frame_lasti = ST_PY_NO_OFF,
		.owner_cstack = 3,
		.code_adaptive = 192,
		.code_qualname = 128,
		.code_filename = 112,
		.code_firstlineno = 68,
		.code_consts = 24,
		.code_linetable = 136,
		.object_type = 8,
		.unicode_length = 16,
		.unicode_state = 32,
		.unicode_ascii_data = 40,
		.unicode_compact_data = 56,
		.bytes_size = 16,
		.bytes_data = 32,
	},
	{
		/* 3.13: no _PyCFrame: the thread state holds current_frame
		 * itself (cframe_current_frame ST_PY_NO_OFF); f_code is now
		 * f_executable (a code object, Py_None in the shims) and
		 * prev_instr instr_ptr (the instruction running, or the call
		 * being made; a frame not started points at its first); the
		 * runtime starts with _Py_DebugOffsets (interpreters.head
		 * 632); co_executors before co_code_adaptive. Shims and str
		 * headers as in 3.12. */
		.version = 0x030d,
		.runtime_interp_head = 632,
		.interp_threads_head = 7344,
		.tstate_next = 8,
		.tstate_native_tid = 160,
		.tstate_cframe = 72,
		.cframe_current_frame = ST_PY_NO_OFF,
		.frame_code = 0,
		.frame_previous = 8,
		.frame_prev_instr = 56,
		.frame_is_entry = ST_PY_NO_OFF,
		.frame_owner = 70,
		.frame_lasti = ST_PY_NO_OFF,
		.owner_cstack = 3,
		.code_adaptive = 200,
		.code_qualname = 128,
		.code_filename = 112,
		.code_firstlineno = 68,
		.code_consts = 24,
		.code_linetable = 136,
		.object_type = 8,
		.unicode_length = 16,
		.unicode_state = 32,
		.unicode_ascii_data = 40,
		.unicode_compact_data = 56,
		.bytes_size = 16,
		.bytes_data = 32,
	},
};

const struct st_py_layout *st_py_layout__find(__u16 version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == version)
			return &layouts[i];
	return NULL;
}

const char *st_py_version__str(__u32 version, char *buf, size_t len)
{
	if (version > 0xffff)
		version >>= 16;
	snprintf(buf, len, "%u.%u", (version >> 8) & 0xff, version & 0xff);
	return buf;
}
