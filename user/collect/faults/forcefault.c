/* forcefault.c - forced page faults on target processes (--force-faults);
 * see forcefault.h and kernel-notes/forced-faults.md. */
#include "forcefault.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacktree.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#define PAGE 4096ull
#define FF_MAGIC "stacktreed-forcefault 2"
#define FF_MAGIC_V1 "stacktreed-forcefault 1\n"
#define FF_MAX_RANGES 4096	/* private writable mappings followed per target */
#define FF_MAX_BATCH 4096	/* pages forced per target per tick */
#define FF_OVERSAMPLE 4		/* rounds of picks (some candidates are not resident) */
#define FF_IOV_MAX 1024		/* UIO_MAXIOV */
#define FF_SWAP_PRIO 32767	/* our pages go to our device, not another swap */

extern char **environ;

/* ---- the state file (pure) ---- */

static int parse_uint(const char *s, size_t len, int *out)
{
	long v = 0;

	if (!len || len > 9)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	*out = (int)v;
	return 0;
}

static int parse_u64(const char *s, size_t len, __u64 *out)
{
	__u64 v = 0;

	if (!len || len > 19)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (__u64)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Lower-case 8-4-4-4-12 hex. */
static bool is_uuid(const char *s, size_t len)
{
	if (len != ST_FF_ID_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-' :
		    !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

#define FF_MAX_WORDS 7

/* A line's words, split at single spaces (an empty word: -EINVAL); their
 * count. */
static int split(const char *l, size_t len, const char *w[], size_t wl[])
{
	int n = 0;
	size_t start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && l[i] != ' ')
			continue;
		if (i == start || n == FF_MAX_WORDS)
			return -EINVAL;
		w[n] = l + start;
		wl[n++] = i - start;
		start = i + 1;
	}
	return n;
}

static bool word_is(const char *w, size_t wl, const char *lit)
{
	return wl == strlen(lit) && !memcmp(w, lit, wl);
}

static int parse_state_line(const char *l, size_t ll, struct st_ffstate *s)
{
	const char *w[FF_MAX_WORDS];
	size_t wl[FF_MAX_WORDS];
	int n = split(l, ll, w, wl), num;

	if (n == 2 && word_is(w[0], wl[0], "pid") && !s->pid)
		return parse_uint(w[1], wl[1], &s->pid) || s->pid <= 0 ? -EINVAL : 0;
	if (n == 2 && word_is(w[0], wl[0], "boot") && !s->boot[0] && is_uuid(w[1], wl[1])) {
		memcpy(s->boot, w[1], wl[1]);
		s->boot[wl[1]] = 0;
		return 0;
	}
	/* zram N added diskseq S ino I */
	if (n == 7 && word_is(w[0], wl[0], "zram") && s->zram < 0 && word_is(w[2], wl[2], "added") &&
	    word_is(w[3], wl[3], "diskseq") && word_is(w[5], wl[5], "ino")) {
		if (parse_uint(w[1], wl[1], &num) || parse_u64(w[4], wl[4], &s->diskseq) ||
		    parse_u64(w[6], wl[6], &s->ino))
			return -EINVAL;
		s->zram = num;
		s->added = true;
		return 0;
	}
	/* swapon N uuid UUID */
	if (n == 4 && word_is(w[0], wl[0], "swapon") && !s->swapon && s->zram >= 0 &&
	    word_is(w[2], wl[2], "uuid") && is_uuid(w[3], wl[3])) {
		if (parse_uint(w[1], wl[1], &num) || num != s->zram)
			return -EINVAL;
		memcpy(s->uuid, w[3], wl[3]);
		s->uuid[wl[3]] = 0;
		s->swapon = true;
		return 0;
	}
	return -EINVAL;
}

int st_ffstate__parse(const char *buf, size_t len, struct st_ffstate *out)
{
	struct st_ffstate s = { .pid = 0, .zram = -1 };
	size_t pos = 0, line = 0;

	if (len > ST_FF_STATE_MAX)
		return -EINVAL;
	while (pos < len) {
		const char *l = buf + pos;
		const char *nl = memchr(l, '\n', len - pos);
		size_t ll;

		if (!nl)	/* every line ends with a newline: a cut file is refused */
			return -EINVAL;
		ll = (size_t)(nl - l);
		pos += ll + 1;
		if (line++ == 0) {
			if (ll != strlen(FF_MAGIC) || memcmp(l, FF_MAGIC, ll))
				return -EINVAL;
		} else if (parse_state_line(l, ll, &s)) {
			return -EINVAL;
		}
	}
	if (!s.pid || !s.boot[0])
		return -EINVAL;
	*out = s;
	return 0;
}

int st_ffstate__format(const struct st_ffstate *s, char *buf, size_t len)
{
	size_t n = 0;
	int m;

	m = snprintf(buf, len, FF_MAGIC "\npid %d\nboot %s\n", s->pid, s->boot);
	if (m < 0 || (size_t)m >= len)
		return -ENOSPC;
	n = (size_t)m;
	if (s->zram >= 0 && s->added) {
		m = snprintf(buf + n, len - n, "zram %d added diskseq %llu ino %llu\n", s->zram,
			     (unsigned long long)s->diskseq, (unsigned long long)s->ino);
		if (m < 0 || (size_t)m >= len - n)
			return -ENOSPC;
		n += (size_t)m;
	}
	if (s->zram >= 0 && s->added && s->swapon) {
		m = snprintf(buf + n, len - n, "swapon %d uuid %s\n", s->zram, s->uuid);
		if (m < 0 || (size_t)m >= len - n)
			return -ENOSPC;
		n += (size_t)m;
	}
	return (int)n;
}

unsigned st_ffstate__plan(const struct st_ffstate *s, const struct st_ffseen *seen, char *why,
			  size_t len)
{
	why[0] = 0;
	if (s->zram < 0)
		return 0;
	if (!seen->same_boot) {
		snprintf(why, len, "the machine has restarted since (another boot id): nothing of "
			 "that session's remains, zram%d is not its device", s->zram);
		return 0;
	}
	if (!seen->dev)
		return 0;	/* removed since: nothing left */
	if (seen->ino != s->ino || (s->diskseq && seen->diskseq != s->diskseq)) {
		snprintf(why, len, "zram%d is another device now (disk sequence %llu, sysfs inode "
			 "%llu; the session's was %llu, %llu): left alone, not ours to reset or "
			 "remove", s->zram,
			 (unsigned long long)seen->diskseq, (unsigned long long)seen->ino,
			 (unsigned long long)s->diskseq, (unsigned long long)s->ino);
		return 0;
	}
	if (seen->swap && (!s->swapon || strcmp(seen->uuid, s->uuid))) {
		snprintf(why, len, "the swap on /dev/zram%d is not the one that session made (UUID "
			 "%s, not %s): zram%d and its swap left alone", s->zram,
			 seen->uuid[0] ? seen->uuid : "unreadable", s->swapon ? s->uuid : "none",
			 s->zram);
		return 0;
	}
	return (seen->swap ? ST_FF_SWAPOFF : 0) | ST_FF_RESET | (s->added ? ST_FF_REMOVE : 0);
}

/* ---- page selection (pure) ---- */

static __u64 xorshift(__u64 *s)
{
	__u64 x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

size_t st_ff__pick(const struct st_ff_range *r, size_t nr, size_t n, __u64 *seed, __u64 *out)
{
	__u64 total = 0;
	size_t k = 0;

	for (size_t i = 0; i < nr; i++)
		total += (r[i].end - r[i].start) / PAGE;
	if (!total || !n)
		return 0;
	for (size_t j = 0; j < n; j++) {
		__u64 p = xorshift(seed) % total;	/* bias < total / 2^64 */
		size_t i = 0;

		for (; i < nr && p >= (r[i].end - r[i].start) / PAGE; i++)
			p -= (r[i].end - r[i].start) / PAGE;
		if (i < nr)
			out[k++] = r[i].start + p * PAGE;
	}
	qsort(out, k, sizeof(*out), cmp_u64);
	n = k;
	k = 0;
	for (size_t j = 0; j < n; j++)
		if (!k || out[k - 1] != out[j])
			out[k++] = out[j];
	return k;
}

/* ---- the system: sysfs, swap, commands ---- */

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;
	size_t len = strlen(s);

	if (fd < 0)
		return -errno;
	if (write(fd, s, len) != (ssize_t)len)
		err = -errno ? -errno : -EIO;
	close(fd);
	return err;
}

/* write_str() to a zram device's reset or hot_remove, which refuse
 * (EBUSY) while anything holds the device open: the mkswap a session
 * spawned outlives it when the session is killed (an orphan; under load
 * the next start's restore met it, 2026-12-01). Tried again for up to
 * 5 s. */
static int write_str_idle(const char *path, const char *s)
{
	const struct timespec pause = { .tv_nsec = 50 * 1000 * 1000 };
	int err = write_str(path, s);

	for (int i = 0; i < 100 && err == -EBUSY; i++) {
		nanosleep(&pause, NULL);
		err = write_str(path, s);
	}
	return err;
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return (int)n;
}

/* Run a program of util-linux/kmod by absolute path, no shell, output to
 * /dev/null; its exit status, or negative errno. */
static int run(const char *const argv[])
{
	posix_spawn_file_actions_t fa;
	char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	pid_t pid;
	int st, err;

	if (access(argv[0], X_OK))
		return -ENOENT;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return -err;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -ECHILD;
}

static bool swap_active(int zram)
{
	char dev[32], line[512];
	size_t dl;
	bool on = false;
	FILE *f = fopen("/proc/swaps", "re");

	snprintf(dev, sizeof(dev), "/dev/zram%d ", zram);
	dl = strlen(dev);
	if (!f)
		return false;
	while (!on && fgets(line, sizeof(line), f))
		on = strncmp(line, dev, dl) == 0;
	fclose(f);
	return on;
}

/* swapoff(2) brings the pages back; a signal (a second Ctrl-C) interrupts
 * it with EINTR: try again. ENOMEM (a page it could not bring back at once,
 * seen while the machine was busy) is tried again for up to 2 s. */
static int do_swapoff(int zram)
{
	const struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };
	char dev[32];
	int nomem = 0;

	snprintf(dev, sizeof(dev), "/dev/zram%d", zram);
	for (int i = 0; i < 100; i++) {
		if (!swapoff(dev))
			return 0;
		if (errno == ENOMEM && ++nomem <= 20) {
			nanosleep(&pause, NULL);
			continue;
		}
		if (errno != EINTR)
			return -errno;
	}
	return -EINTR;
}

/* 16 bytes as a UUID's text (8-4-4-4-12 lower-case hex). */
static void uuid_text(const unsigned char b[16], char out[ST_FF_ID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0, o = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[b[i] >> 4];
		out[o++] = hex[b[i] & 15];
		out[o] = 0;
	}
}

static int read_boot_id(char out[ST_FF_ID_LEN + 1])
{
	char buf[64];
	int n = read_small("/proc/sys/kernel/random/boot_id", buf, sizeof(buf));

	if (n < 0)
		return n;
	buf[strcspn(buf, "\n")] = 0;
	if (!is_uuid(buf, strlen(buf)))
		return -EINVAL;
	memcpy(out, buf, ST_FF_ID_LEN + 1);
	return 0;
}

/* A zram device's identity: its disk sequence number (0 where the kernel
 * has none: before 5.15) and its sysfs directory's inode; -ENOENT when gone. */
static int zram_identity(int zram, __u64 *diskseq, __u64 *ino)
{
	char path[96], buf[32];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/block/zram%d", zram);
	if (stat(path, &st))
		return -errno;
	*ino = st.st_ino;
	*diskseq = 0;
	snprintf(path, sizeof(path), "/sys/block/zram%d/diskseq", zram);
	if (read_small(path, buf, sizeof(buf)) > 0 &&
	    parse_u64(buf, strcspn(buf, "\n"), diskseq))
		*diskseq = 0;
	return 0;
}

/* The UUID in /dev/zramN's swap header (mkswap's: "SWAPSPACE2" at the end
 * of the first page, the UUID at byte 1036), or "". */
static void swap_uuid(int zram, char out[ST_FF_ID_LEN + 1])
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *h;
	char dev[32];
	int fd;

	out[0] = 0;
	if (page < 4096 || page > 65536 || !(h = malloc((size_t)page)))
		return;
	snprintf(dev, sizeof(dev), "/dev/zram%d", zram);
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && pread(fd, h, (size_t)page, 0) == page &&
	    !memcmp(h + page - 10, "SWAPSPACE2", 10)) {
		uuid_text(h + 1036, out);
	}
	if (fd >= 0)
		close(fd);
	free(h);
}

static void observe(const struct st_ffstate *s, struct st_ffseen *seen)
{
	char boot[ST_FF_ID_LEN + 1];

	*seen = (struct st_ffseen){ 0 };
	if (s->zram < 0)
		return;
	seen->same_boot = !read_boot_id(boot) && !strcmp(boot, s->boot);
	seen->dev = !zram_identity(s->zram, &seen->diskseq, &seen->ino);
	seen->swap = seen->dev && swap_active(s->zram);
	if (seen->swap)
		swap_uuid(s->zram, seen->uuid);
}

/* Undo what s records and is still its session's (st_ffstate__plan());
 * what was done into done, what was left and why into left. 0 or the first
 * error. */
static int undo(const struct st_ffstate *s, char *done, size_t len, char *left, size_t llen)
{
	char path[96], num[16];
	struct st_ffseen seen;
	unsigned todo;
	int err = 0, e;
	size_t n = 0;

	done[0] = 0;
	observe(s, &seen);
	todo = st_ffstate__plan(s, &seen, left, llen);
	if (todo & ST_FF_SWAPOFF) {
		e = do_swapoff(s->zram);
		n += (size_t)snprintf(done + n, len - n, "%sswapoff /dev/zram%d%s", n ? ", " : "",
				      s->zram, e ? " FAILED" : "");
		err = err ? err : e;
	}
	snprintf(path, sizeof(path), "/sys/block/zram%d/reset", s->zram);
	if (!err && (todo & ST_FF_RESET) && n < len) {
		e = write_str_idle(path, "1");
		n += (size_t)snprintf(done + n, len - n, "%szram%d reset%s", n ? ", " : "",
				      s->zram, e ? " FAILED" : "");
		err = err ? err : e;
	}
	if (!err && (todo & ST_FF_REMOVE) && n < len) {
		snprintf(num, sizeof(num), "%d", s->zram);
		e = write_str_idle("/sys/class/zram-control/hot_remove", num);
		n += (size_t)snprintf(done + n, len - n, "%szram%d removed%s", n ? ", " : "",
				      s->zram, e ? " FAILED" : "");
		err = err ? err : e;
	}
	if (n >= len)
		done[len - 1] = 0;
	return err;
}

/* The state directory: root's, nobody else may write it. */
static int state_dir(const char *state_path)
{
	char dir[256];
	const char *slash = strrchr(state_path, '/');
	struct stat st;

	if (!slash || (size_t)(slash - state_path) >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, state_path, (size_t)(slash - state_path));
	dir[slash - state_path] = 0;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

/* Write the whole state before the change it announces: a new file renamed
 * over the old one, synced. */
static int state_write(const char *path, const struct st_ffstate *s)
{
	char buf[256], tmp[300];
	int n = st_ffstate__format(s, buf, sizeof(buf)), fd, err = 0;

	if (n < 0)
		return n;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)n) != n || fsync(fd))
		err = errno ? -errno : -EIO;
	close(fd);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* The state file and its directory (ours by name; left if not empty). */
static void state_remove(const char *path)
{
	char dir[256];
	const char *slash = strrchr(path, '/');

	unlink(path);
	if (slash && (size_t)(slash - path) < sizeof(dir)) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = 0;
		rmdir(dir);
	}
}

static bool is_stacktreed(int pid)
{
	char path[64], comm[32];

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	return read_small(path, comm, sizeof(comm)) > 0 && strcmp(comm, "stacktreed\n") == 0;
}

int st_forcefault__recover(const char *state_path)
{
	char buf[ST_FF_STATE_MAX + 1], done[256], left[256], boot[ST_FF_ID_LEN + 1];
	struct st_ffstate s;
	struct stat st;
	bool same_boot;
	ssize_t n;
	int fd, err;

	state_path = state_path ? state_path : ST_FF_STATE_PATH;
	fd = open(state_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
		close(fd);
		fprintf(stderr, "stacktreed: %s is not a regular file of root's that only root "
			"writes: not used; check /proc/swaps and /sys/block/zram* and remove it\n",
			state_path);
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n >= (ssize_t)strlen(FF_MAGIC_V1) && !memcmp(buf, FF_MAGIC_V1, strlen(FF_MAGIC_V1))) {
		/* an older stacktreed's: no identities, so nothing it names is
		 * provably still its own */
		state_remove(state_path);
		fprintf(stderr, "stacktreed: %s, left by an older stacktreed's --force-faults "
			"session, names no device identity: nothing touched (check /proc/swaps "
			"and /sys/block/zram*); removed\n", state_path);
		return 0;
	}
	if (n < 0 || st_ffstate__parse(buf, (size_t)n, &s)) {
		fprintf(stderr, "stacktreed: %s cannot be parsed: not used; check /proc/swaps "
			"and /sys/block/zram* and remove it\n", state_path);
		return -EINVAL;
	}
	same_boot = !read_boot_id(boot) && !strcmp(boot, s.boot);
	if (same_boot && s.pid != getpid() && kill(s.pid, 0) == 0 && is_stacktreed(s.pid))
		return -EBUSY;	/* its session: the caller says so if it wants to force */
	err = undo(&s, done, sizeof(done), left, sizeof(left));
	if (err) {
		fprintf(stderr, "stacktreed: cannot restore what a crashed session (pid %d) left "
			"(%s): %s: %s; see %s\n", s.pid, done, strerror(-err),
			"swapoff /dev/zramN, echo 1 > /sys/block/zramN/reset", state_path);
		return err;
	}
	state_remove(state_path);
	if (left[0])
		fprintf(stderr, "stacktreed: a crashed --force-faults session (pid %d) named "
			"zram%d: %s%s%s\n", s.pid, s.zram, left, done[0] ? "; restored: " : "",
			done);
	else
		fprintf(stderr, "stacktreed: restored what a crashed --force-faults session "
			"(pid %d) left: %s\n", s.pid, done[0] ? done : "nothing was changed yet");
	return 0;
}

/* ---- a session ---- */

struct ff_target {
	int pid, pidfd, pagemap;
	struct st_ff_range *ranges;
	size_t nr;
	double maps_at;			/* when the ranges were read */
	bool gone;
	__u64 forced, kept, errors;	/* pages paged out, left resident, failed calls */
	int first_err;
	/* CPU time (clock ticks) and major faults at three moments */
	__u64 cpu[3], user[3], majflt[3];
	double at[3];			/* added, forcing started, last seen forcing */
};

struct st_forcefault {
	struct st_forcefault_opts o;
	char state_path[256];
	struct st_ffstate st;
	bool restored;
	int restore_err;
	char changed[256], undone[256], left[256];
	struct ff_target *t;
	size_t nt;
	double start, last, budget, force_s;
	bool forcing;
	__u64 seed, candidates, skipped;
	__u64 *cand;
	struct iovec *iov;
};

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail_line(const char *what, int err)
{
	fprintf(stderr, "stacktreed: --force-faults: %s: %s\n", what, strerror(-err));
}

/* A random (version 4) UUID as text. */
static int new_uuid(char out[ST_FF_ID_LEN + 1])
{
	unsigned char b[16];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return errno ? -errno : -EIO;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	uuid_text(b, out);
	return 0;
}

/* A zram device of our own, made swap; each step recorded first. */
static int setup_swap(struct st_forcefault *f)
{
	char buf[32], path[96], dev[32];
	const char *mkswap[] = { "/usr/sbin/mkswap", "-q", "-L", ST_FF_SWAP_LABEL, "-U", f->st.uuid,
				 dev, NULL };
	int err, n;

	if (access("/sys/class/zram-control/hot_add", F_OK)) {
		const char *modprobe[] = { "/usr/sbin/modprobe", "zram", "num_devices=0", NULL };

		/* zram as a module not loaded yet: loading it changes nothing else */
		if (run(modprobe) || access("/sys/class/zram-control/hot_add", F_OK)) {
			fprintf(stderr, "stacktreed: --force-faults: no mechanism available: zram "
				"is missing (no /sys/class/zram-control/hot_add and `modprobe "
				"zram` failed): build the kernel with CONFIG_ZRAM=y or =m; "
				"anonymous pages can be forced out only to swap\n");
			return -ENOTSUP;
		}
	}
	if ((err = state_write(f->state_path, &f->st))) {
		fail_line("cannot write the state file " ST_FF_STATE_PATH, err);
		return err;
	}
	n = read_small("/sys/class/zram-control/hot_add", buf, sizeof(buf));
	if (n <= 0 || parse_uint(buf, strcspn(buf, "\n"), &f->st.zram)) {
		fail_line("cannot add a zram device (/sys/class/zram-control/hot_add)",
			  n < 0 ? n : -EINVAL);
		return n < 0 ? n : -EINVAL;
	}
	f->st.added = true;
	/* the device's identity: a later start undoes it only if it is still this one */
	if ((err = zram_identity(f->st.zram, &f->st.diskseq, &f->st.ino))) {
		fail_line("the zram device just added is gone (/sys/block/zramN)", err);
		f->st.zram = -1;
		return err;
	}
	if ((err = state_write(f->state_path, &f->st))) {
		fail_line("cannot write the state file", err);
		return err;
	}
	snprintf(f->changed, sizeof(f->changed), "zram%d added (%u MiB)", f->st.zram,
		 ST_FF_ZRAM_MB);
	snprintf(path, sizeof(path), "/sys/block/zram%d/disksize", f->st.zram);
	snprintf(buf, sizeof(buf), "%uM", ST_FF_ZRAM_MB);
	if ((err = write_str(path, buf))) {
		fail_line("cannot size the zram device", err);
		return err;
	}
	snprintf(dev, sizeof(dev), "/dev/zram%d", f->st.zram);
	if ((err = new_uuid(f->st.uuid))) {
		fail_line("getrandom", err);
		return err;
	}
	f->st.swapon = true;	/* recorded before mkswap: the UUID names our swap area */
	if ((err = state_write(f->state_path, &f->st))) {
		fail_line("cannot write the state file", err);
		return err;
	}
	if ((n = run(mkswap))) {
		fprintf(stderr, "stacktreed: --force-faults: mkswap %s failed (%s): install "
			"util-linux\n", dev, n < 0 ? strerror(-n) : "exit status");
		return n < 0 ? n : -EIO;
	}
	if (swapon(dev, SWAP_FLAG_PREFER | (FF_SWAP_PRIO << SWAP_FLAG_PRIO_SHIFT))) {
		err = -errno;
		fprintf(stderr, "stacktreed: --force-faults: swapon %s: %s (CONFIG_SWAP off?)\n",
			dev, strerror(-err));
		return err;
	}
	snprintf(f->changed + strlen(f->changed), sizeof(f->changed) - strlen(f->changed),
		 ", swap on %s (priority %d)", dev, FF_SWAP_PRIO);
	return 0;
}

int st_forcefault__new(const struct st_forcefault_opts *o, struct st_forcefault **out)
{
	struct st_forcefault *f = calloc(1, sizeof(*f));
	int err;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->o = *o;
	f->o.rate = o->rate ? o->rate : ST_FF_DEFAULT_RATE;
	snprintf(f->state_path, sizeof(f->state_path), "%s",
		 o->state_path ? o->state_path : ST_FF_STATE_PATH);
	f->st = (struct st_ffstate){ .pid = getpid(), .zram = -1 };
	if ((err = read_boot_id(f->st.boot))) {
		fail_line("cannot read /proc/sys/kernel/random/boot_id", err);
		goto cleanup;
	}
	f->seed = ((__u64)getpid() << 32) ^ (__u64)(mono() * 1e9) ^ 0x9e3779b97f4a7c15ull;
	f->cand = calloc(FF_MAX_BATCH, sizeof(*f->cand));
	f->iov = calloc(FF_IOV_MAX, sizeof(*f->iov));
	if (!f->cand || !f->iov) {
		err = -ENOMEM;
		goto cleanup;
	}
	if ((err = state_dir(f->state_path))) {
		fail_line("the state directory " ST_FF_STATE_DIR " must be root's, mode 0700", err);
		goto cleanup;
	}
	if ((err = setup_swap(f)))
		goto cleanup;
	*out = f;
	return 0;
cleanup:
	st_forcefault__free(f);
	return err;
}

/* utime + stime, utime and majflt of /proc/PID/stat. */
static int read_stat(int pid, __u64 *cpu, __u64 *user, __u64 *majflt)
{
	char path[64], buf[1024], *p;
	unsigned long long maj, ut, st;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return -ENOENT;
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %llu %*u %llu %llu", &maj, &ut,
		   &st) != 3)
		return -EINVAL;
	*cpu = ut + st;
	*user = ut;
	*majflt = maj;
	return 0;
}

static void mark(struct ff_target *t, int i, double now)
{
	if (!t->gone && read_stat(t->pid, &t->cpu[i], &t->user[i], &t->majflt[i]) == 0)
		t->at[i] = now;
	else
		t->gone = true;
}

int st_forcefault__add_target(struct st_forcefault *f, int pid)
{
	struct ff_target *n, *t;
	char path[64];
	int err;

	n = realloc(f->t, (f->nt + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	f->t = n;
	t = &f->t[f->nt];
	*t = (struct ff_target){ .pid = pid, .pidfd = -1, .pagemap = -1 };
	t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0) {
		err = -errno;
		fprintf(stderr, "stacktreed: --force-faults: pidfd_open(%d): %s (Linux 5.3)\n", pid,
			strerror(-err));
		return err;
	}
	/* process_madvise(2) is Linux 5.10; MADV_PAGEOUT 5.4: probe with no range */
	if (syscall(SYS_process_madvise, t->pidfd, f->iov, 0, MADV_PAGEOUT, 0) < 0) {
		err = -errno;
		fprintf(stderr, "stacktreed: --force-faults: no mechanism available: "
			"process_madvise(MADV_PAGEOUT) on %d: %s (needs Linux 5.10)\n", pid,
			strerror(-err));
		close(t->pidfd);
		return err;
	}
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	t->pagemap = open(path, O_RDONLY | O_CLOEXEC);
	if (t->pagemap < 0) {
		err = -errno;
		fprintf(stderr, "stacktreed: --force-faults: %s: %s\n", path, strerror(-err));
		close(t->pidfd);
		return err;
	}
	mark(t, 0, mono());
	f->nt++;
	return 0;
}

/* The target's private writable mappings ("rw-p"): the pages that can be
 * forced (anonymous ones, checked in pagemap). */
static void read_ranges(struct ff_target *t)
{
	char path[64], line[512];
	struct st_ff_range *r;
	size_t n = 0, cap = 64;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	f = fopen(path, "re");
	if (!f) {
		t->gone = true;
		return;
	}
	r = malloc(cap * sizeof(*r));
	while (r && n < FF_MAX_RANGES && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		char perm[5];
		int got = sscanf(line, "%llx-%llx %4s", &a, &b, perm);

		if (!strchr(line, '\n'))	/* a long path: skip the rest of it, unparsed */
			while (fgets(line, sizeof(line), f) && !strchr(line, '\n'))
				;
		if (got != 3 || a >= b || strcmp(perm, "rw-p"))
			continue;
		if (n == cap) {
			struct st_ff_range *g = realloc(r, 2 * cap * sizeof(*r));

			if (!g)
				break;
			r = g;
			cap *= 2;
		}
		r[n++] = (struct st_ff_range){ a, b };
	}
	fclose(f);
	if (!r)
		return;
	free(t->ranges);
	t->ranges = r;
	t->nr = n;
}

/* pagemap: present (bit 63), not swapped (62), anonymous private (61 clear). */
static bool resident_anon(int fd, __u64 addr)
{
	__u64 e;

	if (pread(fd, &e, sizeof(e), (off_t)(addr / PAGE * 8)) != sizeof(e))
		return false;
	return (e >> 63 & 1) && !(e >> 62 & 1) && !(e >> 61 & 1);
}

static bool present(int fd, __u64 addr)
{
	__u64 e;

	return pread(fd, &e, sizeof(e), (off_t)(addr / PAGE * 8)) == sizeof(e) && (e >> 63 & 1);
}

static void page_out(struct st_forcefault *f, struct ff_target *t, __u64 *pages, size_t n)
{
	size_t done = 0;

	while (done < n) {
		size_t niov = 0;
		ssize_t r;

		for (; done < n; done++) {
			if (niov && (uintptr_t)f->iov[niov - 1].iov_base + f->iov[niov - 1].iov_len ==
					    pages[done]) {
				f->iov[niov - 1].iov_len += PAGE;
				continue;
			}
			if (niov == FF_IOV_MAX)
				break;
			f->iov[niov++] = (struct iovec){ (void *)(uintptr_t)pages[done], PAGE };
		}
		r = syscall(SYS_process_madvise, t->pidfd, f->iov, niov, MADV_PAGEOUT, 0);
		if (r < 0) {
			if (errno == ESRCH)
				t->gone = true;
			if (!t->first_err)
				t->first_err = errno;
			t->errors++;
		}
	}
}

static void force_target(struct st_forcefault *f, struct ff_target *t, size_t want, double now)
{
	size_t nc, k = 0;

	if (now - t->maps_at >= 1.0) {
		read_ranges(t);
		t->maps_at = now;
	}
	if (t->gone || !t->nr || !want)
		return;
	if (want > FF_MAX_BATCH)
		want = FF_MAX_BATCH;
	/* rounds of uniform picks until want resident pages (not the first want
	 * of one sorted oversample: that would favour low addresses) */
	for (int round = 0; round < FF_OVERSAMPLE && k < want; round++) {
		size_t m;

		nc = st_ff__pick(t->ranges, t->nr, want - k, &f->seed, f->cand + k);
		f->candidates += nc;
		for (size_t i = 0, j = k; i < nc; i++)
			if (resident_anon(t->pagemap, f->cand[j + i]))
				f->cand[k++] = f->cand[j + i];
			else
				f->skipped++;
		m = k;
		qsort(f->cand, m, sizeof(*f->cand), cmp_u64);	/* and no page twice */
		for (size_t i = k = 0; i < m; i++)
			if (!k || f->cand[k - 1] != f->cand[i])
				f->cand[k++] = f->cand[i];
	}
	if (!k)
		return;
	if (f->o.map_fd >= 0)
		for (size_t i = 0; i < k; i++) {
			struct st_forced_key key = { .tgid = (__u32)t->pid, .page = f->cand[i] };
			__u8 one = 1;

			bpf_map_update_elem(f->o.map_fd, &key, &one, BPF_ANY);
		}
	page_out(f, t, f->cand, k);
	/* still present: not paged out, unless it faulted back in meanwhile (then
	 * the fault program took its key already) */
	for (size_t i = 0; i < k; i++) {
		struct st_forced_key key = { .tgid = (__u32)t->pid, .page = f->cand[i] };

		if (present(t->pagemap, f->cand[i]) &&
		    (f->o.map_fd < 0 || bpf_map_delete_elem(f->o.map_fd, &key) == 0))
			t->kept++;
		else
			t->forced++;
	}
}

void st_forcefault__tick(struct st_forcefault *f, double now)
{
	size_t n, alive = 0, share, i;
	double t0;

	if (!f || f->restored)
		return;
	if (!f->start)
		f->start = now;
	if (now - f->start < ST_FF_BASELINE_S)
		return;
	if (!f->forcing) {
		for (i = 0; i < f->nt; i++) {
			struct ff_target *t = &f->t[i];
			char path[64];

			/* again: a launched command has exec'd since (pagemap is of one mm) */
			snprintf(path, sizeof(path), "/proc/%d/pagemap", t->pid);
			close(t->pagemap);
			t->pagemap = open(path, O_RDONLY | O_CLOEXEC);
			if (t->pagemap < 0)
				t->gone = true;
			mark(t, 1, mono());
		}
		f->forcing = true;
		f->last = now;
		return;
	}
	for (i = 0; i < f->nt; i++)	/* the latest "during" measure: a target may exit */
		mark(&f->t[i], 2, mono());
	f->budget += f->o.rate * (now - f->last);
	f->last = now;
	if (f->budget > f->o.rate * 0.5)	/* a late tick does not burst */
		f->budget = f->o.rate * 0.5;
	n = (size_t)f->budget;
	for (i = 0; i < f->nt; i++)
		alive += !f->t[i].gone;
	if (!n || !alive)
		return;
	f->budget -= (double)n;
	t0 = mono();
	share = n / alive;
	for (i = 0; i < f->nt; i++) {
		if (f->t[i].gone)
			continue;
		force_target(f, &f->t[i], share + (n % alive ? 1 : 0), now);
		if (n % alive)
			n--;
	}
	f->force_s += mono() - t0;
}

int st_forcefault__restore(struct st_forcefault *f)
{
	if (!f || f->restored)
		return f ? f->restore_err : 0;
	f->restored = true;
	for (size_t i = 0; i < f->nt; i++)
		if (f->forcing)
			mark(&f->t[i], 2, mono());
	f->restore_err = undo(&f->st, f->undone, sizeof(f->undone), f->left, sizeof(f->left));
	if (f->left[0])
		fprintf(stderr, "stacktreed: --force-faults: %s\n", f->left);
	if (f->restore_err) {
		fprintf(stderr, "stacktreed: --force-faults: cannot restore the system (%s): %s; "
			"the next start tries again (%s)\n", f->undone, strerror(-f->restore_err),
			f->state_path);
		return f->restore_err;
	}
	state_remove(f->state_path);
	return 0;
}

static double per_s(__u64 a, __u64 b, double ta, double tb)
{
	long tick = sysconf(_SC_CLK_TCK);

	return tb > ta ? (double)(b - a) / (double)(tick > 0 ? tick : 100) / (tb - ta) : 0;
}

void st_forcefault__summary(const struct st_forcefault *f, __u64 forced_faults, FILE *out)
{
	__u64 forced = 0, kept = 0;
	double secs = 0;

	if (!f)
		return;
	for (size_t i = 0; i < f->nt; i++) {
		forced += f->t[i].forced;
		kept += f->t[i].kept;
		if (f->t[i].at[2] - f->t[i].at[1] > secs)
			secs = f->t[i].at[2] - f->t[i].at[1];
	}
	fprintf(out, "stacktreed: forced faults: rate %u pages/s (--force-faults), %" PRIu64
		" pages forced in %.2f s (%.0f/s), %" PRIu64 " not paged out by the kernel, %"
		PRIu64 " candidates not resident; forced faults seen: %" PRIu64
		"; daemon time forcing %.2f s (%.0f us per page)\n",
		f->o.rate, (uint64_t)forced, secs, secs > 0 ? (double)forced / secs : 0,
		(uint64_t)kept, (uint64_t)f->skipped, (uint64_t)forced_faults, f->force_s,
		forced ? f->force_s * 1e6 / (double)forced : 0);
	for (size_t i = 0; i < f->nt; i++) {
		const struct ff_target *t = &f->t[i];
		double ub = per_s(t->user[0], t->user[1], t->at[0], t->at[1]);
		double ud = per_s(t->user[1], t->user[2], t->at[1], t->at[2]);

		if (!t->at[2] || !t->at[1]) {
			fprintf(out, "stacktreed: forced faults: pid %d: not measured (%s)\n",
				t->pid, t->at[1] ? "exited at once" : "session shorter than the baseline");
			continue;
		}
		fprintf(out, "stacktreed: forced faults: pid %d: CPU %.2f s/s before, %.2f s/s "
			"while forcing; user %.2f -> %.2f s/s (%+.0f%%); major faults %.0f/s "
			"while forcing, %.0f/s before; %" PRIu64 " failed calls%s%s\n", t->pid,
			per_s(t->cpu[0], t->cpu[1], t->at[0], t->at[1]),
			per_s(t->cpu[1], t->cpu[2], t->at[1], t->at[2]), ub, ud,
			ub > 0 ? 100.0 * (ud - ub) / ub : 0,
			(double)(t->majflt[2] - t->majflt[1]) / (t->at[2] - t->at[1]),
			(double)(t->majflt[1] - t->majflt[0]) / (t->at[1] - t->at[0]),
			(uint64_t)t->errors, t->first_err ? ": " : "",
			t->first_err ? strerror(t->first_err) : "");
	}
	fprintf(out, "stacktreed: forced faults: system changed: %s; restored: %s\n",
		f->changed[0] ? f->changed : "nothing",
		!f->restored ? "not yet" : f->restore_err ? "FAILED (see above)" :
		f->undone[0] ? f->undone : f->left[0] ? "nothing of ours left (see above)" :
		"nothing to restore");
}

void st_forcefault__free(struct st_forcefault *f)
{
	if (!f)
		return;
	st_forcefault__restore(f);
	for (size_t i = 0; i < f->nt; i++) {
		if (f->t[i].pidfd >= 0)
			close(f->t[i].pidfd);
		if (f->t[i].pagemap >= 0)
			close(f->t[i].pagemap);
		free(f->t[i].ranges);
	}
	free(f->t);
	free(f->cand);
	free(f->iov);
	free(f);
}
