/* http_policy.c - the live endpoint's policy: views, places, the bearer
 * token (see http_policy.h). */
#include "user/output/http_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hash.h"

const char *const st_http_refusal_names[ST_REFUSE__N] = {
	[ST_REFUSE_BAD_REQUEST] = "bad_request",
	[ST_REFUSE_SECONDS] = "seconds_over_max",
	[ST_REFUSE_REMOTE] = "remote_without_token",
	[ST_REFUSE_TOKEN] = "wrong_token",
	[ST_REFUSE_UNKNOWN_PEER] = "unknown_peer",
	[ST_REFUSE_CONNS] = "connections_full",
	[ST_REFUSE_CONNS_SHARED] = "connections_shared_full",
	[ST_REFUSE_CONNS_PEER] = "connections_per_client",
	[ST_REFUSE_PROFILES] = "profiles_full",
	[ST_REFUSE_PROFILES_SHARED] = "profiles_shared_full",
	[ST_REFUSE_PROFILES_PEER] = "profiles_per_client",
};

#define KEY_MASK ((1ull << 62) - 1)

__u64 st_http_peer__local_key(__u32 uid)
{
	return uid;
}

__u64 st_http_peer__remote_key(const unsigned char *addr, size_t len)
{
	/* an IPv6 host has its /64 to pick addresses from */
	return 1ull << 62 | (st_hash_bytes(addr, len > 8 ? 8 : len, ST_HASH_INIT + len) & KEY_MASK);
}

bool st_http_policy__privileged_uid(const struct st_http_policy *pol, __u32 uid)
{
	if (uid == 0)
		return true;
	for (size_t i = 0; i < pol->nallow; i++)
		if (pol->allow[i] == uid)
			return true;
	return false;
}

bool st_http_policy__bearer_ok(const char *want, size_t len, const char *auth)
{
	static const char scheme[] = "bearer";
	const char *got;
	size_t glen;
	volatile unsigned char diff = 0;

	if (!want || !len || !auth || strncasecmp(auth, scheme, sizeof(scheme) - 1) ||
	    auth[sizeof(scheme) - 1] != ' ')
		return false;
	for (got = auth + sizeof(scheme) - 1; *got == ' '; got++)
		;
	glen = strlen(got);
	/* every byte of want is read, whatever got holds: the time tells
	 * len, never how much of it matched */
	for (size_t i = 0; i < len; i++) {
		size_t in = (size_t)0 - (size_t)(i < glen);	/* all ones while i < glen */

		diff |= (unsigned char)(want[i] ^ (got[i & in] & (unsigned char)in)) |
			(unsigned char)(~in & 1);
	}
	diff |= (unsigned char)(glen != len);
	return diff == 0;
}

enum st_http_view st_http_policy__view(const struct st_http_policy *pol,
				       const struct st_http_peer *p, const char *auth,
				       enum st_http_refusal_reason *why)
{
	if (auth && pol->token) {
		if (st_http_policy__bearer_ok(pol->token, pol->token_len, auth))
			return ST_VIEW_ALL;
		*why = ST_REFUSE_TOKEN;
		return ST_VIEW_NONE;
	}
	if (auth && p->kind == ST_PEER_REMOTE) {	/* no token file: none is right */
		*why = ST_REFUSE_TOKEN;
		return ST_VIEW_NONE;
	}
	switch (p->kind) {
	case ST_PEER_LOCAL:
		/* a local client's credentials are its uid; an Authorization
		 * header without a token file adds nothing */
		return st_http_policy__privileged_uid(pol, p->uid) ? ST_VIEW_ALL : ST_VIEW_OWN;
	case ST_PEER_REMOTE:
		*why = ST_REFUSE_REMOTE;
		return ST_VIEW_NONE;
	default:
		*why = ST_REFUSE_UNKNOWN_PEER;
		return ST_VIEW_NONE;
	}
}

int st_http_places__admit(const struct st_http_places *pl, const struct st_http_holder *held,
			  size_t n, const struct st_http_holder *who)
{
	unsigned shared = 0, mine = 0;

	if (n >= pl->total)
		return 1;
	if (who->privileged)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (held[i].privileged)
			continue;
		shared++;
		mine += held[i].key == who->key;
	}
	if (shared >= (pl->total > pl->reserved ? pl->total - pl->reserved : 0))
		return 2;
	if (mine >= pl->per_peer)
		return 3;
	return 0;
}

static int add_uid(__u32 **uids, size_t *n, __u32 uid)
{
	__u32 *u;

	for (size_t i = 0; i < *n; i++)
		if ((*uids)[i] == uid)
			return 0;
	if (!(u = realloc(*uids, (*n + 1) * sizeof(*u))))
		return -ENOMEM;
	u[(*n)++] = uid;
	*uids = u;
	return 0;
}

/* @GROUP's members: the names it lists, and the users whose primary
 * group it is. */
static int add_group(const char *name, __u32 **uids, size_t *n, char *err, size_t errlen)
{
	struct group *g = getgrnam(name);
	struct passwd *pw;
	gid_t gid;
	char **mem;
	size_t nmem = 0;
	int r = 0;

	if (!g) {
		snprintf(err, errlen, "no group '%s'", name);
		return -EINVAL;
	}
	gid = g->gr_gid;
	/* getpwnam() may reuse the group's buffers: copy the names first */
	for (char **m = g->gr_mem; m && *m; m++)
		nmem++;
	if (!(mem = calloc(nmem + 1, sizeof(*mem))))
		return -ENOMEM;
	for (size_t i = 0; i < nmem && !r; i++)
		if (!(mem[i] = strdup(g->gr_mem[i])))
			r = -ENOMEM;
	for (size_t i = 0; i < nmem && !r; i++)
		if ((pw = getpwnam(mem[i])))
			r = add_uid(uids, n, pw->pw_uid);
	setpwent();
	while (!r && (pw = getpwent()))
		if (pw->pw_gid == gid)
			r = add_uid(uids, n, pw->pw_uid);
	endpwent();
	for (size_t i = 0; i < nmem; i++)
		free(mem[i]);
	free(mem);
	return r;
}

int st_http_policy__allow(const char *list, __u32 **uids, size_t *n, char *err, size_t errlen)
{
	char *copy = strdup(list), *save = NULL;
	int r = copy ? 0 : -ENOMEM;

	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !r;
	     tok = strtok_r(NULL, ",", &save)) {
		struct passwd *pw;
		char *end;
		unsigned long v;

		if (tok[0] == '@') {
			r = add_group(tok + 1, uids, n, err, errlen);
			continue;
		}
		if ((pw = getpwnam(tok))) {
			r = add_uid(uids, n, pw->pw_uid);
			continue;
		}
		errno = 0;
		v = strtoul(tok, &end, 10);
		if (tok[0] >= '0' && tok[0] <= '9' && !*end && !errno && v < 0xffffffffUL) {
			r = add_uid(uids, n, (__u32)v);
			continue;
		}
		snprintf(err, errlen, "no user '%s' (give USER, UID or @GROUP)", tok);
		r = -EINVAL;
	}
	free(copy);
	return r;
}

int st_http_policy__read_secret(const char *path, char *buf, size_t max, size_t *len, char *err,
				size_t errlen)
{
	struct stat st;
	ssize_t got;
	size_t n = 0;
	int fd, r = 0;

	*len = 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open it: %s", strerror(errno));
		return r;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file");
		r = -EINVAL;
	} else if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(err, errlen, "must be owned by uid %u and readable by it alone (chmod "
			 "600; it is uid %u, mode %04o)", (unsigned)geteuid(), (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
		r = -EPERM;
	}
	while (!r && n < max && (got = read(fd, buf + n, max - n)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot read it: %s", strerror(errno));
		} else {
			n += (size_t)got;
		}
	}
	close(fd);
	*len = n;
	return r;
}

int st_http_policy__read_token(const char *path, char **token, size_t *len, char *err,
			       size_t errlen)
{
	char buf[ST_HTTP_MAX_TOKEN + 64];
	size_t n = 0;
	int r;

	*token = NULL;
	*len = 0;
	r = st_http_policy__read_secret(path, buf, sizeof(buf), &n, err, errlen);
	while (!r && n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' ||
			   buf[n - 1] == '\t'))
		n--;
	if (!r && (!n || n > ST_HTTP_MAX_TOKEN)) {
		snprintf(err, errlen, "give a token of 1 to %d characters", ST_HTTP_MAX_TOKEN);
		r = -EINVAL;
	}
	for (size_t i = 0; !r && i < n; i++)
		if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f) {
			snprintf(err, errlen, "the token has a space or a character that is not "
				 "visible ASCII (offset %zu)", i);
			r = -EINVAL;
		}
	if (!r && !(*token = malloc(n + 1)))
		r = -ENOMEM;
	if (!r) {
		memcpy(*token, buf, n);
		(*token)[n] = '\0';
		*len = n;
	}
	explicit_bzero(buf, sizeof(buf));	/* no copy of it left on the stack */
	return r;
}
