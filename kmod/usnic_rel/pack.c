// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: packing short messages. Short sends posted back to back to one
 * peer and channel, rung by one doorbell, leave as one USNIC_REL_PKT_PACKED
 * packet instead of one packet each: the per-packet costs of both hosts
 * (a window slot, an skb, the stack on each side, an ACK's share) are paid
 * once for the lot. The receiver delivers each message into its own buffer
 * with its own completion, in order, exactly as if it had come alone, and
 * the sender completes each one when the packet is acknowledged.
 *
 * Packing never waits for more sends: it takes only what is there, the
 * sends of the ring when the window is open, and the sends parked on a
 * peer's channel when an ACK opens it again (a stream's sends spend most of
 * their time parked). It never reorders: the sends it packs are the next
 * ones of the ring or of the parked queue, the first that does not fit
 * ends the packet, and nothing is packed from the ring while earlier sends
 * to that peer and channel are parked. Any reason not to pack (memory, the
 * window, an unpaired peer) sends the first message the usual way, and the
 * rest wait for their turn where they were.
 */
#include <linux/mm.h>

#include "conn.h"
#include "fault.h"
#include "usnic_rel.h"
#include "wire.h"

/* What one packed packet is built from, before its size is known (tx_lock). */
struct usnic_rel_pack {
	struct usnic_rel_cqe cqe[USNIC_REL_WIRE_PACKED_MAX];
	u8 bytes[USNIC_REL_WIRE_PACKED_MAX * USNIC_REL_WIRE_PACKED_MSG_MAX];
	u32 n;
	u32 len;			/* of @bytes used */
};

void usnic_rel_pack_free(struct usnic_rel_ep *ep)
{
	kvfree(ep->pack);
	ep->pack = NULL;
}

/* A send that may go packed: a message short enough for any receiver. */
static bool usnic_rel_pack_fits(const struct usnic_rel_sqe *sqe)
{
	return sqe->opcode == USNIC_REL_OP_SEND &&
	       sqe->len <= USNIC_REL_WIRE_PACKED_MSG_MAX;
}

/* Whether @pk takes one more message of @len in a packet of @chan. */
static bool usnic_rel_pack_room(struct usnic_rel_ep *ep, unsigned int chan,
				const struct usnic_rel_pack *pk, u32 len)
{
	return pk->n < USNIC_REL_WIRE_PACKED_MAX &&
	       (pk->n + 1) * sizeof(struct usnic_rel_packed_rec) + pk->len +
	       len <= usnic_rel_rdma_frag_max(ep, chan, USNIC_REL_PKT_PACKED);
}

/* Append the checked send @sqe to @pk: its bytes and its completion. */
static void usnic_rel_pack_add(struct usnic_rel_ep *ep, unsigned int chan,
			       struct usnic_rel_pack *pk,
			       const struct usnic_rel_sqe *sqe)
{
	struct usnic_rel_cqe *cqe = &pk->cqe[pk->n++];
	const u8 *payload = sqe->flags & USNIC_REL_SQE_INLINE ?
			    sqe->inline_data : ep->staging + sqe->staging_off;

	/* Userspace may scribble on staging meanwhile; only its own data suffers. */
	memcpy(pk->bytes + pk->len, payload, sqe->len);
	pk->len += sqe->len;
	memset(cqe, 0, sizeof(*cqe));
	cqe->user_ctx = sqe->user_ctx;
	cqe->imm = sqe->imm;
	cqe->len = sqe->len;
	cqe->peer = sqe->peer;
	cqe->opcode = sqe->opcode;
	cqe->channel = chan;
}

/* Give back the CQ slots reserved for the sends after the first. */
static void usnic_rel_pack_unreserve(struct usnic_rel_ep *ep,
				     struct usnic_rel_pack *pk)
{
	spin_lock_bh(&ep->rx_lock);
	ep->cq_reserved -= pk->n - 1;
	spin_unlock_bh(&ep->rx_lock);
}

/*
 * Take into @pk the sends that follow in @chan's ring while they fit, each
 * copied once and checked, with a CQ slot reserved; the ring's head does not
 * move yet. Caller holds tx_lock.
 */
static void usnic_rel_pack_gather(struct usnic_rel_ep *ep, unsigned int chan,
				  struct usnic_rel_pack *pk, u32 peer_handle)
{
	struct usnic_rel_ring *ring = &ep->sq[chan];
	u32 avail = usnic_rel_ring_avail(ep, ring), i;
	struct usnic_rel_sqe sqe;

	for (i = 0; i < avail; i++) {
		memcpy(&sqe, ring->desc +
		       (size_t)((ring->kidx + i) & (ring->entries - 1)) *
		       sizeof(sqe), sizeof(sqe));
		if (!usnic_rel_pack_fits(&sqe) || sqe.peer != peer_handle ||
		    usnic_rel_sqe_check(ep, chan, &sqe) ||
		    !usnic_rel_pack_room(ep, chan, pk, sqe.len))
			break;
		/*
		 * As many CQ slots stay free as the packet's messages take: a
		 * packet to ourselves, or a peer's packet to us, needs them to
		 * be delivered, and these sends complete only once it is.
		 */
		if (!usnic_rel_cq_reserve_spare(ep, pk->n + 1))
			break;
		usnic_rel_pack_add(ep, chan, pk, &sqe);
	}
}

/* The packet of @pk, with room for its completions after it; NULL if no memory. */
static struct usnic_rel_txbuf *usnic_rel_pack_build(struct usnic_rel_ep *ep,
						    struct usnic_rel_pack *pk)
{
	size_t hlen = usnic_rel_wire_hdr_len(USNIC_REL_PKT_PACKED);
	u32 recs = pk->n * sizeof(struct usnic_rel_packed_rec);
	u32 len = hlen + recs + pk->len;
	struct usnic_rel_txbuf *b;
	u32 i;

	b = usnic_rel_fault_nomem(ep) ? NULL :
	    usnic_rel_txbuf_alloc(ep, ALIGN(len, 8) +
				  pk->n * sizeof(struct usnic_rel_cqe),
				  GFP_KERNEL_ACCOUNT);
	if (!b)
		return NULL;
	b->len = len;
	for (i = 0; i < pk->n; i++)
		usnic_rel_packed_rec_put(b->data + hlen, i, pk->cqe[i].len,
					 pk->cqe[i].imm);
	memcpy(b->data + hlen + recs, pk->bytes, pk->len);
	b->packed_cqe = (struct usnic_rel_cqe *)(b->data + ALIGN(len, 8));
	memcpy(b->packed_cqe, pk->cqe, pk->n * sizeof(struct usnic_rel_cqe));
	b->nr_packed = pk->n;
	return b;
}

/*
 * Number @b, the packet of @pk, in @peer's window of @chan and send it.
 * Returns 0, or -errno when the connection cannot take it now (the caller
 * sends the first message alone, which deals with every such case).
 */
static int usnic_rel_pack_xmit(struct usnic_rel_ep *ep,
			       struct usnic_rel_peer *peer, unsigned int chan,
			       struct usnic_rel_pack *pk,
			       struct usnic_rel_txbuf *b, bool parked)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	struct usnic_rel_tx_batch batch = {};
	struct usnic_rel_pkt pkt;
	int ret = -EAGAIN;
	u32 seq;

	spin_lock_bh(&conn->lock);
	/* Paired, so the peer's limit is known; every buffer holds these. */
	if (conn->state != USNIC_REL_CONN_ACTIVE || !conn->remote_incarnation ||
	    conn->peer_rx_limit < USNIC_REL_WIRE_PACKED_MSG_MAX ||
	    (c->nr_parked && !parked) || !usnic_rel_txwin_may_send(&c->tx))
		goto unlock;
	ret = usnic_rel_txwin_push(&c->tx, ktime_get_ns(), &seq);
	if (ret)
		goto unlock;
	usnic_rel_pkt_init(ep, peer, &pkt, USNIC_REL_PKT_PACKED, chan);
	pkt.seq = seq;
	pkt.payload_len = b->len - usnic_rel_wire_hdr_len(USNIC_REL_PKT_PACKED);
	pkt.packed.count = pk->n;
	usnic_rel_ack_fill(peer, chan, &pkt);
	usnic_rel_wire_build(b->data, b->len, &pkt);
	/* The window takes the allocation's reference; the batch gets its own. */
	usnic_rel_txwin_set_pkt(&c->tx, seq, b);
	usnic_rel_rtx_timer_arm(peer, false);
	refcount_inc(&b->ref);
	spin_unlock_bh(&conn->lock);

	usnic_rel_batch_add(ep, peer, &batch, b);
	usnic_rel_batch_flush(ep, peer, &batch);
	usnic_rel_count(ep, USNIC_REL_CNT_TX_DATA_PACKETS, 1);
	usnic_rel_count(ep, USNIC_REL_CNT_TX_PACKED_MSGS, pk->n);
	return 0;
unlock:
	spin_unlock_bh(&conn->lock);
	return ret;
}

/* Whether @peer's channel takes a new packet now: paired, window open. */
static bool usnic_rel_pack_may_send(struct usnic_rel_peer *peer,
				    unsigned int chan)
{
	struct usnic_rel_conn *conn = &peer->conn;
	bool ok;

	spin_lock_bh(&conn->lock);
	ok = conn->state == USNIC_REL_CONN_ACTIVE && conn->remote_incarnation &&
	     usnic_rel_txwin_may_send(&conn->chan[chan].tx);
	spin_unlock_bh(&conn->lock);
	return ok;
}

/* The scratch, emptied; NULL when there is no memory for it. Under tx_lock. */
static struct usnic_rel_pack *usnic_rel_pack_start(struct usnic_rel_ep *ep)
{
	if (!ep->pack) {
		ep->pack = kvmalloc(sizeof(*ep->pack), GFP_KERNEL_ACCOUNT);
		if (!ep->pack)
			return NULL;
	}
	ep->pack->n = 0;
	ep->pack->len = 0;
	return ep->pack;
}

/* Build and send the packet of @pk; 0 or -errno, nothing sent. */
static int usnic_rel_pack_out(struct usnic_rel_ep *ep,
			      struct usnic_rel_peer *peer, unsigned int chan,
			      struct usnic_rel_pack *pk, bool parked)
{
	struct usnic_rel_txbuf *b;
	int ret;

	ret = usnic_rel_conn_tx_grow(peer, chan);
	if (ret)
		return ret;
	b = usnic_rel_pack_build(ep, pk);
	if (!b)
		return -ENOMEM;
	ret = usnic_rel_pack_xmit(ep, peer, chan, pk, b, parked);
	if (ret)
		usnic_rel_txbuf_put(ep, b);
	return ret;
}

/**
 * usnic_rel_pack_send() - send a short message packed with those after it
 * @ep: the endpoint
 * @chan: the channel whose ring @sqe was just taken from
 * @sqe: the kernel's checked copy of a SEND
 *
 * Caller holds tx_lock and reserved @sqe's CQ slot.
 *
 * Return: how many more ring entries went out in the packet with @sqe (the
 * ring's head moved past them), or 0 when nothing was sent and @sqe goes
 * the usual way.
 */
u32 usnic_rel_pack_send(struct usnic_rel_ep *ep, unsigned int chan,
			const struct usnic_rel_sqe *sqe)
{
	struct usnic_rel_ring *ring = &ep->sq[chan];
	struct usnic_rel_peer *peer;
	struct usnic_rel_pack *pk;
	u32 more;

	lockdep_assert_held(&ep->tx_lock);
	if (!usnic_rel_pack_fits(sqe) || !usnic_rel_ring_avail(ep, ring))
		return 0;
	/* Removal waits for tx_lock, which we hold: the peer stays. */
	rcu_read_lock();
	peer = xa_load(&ep->peers, sqe->peer);
	rcu_read_unlock();
	if (!peer || READ_ONCE(peer->conn.chan[chan].nr_parked) ||
	    !usnic_rel_pack_may_send(peer, chan))
		return 0;
	pk = usnic_rel_pack_start(ep);
	if (!pk)
		return 0;
	usnic_rel_pack_add(ep, chan, pk, sqe);
	usnic_rel_pack_gather(ep, chan, pk, sqe->peer);
	if (pk->n < 2)
		return 0;
	if (usnic_rel_pack_out(ep, peer, chan, pk, false))
		goto unreserve;
	more = pk->n - 1;
	ring->kidx += more;
	/* Our copies are sent: orders their reads before userspace reuses the slots. */
	smp_store_release(&ring->hdr->head, ring->kidx);
	return more;
unreserve:
	usnic_rel_pack_unreserve(ep, pk);
	return 0;
}

/* A parked send that may go packed: a short message none of which left. */
static bool usnic_rel_pack_parked_fits(const struct usnic_rel_sq_cur *p)
{
	return usnic_rel_pack_fits(&p->sqe) && !p->sent && !p->op;
}

/**
 * usnic_rel_pack_parked() - send the oldest parked sends packed together
 * @ep: the endpoint
 * @peer: whose channel @chan has sends parked
 * @chan: the channel
 *
 * They hold their CQ slots since they left the ring. Caller holds tx_lock.
 *
 * Return: how many left the parked queue in one packet, or 0 when nothing
 * was sent and the oldest goes the usual way.
 */
u32 usnic_rel_pack_parked(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			  unsigned int chan)
{
	struct usnic_rel_chan_conn *c = &peer->conn.chan[chan];
	struct usnic_rel_sq_cur *p, *tmp;
	struct usnic_rel_pack *pk;
	u32 n;

	lockdep_assert_held(&ep->tx_lock);
	/* Only the send path adds or takes parked sends, under tx_lock. */
	p = list_first_entry_or_null(&c->sendq, struct usnic_rel_sq_cur, node);
	if (!p || !usnic_rel_pack_parked_fits(p) ||
	    list_is_last(&p->node, &c->sendq) ||
	    !usnic_rel_pack_may_send(peer, chan))
		return 0;
	pk = usnic_rel_pack_start(ep);
	if (!pk)
		return 0;
	list_for_each_entry(p, &c->sendq, node) {
		if (!usnic_rel_pack_parked_fits(p) ||
		    !usnic_rel_pack_room(ep, chan, pk, p->sqe.len))
			break;
		usnic_rel_pack_add(ep, chan, pk, &p->sqe);
	}
	if (pk->n < 2 || usnic_rel_pack_out(ep, peer, chan, pk, true))
		return 0;
	n = 0;
	list_for_each_entry_safe(p, tmp, &c->sendq, node) {
		if (n == pk->n)
			break;
		spin_lock_bh(&peer->conn.lock);
		list_del(&p->node);
		WRITE_ONCE(c->nr_parked, c->nr_parked - 1);
		spin_unlock_bh(&peer->conn.lock);
		kfree(p);
		n++;
	}
	return n;
}
