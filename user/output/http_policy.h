/* http_policy.h - who gets what from the live endpoint (user/output/http.h):
 * the view a client is given, the places it may hold, the bearer token.
 * Pure (no I/O) but st_http_policy__allow(), which resolves names, and
 * st_http_policy__read_secret() and _read_token(), which read the token
 * (and TLS key) file.
 * Owner: user/output/http_policy.c; user/output/http_peer.c tells who the
 * client is.
 *
 * Views:
 *   a valid bearer token (--listen-token-file) -> everything, from anywhere;
 *   a wrong token                              -> 403, whoever sends it;
 *   no token: a local uid 0 or one --listen-allow names -> everything;
 *             any other local uid              -> its own processes only
 *               (threads of processes it owns, kernel frames hidden);
 *             a remote peer (not loopback)     -> 403;
 *             a loopback peer whose socket the kernel's table did not
 *             show (gone already)              -> 403.
 *
 * Places (connections, then profiles being taken): a privileged holder
 * (root, an allowed uid; for profiles a token holder too) is bounded only
 * by the total; the others share the total less a reserve kept for the
 * privileged ones, and each of them (one local uid, one remote address: an
 * IPv4 address or an IPv6 /64) holds at most a few.
 */
#ifndef STACKTREE_HTTP_POLICY_H
#define STACKTREE_HTTP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* A token file holds at most this many bytes (before its trailing white
 * space, which is dropped). */
#define ST_HTTP_MAX_TOKEN 512

enum st_http_peer_kind {
	ST_PEER_LOCAL,		/* a local uid: Unix socket or a loopback TCP peer */
	ST_PEER_REMOTE,		/* a TCP peer not on loopback: no local uid */
	ST_PEER_UNKNOWN,	/* loopback, but its socket was not found */
};

struct st_http_peer {
	enum st_http_peer_kind kind;
	__u32 uid;		/* ST_PEER_LOCAL */
	__u64 key;		/* who shares places: st_http_peer__key() */
};

/* The key of a local uid, of a remote address (IPv4: 4 bytes; IPv6: 16,
 * of which the /64 counts), of an unknown peer: distinct kinds never meet. */
__u64 st_http_peer__local_key(__u32 uid);
__u64 st_http_peer__remote_key(const unsigned char *addr, size_t len);
#define ST_HTTP_UNKNOWN_KEY (3ull << 62)

struct st_http_policy {
	const __u32 *allow;	/* --listen-allow's uids (groups expanded), sorted or not */
	size_t nallow;
	const char *token;	/* --listen-token-file's token, or NULL */
	size_t token_len;
};

enum st_http_view {
	ST_VIEW_NONE,		/* refused (403) */
	ST_VIEW_OWN,		/* the client's own processes */
	ST_VIEW_ALL,
};

/* Why a client or a request was refused: the /metrics label of each. */
enum st_http_refusal_reason {
	ST_REFUSE_BAD_REQUEST,		/* 400/404/405/414/431/505 */
	ST_REFUSE_SECONDS,		/* seconds over --listen-max-seconds */
	ST_REFUSE_REMOTE,		/* remote peer without a token */
	ST_REFUSE_TOKEN,		/* a token that is not the file's */
	ST_REFUSE_UNKNOWN_PEER,		/* a loopback peer not found */
	ST_REFUSE_CONNS,		/* every connection place taken */
	ST_REFUSE_CONNS_SHARED,		/* the places not kept for root and allowed uids */
	ST_REFUSE_CONNS_PEER,		/* the client's own connection places */
	ST_REFUSE_PROFILES,		/* every profile place taken */
	ST_REFUSE_PROFILES_SHARED,
	ST_REFUSE_PROFILES_PEER,
	ST_REFUSE__N,
};
extern const char *const st_http_refusal_names[ST_REFUSE__N];

/* Whether a local uid sees everything: root or named by --listen-allow. */
bool st_http_policy__privileged_uid(const struct st_http_policy *pol, __u32 uid);

/* The view of peer p whose request carries auth (the Authorization value;
 * NULL: none); *why says the refusal of ST_VIEW_NONE. */
enum st_http_view st_http_policy__view(const struct st_http_policy *pol,
				       const struct st_http_peer *p, const char *auth,
				       enum st_http_refusal_reason *why);

/* Whether auth is "Bearer TOKEN" (scheme in any case, one or more spaces)
 * with TOKEN equal to want[0..len): compared in a time that depends on len
 * only, not on where they differ. */
bool st_http_policy__bearer_ok(const char *want, size_t len, const char *auth);

/* A place holder: whose, and whether the reserve is open to it. */
struct st_http_holder {
	__u64 key;
	bool privileged;
};

struct st_http_places {
	unsigned total;		/* places in all */
	unsigned reserved;	/* of them, for privileged holders only */
	unsigned per_peer;	/* what one non-privileged key may hold */
};

/* Whether who may take one more place beside the n held ones: 0, or
 * 1 (all taken), 2 (the shared ones taken), 3 (who's own taken). */
int st_http_places__admit(const struct st_http_places *pl, const struct st_http_holder *held,
			  size_t n, const struct st_http_holder *who);

/* --listen-allow LIST: comma-separated USER, UID or @GROUP (its members:
 * the users it lists and those whose primary group it is, read now) into
 * a malloc'ed array of uids appended to *uids. 0, or -EINVAL (a name that
 * does not exist, written into err) or -ENOMEM. */
int st_http_policy__allow(const char *list, __u32 **uids, size_t *n, char *err, size_t errlen);

/* A secret file's bytes (the token file, the TLS key): a regular file
 * owned by our euid, not readable or writable by group or others (0600 or
 * 0400), opened without following a link and read into buf (up to max
 * bytes: *len). 0, or -EINVAL/-EPERM/-errno with one line written into
 * err (what is wrong, and the chmod that fixes it). */
int st_http_policy__read_secret(const char *path, char *buf, size_t max, size_t *len, char *err,
				size_t errlen);

/* The token of a --listen-token-file: a regular file owned by our euid,
 * not readable or writable by group or others (0600 or 0400), of 1 to
 * ST_HTTP_MAX_TOKEN visible ASCII characters, trailing white space
 * dropped. A malloc'ed string and its length, or -EINVAL/-EPERM/-errno
 * with one line written into err. */
int st_http_policy__read_token(const char *path, char **token, size_t *len, char *err,
			       size_t errlen);

#endif
