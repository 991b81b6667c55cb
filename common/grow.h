/* grow.h - room for one more element in an array that doubles as it fills.
 * Used by user/ and binsym/. */
#ifndef STACKTREE_GROW_H
#define STACKTREE_GROW_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* *arrp points to an array of *cap elements of elem bytes, n of them in
 * use: make room for element n, doubling the capacity (first: the initial
 * one). Returns 0, or -ENOMEM with the array unchanged. */
static inline int st_grow(void *arrp, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t ncap;
	void *old, *new;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : first;
	memcpy(&old, arrp, sizeof(old));
	new = realloc(old, ncap * elem);
	if (!new)
		return -ENOMEM;
	memcpy(arrp, &new, sizeof(new));
	*cap = ncap;
	return 0;
}

#define ST_GROW(arr, cap, n, first) st_grow(&(arr), &(cap), (n), sizeof(*(arr)), (first))

#endif
