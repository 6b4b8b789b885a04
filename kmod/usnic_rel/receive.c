// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the receive path, entered from the UDP stack in softirq context
 * under RCU for every datagram that reaches an endpoint's port. Nothing in
 * the packet is trusted: the header is parsed from a copy, the sender must
 * be in the address vector, the length must fit the channel.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/sock.h>

#include "usnic_rel.h"
#include "proto_tmp.h"

static struct usnic_rel_peer *usnic_rel_rx_peer(struct usnic_rel_ep *ep,
						struct sk_buff *skb)
{
	__be16 sport = udp_hdr(skb)->source;

	if (ep->family == AF_INET)
		return usnic_rel_peer_lookup_v4(ep, ip_hdr(skb)->saddr, sport);
	return usnic_rel_peer_lookup_v6(ep, &ipv6_hdr(skb)->saddr, sport);
}

/*
 * Copy the payload into a buffer userspace gave us and post its completion.
 * Returns 0, or the counter saying why the packet was dropped.
 */
static int usnic_rel_rx_deliver(struct usnic_rel_ep *ep, struct sk_buff *skb,
				unsigned int off,
				const struct usnic_rel_pkt_info *info,
				u32 peer_handle)
{
	struct usnic_rel_ring *fr = &ep->rx_free;
	struct usnic_rel_cqe cqe = {};
	int drop = 0;
	u32 idx;

	spin_lock(&ep->rx_lock);
	if (!usnic_rel_cq_space(ep)) {
		drop = USNIC_REL_CNT_RX_CQ_FULL;
		goto out;
	}
	/* A corrupt free ring is counted once, when found, then has no buffers. */
	if (!usnic_rel_ring_avail(ep, fr)) {
		drop = USNIC_REL_CNT_RX_NO_BUF;
		goto out;
	}
	idx = READ_ONCE(((u32 *)fr->desc)[fr->kidx & (fr->entries - 1)]);
	/* Our read of the slot is done before userspace may refill it. */
	smp_store_release(&fr->hdr->head, ++fr->kidx);
	if (idx >= ep->rx_buf_count) {
		drop = USNIC_REL_CNT_RING_CORRUPT;
		goto out;
	}
	if (skb_copy_bits(skb, off, ep->rx_bufs + (size_t)idx * ep->rx_buf_size,
			  info->len)) {
		drop = USNIC_REL_CNT_RX_BAD_HEADER;
		goto out;
	}
	cqe.imm = info->imm;
	cqe.len = info->len;
	cqe.peer = peer_handle;
	cqe.buf = idx;
	cqe.opcode = USNIC_REL_OP_RECV;
	cqe.channel = info->channel;
	usnic_rel_cq_post(ep, &cqe);
out:
	spin_unlock(&ep->rx_lock);
	return drop;
}

/* encap_rcv of the endpoint's socket: consumes every datagram (returns 0). */
int usnic_rel_udp_recv(struct sock *sk, struct sk_buff *skb)
{
	struct usnic_rel_pkt_info info;
	struct usnic_rel_peer *peer;
	struct usnic_rel_ep *ep;
	int off, drop;

	ep = rcu_dereference_sk_user_data(sk);
	if (!ep)
		goto free;
	off = usnic_rel_pkt_parse(skb, &info);
	if (off < 0 || info.len > ep->mtu[info.channel]) {
		usnic_rel_count(ep, USNIC_REL_CNT_RX_BAD_HEADER, 1);
		goto free;
	}
	peer = usnic_rel_rx_peer(ep, skb);
	if (!peer) {
		usnic_rel_count(ep, USNIC_REL_CNT_RX_UNKNOWN_PEER, 1);
		goto free;
	}
	drop = usnic_rel_rx_deliver(ep, skb, off, &info, peer->handle);
	if (drop) {
		usnic_rel_count(ep, drop, 1);
		goto free;
	}
	usnic_rel_count(ep, USNIC_REL_CNT_RX_PACKETS, 1);
	usnic_rel_count(ep, USNIC_REL_CNT_RX_BYTES, info.len);
	wake_up_interruptible(&ep->ctx->wq);
	consume_skb(skb);
	return 0;
free:
	kfree_skb(skb);
	return 0;
}
