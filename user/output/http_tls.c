/* http_tls.c - the live endpoint's TLS (see http_tls.h). */
#include "user/output/http_tls.h"
#include "user/output/http_policy.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#define ST_TLS_MAX_KEY (64 * 1024)	/* bytes of a key file read (an RSA-16384 PEM is ~12 KiB) */

struct st_http_tls {
	SSL_CTX *ctx;
};

struct st_http_tls_conn {
	SSL *ssl;
};

/* OpenSSL's last error, as text, into why. */
static void ossl_why(char *why, size_t errlen, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[200] = "";

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	snprintf(why, errlen, "%s%s%s", what, *buf ? ": " : "", buf);
	ERR_clear_error();
}

/* The key file's bytes, checked as the token file is (http_policy.h): 0
 * or a negative errno. */
static int read_key(const char *path, char **data, size_t *len, char *why, size_t errlen)
{
	char what[256];
	int r;

	*data = malloc(ST_TLS_MAX_KEY);
	if (!*data)
		return -ENOMEM;
	r = st_http_policy__read_secret(path, *data, ST_TLS_MAX_KEY, len, what, sizeof(what));
	if (!r && (!*len || *len == ST_TLS_MAX_KEY)) {
		snprintf(what, sizeof(what), "a PEM key of 1 to %d bytes", ST_TLS_MAX_KEY - 1);
		r = -EINVAL;
	}
	if (r) {
		snprintf(why, errlen, "--listen-tls-key %s: %s", path, what);
		OPENSSL_cleanse(*data, ST_TLS_MAX_KEY);
		free(*data);
		*data = NULL;
	}
	return r;
}

/* OpenSSL writes to the socket with write(): a peer gone raises SIGPIPE,
 * which would end the daemon (send(MSG_NOSIGNAL) is what http.c uses).
 * Around each call that may write: SIGPIPE blocked, and one it raised
 * taken before it is unblocked. */
struct sigpipe_guard {
	sigset_t old;
	bool pending_before;
};

static void sigpipe_block(struct sigpipe_guard *g)
{
	sigset_t pipe, pending;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigpending(&pending);
	g->pending_before = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &g->old);
}

static void sigpipe_restore(struct sigpipe_guard *g)
{
	static const struct timespec none = { 0, 0 };
	sigset_t pipe;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	if (!g->pending_before)
		while (sigtimedwait(&pipe, NULL, &none) == SIGPIPE)
			;
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

int st_http_tls__new(const char *cert, const char *key, struct st_http_tls **out, char *why,
		     size_t errlen)
{
	struct st_http_tls *t = calloc(1, sizeof(*t));
	EVP_PKEY *pkey = NULL;
	char *kdata = NULL;
	size_t klen = 0;
	BIO *bio = NULL;
	int r = 0;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	if ((r = read_key(key, &kdata, &klen, why, errlen)))
		goto cleanup;
	t->ctx = SSL_CTX_new(TLS_server_method());
	if (!t->ctx || !SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION)) {
		ossl_why(why, errlen, "cannot make a TLS context");
		r = -ENOMEM;
		goto cleanup;
	}
	if (SSL_CTX_use_certificate_chain_file(t->ctx, cert) != 1) {
		char what[300];

		snprintf(what, sizeof(what), "--listen-tls-cert %s: not a PEM certificate chain "
			 "this process can read", cert);
		ossl_why(why, errlen, what);
		r = -EINVAL;
		goto cleanup;
	}
	bio = BIO_new_mem_buf(kdata, (int)klen);
	pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
	if (!pkey || SSL_CTX_use_PrivateKey(t->ctx, pkey) != 1) {
		char what[300];

		snprintf(what, sizeof(what), "--listen-tls-key %s: not a PEM private key "
			 "without a passphrase", key);
		ossl_why(why, errlen, what);
		r = -EINVAL;
		goto cleanup;
	}
	if (SSL_CTX_check_private_key(t->ctx) != 1) {
		snprintf(why, errlen, "--listen-tls-key %s is not the key of --listen-tls-cert %s",
			 key, cert);
		ERR_clear_error();
		r = -EINVAL;
		goto cleanup;
	}
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
					 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	*out = t;
	t = NULL;
cleanup:
	EVP_PKEY_free(pkey);
	BIO_free(bio);
	if (kdata) {
		OPENSSL_cleanse(kdata, klen);
		free(kdata);
	}
	st_http_tls__free(t);
	return r;
}

void st_http_tls__free(struct st_http_tls *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}

struct st_http_tls_conn *st_http_tls__accept(struct st_http_tls *t, int fd)
{
	struct st_http_tls_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ssl = SSL_new(t->ctx);
	if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1) {
		SSL_free(c->ssl);
		free(c);
		ERR_clear_error();
		return NULL;
	}
	SSL_set_accept_state(c->ssl);
	return c;
}

void st_http_tls__close(struct st_http_tls_conn *c)
{
	if (!c)
		return;
	if (SSL_is_init_finished(c->ssl)) {
		struct sigpipe_guard g;

		sigpipe_block(&g);
		SSL_shutdown(c->ssl);	/* our close_notify; the peer's not waited for */
		sigpipe_restore(&g);
	}
	SSL_free(c->ssl);
	ERR_clear_error();
	free(c);
}

/* An SSL_read/SSL_write result as this file's return. */
static ssize_t result(struct st_http_tls_conn *c, int n, __u32 *want)
{
	if (n > 0)
		return n;
	switch (SSL_get_error(c->ssl, n)) {
	case SSL_ERROR_WANT_READ:
		*want = EPOLLIN;
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		*want = EPOLLOUT;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:	/* the peer's close_notify */
		return 0;
	default:
		ERR_clear_error();
		return -EPROTO;
	}
}

ssize_t st_http_tls__read(struct st_http_tls_conn *c, void *buf, size_t n, __u32 *want)
{
	struct sigpipe_guard g;
	int r;

	sigpipe_block(&g);	/* the handshake and alerts write */
	r = SSL_read(c->ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
	sigpipe_restore(&g);
	return result(c, r, want);
}

ssize_t st_http_tls__write(struct st_http_tls_conn *c, const void *buf, size_t n, __u32 *want)
{
	struct sigpipe_guard g;
	int r;

	sigpipe_block(&g);
	r = SSL_write(c->ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
	sigpipe_restore(&g);
	return result(c, r, want);
}
