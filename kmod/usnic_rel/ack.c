// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: acknowledgments. Incoming ones move the send window, complete
 * sends and feed the RTO estimator; outgoing ones are piggy-backed on any
 * packet of the same channel, or sent alone when the delayed-ACK timer or
 * the receive window says so.
 */
#include <linux/ktime.h>

#include "conn.h"
#include "usnic_rel.h"
#include "trace.h"
#include "wire.h"

/*
 * Process the ACK fields of a packet from @peer. Caller holds conn->lock and
 * has checked that the packet comes from the paired incarnation.
 */
void usnic_rel_ack_rx(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
		      const struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[pkt->channel];
	bool pure = pkt->type == USNIC_REL_PKT_ACK;
	bool rnr = pkt->flags & USNIC_REL_F_RNR;
	bool held = pkt->flags & USNIC_REL_F_HELD;
	struct usnic_rel_ack_result res;
	enum usnic_rel_ack_verdict v;
	u32 nblocks = 0, backed_off = 0;

	/* Only a standalone ACK's payload is SACK blocks (checked by the parser). */
	if (pure)
		nblocks = pkt->payload_len / sizeof(struct usnic_rel_sack_block);
	/* The reordering window of time-based loss detection follows SRTT. */
	c->tx.srtt_ns = conn->rto.has_sample ?
			(u64)conn->rto.srtt_us * NSEC_PER_USEC : 0;
	/*
	 * A not-ready ACK repeats the hole on purpose: no duplicate. A held
	 * one SACKs the packet at its ACK too: received, not delivered.
	 */
	v = usnic_rel_txwin_ack_held(&c->tx, pkt->ack, pkt->sack, pkt->payload,
				     nblocks, pure && !rnr, held,
				     ktime_get_ns(), &res);
	trace_usnic_rel_ack(ep->debug_id, peer->handle, pkt,
			    v != USNIC_REL_ACK_STALE && v != USNIC_REL_ACK_FORGED,
			    v == USNIC_REL_ACK_NEW || v == USNIC_REL_ACK_DUP ? res.freed : 0);
	if (v == USNIC_REL_ACK_STALE || v == USNIC_REL_ACK_FORGED) {
		usnic_rel_count(ep, USNIC_REL_CNT_RX_BAD_ACK, 1);
		return;
	}
	if (rnr) {
		/* After the ACK's own progress, which would clear it. */
		usnic_rel_cwnd_peer_rnr(&c->tx.cc);
		usnic_rel_count(ep, USNIC_REL_CNT_RNR_ACKS_RECEIVED, 1);
		/*
		 * Slow, not dead: the peer's kernel answered the resend. As
		 * with TCP's zero-window probes, only unanswered timeouts
		 * count toward retry_limit; and no backoff, so that the hole
		 * goes again one RTO after this answer (timer restarted below).
		 */
		usnic_rel_rto_not_ready(&conn->rto);
	}
	if (res.freed) {
		/* A new flight may be probed again. */
		conn->probe_sent = false;
		conn->probe_waited = false;
		usnic_rel_conn_complete(ep, peer, pkt->channel, res.freed_from,
					res.freed);
		usnic_rel_rto_progress(&conn->rto);
	}
	/*
	 * A SACK's sample counts without a cumulative ACK: in a recovery the
	 * hole may stay for several round trips, and the backoff of an
	 * earlier timeout with it. The timer restarts if that backoff ends.
	 */
	if (res.rtt_ns >= 0) {
		backed_off = conn->rto.backoff;
		usnic_rel_rto_sample(&conn->rto,
				     div_u64(res.rtt_ns, NSEC_PER_USEC));
	}
	/*
	 * Room in the window, or in the pipe (a SACK): resend what is
	 * presumed lost, then resume sends and answers that waited.
	 */
	if ((res.freed || res.newly_sacked || res.rack_lost) &&
	    (c->tx.nr_lost || READ_ONCE(ep->sq_blocked) ||
	     usnic_rel_conn_parked(conn) || usnic_rel_rdma_resp_pending(conn)))
		usnic_rel_tx_work_kick(peer);
	if (res.recovery_started)
		usnic_rel_count(ep, USNIC_REL_CNT_CWND_FAST_RECOVERIES, 1);
	/* Spared by an ACK, the reorder timer or a timeout: counted here. */
	if (c->tx.cc.losses_spared != c->cc_spared_counted) {
		usnic_rel_count(ep, USNIC_REL_CNT_CWND_LOSSES_SPARED,
				c->tx.cc.losses_spared - c->cc_spared_counted);
		c->cc_spared_counted = c->tx.cc.losses_spared;
	}
	if (res.spurious)
		usnic_rel_count(ep, USNIC_REL_CNT_RETX_SPURIOUS, res.spurious);
	usnic_rel_reo_timer_arm(peer);
	if (res.fast_retransmit) {
		c->retx_pending = true;
		usnic_rel_tx_work_kick(peer);
	}
	usnic_rel_rtx_timer_arm(peer, (res.freed || rnr || backed_off) &&
				!usnic_rel_conn_other_overdue(conn,
							      pkt->channel));
}

/*
 * Should the packet just numbered in @w ask for an ACK at once? When it
 * fills the send window, nothing more leaves until an ACK comes: waiting
 * for the peer's delayed-ACK timer would send one flight per ack_delay_us
 * with a small window (slow start, after a loss). And half-way through a
 * window of four or more: if the ACK asked for at the end is lost, the one
 * from the middle still moves the window, and what is then sent arrives
 * behind a lost tail and makes the peer report the hole, instead of the
 * sender waiting for a tail-loss probe.
 */
static bool usnic_rel_ack_wanted(const struct usnic_rel_txwin *w)
{
	u32 cwnd = w->cc.cwnd;

	return !usnic_rel_txwin_may_send(w) ||
	       (cwnd >= 4 && usnic_rel_txwin_pipe(w) == cwnd / 2);
}

/*
 * Fill the ACK fields of an outgoing packet on @chan, after its sequence
 * number was taken. Caller holds conn->lock.
 */
void usnic_rel_ack_fill(struct usnic_rel_peer *peer, unsigned int chan,
			struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	int i;

	if (c->ack_pending && pkt->type != USNIC_REL_PKT_ACK)
		usnic_rel_count(peer->ep, USNIC_REL_CNT_ACKS_PIGGYBACKED, 1);
	pkt->flags |= USNIC_REL_F_ACK;
	/* Up to what was delivered; what waits for a buffer is SACKed. */
	usnic_rel_rxwin_build_ack_from(&c->rx, usnic_rel_rx_undelivered(c),
				       &pkt->ack, &pkt->sack);
	/*
	 * Only while the ACK still names the dropped packet as its hole: once
	 * a resend of it was taken, the flag would tell the sender that later
	 * losses are flow control. Every ACK says what waits in the backlog.
	 */
	if (pkt->ack != c->rx.next) {
		pkt->flags |= USNIC_REL_F_RNR | USNIC_REL_F_HELD;
		usnic_rel_count(peer->ep, USNIC_REL_CNT_RNR_ACKS_SENT, 1);
	} else if (c->rnr_owed && pkt->ack == c->rnr_seq) {
		pkt->flags |= USNIC_REL_F_RNR;
		usnic_rel_count(peer->ep, USNIC_REL_CNT_RNR_ACKS_SENT, 1);
	}
	c->rnr_owed = false;
	if (pkt->type != USNIC_REL_PKT_ACK && usnic_rel_ack_wanted(&c->tx))
		pkt->flags |= USNIC_REL_F_ACK_REQ;
	/* A persist probe: any packet asking for an ACK will do. */
	if (c->persist_owed) {
		pkt->flags |= USNIC_REL_F_ACK_REQ;
		c->persist_owed = false;
		usnic_rel_count(peer->ep, USNIC_REL_CNT_PERSIST_PROBES, 1);
	}
	usnic_rel_rxwin_ack_sent(&c->rx);
	c->ack_pending = false;
	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		if (conn->chan[i].ack_pending)
			return;
	/* Nothing owed: the delayed-ACK timer, if queued, expires idle. */
	WRITE_ONCE(conn->ack_due_ns, 0);
}

/* The common header fields of a packet from @ep to @peer on @chan. */
void usnic_rel_pkt_init(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			struct usnic_rel_pkt *pkt, u8 type, unsigned int chan)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->type = type;
	pkt->channel = chan;
	pkt->src_incarnation = peer->conn.local_incarnation;
	pkt->dst_incarnation = peer->conn.remote_incarnation;
}

/*
 * Build the standalone ACK owed on @chan into @buf, with what room is left
 * after its header for SACK blocks. Caller holds conn->lock. Returns its
 * length.
 */
size_t usnic_rel_ack_build(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			   unsigned int chan, void *buf, size_t size)
{
	size_t hlen = usnic_rel_wire_hdr_len(USNIC_REL_PKT_ACK);
	struct usnic_rel_chan_conn *c = &peer->conn.chan[chan];
	struct usnic_rel_pkt pkt;
	u32 room, n;

	if (size < hlen)
		return 0;
	room = min_t(size_t, USNIC_REL_WIRE_SACK_BLOCKS,
		     (size - hlen) / sizeof(struct usnic_rel_sack_block));
	usnic_rel_pkt_init(ep, peer, &pkt, USNIC_REL_PKT_ACK, chan);
	/* Informational: the receiver must not take it for a sequence. */
	pkt.seq = c->tx.next;
	n = usnic_rel_rxwin_sack_blocks_from(&c->rx,
					     usnic_rel_rx_undelivered(c),
					     (u8 *)buf + hlen, room);
	pkt.payload_len = n * sizeof(struct usnic_rel_sack_block);
	usnic_rel_ack_fill(peer, chan, &pkt);
	if (!usnic_rel_wire_build(buf, size, &pkt))
		return 0;
	return hlen + pkt.payload_len;
}

/*
 * Of the channels in @chans, those that still owe an ACK: the first one's
 * is built into @buf (its channel in *@chan), to be sent by the caller from
 * softirq once conn->lock is dropped (usnic_rel_ack_xmit_softirq()), without
 * waking the work item. The others, and any when a fault is set up (the
 * work item injects it) or the socket cannot be used from softirq, are left
 * to the work item as before. Returns the ACK's length, or 0. Caller holds
 * conn->lock, in softirq.
 */
size_t usnic_rel_ack_take_inline(struct usnic_rel_ep *ep,
				 struct usnic_rel_peer *peer,
				 unsigned long chans, void *buf, size_t size,
				 unsigned int *chan)
{
	struct usnic_rel_conn *conn = &peer->conn;
	unsigned int i;
	size_t len = 0;

	for_each_set_bit(i, &chans, USNIC_REL_NR_CHANS) {
		if (!conn->chan[i].ack_pending)
			continue;
		if (!len && conn->state == USNIC_REL_CONN_ACTIVE &&
		    usnic_rel_socket_softirq_ok(ep)) {
			len = usnic_rel_ack_build(ep, peer, i, buf, size);
			*chan = i;
			if (len)
				continue;
		}
		usnic_rel_tx_work_kick(peer);
	}
	return len;
}

/*
 * Send the standalone ACK of @chan that usnic_rel_ack_build() put in @buf,
 * from softirq (the receive path's or the delayed-ACK timer's) on @sk, the
 * endpoint's socket, as usnic_rel_xmit_softirq() sends answers. One that
 * cannot leave is owed again, to the work item.
 */
void usnic_rel_ack_xmit_softirq(struct usnic_rel_ep *ep, struct sock *sk,
				struct usnic_rel_peer *peer, unsigned int chan,
				const void *buf, size_t len)
{
	struct usnic_rel_conn *conn = &peer->conn;
	int ret;

	trace_usnic_rel_tx(ep->debug_id, peer->handle, buf, len);
	ret = usnic_rel_socket_send_softirq(ep, sk, &peer->route, &peer->addr,
					    buf, len);
	if (!ret) {
		usnic_rel_count(ep, USNIC_REL_CNT_TX_PACKETS, 1);
		usnic_rel_count(ep, USNIC_REL_CNT_TX_BYTES, len);
		usnic_rel_count(ep, USNIC_REL_CNT_ACKS_STANDALONE, 1);
		usnic_rel_count(ep, USNIC_REL_CNT_ACKS_INLINE, 1);
		return;
	}
	usnic_rel_count(ep, USNIC_REL_CNT_TX_ERRORS, 1);
	spin_lock(&conn->lock);
	conn->chan[chan].ack_pending = true;
	usnic_rel_tx_work_kick(peer);
	spin_unlock(&conn->lock);
}
