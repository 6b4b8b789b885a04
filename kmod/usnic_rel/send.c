// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the send path. A doorbell makes the kernel consume the send
 * rings, command channel first. Each descriptor is copied out of the shared
 * ring once and only the copy is validated and used. A message is cut into
 * packets of the channel's MTU; each takes a sequence number in the peer's
 * send window and a copy of it stays there until the peer acknowledges it,
 * when the send completes. A send whose peer's window is full, or whose
 * packet could not be allocated, is parked on that peer's channel (a kernel
 * copy, in order behind any parked before it) and the ring goes on with
 * other peers: one slow peer holds up only the sends addressed to it. The
 * connection's work item resumes parked sends when ACKs make room, a
 * delayed work when memory was short. A send that started belongs to its
 * connection's sequence space: when that ends (reset, death, removal) the
 * rest is never sent, the send completes with an error.
 *
 * Every transmission happens here, in process context under ep->tx_lock:
 * new packets on a doorbell, and retransmissions and standalone ACKs when a
 * connection's work item runs. The one exception is a one-packet answer to
 * a one-sided request, sent by the receive softirq itself when nothing is
 * owed ahead of it (rdma.c, usnic_rel_xmit_softirq()).
 */
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/smp.h>

#include "conn.h"
#include "rdma_check.h"
#include "seq.h"
#include "usnic_rel.h"
#include "trace.h"
#include "wire.h"

/* Packets resent per connection and channel before the lock is dropped. */
#define USNIC_REL_RETX_BATCH	32

/* How long sends that met an allocation failure wait before trying again. */
#define USNIC_REL_TX_RETRY_MS	2

static int usnic_rel_drain(struct usnic_rel_ep *ep, u32 rings);

/* Validate the kernel's copy of an SQE; returns 0 or the completion status. */
int usnic_rel_sqe_check(struct usnic_rel_ep *ep, unsigned int chan,
			const struct usnic_rel_sqe *sqe)
{
	if (sqe->opcode != USNIC_REL_OP_SEND)
		return usnic_rel_rdma_sqe_valid(sqe, ep->staging_size);
	if (sqe->flags & ~USNIC_REL_SQE_INLINE || sqe->reserved0 ||
	    sqe->reserved2[0] || sqe->reserved2[1] ||
	    sqe->rkey || sqe->remote_off)
		return -EINVAL;
	if (sqe->len > ep->max_msg[chan])
		return -EMSGSIZE;
	if (sqe->flags & USNIC_REL_SQE_INLINE) {
		if (sqe->len > USNIC_REL_SQE_INLINE_MAX || sqe->staging_off)
			return -EINVAL;
	} else if ((u64)sqe->staging_off + sqe->len > ep->staging_size) {
		return -EINVAL;
	}
	return 0;
}

/*
 * Packet @buf of @peer's send window never left the host: transmitting it
 * failed with @err. A full send buffer or no memory is no news about the
 * network, so no congestion response: the packet is marked lost (out of
 * the pipe) for the next ACK or the work item to resend. Returns whether
 * it was. No route or a policy that denies the peer does not pass in
 * milliseconds: left to the retransmit timer, whose backoff and retry
 * limit end a peer that stays unreachable. Unsequenced packets (ACKs,
 * HELLOs) are left to the peer's timers.
 */
static bool usnic_rel_xmit_mark_local(struct usnic_rel_peer *peer,
				      const void *buf, size_t len, int err)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c;
	struct usnic_rel_txbuf *b;
	struct usnic_rel_hdr h;
	bool marked = false;
	u32 seq;

	if ((err != -EAGAIN && err != -ENOBUFS && err != -ENOMEM) ||
	    len < sizeof(h))
		return false;
	memcpy(&h, buf, sizeof(h));
	if (h.type == USNIC_REL_PKT_ACK || h.type == USNIC_REL_PKT_HELLO ||
	    h.channel >= USNIC_REL_NR_CHANS)
		return false;
	c = &conn->chan[h.channel];
	seq = be32_to_cpu(h.seq);
	spin_lock_bh(&conn->lock);
	if (conn->state == USNIC_REL_CONN_ACTIVE && c->tx.slots &&
	    !usnic_rel_seq_before(seq, c->tx.una) &&
	    usnic_rel_seq_before(seq, c->tx.next)) {
		/* Only the window's own copy: it may have been acked since. */
		b = usnic_rel_txwin_pkt(&c->tx, seq);
		if (b && b->data == buf &&
		    usnic_rel_txwin_mark_local(&c->tx, seq)) {
			c->retx_local = true;
			marked = true;
		}
	}
	spin_unlock_bh(&conn->lock);
	return marked;
}

/*
 * Transmitting @buf failed with @err (usnic_rel_xmit_mark_local()): one
 * marked lost is resent by the retry work in a few milliseconds, if no ACK
 * comes first. Caller holds tx_lock.
 */
void usnic_rel_xmit_local_drop(struct usnic_rel_ep *ep,
			       struct usnic_rel_peer *peer,
			       const void *buf, size_t len, int err)
{
	usnic_rel_count(ep, USNIC_REL_CNT_TX_ERRORS, 1);
	if (usnic_rel_xmit_mark_local(peer, buf, len, err)) {
		usnic_rel_count(ep, USNIC_REL_CNT_TX_LOCAL_RESENDS, 1);
		usnic_rel_send_retry_later(ep);
	}
}

/*
 * Send @b, an answer numbered by usnic_rel_rdma_resp_inline(), from the
 * receive softirq of @sk, the endpoint's socket, and let go of the
 * caller's reference. No tx_lock: the endpoint's retry work may be
 * stopped already, so one that could not leave and was marked lost is
 * resent by the connection's work item instead.
 */
void usnic_rel_xmit_softirq(struct usnic_rel_ep *ep, struct sock *sk,
			    struct usnic_rel_peer *peer,
			    struct usnic_rel_txbuf *b)
{
	int ret;

	trace_usnic_rel_tx(ep->debug_id, peer->handle, b->data, b->len);
	ret = usnic_rel_socket_send_softirq(ep, sk, &peer->route, &peer->addr,
					    b->data, b->len);
	if (!ret) {
		usnic_rel_count(ep, USNIC_REL_CNT_TX_PACKETS, 1);
		usnic_rel_count(ep, USNIC_REL_CNT_TX_BYTES, b->len);
	} else {
		usnic_rel_count(ep, USNIC_REL_CNT_TX_ERRORS, 1);
		if (usnic_rel_xmit_mark_local(peer, b->data, b->len, ret)) {
			usnic_rel_count(ep, USNIC_REL_CNT_TX_LOCAL_RESENDS, 1);
			spin_lock(&peer->conn.lock);
			usnic_rel_tx_work_kick(peer);
			spin_unlock(&peer->conn.lock);
		}
	}
	usnic_rel_txbuf_put(ep, b);
}

void usnic_rel_xmit(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
		    const void *buf, size_t len)
{
	int ret;

	trace_usnic_rel_tx(ep->debug_id, peer->handle, buf, len);
	ret = usnic_rel_fault_send(ep, peer, buf, len);
	if (ret) {
		usnic_rel_xmit_local_drop(ep, peer, buf, len, ret);
		return;
	}
	usnic_rel_count(ep, USNIC_REL_CNT_TX_PACKETS, 1);
	usnic_rel_count(ep, USNIC_REL_CNT_TX_BYTES, len);
}

/* The packet type that carries an SQE's opcode. */
u8 usnic_rel_sqe_pkt_type(u8 opcode)
{
	switch (opcode) {
	case USNIC_REL_OP_SEND:
		return USNIC_REL_PKT_DATA;
	case USNIC_REL_OP_PUT:
		return USNIC_REL_PKT_PUT;
	case USNIC_REL_OP_GET:
		return USNIC_REL_PKT_GET_REQ;
	default:
		return USNIC_REL_PKT_ATOMIC_REQ;
	}
}

/*
 * A message longer than the paired peer receives (its HELLO) would be
 * dropped there: refuse it before its first packet. One the peer refused
 * part-way (its TOO_BIG status) stops. Caller holds conn->lock.
 */
static int usnic_rel_send_msg_check(struct usnic_rel_ep *ep,
				    struct usnic_rel_conn *conn,
				    struct usnic_rel_chan_conn *c,
				    const struct usnic_rel_sq_cur *cur)
{
	if (!cur->sent) {
		/* Before the pairing the limit is unknown: checked when acknowledged. */
		if (!conn->remote_incarnation ||
		    cur->sqe.len <= conn->peer_rx_limit)
			return 0;
	} else if (!c->refused.valid || c->refused.epoch != conn->epoch ||
		   c->refused.msg_id != cur->msg_id) {
		return 0;
	}
	usnic_rel_count(ep, USNIC_REL_CNT_TX_MSG_TOO_BIG, 1);
	return -EMSGSIZE;
}

/*
 * The status of a message its peer acknowledged in full. Acknowledged is not
 * delivered when it was longer than the peer receives: the pairing told us
 * its limit, and it dropped the message (sent before we knew), or it said
 * it refused it. Caller holds conn->lock.
 */
int usnic_rel_send_msg_status(struct usnic_rel_ep *ep,
			      struct usnic_rel_peer *peer, unsigned int chan,
			      const struct usnic_rel_txbuf *b)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	struct usnic_rel_data_hdr h;

	if (b->cqe.len <= conn->peer_rx_limit) {
		if (!c->refused.valid || c->refused.epoch != conn->epoch)
			return 0;
		memcpy(&h, b->data + sizeof(struct usnic_rel_hdr), sizeof(h));
		if (be32_to_cpu(h.msg_id) != c->refused.msg_id)
			return 0;
	}
	usnic_rel_count(ep, USNIC_REL_CNT_TX_MSG_TOO_BIG, 1);
	return -EMSGSIZE;
}

/*
 * The peer refused our message @msg_id on @chan as too long: its send
 * fails when acknowledged, and what is left of it is not sent. Caller
 * holds conn->lock.
 */
void usnic_rel_send_msg_refused(struct usnic_rel_ep *ep,
				struct usnic_rel_peer *peer, unsigned int chan,
				u32 msg_id)
{
	struct usnic_rel_chan_conn *c = &peer->conn.chan[chan];

	c->refused.valid = true;
	c->refused.epoch = peer->conn.epoch;
	c->refused.msg_id = msg_id;
	usnic_rel_count(ep, USNIC_REL_CNT_TX_REFUSED_TOO_BIG, 1);
}

/*
 * Put the next packet of the parked send on the wire: a message or PUT
 * fragment, or a GET or atomic request. Returns 0 when the send is all out,
 * -ENOSPC when the window is full, or the completion status of a send that
 * cannot go out.
 */
static int usnic_rel_send_packet(struct usnic_rel_ep *ep,
				 struct usnic_rel_peer *peer, unsigned int chan,
				 struct usnic_rel_sq_cur *cur,
				 struct usnic_rel_tx_batch *batch)
{
	const struct usnic_rel_sqe *sqe = &cur->sqe;
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	u8 type = usnic_rel_sqe_pkt_type(sqe->opcode);
	bool has_payload = type == USNIC_REL_PKT_DATA || type == USNIC_REL_PKT_PUT;
	size_t hlen = usnic_rel_wire_hdr_len(type);
	u32 frag = 0, advance = sqe->len;
	struct usnic_rel_txbuf *b;
	struct usnic_rel_pkt pkt;
	const u8 *payload;
	int ret = 0;
	u32 seq;

	if (has_payload) {
		frag = min(sqe->len - cur->sent,
			   usnic_rel_rdma_frag_max(ep, chan, type));
		advance = frag;
	}
	/*
	 * A slot before the packet: when one of the two allocations fails,
	 * the retry keeps the other (usnic_rel_conn_tx_grow()).
	 */
	ret = usnic_rel_conn_tx_grow(peer, chan);
	if (ret)
		return ret;
	b = usnic_rel_fault_nomem(ep) ? NULL :
	    usnic_rel_txbuf_alloc(ep, hlen + frag, GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	if (sqe->flags & USNIC_REL_SQE_INLINE)
		payload = sqe->inline_data;
	else
		payload = ep->staging + sqe->staging_off;
	/* Userspace may scribble on staging meanwhile; only its own data suffers. */
	if (frag)
		memcpy(b->data + hlen, payload + cur->sent, frag);

relock:
	spin_lock_bh(&conn->lock);
	/* The target refused a PUT early, or the peer died: all said. */
	if (usnic_rel_rdma_finished(cur))
		goto unlock;
	if (conn->state != USNIC_REL_CONN_ACTIVE) {
		ret = -ECANCELED;
		if (conn->state == USNIC_REL_CONN_DEAD) {
			/* Fails at once, but asks whether the peer is back. */
			usnic_rel_hs_start(peer);
			ret = -EHOSTUNREACH;
		}
		goto unlock_abort;
	}
	if (cur->sent && cur->epoch != conn->epoch) {
		/* Its first part went to a sequence space that ended. */
		ret = -ECONNRESET;
		goto unlock_abort;
	}
	if (type == USNIC_REL_PKT_DATA) {
		ret = usnic_rel_send_msg_check(ep, conn, c, cur);
		if (ret)
			goto unlock_abort;
	}
	/* New data waits for the congestion window and for repairs. */
	ret = -ENOSPC;
	if (usnic_rel_txwin_may_send(&c->tx))
		ret = usnic_rel_txwin_push(&c->tx, ktime_get_ns(), &seq);
	if (ret == -ENOBUFS) {
		/* Not after the growth above, under tx_lock; just in case. */
		spin_unlock_bh(&conn->lock);
		ret = usnic_rel_conn_tx_grow(peer, chan);
		if (!ret)
			goto relock;
		usnic_rel_txbuf_put(ep, b);
		return ret;
	}
	if (ret)
		goto unlock;
	if (!cur->sent)
		cur->epoch = conn->epoch;
	usnic_rel_pkt_init(ep, peer, &pkt, type, chan);
	pkt.seq = seq;
	pkt.payload_len = frag;
	if (type == USNIC_REL_PKT_DATA) {
		if (!cur->sent)
			cur->msg_id = seq;
		pkt.data.msg_id = cur->msg_id;
		pkt.data.frag_offset = cur->sent;
		pkt.data.msg_len = sqe->len;
		pkt.data.imm = sqe->imm;
	} else {
		usnic_rel_rdma_fill_request(peer, chan, cur, &pkt, advance);
	}
	usnic_rel_ack_fill(peer, chan, &pkt);
	usnic_rel_wire_build(b->data, hlen, &pkt);
	cur->sent += advance;
	/* A message completes once acknowledged; one-sided ops by their answer. */
	if (type == USNIC_REL_PKT_DATA && cur->sent == sqe->len) {
		b->completes = true;
		memset(&b->cqe, 0, sizeof(b->cqe));
		b->cqe.user_ctx = sqe->user_ctx;
		b->cqe.imm = sqe->imm;
		b->cqe.len = sqe->len;
		b->cqe.peer = sqe->peer;
		b->cqe.opcode = sqe->opcode;
		b->cqe.channel = chan;
	}
	/* The window takes the allocation's reference; the batch gets its own. */
	usnic_rel_txwin_set_pkt(&c->tx, seq, b);
	usnic_rel_rtx_timer_arm(peer, false);
	if (!conn->remote_incarnation) {
		/* Held in the window until the handshake pairs the peer. */
		usnic_rel_hs_start(peer);
		spin_unlock_bh(&conn->lock);
		return cur->sent == sqe->len ? 0 : -EAGAIN;
	}
	refcount_inc(&b->ref);
	spin_unlock_bh(&conn->lock);

	usnic_rel_batch_add(ep, peer, batch, b);
	/* First transmissions only: retransmits and ACKs have their own. */
	usnic_rel_count(ep, USNIC_REL_CNT_TX_DATA_PACKETS, 1);
	return cur->sent == sqe->len ? 0 : -EAGAIN;

unlock_abort:
	/* The send path completes it, so the connection must not. */
	usnic_rel_rdma_cur_unlink(cur);
unlock:
	spin_unlock_bh(&conn->lock);
	usnic_rel_txbuf_put(ep, b);
	return ret;
}

/*
 * Send what the window allows of @cur to @peer. Returns 0 when it is all
 * out (or the connection completed it already), -ENOSPC when the window is
 * full, -ENOMEM when a packet could not be allocated (nothing was lost: try
 * again), or the status to complete it with.
 */
static int usnic_rel_send_cur(struct usnic_rel_ep *ep,
			      struct usnic_rel_peer *peer, unsigned int chan,
			      struct usnic_rel_sq_cur *cur)
{
	struct usnic_rel_tx_batch batch;
	int ret;

	batch.n = 0;
	batch.bytes = 0;
	do {
		ret = usnic_rel_send_packet(ep, peer, chan, cur, &batch);
	} while (ret == -EAGAIN);
	usnic_rel_batch_flush(ep, peer, &batch);
	return ret;
}

/* Memory was short: try parked sends and owed answers again soon, not in a loop. */
void usnic_rel_send_retry_later(struct usnic_rel_ep *ep)
{
	queue_delayed_work(usnic_rel_wq, &ep->tx_retry,
			   msecs_to_jiffies(USNIC_REL_TX_RETRY_MS));
}

/* Complete a send the send path gives up, in the CQ slot it reserved. */
static void usnic_rel_send_fail(struct usnic_rel_ep *ep, unsigned int chan,
				const struct usnic_rel_sqe *sqe, int status)
{
	struct usnic_rel_cqe cqe = {
		.user_ctx = sqe->user_ctx,
		.imm = sqe->imm,
		.status = status,
		.peer = sqe->peer,
		.opcode = sqe->opcode,
		.channel = chan,
	};

	usnic_rel_cq_post_reserved(ep, &cqe);
	usnic_rel_ctx_wake(ep->ctx);
}

/*
 * Park @cur, taken from the ring, behind the sends already parked on its
 * peer's channel. Its copy takes its one-sided record along. Returns false
 * when there is no memory for the copy. Caller holds tx_lock.
 */
static bool usnic_rel_send_park(struct usnic_rel_ep *ep,
				struct usnic_rel_peer *peer, unsigned int chan,
				struct usnic_rel_sq_cur *cur)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	struct usnic_rel_sq_cur *p;

	p = usnic_rel_fault_nomem(ep) ? NULL :
	    kmemdup(cur, sizeof(*cur), GFP_KERNEL_ACCOUNT);
	if (!p)
		return false;
	p->active = false;
	spin_lock_bh(&conn->lock);
	list_add_tail(&p->node, &c->sendq);
	WRITE_ONCE(c->nr_parked, c->nr_parked + 1);
	/*
	 * The ACK that made room may have come before the send was parked
	 * and found nothing to resume: look again under the lock.
	 */
	if (conn->state != USNIC_REL_CONN_ACTIVE ||
	    usnic_rel_txwin_may_send(&c->tx) || c->tx.nr_lost)
		usnic_rel_tx_work_kick(peer);
	spin_unlock_bh(&conn->lock);
	usnic_rel_count(ep, USNIC_REL_CNT_TX_PARKED, 1);
	cur->op = NULL;
	cur->active = false;
	return true;
}

/*
 * Send the SQE just taken from @chan's ring: at once when nothing waits on
 * its peer's channel and the window allows, else park it. Returns 0 when it
 * is out or parked (or the connection completed it), -EAGAIN when it could
 * not be parked and stays in @cur, or the status to complete it with.
 */
static int usnic_rel_send_sqe(struct usnic_rel_ep *ep, unsigned int chan,
			      struct usnic_rel_sq_cur *cur)
{
	struct usnic_rel_peer *peer;
	int ret = -ENOSPC;

	/* Removal waits for tx_lock, which we hold: the peer stays. */
	rcu_read_lock();
	peer = xa_load(&ep->peers, cur->sqe.peer);
	rcu_read_unlock();
	if (!peer)
		/* Its removal completed an op already handed over. */
		return usnic_rel_rdma_finished(cur) ? 0 : -EINVAL;
	/* Sends to one peer and channel leave in ring order. */
	if (!peer->conn.chan[chan].nr_parked)
		ret = usnic_rel_send_cur(ep, peer, chan, cur);
	if (ret != -ENOSPC && ret != -ENOMEM)
		return ret;
	if (ret == -ENOMEM)
		usnic_rel_send_retry_later(ep);
	if (usnic_rel_send_park(ep, peer, chan, cur))
		return 0;
	usnic_rel_send_retry_later(ep);
	return -EAGAIN;
}

/*
 * Send what is parked on @chan of @peer, oldest first, until the window is
 * full or memory short. Caller holds tx_lock.
 */
static void usnic_rel_send_parked_chan(struct usnic_rel_ep *ep,
				       struct usnic_rel_peer *peer,
				       unsigned int chan)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	struct usnic_rel_sq_cur *p;
	int ret;

	while ((p = list_first_entry_or_null(&c->sendq, struct usnic_rel_sq_cur,
					     node))) {
		if (usnic_rel_pack_parked(ep, peer, chan)) {
			cond_resched();
			continue;
		}
		ret = usnic_rel_send_cur(ep, peer, chan, p);
		if (ret == -ENOSPC)
			return;
		if (ret == -ENOMEM) {
			usnic_rel_send_retry_later(ep);
			return;
		}
		spin_lock_bh(&conn->lock);
		list_del(&p->node);
		WRITE_ONCE(c->nr_parked, c->nr_parked - 1);
		spin_unlock_bh(&conn->lock);
		if (ret) {
			usnic_rel_send_fail(ep, chan, &p->sqe, ret);
			usnic_rel_rdma_cur_drop(p);
		}
		kfree(p);
		cond_resched();
	}
}

void usnic_rel_send_parked(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer)
{
	unsigned int chan;

	lockdep_assert_held(&ep->tx_lock);
	for (chan = 0; chan < USNIC_REL_NR_CHANS; chan++)
		usnic_rel_send_parked_chan(ep, peer, chan);
}

/*
 * The peer is being removed and no sender can reach it any more: complete
 * what is parked on it with @status. Caller holds conn->lock, after
 * usnic_rel_conn_fail_all() completed the ops the connection held.
 */
void usnic_rel_send_parked_cancel(struct usnic_rel_ep *ep,
				  struct usnic_rel_peer *peer, int status)
{
	struct usnic_rel_sq_cur *p, *n;
	unsigned int chan;

	for (chan = 0; chan < USNIC_REL_NR_CHANS; chan++) {
		struct usnic_rel_chan_conn *c = &peer->conn.chan[chan];

		list_for_each_entry_safe(p, n, &c->sendq, node) {
			list_del(&p->node);
			c->nr_parked--;
			if (!usnic_rel_rdma_finished(p)) {
				usnic_rel_rdma_cur_unlink(p);
				usnic_rel_send_fail(ep, chan, &p->sqe, status);
				usnic_rel_rdma_cur_drop(p);
			}
			kfree(p);
		}
	}
}

/* Endpoint teardown: nothing is posted any more, just free. */
void usnic_rel_send_parked_free(struct usnic_rel_chan_conn *c)
{
	struct usnic_rel_sq_cur *p, *n;

	list_for_each_entry_safe(p, n, &c->sendq, node) {
		list_del(&p->node);
		/* usnic_rel_rdma_free_chan() let go of every op. */
		kfree(p->op);
		kfree(p);
	}
	c->nr_parked = 0;
}

static void usnic_rel_tx_retry(struct work_struct *work)
{
	struct usnic_rel_ep *ep = container_of(to_delayed_work(work),
					       struct usnic_rel_ep, tx_retry);
	struct usnic_rel_peer *peer;
	unsigned long handle;

	mutex_lock(&ep->tx_lock);
	if (!ep->dead) {
		/* Removal waits for tx_lock, which we hold: the peers stay. */
		xa_for_each(&ep->peers, handle, peer) {
			if (usnic_rel_rdma_resp_pending(&peer->conn))
				usnic_rel_rdma_respond(ep, peer);
			if (usnic_rel_conn_parked(&peer->conn))
				usnic_rel_send_parked(ep, peer);
			/* Packets the host dropped (usnic_rel_xmit_local_drop). */
			if (usnic_rel_conn_local_lost(&peer->conn))
				usnic_rel_tx_work_kick(peer);
		}
		if (READ_ONCE(ep->sq_blocked))
			usnic_rel_drain(ep, USNIC_REL_DB_SQ_CMD |
					USNIC_REL_DB_SQ_DATA);
	}
	mutex_unlock(&ep->tx_lock);
}

void usnic_rel_send_init(struct usnic_rel_ep *ep)
{
	INIT_DELAYED_WORK(&ep->tx_retry, usnic_rel_tx_retry);
}

/* After ep->dead is set under tx_lock: nothing queues the retry again. */
void usnic_rel_send_stop(struct usnic_rel_ep *ep)
{
	cancel_delayed_work_sync(&ep->tx_retry);
}

/*
 * Promise a send a CQ slot if at least @spare others stay free; false when
 * the CQ has no such room.
 */
bool usnic_rel_cq_reserve_spare(struct usnic_rel_ep *ep, u32 spare)
{
	bool ok;

	spin_lock_bh(&ep->rx_lock);
	ok = usnic_rel_cq_space(ep) > spare;
	if (ok)
		ep->cq_reserved++;
	spin_unlock_bh(&ep->rx_lock);
	return ok;
}

/*
 * Consume one send ring. Returns SQEs consumed, or -EIO if the ring or the
 * CQ is corrupt. Stops early when the CQ has no room for another completion
 * or when a send could not be parked for want of memory (ep->sq_blocked).
 */
static int usnic_rel_drain_sq(struct usnic_rel_ep *ep, unsigned int chan)
{
	struct usnic_rel_ring *ring = &ep->sq[chan];
	struct usnic_rel_sq_cur *cur = &ep->sq_cur[chan];
	u32 done = 0;
	int ret;

	for (;;) {
		if (!cur->active) {
			if (!usnic_rel_ring_avail(ep, ring))
				break;
			/* A send completes into a CQ slot nobody else can take. */
			if (!usnic_rel_cq_reserve_spare(ep, 0)) {
				if (READ_ONCE(ep->cq.corrupt))
					return -EIO;
				break;
			}
			memcpy(&cur->sqe, ring->desc +
			       (size_t)(ring->kidx & (ring->entries - 1)) *
			       sizeof(cur->sqe), sizeof(cur->sqe));
			/* Our copy is taken: userspace may reuse the slot. */
			smp_store_release(&ring->hdr->head, ++ring->kidx);
			done++;
			ret = usnic_rel_sqe_check(ep, chan, &cur->sqe);
			if (ret) {
				usnic_rel_count(ep, USNIC_REL_CNT_BAD_SQE, 1);
				usnic_rel_send_fail(ep, chan, &cur->sqe, ret);
				continue;
			}
			cur->sent = 0;
			if (cur->sqe.opcode == USNIC_REL_OP_SEND) {
				ret = usnic_rel_pack_send(ep, chan, &cur->sqe);
				if (ret) {
					done += ret;
					cond_resched();
					continue;
				}
			} else {
				ret = usnic_rel_rdma_start(ep, cur);
				if (ret) {
					usnic_rel_send_fail(ep, chan, &cur->sqe, ret);
					continue;
				}
			}
			cur->active = true;
		}
		ret = usnic_rel_send_sqe(ep, chan, cur);
		if (ret == -EAGAIN) {
			WRITE_ONCE(ep->sq_blocked, true);
			break;
		}
		cur->active = false;
		if (ret) {
			if (ret == -EINVAL)
				usnic_rel_count(ep, USNIC_REL_CNT_BAD_SQE, 1);
			usnic_rel_send_fail(ep, chan, &cur->sqe, ret);
			usnic_rel_rdma_cur_drop(cur);
		}
		cond_resched();
	}
	if (ring->corrupt)
		return -EIO;
	return done;
}

/* Drain the named send rings, command channel first. Caller holds tx_lock. */
static int usnic_rel_drain(struct usnic_rel_ep *ep, u32 rings)
{
	int chan, ret, done = 0;

	lockdep_assert_held(&ep->tx_lock);
	WRITE_ONCE(ep->sq_blocked, false);
	for (chan = 0; chan < USNIC_REL_NR_CHANS; chan++) {
		if (!(rings & (1U << chan)))
			continue;
		ret = usnic_rel_drain_sq(ep, chan);
		if (ret < 0)
			return ret;
		done += ret;
	}
	return done;
}

/*
 * DOORBELL: returns SQEs consumed, or -EIO if a named ring or the CQ is
 * corrupt. USNIC_REL_DB_RX retries deliveries that waited for buffers.
 */
int usnic_rel_doorbell(struct usnic_rel_ep *ep, u32 rings)
{
	int ret;

	/* Where the connections' work items send from (usnic_rel_tx_work_kick). */
	WRITE_ONCE(ep->tx_cpu, raw_smp_processor_id());
	mutex_lock(&ep->tx_lock);
	if (ep->dead) {
		mutex_unlock(&ep->tx_lock);
		return -EINVAL;
	}
	if (rings & USNIC_REL_DB_RX)
		usnic_rel_rx_backlog_all(ep);
	ret = usnic_rel_drain(ep, rings & (USNIC_REL_DB_SQ_CMD | USNIC_REL_DB_SQ_DATA));
	mutex_unlock(&ep->tx_lock);
	return ret;
}

/*
 * The newest packet in flight not known received, taken for a tail-loss
 * probe. Caller holds conn->lock.
 */
static struct usnic_rel_txbuf *usnic_rel_probe_pick(struct usnic_rel_chan_conn *c,
						    u64 now)
{
	u32 seq;

	for (seq = c->tx.next; seq != c->tx.una; seq--) {
		u32 slot = usnic_rel_txwin_slot(&c->tx, seq - 1);
		struct usnic_rel_txbuf *b = c->tx.pkts[slot];

		if (c->tx.slots[slot].sacked || !b)
			continue;
		usnic_rel_txwin_retransmitted(&c->tx, seq - 1, now);
		refcount_inc(&b->ref);
		return b;
	}
	return NULL;
}

/*
 * Turn what the timer or an ACK found into packets presumed lost: out of
 * the pipe until resent. Returns whether there was a new finding. Caller
 * holds conn->lock.
 */
static bool usnic_rel_retx_mark(struct usnic_rel_chan_conn *c)
{
	/* The host's own drops are marked per packet: no finding. */
	c->retx_local = false;
	if (!c->retx_all && !c->retx_pending)
		return false;
	if (c->retx_all)
		usnic_rel_txwin_mark_lost(&c->tx, c->tx.next,
					  c->retx_sent_before);
	if (c->retx_pending)
		usnic_rel_txwin_mark_lost(&c->tx, usnic_rel_txwin_lost_end(&c->tx),
					  U64_MAX);
	c->cc_lost_by_timeout = c->retx_all;
	c->cc_lost_held = c->retx_held;
	c->retx_all = false;
	c->retx_held = false;
	c->retx_pending = false;
	return true;
}

/*
 * Resend what the timer or an ACK found lost on @chan, a batch at a time,
 * while the pipe is below the congestion window (RFC 6675); the first one
 * of a new finding goes regardless, as a fast retransmit or a timeout's
 * retransmission does. Returns true when more may go at once.
 */
static bool usnic_rel_retransmit(struct usnic_rel_ep *ep,
				 struct usnic_rel_peer *peer, unsigned int chan)
{
	struct usnic_rel_txbuf *batch[USNIC_REL_RETX_BATCH];
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	struct usnic_rel_txwin *w = &c->tx;
	u64 now = ktime_get_ns();
	unsigned int n = 0, nr_local = 0, i;
	bool more = false, force, local;
	u32 seq;

	spin_lock_bh(&conn->lock);
	if (conn->state == USNIC_REL_CONN_ACTIVE && c->retx_probe &&
	    !c->retx_all && !c->retx_pending) {
		struct usnic_rel_txbuf *b = usnic_rel_probe_pick(c, now);

		if (b)
			batch[n++] = b;
		usnic_rel_count(ep, USNIC_REL_CNT_RETX_PROBE, n);
	}
	c->retx_probe = false;
	if (conn->state == USNIC_REL_CONN_ACTIVE) {
		unsigned int first = n;

		force = usnic_rel_retx_mark(c);
		/* The timer only decides; its window collapses are counted here. */
		usnic_rel_count(ep, USNIC_REL_CNT_CWND_TIMEOUTS,
				w->cc.rto_episodes - c->cc_timeouts_counted);
		c->cc_timeouts_counted = w->cc.rto_episodes;
		seq = w->una;
		while (n < USNIC_REL_RETX_BATCH &&
		       usnic_rel_txwin_next_lost(w, &seq) &&
		       (force || usnic_rel_cwnd_allows(&w->cc,
						       usnic_rel_txwin_pipe(w)))) {
			struct usnic_rel_txbuf *b = usnic_rel_txwin_pkt(w, seq);

			force = false;
			local = usnic_rel_txwin_lost_locally(w, seq);
			if (c->cc_lost_held || local) {
				usnic_rel_txwin_sent_late(w, seq, now,
							  c->cc_lost_held);
			} else {
				usnic_rel_txwin_retransmitted(w, seq, now);
				trace_usnic_rel_retransmit(ep->debug_id, peer->handle,
							   chan, seq,
							   c->cc_lost_by_timeout);
			}
			seq++;
			if (!b)
				continue;
			nr_local += local;
			refcount_inc(&b->ref);
			batch[n++] = b;
		}
		/* The host's own drops counted when they happened. */
		if (c->cc_lost_held) {
			usnic_rel_count(ep, USNIC_REL_CNT_TX_DATA_PACKETS,
					n - first - nr_local);
		} else {
			usnic_rel_count(ep, c->cc_lost_by_timeout ?
					USNIC_REL_CNT_RETX_TIMEOUT :
					USNIC_REL_CNT_RETX_FAST,
					n - first - nr_local);
			*(c->cc_lost_by_timeout ? &c->retx_timeout :
			  &c->retx_fast) += n - first - nr_local;
		}
		more = n == USNIC_REL_RETX_BATCH && w->nr_lost;
	}
	spin_unlock_bh(&conn->lock);

	for (i = 0; i < n; i++) {
		usnic_rel_xmit(ep, peer, batch[i]->data, batch[i]->len);
		usnic_rel_txbuf_put(ep, batch[i]);
	}
	if (more) {
		/*
		 * A resend the host dropped again (send buffer still full) is
		 * marked again: looping would spin on it under tx_lock. The
		 * retry work, or the next ACK, sends it once there is room.
		 */
		spin_lock_bh(&conn->lock);
		more = !c->retx_local;
		spin_unlock_bh(&conn->lock);
	}
	return more;
}

static void usnic_rel_send_acks(struct usnic_rel_ep *ep,
				struct usnic_rel_peer *peer)
{
	u8 buf[USNIC_REL_ACK_MAX_LEN];
	struct usnic_rel_conn *conn = &peer->conn;
	unsigned int chan;
	size_t len;

	for (chan = 0; chan < USNIC_REL_NR_CHANS; chan++) {
		spin_lock_bh(&conn->lock);
		len = 0;
		if (conn->state != USNIC_REL_CONN_REMOVED &&
		    conn->chan[chan].ack_pending)
			len = usnic_rel_ack_build(ep, peer, chan, buf, sizeof(buf));
		spin_unlock_bh(&conn->lock);
		if (len) {
			usnic_rel_xmit(ep, peer, buf, len);
			usnic_rel_count(ep, USNIC_REL_CNT_ACKS_STANDALONE, 1);
		}
	}
}

/*
 * The endpoint is going away: send the ACKs still owed, so that peers whose
 * last messages arrived complete them instead of retrying into silence.
 * Caller holds tx_lock, before marking the endpoint dead.
 */
void usnic_rel_send_final_acks(struct usnic_rel_ep *ep)
{
	struct usnic_rel_peer *peer;
	unsigned long handle;

	lockdep_assert_held(&ep->tx_lock);
	xa_for_each(&ep->peers, handle, peer)
		usnic_rel_send_acks(ep, peer);
}

/*
 * The connection's work item: ACKs first (they unblock the peer), then
 * retransmissions, answers owed, the sends parked on this peer, and the
 * send rings if they stopped.
 */
void usnic_rel_conn_flush(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer)
{
	unsigned int chan;
	bool more;

	mutex_lock(&ep->tx_lock);
	if (ep->dead)
		goto out;
	usnic_rel_hs_send(ep, peer);
	usnic_rel_send_acks(ep, peer);
	do {
		more = false;
		for (chan = 0; chan < USNIC_REL_NR_CHANS; chan++)
			more |= usnic_rel_retransmit(ep, peer, chan);
		cond_resched();
	} while (more);
	usnic_rel_rdma_respond(ep, peer);
	usnic_rel_send_parked(ep, peer);
	if (READ_ONCE(ep->sq_blocked))
		usnic_rel_drain(ep, USNIC_REL_DB_SQ_CMD | USNIC_REL_DB_SQ_DATA);
	usnic_rel_rx_backlog(ep, peer);
out:
	mutex_unlock(&ep->tx_lock);
}
