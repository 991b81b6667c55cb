/* folded.h - read folded stacks ("root;caller;callee N" per line) into a
 * profile. Owner: user/model/folded.c.
 *
 * Each line is one sample of a single thread, frames root first separated by
 * ';', with an optional trailing count N (> 0, after the last blank) meaning N
 * consecutive identical samples. Lines are consecutive samples, so CALLS are
 * counted with ST_CALLS_FUNCTION. Blank lines are skipped. Frames become
 * ST_FRAME_FUNCTION nodes; the profile has event "folded", one thread with
 * pid/tid 0 named after the file's basename ("folded" for stdin), and is
 * finalized.
 */
#ifndef STACKTREE_FOLDED_H
#define STACKTREE_FOLDED_H

#include <stddef.h>
#include <stdio.h>

struct st_profile;

/* Read from an open stream; name is used in error messages and as the thread
 * name (its basename). Returns 0, -EINVAL on a malformed line (err gets one
 * line: "NAME:LINE: what is wrong"), -ENOMEM or -EIO (err set too). */
int st_folded__read(FILE *in, const char *name, struct st_profile **out, char *err,
		    size_t errlen);

/* Same, opening path ("-" reads stdin). -errno when it cannot be opened. */
int st_folded__read_path(const char *path, struct st_profile **out, char *err, size_t errlen);

#endif
