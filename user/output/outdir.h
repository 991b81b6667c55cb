/* outdir.h - the output directory, opened once and checked before any work,
 * and files and directories written in it without following links.
 * Owner: user/output/outdir.c. Used by report.c, snapshot.c, user/daemon.c, stacktree.c.
 *
 * Everything is done relative to the directory's descriptor (openat,
 * renameat, unlinkat, mkdirat, symlinkat): a file is written into a new
 * temporary ".tmp-ID-NAME-XXXXXXXX" (O_CREAT|O_EXCL|O_NOFOLLOW, random
 * suffix) and renamed over NAME, so a link planted under any name is
 * replaced, never written through. ID is the writer's identity,
 * "P<pid>.<start time>.<boot id>": the temporaries a writer killed while
 * writing left are told from a live writer's, and removed by
 * st_outdir__sweep() (at open, and with each snapshot's pruning).
 */
#ifndef STACKTREE_OUTDIR_H
#define STACKTREE_OUTDIR_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

struct st_outdir;
struct st_outfile;

/* Reports are private by default: files 0600, the directories made for
 * them 0700 (x added wherever r is: 0644 gives 0755). */
#define ST_OUTDIR_MODE 0600

/*
 * Open the output directory path, creating it (and missing parents) with
 * mode 0700 (st_outdir__open_mode: from the files' mode). Everything made
 * in it (files, snapshot directories, the directory itself and its parents
 * when made now) gets exactly that mode whatever the umask, and, when root
 * runs under sudo (SUDO_UID, SUDO_GID), is given to the invoking user. An
 * existing directory keeps its mode. Refused: a last component that is a symlink (even a dangling
 * one) or not a directory; as root (euid 0), a directory st_outdir__trusted
 * rejects. Then a probe file is written and removed, so a read-only or full
 * file system fails here, before any profiling. Returns 0 or negative errno
 * with one line on stderr naming the directory, why, and what to do.
 */
int st_outdir__open(const char *path, struct st_outdir **out);
/* The same with files of mode `mode` (0: ST_OUTDIR_MODE), e.g. 0644 to
 * share the reports (--output-mode). */
int st_outdir__open_mode(const char *path, mode_t mode, struct st_outdir **out);
/* The same, saying nothing: a service trying again, every interval, a
 * directory that failed (a full disk) tells its user itself, once. */
int st_outdir__retry(const char *path, mode_t mode, struct st_outdir **out);
void st_outdir__free(struct st_outdir *d);
const char *st_outdir__path(const struct st_outdir *d);

/*
 * Whether a process of effective uid euid may write into an existing
 * directory st: anyone but root, always; root only into a directory it owns,
 * or owned by sudo_uid (the invoking user from SUDO_UID, -1 if none) when
 * not group/world-writable, and never into a group/world-writable one without
 * the sticky bit (anyone could replace the reports). 0, or -EPERM with the
 * reason in why.
 */
int st_outdir__trusted(uid_t euid, long sudo_uid, const struct stat *st, char *why,
		       size_t len);

/*
 * Writes stop (fail with ECANCELED, temporaries removed) once
 * (*flag & mask) != 0: a second SIGINT aborts the reports being written.
 * Directories made by st_outdir__mktemp inherit it.
 */
void st_outdir__set_abort(struct st_outdir *d, const volatile sig_atomic_t *flag, int mask);

/* Start writing NAME in d: a new temporary file, its stream in *f. */
int st_outfile__begin(struct st_outdir *d, const char *name, struct st_outfile **out, FILE **f);
/*
 * Finish: when err (the writer's result) is 0 and every write, the flush and
 * fsync succeeded, rename the temporary over NAME; otherwise remove it. One
 * line on stderr on failure ("cannot write DIR/NAME: No space left on
 * device"), none when aborted. Frees of (NULL is fine). 0 or negative errno
 * (-ECANCELED when aborted).
 */
int st_outfile__end(struct st_outfile *of, int err);

/* A whole small file (summary.txt). */
int st_outdir__write_text(struct st_outdir *d, const char *name, const char *text);

/* A new directory ".tmp-ID-HINT-XXXXXXXX" in d, opened as *out. */
int st_outdir__mktemp(struct st_outdir *d, const char *hint, struct st_outdir **out);
/* Rename sub (from st_outdir__mktemp on d) to name, which must not exist;
 * on failure remove it. Frees sub. 0 or negative errno (one line). */
int st_outdir__commit(struct st_outdir *d, struct st_outdir *sub, const char *name);
/* Remove sub (from st_outdir__mktemp on d) and its files; free it. */
void st_outdir__discard(struct st_outdir *d, struct st_outdir *sub);
/* Remove d/name, a directory of files (not following links). 0 or -errno. */
int st_outdir__remove(struct st_outdir *d, const char *name);
/* d/name becomes a symlink to target, atomically. 0 or -errno. */
int st_outdir__symlink(struct st_outdir *d, const char *target, const char *name);
/* lstat of d/name: 0 when it exists. */
int st_outdir__exists(struct st_outdir *d, const char *name);
/* The entry names of d (for pruning): calls fn for each; 0 or -errno. */
int st_outdir__list(struct st_outdir *d, int (*fn)(void *ctx, const char *name), void *ctx);

/* Whether temporary name's writer is gone (another boot, no process of its
 * pid, or one started at another time). Names without a writer's identity
 * (another program's, an older stacktreed's) are never dead: kept. */
bool st_outdir__tmp_dead(const char *name);
/* Remove the temporaries of d (files, links, snapshot directories) whose
 * writers are gone, never a live writer's; one line on stderr when some
 * were. The number removed, or -errno. */
int st_outdir__sweep(struct st_outdir *d);

#endif
