// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: lifetime of the reliable connection to a peer, and what happens
 * to outstanding sends when it ends: they complete, successfully once the
 * peer acknowledged them, or with an error when it died or went away.
 */
#include <linux/slab.h>

#include "conn.h"
#include "usnic_rel.h"

struct usnic_rel_txbuf *usnic_rel_txbuf_alloc(u32 len, gfp_t gfp)
{
	struct usnic_rel_txbuf *b = kmalloc(struct_size(b, data, len), gfp);

	if (!b)
		return NULL;
	refcount_set(&b->ref, 1);
	b->len = len;
	b->completes = false;
	return b;
}

static void usnic_rel_chan_conn_free(struct usnic_rel_chan_conn *c)
{
	u32 i;

	if (c->txbuf) {
		for (i = 0; i < c->tx.size; i++)
			usnic_rel_txbuf_put(c->txbuf[i]);
		kvfree(c->txbuf);
		c->txbuf = NULL;
	}
	if (c->held) {
		for (i = 0; i < c->rx.size; i++)
			kfree_skb(c->held[i]);
		kvfree(c->held);
		c->held = NULL;
	}
	__skb_queue_purge(&c->backlog);
	usnic_rel_rdma_free_chan(c);
	usnic_rel_send_parked_free(c);
	usnic_rel_txwin_destroy(&c->tx);
	usnic_rel_rxwin_destroy(&c->rx);
}

int usnic_rel_conn_init(struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;
	u32 size = usnic_rel_send_window;
	int i, ret;

	spin_lock_init(&conn->lock);
	conn->state = USNIC_REL_CONN_ACTIVE;
	conn->epoch = atomic_inc_return(&peer->ep->conn_epochs);
	usnic_rel_hs_new_epoch(conn);
	usnic_rel_rto_init(&conn->rto, usnic_rel_rto_min_us,
			   usnic_rel_rto_max_us);
	/* All lists first: the error path frees every channel. */
	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		__skb_queue_head_init(&conn->chan[i].backlog);
		INIT_LIST_HEAD(&conn->chan[i].ops);
		INIT_LIST_HEAD(&conn->chan[i].resps);
		INIT_LIST_HEAD(&conn->chan[i].sendq);
	}
	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		struct usnic_rel_chan_conn *c = &conn->chan[i];

		ret = usnic_rel_txwin_init(&c->tx, size, conn->tx_isn[i],
					   GFP_KERNEL_ACCOUNT);
		if (ret)
			goto err;
		ret = usnic_rel_rxwin_init(&c->rx, size, 0, usnic_rel_ack_every,
					   GFP_KERNEL_ACCOUNT);
		if (ret)
			goto err;
		c->txbuf = kvcalloc(size, sizeof(*c->txbuf), GFP_KERNEL_ACCOUNT);
		c->held = kvcalloc(size, sizeof(*c->held), GFP_KERNEL_ACCOUNT);
		if (!c->txbuf || !c->held) {
			ret = -ENOMEM;
			goto err;
		}
	}
	usnic_rel_timers_init(peer);
	return 0;
err:
	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		usnic_rel_chan_conn_free(&conn->chan[i]);
	return ret;
}

/*
 * Stop the timers and the work for good. After this nothing but the caller
 * touches the connection, except receivers still inside an RCU section,
 * which see the REMOVED state and leave.
 */
void usnic_rel_conn_shutdown(struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;

	spin_lock_bh(&conn->lock);
	conn->state = USNIC_REL_CONN_REMOVED;
	spin_unlock_bh(&conn->lock);
	/* The state stops each of them from arming the others again. */
	timer_shutdown_sync(&conn->rtx_timer);
	hrtimer_cancel(&conn->ack_timer);
	cancel_work_sync(&conn->tx_work);
}

void usnic_rel_conn_free(struct usnic_rel_peer *peer)
{
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		usnic_rel_chan_conn_free(&peer->conn.chan[i]);
}

/* Post the completion of a send, releasing the CQ slot reserved for it. */
static void usnic_rel_conn_post(struct usnic_rel_ep *ep,
				struct usnic_rel_txbuf *b, int status)
{
	b->cqe.status = status;
	if (status)
		b->cqe.len = 0;
	usnic_rel_cq_post_reserved(ep, &b->cqe);
}

/*
 * Sequences [from, from + count) of @chan were acknowledged: drop their
 * copies and complete the sends they ended. Caller holds conn->lock.
 */
void usnic_rel_conn_complete(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			     unsigned int chan, u32 from, u32 count)
{
	struct usnic_rel_chan_conn *c = &peer->conn.chan[chan];
	bool posted = false;
	u32 i;

	for (i = 0; i < count; i++) {
		u32 slot = usnic_rel_txwin_slot(&c->tx, from + i);
		struct usnic_rel_txbuf *b = c->txbuf[slot];

		c->txbuf[slot] = NULL;
		if (!b)
			continue;
		if (b->completes) {
			usnic_rel_conn_post(ep, b,
					    usnic_rel_send_msg_status(ep, peer,
								      chan, b));
			posted = true;
		}
		usnic_rel_txbuf_put(b);
	}
	if (posted)
		wake_up_interruptible(&ep->ctx->wq);
}

/* Sends wait on the peer's channels (usnic_rel_sq_cur). Under conn->lock or tx_lock. */
bool usnic_rel_conn_parked(const struct usnic_rel_conn *conn)
{
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		if (READ_ONCE(conn->chan[i].nr_parked))
			return true;
	return false;
}

/*
 * Complete every outstanding send with @status, hand a partly received
 * message's buffer back to userspace, forget the held packets and start
 * both directions of every channel afresh: ours at the epoch's initial
 * sequence numbers, the peer's at 0 until a pairing sets them. A message
 * or PUT partly sent belongs to the sequence space that ends here: the new
 * epoch makes the send path complete it with an error instead of sending
 * the rest (it holds it, maybe between two packets, so it is not touched
 * here).
 * Caller holds conn->lock.
 */
void usnic_rel_conn_fail_all(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			     int status)
{
	struct usnic_rel_conn *conn = &peer->conn;
	int i;
	u32 s;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		struct usnic_rel_chan_conn *c = &conn->chan[i];

		for (s = c->tx.una; s != c->tx.next; s++) {
			u32 slot = usnic_rel_txwin_slot(&c->tx, s);
			struct usnic_rel_txbuf *b = c->txbuf[slot];

			c->txbuf[slot] = NULL;
			if (b && b->completes)
				usnic_rel_conn_post(ep, b, status);
			usnic_rel_txbuf_put(b);
		}
		usnic_rel_txwin_reset(&c->tx, conn->tx_isn[i]);
		usnic_rel_rx_msg_abort(ep, peer, i, status);
		for (s = 0; s < c->rx.size; s++) {
			kfree_skb(c->held[s]);
			c->held[s] = NULL;
		}
		__skb_queue_purge(&c->backlog);
		usnic_rel_rdma_fail_chan(ep, c, status);
		usnic_rel_rxwin_reset(&c->rx, 0);
		c->ack_pending = false;
		c->retx_pending = false;
		c->retx_all = false;
		c->retx_probe = false;
	}
	conn->epoch = atomic_inc_return(&ep->conn_epochs);
	conn->probe_armed = false;
	conn->probe_sent = false;
	usnic_rel_rto_init(&conn->rto, usnic_rel_rto_min_us,
			   usnic_rel_rto_max_us);
	/* Parked sends fail now (dead) or go out afresh (reset). */
	if (usnic_rel_conn_parked(conn))
		usnic_rel_tx_work_kick(peer);
	wake_up_interruptible(&ep->ctx->wq);
}

/*
 * The peer stopped answering (retry limit) or making progress (@stalled):
 * what was outstanding fails with -ETIMEDOUT, sends fail at once from now
 * on, and our side starts a new epoch, so that the peer, which may still
 * hold the old one, must pair with us again through a handshake before
 * anything else passes. Caller holds conn->lock.
 */
void usnic_rel_conn_dead(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			 bool stalled)
{
	struct usnic_rel_conn *conn = &peer->conn;

	conn->state = USNIC_REL_CONN_DEAD;
	usnic_rel_hs_new_epoch(conn);
	usnic_rel_conn_fail_all(ep, peer, -ETIMEDOUT);
	usnic_rel_count(ep, USNIC_REL_CNT_PEERS_DEAD, 1);
	conn->hs_stats.stalled = stalled;
	if (stalled)
		usnic_rel_count(ep, USNIC_REL_CNT_PEERS_STALLED, 1);
	/* A send parked on the full window fails now, not at the next doorbell. */
	if (READ_ONCE(ep->sq_blocked))
		usnic_rel_tx_work_kick(peer);
}
