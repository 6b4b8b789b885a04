// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: lifetime of the reliable connection to a peer, and what happens
 * to outstanding sends when it ends: they complete, successfully once the
 * peer acknowledged them, or with an error when it died or went away.
 */
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "conn.h"
#include "usnic_rel.h"

/*
 * A packet copy of @ep, with one reference for the caller. The endpoint
 * counts its live copies (debugfs ep<N>/memory): once every send completed
 * none may be left, and none at all when the endpoint is freed.
 */
struct usnic_rel_txbuf *usnic_rel_txbuf_alloc(struct usnic_rel_ep *ep, u32 len,
					      gfp_t gfp)
{
	struct usnic_rel_txbuf *b = kmalloc(struct_size(b, data, len), gfp);

	if (!b)
		return NULL;
	refcount_set(&b->ref, 1);
	b->len = len;
	b->size = struct_size(b, data, len);
	b->completes = false;
	b->nr_packed = 0;
	atomic_long_inc(&ep->tx_bufs);
	atomic_long_add(b->size, &ep->tx_buf_bytes);
	return b;
}

void usnic_rel_txbuf_put(struct usnic_rel_ep *ep, struct usnic_rel_txbuf *b)
{
	if (!b || !refcount_dec_and_test(&b->ref))
		return;
	atomic_long_sub(b->size, &ep->tx_buf_bytes);
	atomic_long_dec(&ep->tx_bufs);
	kfree(b);
}

/*
 * Window memory past which an endpoint's receive windows stop growing:
 * a remote peer decides how far ahead it sends, so what it makes us
 * allocate is bounded (the send windows grow as the local user sends).
 * A packet that would need more is dropped unacknowledged, as when the
 * allocation fails.
 */
#define USNIC_REL_RX_WIN_MAX_BYTES	(64L << 20)

/* Slot arrays of all windows of @ep, for debugfs: kept as they change. */
static void usnic_rel_win_bytes(struct usnic_rel_ep *ep, size_t old, size_t new)
{
	atomic_long_add((long)new - (long)old, &ep->win_bytes);
}

/* Keep the largest @cap seen in @max (debugfs). */
static void usnic_rel_win_max(atomic_t *max, u32 cap)
{
	int old = atomic_read(max);

	while (old < (int)cap && !atomic_try_cmpxchg(max, &old, cap))
		;
}

/*
 * The connection's windows have slots: make sure the endpoint's reaper
 * looks at them. Caller holds conn->lock.
 */
static void usnic_rel_win_track(struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_ep *ep = peer->ep;

	if (conn->state == USNIC_REL_CONN_REMOVED)
		return;
	spin_lock(&ep->win_lock);
	if (list_empty(&conn->win_node)) {
		if (list_empty(&ep->win_conns))
			queue_delayed_work(usnic_rel_wq, &ep->win_reap,
					   USNIC_REL_WIN_REAP_PERIOD);
		list_add_tail(&conn->win_node, &ep->win_conns);
	}
	spin_unlock(&ep->win_lock);
}

static void usnic_rel_chan_conn_free(struct usnic_rel_ep *ep,
				     struct usnic_rel_chan_conn *c)
{
	u32 i;

	for (i = 0; i < c->tx.cap; i++)
		usnic_rel_txbuf_put(ep, c->tx.pkts[i]);
	for (i = 0; i < c->rx.cap; i++)
		kfree_skb(c->rx.held[i]);
	usnic_rel_win_bytes(ep, usnic_rel_txwin_bytes(c->tx.cap) +
			    usnic_rel_rxwin_bytes(c->rx.cap), 0);
	__skb_queue_purge(&c->backlog);
	usnic_rel_rdma_free_chan(c);
	usnic_rel_send_parked_free(c);
	usnic_rel_txwin_destroy(&c->tx);
	usnic_rel_rxwin_destroy(&c->rx);
}

/*
 * Nothing is allocated for the windows until traffic needs it: a peer in
 * the address vector costs only its structure.
 */
int usnic_rel_conn_init(struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;
	u32 size = usnic_rel_send_window;
	int i, ret;

	spin_lock_init(&conn->lock);
	conn->state = USNIC_REL_CONN_ACTIVE;
	INIT_LIST_HEAD(&conn->win_node);
	conn->epoch = atomic_inc_return(&peer->ep->conn_epochs);
	usnic_rel_hs_new_epoch(conn);
	usnic_rel_rto_init(&conn->rto, usnic_rel_rto_min_us,
			   usnic_rel_rto_max_us);
	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		struct usnic_rel_chan_conn *c = &conn->chan[i];

		__skb_queue_head_init(&c->backlog);
		INIT_LIST_HEAD(&c->ops);
		INIT_LIST_HEAD(&c->resps);
		INIT_LIST_HEAD(&c->sendq);
		ret = usnic_rel_txwin_init(&c->tx, size, conn->tx_isn[i]);
		if (!ret) {
			usnic_rel_cwnd_init(&c->tx.cc, usnic_rel_initial_cwnd,
					    size);
			usnic_rel_cwnd_set_floor(&c->tx.cc, usnic_rel_cwnd_min);
			usnic_rel_cwnd_set_queue_pct(&c->tx.cc,
						     usnic_rel_cwnd_queue_pct);
		}
		if (!ret)
			ret = usnic_rel_rxwin_init(&c->rx, size, 0,
						   usnic_rel_ack_every);
		if (ret)
			return ret;
	}
	usnic_rel_timers_init(peer);
	return 0;
}

/**
 * usnic_rel_conn_tx_grow() - more slots for @chan's send window
 * @peer: the peer
 * @chan: the channel, about to push a packet
 *
 * Process context, under tx_lock (which keeps every other grower, every
 * other push and the reaper out) and not under conn->lock: allocates, then
 * installs the new slots under the lock. Senders call it before they
 * allocate the packet, so that a retry after either allocation failed
 * keeps what the other got: under memory pressure where every other
 * allocation fails, a retry that needed both at once would never succeed.
 * Slots it installed stay until the push (nothing else pushes meanwhile).
 *
 * Return: 0 (the next push has a slot, or the protocol window is full),
 * -ENOSPC (no memory now, but packets of @chan are in flight: their ACKs
 * make room and run the sender again) or -ENOMEM (nothing in flight: the
 * caller must retry by itself, usnic_rel_send_retry_later()).
 */
int usnic_rel_conn_tx_grow(struct usnic_rel_peer *peer, unsigned int chan)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_txwin *w = &conn->chan[chan].tx;
	struct usnic_rel_ep *ep = peer->ep;
	struct usnic_rel_tx_slot *slots;
	u32 cap, old;
	void **pkts;
	int ret = 0;

	lockdep_assert_held(&ep->tx_lock);
	/*
	 * Most sends find a free slot: look without conn->lock first. Only
	 * tx_lock holders resize, so cap holds still; an ACK, an answer
	 * numbered in the receive softirq or a reset may move next and una
	 * under the look. A wrong "room" costs the push's -ENOBUFS, after
	 * which the sender comes back here.
	 */
	if (data_race(READ_ONCE(w->next) - READ_ONCE(w->una)) < w->cap)
		return 0;
	spin_lock_bh(&conn->lock);
	cap = usnic_rel_txwin_grow_cap(w);
	spin_unlock_bh(&conn->lock);
	if (!cap)
		return 0;
	if (usnic_rel_fault_tx_window_nomem(ep) || usnic_rel_fault_nomem(ep) ||
	    usnic_rel_txwin_arrays_alloc(cap, &slots, &pkts,
					 GFP_KERNEL_ACCOUNT | __GFP_NOWARN)) {
		usnic_rel_count(ep, USNIC_REL_CNT_WIN_NO_MEMORY, 1);
		spin_lock_bh(&conn->lock);
		ret = usnic_rel_txwin_inflight(w) ? -ENOSPC : -ENOMEM;
		spin_unlock_bh(&conn->lock);
		return ret;
	}
	spin_lock_bh(&conn->lock);
	old = w->cap;
	if (cap > old && !usnic_rel_txwin_resize(w, cap, &slots, &pkts)) {
		usnic_rel_win_bytes(ep, usnic_rel_txwin_bytes(old),
				    usnic_rel_txwin_bytes(cap));
		usnic_rel_win_track(peer);
		usnic_rel_win_max(&ep->win_tx_slots_max, cap);
		usnic_rel_count(ep, USNIC_REL_CNT_TX_WIN_GROW, 1);
	}
	spin_unlock_bh(&conn->lock);
	usnic_rel_txwin_arrays_free(slots, pkts);
	return 0;
}

/**
 * usnic_rel_conn_rx_grow() - more slots for @chan's receive window
 * @peer: the peer
 * @chan: the channel
 * @seq: an out-of-order sequence that does not fit the slots
 *
 * Softirq, under conn->lock: the allocation must not sleep. When it fails
 * the caller drops the packet unacknowledged and the sender resends it.
 *
 * Return: 0 (it fits now) or -ENOMEM.
 */
int usnic_rel_conn_rx_grow(struct usnic_rel_peer *peer, unsigned int chan,
			   u32 seq)
{
	struct usnic_rel_rxwin *w = &peer->conn.chan[chan].rx;
	struct usnic_rel_ep *ep = peer->ep;
	u32 old = w->cap, cap;
	unsigned long *ooo;
	void **held;

	cap = usnic_rel_rxwin_grow_cap(w, seq);
	if (!cap)
		return 0;
	if (atomic_long_read(&ep->win_bytes) + usnic_rel_rxwin_bytes(cap) >
	    USNIC_REL_RX_WIN_MAX_BYTES || usnic_rel_fault_window_nomem(ep) ||
	    usnic_rel_rxwin_arrays_alloc(cap, &ooo, &held, GFP_ATOMIC |
					 __GFP_ACCOUNT | __GFP_NOWARN)) {
		usnic_rel_count(ep, USNIC_REL_CNT_WIN_NO_MEMORY, 1);
		return -ENOMEM;
	}
	/* Cannot fail: cap is valid and above everything held. */
	WARN_ON_ONCE(usnic_rel_rxwin_resize(w, cap, &ooo, &held));
	usnic_rel_rxwin_arrays_free(ooo, held);
	usnic_rel_win_bytes(ep, usnic_rel_rxwin_bytes(old),
			    usnic_rel_rxwin_bytes(cap));
	usnic_rel_win_track(peer);
	usnic_rel_win_max(&ep->win_rx_slots_max, cap);
	usnic_rel_count(ep, USNIC_REL_CNT_RX_WIN_GROW, 1);
	return 0;
}

/* What one reaper pass decided for the windows of one channel. */
struct usnic_rel_win_shrink {
	u32 tx_cap, rx_cap;
	struct usnic_rel_tx_slot *slots;
	void **pkts;
	unsigned long *ooo;
	void **held;
};

/*
 * Give back what the windows of @peer did not need in the last period:
 * free the slots of an idle window at once, under the lock; allocate
 * smaller arrays outside it for a window used below half, and move onto
 * them if what is in flight still fits. Caller holds tx_lock.
 */
static void usnic_rel_conn_shrink(struct usnic_rel_peer *peer)
{
	struct usnic_rel_win_shrink sh[USNIC_REL_NR_CHANS] = {};
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_ep *ep = peer->ep;
	bool keep = false;
	unsigned int i;
	u32 old;

	spin_lock_bh(&conn->lock);
	if (conn->state == USNIC_REL_CONN_REMOVED) {
		spin_unlock_bh(&conn->lock);
		return;
	}
	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		struct usnic_rel_chan_conn *c = &conn->chan[i];

		sh[i].tx_cap = usnic_rel_txwin_shrink_cap(&c->tx);
		sh[i].rx_cap = usnic_rel_rxwin_shrink_cap(&c->rx);
		old = c->tx.cap;
		if (old && !sh[i].tx_cap &&
		    !usnic_rel_txwin_resize(&c->tx, 0, &sh[i].slots, &sh[i].pkts)) {
			usnic_rel_win_bytes(ep, usnic_rel_txwin_bytes(old), 0);
			atomic64_inc(&ep->win_shrinks);
		}
		old = c->rx.cap;
		if (old && !sh[i].rx_cap &&
		    !usnic_rel_rxwin_resize(&c->rx, 0, &sh[i].ooo, &sh[i].held)) {
			usnic_rel_win_bytes(ep, usnic_rel_rxwin_bytes(old), 0);
			atomic64_inc(&ep->win_shrinks);
		}
		if (sh[i].tx_cap == c->tx.cap)
			sh[i].tx_cap = 0;
		if (sh[i].rx_cap == c->rx.cap)
			sh[i].rx_cap = 0;
	}
	spin_unlock_bh(&conn->lock);

	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		struct usnic_rel_chan_conn *c = &conn->chan[i];
		struct usnic_rel_win_shrink *h = &sh[i];

		usnic_rel_txwin_arrays_free(h->slots, h->pkts);
		usnic_rel_rxwin_arrays_free(h->ooo, h->held);
		h->slots = NULL;
		h->pkts = NULL;
		h->ooo = NULL;
		h->held = NULL;
		/* Smaller arrays, then move if the window still fits them. */
		if (h->tx_cap &&
		    !usnic_rel_txwin_arrays_alloc(h->tx_cap, &h->slots, &h->pkts,
						  GFP_KERNEL_ACCOUNT)) {
			spin_lock_bh(&conn->lock);
			old = c->tx.cap;
			if (h->tx_cap < old &&
			    !usnic_rel_txwin_resize(&c->tx, h->tx_cap, &h->slots,
						    &h->pkts)) {
				usnic_rel_win_bytes(ep, usnic_rel_txwin_bytes(old),
						    usnic_rel_txwin_bytes(h->tx_cap));
				atomic64_inc(&ep->win_shrinks);
			}
			spin_unlock_bh(&conn->lock);
			usnic_rel_txwin_arrays_free(h->slots, h->pkts);
		}
		if (h->rx_cap &&
		    !usnic_rel_rxwin_arrays_alloc(h->rx_cap, &h->ooo, &h->held,
						  GFP_KERNEL_ACCOUNT)) {
			spin_lock_bh(&conn->lock);
			old = c->rx.cap;
			/* Not if it held further ahead meanwhile. */
			if (h->rx_cap < old && 2 * c->rx.peak <= h->rx_cap &&
			    !usnic_rel_rxwin_resize(&c->rx, h->rx_cap, &h->ooo,
						    &h->held)) {
				usnic_rel_win_bytes(ep, usnic_rel_rxwin_bytes(old),
						    usnic_rel_rxwin_bytes(h->rx_cap));
				atomic64_inc(&ep->win_shrinks);
			}
			spin_unlock_bh(&conn->lock);
			usnic_rel_rxwin_arrays_free(h->ooo, h->held);
		}
	}

	spin_lock_bh(&conn->lock);
	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		keep |= conn->chan[i].tx.cap || conn->chan[i].rx.cap;
	if (keep)
		usnic_rel_win_track(peer);
	spin_unlock_bh(&conn->lock);
}

/**
 * usnic_rel_win_reap() - the endpoint's window reaper (delayed work)
 * @work: ep->win_reap
 *
 * Runs every USNIC_REL_WIN_REAP_PERIOD while some connection of the
 * endpoint has window slots, and shrinks or frees what the last period did
 * not use: a peer that went quiet costs its structure again.
 */
void usnic_rel_win_reap(struct work_struct *work)
{
	struct usnic_rel_ep *ep = container_of(to_delayed_work(work),
					       struct usnic_rel_ep, win_reap);
	struct usnic_rel_conn *conn;
	LIST_HEAD(todo);

	/* Removal waits for tx_lock before freeing a peer: they stay. */
	mutex_lock(&ep->tx_lock);
	if (ep->dead)
		goto out;
	spin_lock_bh(&ep->win_lock);
	list_splice_init(&ep->win_conns, &todo);
	spin_unlock_bh(&ep->win_lock);
	for (;;) {
		/* Removal unlinks a connection from wherever it is, under win_lock. */
		spin_lock_bh(&ep->win_lock);
		conn = list_first_entry_or_null(&todo, struct usnic_rel_conn,
						win_node);
		if (conn)
			list_del_init(&conn->win_node);
		spin_unlock_bh(&ep->win_lock);
		if (!conn)
			break;
		usnic_rel_conn_shrink(container_of(conn, struct usnic_rel_peer,
						   conn));
		cond_resched();
	}
	spin_lock_bh(&ep->win_lock);
	if (!list_empty(&ep->win_conns))
		queue_delayed_work(usnic_rel_wq, &ep->win_reap,
				   USNIC_REL_WIN_REAP_PERIOD);
	spin_unlock_bh(&ep->win_lock);
out:
	mutex_unlock(&ep->tx_lock);
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
	/* The reaper leaves it alone from now on. */
	spin_lock_bh(&peer->ep->win_lock);
	list_del_init(&conn->win_node);
	spin_unlock_bh(&peer->ep->win_lock);
	/* The state stops each of them from arming the others again. */
	hrtimer_cancel(&conn->rtx_timer);
	hrtimer_cancel(&conn->reo_timer);
	hrtimer_cancel(&conn->ack_timer);
	cancel_work_sync(&conn->tx_work);
}

void usnic_rel_conn_free(struct usnic_rel_peer *peer)
{
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		usnic_rel_chan_conn_free(peer->ep, &peer->conn.chan[i]);
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
 * Post the completions @b ends, if any: a message's last packet, or the
 * messages of a PACKED one (short enough for any receiver: never refused).
 * Returns whether it posted. Caller holds conn->lock.
 */
static bool usnic_rel_conn_post_sends(struct usnic_rel_ep *ep,
				      struct usnic_rel_peer *peer,
				      unsigned int chan,
				      struct usnic_rel_txbuf *b, int status)
{
	u32 i;

	if (b->completes) {
		if (!status)
			status = usnic_rel_send_msg_status(ep, peer, chan, b);
		usnic_rel_conn_post(ep, b, status);
		return true;
	}
	for (i = 0; i < b->nr_packed; i++) {
		b->packed_cqe[i].status = status;
		if (status)
			b->packed_cqe[i].len = 0;
		usnic_rel_cq_post_reserved(ep, &b->packed_cqe[i]);
	}
	return b->nr_packed;
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
		struct usnic_rel_txbuf *b = usnic_rel_txwin_take_pkt(&c->tx,
								     from + i);

		if (!b)
			continue;
		if (usnic_rel_conn_post_sends(ep, peer, chan, b, 0))
			posted = true;
		usnic_rel_txbuf_put(ep, b);
	}
	if (posted)
		usnic_rel_ctx_wake(ep->ctx);
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

/* Whether packets the host itself dropped wait to be resent. Racy hint. */
bool usnic_rel_conn_local_lost(const struct usnic_rel_conn *conn)
{
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		if (READ_ONCE(conn->chan[i].retx_local))
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
			struct usnic_rel_txbuf *b =
				usnic_rel_txwin_take_pkt(&c->tx, s);

			if (b)
				usnic_rel_conn_post_sends(ep, peer, i, b, status);
			usnic_rel_txbuf_put(ep, b);
		}
		usnic_rel_txwin_reset(&c->tx, conn->tx_isn[i]);
		usnic_rel_rx_msg_abort(ep, peer, i, status);
		c->msg.packed_done = 0;
		/* The reaper frees the emptied arrays once they stay idle. */
		for (s = 0; s < c->rx.cap; s++)
			kfree_skb(c->rx.held[s]);
		__skb_queue_purge(&c->backlog);
		usnic_rel_rdma_fail_chan(ep, c, status);
		usnic_rel_rxwin_reset(&c->rx, 0);
		c->ack_pending = false;
		c->rnr_owed = false;
		c->rnr_ns = 0;
		c->persist_owed = false;
		c->retx_pending = false;
		c->retx_all = false;
		c->retx_held = false;
		c->retx_local = false;
		c->cc_lost_held = false;
		c->retx_probe = false;
	}
	conn->epoch = atomic_inc_return(&ep->conn_epochs);
	conn->probe_armed = false;
	conn->probe_sent = false;
	conn->probe_waited = false;
	WRITE_ONCE(conn->rtx_due_ns, 0);
	WRITE_ONCE(conn->ack_due_ns, 0);
	usnic_rel_rto_init(&conn->rto, usnic_rel_rto_min_us,
			   usnic_rel_rto_max_us);
	/* Parked sends fail now (dead) or go out afresh (reset). */
	if (usnic_rel_conn_parked(conn))
		usnic_rel_tx_work_kick(peer);
	usnic_rel_ctx_wake(ep->ctx);
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
