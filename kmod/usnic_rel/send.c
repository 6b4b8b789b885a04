// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the send path. A doorbell makes the kernel consume the send
 * rings, command channel first. Each descriptor is copied out of the shared
 * ring once and only the copy is validated and used. A completion is posted
 * when the packet has been handed to the stack; no delivery is promised yet.
 */
#include <linux/sched.h>

#include "usnic_rel.h"
#include "proto_tmp.h"

/* Validate the kernel's copy of an SQE; returns 0 or the completion status. */
static int usnic_rel_sqe_check(struct usnic_rel_ep *ep, unsigned int chan,
			       const struct usnic_rel_sqe *sqe)
{
	if (sqe->opcode != USNIC_REL_OP_SEND)
		return sqe->opcode <= USNIC_REL_OP_ATOMIC ? -EOPNOTSUPP : -EINVAL;
	if (sqe->flags & ~USNIC_REL_SQE_INLINE || sqe->reserved0 ||
	    sqe->reserved1 || sqe->reserved2[0] || sqe->reserved2[1] ||
	    sqe->rkey || sqe->remote_off)
		return -EINVAL;
	if (sqe->len > ep->mtu[chan])
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
 * Transmit one validated SQE. The staged payload is read straight from the
 * staging area into the skb: userspace may scribble on it meanwhile, but
 * nothing the kernel decides depends on those bytes.
 */
static int usnic_rel_send_one(struct usnic_rel_ep *ep, unsigned int chan,
			      const struct usnic_rel_sqe *sqe)
{
	u8 hdr[USNIC_REL_PKT_HDR_LEN];
	struct usnic_rel_pkt_info info = {
		.channel = chan,
		.opcode = sqe->opcode,
		.incarnation = ep->incarnation,
		.len = sqe->len,
		.imm = sqe->imm,
	};
	union usnic_rel_sockaddr to;
	struct usnic_rel_peer *peer;
	const void *payload;
	int ret;

	ret = usnic_rel_sqe_check(ep, chan, sqe);
	if (ret) {
		usnic_rel_count(ep, USNIC_REL_CNT_BAD_SQE, 1);
		return ret;
	}
	/* The peer may be removed meanwhile: keep a copy of its address. */
	rcu_read_lock();
	peer = xa_load(&ep->peers, sqe->peer);
	if (peer)
		to = peer->addr;
	rcu_read_unlock();
	if (!peer) {
		usnic_rel_count(ep, USNIC_REL_CNT_BAD_SQE, 1);
		return -EINVAL;
	}

	if (sqe->flags & USNIC_REL_SQE_INLINE)
		payload = sqe->inline_data;
	else
		payload = ep->staging + sqe->staging_off;
	usnic_rel_pkt_build(hdr, &info);
	ret = usnic_rel_socket_send(ep, &to, hdr, sizeof(hdr), payload, sqe->len);
	if (!ret) {
		usnic_rel_count(ep, USNIC_REL_CNT_TX_PACKETS, 1);
		usnic_rel_count(ep, USNIC_REL_CNT_TX_BYTES, sqe->len);
	} else if (ret != -EAGAIN && ret != -ENOBUFS) {
		usnic_rel_count(ep, USNIC_REL_CNT_TX_ERRORS, 1);
	}
	return ret;
}

static bool usnic_rel_cq_reserve(struct usnic_rel_ep *ep)
{
	bool ok;

	spin_lock_bh(&ep->rx_lock);
	ok = usnic_rel_cq_space(ep) > 0;
	if (ok)
		ep->cq_reserved++;
	spin_unlock_bh(&ep->rx_lock);
	return ok;
}

/*
 * Consume one send ring. Returns SQEs consumed (0 when the CQ is full), or
 * -EIO if the ring or the CQ is corrupt.
 */
static int usnic_rel_drain_sq(struct usnic_rel_ep *ep, unsigned int chan)
{
	struct usnic_rel_ring *ring = &ep->sq[chan];
	struct usnic_rel_sqe sqe;
	struct usnic_rel_cqe cqe;
	u32 avail, done = 0;
	int ret;

	avail = usnic_rel_ring_avail(ep, ring);
	if (ring->corrupt)
		return -EIO;
	while (done < avail) {
		/* A send completes into a CQ slot nobody else can take. */
		if (!usnic_rel_cq_reserve(ep)) {
			if (READ_ONCE(ep->cq.corrupt))
				return -EIO;
			break;
		}
		memcpy(&sqe, ring->desc +
		       (size_t)(ring->kidx & (ring->entries - 1)) * sizeof(sqe),
		       sizeof(sqe));
		ret = usnic_rel_send_one(ep, chan, &sqe);
		if (ret == -EAGAIN || ret == -ENOBUFS) {
			/* Socket buffer full: leave the SQE for the next doorbell. */
			spin_lock_bh(&ep->rx_lock);
			ep->cq_reserved--;
			spin_unlock_bh(&ep->rx_lock);
			break;
		}
		/* The SQE was copied: userspace may reuse the slot. */
		smp_store_release(&ring->hdr->head, ++ring->kidx);

		memset(&cqe, 0, sizeof(cqe));
		cqe.user_ctx = sqe.user_ctx;
		cqe.status = ret;
		cqe.opcode = sqe.opcode;
		cqe.channel = chan;
		cqe.peer = sqe.peer;
		cqe.len = ret ? 0 : sqe.len;
		cqe.imm = sqe.imm;
		spin_lock_bh(&ep->rx_lock);
		ep->cq_reserved--;
		usnic_rel_cq_post(ep, &cqe);
		spin_unlock_bh(&ep->rx_lock);
		done++;
		cond_resched();
	}
	if (done)
		wake_up_interruptible(&ep->ctx->wq);
	return done;
}

/* DOORBELL: returns SQEs consumed, or -EIO if a named ring or the CQ is corrupt. */
int usnic_rel_doorbell(struct usnic_rel_ep *ep, u32 rings)
{
	int chan, ret, done = 0;

	mutex_lock(&ep->tx_lock);
	if (ep->dead) {
		mutex_unlock(&ep->tx_lock);
		return -EINVAL;
	}
	/* The command channel is served first, as the design asks. */
	for (chan = 0; chan < USNIC_REL_NR_CHANS; chan++) {
		if (!(rings & (1U << chan)))
			continue;
		ret = usnic_rel_drain_sq(ep, chan);
		if (ret < 0) {
			done = ret;
			break;
		}
		done += ret;
	}
	mutex_unlock(&ep->tx_lock);
	return done;
}
