/* pymerge.h - a deferred sample's Python frames merged into the stack the
 * daemon unwound for it, with bpf/pymerge.h's merge built natively (one
 * source for the rule: BPF merges the samples it folds with the same
 * st_py_merge()). The Python frames were walked by BPF at the sample
 * (struct st_py_frames in struct st_deferred, bpf/stacktree.h). Pure: no
 * syscall, no allocation. */
#ifndef STACKTREE_PYMERGE_H
#define STACKTREE_PYMERGE_H

#include <stdbool.h>
#include <linux/types.h>

#include "bpf/stacktree.h"

/* Merge py's frames into frames[0..un) (native, leaf first; room for max
 * entries, max <= ST_MAX_USER): the new count. A Python frame's entry is
 * its node address tagged with ST_PY_TAG (bpf/stacktree.h), as in BPF.
 * *cut: frames at the root did not fit; *unmatched: evaluation frames and
 * Python runs did not pair up. Without Python frames: un, unchanged. */
__u32 st_py_merge_deferred(const struct st_py_frames *py, __u64 *frames, __u32 un, __u32 max,
			   bool *cut, bool *unmatched);

#endif
