/* pyoffsets.h - CPython structure layouts, by version.
 *
 * Owner: user/collect/runtimes/python/pyoffsets.c. The offsets of the fields the Python
 * walker (bpf/pywalk.h) and the code-object reader (user/collect/runtimes/python/pycode.c)
 * read, one table entry per major.minor version. An entry is added only
 * when it has been checked against that interpreter's DWARF
 * (tests/unit/test_pyoffsets.c checks 3.11 against python3.11-dbg, 3.12
 * and 3.13 against pyenv's libpython3.12.so.1.0 and libpython3.13.so.1.0).
 */
#ifndef STACKTREE_PYOFFSETS_H
#define STACKTREE_PYOFFSETS_H

#include <stddef.h>
#include <linux/types.h>

#include "user/collect/runtimes/python/pywalk_native.h"

/* The layout of version major.minor (Py_Version >> 16: 0x030b for 3.11),
 * or NULL when it is not supported. */
const struct st_py_layout *st_py_layout__find(__u16 version);

/* "3.11" into buf from a Py_Version-style number (0x030b07f0 or 0x030b). */
const char *st_py_version__str(__u32 version, char *buf, size_t len);

#endif
