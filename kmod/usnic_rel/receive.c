// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the receive path, entered from the UDP stack in softirq context
 * under RCU for every datagram that reaches an endpoint's port. Nothing in
 * the packet is trusted: the headers are parsed and checked in full
 * (wire.c), the sender must be in the address vector and be the
 * incarnation the connection is paired with, speaking to ours (anything
 * else goes to the handshake, handshake.c, which costs it O(1) and changes
 * nothing unless it proves itself), ACKs must acknowledge what was sent,
 * and fragments must continue the message they claim to belong to.
 *
 * Only the headers of a datagram are made linear: a payload stays in the
 * skb's pages and is copied once, by skb_copy_bits(), to where it goes (a
 * receive buffer, a registration's pages, the staging area). The UDP stack
 * verified the checksum before calling us (udp_queue_rcv_one_skb()), unless
 * the sender left it out, which only IPv4 allows and we refuse.
 *
 * Packets are delivered in order per (peer, channel): one that arrives early
 * is held until the gap before it fills. A message's fragments are copied
 * straight into the receive buffer taken for its first fragment; its
 * completion is posted when the last one is in. When no buffer is free, an
 * in-order packet waits in a backlog, charged like a packet held out of
 * order, until userspace returns buffers: received, so SACKed (the sender
 * does not send it again), but not acknowledged until delivered (a send
 * completes only once its bytes are in a buffer, and a receiver that
 * restarts meanwhile fails it). Past the hold budget it is dropped
 * unacknowledged and comes again.
 *
 * A one-sided request's answer usually leaves from here too, carrying the
 * request's ACK, once conn->lock is dropped (rdma.c says when).
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/sock.h>

#include "conn.h"
#include "handshake.h"
#include "usnic_rel.h"
#include "trace.h"
#include "wire.h"

/*
 * Bytes of received packets an endpoint may hold, out of order or waiting
 * for buffers. The windows bound the packets per peer and channel, but a
 * window of jumbo datagrams from many peers adds up: past this, a packet
 * that would be held is dropped unacknowledged and comes again later.
 */
#define USNIC_REL_RX_HOLD_MAX	(32UL << 20)

/*
 * A message whole in one packet at most this long is copied under rx_lock,
 * saving the lock's second round trip: the copy costs about as much.
 */
#define USNIC_REL_RX_SHORT_MAX	256

struct usnic_rel_skb_cb {
	struct usnic_rel_ep *ep;
};

static_assert(sizeof(struct usnic_rel_skb_cb) <= sizeof_field(struct sk_buff, cb));

static void usnic_rel_skb_unhold(struct sk_buff *skb)
{
	struct usnic_rel_skb_cb *cb = (struct usnic_rel_skb_cb *)skb->cb;

	atomic_long_sub(skb->truesize, &cb->ep->rx_held_bytes);
	usnic_rel_user_unhold(cb->ep->user, skb->truesize);
}

/*
 * Charge @skb to the endpoint before keeping it; the charge goes with the
 * skb, wherever it is freed (every held skb is freed before its endpoint).
 */
static bool usnic_rel_skb_hold(struct usnic_rel_ep *ep, struct sk_buff *skb)
{
	struct usnic_rel_skb_cb *cb = (struct usnic_rel_skb_cb *)skb->cb;

	if (atomic_long_add_return(skb->truesize, &ep->rx_held_bytes) >
	    USNIC_REL_RX_HOLD_MAX) {
		atomic_long_sub(skb->truesize, &ep->rx_held_bytes);
		usnic_rel_count(ep, USNIC_REL_CNT_RX_HOLD_FULL, 1);
		return false;
	}
	/* Charged to the owner too, over all its endpoints. */
	if (!usnic_rel_user_hold(ep->user, skb->truesize)) {
		atomic_long_sub(skb->truesize, &ep->rx_held_bytes);
		usnic_rel_count(ep, USNIC_REL_CNT_RX_HOLD_USER_FULL, 1);
		return false;
	}
	skb_orphan(skb);
	cb->ep = ep;
	skb->destructor = usnic_rel_skb_unhold;
	return true;
}

static struct usnic_rel_peer *usnic_rel_rx_peer(struct usnic_rel_ep *ep,
						struct sk_buff *skb)
{
	__be16 sport = udp_hdr(skb)->source;

	if (ep->family == AF_INET)
		return usnic_rel_peer_lookup_v4(ep, ip_hdr(skb)->saddr, sport);
	return usnic_rel_peer_lookup_v6(ep, &ipv6_hdr(skb)->saddr, sport);
}

/*
 * Parse @skb's headers, pulling only them into its linear part
 * (usnic_rel_wire_head_len()). skb->data is the UDP header, and the stack
 * trimmed the skb to the UDP length. The pull is a no-op for held skbs,
 * parsed once already.
 */
static enum usnic_rel_drop_reason usnic_rel_rx_parse(struct sk_buff *skb,
						     struct usnic_rel_pkt *pkt)
{
	size_t len = skb->len - sizeof(struct udphdr);
	size_t head = min(len, sizeof(struct usnic_rel_hdr));

	if (!pskb_may_pull(skb, sizeof(struct udphdr) + head))
		return USNIC_REL_DROP_NO_MEMORY;
	head = usnic_rel_wire_head_len(skb->data + sizeof(struct udphdr), len);
	if (!pskb_may_pull(skb, sizeof(struct udphdr) + head))
		return USNIC_REL_DROP_NO_MEMORY;
	return usnic_rel_wire_parse(skb->data + sizeof(struct udphdr), len, pkt);
}

/**
 * usnic_rel_rx_copy() - copy part of a received payload out of its skb
 * @skb: the datagram @pkt was parsed from
 * @pkt: its headers
 * @off: where to start, from the start of the payload
 * @to: where to copy
 * @len: bytes; @off + @len is within pkt->payload_len
 *
 * Straight from the skb's pages, whatever its layout: the only copy.
 */
void usnic_rel_rx_copy(const struct sk_buff *skb,
		       const struct usnic_rel_pkt *pkt, u32 off, void *to,
		       u32 len)
{
	/* The parser checked that the payload is all in the datagram. */
	WARN_ON_ONCE(skb_copy_bits(skb, sizeof(struct udphdr) +
				   pkt->payload_off + off, to, len));
}

/*
 * The sequence of a packet in a backlog: its headers were made linear when
 * it was parsed on arrival, after the UDP header at skb->data.
 */
static u32 usnic_rel_rx_skb_seq(const struct sk_buff *skb)
{
	const struct usnic_rel_hdr *h =
		(const void *)(skb->data + sizeof(struct udphdr));

	return be32_to_cpu(h->seq);
}

/**
 * usnic_rel_rx_undelivered() - the first sequence of @c not yet delivered
 * @c: a channel of a connection; caller holds its conn->lock
 *
 * Return: the head of its backlog, or the receive window's next when
 * nothing waits: the cumulative ACK to send.
 */
u32 usnic_rel_rx_undelivered(const struct usnic_rel_chan_conn *c)
{
	struct sk_buff *skb = skb_peek(&c->backlog);

	return skb ? usnic_rel_rx_skb_seq(skb) : c->rx.next;
}

/*
 * Tell userspace that buffers are needed: it rings USNIC_REL_DB_RX. It may
 * have given buffers back and read the flag just before we set it; then
 * nobody rings. The full barrier orders our flag store before the read of
 * its tail (userspace orders its tail store before its read of the flag
 * the same way): one of us sees the other. Seeing buffers and CQ room now,
 * we let the peer's work item deliver what waits, as the doorbell would.
 * Caller holds conn->lock.
 */
static void usnic_rel_rx_need_buffers(struct usnic_rel_ep *ep,
				      struct usnic_rel_peer *peer)
{
	bool ready;

	WRITE_ONCE(ep->rx_free.hdr->flags, USNIC_REL_RING_F_NEED_DOORBELL);
	usnic_rel_count(ep, USNIC_REL_CNT_RX_NO_BUF, 1);
	/* Flag store before tail load; pairs with userspace's fence. */
	smp_mb();
	spin_lock(&ep->rx_lock);
	ready = usnic_rel_cq_space(ep) && usnic_rel_ring_avail(ep, &ep->rx_free);
	spin_unlock(&ep->rx_lock);
	if (ready)
		usnic_rel_tx_work_kick(peer);
}

/*
 * The in-order packet @seq on @chan was dropped for want of a buffer or of
 * room to answer: the next ACK says so (USNIC_REL_F_RNR), so the sender does
 * not take it for congestion. Once per dropped sequence and round trip, not
 * once per packet: a window of retransmissions gets one answer.
 * Caller holds conn->lock.
 */
static void usnic_rel_rx_not_ready(struct usnic_rel_peer *peer,
				   unsigned int chan, u32 seq)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	u64 now = ktime_get_ns(), gap;

	gap = (u64)(conn->rto.has_sample ? conn->rto.srtt_us :
		    usnic_rel_rto_current_us(&conn->rto)) * NSEC_PER_USEC;
	if (c->rnr_ns && c->rnr_seq == seq && now - c->rnr_ns < gap)
		return;
	c->rnr_seq = seq;
	c->rnr_ns = now;
	c->rnr_owed = true;
	usnic_rel_ack_schedule(peer, chan, true);
}

/*
 * Give up the message being received on @chan: its buffer and CQ slot go
 * back to userspace with @status. Caller holds conn->lock.
 */
void usnic_rel_rx_msg_abort(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			    unsigned int chan, int status)
{
	struct usnic_rel_rx_msg *m = &peer->conn.chan[chan].msg;
	struct usnic_rel_cqe cqe = {
		.status = status,
		.opcode = USNIC_REL_OP_RECV,
		.channel = chan,
		.peer = peer->handle,
		.buf = m->buf,
	};

	if (!m->active)
		return;
	m->active = false;
	usnic_rel_cq_post_reserved(ep, &cqe);
	usnic_rel_ctx_wake(ep->ctx);
}

/* Take a receive buffer and a CQ slot for a new message. Caller holds rx_lock. */
static int usnic_rel_rx_take_buf(struct usnic_rel_ep *ep, u32 *idx)
{
	struct usnic_rel_ring *fr = &ep->rx_free;
	u32 i;

	if (!usnic_rel_cq_space(ep))
		return -ENOBUFS;
	/* A corrupt free ring is counted once, when found, then has no buffers. */
	if (!usnic_rel_ring_avail(ep, fr))
		return -ENOBUFS;
	i = READ_ONCE(((u32 *)fr->desc)[fr->kidx & (fr->entries - 1)]);
	/* The slot is read before userspace may reuse it. */
	smp_store_release(&fr->hdr->head, ++fr->kidx);
	if (i >= ep->rx_buf_count) {
		/* Lost to userspace's bug; the packet waits for a good one. */
		usnic_rel_count(ep, USNIC_REL_CNT_RING_CORRUPT, 1);
		return -ENOBUFS;
	}
	ep->cq_reserved++;
	*idx = i;
	return 0;
}

/* A message is in: count it, wake its reader. Caller posted its CQE. */
static void usnic_rel_rx_posted(struct usnic_rel_ep *ep)
{
	usnic_rel_count(ep, USNIC_REL_CNT_RX_MESSAGES, 1);
	usnic_rel_ctx_wake(ep->ctx);
}

/*
 * A message whole in @pkt at @off: take a buffer, copy it there and post
 * @cqe naming that buffer. Returns 0 or -ENOBUFS. Caller holds rx_lock.
 */
static int usnic_rel_rx_whole(struct usnic_rel_ep *ep,
			      const struct usnic_rel_pkt *pkt,
			      const struct sk_buff *skb, u32 off,
			      struct usnic_rel_cqe *cqe)
{
	int ret = usnic_rel_rx_take_buf(ep, &cqe->buf);

	if (ret)
		return ret;
	usnic_rel_rx_copy(skb, pkt, off, ep->rx_bufs +
			  (size_t)cqe->buf * ep->rx_buf_size, cqe->len);
	ep->cq_reserved--;
	usnic_rel_cq_post(ep, cqe);
	return 0;
}

/*
 * A short message whole in @pkt: its buffer is taken, filled and its CQE
 * posted in one hold of rx_lock. Returns 0 or -ENOBUFS. Caller holds
 * conn->lock.
 */
static int usnic_rel_rx_short(struct usnic_rel_ep *ep,
			      struct usnic_rel_peer *peer,
			      const struct usnic_rel_pkt *pkt,
			      const struct sk_buff *skb)
{
	struct usnic_rel_cqe cqe = {
		.imm = pkt->data.imm,
		.len = pkt->data.msg_len,
		.peer = peer->handle,
		.opcode = USNIC_REL_OP_RECV,
		.channel = pkt->channel,
	};
	int ret;

	spin_lock(&ep->rx_lock);
	ret = usnic_rel_rx_whole(ep, pkt, skb, 0, &cqe);
	spin_unlock(&ep->rx_lock);
	if (!ret)
		usnic_rel_rx_posted(ep);
	return ret;
}

/*
 * The first fragment of a message longer than our buffers: it is never
 * delivered, but taken (and acknowledged) once the sender is told, with a
 * TOO_BIG status that fails its send; the other fragments are dropped as
 * they come. The sender knew our limit from the handshake unless it sent
 * before the pairing. Returns 0, or -EBUSY when the answer cannot be queued
 * yet (the fragment comes again). Caller holds conn->lock.
 */
static int usnic_rel_rx_refuse(struct usnic_rel_ep *ep,
			       struct usnic_rel_peer *peer,
			       const struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_rx_msg *m = &peer->conn.chan[pkt->channel].msg;
	int ret;

	ret = usnic_rel_rdma_refuse_msg(ep, peer, pkt->channel,
					pkt->data.msg_id);
	if (ret)
		return ret;
	usnic_rel_count(ep, USNIC_REL_CNT_RX_TOO_BIG, 1);
	m->msg_id = pkt->data.msg_id;
	m->msg_len = pkt->data.msg_len;
	m->received = pkt->payload_len;
	m->refused = m->received < m->msg_len;
	return 0;
}

/*
 * Deliver one in-order DATA packet. Returns 0 when it was consumed (stored,
 * refused or dropped as malformed), -ENOBUFS when it must wait for a buffer
 * and -EBUSY when for room to answer.
 * Caller holds conn->lock.
 */
static int usnic_rel_rx_data(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			     const struct usnic_rel_pkt *pkt,
			     const struct sk_buff *skb)
{
	struct usnic_rel_rx_msg *m = &peer->conn.chan[pkt->channel].msg;
	struct usnic_rel_cqe cqe = {};
	int ret;

	if (!pkt->data.frag_offset) {
		if (m->active) {
			/*
			 * A sender never starts a message before the last one
			 * is all out in the same sequence space: this one is
			 * given up (usnic_rel_wire.h), with an error, so that
			 * the channel goes on.
			 */
			usnic_rel_rx_msg_abort(ep, peer, pkt->channel, -EPROTO);
			usnic_rel_count(ep, USNIC_REL_CNT_RX_MSG_ABORTED, 1);
		}
		m->refused = false;
		if (pkt->data.msg_len > ep->rx_buf_size)
			return usnic_rel_rx_refuse(ep, peer, pkt);
		if (pkt->payload_len == pkt->data.msg_len &&
		    pkt->payload_len <= USNIC_REL_RX_SHORT_MAX)
			return usnic_rel_rx_short(ep, peer, pkt, skb);
		spin_lock(&ep->rx_lock);
		ret = usnic_rel_rx_take_buf(ep, &m->buf);
		spin_unlock(&ep->rx_lock);
		if (ret)
			return ret;
		m->active = true;
		m->msg_id = pkt->data.msg_id;
		m->msg_len = pkt->data.msg_len;
		m->imm = pkt->data.imm;
		m->received = 0;
	} else if (m->refused && m->msg_id == pkt->data.msg_id &&
		   m->msg_len == pkt->data.msg_len &&
		   m->received == pkt->data.frag_offset) {
		/* The rest of a message refused: dropped, but taken. */
		m->received += pkt->payload_len;
		m->refused = m->received < m->msg_len;
		return 0;
	} else if (!m->active || m->msg_id != pkt->data.msg_id ||
		   m->msg_len != pkt->data.msg_len ||
		   m->received != pkt->data.frag_offset) {
		/* In-order delivery makes fragments contiguous: this is forged. */
		usnic_rel_count(ep, USNIC_REL_CNT_RX_BAD_HEADER, 1);
		return 0;
	}
	usnic_rel_rx_copy(skb, pkt, 0,
			  ep->rx_bufs + (size_t)m->buf * ep->rx_buf_size +
			  m->received, pkt->payload_len);
	m->received += pkt->payload_len;
	if (m->received < m->msg_len)
		return 0;

	cqe.imm = m->imm;
	cqe.len = m->msg_len;
	cqe.peer = peer->handle;
	cqe.buf = m->buf;
	cqe.opcode = USNIC_REL_OP_RECV;
	cqe.channel = pkt->channel;
	m->active = false;
	usnic_rel_cq_post_reserved(ep, &cqe);
	usnic_rel_rx_posted(ep);
	return 0;
}

/*
 * Deliver the messages of an in-order PACKED packet, each into its own
 * buffer with its own CQE, in one hold of rx_lock. Returns 0, or -ENOBUFS
 * when buffers ran out: what was delivered is remembered, so the packet,
 * held or resent, goes on after it and nothing arrives twice.
 * Caller holds conn->lock.
 */
static int usnic_rel_rx_packed(struct usnic_rel_ep *ep,
			       struct usnic_rel_peer *peer,
			       const struct usnic_rel_pkt *pkt,
			       const struct sk_buff *skb)
{
	struct usnic_rel_rx_msg *m = &peer->conn.chan[pkt->channel].msg;
	struct usnic_rel_cqe cqe = {
		.peer = peer->handle,
		.opcode = USNIC_REL_OP_RECV,
		.channel = pkt->channel,
	};
	u32 i, done = 0, off = pkt->packed.bytes_off;
	int ret = 0;

	if (m->active) {
		/* As a first fragment would: the sender gave that message up. */
		usnic_rel_rx_msg_abort(ep, peer, pkt->channel, -EPROTO);
		usnic_rel_count(ep, USNIC_REL_CNT_RX_MSG_ABORTED, 1);
	}
	m->refused = false;
	if (m->packed_done && m->packed_seq == pkt->seq)
		done = m->packed_done;
	spin_lock(&ep->rx_lock);
	for (i = 0; i < pkt->packed.count; i++) {
		usnic_rel_packed_rec_get(pkt->payload, i, &cqe.len, &cqe.imm);
		if (i < done) {
			off += cqe.len;
			continue;
		}
		ret = usnic_rel_rx_whole(ep, pkt, skb, off, &cqe);
		if (ret)
			break;
		off += cqe.len;
	}
	spin_unlock(&ep->rx_lock);
	if (i > done) {
		usnic_rel_count(ep, USNIC_REL_CNT_RX_MESSAGES, i - done);
		usnic_rel_ctx_wake(ep->ctx);
	}
	m->packed_seq = pkt->seq;
	m->packed_done = ret ? i : 0;
	return ret;
}

/*
 * Deliver a packet taken in order: 0 (consumed), -ENOBUFS (keep it until
 * userspace returns buffers) or -EBUSY (keep it until the answers owed to
 * the peer went out).
 */
static int usnic_rel_rx_deliver(struct usnic_rel_ep *ep,
				struct usnic_rel_peer *peer,
				const struct usnic_rel_pkt *pkt,
				const struct sk_buff *skb)
{
	if (pkt->type == USNIC_REL_PKT_DATA)
		return usnic_rel_rx_data(ep, peer, pkt, skb);
	if (pkt->type == USNIC_REL_PKT_PACKED)
		return usnic_rel_rx_packed(ep, peer, pkt, skb);
	return usnic_rel_rdma_rx(ep, peer, pkt, skb);
}

/* A packet could not be delivered now: say what it waits for. */
static void usnic_rel_rx_wait(struct usnic_rel_ep *ep,
			      struct usnic_rel_peer *peer, int err)
{
	if (err == -ENOBUFS)
		usnic_rel_rx_need_buffers(ep, peer);
}

/*
 * The same for a packet that was held: it passed every check on arrival, its
 * headers are linear since, and its payload is still in the skb.
 */
static int usnic_rel_rx_deliver_skb(struct usnic_rel_ep *ep,
				    struct usnic_rel_peer *peer,
				    struct sk_buff *skb)
{
	struct usnic_rel_pkt pkt;

	if (WARN_ON_ONCE(usnic_rel_rx_parse(skb, &pkt)))
		return 0;
	return usnic_rel_rx_deliver(ep, peer, &pkt, skb);
}

/*
 * Deliver what waits in @chan's backlog, oldest first, until a buffer is
 * missing. Caller holds conn->lock.
 */
static void usnic_rel_rx_backlog_chan(struct usnic_rel_ep *ep,
				      struct usnic_rel_peer *peer,
				      unsigned int chan)
{
	struct sk_buff_head *q = &peer->conn.chan[chan].backlog;
	bool delivered = false;
	struct sk_buff *skb;
	int err = 0;

	while ((skb = skb_peek(q))) {
		err = usnic_rel_rx_deliver_skb(ep, peer, skb);
		if (err)
			break;
		__skb_unlink(skb, q);
		consume_skb(skb);
		delivered = true;
	}
	if (err)
		usnic_rel_rx_wait(ep, peer, err);
	/*
	 * A window update: the sender completes what was delivered, and
	 * sends on, at once.
	 */
	if (delivered)
		usnic_rel_ack_schedule(peer, chan, true);
}

/*
 * A persist probe on @chan: the sender waits for what we hold. Buffers may
 * have been returned without the doorbell (a process that did not look at
 * NEED_DOORBELL): try the backlog, as a resend finding buffers would, then
 * answer. Caller holds conn->lock.
 */
static void usnic_rel_rx_probed(struct usnic_rel_ep *ep,
				struct usnic_rel_peer *peer, unsigned int chan)
{
	if (!skb_queue_empty(&peer->conn.chan[chan].backlog))
		usnic_rel_rx_backlog_chan(ep, peer, chan);
	usnic_rel_ack_schedule(peer, chan, true);
}

void usnic_rel_rx_backlog(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer)
{
	unsigned int chan;

	spin_lock_bh(&peer->conn.lock);
	if (peer->conn.state == USNIC_REL_CONN_ACTIVE)
		for (chan = 0; chan < USNIC_REL_NR_CHANS; chan++)
			usnic_rel_rx_backlog_chan(ep, peer, chan);
	spin_unlock_bh(&peer->conn.lock);
}

/* USNIC_REL_DB_RX: userspace returned buffers. Caller holds tx_lock. */
void usnic_rel_rx_backlog_all(struct usnic_rel_ep *ep)
{
	struct usnic_rel_peer *peer;
	unsigned long handle;

	WRITE_ONCE(ep->rx_free.hdr->flags, 0);
	/* Removal waits for tx_lock, which we hold: the peers stay. */
	xa_for_each(&ep->peers, handle, peer)
		usnic_rel_rx_backlog(ep, peer);
}

/*
 * Deliver an in-order packet, holding back the work item's kick for an
 * answer it queues: usnic_rel_rx_answer() tries to send that one first.
 */
static int usnic_rel_rx_deliver_first(struct usnic_rel_ep *ep,
				      struct usnic_rel_peer *peer,
				      const struct usnic_rel_pkt *pkt,
				      struct sk_buff *skb)
{
	struct usnic_rel_conn *conn = &peer->conn;
	int err;

	conn->resp_kick_held = true;
	err = usnic_rel_rx_deliver(ep, peer, pkt, skb);
	conn->resp_kick_held = false;
	return err;
}

/*
 * The packet just delivered queued an answer: number it for the caller to
 * send from the softirq (in *@answer), or kick the work item as always.
 * Returns whether there is one to send, which carries the ACK owed.
 */
static bool usnic_rel_rx_answer(struct usnic_rel_ep *ep,
				struct usnic_rel_peer *peer, unsigned int chan,
				struct usnic_rel_txbuf **answer)
{
	struct usnic_rel_conn *conn = &peer->conn;

	if (!conn->resp_kick_owed)
		return false;
	conn->resp_kick_owed = false;
	*answer = usnic_rel_rdma_resp_inline(ep, peer, chan);
	if (*answer)
		return true;
	usnic_rel_tx_work_kick(peer);
	return false;
}

/*
 * A packet with a sequence number on @pkt->channel. Returns true when the
 * skb was kept (held out of order or queued in the backlog). An answer
 * to send from the softirq once conn->lock is dropped goes to *@answer.
 * Caller holds conn->lock.
 */
static bool usnic_rel_rx_sequenced(struct usnic_rel_ep *ep,
				   struct usnic_rel_peer *peer,
				   const struct usnic_rel_pkt *pkt,
				   struct sk_buff *skb,
				   struct usnic_rel_txbuf **answer)
{
	struct usnic_rel_chan_conn *c = &peer->conn.chan[pkt->channel];
	bool ack_req = pkt->flags & USNIC_REL_F_ACK_REQ;
	struct usnic_rel_rx_result res;
	bool kept = false, waits = false;
	int err;
	u32 i;

	switch (usnic_rel_rxwin_classify(&c->rx, pkt->seq)) {
	case USNIC_REL_RX_IN_ORDER:
		if (!skb_queue_empty(&c->backlog)) {
			/* Behind others waiting for buffers, within a bound. */
			if (skb_queue_len(&c->backlog) >= c->rx.size) {
				usnic_rel_rx_need_buffers(ep, peer);
				usnic_rel_rx_not_ready(peer, pkt->channel,
						       pkt->seq);
				return false;
			}
			if (!usnic_rel_skb_hold(ep, skb))
				return false;
			__skb_queue_tail(&c->backlog, skb);
			kept = true;
		} else {
			err = usnic_rel_rx_deliver_first(ep, peer, pkt, skb);
			if (err) {
				if (peer->conn.resp_kick_owed) {
					peer->conn.resp_kick_owed = false;
					usnic_rel_tx_work_kick(peer);
				}
				usnic_rel_rx_wait(ep, peer, err);
				/* Over the budget: dropped unseen, comes again. */
				if (!usnic_rel_skb_hold(ep, skb)) {
					usnic_rel_rx_not_ready(peer, pkt->channel,
							       pkt->seq);
					return false;
				}
				/* Held: the ACK says so at once (F_HELD). */
				usnic_rel_count(ep, USNIC_REL_CNT_RX_HELD_IN_ORDER, 1);
				__skb_queue_tail(&c->backlog, skb);
				kept = true;
				waits = true;
			}
		}
		usnic_rel_rxwin_receive(&c->rx, pkt->seq, ack_req, &res);
		for (i = 1; i < res.deliver_count; i++) {
			struct sk_buff *held =
				usnic_rel_rxwin_take_held(&c->rx,
							  res.deliver_from + i);

			if (!held)
				continue;
			if (skb_queue_empty(&c->backlog) &&
			    !usnic_rel_rx_deliver_skb(ep, peer, held)) {
				consume_skb(held);
				continue;
			}
			__skb_queue_tail(&c->backlog, held);
		}
		if (!waits && !skb_queue_empty(&c->backlog))
			usnic_rel_rx_backlog_chan(ep, peer, pkt->channel);
		if (waits)
			res.ack = USNIC_REL_ACK_NOW;
		/* Numbered after the request: its ACK goes with it. */
		if (usnic_rel_rx_answer(ep, peer, pkt->channel, answer))
			return kept;
		break;
	case USNIC_REL_RX_OUT_OF_ORDER:
		/* Dropped unseen: not SACKed, so the sender sends it again. */
		if (!usnic_rel_rxwin_fits(&c->rx, pkt->seq) &&
		    usnic_rel_conn_rx_grow(peer, pkt->channel, pkt->seq))
			return false;
		if (!usnic_rel_skb_hold(ep, skb))
			return false;
		usnic_rel_rxwin_receive(&c->rx, pkt->seq, ack_req, &res);
		usnic_rel_rxwin_set_held(&c->rx, pkt->seq, skb);
		usnic_rel_count(ep, USNIC_REL_CNT_RX_OUT_OF_ORDER, 1);
		kept = true;
		break;
	case USNIC_REL_RX_DUPLICATE:
		usnic_rel_rxwin_receive(&c->rx, pkt->seq, ack_req, &res);
		usnic_rel_count(ep, USNIC_REL_CNT_RX_DUPLICATE, 1);
		break;
	case USNIC_REL_RX_OUT_OF_WINDOW:
		usnic_rel_rxwin_receive(&c->rx, pkt->seq, ack_req, &res);
		usnic_rel_count(ep, USNIC_REL_CNT_RX_OUT_OF_WINDOW, 1);
		break;
	}
	usnic_rel_ack_schedule(peer, pkt->channel, res.ack == USNIC_REL_ACK_NOW);
	return kept;
}

/*
 * Only the paired incarnation, speaking to ours, gets past this; anything
 * else is counted and at most challenged, before any window is looked at.
 * Returns true to go on. Caller holds conn->lock.
 */
static bool usnic_rel_rx_verified(struct usnic_rel_ep *ep,
				  struct usnic_rel_peer *peer,
				  const struct usnic_rel_pkt *pkt, size_t len)
{
	struct usnic_rel_conn *conn = &peer->conn;
	int verdict = USNIC_REL_RXV_STALE;

	switch (usnic_rel_hs_classify(conn->local_incarnation,
				      conn->remote_incarnation,
				      conn->prev_incarnation,
				      pkt->src_incarnation,
				      pkt->dst_incarnation)) {
	case USNIC_REL_HS_OK:
		/* Only a peer paired with us speaks to our incarnation. */
		conn->hs_unconfirmed = false;
		if (conn->state == USNIC_REL_CONN_ACTIVE)
			return true;
		usnic_rel_count(ep, USNIC_REL_CNT_RX_DEAD_PEER, 1);
		verdict = USNIC_REL_RXV_DEAD_PEER;
		break;
	case USNIC_REL_HS_UNVERIFIED:
		usnic_rel_hs_rx_unverified(ep, peer, pkt, len);
		verdict = USNIC_REL_RXV_UNVERIFIED;
		break;
	case USNIC_REL_HS_STALE_DST:
	case USNIC_REL_HS_STALE_SRC:
		usnic_rel_count(ep, USNIC_REL_CNT_RX_STALE, 1);
		break;
	}
	trace_usnic_rel_rx(ep->debug_id, peer->handle, pkt, len, verdict, 0);
	return false;
}

/*
 * Our magic with another wire version: a usnic_rel of another release, whose
 * packets will all be refused. Counted; and said in the kernel log (rate
 * limited) when the sender is a peer of this endpoint, so that a job that
 * cannot connect tells its user why.
 */
static void usnic_rel_rx_other_version(struct usnic_rel_ep *ep,
				       struct sk_buff *skb)
{
	const struct usnic_rel_hdr *h;
	struct usnic_rel_peer *peer;

	usnic_rel_count(ep, USNIC_REL_CNT_RX_BAD_VERSION, 1);
	peer = usnic_rel_rx_peer(ep, skb);
	if (!peer)
		return;
	/* The parser pulled the whole header before it looked at the version. */
	h = (const void *)(skb->data + sizeof(struct udphdr));
	pr_warn_ratelimited("usnic_rel: endpoint %u: peer %pISpc speaks wire version %u, this module %u: load the same usnic_rel release on both hosts\n",
			    ep->debug_id, &peer->addr, h->version,
			    USNIC_REL_WIRE_VERSION);
}

/* encap_rcv of the endpoint's socket: consumes every datagram (returns 0). */
int usnic_rel_udp_recv(struct sock *sk, struct sk_buff *skb)
{
	enum usnic_rel_drop_reason reason;
	struct usnic_rel_peer *peer;
	struct usnic_rel_conn *conn;
	u8 ack[USNIC_REL_ACK_MAX_LEN];
	struct usnic_rel_txbuf *answer = NULL;
	unsigned int ack_chan = 0;
	struct usnic_rel_ep *ep;
	struct usnic_rel_pkt pkt;
	size_t ack_len = 0;
	bool kept = false;

	ep = rcu_dereference_sk_user_data(sk);
	if (!ep)
		goto free;
	/*
	 * Our peers always checksum, and the stack checked it; a zero one
	 * (IPv4 only: the IPv6 socket refuses those) guards no payload.
	 */
	if (ep->family == AF_INET && !udp_hdr(skb)->check)
		reason = USNIC_REL_DROP_NO_CSUM;
	else
		reason = usnic_rel_rx_parse(skb, &pkt);
	if (reason == USNIC_REL_DROP_NO_MEMORY) {
		usnic_rel_count(ep, USNIC_REL_CNT_RX_NO_MEMORY, 1);
		goto free;
	}
	if (reason) {
		trace_usnic_rel_rx(ep->debug_id, 0, NULL, skb->len,
				   USNIC_REL_RXV_BAD_HEADER, reason);
		usnic_rel_count(ep, USNIC_REL_CNT_RX_BAD_HEADER, 1);
		if (reason == USNIC_REL_DROP_BAD_VERSION)
			usnic_rel_rx_other_version(ep, skb);
		goto free;
	}
	peer = usnic_rel_rx_peer(ep, skb);
	if (!peer) {
		trace_usnic_rel_rx(ep->debug_id, 0, &pkt, skb->len,
				   USNIC_REL_RXV_UNKNOWN_PEER, 0);
		usnic_rel_count(ep, USNIC_REL_CNT_RX_UNKNOWN_PEER, 1);
		goto free;
	}
	usnic_rel_count(ep, USNIC_REL_CNT_RX_PACKETS, 1);
	usnic_rel_count(ep, USNIC_REL_CNT_RX_BYTES, skb->len);

	conn = &peer->conn;
	spin_lock(&conn->lock);
	conn->hs_stats.last_rx = jiffies ?: 1;
	if (conn->state == USNIC_REL_CONN_REMOVED) {
		trace_usnic_rel_rx(ep->debug_id, peer->handle, &pkt, skb->len,
				   USNIC_REL_RXV_DEAD_PEER, 0);
		usnic_rel_count(ep, USNIC_REL_CNT_RX_DEAD_PEER, 1);
		goto unlock;
	}
	/* A dead peer's connection still answers a handshake: it may come back. */
	if (pkt.type == USNIC_REL_PKT_HELLO) {
		trace_usnic_rel_rx(ep->debug_id, peer->handle, &pkt, skb->len,
				   USNIC_REL_RXV_HELLO, 0);
		usnic_rel_hs_rx_hello(ep, peer, &pkt,
				      skb->len - sizeof(struct udphdr));
		goto unlock;
	}
	if (!usnic_rel_rx_verified(ep, peer, &pkt,
				   skb->len - sizeof(struct udphdr)))
		goto unlock;
	if (trace_usnic_rel_rx_enabled())
		usnic_rel_trace_rx_seq(ep, peer, &pkt, skb->len);
	if (pkt.flags & USNIC_REL_F_ACK)
		usnic_rel_ack_rx(ep, peer, &pkt);
	if (pkt.type != USNIC_REL_PKT_ACK ||
	    (pkt.flags & USNIC_REL_F_ACK_REQ)) {
		conn->ack_kick_held = true;
		if (pkt.type != USNIC_REL_PKT_ACK)
			kept = usnic_rel_rx_sequenced(ep, peer, &pkt, skb,
						      &answer);
		else	/* A persist probe: deliver what we can, say what we hold. */
			usnic_rel_rx_probed(ep, peer, pkt.channel);
		conn->ack_kick_held = false;
		/* ACKs it made owed at once: an answer may have carried one. */
		ack_len = usnic_rel_ack_take_inline(ep, peer,
						    conn->ack_kick_owed, ack,
						    sizeof(ack), &ack_chan);
		conn->ack_kick_owed = 0;
	}
unlock:
	spin_unlock(&conn->lock);
	/* RCU keeps the peer, and the socket (its release waits for a grace period). */
	if (answer)
		usnic_rel_xmit_softirq(ep, sk, peer, answer);
	if (ack_len)
		usnic_rel_ack_xmit_softirq(ep, sk, peer, ack_chan, ack, ack_len);
	if (kept)
		return 0;
	consume_skb(skb);
	return 0;
free:
	kfree_skb(skb);
	return 0;
}
