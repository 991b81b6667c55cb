/* forcefault.h - forced page faults on target processes (--force-faults).
 *
 * A warmed-up process takes no natural page fault: its pages are resident.
 * While a session runs, this module pages out a random sample of the
 * targets' resident anonymous private pages (process_madvise(MADV_PAGEOUT))
 * so that their next access faults again (a swap-in). Anonymous pages need
 * swap: a zram device is added (/sys/class/zram-control/hot_add), given
 * ST_FF_ZRAM_MB, made swap (mkswap, swapon(2) at the highest priority) for
 * the session and removed after it. Before each change to the system the
 * state file (ST_FF_STATE_PATH) is rewritten with what is about to change, so
 * that the next start undoes what a crashed session left
 * (st_forcefault__recover()). Measurements of this and of the other
 * mechanisms: kernel-notes/forced-faults.md.
 *
 * Which faults were forced: each page is put into the BPF map forced_pages
 * (key: tgid, page) before it is paged out; the fault program deletes the key
 * at the page's next fault and marks that data leaf forced. Pages the kernel
 * did not page out (still present afterwards) are taken out of the map
 * again, so a fault is marked forced exactly when it is the first fault on a
 * page this module paged out. Owner: user/collect/faults/forcefault.c.
 */
#ifndef STACKTREE_FORCEFAULT_H
#define STACKTREE_FORCEFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#define ST_FF_STATE_DIR "/run/stacktreed"
#define ST_FF_STATE_PATH ST_FF_STATE_DIR "/forcefault.state"
#define ST_FF_DEFAULT_RATE 1000u	/* pages forced per second, all targets */
#define ST_FF_MAX_RATE 20000u		/* --force-faults=RATE upper bound */
#define ST_FF_BASELINE_S 1.0		/* the targets' CPU time measured unforced first */
#define ST_FF_ZRAM_MB 256u		/* zram swap size (uncompressed capacity) */
#define ST_FF_MAP_ENTRIES 65536u	/* forced_pages entries (LRU) */
#define ST_FF_STATE_MAX 4096		/* bytes of state file parsed at most */

#define ST_FF_ID_LEN 36		/* a UUID as text: the boot id, the swap area's UUID */
#define ST_FF_SWAP_LABEL "stacktreed-ff"	/* mkswap -L: what the swap area is, for people */

/* The state file: what a session changed, or is about to change, and how to
 * know it again: a crashed session's device number may have been reused by
 * another owner, so a leftover is undone only when its identity is ours. */
struct st_ffstate {
	int pid;			/* the stacktreed that wrote it */
	char boot[ST_FF_ID_LEN + 1];	/* its boot (/proc/sys/kernel/random/boot_id) */
	int zram;			/* zram device number, -1: none */
	bool added;			/* ... hot_add'ed by that session (hot_remove it) */
	__u64 diskseq;			/* its /sys/block/zramN/diskseq (0: the kernel has none) */
	__u64 ino;			/* its sysfs directory's inode (unique per boot too) */
	bool swapon;			/* mkswap and swapon /dev/zramN were (about to be) done */
	char uuid[ST_FF_ID_LEN + 1];	/* ... with this UUID (mkswap -U) */
};

/* Parse a state file's content (at most ST_FF_STATE_MAX bytes; need not be
 * NUL-terminated). Lines: "stacktreed-forcefault 2" first, then "pid N",
 * "boot UUID", "zram N added diskseq S ino I", "swapon N uuid UUID" (N the
 * same device; UUIDs lower-case 8-4-4-4-12 hex). 0, or -EINVAL on anything
 * else (a version 1 file, without identities, too). Pure: unit-tested and
 * fuzzed. */
int st_ffstate__parse(const char *buf, size_t len, struct st_ffstate *out);
/* The file's content for s, into buf; its length, or -ENOSPC. */
int st_ffstate__format(const struct st_ffstate *s, char *buf, size_t len);

/* What is there now of what a state file names (read from the system). */
struct st_ffseen {
	bool same_boot;			/* the boot id is the state's */
	bool dev;			/* /sys/block/zramN exists ... */
	__u64 diskseq, ino;		/* ... with this identity */
	bool swap;			/* /dev/zramN is in /proc/swaps ... */
	char uuid[ST_FF_ID_LEN + 1];	/* ... its swap header's UUID ("": none read) */
};

enum { ST_FF_SWAPOFF = 1, ST_FF_RESET = 2, ST_FF_REMOVE = 4 };

/* What of s may be undone given seen: ST_FF_* bits. Only what is provably
 * the session's own: the device when its diskseq and inode are the
 * recorded ones in the same boot, its swap when the header carries the
 * recorded UUID; anything else is left, and why (one phrase) goes into why
 * ("" when nothing is left that s names). Pure: unit-tested. */
unsigned st_ffstate__plan(const struct st_ffstate *s, const struct st_ffseen *seen, char *why,
			  size_t len);

/* A private writable range of a target's address space. */
struct st_ff_range {
	__u64 start, end;	/* page-aligned, start < end */
};

/* Pick up to n page addresses uniformly over the pages of ranges r[0..nr)
 * (a page of a bigger range is no likelier than any other), sorted, without
 * duplicates, into out (room for n). *seed is a xorshift64 state (not 0).
 * Returns the count. Pure: unit-tested. */
size_t st_ff__pick(const struct st_ff_range *r, size_t nr, size_t n, __u64 *seed, __u64 *out);

/* Undo what a session that died left (the state file), unless that session
 * still runs, and only what is still its own (st_ffstate__plan()). Prints
 * one line of what was restored and what was left alone, and why. 0 (also:
 * nothing to do), -EBUSY (another stacktreed forcing faults runs: nothing
 * printed), or negative errno. */
int st_forcefault__recover(const char *state_path);

struct st_forcefault_opts {
	__u32 rate;		/* pages per second over all targets (1..ST_FF_MAX_RATE) */
	int map_fd;		/* forced_pages, or -1 (no forced/natural marks) */
	const char *state_path;	/* NULL: ST_FF_STATE_PATH */
};

struct st_forcefault;

/* Set up the swap device (recording each step in the state file first).
 * On failure prints one line naming what is missing. */
int st_forcefault__new(const struct st_forcefault_opts *o, struct st_forcefault **out);
/* Force faults on process pid (not its children). */
int st_forcefault__add_target(struct st_forcefault *f, int pid);
/* Called from the session loop: the first ST_FF_BASELINE_S seconds measure
 * the targets' CPU time; then the pages due since the last call are forced. */
void st_forcefault__tick(struct st_forcefault *f, double now);
/* Stop forcing and restore the system (swapoff, zram reset and removal,
 * state file). Idempotent; 0 or the first error (printed). */
int st_forcefault__restore(struct st_forcefault *f);
/* Summary lines: rate, pages forced, faults seen (forced_faults: the BPF
 * count), the targets' slowdown, what was changed and restored. */
void st_forcefault__summary(const struct st_forcefault *f, __u64 forced_faults, FILE *out);
/* Restores (if not done) and frees; NULL is fine. */
void st_forcefault__free(struct st_forcefault *f);

#endif
