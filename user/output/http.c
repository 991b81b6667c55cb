/* http.c - the live endpoint's server: non-blocking sockets in one epoll
 * set, served from the daemon's loop (see http.h).
 *
 * A connection reads one request head, is answered once and closed
 * (Connection: close): a metrics answer at once; a profile after its N
 * seconds. A profile is a window (user/model/window.h) opened when the
 * request is read: it marks the collector's counts then, and names the
 * difference when the N seconds are over, so that the snapshots keep
 * every sample too; a service snapshot that resets the collector meanwhile
 * folds the open windows first (st_http__before_reset()). Memory is
 * bounded: ST_HTTP_MAX_CONNS connections with a head buffer each, at most
 * ST_HTTP_MAX_PROFILES windows, one answer per connection. Time is
 * bounded: no call waits on a socket; a head not read within its timeout
 * and an answer not taken within its timeout close the connection. */
#include "user/output/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "user/model/profile.h"
#include "user/model/window.h"
#include "user/output/http_parse.h"
#include "user/output/pprof.h"

enum conn_state { C_FREE, C_READING, C_WAITING, C_WRITING };

struct conn {
	enum conn_state state;
	int fd;
	double deadline;	/* reading: the head's; waiting: the window's end; writing */
	unsigned seconds;	/* waiting: the profile's length */
	struct st_window *win;
	char in[ST_HTTP_MAX_HEAD];
	size_t inlen;
	char *out;		/* the answer: head and body */
	size_t outlen, outpos;
};

struct st_http {
	struct st_http_opts o;
	int lfd, epfd;
	unsigned windows;	/* connections waiting for a profile */
	double now;		/* of the last st_http__work() */
	struct conn conns[ST_HTTP_MAX_CONNS];
	struct st_http_stats stats;
};

static void conn_close(struct st_http *h, struct conn *c)
{
	if (c->state == C_FREE)
		return;
	if (c->win) {
		st_window__free(c->win);
		c->win = NULL;
		h->windows--;
	}
	epoll_ctl(h->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	c->out = NULL;
	c->state = C_FREE;
}

/* Watch c's socket for ev (0: only errors). */
static void conn_watch(struct st_http *h, struct conn *c, __u32 ev)
{
	struct epoll_event e = { .events = ev, .data.ptr = c };

	epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &e);
}

/* Write what the socket takes now; close when all is written or on error. */
static void conn_flush(struct st_http *h, struct conn *c)
{
	while (c->outpos < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->outpos, c->outlen - c->outpos,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

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

	if (c->win) {
		st_window__free(c->win);
		c->win = NULL;
		h->windows--;
	}
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

static void conn_error(struct st_http *h, struct conn *c, double now, int status,
		       const char *why)
{
	char body[256];
	int n = snprintf(body, sizeof(body), "%d %s: %s\n", status, reason(status), why);

	if (status == 503)
		h->stats.refused_busy++;
	else
		h->stats.refused_bad++;
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

static void serve_metrics(struct st_http *h, struct conn *c, double now)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	int err;

	if (!f) {
		conn_error(h, c, now, 500, "out of memory");
		return;
	}
	h->stats.metrics++;
	err = h->o.metrics ? h->o.metrics(h->o.ctx, f) : 0;
	if (fclose(f) || err)
		conn_error(h, c, now, 500, "cannot write the metrics");
	else
		conn_answer(h, c, now, 200, "text/plain; version=0.0.4; charset=utf-8", body, len,
			    NULL);
	free(body);
}

/* Open the request's window: its profile is answered in st_http__work()
 * when its seconds are over. */
static void start_profile(struct st_http *h, struct conn *c, const struct st_http_request *req,
			  double now)
{
	struct st_window_filter f = {
		.comm = st_http__param(req, "comm"),
		.container = st_http__param(req, "container"),
		.cgroup = st_http__param(req, "cgroup"),
	};
	const char *s = st_http__param(req, "seconds"), *pid = st_http__param(req, "pid");
	unsigned long secs = 30, p = 0;

	if (s && parse_uint(s, 1, ST_HTTP_MAX_SECONDS, &secs)) {
		conn_error(h, c, now, 400, "seconds: give a whole number of seconds, 1..3600");
		return;
	}
	if (pid && parse_uint(pid, 1, 4194304, &p)) {
		conn_error(h, c, now, 400, "pid: give a process id");
		return;
	}
	if (h->windows >= ST_HTTP_MAX_PROFILES) {
		conn_error(h, c, now, 503, "too many profiles being taken; retry later");
		return;
	}
	f.pid = (__u32)p;
	c->win = st_window__new(h->o.coll, h->o.names, h->o.event, h->o.faults, &f);
	if (!c->win) {
		conn_error(h, c, now, 500, "out of memory");
		return;
	}
	h->windows++;
	c->seconds = (unsigned)secs;
	c->state = C_WAITING;
	c->deadline = now + (double)secs;
	/* nothing more to read: a client that goes away (hang-up, or its end
	 * shut) frees its profile's place at once */
	conn_watch(h, c, EPOLLRDHUP);
}

/* The window's seconds are over: its profile, gzipped pprof. */
static void finish_profile(struct st_http *h, struct conn *c, double now)
{
	struct st_profile *p;
	unsigned char *body = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	if (h->o.drain && h->o.drain(h->o.ctx)) {
		conn_error(h, c, now, 500, "cannot drain the kernel's trees");
		return;
	}
	p = st_window__take(c->win);
	if (!p) {
		conn_error(h, c, now, 500, "out of memory");
		return;
	}
	p->duration_s = c->seconds;
	if (h->o.header)
		h->o.header(h->o.ctx, p);
	f = open_memstream((char **)&body, &len);
	err = f ? st_pprof__write(p, f) : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -EIO;
	st_profile__free(p);
	if (err) {
		conn_error(h, c, now, 500, "cannot encode the profile");
	} else {
		h->stats.profiles++;
		conn_answer(h, c, now, 200, "application/octet-stream", body, len,
			    "Content-Disposition: attachment; filename=\"profile.pb.gz\"\r\n");
	}
	free(body);
}

static void route(struct st_http *h, struct conn *c, const struct st_http_request *req,
		  double now)
{
	bool metrics = !strcmp(req->path, "/metrics");
	bool profile = !strcmp(req->path, "/debug/pprof/profile");

	if (!metrics && !profile)
		conn_error(h, c, now, 404, "the endpoints are /debug/pprof/profile and /metrics");
	else if (strcmp(req->method, "GET"))
		conn_error(h, c, now, 405, "only GET");
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

	n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
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
		conn_error(h, c, now, -r, "the request was refused");
}

static void accept_all(struct st_http *h, double now)
{
	for (int tries = 0; tries < ST_HTTP_MAX_CONNS * 2; tries++) {
		int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c = NULL;
		struct epoll_event e;

		if (fd < 0)
			return;
		for (size_t i = 0; i < ST_HTTP_MAX_CONNS && !c; i++)
			if (h->conns[i].state == C_FREE)
				c = &h->conns[i];
		if (!c) {	/* full: a short answer if the socket takes it now */
			static const char busy[] =
				"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
				"Retry-After: 1\r\nConnection: close\r\n\r\n";

			h->stats.refused_busy++;
			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
				shutdown(fd, SHUT_WR);
			close(fd);
			continue;
		}
		*c = (struct conn){ .state = C_READING, .fd = fd,
				    .deadline = now + ST_HTTP_HEAD_TIMEOUT_S };
		e = (struct epoll_event){ .events = EPOLLIN, .data.ptr = c };
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &e)) {
			close(fd);
			c->state = C_FREE;
		}
	}
}

void st_http__work(struct st_http *h, double now)
{
	struct epoll_event ev[ST_HTTP_MAX_CONNS + 1];
	bool incoming = false;
	int n;

	if (!h)
		return;
	h->now = now;
	n = epoll_wait(h->epfd, ev, ST_HTTP_MAX_CONNS + 1, 0);
	for (int i = 0; i < n; i++) {
		struct conn *c = ev[i].data.ptr;

		if (!c) {	/* after the others: a slot freed now is not taken
				 * before the events of its old socket are */
			incoming = true;
			continue;
		}
		if ((ev[i].events & (EPOLLERR | EPOLLHUP)) ||
		    (c->state == C_WAITING && (ev[i].events & EPOLLRDHUP)))
			conn_close(h, c);
		else if (c->state == C_READING && (ev[i].events & EPOLLIN))
			conn_read(h, c, now);
		else if (c->state == C_WRITING && (ev[i].events & EPOLLOUT))
			conn_flush(h, c);
	}
	if (incoming)
		accept_all(h, now);
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
		struct conn *c = &h->conns[i];

		if (c->state == C_FREE || now < c->deadline)
			continue;
		if (c->state == C_WAITING) {
			finish_profile(h, c, now);
		} else if (c->state == C_READING) {
			h->stats.timed_out++;
			conn_error(h, c, now, 408, "the request head took too long");
		} else {
			h->stats.timed_out++;	/* a client that does not read its answer */
			conn_close(h, c);
		}
	}
}

void st_http__before_reset(struct st_http *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++) {
		struct conn *c = &h->conns[i];

		if (c->win && st_window__fold(c->win, true))
			conn_error(h, c, h->now, 500, "out of memory");
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

int st_http__check_listen(const char *listen)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	if (!parse_listen(listen, &ss, &sl))
		return 0;
	fprintf(stderr, "stacktreed: --listen '%s': give PORT (loopback), ADDR:PORT or "
		"[ADDR6]:PORT, with a numeric address\n", listen);
	return -EINVAL;
}

int st_http__new(const struct st_http_opts *o, struct st_http **out)
{
	struct st_http *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss;
	socklen_t sl;
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
	int one = 1, err;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->o = *o;
	h->lfd = h->epfd = -1;
	if ((err = st_http__check_listen(o->listen)))
		goto fail;
	parse_listen(o->listen, &ss, &sl);
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (h->lfd < 0 || h->epfd < 0 ||
	    setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(h->lfd, (struct sockaddr *)&ss, sl) || listen(h->lfd, ST_HTTP_MAX_CONNS * 2) ||
	    epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->lfd, &e)) {
		err = -errno;
		fprintf(stderr, "stacktreed: --listen %s: cannot listen: %s%s\n", o->listen,
			strerror(errno), errno == EADDRINUSE ? " (another process has the port: "
			"ss -ltnp shows which)" : "");
		goto fail;
	}
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
	for (size_t i = 0; i < ST_HTTP_MAX_CONNS; i++)
		conn_close(h, &h->conns[i]);
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->epfd >= 0)
		close(h->epfd);
	free(h);
}

int st_http__fd(const struct st_http *h)
{
	return h->epfd;
}

void st_http__stats(const struct st_http *h, struct st_http_stats *out)
{
	*out = h->stats;
	out->open_profiles = h->windows;
}
