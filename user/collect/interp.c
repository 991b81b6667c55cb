/* interp.c - --interpreters' names and bits (see interp.h). */
#include "user/collect/interp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	unsigned bit;
} runtimes[] = {
	{ "python", ST_INTERP_PYTHON },	/* CPython 3.10-3.13: bpf/python.bpf.h */
	{ "java", ST_INTERP_JAVA },	/* HotSpot, interpreted frames: bpf/hotspot_step.h */
};

#define NRUNTIMES (sizeof(runtimes) / sizeof(runtimes[0]))

const char *st_interp__names(char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < NRUNTIMES && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? "," : "", runtimes[i].name);

		if (n < 0)
			break;
		used += (size_t)n;
	}
	return buf;
}

/* The bits of name (len bytes), or -1. */
static int bits_of(const char *name, size_t len)
{
	if (len == 3 && !strncmp(name, "all", 3))
		return ST_INTERP_ALL;
	if (len == 4 && !strncmp(name, "none", 4))
		return 0;
	for (size_t i = 0; i < NRUNTIMES; i++)
		if (strlen(runtimes[i].name) == len && !strncmp(name, runtimes[i].name, len))
			return (int)runtimes[i].bit;
	return -1;
}

int st_interp__parse(const char *list, unsigned *mask, char *bad, size_t bad_len)
{
	const char *p = list;
	unsigned m = 0;

	if (bad && bad_len)
		bad[0] = '\0';
	do {
		size_t len = strcspn(p, ",");
		int b = bits_of(p, len);

		if (b < 0) {
			if (bad && bad_len)
				snprintf(bad, bad_len, "%.*s", (int)len, p);
			return -EINVAL;
		}
		m |= (unsigned)b;
		p += len;
	} while (*p++ == ',');
	*mask = m;
	return 0;
}
