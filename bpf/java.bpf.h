/* SPDX-License-Identifier: GPL-2.0 */
/*
 * java.bpf.h - HotSpot JVMs on the BPF side: their maps (the JVMs the
 * daemon found, the Java rule's counts, the methods reported) and the
 * report of methods seen for the first time. The rule that makes Java
 * frames is bpf/hotspot_step.h, inside the unwinder (bpf/unwind.h looks
 * the process up in java_procs once per walk); this file names nothing.
 *
 * Identity while alive: a frame's Method* is named by the daemon, which
 * reads it at once when a sample first shows it (struct st_java_event on
 * java_events; user/collect/runtimes/java/java.c), so that a method is
 * named even when its process exits before the drain. The rule reports
 * each entry it makes unlike the one before (st_java_report(), through
 * ST_HS_REPORT). A CPU's memo of the methods reported (direct-mapped by
 * (tgid, Method*)) saves a java_methods lookup per frame; java_methods
 * (LRU) says what was reported by any CPU.
 *
 * Also the compiled-frame step's maps (bpf/hotspot_blob.h): a walk's memo
 * of code blobs (java_blob_memo) and the blob cache across samples
 * (java_blob_cache); and, in a bench build only (ST_JAVA_PARTS), the
 * per-part timers (java_parts, bench/java_parts.py).
 */
#ifndef STACKTREE_JAVA_BPF_H
#define STACKTREE_JAVA_BPF_H

#include "base.bpf.h"
#include "common/hash.h"
#include "hotspot_memo.h"

#define ST_JAVA_PROCS 1024	/* processes running a JVM */
#define ST_JAVA_METHODS 65536	/* (process, method) pairs reported */
#define ST_JAVA_MEMO 1024	/* per-CPU memo entries (power of two): 16 KiB */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_JAVA_PROCS);
	__type(key, __u32);
	__type(value, struct st_java_proc);
} java_procs SEC(".maps");

/* Moved on by the daemon after each change to java_procs (an update or a
 * delete: st_session__java_procs_changed()): a CPU's memo of whether a
 * process has a JVM, read at another value, is looked up again (the fp
 * walk's Java count, bpf/walk.bpf.h). */
__u64 java_procs_epoch = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_java_counts);
	__uint(max_entries, 1);
} java_stats SEC(".maps");

/* A walk's memo of code blobs (bpf/hotspot_memo.h), per CPU and per
 * program kind (0 timer, 1 page faults: the stack window's slots) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_hs_memo);
	__uint(max_entries, 2);
} java_blob_memo SEC(".maps");

/* Per-part costs, in a bench build only (make BPF_DEFS=-DST_JAVA_PARTS;
 * bench/java_parts.py reads them): per CPU, ST_JAVA_PART_* sums of calls
 * and nanoseconds (bpf_ktime_get_ns() around each part; a pair of calls
 * costs what ST_JAVA_PART_CLOCK says, some 25 ns on the bench VM). */
enum st_java_part {
	ST_JAVA_PART_HS_CALLS,	/* st_hs_frame() calls (code cache frames) */
	ST_JAVA_PART_HS_NS,	/* ... their time */
	ST_JAVA_PART_INTERP,	/* ... of which interpreted frames */
	ST_JAVA_PART_INTERP_NS,	/* ... their time */
	ST_JAVA_PART_REPORT,	/* st_java_report() calls (walks with Java frames) */
	ST_JAVA_PART_REPORT_NS,	/* ... their time */
	ST_JAVA_PART_CLOCK,	/* clock pairs timed */
	ST_JAVA_PART_CLOCK_NS,	/* ... their time (the timing's own cost) */
	ST_JAVA_PART_MEMO_HIT,	/* blobs found in the walk's memo (bpf/hotspot_blob.h) */
	ST_JAVA_PART_CACHE_HIT,	/* ... in the blob cache, still valid */
	ST_JAVA_PART_BLOB_READ,	/* ... read (segment map walk and fields) */
	ST_JAVA_PART_MEMO_START, /* walks whose memo began (the heaps copied) */
	ST_JAVA_PART_WIN_FILL,	/* stack window reads (bpf/unwind.h), any walk's */
	ST_JAVA_PART_WIN_FILL_NS, /* ... their time */
	ST_JAVA_PART_WIN_BYTES,	/* ... their bytes */
	ST_JAVA_PART_WALKS,	/* DWARF walks (st_unwind_walk()), Java or not */
	ST_JAVA_PART_WALK_NS,	/* ... their time (st_unw_start() to the walk's end) */
	ST_JAVA_PART__MAX = 24,
};
#ifdef ST_JAVA_PARTS
struct st_java_parts {
	__u64 n[ST_JAVA_PART__MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_java_parts);
	__uint(max_entries, 1);
} java_parts SEC(".maps");

static __always_inline void st_java_part(__u32 i, __u64 v)
{
	__u32 zero = 0;
	struct st_java_parts *p = bpf_map_lookup_elem(&java_parts, &zero);

	if (p && i < ST_JAVA_PART__MAX)
		p->n[i] += v;
}
#define ST_JAVA_NOW() bpf_ktime_get_ns()
#define ST_JAVA_PART(i, v) st_java_part((i), (v))
#else
#define ST_JAVA_NOW() 0ULL
#define ST_JAVA_PART(i, v) ((void)(v))
#endif

/* Code blobs resolved by earlier samples, by (process, pc): a compiled
 * pc seen before costs a lookup and two reads (bpf/hotspot_blob.h's
 * st_hs_blob_valid()), not the segment map walk and the blob's reads.
 * Misses and stale entries are counted (ST_JAVA_STAT_HS_CACHE_*). */
#define ST_JAVA_BLOB_CACHE 8192
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_JAVA_BLOB_CACHE);
	__type(key, struct st_hs_blob_key);
	__type(value, struct st_hs_blob);
} java_blob_cache SEC(".maps");

struct st_java_method_key {
	__u32 tgid, image;
	__u64 method;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ST_JAVA_METHODS);
	__type(key, struct st_java_method_key);
	__type(value, __u8);
} java_methods SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);	/* 4,096 reports (16 bytes + 8) */
} java_events SEC(".maps");

struct st_java_memo {
	struct st_java_method_key e[ST_JAVA_MEMO];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_java_memo);
	__uint(max_entries, 1);
} java_memo SEC(".maps");

/* Interpreted methods' bytecodes met by earlier samples, per CPU
 * (bpf/hotspot_step.h's ST_HS_CODE_MEMO): an interpreted frame of a method
 * met before reads no metaspace, where it read its Method's ConstMethod
 * pointer and the ConstMethod's code size (two helper calls; a recursion's
 * repeats were already free). An entry is used only for its process and
 * image and when the frame's bcp lies in its bytecodes, which the
 * interpreter keeps pointing into the method's own ConstMethod: a Method
 * freed with its class and its address reused keeps a stale entry only
 * while the new method's bcps miss the old bytecodes' range (a new
 * ConstMethod at the old one's address gives the same bcis; only one
 * overlapping it elsewhere could give a wrong bci, never a wrong method:
 * the entry's Method* is the frame's). */
#define ST_JAVA_CODE_MEMO 512	/* entries (power of two): 16 KiB a CPU and kind */
struct st_java_code_memo {
	struct st_hs_code_ent e[ST_JAVA_CODE_MEMO];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_java_code_memo);
	__uint(max_entries, 2);	/* per program kind, as the stack window's slots: a
				 * timer that interrupts a page fault's walk never
				 * sees an entry half written */
} java_code_memo SEC(".maps");

/* The CPU's java_code_memo entry for Method* method in slot's memo, or
 * NULL. */
static __always_inline struct st_hs_code_ent *st_java_code_memo(__u32 slot, __u64 method)
{
	struct st_java_code_memo *m = bpf_map_lookup_elem(&java_code_memo, &slot);

	return m ? &m->e[st_hash_u64(method) & (ST_JAVA_CODE_MEMO - 1)] : NULL;
}

/* The JVM of process tgid running image, or NULL (none, another image's,
 * or --interpreters without java). */
static __always_inline const struct st_java_proc *st_java_proc_of(__u32 tgid, __u32 image)
{
	const struct st_java_proc *p;

	if (!(interpreters & ST_INTERP_JAVA))
		return NULL;
	p = bpf_map_lookup_elem(&java_procs, &tgid);
	return p && (p->image == image || p->image == ST_UNWIND_ANY_IMAGE) ? p : NULL;
}

static __always_inline void st_java_count(__u32 what)
{
	__u32 zero = 0;
	struct st_java_counts *c = bpf_map_lookup_elem(&java_stats, &zero);

	if (c && what < ST_JAVA_STAT__MAX)
		c->n[what]++;
}

/* A Java entry e a walk of process tgid (running image) made
 * (bpf/hotspot_step.h's rule calls this through ST_HS_REPORT for each
 * entry unlike the one before it: a recursion's repeats cost nothing): an
 * entry not in the CPU's memo is looked up in java_methods, and its
 * method reported when new there. false: the report was lost (the ring
 * buffer full; counted), a later sample reports it. */
static __always_inline bool st_java_report(__u32 tgid, __u32 image, __u64 e)
{
	struct st_java_method_key k = { .tgid = tgid, .image = image };
	struct st_java_method_key *m;
	struct st_java_event *ev;
	struct st_java_memo *memo;
	__u32 zero = 0;
	__u8 one = 1;
	__u64 t0 = ST_JAVA_NOW(), t1;

	memo = bpf_map_lookup_elem(&java_memo, &zero);
	if (!memo || !st_java_entry_is(e))
		return true;
	/* a compiled frame: its entry (the daemon reads its methods) */
	k.method = st_java_entry_jit(e) ? e : ST_JAVA_METHOD(e);
	m = &memo->e[st_hash_u64(k.method ^ ((__u64)k.tgid << 48)) & (ST_JAVA_MEMO - 1)];
	if (m->method == k.method && m->tgid == k.tgid && m->image == k.image)
		return true;
	if (!bpf_map_lookup_elem(&java_methods, &k)) {
		ev = bpf_ringbuf_reserve(&java_events, sizeof(*ev), 0);
		if (!ev) {
			st_java_count(ST_JAVA_STAT_METHODS_LOST);
			return false;	/* not marked: reported by a later sample */
		}
		ev->pid = k.tgid;
		ev->image = k.image;
		ev->method = k.method;
		bpf_ringbuf_submit(ev, 0);
		st_java_count(ST_JAVA_STAT_METHODS);
		bpf_map_update_elem(&java_methods, &k, &one, BPF_ANY);
	}
	*m = k;
	t1 = ST_JAVA_NOW();
	ST_JAVA_PART(ST_JAVA_PART_REPORT, 1);
	ST_JAVA_PART(ST_JAVA_PART_REPORT_NS, t1 - t0);
	ST_JAVA_PART(ST_JAVA_PART_CLOCK, 1);
	ST_JAVA_PART(ST_JAVA_PART_CLOCK_NS, ST_JAVA_NOW() - t1);
	return true;
}

#endif
