/* vdso.h - this process's own vDSO image (private). */
#ifndef STACKTREE_SYMBOLIZER_VDSO_H
#define STACKTREE_SYMBOLIZER_VDSO_H

#include <stddef.h>

/* Where the vDSO ELF image is mapped in this process and its size (from
 * its headers). -ENOENT when the kernel gave none (or it is hidden, as
 * under valgrind). */
int st_vdso__image(const void **image, size_t *size);

#endif
