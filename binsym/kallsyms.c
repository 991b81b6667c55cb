/* kallsyms.c - parsing /proc/kallsyms. */
#include "binsym/kallsyms.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "common/strtab.h"
#include "binsym/symtab.h"

/* "ffffffff81000000 T _stext" or "ffffffffc0a01000 t fn\t[mod]" */
static int parse_line(char *line, struct st_symtab *t, struct st_strtab *strs,
		      const char *kernel)
{
	const char *name, *module = kernel, *copy;
	char *end, *mod, type, sep;
	enum st_sym_bind bind;
	__u64 addr;
	int err;

	errno = 0;
	addr = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ' || !end[1] || end[2] != ' ')
		return -EINVAL;
	type = end[1];
	name = end + 3;
	end = (char *)name + strcspn(name, " \t\n");
	if (end == name)
		return -EINVAL;
	sep = *end;
	*end = '\0';
	if (!addr)
		return 0;
	if (!strchr("tTwW", type))
		return st_symtab__add_bound(t, addr);

	/* module in brackets after a tab */
	mod = sep == ' ' || sep == '\t' ? end + 1 + strspn(end + 1, " \t") : end;
	if (*mod == '[') {
		size_t len = strcspn(mod, "]\n");

		if (mod[len] == ']') {
			module = st_strtab__intern_len(strs, mod, len + 1);
			if (!module)
				return -ENOMEM;
		}
	}
	bind = isupper((unsigned char)type) ? (type == 'W' ? ST_BIND_WEAK : ST_BIND_GLOBAL)
					    : (type == 'w' ? ST_BIND_WEAK : ST_BIND_LOCAL);
	copy = st_strtab__add(strs, name, strlen(name));
	if (!copy)
		return -ENOMEM;
	err = st_symtab__add(t, addr, 0, copy, module, bind);
	return err ? err : 1;
}

int st_kallsyms__load(const char *path, struct st_symtab *t, struct st_strtab *strs)
{
	const char *kernel;
	size_t cap = 0;
	char *line = NULL;
	FILE *f;
	int err = 0, n = 0, r;

	kernel = st_strtab__intern(strs, ST_KERNEL_MODULE);
	if (!kernel)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		r = parse_line(line, t, strs, kernel);
		if (r == -ENOMEM) {
			err = r;
			goto cleanup;
		}
		if (r > 0)
			n++;
	}
	if (ferror(f))
		err = -EIO;
cleanup:
	free(line);
	fclose(f);
	return err ? err : n;
}
