/* test_http_policy.c - who gets what from the live endpoint
 * (user/output/http_policy.h, user/output/http_peer.h): every view
 * decision, the bearer token's comparison and file, --listen-allow's
 * names, the places per client with the reserve kept for root, and the
 * peers of real sockets (loopback TCP through the kernel's socket table,
 * a Unix socket, a client already gone, and as root a client of another
 * uid). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "user/output/http_peer.h"
#include "user/output/http_policy.h"

#define TMPDIR_PREFIX "st-httppol-"
#include "tmpdir_fx.h"

static const __u32 allowed[] = { 1000, 1002 };

static void test_views(void **state)
{
	struct st_http_policy open = { .allow = allowed, .nallow = 2 };
	struct st_http_policy tok = { .allow = allowed, .nallow = 2, .token = "s3cret",
				      .token_len = 6 };
	struct st_http_peer root = { ST_PEER_LOCAL, 0, 0 }, alice = { ST_PEER_LOCAL, 1000, 1000 };
	struct st_http_peer nobody = { ST_PEER_LOCAL, 65534, 65534 };
	struct st_http_peer far = { ST_PEER_REMOTE, 0, 1ull << 62 | 5 };
	struct st_http_peer lost = { ST_PEER_UNKNOWN, 0, ST_HTTP_UNKNOWN_KEY };
	enum st_http_refusal_reason why = ST_REFUSE__N;

	(void)state;
	assert_int_equal(st_http_policy__view(&open, &root, NULL, &why), ST_VIEW_ALL);
	assert_int_equal(st_http_policy__view(&open, &alice, NULL, &why), ST_VIEW_ALL);
	assert_int_equal(st_http_policy__view(&open, &nobody, NULL, &why), ST_VIEW_OWN);
	/* an Authorization header without a token file adds nothing locally */
	assert_int_equal(st_http_policy__view(&open, &nobody, "Bearer x", &why), ST_VIEW_OWN);
	assert_int_equal(st_http_policy__view(&open, &far, NULL, &why), ST_VIEW_NONE);
	assert_int_equal(why, ST_REFUSE_REMOTE);
	assert_int_equal(st_http_policy__view(&open, &far, "Bearer x", &why), ST_VIEW_NONE);
	assert_int_equal(why, ST_REFUSE_TOKEN);
	assert_int_equal(st_http_policy__view(&open, &lost, NULL, &why), ST_VIEW_NONE);
	assert_int_equal(why, ST_REFUSE_UNKNOWN_PEER);
	/* with a token file: the token gives everything, from anywhere */
	assert_int_equal(st_http_policy__view(&tok, &far, "Bearer s3cret", &why), ST_VIEW_ALL);
	assert_int_equal(st_http_policy__view(&tok, &nobody, "Bearer s3cret", &why), ST_VIEW_ALL);
	assert_int_equal(st_http_policy__view(&tok, &lost, "Bearer s3cret", &why), ST_VIEW_ALL);
	assert_int_equal(st_http_policy__view(&tok, &far, NULL, &why), ST_VIEW_NONE);
	assert_int_equal(why, ST_REFUSE_REMOTE);
	/* a wrong one is refused, whoever sends it */
	why = ST_REFUSE__N;
	assert_int_equal(st_http_policy__view(&tok, &far, "Bearer s3crex", &why), ST_VIEW_NONE);
	assert_int_equal(why, ST_REFUSE_TOKEN);
	why = ST_REFUSE__N;
	assert_int_equal(st_http_policy__view(&tok, &root, "Bearer nope", &why), ST_VIEW_NONE);
	assert_int_equal(why, ST_REFUSE_TOKEN);
	assert_int_equal(st_http_policy__view(&tok, &nobody, NULL, &why), ST_VIEW_OWN);
	assert_true(st_http_policy__privileged_uid(&open, 0));
	assert_true(st_http_policy__privileged_uid(&open, 1002));
	assert_false(st_http_policy__privileged_uid(&open, 1001));
}

static void test_bearer(void **state)
{
	const char *t = "abc.DEF-123";
	size_t n = strlen(t);

	(void)state;
	assert_true(st_http_policy__bearer_ok(t, n, "Bearer abc.DEF-123"));
	assert_true(st_http_policy__bearer_ok(t, n, "bearer   abc.DEF-123"));
	assert_true(st_http_policy__bearer_ok(t, n, "BEARER abc.DEF-123"));
	assert_false(st_http_policy__bearer_ok(t, n, "Bearer abc.DEF-12"));	/* a prefix */
	assert_false(st_http_policy__bearer_ok(t, n, "Bearer abc.DEF-1234"));	/* longer */
	assert_false(st_http_policy__bearer_ok(t, n, "Bearer abc.def-123"));	/* case counts */
	assert_false(st_http_policy__bearer_ok(t, n, "Bearer xbc.DEF-123"));
	assert_false(st_http_policy__bearer_ok(t, n, "Bearer "));
	assert_false(st_http_policy__bearer_ok(t, n, "Bearer"));
	assert_false(st_http_policy__bearer_ok(t, n, "Bearerabc.DEF-123"));
	assert_false(st_http_policy__bearer_ok(t, n, "Basic abc.DEF-123"));
	assert_false(st_http_policy__bearer_ok(t, n, "abc.DEF-123"));
	assert_false(st_http_policy__bearer_ok(t, n, ""));
	assert_false(st_http_policy__bearer_ok(t, 0, "Bearer "));
	assert_false(st_http_policy__bearer_ok(NULL, 0, "Bearer x"));
}

/* The places: a privileged holder only meets the total; the others share
 * what the reserve leaves, each at most per_peer. */
static void test_places(void **state)
{
	const struct st_http_places pl = { .total = 6, .reserved = 2, .per_peer = 2 };
	struct st_http_holder held[8] = { { 0, false } };
	const struct st_http_holder rootw = { 0, true }, a = { 7, false }, b = { 8, false };
	size_t n = 0;

	(void)state;
	assert_int_equal(st_http_places__admit(&pl, held, n, &a), 0);
	held[n++] = a;
	assert_int_equal(st_http_places__admit(&pl, held, n, &a), 0);
	held[n++] = a;
	assert_int_equal(st_http_places__admit(&pl, held, n, &a), 3);	/* a's own are taken */
	assert_int_equal(st_http_places__admit(&pl, held, n, &b), 0);
	held[n++] = b;
	held[n++] = b;
	/* 4 shared places taken: the last 2 are root's */
	assert_int_equal(st_http_places__admit(&pl, held, n, &(struct st_http_holder){ 9, false }),
			 2);
	assert_int_equal(st_http_places__admit(&pl, held, n, &rootw), 0);
	held[n++] = rootw;
	assert_int_equal(st_http_places__admit(&pl, held, n, &rootw), 0);
	held[n++] = rootw;
	assert_int_equal(st_http_places__admit(&pl, held, n, &rootw), 1);	/* all taken */
	/* a root holder does not count against the others' share */
	n = 0;
	for (int i = 0; i < 4; i++)
		held[n++] = rootw;
	assert_int_equal(st_http_places__admit(&pl, held, n, &a), 0);
	held[n++] = a;
	assert_int_equal(st_http_places__admit(&pl, held, n, &b), 0);
	held[n++] = b;
	assert_int_equal(st_http_places__admit(&pl, held, n, &rootw), 1);
	/* a reserve as large as the total leaves nothing to the others */
	assert_int_equal(st_http_places__admit(&(struct st_http_places){ 2, 2, 1 }, held, 0, &a), 2);
}

static void test_keys(void **state)
{
	unsigned char v6a[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1 };
	unsigned char v6b[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 9, 9, 9, 9, 9, 9, 9, 9 };
	unsigned char v6c[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1 };
	unsigned char v4a[4] = { 10, 0, 0, 1 }, v4b[4] = { 10, 0, 0, 2 };
	__u64 k;

	(void)state;
	/* one /64 is one client; kinds never meet */
	assert_true(st_http_peer__remote_key(v6a, 16) == st_http_peer__remote_key(v6b, 16));
	assert_true(st_http_peer__remote_key(v6a, 16) != st_http_peer__remote_key(v6c, 16));
	assert_true(st_http_peer__remote_key(v4a, 4) != st_http_peer__remote_key(v4b, 4));
	k = st_http_peer__remote_key(v4a, 4);
	assert_true(k >> 62 == 1);
	assert_true(st_http_peer__local_key(0xfffffffeu) >> 62 == 0);
	assert_true(ST_HTTP_UNKNOWN_KEY >> 62 == 3);
}

static void test_allow(void **state)
{
	__u32 *uids = NULL;
	size_t n = 0;
	char err[128];

	(void)state;
	assert_int_equal(st_http_policy__allow("root,4242,@root", &uids, &n, err, sizeof(err)), 0);
	/* root once, 4242, and root again (root's primary group) not twice */
	assert_int_equal(n, 2);
	assert_int_equal(uids[0], 0);
	assert_int_equal(uids[1], 4242);
	assert_int_equal(st_http_policy__allow("no-such-user-st", &uids, &n, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "no-such-user-st"));
	assert_int_equal(st_http_policy__allow("@no-such-group-st", &uids, &n, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "no-such-group-st"));
	assert_int_equal(st_http_policy__allow("12x", &uids, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(st_http_policy__allow("4294967295", &uids, &n, err, sizeof(err)), -EINVAL);
	free(uids);
}

static void write_file(const char *path, const char *s, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void test_token_file(void **state)
{
	struct tmpdir_fx *f = *state;
	char *tok, err[256], link[300], big[ST_HTTP_MAX_TOKEN + 2];
	size_t len;

	snprintf(f->path, sizeof(f->path), "%s/token", f->dir);
	write_file(f->path, "s3cret-token\n", 0600);
	assert_int_equal(st_http_policy__read_token(f->path, &tok, &len, err, sizeof(err)), 0);
	assert_string_equal(tok, "s3cret-token");
	assert_int_equal(len, 12);
	free(tok);
	write_file(f->path, "s3cret-token\n", 0400);
	assert_int_equal(st_http_policy__read_token(f->path, &tok, &len, err, sizeof(err)), 0);
	free(tok);
	/* others may read it: refused */
	write_file(f->path, "s3cret-token\n", 0644);
	assert_int_equal(st_http_policy__read_token(f->path, &tok, &len, err, sizeof(err)), -EPERM);
	assert_null(tok);
	assert_non_null(strstr(err, "600"));
	write_file(f->path, "s3cret-token\n", 0640);
	assert_int_equal(st_http_policy__read_token(f->path, &tok, &len, err, sizeof(err)), -EPERM);
	/* empty, a space inside, too long */
	write_file(f->path, " \n", 0600);
	assert_int_equal(st_http_policy__read_token(f->path, &tok, &len, err, sizeof(err)), -EINVAL);
	write_file(f->path, "two words\n", 0600);
	assert_int_equal(st_http_policy__read_token(f->path, &tok, &len, err, sizeof(err)), -EINVAL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	write_file(f->path, big, 0600);
	assert_int_equal(st_http_policy__read_token(f->path, &tok, &len, err, sizeof(err)), -EINVAL);
	big[sizeof(big) - 2] = '\0';	/* ST_HTTP_MAX_TOKEN: taken */
	write_file(f->path, big, 0600);
	assert_int_equal(st_http_policy__read_token(f->path, &tok, &len, err, sizeof(err)), 0);
	assert_int_equal(len, ST_HTTP_MAX_TOKEN);
	free(tok);
	/* a symbolic link is not followed, a directory is not a file */
	snprintf(link, sizeof(link), "%s/link", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	assert_true(st_http_policy__read_token(link, &tok, &len, err, sizeof(err)) < 0);
	assert_true(st_http_policy__read_token(f->dir, &tok, &len, err, sizeof(err)) < 0);
}

/* A listening loopback socket and its address. */
static int tcp_listener(struct sockaddr_in *a)
{
	socklen_t al = sizeof(*a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	*a = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)a, sizeof(*a)), 0);
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)a, &al), 0);
	return l;
}

/* Real peers: a loopback client is ours (found in the socket table); a
 * Unix socket peer too (SO_PEERCRED); a client whose socket is gone
 * (closed before the lookup: an orphan or time-wait entry, uid 0 in the
 * table) is not taken for root but unknown; as root, a client of uid
 * 65534 is 65534. */
static void test_real_peers(void **state)
{
	struct sockaddr_in a;
	struct st_http_peer p;
	int l = tcp_listener(&a), c, s, sv[2];
	pid_t child;

	(void)state;
	c = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	s = accept(l, NULL, NULL);
	assert_true(s >= 0);
	st_http_peer__identify(s, &p);
	assert_int_equal(p.kind, ST_PEER_LOCAL);
	assert_int_equal(p.uid, geteuid());
	assert_true(p.key == st_http_peer__local_key(geteuid()));
	close(c);	/* gone: its socket is an orphan (FIN_WAIT2), then time-wait */
	usleep(20000);
	st_http_peer__identify(s, &p);
	assert_int_equal(p.kind, ST_PEER_UNKNOWN);
	close(s);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	st_http_peer__identify(sv[0], &p);
	assert_int_equal(p.kind, ST_PEER_LOCAL);
	assert_int_equal(p.uid, geteuid());
	close(sv[0]);
	close(sv[1]);

	if (geteuid() != 0) {
		close(l);
		return;
	}
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {	/* a client of another uid, held until its peer is seen */
		char b;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&a, sizeof(a)) || read(c, &b, 1) < 0)
			_exit(3);
		_exit(0);
	}
	s = accept(l, NULL, NULL);
	assert_true(s >= 0);
	st_http_peer__identify(s, &p);
	assert_int_equal(write(s, "x", 1), 1);
	close(s);
	close(l);
	{
		int status;

		assert_int_equal(waitpid(child, &status, 0), child);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(p.kind, ST_PEER_LOCAL);
	assert_int_equal(p.uid, 65534);
}

static void test_loopback(void **state)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

	(void)state;
	in->sin_family = AF_INET;
	inet_pton(AF_INET, "127.3.4.5", &in->sin_addr);
	assert_true(st_http_peer__loopback(&ss));
	inet_pton(AF_INET, "10.0.0.1", &in->sin_addr);
	assert_false(st_http_peer__loopback(&ss));
	memset(&ss, 0, sizeof(ss));
	in6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, "::1", &in6->sin6_addr);
	assert_true(st_http_peer__loopback(&ss));
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6->sin6_addr);
	assert_true(st_http_peer__loopback(&ss));
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &in6->sin6_addr);
	assert_false(st_http_peer__loopback(&ss));
	inet_pton(AF_INET6, "2001:db8::1", &in6->sin6_addr);
	assert_false(st_http_peer__loopback(&ss));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_bearer),
		cmocka_unit_test(test_places),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_allow),
		cmocka_unit_test_setup_teardown(test_token_file, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_real_peers),
		cmocka_unit_test(test_loopback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
