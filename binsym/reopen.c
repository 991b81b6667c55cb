/* reopen.c - a module's file again, after it was closed (see module.h).
 *
 * A module closes its file once its function symbols are read (and while it
 * is unreferenced); data symbols and stack variables are read later, on
 * demand, from the file opened again. Only a file whose content is known to
 * be the module's is taken: one of its verified files (device, inode, size
 * and modification time), or, for a module read from a root-only file, a
 * root-only file with its build id. Names are resolved inside the root of
 * the process the module was last found in (/proc/PID/root); once that
 * process is gone, in ours, where only one of the module's verified files
 * (the same inode, size and mtime) is taken.
 */
#include "binsym/module.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binsym/elf.h"
#include "binsym/vdso.h"

void st_mod__note_open(struct st_module *m, const char *open_path)
{
	char *copy;

	m->reopen_failed = false;	/* found again: worth another try */
	if (!open_path || (m->open_path && strcmp(m->open_path, open_path) == 0))
		return;
	copy = strdup(open_path);
	if (!copy)
		return;	/* best effort: the display paths remain */
	free(m->open_path);
	m->open_path = copy;
}

static bool same_id(const struct st_file_id *id, const struct stat *st)
{
	return id->dev == (__u64)st->st_dev && id->ino == (__u64)st->st_ino &&
	       id->size == (__u64)st->st_size && id->mtime_sec == st->st_mtim.tv_sec &&
	       id->mtime_nsec == st->st_mtim.tv_nsec;
}

bool st_mod__known_file(const struct st_module *m, const struct stat *st)
{
	for (size_t i = 0; i < m->nids; i++)
		if (same_id(&m->ids[i], st))
			return true;
	return false;
}

int st_mod__add_id(struct st_module *m, const struct stat *st)
{
	struct st_file_id *id;

	if (st_mod__known_file(m, st) || m->nids >= MAX_FILE_KEYS)
		return 0;
	if (m->nids == m->ids_cap) {
		size_t cap = m->ids_cap ? 2 * m->ids_cap : 2;

		id = realloc(m->ids, cap * sizeof(*id));
		if (!id)
			return -ENOMEM;
		m->ids = id;
		m->ids_cap = cap;
	}
	id = &m->ids[m->nids++];
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = st->st_size;
	id->mtime_sec = st->st_mtim.tv_sec;
	id->mtime_nsec = st->st_mtim.tv_nsec;
	return 0;
}

int st_mod__proc_root(const struct st_symbolizer *s, const char *open_path)
{
	char root[64];
	struct stat st;
	unsigned pid;
	int n = 0, fd;

	if (!open_path || sscanf(open_path, "/proc/%u/map_files/%n", &pid, &n) != 1 || !n)
		return -1;
	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == EPERM ? -EACCES : -errno;	/* never -1 */
	if (fstat(fd, &st) || ((__u64)st.st_dev == s->root_dev && (__u64)st.st_ino == s->root_ino)) {
		close(fd);
		return -1;	/* our own root: names resolve as they are */
	}
	return fd;
}

/* Open path (its first len bytes; in root_fd unless it is a map_files
 * link) as m's image: 0 with *out, or -errno. gone: the process is gone and
 * path is resolved in our root: only one of m's verified files is taken. */
static int try_open(struct st_symbolizer *s, const struct st_module *m, const char *path,
		    size_t len, int root_fd, bool gone, struct st_elf **out)
{
	struct st_safe_open o = s->open;
	char hex[ST_BUILD_ID_HEX_MAX];
	struct st_elf *e = NULL;
	struct stat st;
	char *copy;
	int fd, err;
	bool known;

	copy = strndup(path, len);
	if (!copy)
		return -ENOMEM;
	o.root_fd = strncmp(copy, "/proc/", 6) == 0 && m->open_path &&
		    strcmp(copy, m->open_path) == 0 ? -1 : root_fd;
	fd = st_safe_open(copy, &o, &st);
	free(copy);
	if (fd < 0)
		return fd;
	known = st_mod__known_file(m, &st);
	if (!known && (gone || !(m->trusted && m->build_id && st_file_trusted(&st)))) {
		close(fd);
		return -ESTALE;
	}
	err = st_elf__open_fd(fd, &e);	/* takes fd */
	if (err)
		return err;
	if (!known && (st_elf__build_id(e, hex) || strcmp(hex, m->build_id) != 0)) {
		st_elf__free(e);
		return -ESTALE;
	}
	*out = e;
	return 0;
}

static int reopen_vdso(struct st_elf **out)
{
	const void *image;
	size_t size;
	int err;

	err = st_vdso__image(&image, &size);
	if (err)
		return err;
	return st_elf__open_memory(image, size, out);
}

int st_mod__image(struct st_symbolizer *s, struct st_module *m, const char *path,
		  struct st_elf **out, bool *owned)
{
	const char *tried[3];
	size_t lens[3], n = 0, i, j;
	int err = -ENOENT, root_fd = -1;
	bool gone = false;

	*out = NULL;
	*owned = false;
	if (m->elf) {
		*out = m->elf;
		return 0;
	}
	if (m->reopen_failed)
		return -ENOENT;
	*owned = true;
	if (m == s->vdso) {
		err = reopen_vdso(out);
		goto cleanup;
	}
	if (m->open_path) {
		tried[n] = m->open_path;
		lens[n++] = strlen(m->open_path);
		/* a process gone leaves our root: only the module's very files
		 * are taken there (try_open()) */
		root_fd = st_mod__proc_root(s, m->open_path);
		gone = root_fd < -1;
		if (gone)
			root_fd = -1;
	}
	/* the display paths; a deleted file's name may be another file now */
	if (path && st_mod__display_len(path) == strlen(path)) {
		tried[n] = path;
		lens[n++] = strlen(path);
	}
	tried[n] = m->path;
	lens[n++] = strlen(m->path);
	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++) {
			if (lens[j] == lens[i] && memcmp(tried[j], tried[i], lens[i]) == 0)
				break;
		}
		if (j < i)
			continue;	/* the same name again */
		err = try_open(s, m, tried[i], lens[i], root_fd, gone, out);
		if (!err || err == -ENOMEM)
			break;
	}
cleanup:
	if (root_fd >= 0)
		close(root_fd);
	if (err) {
		*out = NULL;
		*owned = false;
		if (err != -ENOMEM)
			m->reopen_failed = true;
		return err == -ENOMEM ? err : -ENOENT;
	}
	return 0;
}
