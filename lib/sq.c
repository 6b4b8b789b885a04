// SPDX-License-Identifier: MIT
/*
 * libusnicrel: posting to the send rings and ringing the doorbell. Payloads
 * up to UREL_INLINE_MAX travel in the descriptor; larger ones are copied
 * into the staging area, whose space returns when the completion arrives.
 * The kernel may leave descriptors in a ring (socket buffer or completion
 * ring full); urel_sq_kick() hands them over again from the completion and
 * wait paths.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

static uint32_t urel_sq_pending(struct urel_ep *ep, unsigned int chan)
{
	struct urel_ring *sq = &ep->sq[chan];

	return urel_load_acquire(sq->tail) - urel_load_acquire(sq->head);
}

/* Returns descriptors consumed; a refusal for good breaks the endpoint. */
static int urel_doorbell(struct urel_ep *ep, uint32_t rings)
{
	struct usnic_rel_doorbell db = {
		.size = sizeof(db),
		.ep_id = ep->info.ep_id,
		.rings = rings,
	};
	int ret = ioctl(ep->dev->fd, USNIC_REL_IOC_DOORBELL, &db);

	if (ret >= 0)
		return ret;
	ret = -errno;
	if (ret == -EINTR || ret == -EAGAIN || ret == -ENOMEM)
		return ret;
	/* Every field we pass is valid: -EINVAL means the endpoint is gone. */
	if (ret == -EINVAL)
		ret = -ESHUTDOWN;
	__atomic_store_n(&ep->broken, ret, __ATOMIC_RELAXED);
	return ret;
}

/*
 * The kernel holds packets it acknowledged but had no buffer for: buffers
 * were just given back, so let it deliver them. The kernel sets the flag,
 * then reads our tail; we store the tail, then read the flag. The full
 * fence (the kernel has its own) makes one side see the other's store.
 */
int urel_rx_kick(struct urel_ep *ep)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(urel_load_acquire(ep->rx_free.flags) & USNIC_REL_RING_F_NEED_DOORBELL))
		return 0;
	return urel_doorbell(ep, USNIC_REL_DB_RX);
}

int urel_sq_kick(struct urel_ep *ep)
{
	int broken = __atomic_load_n(&ep->broken, __ATOMIC_RELAXED);
	uint32_t rings = 0;

	if (broken)
		return broken;
	for (unsigned int chan = 0; chan < USNIC_REL_NR_CHANS; chan++) {
		if (urel_sq_pending(ep, chan))
			rings |= 1U << chan;
	}
	if (!rings)
		return 0;
	return urel_doorbell(ep, rings);
}

static bool urel_sq_full(struct urel_ep *ep, unsigned int chan)
{
	struct urel_ring *sq = &ep->sq[chan];

	return sq->idx - urel_load_acquire(sq->head) >= sq->entries;
}

/*
 * Under tx_lock: room in @chan's ring and an operation record for the next
 * descriptor, or the endpoint's fatal error, or -EAGAIN (ring or records
 * full: the kernel has not consumed or completed enough yet).
 */
static inline int urel_sq_take(struct urel_ep *ep, unsigned int chan, struct urel_op **op,
			       uint64_t *user_ctx)
{
	int ret = __atomic_load_n(&ep->broken, __ATOMIC_RELAXED);

	if (ret)
		return ret;
	if (urel_sq_full(ep, chan))
		return -EAGAIN;
	*op = urel_op_alloc(ep, user_ctx);
	return *op ? 0 : -EAGAIN;
}

static void urel_gather(void *dst, const struct urel_payload *pl)
{
	char *p = dst;

	for (unsigned int i = 0; i < pl->iovcnt; i++) {
		if (pl->iov[i].iov_len)
			memcpy(p, pl->iov[i].iov_base, pl->iov[i].iov_len);
		p += pl->iov[i].iov_len;
	}
}

/* Payload placement: inline, staged (copied), or staged space for a get's result. */
static int urel_sq_place(struct urel_ep *ep, struct usnic_rel_sqe *sqe,
			 const struct urel_payload *pl, struct urel_op *op)
{
	int ret;

	op->staging_len = 0;
	if (pl && sqe->len <= USNIC_REL_SQE_INLINE_MAX) {
		sqe->flags |= USNIC_REL_SQE_INLINE;
		urel_gather(sqe->inline_data, pl);
		return 0;
	}
	if (!pl && sqe->opcode != USNIC_REL_OP_GET)
		return 0;
	ret = urel_staging_alloc(&ep->staging, sqe->len, &sqe->staging_off);
	if (ret)
		return ret;
	op->staging_off = sqe->staging_off;
	op->staging_len = sqe->len;
	if (pl)
		urel_gather((char *)ep->region[USNIC_REL_REGION_STAGING] + sqe->staging_off, pl);
	return 0;
}

static int urel_sq_post_locked(struct urel_ep *ep, unsigned int chan, struct usnic_rel_sqe *sqe,
			       const struct urel_payload *pl, void *context, void *dest)
{
	struct urel_ring *sq = &ep->sq[chan];
	struct urel_op *op;
	uint64_t user_ctx;
	int ret;

	ret = urel_sq_take(ep, chan, &op, &user_ctx);
	if (ret)
		return ret;
	sqe->user_ctx = user_ctx;
	ret = urel_sq_place(ep, sqe, pl, op);
	if (ret) {
		urel_op_free(ep, op);
		return ret;
	}
	op->context = context;
	op->dest = dest;
	op->opcode = sqe->opcode;
	op->size = sqe->opcode == USNIC_REL_OP_ATOMIC ? (uint8_t)sqe->atomic.atomic_size : 0;
	memcpy(urel_ring_slot(sq, sq->idx, sizeof(*sqe)), sqe, sizeof(*sqe));
	urel_store_release(sq->tail, ++sq->idx);
	return 0;
}

int urel_sq_post(struct urel_ep *ep, unsigned int chan, struct usnic_rel_sqe *sqe,
		 const struct urel_payload *pl, void *context, void *dest, unsigned int flags)
{
	int ret;

	urel_ep_lock(ep, &ep->tx_lock);
	ret = urel_sq_post_locked(ep, chan, sqe, pl, context, dest);
	urel_ep_unlock(ep, &ep->tx_lock);
	if (ret == -EAGAIN) {
		/* The kernel may have left work in the ring: hand it over, retry once. */
		ret = urel_sq_kick(ep);
		if (ret < 0)
			return ret;
		urel_ep_lock(ep, &ep->tx_lock);
		ret = urel_sq_post_locked(ep, chan, sqe, pl, context, dest);
		urel_ep_unlock(ep, &ep->tx_lock);
	}
	if (ret || flags & UREL_POST_MORE)
		return ret;
	/* One doorbell for this post and whatever UREL_POST_MORE left on either channel. */
	ret = urel_sq_kick(ep);
	return ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -ENOMEM ? ret : 0;
}

/*
 * urel_sq_send_inline() under tx_lock: the descriptor is written in its
 * ring slot, each field the kernel reads or checks once (the slot still
 * holds an old descriptor), the payload gathered behind them.
 */
static int urel_sq_inline_locked(struct urel_ep *ep, unsigned int chan, urel_peer_t peer,
				 uint64_t imm, const void *hdr, size_t hlen, const void *data,
				 size_t dlen, void *context)
{
	struct urel_ring *sq = &ep->sq[chan];
	struct usnic_rel_sqe *sqe;
	struct urel_op *op;
	uint64_t user_ctx;
	int ret;

	ret = urel_sq_take(ep, chan, &op, &user_ctx);
	if (ret)
		return ret;
	op->context = context;
	op->dest = NULL;
	op->staging_len = 0;
	op->opcode = USNIC_REL_OP_SEND;
	op->size = 0;
	sqe = urel_ring_slot(sq, sq->idx, sizeof(*sqe));
	sqe->opcode = USNIC_REL_OP_SEND;
	sqe->flags = USNIC_REL_SQE_INLINE;
	sqe->reserved0 = 0;
	sqe->peer = peer;
	sqe->user_ctx = user_ctx;
	sqe->imm = imm;
	sqe->len = (uint32_t)(hlen + dlen);
	sqe->staging_off = 0;
	sqe->rkey = 0;
	sqe->remote_off = 0;
	sqe->reserved2[0] = 0;
	sqe->reserved2[1] = 0;
	memcpy(sqe->inline_data, hdr, hlen);
	if (dlen)
		memcpy(sqe->inline_data + hlen, data, dlen);
	urel_store_release(sq->tail, ++sq->idx);
	return 0;
}

/*
 * A send of a header and a body that fit in the descriptor together (at
 * most UREL_INLINE_MAX bytes; the caller checked the peer and the sizes):
 * urel_sq_post() without a descriptor built on the stack and copied into
 * the ring, nor a gather list. Rings the doorbell, as urel_sq_post().
 */
int urel_sq_send_inline(struct urel_ep *ep, unsigned int chan, urel_peer_t peer, uint64_t imm,
			const void *hdr, size_t hlen, const void *data, size_t dlen, void *context)
{
	int ret;

	urel_ep_lock(ep, &ep->tx_lock);
	ret = urel_sq_inline_locked(ep, chan, peer, imm, hdr, hlen, data, dlen, context);
	urel_ep_unlock(ep, &ep->tx_lock);
	if (ret == -EAGAIN) {
		/* The kernel may have left work in the ring: hand it over, retry once. */
		ret = urel_sq_kick(ep);
		if (ret < 0)
			return ret;
		urel_ep_lock(ep, &ep->tx_lock);
		ret = urel_sq_inline_locked(ep, chan, peer, imm, hdr, hlen, data, dlen, context);
		urel_ep_unlock(ep, &ep->tx_lock);
	}
	if (ret)
		return ret;
	ret = urel_sq_kick(ep);
	return ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -ENOMEM ? ret : 0;
}

UREL_API int urel_ep_flush(struct urel_ep *ep)
{
	int ret;

	if (!ep)
		return -EINVAL;
	ret = urel_sq_kick(ep);
	return ret < 0 ? ret : 0;
}
