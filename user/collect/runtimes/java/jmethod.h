/* jmethod.h - a HotSpot method's names and lines, read from a JVM's
 * memory: what a Java frame (ST_JAVA_ADDR: a Method* and a bci) is named.
 *
 * Owner: user/collect/runtimes/java/jmethod.c. From a Method*: its
 * ConstMethod, whose constant pool (ConstantPool, then its entries, one
 * word each, from the object's end) holds the method's name and signature
 * symbols (at ConstMethod::_name_index, _signature_index) and the source
 * file's (ConstantPool::_source_file_name_index); the pool's holder (a
 * Klass) names the class ("java/lang/String" given as "java.lang.String").
 * The line table is copied: it follows the bytecodes, present when the
 * ConstMethod's flags say so, a CompressedLineNumberReadStream (pairs of
 * bci and line deltas: one byte, bci << 3 | line, or 0xff and two signed
 * UNSIGNED5 numbers; 0 ends it). UNSIGNED5 excludes the byte 0 from JDK
 * 20 on (each byte is one more: X = 1), not before.
 *
 * Nothing read is trusted: every read checked, pool indexes within the
 * pool's length, names cut at ST_JNAME_MAX - 1 bytes and made printable,
 * the table copied up to ST_JLINES_MAX bytes and decoded within them.
 * Fuzzed: tests/fuzz/fuzz_jmethod.c.
 */
#ifndef STACKTREE_JMETHOD_H
#define STACKTREE_JMETHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "user/collect/runtimes/java/jvmlayout.h"
#include "user/collect/runtimes/java/vmstructs.h"

#define ST_JNAME_MAX 256	/* bytes of a name kept, with its NUL */
#define ST_JLINES_MAX 2048	/* bytes of a line table kept */

struct st_jmethod {
	char klass[ST_JNAME_MAX];	/* "java.lang.String" */
	char name[ST_JNAME_MAX];	/* "indexOf" */
	char sig[ST_JNAME_MAX];		/* "(I)I" */
	char source[ST_JNAME_MAX];	/* "String.java", or "" */
	__u32 code_size;		/* bytes of its bytecodes */
	__u32 nlines;			/* bytes of lines[] (0: no table) */
	__u8 lines_x;			/* the table's UNSIGNED5 X (0 or 1) */
	__u8 lines[ST_JLINES_MAX];
};

/* Read method's names and line table: 0, -EFAULT (the method, its
 * ConstMethod, pool or class unreadable or absurd), -ENOENT (a layout
 * member it needs missing). major: the JVM's (st_jvm_version), for the
 * table's encoding. A name that cannot be read is "" (the rest still). */
int st_jmethod__read(const struct st_jvm_layout *l, int major, st_vm_read_fn rd, void *arg,
		     __u64 method, struct st_jmethod *out);

/* The line of bci in m (HotSpot's Method::line_number_from_bci: the
 * entry at bci, else the last one below it), or 0 (no table, or none
 * below). */
__u32 st_jmethod__line(const struct st_jmethod *m, __u32 bci);

/* The same on a table's bytes: decoded within t[0, n), x its UNSIGNED5 X. */
__u32 st_jlines__find(const __u8 *t, size_t n, __u8 x, __u32 bci);
/* The bytes of the table t[0, n) up to its end byte included, or 0 (its
 * end not within them, or a pair cut). */
size_t st_jlines__end(const __u8 *t, size_t n, __u8 x);

#endif
