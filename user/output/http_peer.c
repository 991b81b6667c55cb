/* http_peer.c - the live endpoint's client, identified: SO_PEERCRED on a
 * Unix socket, the kernel's socket table for a loopback TCP peer (see
 * http_peer.h). */
#include "user/output/http_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

bool st_http_peer__loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/* The states of a connected socket that still has its owner: not a
 * listener, not a request or a time-wait entry (their uid reads 0). */
static bool connected_state(unsigned state)
{
	switch (state) {
	case TCP_ESTABLISHED:
	case TCP_FIN_WAIT1:
	case TCP_FIN_WAIT2:
	case TCP_CLOSE_WAIT:
	case TCP_LAST_ACK:
	case TCP_CLOSING:
		return true;
	default:
		return false;
	}
}

/* An address and port as inet_diag_sockid holds them. */
static void sockid_addr(const struct sockaddr_storage *ss, __be32 addr[4], __be16 *port)
{
	memset(addr, 0, 16);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		addr[0] = in->sin_addr.s_addr;
		*port = in->sin_port;
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		memcpy(addr, &in6->sin6_addr, 16);
		*port = in6->sin6_port;
	}
}

int st_http_peer__tcp_owner(const struct sockaddr_storage *src,
			    const struct sockaddr_storage *dst, __u32 *uid)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = (__u8)src->ss_family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_states = ~0u,
		       .id = { .idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } },
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	union {
		struct nlmsghdr h;
		char buf[8192];
	} ans;
	size_t alen = src->ss_family == AF_INET ? 4 : 16;
	ssize_t n;
	int fd, err = -ENOENT;

	if (src->ss_family != dst->ss_family ||
	    (src->ss_family != AF_INET && src->ss_family != AF_INET6))
		return -EINVAL;
	sockid_addr(src, req.r.id.idiag_src, &req.r.id.idiag_sport);
	sockid_addr(dst, req.r.id.idiag_dst, &req.r.id.idiag_dport);
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		err = -errno;
		goto out;
	}
	/* the kernel answers an exact lookup within sendto(): the answer is
	 * queued already, never waited for */
	n = recv(fd, &ans, sizeof(ans), MSG_DONTWAIT);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	for (struct nlmsghdr *h = &ans.h; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		const struct inet_diag_msg *m = NLMSG_DATA(h);

		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
			continue;
		/* the very socket asked for (a lookup falls back to a listener
		 * on the source port), connected, held by a file: a time-wait
		 * or orphan entry reads uid 0 and inode 0 */
		if (m->idiag_family != req.r.sdiag_family || !connected_state(m->idiag_state) ||
		    !m->idiag_inode || m->id.idiag_sport != req.r.id.idiag_sport ||
		    m->id.idiag_dport != req.r.id.idiag_dport ||
		    memcmp(m->id.idiag_src, req.r.id.idiag_src, alen) ||
		    memcmp(m->id.idiag_dst, req.r.id.idiag_dst, alen))
			continue;
		*uid = m->idiag_uid;
		err = 0;
		break;
	}
out:
	close(fd);
	return err;
}

/* An IPv4-mapped IPv6 address as IPv4. */
static void unmap(const struct sockaddr_storage *in, struct sockaddr_storage *out)
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)in;
	struct sockaddr_in *o = (struct sockaddr_in *)out;

	memset(out, 0, sizeof(*out));
	o->sin_family = AF_INET;
	o->sin_port = in6->sin6_port;
	memcpy(&o->sin_addr, &in6->sin6_addr.s6_addr[12], 4);
}

static bool mapped(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 &&
	       IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

void st_http_peer__identify(int fd, struct st_http_peer *out)
{
	struct sockaddr_storage self, peer, s4, p4;
	socklen_t sl = sizeof(self), pl = sizeof(peer);

	*out = (struct st_http_peer){ .kind = ST_PEER_UNKNOWN, .key = ST_HTTP_UNKNOWN_KEY };
	if (getsockname(fd, (struct sockaddr *)&self, &sl) ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl))
		return;
	if (self.ss_family == AF_UNIX) {
		struct ucred cr;
		socklen_t cl = sizeof(cr);

		if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) && cl == sizeof(cr)) {
			out->kind = ST_PEER_LOCAL;
			out->uid = cr.uid;
			out->key = st_http_peer__local_key(cr.uid);
		}
		return;
	}
	if (!st_http_peer__loopback(&peer)) {
		out->kind = ST_PEER_REMOTE;
		if (mapped(&peer)) {
			unmap(&peer, &p4);
			out->key = st_http_peer__remote_key(
				(const unsigned char *)&((struct sockaddr_in *)&p4)->sin_addr, 4);
		} else if (peer.ss_family == AF_INET) {
			out->key = st_http_peer__remote_key(
				(const unsigned char *)&((struct sockaddr_in *)&peer)->sin_addr, 4);
		} else {
			out->key = st_http_peer__remote_key(
				((struct sockaddr_in6 *)&peer)->sin6_addr.s6_addr, 16);
		}
		return;
	}
	/* the peer's socket: its source is the peer's address, its
	 * destination ours. A v4-mapped peer of a dual-stack listener is most
	 * likely an AF_INET socket, else an AF_INET6 one with mapped addresses */
	if (mapped(&peer) && mapped(&self)) {
		unmap(&peer, &p4);
		unmap(&self, &s4);
		if (!st_http_peer__tcp_owner(&p4, &s4, &out->uid))
			goto found;
	}
	if (!st_http_peer__tcp_owner(&peer, &self, &out->uid))
		goto found;
	return;
found:
	out->kind = ST_PEER_LOCAL;
	out->key = st_http_peer__local_key(out->uid);
}
