/* http.h - the live endpoint (--listen): pprof profiles of the next N
 * seconds and the daemon's health for scrapers, served by a thread of its
 * own that never waits for the daemon's loop (nor blocks it), to each
 * client what it may see.
 * Owner: user/output/http.c (the server); user/output/http_parse.c reads
 * the requests; user/output/http_peer.c tells who the client is and
 * user/output/http_policy.c what it gets; user/model/window.c makes the
 * profiles.
 *
 *   GET /debug/pprof/profile?seconds=N[&pid=P][&comm=C][&container=ID]
 *       [&cgroup=PATH]   a gzipped pprof (user/output/pprof.h: the labels
 *                        and build ids of the files) of the N seconds
 *                        after the request (default 30, 1..max_seconds),
 *                        threads filtered by the given labels
 *   GET /metrics         the daemon's counters, Prometheus text format 0.0.4
 *                        (the metrics callback writes them)
 *
 * Who gets what (http_policy.h): root, the uids of --listen-allow and a
 * client with the bearer token get every thread; any other local uid the
 * threads of its own processes (kernel frames hidden) and /metrics, whose
 * labels name no process; a remote client without the token, or anyone
 * with a wrong one, 403.
 *
 * Bounds: ST_HTTP_MAX_CONNS connections, of which ST_HTTP_RESERVED_CONNS
 * only for root and allowed uids and at most ST_HTTP_PEER_CONNS per other
 * client (uid or remote address; one more is answered 503 and closed);
 * ST_HTTP_MAX_PROFILES profiles waiting at once, ST_HTTP_RESERVED_PROFILES
 * of them for clients that see everything, ST_HTTP_PEER_PROFILES per
 * other client (503 beyond); a request head of ST_HTTP_MAX_HEAD bytes read
 * within ST_HTTP_HEAD_TIMEOUT_S, an answer written within
 * ST_HTTP_WRITE_TIMEOUT_S (a client that does not read is closed then); a
 * client that goes away while its profile is taken gives its place back
 * at once. Every socket is non-blocking, served by the endpoint's thread;
 * the daemon calls st_http__work() from its loop and wakes on
 * st_http__fd() to do what needs its collector (open and name the profile
 * windows, write the /metrics body). /metrics is answered within
 * ST_HTTP_METRICS_WAIT_S whatever the loop does: at once with the body the
 * loop wrote last if it is at most ST_HTTP_METRICS_YOUNG_S old, else with
 * a fresh one written for it, or, when the loop is busy (a snapshot, a
 * drain), the one there is; the answer's stacktreed_metrics_age_seconds
 * tells its age. While scraped (a request within ST_HTTP_METRICS_KEEP_S)
 * the loop rewrites the body every ST_HTTP_METRICS_YOUNG_S / 2.
 * Nothing waits on a client.
 */
#ifndef STACKTREE_HTTP_H
#define STACKTREE_HTTP_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "user/output/http_policy.h"

#define ST_HTTP_MAX_CONNS 16
#define ST_HTTP_RESERVED_CONNS 4	/* of them, for root and --listen-allow uids only */
#define ST_HTTP_PEER_CONNS 4		/* what any other client may hold */
#define ST_HTTP_MAX_PROFILES 4
#define ST_HTTP_RESERVED_PROFILES 2	/* for clients that see everything only */
#define ST_HTTP_PEER_PROFILES 1		/* what any other client may take at once */
#define ST_HTTP_HEAD_TIMEOUT_S 5.0
#define ST_HTTP_WRITE_TIMEOUT_S 10.0
#define ST_HTTP_METRICS_YOUNG_S 1.0	/* a /metrics body this young is served at once; */
#define ST_HTTP_METRICS_KEEP_S 60.0	/* ... rewritten as it ages, this long after a request */
#define ST_HTTP_METRICS_WAIT_S 0.05	/* else a fresh one waited for, at most */
#define ST_HTTP_DEFAULT_SECONDS 30	/* a profile's without seconds= */
#define ST_HTTP_MAX_SECONDS_DEFAULT 60	/* --listen-max-seconds' default */
#define ST_HTTP_MAX_SECONDS 3600	/* --listen-max-seconds' bound */
#define ST_HTTP_MAX_LISTEN 4		/* --listen given this many times at most */
#define ST_HTTP_UNIX_MODE 0666		/* a unix: socket file's mode */

struct st_collector;
struct st_namer;
struct st_profile;
struct st_http;

struct st_http_opts {
	/* "PORT" (loopback), "ADDR:PORT", "[ADDR6]:PORT" or "unix:/PATH" */
	const char *const *listen;
	size_t nlisten;
	const __u32 *allow;	/* --listen-allow's uids: they see everything */
	size_t nallow;
	const char *token;	/* --listen-token-file's token, or NULL */
	size_t token_len;
	unsigned max_seconds;	/* --listen-max-seconds; 0: ST_HTTP_MAX_SECONDS_DEFAULT */
	const char *tls_cert;	/* --listen-tls-cert/-key: TLS on the TCP listeners, or NULL */
	const char *tls_key;
	struct st_collector *coll;	/* the profiles' samples, named by names */
	const struct st_namer *names;
	const char *event;	/* the profiles' event ("cpu-clock", "page-faults") */
	__u32 ev;		/* the trees served: ST_EVENT_CPU (the timer's, or wall),
				 * _FAULTS, _OFFCPU */
	/* the session's other trees, served for ?event=NAME (-e cpu,offcpu:
	 * "offcpu"), or NULL */
	const char *alt_event;
	__u32 alt_ev;
	/* before a profile is taken: the kernel's trees drained into coll */
	int (*drain)(void *ctx);
	/* a profile's header (frequency, command, notes) */
	void (*header)(void *ctx, struct st_profile *p);
	/* the /metrics body, on the daemon's loop's thread; 0 or a negative
	 * errno */
	int (*metrics)(void *ctx, FILE *out);
	/* the /metrics lines written at each answer, on the endpoint's thread
	 * (what reads nothing of the daemon's state: its process_* lines), or
	 * NULL */
	int (*metrics_now)(void *ctx, FILE *out);
	void *ctx;
	bool verbose;
};

/* Whether listen is an address st_http__new() takes: 0, or -EINVAL after
 * one line on stderr (so that a typo fails before anything is loaded). */
int st_http__check_listen(const char *listen);

/* Bind and listen on every address. A unix: socket is created by the
 * daemon, mode ST_HTTP_UNIX_MODE (who may connect is the directory's to
 * decide; what each gets is the policy's); a stale socket file of ours
 * that no one serves is replaced, anything else there refused; it is
 * removed by st_http__free(). 0, or a negative errno after one line on
 * stderr (a bad address, a port in use). */
int st_http__new(const struct st_http_opts *o, struct st_http **out);
void st_http__free(struct st_http *h);

/* Readable when the daemon's loop has work for the endpoint (a profile
 * asked or given up, a /metrics body wanted): for the daemon's poll. */
int st_http__fd(const struct st_http *h);

/* The daemon's loop (the thread that owns the collector): write the
 * /metrics body if one is wanted; open the windows asked for, name those
 * whose N seconds are over (the kernel's trees drained first, through the
 * drain hook) and hand their profiles to the endpoint's thread. now:
 * CLOCK_MONOTONIC seconds. Never waits on a client. */
void st_http__work(struct st_http *h, double now);

/* The collector is about to drop its trees (a service snapshot): the open
 * profiles keep what they have seen so far. The daemon's loop's thread. */
void st_http__before_reset(struct st_http *h);

/* Requests answered and refused so far: the endpoint's own /metrics lines,
 * written by its thread at each answer. */
struct st_http_stats {
	__u64 profiles, metrics, refused_busy, refused_bad, timed_out;
	__u64 tls_failed;	/* TLS handshakes or streams that failed */
	__u64 refused[ST_REFUSE__N];	/* by reason (503s and 4xx) */
	unsigned open_profiles;	/* profiles being taken now */
	unsigned open_conns;	/* connections open now */
};

#endif
