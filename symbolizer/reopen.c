/* reopen.c - a module's file again, after it was closed (see module.h).
 *
 * A module closes its file once its function symbols are read (and while it
 * is unreferenced); data symbols and stack variables are read later, on
 * demand, from the file opened again. Only a file that is the module's very
 * image is taken: same build id, or, for images without one, the same
 * device, inode, size and modification time as the file first read.
 */
#include "symbolizer/module.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolizer/elf.h"
#include "symbolizer/vdso.h"

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

void st_mod__set_id(struct st_module *m, const struct stat *st)
{
	m->id.dev = st->st_dev;
	m->id.ino = st->st_ino;
	m->id.size = st->st_size;
	m->id.mtime_sec = st->st_mtim.tv_sec;
	m->id.mtime_nsec = st->st_mtim.tv_nsec;
}

static bool same_file(const struct st_module *m, const struct stat *st)
{
	return m->id.dev == (__u64)st->st_dev && m->id.ino == (__u64)st->st_ino &&
	       m->id.size == (__u64)st->st_size && m->id.mtime_sec == st->st_mtim.tv_sec &&
	       m->id.mtime_nsec == st->st_mtim.tv_nsec;
}

/* Open path (its first len bytes) as m's image: 0 with *out, or -errno. */
static int try_open(const struct st_module *m, const char *path, size_t len,
		    struct st_elf **out)
{
	char hex[ST_BUILD_ID_HEX_MAX];
	struct st_elf *e = NULL;
	struct stat st;
	char *copy;
	int fd, err;

	copy = strndup(path, len);
	if (!copy)
		return -ENOMEM;
	fd = open(copy, O_RDONLY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!m->build_id && !same_file(m, &st)) {
		close(fd);
		return -ESTALE;
	}
	err = st_elf__open_fd(fd, &e);	/* takes fd */
	if (err)
		return err;
	if (m->build_id && (st_elf__build_id(e, hex) || strcmp(hex, m->build_id) != 0)) {
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
	int err = -ENOENT;

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
		err = try_open(m, tried[i], lens[i], out);
		if (!err || err == -ENOMEM)
			break;
	}
cleanup:
	if (err) {
		*out = NULL;
		*owned = false;
		if (err != -ENOMEM)
			m->reopen_failed = true;
		return err == -ENOMEM ? err : -ENOENT;
	}
	return 0;
}
