// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: one datagram onto the wire. The packet is copied once into an
 * skb with room for the link, IP and UDP headers and handed to the UDP
 * tunnel transmit helpers, which add the UDP and IP headers and call
 * ip_local_out: no socket lock, no msghdr, no second copy. The route is
 * the peer's one cached dst (usnic_rel_route), looked up in the endpoint's
 * namespace with its bound address, port, mark and device, and checked
 * with dst_check() before each use, so that a routing change is seen.
 * Netfilter's OUTPUT hooks see every packet, owned by the endpoint's
 * socket, and the socket cgroup's BPF sendmsg programs run for each
 * transmission; the LSM socket_sendmsg hook is not exported and does not
 * run (the socket's create and bind hooks did, as the caller).
 *
 * A run of packets of one size (batch.c) leaves as one UDP GSO skb, cut
 * into datagrams by the stack or the device; a route that refuses GSO is
 * remembered in the peer's route until the route changes.
 *
 * The skb is charged to the endpoint's socket, so its send buffer bounds
 * the memory in flight below the stack as it did for kernel_sendmsg().
 *
 * Senders hold ep->tx_lock (process context), except the answers that
 * leave from the receive softirq (usnic_rel_socket_send_softirq()): these
 * use the socket the datagram arrived on, which outlives the softirq (its
 * release waits for a grace period), allocate GFP_ATOMIC, and are only
 * tried when no cgroup BPF sendmsg program (which takes the socket lock)
 * and no fault injection is in the way. So the peer's route is guarded by
 * its own spinlock, r->lock (BH, a leaf), not by tx_lock.
 */
#include <linux/bpf-cgroup.h>
#include <linux/ipv6.h>
#include <linux/security.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/uio.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/sock.h>
#include <net/udp_tunnel.h>

#include "fault.h"
#include "usnic_rel.h"

/* Headroom of every skb: any link layer, then IPv6 (the larger) and UDP. */
#define USNIC_REL_XMIT_HEADROOM \
	(MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr))

void usnic_rel_route_init(struct usnic_rel_route *r)
{
	spin_lock_init(&r->lock);
}

/* Let the cached route go. Caller holds r->lock. */
static void __usnic_rel_route_clear(struct usnic_rel_route *r)
{
	dst_release(r->dst);
	r->dst = NULL;
}

/*
 * A peer's cached route, held, if it is still valid; NULL otherwise (a
 * stale one is let go). The source address it was looked up with goes to
 * @saddr (an __be32 or a struct in6_addr, @alen bytes: saddr4 and saddr6
 * share the start of their union).
 */
static struct dst_entry *usnic_rel_route_get(struct usnic_rel_route *r,
					     void *saddr, size_t alen)
{
	struct dst_entry *dst = NULL;

	spin_lock_bh(&r->lock);
	if (r->dst && !dst_check(r->dst, r->cookie))
		__usnic_rel_route_clear(r);
	if (r->dst) {
		dst = r->dst;
		dst_hold(dst);
		memcpy(saddr, &r->saddr6, alen);
	}
	spin_unlock_bh(&r->lock);
	return dst;
}

/*
 * Cache a route just looked up from source address @saddr (@alen bytes).
 * A new route may take GSO where the old one did not (a changed MTU or an
 * IPsec policy gone): try it again.
 */
static void usnic_rel_route_set(struct usnic_rel_route *r,
				struct dst_entry *dst, u32 cookie,
				const void *saddr, size_t alen)
{
	spin_lock_bh(&r->lock);
	if (!r->closed) {
		dst_release(r->dst);
		dst_hold(dst);
		r->dst = dst;
		r->cookie = cookie;
		r->no_gso = false;
		memcpy(&r->saddr6, saddr, alen);
	}
	spin_unlock_bh(&r->lock);
}

/* Let the cached route go (it is looked up again at the next send). */
void usnic_rel_route_clear(struct usnic_rel_route *r)
{
	spin_lock_bh(&r->lock);
	__usnic_rel_route_clear(r);
	spin_unlock_bh(&r->lock);
}

/*
 * The peer is being removed: let its route go and cache none from now on,
 * while its endpoint's socket still holds the namespace routes belong to.
 * A sender still at work keeps the reference it took, and caches nothing.
 */
void usnic_rel_route_close(struct usnic_rel_route *r)
{
	spin_lock_bh(&r->lock);
	__usnic_rel_route_clear(r);
	r->closed = true;
	spin_unlock_bh(&r->lock);
}

/*
 * The route refused a GSO run: send packet by packet from now on, until
 * the route changes or its MTU grows (an IPv6 route keeps its dst when
 * only the device's MTU changes).
 */
static void usnic_rel_route_no_gso(struct usnic_rel_route *r,
				   const struct dst_entry *dst)
{
	spin_lock_bh(&r->lock);
	r->no_gso = true;
	r->no_gso_mtu = dst_mtu(dst);
	spin_unlock_bh(&r->lock);
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

/* Consumes @skb; @r may be NULL (no cache). */
static int usnic_rel_xmit4(struct sock *sk, struct usnic_rel_route *r,
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

	if (r) {
		struct dst_entry *dst = usnic_rel_route_get(r, &fl4.saddr,
							    sizeof(fl4.saddr));

		if (dst)
			rt = container_of(dst, struct rtable, dst);
	}
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
		if (r)
			usnic_rel_route_set(r, &rt->dst, 0, &fl4.saddr,
					    sizeof(fl4.saddr));
	}
	ret = usnic_rel_xmit_prepare(skb, &rt->dst, sizeof(struct iphdr));
	if (ret) {
		if (r && (ret == -EIO || ret == -EINVAL))
			usnic_rel_route_no_gso(r, &rt->dst);
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
/* Consumes @skb; @r may be NULL (no cache). */
static int usnic_rel_xmit6(struct sock *sk, struct usnic_rel_route *r,
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

	if (r)
		dst = usnic_rel_route_get(r, &fl6.saddr, sizeof(fl6.saddr));
	if (!dst) {
		security_sk_classify_flow(sk, flowi6_to_flowi_common(&fl6));
		dst = ip6_dst_lookup_flow(sock_net(sk), sk, &fl6, NULL);
		if (IS_ERR(dst)) {
			kfree_skb(skb);
			return PTR_ERR(dst);
		}
		if (r) {
			struct rt6_info *rt = container_of(dst, struct rt6_info,
							   dst);

			usnic_rel_route_set(r, dst, rt6_get_cookie(rt),
					    &fl6.saddr, sizeof(fl6.saddr));
		}
	}
	ret = usnic_rel_xmit_prepare(skb, dst, sizeof(struct ipv6hdr));
	if (ret) {
		if (r && (ret == -EIO || ret == -EINVAL))
			usnic_rel_route_no_gso(r, dst);
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
				struct usnic_rel_route *r,
				const union usnic_rel_sockaddr *to,
				struct sk_buff *skb)
{
	int ret;

	/* The tunnel helpers count their recursion per CPU: no migration. */
	local_bh_disable();
#if IS_ENABLED(CONFIG_IPV6)
	if (ep->family == AF_INET6)
		ret = usnic_rel_xmit6(sk, r, &to->v6, skb);
	else
#endif
		ret = usnic_rel_xmit4(sk, r, &to->v4, skb);
	local_bh_enable();
	return ret;
}

#ifdef CONFIG_CGROUP_BPF
/* The sock_addr hooks take the address length since 6.7 (Kbuild). */
static int usnic_rel_xmit_bpf4(struct sock *sk, struct sockaddr_in *sa,
			       __be32 *src)
{
#ifdef USNIC_REL_SA_HOOK_LEN
	int len = sizeof(*sa);

	return BPF_CGROUP_RUN_PROG_UDP4_SENDMSG_LOCK(sk, (struct sockaddr *)sa,
						     &len, src);
#else
	return BPF_CGROUP_RUN_PROG_UDP4_SENDMSG_LOCK(sk, (struct sockaddr *)sa,
						     src);
#endif
}

static int usnic_rel_xmit_bpf6(struct sock *sk, struct sockaddr_in6 *sa,
			       struct in6_addr *src)
{
#ifdef USNIC_REL_SA_HOOK_LEN
	int len = sizeof(*sa);

	return BPF_CGROUP_RUN_PROG_UDP6_SENDMSG_LOCK(sk, (struct sockaddr *)sa,
						     &len, src);
#else
	return BPF_CGROUP_RUN_PROG_UDP6_SENDMSG_LOCK(sk, (struct sockaddr *)sa,
						     src);
#endif
}

/*
 * The cgroup BPF sendmsg programs of the socket's cgroup (the endpoint
 * creator's), run for every transmission as sendmsg(2) runs them for every
 * datagram: 0, or -EPERM when one denies it. Only while some program of
 * that type is attached anywhere (a static key). A program that rewrites
 * the destination or source would send the packet elsewhere than the
 * reliability state belongs to: refused as well.
 */
static int usnic_rel_xmit_allowed(struct usnic_rel_ep *ep, struct sock *sk,
				  const union usnic_rel_sockaddr *to)
{
	union usnic_rel_sockaddr sa = *to;
	int ret;

	if (ep->family == AF_INET6) {
		struct in6_addr src = sk->sk_v6_rcv_saddr;

		if (!cgroup_bpf_enabled(CGROUP_UDP6_SENDMSG))
			return 0;
		ret = usnic_rel_xmit_bpf6(sk, &sa.v6, &src);
		if (!ret && (memcmp(&sa.v6, &to->v6, sizeof(sa.v6)) ||
			     !ipv6_addr_equal(&src, &sk->sk_v6_rcv_saddr)))
			ret = -EPERM;
	} else {
		__be32 src = inet_sk(sk)->inet_saddr;

		if (!cgroup_bpf_enabled(CGROUP_UDP4_SENDMSG))
			return 0;
		ret = usnic_rel_xmit_bpf4(sk, &sa.v4, &src);
		if (!ret && (memcmp(&sa.v4, &to->v4, sizeof(sa.v4)) ||
			     src != inet_sk(sk)->inet_saddr))
			ret = -EPERM;
	}
	return ret;
}
#else
static int usnic_rel_xmit_allowed(struct usnic_rel_ep *ep, struct sock *sk,
				  const union usnic_rel_sockaddr *to)
{
	return 0;
}
#endif

/*
 * An skb holding the @n pieces at @vec (@len bytes in all), owned by @sk;
 * NULL without memory. The one copy of the packets. What does not fit one
 * page with the headroom goes to page frags, so that a 64 KiB GSO run
 * needs no order-4 block of memory that fragmentation may deny.
 */
static struct sk_buff *usnic_rel_xmit_skb(struct sock *sk,
					  const struct kvec *vec,
					  unsigned int n, size_t len, gfp_t gfp)
{
	size_t linear = len, off = 0;
	struct sk_buff *skb;
	unsigned int i;
	int err;

	if (USNIC_REL_XMIT_HEADROOM + len > SKB_WITH_OVERHEAD(PAGE_SIZE))
		linear = 0;
	skb = alloc_skb_with_frags(USNIC_REL_XMIT_HEADROOM + linear,
				   len - linear, PAGE_ALLOC_COSTLY_ORDER, &err,
				   gfp | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, USNIC_REL_XMIT_HEADROOM);
	skb_put(skb, linear);
	skb->data_len = len - linear;
	skb->len += len - linear;
	for (i = 0; i < n; i++) {
		if (skb_store_bits(skb, off, vec[i].iov_base, vec[i].iov_len)) {
			kfree_skb(skb);
			return NULL;
		}
		off += vec[i].iov_len;
	}
	skb->priority = READ_ONCE(sk->sk_priority);
	skb->mark = READ_ONCE(sk->sk_mark);
	skb_set_owner_w(skb, sk);
	return skb;
}

/*
 * Send @len bytes at @buf as one UDP datagram to @to, with the route cached
 * in @r (NULL: looked up for this packet alone). Never blocks on the
 * socket: a full send buffer returns -EAGAIN, no memory -ENOBUFS, no route
 * the routing error. Process context (the skb is allocated GFP_KERNEL);
 * caller holds ep->tx_lock, so the socket is there.
 */
int usnic_rel_socket_send(struct usnic_rel_ep *ep, struct usnic_rel_route *r,
			  const union usnic_rel_sockaddr *to,
			  const void *buf, size_t len)
{
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };
	struct sock *sk = ep->sock->sk;
	struct sk_buff *skb;
	int ret;

	lockdep_assert_held(&ep->tx_lock);
	if (sk_wmem_alloc_get(sk) >= READ_ONCE(sk->sk_sndbuf))
		return -EAGAIN;
	ret = usnic_rel_xmit_allowed(ep, sk, to);
	if (ret)
		return ret;
	skb = usnic_rel_fault_xmit_nomem(ep, false) ? NULL :
	      usnic_rel_xmit_skb(sk, &vec, 1, len, GFP_KERNEL);
	if (!skb)
		return -ENOBUFS;
	return usnic_rel_xmit_route(ep, sk, r, to, skb);
}

/*
 * Send the @n (at least two) packets at @vec, @len bytes in all, as one UDP
 * GSO skb: a datagram each, all of @vec[0]'s size but the last, which may
 * be shorter. As usnic_rel_socket_send() otherwise; -EIO or -EINVAL when
 * the route cannot take GSO, which @r remembers (usnic_rel_route_gso()).
 */
int usnic_rel_socket_send_gso(struct usnic_rel_ep *ep,
			      struct usnic_rel_route *r,
			      const union usnic_rel_sockaddr *to,
			      const struct kvec *vec, unsigned int n, size_t len)
{
	struct sock *sk = ep->sock->sk;
	struct sk_buff *skb;
	int ret;

	lockdep_assert_held(&ep->tx_lock);
	if (sk_wmem_alloc_get(sk) >= READ_ONCE(sk->sk_sndbuf))
		return -EAGAIN;
	ret = usnic_rel_xmit_allowed(ep, sk, to);
	if (ret)
		return ret;
	skb = usnic_rel_fault_xmit_nomem(ep, true) ? NULL :
	      usnic_rel_xmit_skb(sk, vec, n, len, GFP_KERNEL);
	if (!skb)
		return -ENOBUFS;
	skb_shinfo(skb)->gso_size = vec[0].iov_len;
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
	skb_shinfo(skb)->gso_segs = n;
	return usnic_rel_xmit_route(ep, sk, r, to, skb);
}

/*
 * Whether a run to @r's peer may go as one GSO skb: not while the route
 * it last had refused it; a new route, or a larger MTU, is tried again.
 */
bool usnic_rel_route_gso(struct usnic_rel_route *r)
{
	bool gso = true;

	spin_lock_bh(&r->lock);
	if (r->dst && !dst_check(r->dst, r->cookie))
		__usnic_rel_route_clear(r);
	if (r->dst) {
		if (r->no_gso && dst_mtu(r->dst) > r->no_gso_mtu)
			r->no_gso = false;
		gso = !r->no_gso;
	}
	spin_unlock_bh(&r->lock);
	return gso;
}

/*
 * Whether an answer or an ACK may leave from softirq: not once the endpoint
 * is stopping, nor while fault injection is set up (the work item's sends
 * go through it), nor while a cgroup BPF sendmsg program must see it (those
 * hooks take the socket lock, which may sleep).
 */
bool usnic_rel_socket_softirq_ok(struct usnic_rel_ep *ep)
{
	if (READ_ONCE(ep->dead) || usnic_rel_fault_tx_configured(ep))
		return false;
	/* A static key each: the type must be a constant. */
	if (ep->family == AF_INET6)
		return !cgroup_bpf_enabled(CGROUP_UDP6_SENDMSG);
	return !cgroup_bpf_enabled(CGROUP_UDP4_SENDMSG);
}

/*
 * usnic_rel_socket_send() from softirq, under RCU, on @sk, the endpoint's
 * socket (the one a datagram arrived on, or ep->sk_rcu): no tx_lock, a
 * GFP_ATOMIC skb. UDP frees a socket only after a grace period, but the
 * endpoint may be releasing it meanwhile: a reference, taken only while it
 * has one, keeps it until the skb is charged to it. The caller checked
 * usnic_rel_socket_softirq_ok().
 */
int usnic_rel_socket_send_softirq(struct usnic_rel_ep *ep, struct sock *sk,
				  struct usnic_rel_route *r,
				  const union usnic_rel_sockaddr *to,
				  const void *buf, size_t len)
{
	struct kvec vec = { .iov_base = (void *)buf, .iov_len = len };
	struct sk_buff *skb;
	int ret = -EAGAIN;

	if (!refcount_inc_not_zero(&sk->sk_refcnt))
		return -ESHUTDOWN;
	if (sk_wmem_alloc_get(sk) >= READ_ONCE(sk->sk_sndbuf))
		goto out;
	ret = -ENOBUFS;
	skb = usnic_rel_xmit_skb(sk, &vec, 1, len, GFP_ATOMIC);
	if (skb)
		ret = usnic_rel_xmit_route(ep, sk, r, to, skb);
out:
	sock_put(sk);
	return ret;
}
