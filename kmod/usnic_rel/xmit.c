// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: one datagram onto the wire. The packet is copied once into an
 * skb with room for the link, IP and UDP headers and handed to the UDP
 * tunnel transmit helpers, which add the UDP and IP headers and call
 * ip_local_out: no socket lock, no msghdr, no second copy. The route comes
 * from the peer's dst_cache, looked up in the endpoint's namespace with its
 * bound address, port, mark and device, and revalidated by the cache when
 * routes change. Netfilter's OUTPUT hooks still see every packet, owned by
 * the endpoint's socket; the per-call LSM and cgroup BPF sendmsg hooks do
 * not run (the socket's create and bind hooks did, as the caller).
 *
 * A run of packets of one size (batch.c) leaves as one UDP GSO skb, cut
 * into datagrams by the stack or the device.
 *
 * The skb is charged to the endpoint's socket, so its send buffer bounds
 * the memory in flight below the stack as it did for kernel_sendmsg().
 */
#include <linux/ipv6.h>
#include <linux/security.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/uio.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/sock.h>
#include <net/udp_tunnel.h>

#include "usnic_rel.h"

/* Headroom of every skb: any link layer, then IPv6 (the larger) and UDP. */
#define USNIC_REL_XMIT_HEADROOM \
	(MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr))

/* Charged to the memory cgroup of whoever inserts the peer. */
int usnic_rel_xmit_peer_init(struct usnic_rel_peer *peer)
{
	return dst_cache_init(&peer->dst_cache, GFP_KERNEL_ACCOUNT);
}

/*
 * After every sender let go of @peer, while its endpoint's socket still
 * holds the namespace its routes belong to. A never-initialised or already
 * freed cache is fine.
 */
void usnic_rel_xmit_peer_free(struct usnic_rel_peer *peer)
{
	dst_cache_destroy(&peer->dst_cache);
	peer->dst_cache.cache = NULL;
}

/* Bytes of each datagram on the wire but the IP header. */
static unsigned int usnic_rel_xmit_datagram(const struct sk_buff *skb)
{
	return (skb_is_gso(skb) ? skb_shinfo(skb)->gso_size : skb->len) +
	       sizeof(struct udphdr);
}

/*
 * Make sure the route's device finds room for its link header, and point
 * a GSO skb's checksum at the UDP header the tunnel helper will push: the
 * segmentation wants it there and the helper only fills the pseudo-header
 * sum. An IPsec path does not take UDP GSO (as UDP refuses it): -EIO;
 * nor a route whose MTU is below a segment (UDP's check: segments are
 * never fragmented): -EINVAL.
 */
static int usnic_rel_xmit_prepare(struct sk_buff *skb,
				  const struct dst_entry *dst, size_t ip_len)
{
	int ret;

	ret = skb_cow_head(skb, LL_RESERVED_SPACE(dst->dev) + ip_len +
			   sizeof(struct udphdr));
	if (ret || !skb_is_gso(skb))
		return ret;
	if (dst_xfrm(dst))
		return -EIO;
	if (usnic_rel_xmit_datagram(skb) + ip_len > dst_mtu(dst))
		return -EINVAL;
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_headroom(skb) - sizeof(struct udphdr);
	skb->csum_offset = offsetof(struct udphdr, check);
	return 0;
}

/* Caller disabled BH (the cache is per CPU). Consumes @skb. */
static int usnic_rel_xmit4(struct sock *sk, struct dst_cache *cache,
			   const struct sockaddr_in *to, struct sk_buff *skb)
{
	struct flowi4 fl4 = {
		.daddr = to->sin_addr.s_addr,
		.saddr = inet_sk(sk)->inet_saddr,
		.fl4_dport = to->sin_port,
		.fl4_sport = inet_sk(sk)->inet_sport,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_oif = READ_ONCE(sk->sk_bound_dev_if),
		.flowi4_mark = READ_ONCE(sk->sk_mark),
		.flowi4_uid = sock_net_uid(sock_net(sk), sk),
	};
	struct rtable *rt = NULL;
	__be16 df = 0;
	int ret;

	if (cache)
		rt = dst_cache_get_ip4(cache, &fl4.saddr);
	if (!rt) {
		security_sk_classify_flow(sk, flowi4_to_flowi_common(&fl4));
		rt = ip_route_output_flow(sock_net(sk), &fl4, sk);
		if (IS_ERR(rt)) {
			kfree_skb(skb);
			return PTR_ERR(rt);
		}
		/* A subnet's broadcast address, refused as UDP refuses it. */
		if ((rt->rt_flags & RTCF_BROADCAST) &&
		    !sock_flag(sk, SOCK_BROADCAST)) {
			ip_rt_put(rt);
			kfree_skb(skb);
			return -EACCES;
		}
		if (cache)
			dst_cache_set_ip4(cache, &rt->dst, fl4.saddr);
	}
	ret = usnic_rel_xmit_prepare(skb, &rt->dst, sizeof(struct iphdr));
	if (ret) {
		ip_rt_put(rt);
		kfree_skb(skb);
		return ret;
	}
	/* As UDP does: DF when the datagram fits, else fragment locally. */
	if (usnic_rel_xmit_datagram(skb) + sizeof(struct iphdr) <=
	    dst_mtu(&rt->dst) && ip_dont_fragment(sk, &rt->dst))
		df = htons(IP_DF);
	udp_tunnel_xmit_skb(rt, sk, skb, fl4.saddr, fl4.daddr,
			    READ_ONCE(inet_sk(sk)->tos),
			    ip4_dst_hoplimit(&rt->dst), df, fl4.fl4_sport,
			    fl4.fl4_dport, false, false);
	return 0;
}

#if IS_ENABLED(CONFIG_IPV6)
/* Caller disabled BH (the cache is per CPU). Consumes @skb. */
static int usnic_rel_xmit6(struct sock *sk, struct dst_cache *cache,
			   const struct sockaddr_in6 *to, struct sk_buff *skb)
{
	struct flowi6 fl6 = {
		.daddr = to->sin6_addr,
		.saddr = sk->sk_v6_rcv_saddr,
		.fl6_dport = to->sin6_port,
		.fl6_sport = inet_sk(sk)->inet_sport,
		.flowi6_proto = IPPROTO_UDP,
		.flowi6_oif = READ_ONCE(sk->sk_bound_dev_if),
		.flowi6_mark = READ_ONCE(sk->sk_mark),
		.flowi6_uid = sock_net_uid(sock_net(sk), sk),
	};
	struct dst_entry *dst = NULL;
	int ret;

	if (cache)
		dst = dst_cache_get_ip6(cache, &fl6.saddr);
	if (!dst) {
		security_sk_classify_flow(sk, flowi6_to_flowi_common(&fl6));
		dst = ip6_dst_lookup_flow(sock_net(sk), sk, &fl6, NULL);
		if (IS_ERR(dst)) {
			kfree_skb(skb);
			return PTR_ERR(dst);
		}
		if (cache)
			dst_cache_set_ip6(cache, dst, &fl6.saddr);
	}
	ret = usnic_rel_xmit_prepare(skb, dst, sizeof(struct ipv6hdr));
	if (ret) {
		dst_release(dst);
		kfree_skb(skb);
		return ret;
	}
	/* As UDP does by default: a datagram over the MTU is fragmented here. */
	skb->ignore_df = 1;
	/* Never a zero checksum (nocheck false): the payload is guarded. */
	udp_tunnel6_xmit_skb(dst, sk, skb, NULL, &fl6.saddr, &fl6.daddr, 0,
			     ip6_dst_hoplimit(dst), 0, fl6.fl6_sport,
			     fl6.fl6_dport, false);
	return 0;
}
#endif

/* Route @skb (charged to the socket already) and send it; consumes it. */
static int usnic_rel_xmit_route(struct usnic_rel_ep *ep, struct sock *sk,
				struct dst_cache *cache,
				const union usnic_rel_sockaddr *to,
				struct sk_buff *skb)
{
	int ret;

	/* The tunnel helpers count their recursion per CPU: no migration. */
	local_bh_disable();
#if IS_ENABLED(CONFIG_IPV6)
	if (ep->family == AF_INET6)
		ret = usnic_rel_xmit6(sk, cache, &to->v6, skb);
	else
#endif
		ret = usnic_rel_xmit4(sk, cache, &to->v4, skb);
	local_bh_enable();
	return ret;
}

/*
 * An skb holding the @n pieces at @vec (@len bytes in all), owned by @sk;
 * NULL without memory. The one copy of the packets.
 */
static struct sk_buff *usnic_rel_xmit_skb(struct sock *sk,
					  const struct kvec *vec,
					  unsigned int n, size_t len)
{
	struct sk_buff *skb;
	unsigned int i;

	skb = alloc_skb(USNIC_REL_XMIT_HEADROOM + len,
			GFP_KERNEL | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, USNIC_REL_XMIT_HEADROOM);
	for (i = 0; i < n; i++)
		skb_put_data(skb, vec[i].iov_base, vec[i].iov_len);
	skb->priority = READ_ONCE(sk->sk_priority);
	skb->mark = READ_ONCE(sk->sk_mark);
	skb_set_owner_w(skb, sk);
	return skb;
}

/*
 * Send @len bytes at @buf as one UDP datagram to @to, with the route cached
 * in @cache (NULL: looked up for this packet alone). Never blocks on the
 * socket: a full send buffer returns -EAGAIN, no memory -ENOBUFS, no route
 * the routing error. Process context (the skb is allocated GFP_KERNEL);
 * caller holds ep->tx_lock, so the socket is there.
 */
int usnic_rel_socket_send(struct usnic_rel_ep *ep, struct dst_cache *cache,
			  const union usnic_rel_sockaddr *to,
			  const void *buf, size_t len)
{
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };
	struct sock *sk = ep->sock->sk;
	struct sk_buff *skb;

	lockdep_assert_held(&ep->tx_lock);
	if (sk_wmem_alloc_get(sk) >= READ_ONCE(sk->sk_sndbuf))
		return -EAGAIN;
	skb = usnic_rel_xmit_skb(sk, &vec, 1, len);
	if (!skb)
		return -ENOBUFS;
	return usnic_rel_xmit_route(ep, sk, cache, to, skb);
}

/*
 * Send the @n (at least two) packets at @vec, @len bytes in all, as one UDP
 * GSO skb: a datagram each, all of @vec[0]'s size but the last, which may
 * be shorter. As usnic_rel_socket_send() otherwise; -EIO when the route
 * cannot take GSO.
 */
int usnic_rel_socket_send_gso(struct usnic_rel_ep *ep, struct dst_cache *cache,
			      const union usnic_rel_sockaddr *to,
			      const struct kvec *vec, unsigned int n, size_t len)
{
	struct sock *sk = ep->sock->sk;
	struct sk_buff *skb;

	lockdep_assert_held(&ep->tx_lock);
	if (sk_wmem_alloc_get(sk) >= READ_ONCE(sk->sk_sndbuf))
		return -EAGAIN;
	skb = usnic_rel_xmit_skb(sk, vec, n, len);
	if (!skb)
		return -ENOBUFS;
	skb_shinfo(skb)->gso_size = vec[0].iov_len;
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
	skb_shinfo(skb)->gso_segs = n;
	return usnic_rel_xmit_route(ep, sk, cache, to, skb);
}
