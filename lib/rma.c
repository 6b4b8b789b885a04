// SPDX-License-Identifier: MIT
/*
 * libusnicrel: emulated RDMA. A put carries its bytes like a send; a get
 * reserves staging space for the bytes the kernel brings back and copies
 * them out on completion; an atomic's old value returns in the completion.
 * Puts and large gets go on the data channel, atomics and small gets on the
 * command channel; the windows' lock words take atomics on the data channel,
 * where the target's kernel applies them after the puts posted before. The
 * target's kernel performs the operation: its process need not make
 * progress. A quiet put (UREL_POST_QUIET) is answered only on error: the
 * next answer on the data channel reports it applied.
 */
#include <errno.h>

#include "internal.h"

static int urel_rma_check(struct urel_ep *ep, urel_peer_t peer, size_t len, uint64_t remote_off,
			  unsigned int flags, unsigned int allowed)
{
	if (!ep || !len || flags & ~allowed || remote_off + len < remote_off)
		return -EINVAL;
	if (len > UINT32_MAX)
		return -EMSGSIZE;
	if (!urel_av_has(ep, peer))
		return -ENXIO;
	return 0;
}

UREL_API int urel_ep_put(struct urel_ep *ep, urel_peer_t peer, const void *buf, size_t len,
			 uint64_t rkey, uint64_t remote_off, void *context, unsigned int flags)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_PUT,
		.peer = peer,
		.len = (uint32_t)len,
		.rkey = rkey,
		.remote_off = remote_off,
		/* Answered by the next answer on the channel, unless refused. */
		.flags = flags & UREL_POST_QUIET ? USNIC_REL_SQE_QUIET : 0,
	};
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct urel_payload pl = { .iov = &iov, .iovcnt = 1 };
	int ret =
		urel_rma_check(ep, peer, len, remote_off, flags, UREL_POST_MORE | UREL_POST_QUIET);

	if (ret)
		return ret;
	if (!buf)
		return -EINVAL;
	return urel_sq_post(ep, USNIC_REL_CHAN_DATA, &sqe, &pl, context, NULL, flags);
}

UREL_API int urel_ep_get(struct urel_ep *ep, urel_peer_t peer, void *buf, size_t len, uint64_t rkey,
			 uint64_t remote_off, void *context, unsigned int flags)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_GET,
		.peer = peer,
		.len = (uint32_t)len,
		.rkey = rkey,
		.remote_off = remote_off,
	};
	int ret = urel_rma_check(ep, peer, len, remote_off, flags, UREL_POST_MORE);

	if (ret)
		return ret;
	if (!buf)
		return -EINVAL;
	/* Large answers go in data-channel packets, small ones jump the queue. */
	return urel_sq_post(ep,
			    len <= ep->info.mtu[USNIC_REL_CHAN_CMD] ? USNIC_REL_CHAN_CMD
								    : USNIC_REL_CHAN_DATA,
			    &sqe, NULL, context, buf, flags);
}

int urel_atomic_post(struct urel_ep *ep, unsigned int chan, urel_peer_t peer,
		     const struct urel_atomic *op, uint64_t rkey, uint64_t remote_off,
		     void *context, unsigned int flags)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_ATOMIC,
		.peer = peer,
		.rkey = rkey,
		.remote_off = remote_off,
	};
	int ret;

	if (!op)
		return -EINVAL;
	ret = urel_rma_check(ep, peer, op->size, remote_off, flags, UREL_POST_MORE);
	if (ret)
		return ret;
	if ((op->size != 4 && op->size != 8) || remote_off % op->size)
		return -EINVAL;
	if (op->op != UREL_ATOMIC_FETCH_ADD && op->op != UREL_ATOMIC_CAS &&
	    op->op != UREL_ATOMIC_SWAP)
		return -EINVAL;
	/* A 32-bit operation's operands must fit in 32 bits. */
	if (op->size == 4 && (op->operand > UINT32_MAX || op->compare > UINT32_MAX))
		return -EINVAL;
	if (op->op != UREL_ATOMIC_CAS && op->compare)
		return -EINVAL;
	sqe.len = op->size;
	sqe.atomic.atomic_op = op->op;
	sqe.atomic.atomic_size = op->size;
	if (op->op == UREL_ATOMIC_CAS) {
		sqe.atomic.operand[UREL_SQE_OPERAND_ADD_OR_COMPARE] = op->compare;
		sqe.atomic.operand[UREL_SQE_OPERAND_SWAP] = op->operand;
	} else if (op->op == UREL_ATOMIC_SWAP) {
		sqe.atomic.operand[UREL_SQE_OPERAND_SWAP] = op->operand;
	} else {
		sqe.atomic.operand[UREL_SQE_OPERAND_ADD_OR_COMPARE] = op->operand;
	}
	return urel_sq_post(ep, chan, &sqe, NULL, context, op->result, flags);
}

UREL_API int urel_ep_atomic(struct urel_ep *ep, urel_peer_t peer, const struct urel_atomic *op,
			    uint64_t rkey, uint64_t remote_off, void *context, unsigned int flags)
{
	return urel_atomic_post(ep, USNIC_REL_CHAN_CMD, peer, op, rkey, remote_off, context, flags);
}
