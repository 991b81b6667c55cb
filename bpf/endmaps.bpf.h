/* SPDX-License-Identifier: GPL-2.0 */
/*
 * endmaps.bpf.h - a sampled process's executable file mappings, kept as
 * it ends (map exec_maps, struct st_exec_maps; the files' paths in
 * file_paths): at the exit of its last thread and at an exec that
 * replaces its image. The daemon reads /proc/PID/maps when it first sees
 * a process; one that lives a few milliseconds (a build's cc1, as, sh) is
 * gone by then, and its samples were [unknown]: the daemon reads these
 * instead (user/collect/collector.c, place_exec_maps()).
 *
 * Why at the end, and not as mappings are made (perf's mmap records): no
 * hook on mmap is open to us everywhere (fentry and kprobes need
 * trampolines or tracefs, which this project's kernels may not offer:
 * kernel-notes/README.md; a raw sys_exit tracepoint would run for every
 * system call of the machine). At the end every mapping the process ever
 * needed is there, and the walk costs once per sampled process: its VMAs
 * (bpf_iter_task_vma, at most ST_ENDMAPS_VMAS), the executable file ones
 * kept (at most ST_EXEC_MAPS), and the vDSO's. sched_process_exit runs before the task
 * drops its mm (kernels from 6.16, whose tracepoint passes group_dead;
 * before them the mm is gone and nothing is kept: the daemon then reads
 * /proc as before), sched_prepare_exec (6.10) before exec replaces it.
 * Both maps are LRU with fixed memory (4096 processes, 4096 files, ~6
 * MiB), the oldest forgotten first.
 *
 * A file's path: walked up its dentries (d_parent) to its mount's root,
 * then on from the mount point in the parent mount (struct mount, found
 * from its vfsmount by CO-RE offset), written from the end of a buffer
 * backwards; at most ST_MAP_STEPS steps in a bpf_loop callback (checked
 * once by the verifier); once per file (device, inode). A path longer
 * than ST_MAP_PATH_MAX, or deeper, is flagged ST_MAP_CUT and not used.
 */
#ifndef STACKTREE_ENDMAPS_BPF_H
#define STACKTREE_ENDMAPS_BPF_H

#include "base.bpf.h"
#include "procs.bpf.h"

#define ST_MAP_STEPS 48		/* path components and mount crossings walked */
#define ST_ENDMAPS_VMAS 2048	/* VMAs looked at per process */
#define ST_VM_EXEC 0x4		/* include/linux/mm.h VM_EXEC */

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct st_exec_key);
	__type(value, struct st_exec_maps);
	__uint(max_entries, 4096);
} exec_maps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct st_file_key);
	__type(value, struct st_file_path);
	__uint(max_entries, 4096);
} file_paths SEC(".maps");

/* Both values are built here (over the stack's 512 bytes). The walk's
 * counters live here too, not in registers: the verifier does not track
 * map memory, so the iterator's loop converges at once (counters in
 * registers made every iteration a new state: over the 1M limit). */
struct endmaps_scratch {
	struct st_exec_maps maps;
	struct st_file_path path;
	__u32 seen;		/* VMAs looked at */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct endmaps_scratch);
	__uint(max_entries, 1);
} endmaps_scratch SEC(".maps");

struct map_path_walk {
	struct st_file_path *p;
	struct dentry *d;
	struct mount *m;
	__u32 pos;		/* the path so far starts at p->path[pos] */
	__u32 cut;		/* stopped short of a root */
	__u32 done;		/* walked to the root of the mount namespace */
};

static long map_path_step(__u32 i, void *ctx)
{
	struct map_path_walk *w = ctx;
	struct dentry *d = w->d, *parent;
	struct mount *m = w->m, *mp;
	const unsigned char *name;
	__u32 len;

	(void)i;
	if (d == BPF_CORE_READ(m, mnt.mnt_root)) {	/* the top of this mount */
		mp = BPF_CORE_READ(m, mnt_parent);
		if (mp == m || !mp) {
			w->done = 1;	/* the root of the namespace */
			return 1;
		}
		w->d = BPF_CORE_READ(m, mnt_mountpoint);
		w->m = mp;
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (!parent || parent == d) {	/* a root that is no mount's (detached) */
		w->cut = 1;
		return 1;
	}
	len = BPF_CORE_READ(d, d_name.len);
	name = BPF_CORE_READ(d, d_name.name);
	if (len == 0 || len >= w->pos || len > ST_MAP_PATH_MAX) {
		w->cut = 1;
		return 1;
	}
	w->pos -= len;
	/* pos < ST_MAP_PATH_END and len < ST_MAP_PATH_END: within path[] */
	if (bpf_probe_read_kernel(&w->p->path[w->pos & (ST_MAP_PATH_END - 1)],
				  len & (ST_MAP_PATH_END - 1), name)) {
		w->cut = 1;
		return 1;
	}
	w->pos--;
	w->p->path[w->pos & (ST_MAP_PATH_END - 1)] = '/';
	w->d = parent;
	return 0;
}

/* file's path into file_paths under key, unless it is there. */
static __always_inline void endmaps_path(struct st_file_path *fp, const struct st_file_key *key,
					 struct file *file)
{
	struct map_path_walk w = { .p = fp, .pos = ST_MAP_PATH_END };

	if (bpf_map_lookup_elem(&file_paths, key))
		return;
	fp->path[ST_MAP_PATH_END] = '\0';
	w.d = BPF_CORE_READ(file, f_path.dentry);
	w.m = (struct mount *)((void *)BPF_CORE_READ(file, f_path.mnt) -
			       bpf_core_field_offset(struct mount, mnt));
	bpf_loop(ST_MAP_STEPS, map_path_step, &w, 0);
	fp->off = w.pos;
	fp->flags = !w.done || w.pos == ST_MAP_PATH_END ? ST_MAP_CUT : 0;
	bpf_map_update_elem(&file_paths, key, fp, BPF_NOEXIST);
}

/* Keep the executable file mappings of task (tgid, running image), a
 * sampled process at its end. */
static __always_inline void endmaps_keep(struct task_struct *task, __u32 tgid, __u32 image)
{
	struct st_exec_key k = { .pid = tgid, .image = image };
	struct bpf_iter_task_vma it;
	struct endmaps_scratch *sc;
	struct vm_area_struct *vma;
	__u64 vdso;
	__u32 zero = 0;

	if (!bpf_map_lookup_elem(&seen_procs, &tgid))
		return;
	sc = bpf_map_lookup_elem(&endmaps_scratch, &zero);
	if (!sc || !BPF_CORE_READ(task, mm))
		return;
	sc->maps.n = 0;
	sc->seen = 0;
	vdso = (__u64)BPF_CORE_READ(task, mm, context.vdso);
	bpf_iter_task_vma_new(&it, task, 0);
	while ((vma = bpf_iter_task_vma_next(&it))) {
		struct st_file_key key;
		struct st_exec_map *m;
		struct inode *inode;
		struct file *file;

		if (++sc->seen > ST_ENDMAPS_VMAS)
			break;
		file = vma->vm_file;
		if (!(vma->vm_flags & ST_VM_EXEC) || (!file && vma->vm_start != vdso))
			continue;
		if (sc->maps.n >= ST_EXEC_MAPS) {
			stat_inc(ST_STAT_MAP_LOST);
			continue;
		}
		if (file) {
			inode = BPF_CORE_READ(file, f_inode);
			key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
			key.ino = BPF_CORE_READ(inode, i_ino);
		} else {	/* the vDSO */
			key.dev = ST_MAP_VDSO;
			key.ino = 0;
		}
		m = &sc->maps.m[sc->maps.n & (ST_EXEC_MAPS - 1)];
		m->start = vma->vm_start;
		m->end = vma->vm_end;
		m->pgoff = (__u64)vma->vm_pgoff << 12;
		m->dev = key.dev;
		m->ino = key.ino;
		sc->maps.n++;
		if (file)
			endmaps_path(&sc->path, &key, file);
	}
	bpf_iter_task_vma_destroy(&it);
	if (!sc->maps.n)
		return;
	sc->maps.image = image;
	bpf_map_update_elem(&exec_maps, &k, &sc->maps, BPF_ANY);
	stat_inc(ST_STAT_MAP_EVENTS);
}

/* Programs of their own, beside lifecycle.bpf.h's on the same tracepoints:
 * loaded only where the kernel has the VMA iterator (6.7+;
 * user/collect/session.c), and attached before those, so that they run
 * first (a tracepoint calls its programs in the order they were
 * attached), while seen_procs still holds the process. */
#define ST_BUDGET_ON_EXIT_MAPS 3	/* verifier budgets (% of 1M): see sample.bpf.c */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit_maps, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (BPF_CORE_READ(p, pid) == tgid)	/* (6.16+: before it drops its mm) */
		endmaps_keep(p, tgid, task_image(p));
	return 0;
}

#define ST_BUDGET_ON_EXEC_MAPS 3
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(on_exec_maps, struct task_struct *p, struct linux_binprm *bprm)
{
	/* the old image's, while it has them */
	endmaps_keep(p, BPF_CORE_READ(p, tgid), task_image(p));
	return 0;
}

#endif
