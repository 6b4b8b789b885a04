// SPDX-License-Identifier: MIT
/*
 * urel provider: RMA. fi_write and fi_read are the library's puts and gets
 * (atomic.c shares the machinery), cut in pieces the staging area holds. The
 * module completes a put when the target acknowledged it, after the bytes
 * were written there: every write is delivery-complete. A piece the library
 * cannot take yet is posted again when the endpoint progresses. Completions
 * go to the transmit CQ with FI_RMA and FI_READ or FI_WRITE; a refused key,
 * range or right completes with an error (prov_errno: the library's errno).
 * Remote addresses are offsets in the target's registration. Several local
 * iovs go through a copy of ours (iov.c); several remote ones are cut into
 * pieces each. A write with remote CQ data is followed by its notice
 * (note.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

/* The module's refusals of a one-sided operation as libfabric errors. */
static int urel_fi_rma_errno(int err)
{
	switch (-err) {
	case ENOKEY:
		return FI_EKEYREJECTED;
	case EPERM:
		return FI_EACCES;
	case ERANGE:
		return FI_EINVAL;
	default:
		return urel_fi_errno(err);
	}
}

static void urel_fi_rma_unlink(struct urel_fi_ep *ep, struct urel_fi_rma *op)
{
	if (op->prev)
		op->prev->next = op->next;
	else
		ep->rmas = op->next;
	if (op->next)
		op->next->prev = op->prev;
	ep->nrma--;
	ep->ntx--;
}

/* Every piece completed: report and free. Called with ep->lock held. */
static void urel_fi_rma_finish(struct urel_fi_ep *ep, struct urel_fi_rma *op)
{
	struct urel_fi_cqe c = {
		.e = { .op_context = op->context, .flags = op->cflags },
		.src = FI_ADDR_NOTAVAIL,
	};

	if (op->out || op->posted < op->len || (op->cq_data && !op->noted && !op->err))
		return;
	if (op->nliov && !op->err)
		urel_fi_iov_scatter(op->liov, op->nliov, op->bounce, op->len);
	if (op->err) {
		c.err = urel_fi_rma_errno(op->err);
		c.prov_errno = -op->err;
		UREL_FI_INFO(FI_LOG_EP_DATA, "%s %p failed: %s\n",
			     op->kind == UREL_FI_RMA_WRITE  ? "write"
			     : op->kind == UREL_FI_RMA_READ ? "read"
							    : "atomic",
			     op->context, urel_strerror(op->err));
	}
	if ((op->err || op->report) && ep->tx_cq)
		urel_fi_cq_push(ep->tx_cq, &c);
	urel_fi_rma_unlink(ep, op);
	free(op->bounce);
	free(op);
}

/*
 * The library's completion of one piece, from whichever thread progressed
 * the library: under ep->lock or not (a CQ poll's lock-free pass, a
 * progress thread). So it only counts, atomically; urel_fi_rma_fold()
 * takes the count under the lock and urel_fi_rma_progress() finishes the
 * operation after the batch.
 */
static void urel_fi_rma_done(struct urel_request *req, const struct urel_completion *c)
{
	struct urel_fi_rma *op = req->user;
	int none = 0;

	if (c->status)
		__atomic_compare_exchange_n(&op->done_err, &none, c->status, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	/* Last: once counted, another thread may finish and free @op. */
	__atomic_fetch_add(&op->done_pieces, 1, __ATOMIC_RELEASE);
}

/* The pieces completed since the last call, off op->out. Called with ep->lock held. */
static void urel_fi_rma_fold(struct urel_fi_rma *op)
{
	unsigned int n = __atomic_exchange_n(&op->done_pieces, 0, __ATOMIC_ACQUIRE);
	int err;

	if (!n)
		return;
	op->out -= n;
	err = __atomic_load_n(&op->done_err, __ATOMIC_RELAXED);
	if (err) {
		if (!op->err)
			op->err = err;
		op->len = op->posted; /* post nothing more */
	}
}

/* Hand the library the pieces not posted yet: 0, -EAGAIN (later) or the error that stopped it. */
static int urel_fi_rma_post(struct urel_fi_ep *ep, struct urel_fi_rma *op)
{
	while (op->posted < op->len) {
		size_t n = op->kind == UREL_FI_RMA_ATOMIC ? 1 : op->len - op->posted;
		int ret;

		if (op->kind == UREL_FI_RMA_ATOMIC) {
			size_t at_off = op->posted * op->size;
			struct urel_atomic at = {
				.op = op->aop,
				.size = op->size,
				.result = op->result ? op->result + at_off : NULL,
			};
			uint32_t v32 = 0;

			if (op->size == 4) {
				if (!op->no_operand)
					memcpy(&v32, op->buf + at_off, 4);
				at.operand = v32;
				if (op->compare) {
					memcpy(&v32, op->compare + at_off, 4);
					at.compare = v32;
				}
			} else {
				if (!op->no_operand)
					memcpy(&at.operand, op->buf + at_off, 8);
				if (op->compare)
					memcpy(&at.compare, op->compare + at_off, 8);
			}
			ret = urel_ep_atomic(ep->uep, op->peer, &at, op->key, op->off + at_off,
					     &op->req, 0);
		} else {
			/* The remote iov byte @posted falls in (empty ones are skipped). */
			size_t i = 0, at = op->posted;

			while (at >= op->riov[i].len)
				at -= op->riov[i++].len;
			n = op->riov[i].len - at;
			if (n > ep->rma_piece)
				n = ep->rma_piece;
			ret = op->kind == UREL_FI_RMA_WRITE
				      ? urel_ep_put(ep->uep, op->peer, op->buf + op->posted, n,
						    op->riov[i].key, op->riov[i].addr + at,
						    &op->req, 0)
				      : urel_ep_get(ep->uep, op->peer, op->buf + op->posted, n,
						    op->riov[i].key, op->riov[i].addr + at,
						    &op->req, 0);
		}
		if (ret == -EAGAIN || ret == -ENOBUFS)
			return -EAGAIN;
		if (ret) {
			if (!op->err)
				op->err = ret;
			op->len = op->posted;
			return ret;
		}
		op->posted += n;
		op->out++;
	}
	return 0;
}

/*
 * A write with CQ data: send its notice once every piece is posted (or, where
 * the notice cannot follow on the put's channel, done), and see it complete.
 */
static void urel_fi_rma_note(struct urel_fi_ep *ep, struct urel_fi_rma *op)
{
	struct urel_msg_status st;
	int ret;

	if (!op->cq_data)
		return;
	if (op->note) {
		ret = urel_msg_test_noprogress(op->note, &st);
		if (ret > 0) {
			op->note = NULL;
			op->out--;
			if (st.error && !op->err)
				op->err = st.error;
		}
		return;
	}
	if (op->err || op->noted || op->posted < op->len || (ep->note_after_put && op->out))
		return;
	ret = urel_fi_note_send(ep, op);
	if (!ret) {
		op->noted = true;
		op->out++;
	} else if (ret != -EAGAIN) {
		op->err = ret;
	}
}

/*
 * After the library progressed (ep->lock held): post what waited for room,
 * finish what completed. Newest first: walk to the oldest, then back, so the
 * oldest operation gets the room first.
 */
void urel_fi_rma_progress(struct urel_fi_ep *ep)
{
	struct urel_fi_rma *op = ep->rmas, *prev;

	while (op && op->next)
		op = op->next;
	for (; op; op = prev) {
		prev = op->prev;
		urel_fi_rma_fold(op);
		if (op->posted < op->len)
			urel_fi_rma_post(ep, op);
		urel_fi_rma_note(ep, op);
		urel_fi_rma_finish(ep, op);
	}
}

/* A new operation with @extra bytes of its own storage behind it (op->store). */
struct urel_fi_rma *urel_fi_rma_new(struct urel_fi_ep *ep, void *context, uint64_t cflags,
				    uint64_t flags, size_t extra)
{
	struct urel_fi_rma *op = calloc(1, sizeof(*op) + extra);

	if (!op)
		return NULL;
	op->req.complete = urel_fi_rma_done;
	op->req.user = op;
	op->store = (char *)(op + 1);
	op->context = context;
	op->cflags = cflags;
	op->report = !(flags & FI_INJECT) && (!ep->tx_selective || (flags & FI_COMPLETION));
	return op;
}

/* Post @op to @dest; frees it when refused. Returns 0 or a negative FI_E*. */
ssize_t urel_fi_rma_submit(struct urel_fi_ep *ep, struct urel_fi_rma *op, fi_addr_t dest)
{
	ssize_t ret = 0;
	int posted;

	if (!ep->enabled) {
		free(op->bounce);
		free(op);
		return -FI_EOPBADSTATE;
	}
	urel_fi_ep_lock(ep);
	op->peer = dest < ep->npeer_of ? ep->peer_of[dest] : 0;
	if (!op->peer) {
		ret = -FI_EINVAL;
		goto refuse;
	}
	if (ep->ntx >= UREL_FI_QUEUE_SIZE) {
		urel_fi_ep_reap(ep);
		if (ep->ntx >= UREL_FI_QUEUE_SIZE) {
			ret = -FI_EAGAIN;
			goto refuse;
		}
	}
	posted = urel_fi_rma_post(ep, op);
	if (posted == -EAGAIN && !op->posted) {
		/* No room at all: make some and try once more before saying so. */
		urel_fi_ep_reap(ep);
		posted = urel_fi_rma_post(ep, op);
	}
	if (posted && !op->posted) {
		ret = posted == -EAGAIN ? -FI_EAGAIN : -urel_fi_errno(posted);
		goto refuse;
	}
	op->prev = NULL;
	op->next = ep->rmas;
	if (ep->rmas)
		ep->rmas->prev = op;
	ep->rmas = op;
	ep->nrma++;
	ep->ntx++;
	ep->posted[2 + op->kind]++;
	/* Until every RMA is gone, each CQ poll reaps under the lock (urel_fi_ep_progress()). */
	__atomic_store_n(&ep->reaped_at, UREL_FI_REAP_DUE, __ATOMIC_RELAXED);
	urel_fi_rma_fold(op);
	urel_fi_rma_note(ep, op);
	urel_fi_rma_finish(ep, op); /* nothing to wait for (0 bytes): complete now */
	urel_fi_ep_unlock(ep);
	return 0;
refuse:
	urel_fi_ep_unlock(ep);
	free(op->bounce);
	free(op);
	return ret;
}

/* Progress until no RMA is outstanding, for at most @timeout_ms; true when none is. */
bool urel_fi_rma_drain(struct urel_fi_ep *ep, int timeout_ms)
{
	for (int waited = 0;; waited += 10) {
		bool idle;

		urel_fi_ep_lock(ep);
		urel_fi_ep_reap(ep);
		idle = !ep->nrma;
		urel_fi_ep_unlock(ep);
		if (idle)
			return true;
		if (waited >= timeout_ms)
			return false;
		urel_device_wait(ep->dom->dev, 10);
	}
}

/* Once the library endpoint is gone (nothing completes any more). */
void urel_fi_rma_free_all(struct urel_fi_ep *ep)
{
	while (ep->rmas) {
		struct urel_fi_rma *op = ep->rmas;

		ep->rmas = op->next;
		free(op->bounce);
		free(op);
	}
	ep->nrma = 0;
}

static struct urel_fi_ep *urel_fi_ep_of(struct fid_ep *fid)
{
	return container_of(fid, struct urel_fi_ep, fid);
}

/*
 * A write or read between the local iovs and the remote ones (the same
 * number of bytes on both sides); @cq_data: a write whose target gets @data.
 */
static ssize_t urel_fi_rw(struct urel_fi_ep *ep, enum urel_fi_rma_kind kind,
			  const struct iovec *iov, size_t count, fi_addr_t addr,
			  const struct fi_rma_iov *riov, size_t rcount, bool cq_data, uint64_t data,
			  void *context, uint64_t flags)
{
	bool write = kind == UREL_FI_RMA_WRITE;
	struct urel_fi_rma *op;
	size_t len, rlen = 0;

	if (!(ep->caps & FI_RMA))
		return -FI_EOPNOTSUPP;
	if (urel_fi_iov_len(iov, count, &len) || !rcount || rcount > UREL_FI_IOV_LIMIT || !riov)
		return -FI_EINVAL;
	for (size_t i = 0; i < rcount; i++) {
		if (rlen + riov[i].len < rlen)
			return -FI_EINVAL;
		rlen += riov[i].len;
	}
	if (rlen != len)
		return -FI_EINVAL;
	if (write && (flags & FI_INJECT) && len > UREL_FI_INJECT_SIZE)
		return -FI_EINVAL;
	cq_data = write && cq_data;
	op = urel_fi_rma_new(ep, context, FI_RMA | (write ? FI_WRITE : FI_READ),
			     write ? flags : flags & ~FI_INJECT, cq_data ? ep->note_len : 0);
	if (!op)
		return -FI_ENOMEM;
	op->kind = kind;
	op->len = len;
	memcpy(op->riov, riov, rcount * sizeof(*riov));
	op->nriov = rcount;
	op->cq_data = cq_data;
	op->data = data;
	if (count > 1) {
		/* Gathered now (the caller may reuse the buffers of an injected write), or
		 * scattered at the end. */
		op->bounce = malloc(len ? len : 1);
		if (!op->bounce) {
			free(op);
			return -FI_ENOMEM;
		}
		if (write) {
			urel_fi_iov_gather(op->bounce, iov, count);
		} else {
			memcpy(op->liov, iov, count * sizeof(*iov));
			op->nliov = count;
		}
		op->buf = op->bounce;
	} else {
		op->buf = count ? iov[0].iov_base : NULL;
	}
	/* An injected write is one piece, copied by the library when posted, or refused. */
	return urel_fi_rma_submit(ep, op, addr);
}

static ssize_t urel_fi_rw1(struct urel_fi_ep *ep, enum urel_fi_rma_kind kind, const void *buf,
			   size_t len, fi_addr_t addr, uint64_t raddr, uint64_t key, bool cq_data,
			   uint64_t data, void *context, uint64_t flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_rma_iov riov = { .addr = raddr, .len = len, .key = key };

	return urel_fi_rw(ep, kind, &iov, 1, addr, &riov, 1, cq_data, data, context, flags);
}

/* fi_readv/fi_writev: one remote range for all the local iovs. */
static ssize_t urel_fi_rwv(struct urel_fi_ep *ep, enum urel_fi_rma_kind kind,
			   const struct iovec *iov, size_t count, fi_addr_t addr, uint64_t raddr,
			   uint64_t key, void *context)
{
	struct fi_rma_iov riov = { .addr = raddr, .key = key };

	if (urel_fi_iov_len(iov, count, &riov.len))
		return -FI_EINVAL;
	return urel_fi_rw(ep, kind, iov, count, addr, &riov, 1, false, 0, context, ep->tx_flags);
}

static ssize_t urel_fi_read(struct fid_ep *fid, void *buf, size_t len, void *desc, fi_addr_t src,
			    uint64_t addr, uint64_t key, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_rw1(ep, UREL_FI_RMA_READ, buf, len, src, addr, key, false, 0, context,
			   ep->tx_flags);
}

static ssize_t urel_fi_readv(struct fid_ep *fid, const struct iovec *iov, void **desc, size_t count,
			     fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	(void)desc;
	return urel_fi_rwv(urel_fi_ep_of(fid), UREL_FI_RMA_READ, iov, count, src, addr, key,
			   context);
}

static ssize_t urel_fi_readmsg(struct fid_ep *fid, const struct fi_msg_rma *msg, uint64_t flags)
{
	return urel_fi_rw(urel_fi_ep_of(fid), UREL_FI_RMA_READ, msg->msg_iov, msg->iov_count,
			  msg->addr, msg->rma_iov, msg->rma_iov_count, false, 0, msg->context,
			  flags);
}

static ssize_t urel_fi_write(struct fid_ep *fid, const void *buf, size_t len, void *desc,
			     fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_rw1(ep, UREL_FI_RMA_WRITE, buf, len, dest, addr, key, false, 0, context,
			   ep->tx_flags);
}

static ssize_t urel_fi_writev(struct fid_ep *fid, const struct iovec *iov, void **desc,
			      size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
			      void *context)
{
	(void)desc;
	return urel_fi_rwv(urel_fi_ep_of(fid), UREL_FI_RMA_WRITE, iov, count, dest, addr, key,
			   context);
}

static ssize_t urel_fi_writemsg(struct fid_ep *fid, const struct fi_msg_rma *msg, uint64_t flags)
{
	return urel_fi_rw(urel_fi_ep_of(fid), UREL_FI_RMA_WRITE, msg->msg_iov, msg->iov_count,
			  msg->addr, msg->rma_iov, msg->rma_iov_count, flags & FI_REMOTE_CQ_DATA,
			  msg->data, msg->context, flags);
}

static ssize_t urel_fi_inject_write(struct fid_ep *fid, const void *buf, size_t len, fi_addr_t dest,
				    uint64_t addr, uint64_t key)
{
	return urel_fi_rw1(urel_fi_ep_of(fid), UREL_FI_RMA_WRITE, buf, len, dest, addr, key, false,
			   0, NULL, FI_INJECT);
}

static ssize_t urel_fi_writedata(struct fid_ep *fid, const void *buf, size_t len, void *desc,
				 uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
				 void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_rw1(ep, UREL_FI_RMA_WRITE, buf, len, dest, addr, key, true, data, context,
			   ep->tx_flags);
}

static ssize_t urel_fi_injectdata(struct fid_ep *fid, const void *buf, size_t len, uint64_t data,
				  fi_addr_t dest, uint64_t addr, uint64_t key)
{
	return urel_fi_rw1(urel_fi_ep_of(fid), UREL_FI_RMA_WRITE, buf, len, dest, addr, key, true,
			   data, NULL, FI_INJECT);
}

struct fi_ops_rma urel_fi_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = urel_fi_read,
	.readv = urel_fi_readv,
	.readmsg = urel_fi_readmsg,
	.write = urel_fi_write,
	.writev = urel_fi_writev,
	.writemsg = urel_fi_writemsg,
	.inject = urel_fi_inject_write,
	.writedata = urel_fi_writedata,
	.injectdata = urel_fi_injectdata,
};
