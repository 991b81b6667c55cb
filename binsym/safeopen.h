/* safeopen.h - opening a file the daemon is about to parse, safely.
 *
 * The daemon runs as root and parses the ELF (and DWARF) files of every
 * process, including files any user crafted. st_safe_open() only ever
 * returns a regular file of bounded size, and never blocks in open():
 *
 *   - the path is first opened O_PATH (no driver open() runs: devices,
 *     FIFOs and sockets have no side effect and cannot block), checked with
 *     fstat (S_ISREG and st_size <= max_size), and only then reopened for
 *     reading through /proc/self/fd (the very inode checked, no race), with
 *     O_NONBLOCK (a lease holder cannot stall the open) cleared afterwards;
 *   - root_fd >= 0 resolves path inside that directory as the root
 *     (openat2 RESOLVE_IN_ROOT: "..", absolute paths and symlinks stay in
 *     it), e.g. a process's /proc/PID/root;
 *   - nofollow refuses a symbolic link as the last component (O_NOFOLLOW);
 *   - a file that starts with the ELF magic must have a plausible layout
 *     for its real size and allocated blocks (st_elf_layout__check(), see
 *     elflayout.h): libelf and libdw then see no sparse or absurd header
 *     tables, whoever opens the file.
 *
 * Every refusal is counted in *stats when given. Owner: binsym/. */
#ifndef STACKTREE_SYMBOLIZER_SAFEOPEN_H
#define STACKTREE_SYMBOLIZER_SAFEOPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/types.h>

/* Default size bound of a parsed file: the largest ELF file on the
 * development machine is 541 MB (libcublasLt.so), libLLVM-15 117 MB; a
 * full debug file of such a library stays under 2 GiB. */
#define ST_SAFE_OPEN_MAX_MB 2048

/* Refusals (negative errno returns of st_safe_open()). */
#define ST_SAFE_NOT_REGULAR (-ENODEV)	/* FIFO, device, socket, directory */
#define ST_SAFE_TOO_LARGE (-EFBIG)	/* st_size > max_size */
#define ST_SAFE_SYMLINK (-ELOOP)	/* nofollow and the last component is a link */
#define ST_SAFE_IMPLAUSIBLE (-EUCLEAN)	/* ELF whose header tables cannot be real */

struct st_safe_stats {
	size_t not_regular, too_large, symlink;
	size_t implausible;		/* ELF layout refused (elflayout.h) */
	size_t not_mapped;		/* not the inode the maps line names
					 * (st_file_is_mapped(), counted by callers) */
	char implausible_path[160];	/* the last one refused, as opened (cut) */
};

struct st_safe_open {
	__u64 max_size;		/* bytes; 0: ST_SAFE_OPEN_MAX_MB */
	int root_fd;		/* resolve inside this directory, or -1: as given */
	bool nofollow;		/* refuse a symlink as the last component */
	__u64 layout_budget;	/* bytes libelf may spend on one file's headers;
				 * 0: ST_ELF_LAYOUT_BUDGET_MB */
	struct st_safe_stats *stats;	/* refusals counted here, or NULL */
};

/* Open path read-only for parsing: a file descriptor (O_CLOEXEC, blocking
 * reads) with *st filled (if st is not NULL), or negative errno:
 * ST_SAFE_NOT_REGULAR, ST_SAFE_TOO_LARGE, ST_SAFE_SYMLINK,
 * ST_SAFE_IMPLAUSIBLE, or open's. */
int st_safe_open(const char *path, const struct st_safe_open *o, struct stat *st);

/* st_safe_open() of path inside process pid's root (/proc/PID/root, as
 * root_fd; o->root_fd is ignored). */
int st_safe_open_in_proc(unsigned pid, const char *path, const struct st_safe_open *o,
			 struct stat *st);

/* Whether the open file fd (its *st) is the inode a /proc/PID/maps line
 * names (dev as makedev(MAJ, MIN), ino). The inode number must be equal;
 * the device too, except on overlayfs and btrfs, where fstat's st_dev is
 * not the superblock's device that maps shows (the overlay's own, a
 * subvolume's anonymous one). ino 0 (not known): true. */
bool st_file_is_mapped(int fd, const struct stat *st, __u64 dev, __u64 ino);

/* Whether only root can have made the file's content: owned by uid 0 and
 * not writable by group or others. Such files are shared between processes
 * by build id; files any user could craft only by their own identity. */
bool st_file_trusted(const struct stat *st);

#endif
