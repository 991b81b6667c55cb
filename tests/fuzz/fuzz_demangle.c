/* fuzz_demangle.c - libFuzzer target: the names of users' binaries through
 * the demangler (user/symbolize/demangle.c: libiberty's Itanium C++ and
 * Rust demanglers, a PLT stub's name by its target's, the names
 * remembered). The input is names, one a line (at most 64); each is asked
 * twice: the second answer is the first, remembered; a name that is not
 * "_Z..." or "_R..." has none. Seeds: tests/fuzz/corpus/demangle/ (symbols
 * of Debian's libstdc++, g++'s lambdas and templates, Rust v0 and legacy
 * names, PLT stubs). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/symbolize/demangle.h"

#define MAX_NAMES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st_demangler *d = st_demangler__new();
	char *text = malloc(size + 1), *line, *save = NULL;
	int n = 0;

	if (!d || !text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line && n < MAX_NAMES;
	     line = strtok_r(NULL, "\n", &save), n++) {
		const char *a = st_demangler__name(d, line), *b = st_demangler__name(d, line);

		if (a != b || (a && !(line[0] == '_' && (line[1] == 'Z' || line[1] == 'R'))))
			__builtin_trap();
		if (a)
			(void)strlen(a);
	}
	st_demangler__free(d);
	free(text);
	return 0;
}
