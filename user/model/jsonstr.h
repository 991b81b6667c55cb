/* jsonstr.h - JSON strings from the raw bytes of paths, symbols and comms.
 *
 * Owner: user/model/jsonstr.c. profile.json must be valid UTF-8 for any JSON
 * reader, but file names and symbols are bytes: st_json__string() replaces
 * each invalid UTF-8 sequence with U+FFFD. Where the bytes matter (a node's
 * function and module), st_json__raw() gives them losslessly as a string of
 * code points U+0000..U+00FF, one per byte, and st_json__unraw() turns that
 * back into the bytes. */
#ifndef STACKTREE_JSONSTR_H
#define STACKTREE_JSONSTR_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether s is valid UTF-8 (no overlong forms, surrogates or > U+10FFFF). */
bool st_json__valid_utf8(const char *s);
/* A JSON string of s (NULL: JSON null), invalid sequences as U+FFFD. */
json_object *st_json__string(const char *s);
/* NULL when s is valid UTF-8 (nothing to keep), else its bytes, one code
 * point each. */
json_object *st_json__raw(const char *s);
/* The same, streamed: s as a quoted JSON string (null for NULL), with
 * invalid sequences as U+FFFD; st_json__put_raw() writes what st_json__raw()
 * holds. Both return 0 or -EIO (check ferror() once at the end instead when
 * writing many). */
int st_json__put(FILE *out, const char *s);
int st_json__put_raw(FILE *out, const char *s);
/* The bytes of a st_json__raw() string in a new buffer (free() it), or NULL
 * (errno EINVAL: a code point above U+00FF, or a NUL byte). */
char *st_json__unraw(const char *utf8);

#endif
