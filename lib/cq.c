// SPDX-License-Identifier: MIT
/*
 * libusnicrel: the completion ring. Completions are copied out in batches,
 * the ring slots returned to the kernel at once, and each completion is
 * translated for the user: a send or one-sided operation releases its
 * staging space and operation slot (a get's bytes and an atomic's old value
 * are delivered on the way), a receive lends its buffer.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/*
 * Copy up to @n raw completions out of the ring, under cq_lock; -EIO if the
 * ring is corrupt.
 */
int urel_cq_take_locked(struct urel_ep *ep, struct usnic_rel_cqe *raw, uint32_t n)
{
	struct urel_ring *cq = &ep->cq;
	uint32_t avail;

	avail = urel_load_acquire(cq->tail) - cq->idx;
	if (avail > cq->entries) {
		__atomic_store_n(&ep->broken, -EIO, __ATOMIC_RELAXED);
		return -EIO;
	}
	if (n > avail)
		n = avail;
	for (uint32_t i = 0; i < n; i++)
		memcpy(&raw[i], urel_ring_slot(cq, cq->idx + i, sizeof(*raw)), sizeof(*raw));
	/*
	 * Released: urel_progress_idle() compares it with the tail without the
	 * lock, and must then see the prog_depth raised before this take.
	 */
	__atomic_store_n(&cq->idx, cq->idx + n, __ATOMIC_RELEASE);
	urel_store_release(cq->head, cq->idx);
	return (int)n;
}

static int urel_cq_take(struct urel_ep *ep, struct usnic_rel_cqe *raw, uint32_t n)
{
	int ret;

	urel_ep_lock(ep, &ep->cq_lock);
	ret = urel_cq_take_locked(ep, raw, n);
	urel_ep_unlock(ep, &ep->cq_lock);
	return ret;
}

static void urel_cq_recv(struct urel_ep *ep, const struct usnic_rel_cqe *raw,
			 struct urel_completion *c)
{
	if (raw->len > ep->info.rx_buf_size || !urel_rx_claim(ep, raw->buf)) {
		/* Never hand out memory the kernel did not fill for us. */
		c->status = -EIO;
		c->len = 0;
		c->buf = UINT32_MAX;
		return;
	}
	c->data = (const char *)ep->region[USNIC_REL_REGION_RX_BUFS] +
		  (size_t)raw->buf * ep->info.rx_buf_size;
}

static void urel_cq_op_done(struct urel_ep *ep, const struct usnic_rel_cqe *raw,
			    struct urel_completion *c)
{
	struct urel_op *op = urel_op_find(ep, raw->user_ctx);
	const char *staging = ep->region[USNIC_REL_REGION_STAGING];

	if (!op) {
		c->status = -EIO;
		return;
	}
	c->context = op->context;
	if (!c->status && op->opcode == USNIC_REL_OP_GET) {
		/* Never copy more than the get asked for and staged. */
		if (raw->len <= op->staging_len)
			memcpy(op->dest, staging + op->staging_off, raw->len);
		else
			c->status = -EIO;
	}
	if (!c->status && op->opcode == USNIC_REL_OP_ATOMIC && op->dest) {
		if (op->size == 4) {
			uint32_t v = (uint32_t)raw->imm;

			memcpy(op->dest, &v, sizeof(v));
		} else {
			memcpy(op->dest, &raw->imm, sizeof(raw->imm));
		}
	}
	if (op->staging_len)
		urel_staging_free(&ep->staging, op->staging_off);
	urel_op_free(ep, op);
}

void urel_cq_translate(struct urel_ep *ep, const struct usnic_rel_cqe *raw,
		       struct urel_completion *out, uint32_t n)
{
	bool locked = false;

	for (uint32_t i = 0; i < n; i++) {
		struct urel_completion *c = &out[i];

		memset(c, 0, sizeof(*c));
		c->imm = raw[i].imm;
		c->status = raw[i].status;
		c->len = raw[i].len;
		c->peer = raw[i].peer;
		c->buf = raw[i].buf;
		c->opcode = raw[i].opcode;
		c->channel = raw[i].channel;
		if (raw[i].opcode == USNIC_REL_OP_RECV) {
			urel_cq_recv(ep, &raw[i], c);
			continue;
		}
		/* One lock round for the batch's operation slots and staging space. */
		if (!locked) {
			urel_ep_lock(ep, &ep->tx_lock);
			locked = true;
		}
		urel_cq_op_done(ep, &raw[i], c);
	}
	if (locked)
		urel_ep_unlock(ep, &ep->tx_lock);
}

UREL_API int urel_ep_poll_cq(struct urel_ep *ep, struct urel_completion *out, unsigned int n)
{
	struct usnic_rel_cqe raw[UREL_CQ_BATCH];
	unsigned int total = 0;
	int got, ret;

	if (!ep || (!out && n))
		return -EINVAL;
	/*
	 * A busy poller mostly finds nothing: see that without cq_lock. A
	 * completion that lands meanwhile is taken by the next call.
	 */
	if (urel_load_acquire(ep->cq.tail) == __atomic_load_n(&ep->cq.idx, __ATOMIC_ACQUIRE))
		n = 0;
	while (total < n) {
		got = urel_cq_take(ep, raw, n - total < UREL_CQ_BATCH ? n - total : UREL_CQ_BATCH);
		if (got < 0)
			return total ? (int)total : got;
		if (!got)
			break;
		urel_cq_translate(ep, raw, out + total, (uint32_t)got);
		total += (unsigned int)got;
	}
	/* Completions free room the kernel may have been waiting for. */
	ret = urel_sq_kick(ep);
	if (ret < 0 && !total && ret != -EINTR && ret != -EAGAIN && ret != -ENOMEM)
		return ret;
	return (int)total;
}
