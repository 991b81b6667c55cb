/* json_fx.h - the unit tests' view of a profile.json version 4 document
 * (user/output/json.c): the frames of one function, strings resolved, so a
 * test checks what was written without depending on table indexes. */
#ifndef STACKTREE_TEST_JSON_FX_H
#define STACKTREE_TEST_JSON_FX_H

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

static inline const char *fx_jstr(json_object *strs, json_object *i)
{
	json_object *s;

	if (!i || json_object_get_type(i) != json_type_int)
		return "null";
	s = json_object_array_get_idx(strs, (size_t)json_object_get_int64(i));
	if (s && json_object_get_type(s) == json_type_object &&
	    json_object_object_get_ex(s, "text", &s))
		return json_object_get_string(s);
	return s ? json_object_get_string(s) : "?";
}

/* "kind runtime offset file:line;" for each frame whose function (a data
 * leaf's symbol) is fn, in table order, into buf; "" when none, or
 * "unparsable" when text is not JSON with "strings" and "frames". */
static inline const char *fx_frames_of(const char *text, const char *fn, char *buf, size_t len)
{
	json_object *doc = json_tokener_parse(text), *strs, *frames;
	size_t n = 0;

	buf[0] = '\0';
	if (!doc || !json_object_object_get_ex(doc, "strings", &strs) ||
	    !json_object_object_get_ex(doc, "frames", &frames)) {
		json_object_put(doc);
		snprintf(buf, len, "unparsable");
		return buf;
	}
	for (size_t i = 0; i < json_object_array_length(frames) && n < len; i++) {
		json_object *f = json_object_array_get_idx(frames, i), *off;

		if (strcmp(fx_jstr(strs, json_object_array_get_idx(f, 2)), fn))
			continue;
		off = json_object_array_get_idx(f, 4);
		n += (size_t)snprintf(buf + n, len - n, "%s %s %s %s:%s;",
				      fx_jstr(strs, json_object_array_get_idx(f, 0)),
				      fx_jstr(strs, json_object_array_get_idx(f, 1)),
				      off ? json_object_to_json_string(off) : "null",
				      fx_jstr(strs, json_object_array_get_idx(f, 6)),
				      json_object_array_get_idx(f, 7) ?
				      json_object_to_json_string(json_object_array_get_idx(f, 7)) :
				      "null");
	}
	json_object_put(doc);
	return buf;
}

#endif
