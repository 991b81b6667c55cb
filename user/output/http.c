/* http.c - the live endpoint's server (see http.h): a thread of its own
 * serving non-blocking sockets from one epoll set, and the main thread's
 * side of it (the profile windows, the /metrics body).
 *
 * Two threads, one owner per datum:
 *  - the server thread owns the sockets, the connections, their buffers
 *    and the refusal counters (struct st_http's "server" part). It never
 *    waits for the main thread: a /metrics request is answered with the
 *    body the main thread published last, at once when a fresher one comes
 *    within ST_HTTP_METRICS_WAIT_S, else with the one it has, so that a
 *    snapshot or a drain of the daemon does not delay it.
 *  - the main thread (the daemon's loop, st_http__work()) owns the
 *    collector and the windows (user/model/window.h): it opens a window
 *    when a request asks for one, names it when its seconds are over,
 *    encodes the pprof, and writes the /metrics body when one is wanted.
 *  - between them, under `lock` (held for copies and state changes only,
 *    never across a socket call or a drain): the jobs (one profile request
 *    each: asked by the server, opened, done by the main thread, taken
 *    back or cancelled by the server) and the published /metrics body
 *    (the endpoint's own lines are added by the server at each answer,
 *    the process_* ones too: metrics_now). Each side wakes the other through an
 *    eventfd (main_wake: the daemon polls it; server_wake: in the server's
 *    epoll set).
 *
 * A connection's client is known when it is accepted (http_peer.h): its
 * places are counted then (http_policy.h), and its view decided when its
 * request is read (the bearer token is in the request).
 *
 * A connection reads one request head, is answered once and closed
 * (Connection: close): /metrics at once; a profile once its window is
 * over. A profile is a window opened by the main thread when the request
 * reaches it (the kernel's trees drained first): it marks the collector's
 * counts then, and names the difference when the N seconds are over (the
 * trees drained again), so that the snapshots keep every sample too; a
 * service snapshot that resets the collector meanwhile folds the open
 * windows first (st_http__before_reset()). The profile's duration is the
 * window's, from its mark to its end. Memory is bounded:
 * ST_HTTP_MAX_CONNS connections with a head buffer each, as many jobs, at
 * most ST_HTTP_MAX_PROFILES windows, one answer per connection. Time is
 * bounded: no call waits on a socket; a head not read within its timeout
 * and an answer not taken within its timeout close the connection. */
#include "user/output/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "user/model/profile.h"
#include "user/model/window.h"
#include "user/output/http_parse.h"
#include "user/output/http_peer.h"
#include "user/output/http_tls.h"
#include "user/output/pprof.h"

/* C_METRICS: waiting (at most ST_HTTP_METRICS_WAIT_S) for a fresher
 * /metrics body; C_WAITING: for its profile (its job) */
enum conn_state { C_FREE, C_READING, C_METRICS, C_WAITING, C_WRITING };

struct conn {
	enum conn_state state;
	int fd;
	struct st_http_tls_conn *tls;	/* --listen-tls-cert: its session, or NULL */
	struct st_http_peer peer;
	bool privileged;	/* a local uid that sees everything: the reserve is its */
	enum st_http_view view;	/* of its request */
	double deadline;	/* reading: the head's; metrics: the fresh body's; writing */
	double asked;		/* metrics: when it asked */
	unsigned long metrics_gen;	/* metrics: the body it waits for */
	int job;		/* waiting: its job's index */
	char in[ST_HTTP_MAX_HEAD];
	size_t inlen;
	char *out;		/* the answer: head and body */
	size_t outlen, outpos;
};

/* A profile request between the threads. J_NONE -> J_ASKED (the server,
 * its request filled in) -> J_OPEN (the main thread: its window open) ->
 * J_DONE (the main thread: status and body) -> J_NONE (the server, the
 * answer taken). The server cancels an asked or open job whose client went
 * away (J_CANCELLED); the main thread frees its window and makes it
 * J_NONE. The state is under the lock; the request's fields are the
 * server's until J_ASKED, then read-only until J_NONE; win and start are
 * the main thread's alone; status, why and body the main thread's until
 * J_DONE, then the server's. */
enum job_state { J_NONE, J_ASKED, J_OPEN, J_DONE, J_CANCELLED };

struct job {
	enum job_state state;
	/* the request */
	char *comm, *container, *cgroup;	/* the filter's strings, or NULL */
	__u32 pid, uid;
	bool all;		/* the client sees everything (else: its own, no kernel) */
	bool alt;		/* the session's other event */
	unsigned seconds;
	/* the main thread's */
	struct st_window *win;
	double start;		/* the window's mark */
	/* the answer */
	int status;
	const char *why;	/* status != 200: a static string */
	char *body;
	size_t len;
};

/* A listening socket; a unix: one's file, to remove it at the end if it
 * is still ours. */
struct listener {
	int fd;
	char *path;
	dev_t dev;
	ino_t ino;
};

/* epoll's data of a listener: LISTENER + its index; of the server's
 * eventfd, WAKE; of a connection, its index */
#define LISTENER (1ull << 32)
#define WAKE (1ull << 33)

struct st_http {
	/* set before the server starts, read-only while it runs */
	struct st_http_opts o;
	struct st_http_policy pol;
	struct listener ls[ST_HTTP_MAX_LISTEN];
	size_t nls;
	struct st_http_tls *tls;	/* every TCP listener's, or NULL */
	int main_wake;		/* eventfd: a job asked or cancelled, metrics wanted */
	int server_wake;	/* eventfd: a job done, metrics published, stop */
	/* the server thread's (the main thread's before it starts and after
	 * it is joined) */
	int epfd;
	struct conn conns[ST_HTTP_MAX_CONNS];
	struct st_http_stats stats;
	/* the main thread's */
	pthread_t thread;
	bool running;
	/* under lock */
	pthread_mutex_t lock;
	struct job jobs[ST_HTTP_MAX_CONNS];
	char *metrics;		/* the body published last, or NULL */
	size_t metrics_len;
	double metrics_at;	/* when it was written */
	double metrics_asked;	/* the last request's time, 0: none yet */
	unsigned long metrics_gen;	/* bodies published so far */
	bool metrics_wanted;
	bool stop;
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void poke(int fd)
{
	__u64 one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the other side is woken anyway */
	}
}

static void unpoke(int fd)
{
	__u64 v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was written */
	}
}

/* Free a job's request and answer; J_NONE (lock held, or one thread).
 * win and start are left: the main thread's. */
static void job_clear(struct job *j)
{
	free(j->comm);
	free(j->container);
	free(j->cgroup);
	free(j->body);
	j->comm = j->container = j->cgroup = j->body = NULL;
	j->len = 0;
	j->status = 0;
	j->why = NULL;
	j->state = J_NONE;
}

/* The server: c's profile is no longer wanted (answered, or its client
 * gone): a done job is cleared, an asked or open one cancelled. */
static void job_drop(struct st_http *h, struct conn *c)
{
	struct job *j = &h->jobs[c->job];
	bool cancel;

	pthread_mutex_lock(&h->lock);
	cancel = j->state == J_ASKED || j->state == J_OPEN;
	if (cancel)
		j->state = J_CANCELLED;
	else if (j->state == J_DONE)
		job_clear(j);
	pthread_mutex_unlock(&h->lock);
	if (cancel)
		poke(h->main_wake);
}

static void conn_close(struct st_http *h, struct conn *c)
{
	if (c->state == C_FREE)
		return;
	if (c->state == C_WAITING)
		job_drop(h, c);
	epoll_ctl(h->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	st_http_tls__close(c->tls);
	c->tls = NULL;
	close(c->fd);
	free(c->out);
	c->out = NULL;
	c->state = C_FREE;
}

/* Watch c's socket for ev (0: only errors). */
static void conn_watch(struct st_http *h, struct conn *c, __u32 ev)
{
	struct epoll_event e = { .events = ev, .data.u64 = (__u64)(c - h->conns) };

	epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &e);
}

/* Write what the socket takes now; close when all is written or on error. */
static void conn_flush(struct st_http *h, struct conn *c)
{
	while (c->outpos < c->outlen) {
		__u32 want = EPOLLOUT;
		ssize_t n = c->tls ? st_http_tls__write(c->tls, c->out + c->outpos,
							c->outlen - c->outpos, &want)
				   : send(c->fd, c->out + c->outpos, c->outlen - c->outpos,
					  MSG_NOSIGNAL | MSG_DONTWAIT);

		if (c->tls && n == -EAGAIN) {	/* (TLS may want to read first) */
			conn_watch(h, c, want);
			return;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_close(h, c);
			return;
		}
		c->outpos += (size_t)n;
	}
	shutdown(c->fd, SHUT_WR);
	conn_close(h, c);
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/* Answer c with status, a content type and body (copied), then write. */
static void conn_answer(struct st_http *h, struct conn *c, double now, int status,
			const char *type, const void *body, size_t len, const char *extra)
{
	char head[512];
	int hl = snprintf(head, sizeof(head),
			  "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			  "Connection: close\r\nCache-Control: no-store\r\n%s\r\n",
			  status, reason(status), type, len, extra ? extra : "");

	if (c->state == C_WAITING)
		job_drop(h, c);
	free(c->out);
	c->out = malloc((size_t)hl + len);
	if (!c->out) {
		conn_close(h, c);
		return;
	}
	memcpy(c->out, head, (size_t)hl);
	if (len)
		memcpy(c->out + hl, body, len);
	c->outlen = (size_t)hl + len;
	c->outpos = 0;
	c->state = C_WRITING;
	c->deadline = now + ST_HTTP_WRITE_TIMEOUT_S;
	conn_watch(h, c, EPOLLOUT);
	conn_flush(h, c);
}

/* Refuse c's request: counted as busy (503) or refused, and by why
 * (ST_REFUSE__N: no reason counted, e.g. a 408 or a 500). */
static void conn_error(struct st_http *h, struct conn *c, double now, int status,
		       enum st_http_refusal_reason by, const char *why)
{
	char body[256];
	int n = snprintf(body, sizeof(body), "%d %s: %s\n", status, reason(status), why);

	if (status == 503)
		h->stats.refused_busy++;
	else
		h->stats.refused_bad++;
	if (by < ST_REFUSE__N)
		h->stats.refused[by]++;
	conn_answer(h, c, now, status, "text/plain; charset=utf-8", body, (size_t)n,
		    status == 503 ? "Retry-After: 1\r\n" : NULL);
}

/* A whole number in lo..hi from s. */
static int parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;

	if (!s || !*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || *end || *out < lo || *out > hi ? -EINVAL : 0;
}

/* The server's counters, with what is open now. A profile is counted
 * once its window is open (J_OPEN: the main thread marked the counts),
 * not while its request waits for the main thread's loop (J_ASKED, as
 * long as a snapshot takes): a client that starts its workload when the
 * count says so has every sample of it in the window. */
static void live_stats(struct st_http *h, struct st_http_stats *out)
{
	*out = h->stats;
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
		const struct conn *c = &h->conns[i];

		out->open_conns += c->state != C_FREE;
		out->open_profiles += c->state == C_WAITING && h->jobs[c->job].state == J_OPEN;
	}
	pthread_mutex_unlock(&h->lock);
}

/* The endpoint's own /metrics lines (the server thread, at each answer):
 * answers by kind, refusals by reason, what is open now. */
static void endpoint_metrics(struct st_http *h, FILE *out)
{
	struct st_http_stats s;

	live_stats(h, &s);
	fprintf(out, "# HELP stacktreed_http_answers_total The live endpoint's answers, by kind.\n"
		"# TYPE stacktreed_http_answers_total counter\n"
		"stacktreed_http_answers_total{answer=\"profile\"} %" PRIu64 "\n"
		"stacktreed_http_answers_total{answer=\"metrics\"} %" PRIu64 "\n"
		"stacktreed_http_answers_total{answer=\"busy\"} %" PRIu64 "\n"
		"stacktreed_http_answers_total{answer=\"refused\"} %" PRIu64 "\n"
		"stacktreed_http_answers_total{answer=\"timed_out\"} %" PRIu64 "\n",
		(uint64_t)s.profiles, (uint64_t)s.metrics, (uint64_t)s.refused_busy,
		(uint64_t)s.refused_bad, (uint64_t)s.timed_out);
	fprintf(out, "# HELP stacktreed_http_profiles_open Profiles the live endpoint is taking "
		"now (their windows open).\n# TYPE stacktreed_http_profiles_open gauge\n"
		"stacktreed_http_profiles_open %u\n", s.open_profiles);
	fprintf(out, "# HELP stacktreed_http_refused_total Connections and requests the live "
		"endpoint refused, by reason.\n# TYPE stacktreed_http_refused_total counter\n");
	for (int i = 0; i < ST_REFUSE__N; i++)
		fprintf(out, "stacktreed_http_refused_total{reason=\"%s\"} %" PRIu64 "\n",
			st_http_refusal_names[i], (uint64_t)s.refused[i]);
	if (h->tls)
		fprintf(out, "# HELP stacktreed_http_tls_failed_total TLS handshakes and streams "
			"that failed.\n# TYPE stacktreed_http_tls_failed_total counter\n"
			"stacktreed_http_tls_failed_total %" PRIu64 "\n", (uint64_t)s.tls_failed);
	fprintf(out, "# HELP stacktreed_http_connections_open Connections the live endpoint "
		"holds now.\n# TYPE stacktreed_http_connections_open gauge\n"
		"stacktreed_http_connections_open %u\n", s.open_conns);
}

/* Answer c's /metrics if a body fresh enough (or, after the wait, any
 * body) is there, with its age and the lines written now; 503 when the
 * main thread published none within the head timeout (it has not reached
 * its loop yet). */
static void metrics_ready(struct st_http *h, struct conn *c, double now)
{
	char *body = NULL;
	size_t len = 0;
	double at = now;
	bool have;
	FILE *f = NULL;
	int err = 0;

	pthread_mutex_lock(&h->lock);
	have = h->metrics && (h->metrics_gen >= c->metrics_gen || now >= c->deadline);
	if (have && (f = open_memstream(&body, &len))) {
		fwrite(h->metrics, 1, h->metrics_len, f);
		at = h->metrics_at;
	}
	pthread_mutex_unlock(&h->lock);
	if (f) {
		fprintf(f, "# HELP stacktreed_metrics_age_seconds How long ago the daemon's loop "
			"wrote these metrics (the process_* ones are written now).\n"
			"# TYPE stacktreed_metrics_age_seconds gauge\n"
			"stacktreed_metrics_age_seconds %.3f\n", now > at ? now - at : 0.0);
		endpoint_metrics(h, f);
		if (h->o.metrics_now)
			err = h->o.metrics_now(h->o.ctx, f);
		if (fclose(f) || err) {
			free(body);
			body = NULL;
		}
	}
	if (have && !body) {
		conn_error(h, c, now, 500, ST_REFUSE__N, "cannot write the metrics");
	} else if (body) {
		h->stats.metrics++;
		conn_answer(h, c, now, 200, "text/plain; version=0.0.4; charset=utf-8", body, len,
			    NULL);
	} else if (now >= c->asked + ST_HTTP_HEAD_TIMEOUT_S) {
		conn_error(h, c, now, 503, ST_REFUSE__N, "the daemon has no metrics yet");
	} else if (now >= c->deadline) {
		c->deadline = now + ST_HTTP_METRICS_WAIT_S;	/* none yet: look again */
	}
	free(body);
}

/* /metrics: the body the main thread wrote last if it is younger than
 * ST_HTTP_METRICS_YOUNG_S, at once; else a fresh one, asked for and
 * answered by metrics_ready() when it comes, or the one there is after
 * ST_HTTP_METRICS_WAIT_S. Either way the main thread writes a new one
 * for the next request. */
static void serve_metrics(struct st_http *h, struct conn *c, double now)
{
	bool young;

	pthread_mutex_lock(&h->lock);
	young = h->metrics && now - h->metrics_at <= ST_HTTP_METRICS_YOUNG_S;
	c->metrics_gen = h->metrics_gen + !young;
	h->metrics_asked = now;
	h->metrics_wanted = true;	/* (young: fresher for the next request) */
	pthread_mutex_unlock(&h->lock);
	poke(h->main_wake);
	c->state = C_METRICS;
	c->asked = now;
	c->deadline = now + ST_HTTP_METRICS_WAIT_S;
	conn_watch(h, c, 0);
	metrics_ready(h, c, now);
}

/* The places held now by the connections in state st (C_FREE: in any
 * state), each with whether it is privileged there (by_view: by its
 * request's view, else by its uid); n of them. */
static size_t holders(const struct st_http *h, enum conn_state st, bool by_view,
		      struct st_http_holder *out)
{
	size_t n = 0;

	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
		const struct conn *c = &h->conns[i];

		if (c->state == C_FREE || (st != C_FREE && c->state != st))
			continue;
		out[n++] = (struct st_http_holder){
			.key = c->peer.key,
			.privileged = by_view ? c->view == ST_VIEW_ALL : c->privileged,
		};
	}
	return n;
}

/* A copy of a request's parameter, or NULL; *err set when out of memory. */
static char *param_dup(const struct st_http_request *req, const char *name, bool *err)
{
	const char *v = st_http__param(req, name);
	char *d = v ? strdup(v) : NULL;

	if (v && !d)
		*err = true;
	return d;
}

/* Hand the request's window to the main thread (a job): it opens it, and
 * the profile is answered in profile_ready() when it is over. A client
 * that sees its own processes only gets their threads, kernel frames
 * hidden. */
static void start_profile(struct st_http *h, struct conn *c, const struct st_http_request *req,
			  double now)
{
	const char *s = st_http__param(req, "seconds"), *pid = st_http__param(req, "pid");
	const char *ev = st_http__param(req, "event");
	bool alt = ev && h->o.alt_event && !strcmp(ev, h->o.alt_event);
	unsigned long max = h->o.max_seconds, p = 0;
	unsigned long secs = ST_HTTP_DEFAULT_SECONDS < max ? ST_HTTP_DEFAULT_SECONDS : max;
	struct st_http_holder held[ST_HTTP_MAX_CONNS];
	struct st_http_holder who = { .key = c->peer.key, .privileged = c->view == ST_VIEW_ALL };
	static const struct st_http_places places = {
		.total = ST_HTTP_MAX_PROFILES, .reserved = ST_HTTP_RESERVED_PROFILES,
		.per_peer = ST_HTTP_PEER_PROFILES,
	};
	char why[128];

	if (s && parse_uint(s, 1, 1000000000, &secs)) {
		snprintf(why, sizeof(why), "seconds: give a whole number of seconds, 1..%lu", max);
		conn_error(h, c, now, 400, ST_REFUSE_BAD_REQUEST, why);
		return;
	}
	if (secs > max) {
		snprintf(why, sizeof(why), "seconds: at most %lu here (--listen-max-seconds)", max);
		conn_error(h, c, now, 400, ST_REFUSE_SECONDS, why);
		return;
	}
	if (pid && parse_uint(pid, 1, 4194304, &p)) {
		conn_error(h, c, now, 400, ST_REFUSE_BAD_REQUEST, "pid: give a process id");
		return;
	}
	if (ev && !alt && strcmp(ev, h->o.event)) {
		snprintf(why, sizeof(why), "event: this session has %s%s%s", h->o.event,
			 h->o.alt_event ? " and " : "", h->o.alt_event ? h->o.alt_event : "");
		conn_error(h, c, now, 400, ST_REFUSE_BAD_REQUEST, why);
		return;
	}
	switch (st_http_places__admit(&places, held, holders(h, C_WAITING, true, held), &who)) {
	case 0:
		break;
	case 1:
		conn_error(h, c, now, 503, ST_REFUSE_PROFILES,
			   "too many profiles being taken; retry later");
		return;
	case 2:
		conn_error(h, c, now, 503, ST_REFUSE_PROFILES_SHARED,
			   "the profiles open to every user are being taken; retry later");
		return;
	default:
		conn_error(h, c, now, 503, ST_REFUSE_PROFILES_PEER,
			   "you are taking a profile already; retry when it is done");
		return;
	}
	for (c->job = 0; c->job < ST_HTTP_MAX_CONNS; c->job++)	/* (only the server makes */
		if (h->jobs[c->job].state == J_NONE)		/* a job out of J_NONE) */
			break;
	if (c->job == ST_HTTP_MAX_CONNS) {	/* cancelled ones not yet freed */
		conn_error(h, c, now, 503, ST_REFUSE_PROFILES,
			   "too many profiles being taken; retry later");
		return;
	}
	{
		struct job *j = &h->jobs[c->job];
		bool oom = false;

		j->comm = param_dup(req, "comm", &oom);
		j->container = param_dup(req, "container", &oom);
		j->cgroup = param_dup(req, "cgroup", &oom);
		if (oom) {
			job_clear(j);
			conn_error(h, c, now, 500, ST_REFUSE__N, "out of memory");
			return;
		}
		j->pid = (__u32)p;
		j->uid = c->peer.uid;
		j->all = c->view == ST_VIEW_ALL;
		j->alt = alt;
		j->seconds = (unsigned)secs;
		pthread_mutex_lock(&h->lock);
		j->state = J_ASKED;
		pthread_mutex_unlock(&h->lock);
	}
	poke(h->main_wake);
	c->state = C_WAITING;
	c->deadline = INFINITY;	/* until the main thread says it is done */
	/* nothing more to read: a client that goes away (hang-up, or its end
	 * shut) frees its profile's place at once */
	conn_watch(h, c, EPOLLRDHUP);
}

/* The server: answer c's profile if the main thread is done with it. */
static void profile_ready(struct st_http *h, struct conn *c, double now)
{
	struct job *j = &h->jobs[c->job];
	int status = 0;
	const char *why = NULL;
	char *body = NULL;
	size_t len = 0;

	pthread_mutex_lock(&h->lock);
	if (j->state == J_DONE) {
		status = j->status;
		why = j->why;
		body = j->body;
		len = j->len;
		j->body = NULL;
		job_clear(j);
	}
	pthread_mutex_unlock(&h->lock);
	if (!status)
		return;
	if (status == 200) {
		h->stats.profiles++;
		conn_answer(h, c, now, 200, "application/octet-stream", body, len,
			    "Content-Disposition: attachment; filename=\"profile.pb.gz\"\r\n");
	} else {
		conn_error(h, c, now, status, ST_REFUSE__N, why);
	}
	free(body);
}

static void route(struct st_http *h, struct conn *c, const struct st_http_request *req,
		  double now)
{
	bool metrics = !strcmp(req->path, "/metrics");
	bool profile = !strcmp(req->path, "/debug/pprof/profile");
	enum st_http_refusal_reason why = ST_REFUSE__N;

	c->view = st_http_policy__view(&h->pol, &c->peer, req->has_auth ? req->authorization : NULL,
				       &why);
	if (c->view == ST_VIEW_NONE)
		conn_error(h, c, now, 403, why,
			   why == ST_REFUSE_TOKEN ? "wrong bearer token" :
			   why == ST_REFUSE_REMOTE ? "clients not on loopback need the bearer token "
						     "of --listen-token-file" :
			   "cannot tell which user you are");
	else if (!metrics && !profile)
		conn_error(h, c, now, 404, ST_REFUSE_BAD_REQUEST,
			   "the endpoints are /debug/pprof/profile and /metrics");
	else if (strcmp(req->method, "GET"))
		conn_error(h, c, now, 405, ST_REFUSE_BAD_REQUEST, "only GET");
	else if (metrics)
		serve_metrics(h, c, now);
	else
		start_profile(h, c, req, now);
}

static void conn_read(struct st_http *h, struct conn *c, double now)
{
	struct st_http_request req;
	ssize_t n;
	int r;

	if (c->tls) {	/* the handshake first, then the request's bytes */
		__u32 want = EPOLLIN;

		n = st_http_tls__read(c->tls, c->in + c->inlen, sizeof(c->in) - c->inlen, &want);
		if (n == -EAGAIN) {
			conn_watch(h, c, want);
			return;
		}
		if (n < 0)
			h->stats.tls_failed++;
	} else {
		n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
	}
	if (!c->tls && n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(h, c);
		return;
	}
	c->inlen += (size_t)n;
	r = st_http__parse(c->in, c->inlen, &req);
	if (r > 0)
		route(h, c, &req, now);
	else if (r < 0)
		conn_error(h, c, now, -r, ST_REFUSE_BAD_REQUEST, "the request was refused");
}

/* A connection refused as soon as it is accepted: a short answer if the
 * socket takes it now, closed. */
static void refuse_now(struct st_http *h, int fd, enum st_http_refusal_reason by, bool tls)
{
	static const char busy[] =
		"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
		"Retry-After: 1\r\nConnection: close\r\n\r\n";

	h->stats.refused_busy++;
	h->stats.refused[by]++;
	/* (on TLS, closed without a word: an answer would need a handshake) */
	if (!tls && send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
		shutdown(fd, SHUT_WR);
	close(fd);
}

/* Accept what listener l has: each client's places checked first. */
static void accept_all(struct st_http *h, size_t l, double now)
{
	static const struct st_http_places places = {
		.total = ST_HTTP_MAX_CONNS, .reserved = ST_HTTP_RESERVED_CONNS,
		.per_peer = ST_HTTP_PEER_CONNS,
	};

	bool tls = h->tls && !h->ls[l].path;	/* TCP listeners; a Unix socket is local */

	for (int tries = 0; tries < ST_HTTP_MAX_CONNS * 2; tries++) {
		int fd = accept4(h->ls[l].fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct st_http_holder held[ST_HTTP_MAX_CONNS], who;
		struct st_http_peer peer;
		struct conn *c = NULL;
		struct epoll_event e;
		int r;

		if (fd < 0)
			return;
		st_http_peer__identify(fd, &peer);
		who = (struct st_http_holder){
			.key = peer.key,
			.privileged = peer.kind == ST_PEER_LOCAL &&
				      st_http_policy__privileged_uid(&h->pol, peer.uid),
		};
		r = st_http_places__admit(&places, held, holders(h, C_FREE, false, held), &who);
		if (r) {
			refuse_now(h, fd, r == 1 ? ST_REFUSE_CONNS :
					  r == 2 ? ST_REFUSE_CONNS_SHARED : ST_REFUSE_CONNS_PEER,
				   tls);
			continue;
		}
		for (size_t i = 0; i < ST_HTTP_MAX_CONNS && !c; i++)
			if (h->conns[i].state == C_FREE)
				c = &h->conns[i];
		*c = (struct conn){ .state = C_READING, .fd = fd, .peer = peer,
				    .privileged = who.privileged,
				    .deadline = now + ST_HTTP_HEAD_TIMEOUT_S };
		if (tls && !(c->tls = st_http_tls__accept(h->tls, fd))) {
			close(fd);
			c->state = C_FREE;
			continue;
		}
		e = (struct epoll_event){ .events = EPOLLIN, .data.u64 = (__u64)(c - h->conns) };
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &e)) {
			st_http_tls__close(c->tls);
			c->tls = NULL;
			close(fd);
			c->state = C_FREE;
		}
	}
}

/* How long the server may sleep: until the next deadline, at most 1 s. */
static int sleep_ms(const struct st_http *h, double now)
{
	double until = now + 1.0;

	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++)
		if (h->conns[i].state != C_FREE && h->conns[i].deadline < until)
			until = h->conns[i].deadline;
	return until <= now ? 0 : (int)((until - now) * 1000) + 1;
}

/* The server thread: accept, read, answer, write what the sockets take,
 * close what timed out; answer the metrics and profiles the main thread
 * made. Until st_http__free() says stop. */
static void *serve(void *arg)
{
	struct st_http *h = arg;
	double now = mono_now();

	for (;;) {
		struct epoll_event ev[ST_HTTP_MAX_CONNS + ST_HTTP_MAX_LISTEN + 1];
		bool incoming[ST_HTTP_MAX_LISTEN] = { false }, stop;
		int n = epoll_wait(h->epfd, ev, sizeof(ev) / sizeof(ev[0]), sleep_ms(h, now));

		now = mono_now();
		pthread_mutex_lock(&h->lock);
		stop = h->stop;
		pthread_mutex_unlock(&h->lock);
		if (stop)
			break;
		for (int i = 0; i < n; i++) {
			struct conn *c;

			if (ev[i].data.u64 == WAKE) {
				unpoke(h->server_wake);
				continue;
			}
			if (ev[i].data.u64 >= LISTENER) {	/* after the others: a slot
								 * freed now is not taken
								 * before the events of its
								 * old socket are */
				incoming[ev[i].data.u64 - LISTENER] = true;
				continue;
			}
			c = &h->conns[ev[i].data.u64];
			if ((ev[i].events & (EPOLLERR | EPOLLHUP)) ||
			    (c->state == C_WAITING && (ev[i].events & EPOLLRDHUP)))
				conn_close(h, c);
			else if (c->state == C_READING && (ev[i].events & (EPOLLIN | EPOLLOUT)))
				conn_read(h, c, now);	/* (EPOLLOUT: a TLS handshake's write) */
			else if (c->state == C_WRITING && (ev[i].events & (EPOLLIN | EPOLLOUT)))
				conn_flush(h, c);
		}
		for (size_t l = 0; l < h->nls; l++)
			if (incoming[l])
				accept_all(h, l, now);
		for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
			struct conn *c = &h->conns[i];

			if (c->state == C_METRICS)
				metrics_ready(h, c, now);
			else if (c->state == C_WAITING)
				profile_ready(h, c, now);
			if (c->state == C_FREE || c->state == C_METRICS || now < c->deadline)
				continue;
			h->stats.timed_out++;
			if (c->state == C_READING)
				conn_error(h, c, now, 408, ST_REFUSE__N,
					   "the request head took too long");
			else	/* a client that does not read its answer */
				conn_close(h, c);
		}
	}
	return NULL;
}

/* The main thread: the /metrics body, written now and published. */
static void publish_metrics(struct st_http *h)
{
	char *body = NULL, *old;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	int err = f ? 0 : -ENOMEM;

	if (f && h->o.metrics)
		err = h->o.metrics(h->o.ctx, f);
	if (f && fclose(f) && !err)
		err = -EIO;
	if (err) {	/* the last body stays; the next request asks again */
		free(body);
		return;
	}
	pthread_mutex_lock(&h->lock);
	old = h->metrics;
	h->metrics = body;
	h->metrics_len = len;
	h->metrics_at = mono_now();
	h->metrics_gen++;
	pthread_mutex_unlock(&h->lock);
	free(old);
	poke(h->server_wake);
}

/* The main thread: job i is done (status 200 with body, or an error),
 * its window freed; a job cancelled meanwhile is cleared instead. */
static void job_done(struct st_http *h, size_t i, int status, const char *why, char *body,
		     size_t len)
{
	struct job *j = &h->jobs[i];

	st_window__free(j->win);
	j->win = NULL;
	pthread_mutex_lock(&h->lock);
	if (j->state == J_CANCELLED) {
		job_clear(j);
		free(body);
	} else {
		j->state = J_DONE;
		j->status = status;
		j->why = why;
		j->body = body;
		j->len = len;
	}
	pthread_mutex_unlock(&h->lock);
	poke(h->server_wake);
}

/* The main thread: open job i's window (the trees just drained). */
static void job_open(struct st_http *h, size_t i)
{
	struct job *j = &h->jobs[i];
	struct st_window_filter f = {
		.pid = j->pid, .comm = j->comm, .container = j->container, .cgroup = j->cgroup,
		.own_only = !j->all, .uid = j->uid, .hide_kernel = !j->all,
	};

	j->win = st_window__new(h->o.coll, h->o.names, j->alt ? h->o.alt_event : h->o.event,
				j->alt ? h->o.alt_ev : h->o.ev, &f);
	j->start = mono_now();
	if (!j->win) {
		job_done(h, i, 500, "out of memory", NULL, 0);
		return;
	}
	pthread_mutex_lock(&h->lock);
	if (j->state == J_ASKED)
		j->state = J_OPEN;
	pthread_mutex_unlock(&h->lock);
}

/* The main thread: job i's seconds are over (the trees just drained): its
 * profile, gzipped pprof, its duration the window's. */
static void job_finish(struct st_http *h, size_t i, double now)
{
	struct job *j = &h->jobs[i];
	struct st_profile *p = st_window__take(j->win);
	unsigned char *body = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	if (!p) {
		job_done(h, i, 500, "out of memory", NULL, 0);
		return;
	}
	p->duration_s = now - j->start;
	if (h->o.header)
		h->o.header(h->o.ctx, p);
	if (!j->all) {	/* the command line is root's: say whose view */
		char *cmd = NULL;

		free(p->command);
		p->command = asprintf(&cmd, "processes of uid %u", (unsigned)j->uid) < 0 ?
			     NULL : cmd;
	}
	f = open_memstream((char **)&body, &len);
	err = f ? st_pprof__write(p, f) : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -EIO;
	st_profile__free(p);
	if (err) {
		free(body);
		job_done(h, i, 500, "cannot encode the profile", NULL, 0);
	} else {
		job_done(h, i, 200, NULL, (char *)body, len);
	}
}

void st_http__work(struct st_http *h, double now)
{
	enum job_state st[ST_HTTP_MAX_CONNS];
	bool wanted, asked = false, due = false;

	if (!h)
		return;
	/* (now: the windows' times are the endpoint's own clock's) */
	unpoke(h->main_wake);
	pthread_mutex_lock(&h->lock);
	now = mono_now();
	/* asked for; or scraped lately and aging */
	wanted = h->metrics_wanted || !h->metrics ||
		 (h->metrics_asked > 0 && now - h->metrics_asked <= ST_HTTP_METRICS_KEEP_S &&
		  now - h->metrics_at >= ST_HTTP_METRICS_YOUNG_S / 2);
	h->metrics_wanted = false;
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
		st[i] = h->jobs[i].state;
		if (st[i] == J_CANCELLED && !h->jobs[i].win)
			job_clear(&h->jobs[i]);
	}
	pthread_mutex_unlock(&h->lock);
	if (wanted)
		publish_metrics(h);
	now = mono_now();
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
		struct job *j = &h->jobs[i];

		if (st[i] == J_CANCELLED && j->win)
			job_done(h, i, 0, NULL, NULL, 0);	/* (clears it) */
		asked |= st[i] == J_ASKED;
		due |= st[i] == J_OPEN && now >= j->start + j->seconds;
	}
	/* the windows' edges: what the kernel's trees hold is counted before
	 * a window opens and before one ends */
	if ((asked || due) && h->o.drain && h->o.drain(h->o.ctx)) {
		for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++)
			if (st[i] == J_ASKED || (st[i] == J_OPEN &&
						 now >= h->jobs[i].start + h->jobs[i].seconds))
				job_done(h, i, 500, "cannot drain the kernel's trees", NULL, 0);
		return;
	}
	now = mono_now();
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
		struct job *j = &h->jobs[i];

		if (st[i] == J_OPEN && j->win && now >= j->start + j->seconds)
			job_finish(h, i, now);
		else if (st[i] == J_ASKED)
			job_open(h, i);
	}
}

void st_http__before_reset(struct st_http *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
		struct job *j = &h->jobs[i];

		if (j->win && st_window__fold(j->win, true))
			job_done(h, i, 500, "out of memory", NULL, 0);
	}
}

/* "PORT", "ADDR:PORT" or "[ADDR6]:PORT" into a socket address. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sl)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(s, ':'), *port = colon ? colon + 1 : s;
	unsigned long p;
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	if (parse_uint(port, 1, 65535, &p))
		return -EINVAL;
	if (colon) {
		size_t n = (size_t)(colon - s);

		if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
			s++;
			n -= 2;
		}
		if (n == 0 || n >= sizeof(host))
			return -EINVAL;
		memcpy(host, s, n);
		host[n] = '\0';
	}
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)p);
		*sl = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		*sl = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

#define UNIX_PREFIX "unix:"

/* "unix:/PATH": the path, or NULL when listen is not one. */
static const char *unix_path(const char *listen)
{
	return strncmp(listen, UNIX_PREFIX, sizeof(UNIX_PREFIX) - 1) ? NULL :
	       listen + sizeof(UNIX_PREFIX) - 1;
}

int st_http__check_listen(const char *listen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	const char *path = unix_path(listen);

	if (path && path[0] == '/' && strlen(path) < sizeof(((struct sockaddr_un *)0)->sun_path))
		return 0;
	if (path) {
		fprintf(stderr, "stacktreed: --listen '%s': give unix:/PATH, an absolute path of "
			"at most %zu bytes\n", listen,
			sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return -EINVAL;
	}
	if (!parse_listen(listen, &ss, &sl))
		return 0;
	fprintf(stderr, "stacktreed: --listen '%s': give PORT (loopback), ADDR:PORT, "
		"[ADDR6]:PORT, with a numeric address, or unix:/PATH\n", listen);
	return -EINVAL;
}

/* A stale socket file at path: ours, a socket, and no one accepts on it. */
static bool stale_socket(const char *path, const struct stat *st)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int fd, r;

	if (!S_ISSOCK(st->st_mode) || st->st_uid != geteuid())
		return false;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	memcpy(un.sun_path, path, strlen(path) + 1);
	r = connect(fd, (struct sockaddr *)&un, sizeof(un));
	r = r && errno == ECONNREFUSED;
	close(fd);
	return r;
}

/* Bind the unix: socket at path, mode ST_HTTP_UNIX_MODE: set through an
 * O_PATH descriptor of the very file bound (a socket, ours), never by the
 * path, which a link could have replaced meanwhile. */
static int listen_unix(struct listener *l, const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct stat st;
	char proc[64];
	int pfd = -1, err = 0;
	const char *what = "cannot listen";

	memcpy(un.sun_path, path, strlen(path) + 1);
	if (!lstat(path, &st)) {
		if (!stale_socket(path, &st)) {
			fprintf(stderr, "stacktreed: --listen unix:%s: %s; remove it or choose another "
				"path\n", path, S_ISSOCK(st.st_mode) && st.st_uid == geteuid() ?
				"another process serves this socket" :
				"the path exists and is not a socket of ours");
			return -EEXIST;
		}
		if (unlink(path) && errno != ENOENT) {
			err = -errno;
			what = "cannot remove the stale socket";
			goto fail;
		}
	}
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&un, sizeof(un))) {
		err = -errno;
		goto fail;
	}
	if (!(l->path = strdup(path))) {
		err = -ENOMEM;
		goto fail;
	}
	pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &st) || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		err = pfd < 0 ? -errno : -EPERM;
		what = "the socket file changed under us";
		goto fail;
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	if (chmod(proc, ST_HTTP_UNIX_MODE)) {
		err = -errno;
		what = "cannot set the socket's mode";
		goto fail;
	}
	close(pfd);
	if (listen(l->fd, 128)) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	if (pfd >= 0)
		close(pfd);
	fprintf(stderr, "stacktreed: --listen unix:%s: %s: %s\n", path, what, strerror(-err));
	return err;
}

static int listen_tcp(struct listener *l, const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1;

	parse_listen(addr, &ss, &sl);
	l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0 || setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l->fd, (struct sockaddr *)&ss, sl) || listen(l->fd, 128)) {
		int err = -errno;

		fprintf(stderr, "stacktreed: --listen %s: cannot listen: %s%s\n", addr,
			strerror(errno), errno == EADDRINUSE ? " (another process has the port: "
			"ss -ltnp shows which)" : "");
		return err;
	}
	return 0;
}

int st_http__new(const struct st_http_opts *o, struct st_http **out)
{
	struct st_http *h = calloc(1, sizeof(*h));
	struct epoll_event we = { .events = EPOLLIN, .data.u64 = WAKE };
	sigset_t all, old;
	int err = 0;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->o = *o;
	h->o.listen = NULL;
	h->pol = (struct st_http_policy){ .allow = o->allow, .nallow = o->nallow,
					  .token = o->token, .token_len = o->token_len };
	if (!h->o.max_seconds)
		h->o.max_seconds = ST_HTTP_MAX_SECONDS_DEFAULT;
	pthread_mutex_init(&h->lock, NULL);
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	h->main_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	h->server_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->epfd < 0 || h->main_wake < 0 || h->server_wake < 0 ||
	    epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->server_wake, &we)) {
		err = -errno;
		fprintf(stderr, "stacktreed: --listen: cannot make the endpoint's event files: "
			"%s\n", strerror(-err));
		goto fail;
	}
	if (o->tls_cert) {
		char why[512];

		if ((err = st_http_tls__new(o->tls_cert, o->tls_key, &h->tls, why, sizeof(why)))) {
			fprintf(stderr, "stacktreed: %s\n", why);
			goto fail;
		}
	}
	if (o->nlisten > ST_HTTP_MAX_LISTEN) {
		fprintf(stderr, "stacktreed: --listen: at most %d addresses\n", ST_HTTP_MAX_LISTEN);
		err = -EINVAL;
		goto fail;
	}
	for (size_t i = 0; i < o->nlisten; i++) {
		struct listener *l = &h->ls[h->nls];
		const char *path = unix_path(o->listen[i]);
		struct epoll_event e = { .events = EPOLLIN, .data.u64 = LISTENER + h->nls };
		struct sockaddr_storage ss;
		socklen_t sl;

		*l = (struct listener){ .fd = -1 };
		h->nls++;
		if ((err = st_http__check_listen(o->listen[i])) ||
		    (err = path ? listen_unix(l, path) : listen_tcp(l, o->listen[i])))
			goto fail;
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, l->fd, &e)) {
			err = -errno;
			goto fail;
		}
		if (!path && !o->token && !parse_listen(o->listen[i], &ss, &sl) &&
		    !st_http_peer__loopback(&ss))
			fprintf(stderr, "stacktreed: --listen %s: clients not on loopback are "
				"refused (403) without --listen-token-file\n", o->listen[i]);
	}
	/* the daemon's signals stay with its main thread (its loop's poll is
	 * what they interrupt): the server is born with them all blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&h->thread, NULL, serve, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		fprintf(stderr, "stacktreed: --listen: cannot start the endpoint's thread: %s\n",
			strerror(-err));
		goto fail;
	}
	h->running = true;
	*out = h;
	return 0;
fail:
	st_http__free(h);
	return err;
}

void st_http__free(struct st_http *h)
{
	if (!h)
		return;
	if (h->running) {
		pthread_mutex_lock(&h->lock);
		h->stop = true;
		pthread_mutex_unlock(&h->lock);
		poke(h->server_wake);
		pthread_join(h->thread, NULL);
	}
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++)
		conn_close(h, &h->conns[i]);
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
		st_window__free(h->jobs[i].win);
		job_clear(&h->jobs[i]);
	}
	for (size_t i = 0; i < h->nls; i++) {
		struct listener *l = &h->ls[i];
		struct stat st;

		if (l->fd >= 0)
			close(l->fd);
		/* the file we bound, not one put there since */
		if (l->path && !lstat(l->path, &st) && st.st_dev == l->dev && st.st_ino == l->ino)
			unlink(l->path);
		free(l->path);
	}
	if (h->epfd >= 0)
		close(h->epfd);
	if (h->main_wake >= 0)
		close(h->main_wake);
	if (h->server_wake >= 0)
		close(h->server_wake);
	st_http_tls__free(h->tls);
	free(h->metrics);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

int st_http__fd(const struct st_http *h)
{
	return h->main_wake;
}

