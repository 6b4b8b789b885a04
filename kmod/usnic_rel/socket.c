// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the UDP tunnel socket of an endpoint. Packets for its port are
 * handed to usnic_rel_udp_recv() in softirq context before any socket queue.
 * Packets leave through the UDP tunnel helpers (xmit.c), single or as GSO
 * runs, in the endpoint's network namespace, owned by this socket and
 * bounded by its send buffer.
 */
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/net.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/udp.h>
#include <net/inet_sock.h>
#include <net/udp_tunnel.h>

#include "usnic_rel.h"

/*
 * Create and bind the endpoint's socket as the calling process would its
 * own: a user socket (kern 0), so that the security modules' socket_create
 * checks and the cgroup BPF bind hooks run against the caller, the socket
 * is owned by the caller's fsuid and charged to its memory cgroup, and the
 * bind needs CAP_NET_BIND_SERVICE for a privileged port. (The LSM
 * socket_bind hook is only reachable from the bind syscall.)
 */
static int usnic_rel_socket_bind(struct net *net,
				 const struct usnic_rel_addr *addr,
				 struct socket **sockp)
{
	union usnic_rel_sockaddr sa = {};
	struct socket *sock;
	int len, ret;

	ret = __sock_create(net, addr->family, SOCK_DGRAM, IPPROTO_UDP, &sock, 0);
	if (ret)
		return ret;
	if (addr->family == AF_INET) {
		sa.v4.sin_family = AF_INET;
		sa.v4.sin_port = htons(addr->port);
		memcpy(&sa.v4.sin_addr, addr->addr, sizeof(sa.v4.sin_addr));
		len = sizeof(sa.v4);
		/* UDP checksums on: here they guard the payload end to end. */
		sock->sk->sk_no_check_tx = 0;
	} else {
		sa.v6.sin6_family = AF_INET6;
		sa.v6.sin6_port = htons(addr->port);
		memcpy(&sa.v6.sin6_addr, addr->addr, sizeof(sa.v6.sin6_addr));
		len = sizeof(sa.v6);
		/* An IPv6 endpoint speaks IPv6 only: one family per AV. */
		ret = ip6_sock_set_v6only(sock->sk);
		if (ret)
			goto err;
		/* Checksums both ways; a zero UDP checksum is refused. */
		udp_set_no_check6_tx(sock->sk, false);
		udp_set_no_check6_rx(sock->sk, false);
	}
	ret = kernel_bind(sock, (struct sockaddr *)&sa, len);
	if (ret)
		goto err;
	*sockp = sock;
	return 0;
err:
	sock_release(sock);
	return ret;
}

int usnic_rel_socket_open(struct usnic_rel_ep *ep,
			  const struct usnic_rel_addr *addr)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = ep,
		.encap_type = 1,
		.encap_rcv = usnic_rel_udp_recv,
	};
	struct socket *sock;
	int ret;

	ret = usnic_rel_socket_bind(ep->net, addr, &sock);
	if (ret)
		return ret;
	setup_udp_tunnel_sock(ep->net, sock, &tcfg);
	ep->port = ntohs(inet_sk(sock->sk)->inet_sport);
	ep->sock = sock;
	rcu_assign_pointer(ep->sk_rcu, sock->sk);
	return 0;
}

/*
 * Detach and release the socket. After the next grace period, which the
 * caller waits for (one for many endpoints, not under ctx->lock),
 * usnic_rel_udp_recv() runs no more for @ep: it is only entered under RCU
 * through sk_user_data, which is cleared here.
 */
void usnic_rel_socket_close(struct usnic_rel_ep *ep)
{
	if (!ep->sock)
		return;
	/* UDP frees its sockets after a grace period (SOCK_RCU_FREE). */
	RCU_INIT_POINTER(ep->sk_rcu, NULL);
	udp_tunnel_sock_release(ep->sock);
	ep->sock = NULL;
}

/* MTU of the netdev owning @addr; a wildcard or unknown address gets Ethernet's. */
u32 usnic_rel_socket_dev_mtu(struct net *net, const struct usnic_rel_addr *addr)
{
	struct net_device *dev, *found = NULL;
	u32 mtu = ETH_DATA_LEN;

	rcu_read_lock();
	if (addr->family == AF_INET) {
		__be32 a;

		memcpy(&a, addr->addr, sizeof(a));
		if (a != htonl(INADDR_ANY))
			found = __ip_dev_find(net, a, false);
	} else {
		struct in6_addr a;

		memcpy(&a, addr->addr, sizeof(a));
		if (!ipv6_addr_any(&a)) {
			for_each_netdev_rcu(net, dev) {
				if (ipv6_chk_addr(net, &a, dev, 1)) {
					found = dev;
					break;
				}
			}
		}
	}
	if (found)
		mtu = READ_ONCE(found->mtu);
	rcu_read_unlock();
	return mtu;
}
