// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: emulated RDMA. PUT, GET and atomics travel as sequenced packets
 * of a channel, so they inherit its reliability and ordering. The target's
 * kernel executes each request as it is delivered in order, in the receive
 * path, against the memory registration its rkey names: the target process
 * takes no part. Every request gets exactly one final answer (a PUT's
 * STATUS, a GET's last GET_RESP, an ATOMIC_RESP, or an error STATUS), queued
 * per channel in request order and sent by the connection's work item. So
 * at the origin, a response can only be for the oldest operation of its
 * channel: anything else is forged and dropped.
 *
 * Except for quiet PUTs (USNIC_REL_SQE_QUIET): one applied in full is not
 * answered by itself but counted, and the channel's next answer carries the
 * count (wire.h). So an answer with count n is for the op after the n
 * oldest, each of which must be a quiet PUT sent in full: they complete
 * first, with success, since the target applied them before the request
 * it answers. A refused quiet PUT gets its error STATUS as any op does.
 *
 * The common case skips the work item: an answer that the request just
 * queued, the oldest owed on its channel, in one packet, is numbered in the
 * receive softirq under conn->lock and sent from there once the lock is
 * dropped (usnic_rel_rdma_resp_inline(), usnic_rel_xmit_softirq()), with
 * the ACK of the request in it. It is a sequenced packet of the send
 * window like any other (resent on loss); it takes no tx_lock, so it never
 * grows the window (an allocation that may sleep), never meets fault
 * injection (skipped while any fault is set up), and uses the peer's route
 * under its own lock (xmit.c). Anything else is left to the work item.
 *
 * A PUT completes at the origin when the target says it was applied, a GET
 * when its last byte landed in the staging area, an atomic when the old
 * value came back: all remote completions.
 */
#include <linux/slab.h>

#include "conn.h"
#include "rdma_check.h"
#include "usnic_rel.h"
#include "wire.h"

/* Payload bytes of one packet of @type on @chan: its header may be longer. */
u32 usnic_rel_rdma_frag_max(struct usnic_rel_ep *ep, unsigned int chan, u8 type)
{
	return ep->mtu[chan] + usnic_rel_wire_hdr_len(USNIC_REL_PKT_DATA) -
	       usnic_rel_wire_hdr_len(type);
}

/* The send path takes a checked one-sided SQE: give it its record. */
int usnic_rel_rdma_start(struct usnic_rel_ep *ep, struct usnic_rel_sq_cur *cur)
{
	const struct usnic_rel_sqe *sqe = &cur->sqe;
	struct usnic_rel_rdma_op *op;

	op = kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT);
	if (!op)
		return -ENOMEM;
	op->req_type = usnic_rel_sqe_pkt_type(sqe->opcode);
	op->in_sq = true;
	op->quiet = sqe->opcode == USNIC_REL_OP_PUT &&
		    sqe->flags & USNIC_REL_SQE_QUIET;
	op->len = sqe->len;
	op->staging_off = sqe->staging_off;
	op->cqe.user_ctx = sqe->user_ctx;
	op->cqe.peer = sqe->peer;
	op->cqe.opcode = sqe->opcode;
	cur->op = op;
	usnic_rel_count(ep, USNIC_REL_CNT_RDMA_STARTED, 1);
	return 0;
}

/*
 * True when the connection already completed the op the send path holds
 * (an early error STATUS, the peer's death or reset): stop sending it, post
 * nothing. Caller holds conn->lock, or the peer is gone.
 */
bool usnic_rel_rdma_finished(struct usnic_rel_sq_cur *cur)
{
	if (!cur->op || !cur->op->done)
		return false;
	kfree(cur->op);
	cur->op = NULL;
	return true;
}

/*
 * The send path completes the op itself: forget it. Only for an op the
 * connection does not know (never linked, or unlinked by
 * usnic_rel_rdma_cur_unlink()), so that nothing completes it twice.
 */
void usnic_rel_rdma_cur_drop(struct usnic_rel_sq_cur *cur)
{
	if (WARN_ON_ONCE(cur->op && cur->op->linked))
		return;
	kfree(cur->op);
	cur->op = NULL;
}

/*
 * The send path gives up an op that is partly out while the connection
 * still lists it (it is being removed): take it back, the send path
 * completes it. Caller holds conn->lock.
 */
void usnic_rel_rdma_cur_unlink(struct usnic_rel_sq_cur *cur)
{
	if (cur->op && cur->op->linked) {
		list_del(&cur->op->node);
		cur->op->linked = false;
	}
}

/*
 * Fill the type header of the next request packet (sequence already in
 * pkt->seq) and hand the op to the connection once its last packet is
 * numbered. Caller holds conn->lock.
 */
void usnic_rel_rdma_fill_request(struct usnic_rel_peer *peer, unsigned int chan,
				 struct usnic_rel_sq_cur *cur,
				 struct usnic_rel_pkt *pkt, u32 frag)
{
	const struct usnic_rel_sqe *sqe = &cur->sqe;
	struct usnic_rel_rdma_op *op = cur->op;

	if (!op->linked) {
		op->op_id = pkt->seq;
		op->cqe.channel = chan;
		op->linked = true;
		list_add_tail(&op->node, &peer->conn.chan[chan].ops);
	}
	switch (op->req_type) {
	case USNIC_REL_PKT_PUT:
		pkt->put.rkey = sqe->rkey;
		pkt->put.offset = sqe->remote_off + cur->sent;
		pkt->put.op_id = op->op_id;
		pkt->put.frag_offset = cur->sent;
		pkt->put.op_len = sqe->len;
		pkt->put.flags = op->quiet ? USNIC_REL_PUT_F_QUIET : 0;
		break;
	case USNIC_REL_PKT_GET_REQ:
		pkt->get_req.rkey = sqe->rkey;
		pkt->get_req.offset = sqe->remote_off;
		pkt->get_req.op_id = op->op_id;
		pkt->get_req.length = sqe->len;
		break;
	default:
		pkt->atomic_req.rkey = sqe->rkey;
		pkt->atomic_req.offset = sqe->remote_off;
		pkt->atomic_req.op_id = op->op_id;
		pkt->atomic_req.op = sqe->atomic.atomic_op;
		pkt->atomic_req.size = sqe->atomic.atomic_size;
		if (sqe->atomic.atomic_op == USNIC_REL_ATOMIC_FADD) {
			pkt->atomic_req.operand = sqe->atomic.operand[0];
		} else {
			pkt->atomic_req.operand = sqe->atomic.operand[1];
			pkt->atomic_req.compare = sqe->atomic.operand[0];
		}
		break;
	}
	if (cur->sent + frag == sqe->len) {
		/* From now on only the connection completes it. */
		op->in_sq = false;
		cur->op = NULL;
	}
}

/* What an origin sees of the target's refusal. */
static int usnic_rel_rdma_errno(u16 status)
{
	switch (status) {
	case USNIC_REL_ST_OK:
		return 0;
	case USNIC_REL_ST_BAD_RKEY:
		return -ENOKEY;
	case USNIC_REL_ST_OUT_OF_BOUNDS:
		return -ERANGE;
	case USNIC_REL_ST_ACCESS:
		return -EPERM;
	case USNIC_REL_ST_UNALIGNED:
		return -EINVAL;
	case USNIC_REL_ST_TOO_BIG:
		return -EMSGSIZE;
	default:
		return -ENOMEM;
	}
}

/* Complete @op in the CQ slot its SQE reserved. Caller holds conn->lock. */
static void usnic_rel_rdma_complete(struct usnic_rel_ep *ep,
				    struct usnic_rel_rdma_op *op, int status)
{
	list_del(&op->node);
	op->linked = false;
	op->cqe.status = status;
	op->cqe.len = status ? 0 : op->len;
	if (status)
		usnic_rel_count(ep, USNIC_REL_CNT_RDMA_FAILED, 1);
	usnic_rel_cq_post_reserved(ep, &op->cqe);
	usnic_rel_ctx_wake(ep->ctx);
	if (op->in_sq)
		op->done = true;
	else
		kfree(op);
}

/*
 * The op a response with @quiet quiet PUTs before it answers: the one after
 * the @quiet oldest of @c, each of which must be a quiet PUT whose packets
 * all left (the target counts one only at its last fragment). NULL when
 * the channel does not hold that: the response is forged.
 */
static struct usnic_rel_rdma_op *
usnic_rel_rdma_after_quiet(struct usnic_rel_chan_conn *c, u32 quiet)
{
	struct usnic_rel_rdma_op *op;

	list_for_each_entry(op, &c->ops, node) {
		if (!quiet--)
			return op;
		if (!op->quiet || op->in_sq)
			return NULL;
	}
	return NULL;
}

/* Does @pkt answer @op (or its next GET_RESP fragment)? */
static bool usnic_rel_rdma_answers(const struct usnic_rel_rdma_op *op,
				   const struct usnic_rel_pkt *pkt)
{
	switch (pkt->type) {
	case USNIC_REL_PKT_GET_RESP:
		return op->req_type == USNIC_REL_PKT_GET_REQ &&
		       op->op_id == pkt->get_resp.op_id &&
		       op->len == pkt->get_resp.op_len &&
		       op->received == pkt->get_resp.frag_offset;
	case USNIC_REL_PKT_ATOMIC_RESP:
		return op->req_type == USNIC_REL_PKT_ATOMIC_REQ &&
		       op->op_id == pkt->atomic_resp.op_id;
	default:
		/* The parser let OK through only for a PUT. */
		return op->req_type == pkt->status.req_type &&
		       op->op_id == pkt->status.op_id;
	}
}

/*
 * A response from the target: it answers the oldest op of its channel that
 * is not a quiet PUT it says it applied.
 */
static void usnic_rel_rdma_rx_response(struct usnic_rel_ep *ep,
				       struct usnic_rel_chan_conn *c,
				       const struct usnic_rel_pkt *pkt,
				       const struct sk_buff *skb)
{
	struct usnic_rel_rdma_op *op, *prev;
	u32 quiet = pkt->quiet;

	op = usnic_rel_rdma_after_quiet(c, quiet);
	if (!op || !usnic_rel_rdma_answers(op, pkt)) {
		usnic_rel_count(ep, USNIC_REL_CNT_RX_BAD_HEADER, 1);
		return;
	}
	while (quiet--) {
		prev = list_first_entry(&c->ops, struct usnic_rel_rdma_op, node);
		usnic_rel_rdma_complete(ep, prev, 0);
	}
	if (pkt->quiet)
		usnic_rel_count(ep, USNIC_REL_CNT_RDMA_QUIET_DONE, pkt->quiet);
	switch (pkt->type) {
	case USNIC_REL_PKT_GET_RESP:
		/* staging_off + len was checked against the staging size. */
		usnic_rel_rx_copy(skb, pkt, 0,
				  ep->staging + op->staging_off + op->received,
				  pkt->payload_len);
		op->received += pkt->payload_len;
		if (op->received == op->len)
			usnic_rel_rdma_complete(ep, op, 0);
		return;
	case USNIC_REL_PKT_ATOMIC_RESP:
		op->cqe.imm = pkt->atomic_resp.old;
		usnic_rel_rdma_complete(ep, op, 0);
		return;
	default:
		usnic_rel_rdma_complete(ep, op,
					usnic_rel_rdma_errno(pkt->status.status));
		return;
	}
}

/*
 * A peer that named this many unknown rkeys in a row is guessing: from then
 * on every one-sided request it sends is refused as if its key were unknown,
 * valid keys included, so a scan learns nothing more. Each refusal is one
 * small STATUS answering one request (no amplification), and the origin's
 * operations still complete. The count survives connection resets; it
 * ends with the peer's AV entry.
 */
#define USNIC_REL_BAD_RKEY_LIMIT	64

/*
 * Find the registration a request names and check its rights and range.
 * Returns a wire status; on USNIC_REL_ST_OK *@mrp holds a reference.
 * An rkey unknown here, bound to another endpoint or deregistered gets the
 * same answer. A right key with a wrong range or right is told apart: that
 * reveals nothing to a peer that does not hold the key already.
 */
static u16 usnic_rel_rdma_access(struct usnic_rel_ep *ep,
				 struct usnic_rel_peer *peer, u64 rkey,
				 u64 offset, u64 len, u32 access,
				 struct usnic_rel_mr **mrp)
{
	struct usnic_rel_mr *mr;
	u16 st;

	if (peer->bad_rkeys >= USNIC_REL_BAD_RKEY_LIMIT) {
		usnic_rel_count(ep, USNIC_REL_CNT_RDMA_LOCKED_OUT, 1);
		return USNIC_REL_ST_BAD_RKEY;
	}
	mr = usnic_rel_mr_lookup(ep, rkey);
	if (!mr) {
		peer->bad_rkeys++;
		usnic_rel_count(ep, USNIC_REL_CNT_RDMA_BAD_RKEY, 1);
		return USNIC_REL_ST_BAD_RKEY;
	}
	peer->bad_rkeys = 0;
	st = usnic_rel_rdma_range_status(mr->access, mr->length, access,
					 offset, len);
	if (st) {
		usnic_rel_count(ep, USNIC_REL_CNT_RDMA_REFUSED, 1);
		usnic_rel_mr_put(mr, false);
		return st;
	}
	*mrp = mr;
	return st;
}

/*
 * A response slot for the answer to a request, or NULL when the channel owes
 * too many already: the request is then not taken (not acknowledged) and
 * comes again. Caller holds conn->lock.
 */
static struct usnic_rel_rdma_resp *
usnic_rel_rdma_resp_alloc(struct usnic_rel_ep *ep, struct usnic_rel_chan_conn *c)
{
	struct usnic_rel_rdma_resp *r = NULL;

	if (c->nr_resps < c->tx.size)
		r = kzalloc(sizeof(*r), GFP_ATOMIC);
	if (!r)
		usnic_rel_count(ep, USNIC_REL_CNT_RDMA_BUSY, 1);
	return r;
}

/*
 * Owe @r to the peer. The work item sends it, unless the receive path
 * holds the kick back to try sending it from the softirq first
 * (usnic_rel_rdma_resp_inline()). An answer to a one-sided request
 * reports the quiet PUTs applied before it. Caller holds conn->lock.
 */
static void usnic_rel_rdma_resp_queue(struct usnic_rel_peer *peer,
				      struct usnic_rel_chan_conn *c,
				      struct usnic_rel_rdma_resp *r)
{
	struct usnic_rel_conn *conn = &peer->conn;

	if (r->type != USNIC_REL_PKT_STATUS ||
	    r->req_type != USNIC_REL_PKT_DATA) {
		r->quiet = c->quiet_done;
		c->quiet_done = 0;
	}
	list_add_tail(&r->node, &c->resps);
	c->nr_resps++;
	if (conn->resp_kick_held)
		conn->resp_kick_owed = true;
	else
		usnic_rel_tx_work_kick(peer);
}

static void usnic_rel_rdma_status(struct usnic_rel_rdma_resp *r, u32 op_id,
				  u8 req_type, u16 status)
{
	r->type = USNIC_REL_PKT_STATUS;
	r->op_id = op_id;
	r->req_type = req_type;
	r->status = status;
}

/*
 * Queue the refusal of message @msg_id received on @chan, too long for our
 * buffers: a TOO_BIG STATUS, sent in order with the other answers. Returns
 * -EBUSY when the channel owes too many (the fragment comes again).
 * Caller holds conn->lock.
 */
int usnic_rel_rdma_refuse_msg(struct usnic_rel_ep *ep,
			      struct usnic_rel_peer *peer, unsigned int chan,
			      u32 msg_id)
{
	struct usnic_rel_chan_conn *c = &peer->conn.chan[chan];
	struct usnic_rel_rdma_resp *r = usnic_rel_rdma_resp_alloc(ep, c);

	if (!r)
		return -EBUSY;
	usnic_rel_rdma_status(r, msg_id, USNIC_REL_PKT_DATA,
			      USNIC_REL_ST_TOO_BIG);
	usnic_rel_rdma_resp_queue(peer, c, r);
	return 0;
}

/* One fragment of a PUT: 0, or -EBUSY when it must come again. */
static int usnic_rel_rdma_rx_put(struct usnic_rel_ep *ep,
				 struct usnic_rel_peer *peer,
				 struct usnic_rel_chan_conn *c,
				 const struct usnic_rel_pkt *pkt,
				 const struct sk_buff *skb)
{
	struct usnic_rel_rx_put *put = &c->put;
	struct usnic_rel_rdma_resp *r = NULL;
	struct usnic_rel_mr *mr = NULL;
	bool last, silent;
	u16 st;

	if (!pkt->put.frag_offset) {
		put->active = true;
		put->failed = false;
		put->op_id = pkt->put.op_id;
		put->op_len = pkt->put.op_len;
		put->flags = pkt->put.flags;
		put->next = 0;
	} else if (!put->active || put->op_id != pkt->put.op_id ||
		   put->op_len != pkt->put.op_len ||
		   put->flags != pkt->put.flags ||
		   put->next != pkt->put.frag_offset) {
		/* In-order delivery makes fragments contiguous: forged. */
		usnic_rel_count(ep, USNIC_REL_CNT_RX_BAD_HEADER, 1);
		return 0;
	}
	last = pkt->put.frag_offset + pkt->payload_len == pkt->put.op_len;
	/* Applied in full, a quiet PUT is counted, not answered, while it fits. */
	silent = last && put->flags & USNIC_REL_PUT_F_QUIET &&
		 c->quiet_done < USNIC_REL_WIRE_MAX_QUIET;
	if (put->failed) {
		/* Refused already: the origin heard it and stops sending. */
		put->next += pkt->payload_len;
		put->active = !last;
		return 0;
	}
	/*
	 * The first fragment checks the whole operation, so that a refused
	 * PUT writes nothing; the others check themselves, as the memory may
	 * be deregistered meanwhile.
	 */
	st = usnic_rel_rdma_access(ep, peer, pkt->put.rkey, pkt->put.offset,
				   pkt->put.frag_offset ? pkt->payload_len :
				   pkt->put.op_len,
				   USNIC_REL_ACCESS_REMOTE_WRITE, &mr);
	if (st || (last && !silent)) {
		r = usnic_rel_rdma_resp_alloc(ep, c);
		if (!r)
			goto busy;
	}
	/* Deregistered since the lookup: as if it were gone already. */
	if (mr && usnic_rel_mr_write_pkt(mr, pkt->put.offset, skb, pkt)) {
		st = USNIC_REL_ST_BAD_RKEY;
		if (!r)
			r = usnic_rel_rdma_resp_alloc(ep, c);
		if (!r)
			goto busy;
	}
	if (mr)
		usnic_rel_mr_put(mr, false);
	if (r)
		usnic_rel_rdma_status(r, put->op_id, USNIC_REL_PKT_PUT, st);
	put->next += pkt->payload_len;
	put->failed = st != USNIC_REL_ST_OK;
	put->active = !last;
	if (last && !st)
		usnic_rel_count(ep, USNIC_REL_CNT_RDMA_SERVED, 1);
	if (r)
		usnic_rel_rdma_resp_queue(peer, c, r);
	else if (last && !st)
		c->quiet_done++;
	return 0;
busy:
	if (mr)
		usnic_rel_mr_put(mr, false);
	return -EBUSY;
}

static int usnic_rel_rdma_rx_get(struct usnic_rel_ep *ep,
				 struct usnic_rel_peer *peer,
				 struct usnic_rel_chan_conn *c,
				 const struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_rdma_resp *r = usnic_rel_rdma_resp_alloc(ep, c);
	struct usnic_rel_mr *mr = NULL;
	u16 st;

	if (!r)
		return -EBUSY;
	st = usnic_rel_rdma_access(ep, peer, pkt->get_req.rkey,
				   pkt->get_req.offset,
				   pkt->get_req.length,
				   USNIC_REL_ACCESS_REMOTE_READ, &mr);
	if (st) {
		usnic_rel_rdma_status(r, pkt->get_req.op_id,
				      USNIC_REL_PKT_GET_REQ, st);
	} else {
		/* Read when sent: the bytes are those of that moment. */
		r->type = USNIC_REL_PKT_GET_RESP;
		r->op_id = pkt->get_req.op_id;
		r->mr = mr;
		r->offset = pkt->get_req.offset;
		r->len = pkt->get_req.length;
		usnic_rel_count(ep, USNIC_REL_CNT_RDMA_SERVED, 1);
	}
	usnic_rel_rdma_resp_queue(peer, c, r);
	return 0;
}

static int usnic_rel_rdma_rx_atomic(struct usnic_rel_ep *ep,
				    struct usnic_rel_peer *peer,
				    struct usnic_rel_chan_conn *c,
				    const struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_rdma_resp *r = usnic_rel_rdma_resp_alloc(ep, c);
	struct usnic_rel_mr *mr = NULL;
	u16 st;

	/* Not idempotent: the answer's slot is taken before it runs. */
	if (!r)
		return -EBUSY;
	st = usnic_rel_rdma_access(ep, peer, pkt->atomic_req.rkey,
				   pkt->atomic_req.offset, pkt->atomic_req.size,
				   USNIC_REL_ACCESS_REMOTE_ATOMIC, &mr);
	if (!st) {
		int ret = usnic_rel_mr_atomic(mr, pkt->atomic_req.offset,
					      pkt->atomic_req.op,
					      pkt->atomic_req.size,
					      pkt->atomic_req.operand,
					      pkt->atomic_req.compare, &r->old);

		if (ret == -EINVAL) {
			st = USNIC_REL_ST_UNALIGNED;
			usnic_rel_count(ep, USNIC_REL_CNT_RDMA_REFUSED, 1);
		} else if (ret) {
			st = USNIC_REL_ST_BAD_RKEY;
		}
		usnic_rel_mr_put(mr, false);
	}
	if (st) {
		usnic_rel_rdma_status(r, pkt->atomic_req.op_id,
				      USNIC_REL_PKT_ATOMIC_REQ, st);
	} else {
		r->type = USNIC_REL_PKT_ATOMIC_RESP;
		r->op_id = pkt->atomic_req.op_id;
		usnic_rel_count(ep, USNIC_REL_CNT_RDMA_SERVED, 1);
	}
	usnic_rel_rdma_resp_queue(peer, c, r);
	return 0;
}

/*
 * A one-sided packet delivered in order. Returns 0 when it was consumed, or
 * -EBUSY when the channel owes too many answers and it must come again.
 * Caller holds conn->lock.
 */
int usnic_rel_rdma_rx(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
		      const struct usnic_rel_pkt *pkt, const struct sk_buff *skb)
{
	struct usnic_rel_chan_conn *c = &peer->conn.chan[pkt->channel];

	/* The refusal of one of our messages, not of a one-sided op. */
	if (pkt->type == USNIC_REL_PKT_STATUS &&
	    pkt->status.req_type == USNIC_REL_PKT_DATA) {
		usnic_rel_send_msg_refused(ep, peer, pkt->channel,
					   pkt->status.op_id);
		return 0;
	}
	switch (pkt->type) {
	case USNIC_REL_PKT_PUT:
		return usnic_rel_rdma_rx_put(ep, peer, c, pkt, skb);
	case USNIC_REL_PKT_GET_REQ:
		return usnic_rel_rdma_rx_get(ep, peer, c, pkt);
	case USNIC_REL_PKT_ATOMIC_REQ:
		return usnic_rel_rdma_rx_atomic(ep, peer, c, pkt);
	default:
		usnic_rel_rdma_rx_response(ep, c, pkt, skb);
		return 0;
	}
}

static void usnic_rel_rdma_resp_free(struct usnic_rel_chan_conn *c,
				     struct usnic_rel_rdma_resp *r)
{
	list_del(&r->node);
	c->nr_resps--;
	if (r->mr)
		usnic_rel_mr_put(r->mr, false);
	kfree(r);
}

/*
 * The registration a GET is read from was deregistered part-way: what is
 * left of the answer becomes an error STATUS, which the origin takes as the
 * GET's final answer (its data never completes it).
 */
static void usnic_rel_rdma_resp_revoked(struct usnic_rel_rdma_resp *r)
{
	usnic_rel_mr_put(r->mr, false);
	r->mr = NULL;
	usnic_rel_rdma_status(r, r->op_id, USNIC_REL_PKT_GET_REQ,
			      USNIC_REL_ST_BAD_RKEY);
	r->len = 0;
	r->sent = 0;
}

/* Bytes the oldest answer of @c needs in its next packet. */
static u32 usnic_rel_rdma_resp_frag(struct usnic_rel_ep *ep, unsigned int chan,
				    const struct usnic_rel_rdma_resp *r)
{
	if (r->type != USNIC_REL_PKT_GET_RESP)
		return 0;
	return min(r->len - r->sent,
		   usnic_rel_rdma_frag_max(ep, chan, USNIC_REL_PKT_GET_RESP));
}

/*
 * Number the next packet of @r, the oldest answer owed on @chan, into @b
 * (room for @hlen + @frag bytes, the payload copied already) and keep it
 * in the send window; @b gets a second reference, the caller's to send.
 * An answer whose last packet this was is counted in @cnt and freed.
 * Returns 0, or -ENOSPC when the window is full. Caller holds conn->lock.
 */
static int usnic_rel_rdma_resp_take(struct usnic_rel_ep *ep,
				    struct usnic_rel_peer *peer,
				    unsigned int chan,
				    struct usnic_rel_rdma_resp *r,
				    struct usnic_rel_txbuf *b, size_t hlen,
				    u32 frag, enum usnic_rel_counter cnt)
{
	struct usnic_rel_chan_conn *c = &peer->conn.chan[chan];
	struct usnic_rel_pkt pkt;
	u32 seq;
	int ret;

	b->len = hlen + frag;
	ret = usnic_rel_txwin_push(&c->tx, ktime_get_ns(), &seq);
	if (ret)
		return ret;
	usnic_rel_pkt_init(ep, peer, &pkt, r->type, chan);
	pkt.seq = seq;
	pkt.payload_len = frag;
	/* In the answer's first packet only (a revoked GET's STATUS follows). */
	pkt.quiet = r->quiet;
	r->quiet = 0;
	switch (r->type) {
	case USNIC_REL_PKT_GET_RESP:
		pkt.get_resp.op_id = r->op_id;
		pkt.get_resp.frag_offset = r->sent;
		pkt.get_resp.op_len = r->len;
		break;
	case USNIC_REL_PKT_ATOMIC_RESP:
		pkt.atomic_resp.op_id = r->op_id;
		pkt.atomic_resp.old = r->old;
		break;
	default:
		pkt.status.op_id = r->op_id;
		pkt.status.status = r->status;
		pkt.status.req_type = r->req_type;
		break;
	}
	usnic_rel_ack_fill(peer, chan, &pkt);
	usnic_rel_wire_build(b->data, hlen, &pkt);
	r->sent += frag;
	if (r->sent == r->len) {
		usnic_rel_rdma_resp_free(c, r);
		usnic_rel_count(ep, cnt, 1);
	}
	usnic_rel_txwin_set_pkt(&c->tx, seq, b);
	refcount_inc(&b->ref);
	usnic_rel_rtx_timer_arm(peer, false);
	return 0;
}

/*
 * Add the next packet of the oldest answer owed on @chan to @batch, which
 * the caller puts on the wire. Returns true when it added one. Caller holds
 * tx_lock.
 */
static bool usnic_rel_rdma_send_resp(struct usnic_rel_ep *ep,
				     struct usnic_rel_peer *peer,
				     unsigned int chan,
				     struct usnic_rel_tx_batch *batch)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	struct usnic_rel_txbuf *b = NULL;
	struct usnic_rel_rdma_resp *r;
	u32 room = 0, frag;
	size_t hlen;
	int ret;

again:
	spin_lock_bh(&conn->lock);
	r = list_first_entry_or_null(&c->resps, struct usnic_rel_rdma_resp,
				     node);
	if (conn->state != USNIC_REL_CONN_ACTIVE || !r ||
	    !usnic_rel_txwin_may_send(&c->tx)) {
		spin_unlock_bh(&conn->lock);
		usnic_rel_txbuf_put(ep, b);
		return false;
	}
	if (usnic_rel_txwin_grow_cap(&c->tx)) {
		/*
		 * A slot before the packet: when one of the two allocations
		 * fails, the retry keeps the other (usnic_rel_conn_tx_grow()).
		 */
		spin_unlock_bh(&conn->lock);
		ret = usnic_rel_conn_tx_grow(peer, chan);
		if (!ret)
			goto again;
		goto owed;
	}
	hlen = usnic_rel_wire_hdr_len(r->type);
	frag = usnic_rel_rdma_resp_frag(ep, chan, r);
	if (hlen + frag > room) {
		/* Allocate where we may sleep, then look again. */
		spin_unlock_bh(&conn->lock);
		usnic_rel_txbuf_put(ep, b);
		room = hlen + frag;
		b = usnic_rel_fault_nomem(ep) ? NULL :
		    usnic_rel_txbuf_alloc(ep, room, GFP_KERNEL_ACCOUNT);
		if (!b) {
			/* The answer stays owed: try again soon. */
			usnic_rel_send_retry_later(ep);
			return false;
		}
		goto again;
	}
	/*
	 * Read the registration before taking a sequence number: once it is
	 * deregistered, the answer ends with an error instead.
	 */
	if (r->type == USNIC_REL_PKT_GET_RESP &&
	    usnic_rel_mr_copy(r->mr, r->offset + r->sent, b->data + hlen, frag,
			      false)) {
		usnic_rel_rdma_resp_revoked(r);
		spin_unlock_bh(&conn->lock);
		goto again;
	}
	if (usnic_rel_rdma_resp_take(ep, peer, chan, r, b, hlen, frag,
				     USNIC_REL_CNT_RDMA_RESP_DEFERRED)) {
		/* The window is full: an ACK making room runs this again. */
		spin_unlock_bh(&conn->lock);
		usnic_rel_txbuf_put(ep, b);
		return false;
	}
	spin_unlock_bh(&conn->lock);

	/* A GET's answer is a run of full packets: one GSO call per run. */
	usnic_rel_batch_add(ep, peer, batch, b);
	usnic_rel_count(ep, USNIC_REL_CNT_TX_DATA_PACKETS, 1);
	return true;

owed:
	/*
	 * The window could not grow. -ENOSPC: packets of @chan are in flight,
	 * the ACK that frees one runs this again. -ENOMEM: nothing is, so no
	 * ACK will: the answer stays owed, try again soon.
	 */
	if (ret == -ENOMEM)
		usnic_rel_send_retry_later(ep);
	usnic_rel_txbuf_put(ep, b);
	return false;
}

/*
 * The receive softirq just queued an answer on @chan: when it is the
 * oldest owed there and fits one packet, number it now, so that it leaves
 * from the softirq (usnic_rel_xmit_softirq(), once conn->lock is dropped)
 * without waking the work item. Returns the packet, with a reference for
 * the caller, or NULL to leave the answer to the work item as always: the
 * window is full or must grow (that allocates under tx_lock), no memory,
 * a fault is set up, or the socket cannot be used from here. The sequence
 * number is taken under conn->lock, so the answer keeps its place behind
 * anything numbered before it and ahead of what the work item sends next.
 * Caller holds conn->lock, in softirq.
 */
struct usnic_rel_txbuf *usnic_rel_rdma_resp_inline(struct usnic_rel_ep *ep,
						   struct usnic_rel_peer *peer,
						   unsigned int chan)
{
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_chan_conn *c = &conn->chan[chan];
	struct usnic_rel_rdma_resp *r;
	struct usnic_rel_txbuf *b;
	u32 room, frag;
	size_t hlen;

	r = list_first_entry_or_null(&c->resps, struct usnic_rel_rdma_resp,
				     node);
	if (conn->state != USNIC_REL_CONN_ACTIVE || !r || r->sent ||
	    !usnic_rel_txwin_may_send(&c->tx) ||
	    usnic_rel_txwin_grow_cap(&c->tx) ||
	    !usnic_rel_socket_softirq_ok(ep))
		return NULL;
	hlen = usnic_rel_wire_hdr_len(r->type);
	frag = usnic_rel_rdma_resp_frag(ep, chan, r);
	if (frag != r->len)
		return NULL;
	room = hlen + frag;
	b = usnic_rel_txbuf_alloc(ep, room, GFP_ATOMIC);
	if (!b)
		return NULL;
	if (r->type == USNIC_REL_PKT_GET_RESP &&
	    usnic_rel_mr_copy(r->mr, r->offset, b->data + hlen, frag, false)) {
		usnic_rel_rdma_resp_revoked(r);
		hlen = usnic_rel_wire_hdr_len(r->type);
		frag = 0;
	}
	if (hlen + frag > room ||
	    usnic_rel_rdma_resp_take(ep, peer, chan, r, b, hlen, frag,
				     USNIC_REL_CNT_RDMA_RESP_INLINE)) {
		usnic_rel_txbuf_put(ep, b);
		return NULL;
	}
	usnic_rel_count(ep, USNIC_REL_CNT_TX_DATA_PACKETS, 1);
	return b;
}

/*
 * Send the answers owed to @peer, command channel first, until none is left
 * or a window is full (an ACK making room runs this again). Caller holds
 * tx_lock.
 */
void usnic_rel_rdma_respond(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer)
{
	struct usnic_rel_tx_batch batch;
	unsigned int chan;

	batch.n = 0;
	batch.bytes = 0;
	for (chan = 0; chan < USNIC_REL_NR_CHANS; chan++) {
		while (usnic_rel_rdma_send_resp(ep, peer, chan, &batch)) {
			/* Nothing waits in the batch while we yield. */
			if (need_resched()) {
				usnic_rel_batch_flush(ep, peer, &batch);
				cond_resched();
			}
		}
		usnic_rel_batch_flush(ep, peer, &batch);
	}
}

bool usnic_rel_rdma_resp_pending(const struct usnic_rel_conn *conn)
{
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		if (!list_empty(&conn->chan[i].resps))
			return true;
	return false;
}

/*
 * The connection ended (peer dead, reset or removed): complete every op with
 * @status and forget the answers owed. Caller holds conn->lock.
 */
void usnic_rel_rdma_fail_chan(struct usnic_rel_ep *ep,
			      struct usnic_rel_chan_conn *c, int status)
{
	struct usnic_rel_rdma_resp *r, *rn;
	struct usnic_rel_rdma_op *op, *on;

	list_for_each_entry_safe(op, on, &c->ops, node)
		usnic_rel_rdma_complete(ep, op, status);
	list_for_each_entry_safe(r, rn, &c->resps, node)
		usnic_rel_rdma_resp_free(c, r);
	memset(&c->put, 0, sizeof(c->put));
	c->quiet_done = 0;
}

/* Endpoint teardown: nothing is posted any more, just free. */
void usnic_rel_rdma_free_chan(struct usnic_rel_chan_conn *c)
{
	struct usnic_rel_rdma_resp *r, *rn;
	struct usnic_rel_rdma_op *op, *on;

	list_for_each_entry_safe(op, on, &c->ops, node) {
		list_del(&op->node);
		op->linked = false;
		/* The endpoint frees what its send path still holds. */
		if (op->in_sq)
			op->done = true;
		else
			kfree(op);
	}
	list_for_each_entry_safe(r, rn, &c->resps, node)
		usnic_rel_rdma_resp_free(c, r);
}
