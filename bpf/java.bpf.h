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
 * named even when its process exits before the drain. A CPU's memo of the
 * methods reported (direct-mapped by (tgid, Method*)) saves a
 * java_methods lookup per frame; java_methods (LRU) says what was
 * reported by any CPU.
 */
#ifndef STACKTREE_JAVA_BPF_H
#define STACKTREE_JAVA_BPF_H

#include "base.bpf.h"
#include "common/hash.h"

#define ST_JAVA_PROCS 1024	/* processes running a JVM */
#define ST_JAVA_METHODS 65536	/* (process, method) pairs reported */
#define ST_JAVA_MEMO 1024	/* per-CPU memo entries (power of two): 16 KiB */
#define ST_JAVA_FRAME_ROOM 1024	/* a walk's frame array (walk.bpf.h's ST_USTACK_SLOTS) */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ST_JAVA_PROCS);
	__type(key, __u32);
	__type(value, struct st_java_proc);
} java_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct st_java_counts);
	__uint(max_entries, 1);
} java_stats SEC(".maps");

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

struct st_java_report_ctx {
	const __u64 *frames;
	struct st_java_memo *memo;
	__u32 n, tgid, image;
};

/* Frame i: a Java entry not in the memo is looked up in java_methods,
 * and reported when new there. */
static long st_java_report_one(__u32 i, void *data)
{
	struct st_java_report_ctx *c = data;
	struct st_java_method_key k = { .tgid = c->tgid, .image = c->image };
	struct st_java_method_key *m;
	struct st_java_event *ev;
	__u64 e;
	__u8 one = 1;

	if (i >= c->n)
		return 1;
	e = c->frames[i & (ST_JAVA_FRAME_ROOM - 1)];
	if (!st_java_entry_is(e))
		return 0;
	/* a compiled frame: its entry (the daemon reads its methods) */
	k.method = st_java_entry_jit(e) ? e : ST_JAVA_METHOD(e);
	m = &c->memo->e[st_hash_u64(k.method ^ ((__u64)k.tgid << 48)) & (ST_JAVA_MEMO - 1)];
	if (m->method == k.method && m->tgid == k.tgid && m->image == k.image)
		return 0;
	if (!bpf_map_lookup_elem(&java_methods, &k)) {
		ev = bpf_ringbuf_reserve(&java_events, sizeof(*ev), 0);
		if (!ev) {
			st_java_count(ST_JAVA_STAT_METHODS_LOST);
			return 0;	/* not marked: reported by a later sample */
		}
		ev->pid = k.tgid;
		ev->image = k.image;
		ev->method = k.method;
		bpf_ringbuf_submit(ev, 0);
		st_java_count(ST_JAVA_STAT_METHODS);
		bpf_map_update_elem(&java_methods, &k, &one, BPF_ANY);
	}
	*m = k;
	return 0;
}

/* The methods of a walk's n frames (ST_JAVA_FRAME_ROOM of room) that this
 * process had not shown before: reported. */
static __always_inline void st_java_report(const __u64 *frames, __u32 n, __u32 tgid, __u32 image)
{
	struct st_java_report_ctx c = { .frames = frames, .n = n, .tgid = tgid, .image = image };
	__u32 zero = 0;

	c.memo = bpf_map_lookup_elem(&java_memo, &zero);
	if (c.memo)
		bpf_loop(ST_MAX_USER, st_java_report_one, &c, 0);
}

#endif
