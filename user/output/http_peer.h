/* http_peer.h - who is at the other end of an accepted connection of the
 * live endpoint (user/output/http.h): a local uid or a remote address.
 * Owner: user/output/http_peer.c.
 *
 * A Unix socket peer: its uid from SO_PEERCRED (its effective uid when it
 * connected). A TCP peer on loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104):
 * the owner of its own socket, from the kernel's socket table
 * (NETLINK_SOCK_DIAG, the exact 4-tuple: the socket whose source is the
 * peer's address and port and whose destination is ours), accepted only
 * when that socket is a connected one held by a file (not a time-wait or
 * orphan entry, which carry no owner) and its tuple is exactly the one
 * asked. Any other TCP peer is remote.
 */
#ifndef STACKTREE_HTTP_PEER_H
#define STACKTREE_HTTP_PEER_H

#include <netinet/in.h>
#include <sys/socket.h>

#include "user/output/http_policy.h"

/* The peer of fd (an accepted stream socket) into *out; never blocks. A
 * loopback peer not found in the table is ST_PEER_UNKNOWN. */
void st_http_peer__identify(int fd, struct st_http_peer *out);

/* Whether a socket address is a loopback one (IPv4-mapped included). */
bool st_http_peer__loopback(const struct sockaddr_storage *ss);

/* The owner uid of the TCP socket whose local end is src and remote end
 * dst (both AF_INET or both AF_INET6) from the kernel's socket table:
 * 0 and *uid, or -ENOENT (none, or no owner), or -errno. */
int st_http_peer__tcp_owner(const struct sockaddr_storage *src,
			    const struct sockaddr_storage *dst, __u32 *uid);

#endif
