/* jcode.c - a code cache pc's blob and the blob's name, read from a
 * JVM's memory (see jcode.h). */
#include <errno.h>
#include <string.h>

#include "user/collect/runtimes/java/jcode.h"
#include "user/collect/unwind/unwind_native.h"

const char *st_jcode__fixed(const struct st_java_proc *p, __u64 pc)
{
	if (p->blobs.call_stub_ret && pc == p->blobs.call_stub_ret)
		return ST_JCODE_CALL_STUB;
	if (pc >= p->interp_start && pc < p->interp_end)
		return ST_JCODE_INTERPRETER;
	return NULL;
}

int st_jcode__find(const struct st_java_proc *p, st_vm_read_fn rd, void *arg, __u64 pc,
		   __u64 *blob)
{
	struct st_unw_env env = { .mem = rd, .mem_arg = arg };

	*blob = 0;
	return st_hs_blob_find(&env, p, pc, blob);
}

int st_jcode__read(const struct st_java_blobs *b, st_vm_read_fn rd, void *arg, __u64 blob,
		   struct st_jcode *out)
{
	__u64 name = 0, method = 0;
	__u32 kind = 0, n;
	__s32 size = 0;

	memset(out, 0, sizeof(*out));
	if (blob >= ST_USER_END || rd(arg, &name, sizeof(name), blob + b->name) || !name ||
	    name >= ST_USER_END || rd(arg, &kind, sizeof(kind), name) ||
	    rd(arg, &size, sizeof(size), blob + b->size) || size <= 0)
		return -EFAULT;
	out->start = blob;
	out->end = blob + (__u64)size;
	if ((kind == ST_HS_NAME_NMETHOD || kind == ST_HS_NAME_NATIVE) &&
	    !rd(arg, &method, sizeof(method), blob + b->method) && method &&
	    method < ST_USER_END && !(method & 7))
		out->method = method;
	/* a C string of the JVM's: read in the largest piece that reads (it
	 * may end just before an unmapped page) */
	for (n = ST_JCODE_NAME_MAX; n >= 8; n /= 2)
		if (!rd(arg, out->name, n, name))
			break;
	if (n < 8) {
		out->name[0] = '\0';
		return out->method ? 0 : -EFAULT;
	}
	out->name[n] = '\0';
	for (char *q = out->name; *q; q++)	/* data: printable */
		if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e)
			*q = '?';
	return out->name[0] || out->method ? 0 : -EFAULT;
}
