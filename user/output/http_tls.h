/* http_tls.h - the live endpoint's TLS (--listen-tls-cert, --listen-tls-key):
 * an OpenSSL server context, and each connection's session over its
 * non-blocking socket.
 *
 * Owner: user/output/http_tls.c. The key file is read as the token file
 * is (http_policy.h): opened without following a link, a regular file
 * owned by the daemon's uid and readable by it alone (mode 0600 or 0400),
 * parsed from memory (PEM), so that what was checked is what is used. The
 * certificate (a chain, PEM) is public. TLS 1.2 and 1.3 only, OpenSSL's
 * default ciphers for them; no client certificates (clients are told
 * apart by their uid on loopback and by the bearer token elsewhere). Errors
 * are codes and a text for the caller to print; nothing here prints.
 */
#ifndef STACKTREE_HTTP_TLS_H
#define STACKTREE_HTTP_TLS_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct st_http_tls;
struct st_http_tls_conn;

/* A server context from cert and key: 0, or a negative errno with why
 * (errlen bytes) saying what is wrong with which file. */
int st_http_tls__new(const char *cert, const char *key, struct st_http_tls **out, char *why,
		     size_t errlen);
void st_http_tls__free(struct st_http_tls *t);

/* A session over accepted socket fd (the server's side; its handshake is
 * driven by the first reads), or NULL (ENOMEM). */
struct st_http_tls_conn *st_http_tls__accept(struct st_http_tls *t, int fd);
/* Tell the peer we are done (one close_notify, not waited for) and free. */
void st_http_tls__close(struct st_http_tls_conn *c);

/* Decrypted bytes read into buf (> 0), 0 when the peer closed, -EAGAIN
 * when the socket must be ready first (*want: EPOLLIN or EPOLLOUT), or
 * another negative errno (a failed handshake, a broken stream). */
ssize_t st_http_tls__read(struct st_http_tls_conn *c, void *buf, size_t n, __u32 *want);
/* Bytes of buf written (> 0), -EAGAIN with *want, or a negative errno. */
ssize_t st_http_tls__write(struct st_http_tls_conn *c, const void *buf, size_t n, __u32 *want);

#endif
