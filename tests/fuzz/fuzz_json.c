/* fuzz_json.c - the profile.json reader (user/model/profile_json.c) on arbitrary
 * bytes, then every report writer on what it read. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/fuzz/writers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct st_profile *p = NULL;
	char err[512];

	if (fd < 0) {
		fd = memfd_create("fuzz-json", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (st_profile__read_json(path, &p, err, sizeof(err)) == 0)
		fuzz_write_all(p);
	st_profile__free(p);
	return 0;
}
