// SPDX-License-Identifier: MIT
/*
 * urel provider: data transfer. Tagged and untagged sends and receives map
 * onto the library's isend/irecv (untagged ones under UREL_FI_UNTAGGED_BIT),
 * FI_PEEK/FI_CLAIM onto its probe and matched probe, fi_cancel onto its
 * cancel. Outstanding operations are tested when the endpoint progresses.
 * Several iovs are gathered into a copy before a send and a receive lands
 * in one, scattered when it completes (iov.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

#define UREL_FI_SYNC_FLAGS (FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE)

static void urel_fi_op_link(struct urel_fi_ep *ep, struct urel_fi_op *op)
{
	op->prev = NULL;
	op->next = ep->ops;
	if (ep->ops)
		ep->ops->prev = op;
	ep->ops = op;
	if (op->flags & FI_SEND)
		ep->ntx++;
	else
		ep->nrx++;
}

static void urel_fi_op_unlink(struct urel_fi_ep *ep, struct urel_fi_op *op)
{
	if (op->prev)
		op->prev->next = op->next;
	else
		ep->ops = op->next;
	if (op->next)
		op->next->prev = op->prev;
	if (op->flags & FI_SEND)
		ep->ntx--;
	else
		ep->nrx--;
}

static fi_addr_t urel_fi_addr_of(const struct urel_fi_ep *ep, urel_peer_t peer)
{
	return peer < ep->naddr_of ? ep->addr_of[peer] : FI_ADDR_NOTAVAIL;
}

/* A send's destination; 0 (no peer) for an address the endpoint does not know. */
static urel_peer_t urel_fi_peer(const struct urel_fi_ep *ep, fi_addr_t addr)
{
	return addr < ep->npeer_of ? ep->peer_of[addr] : 0;
}

/* A receive's source: any peer unless directed receives are on and an address is given. */
static int urel_fi_src(const struct urel_fi_ep *ep, fi_addr_t addr, urel_peer_t *peer)
{
	*peer = UREL_MSG_ANY_PEER;
	if (addr == FI_ADDR_UNSPEC || !(ep->caps & FI_DIRECTED_RECV))
		return 0;
	*peer = urel_fi_peer(ep, addr);
	return *peer ? 0 : -FI_EINVAL;
}

static struct urel_fi_cq *urel_fi_op_cq(const struct urel_fi_ep *ep, uint64_t flags)
{
	return flags & FI_SEND ? ep->tx_cq : ep->rx_cq;
}

/* The tag the application sees: the untagged bit is the provider's. */
static uint64_t urel_fi_user_tag(const struct urel_fi_ep *ep, uint64_t bits)
{
	return UREL_FI_RESERVES_TOP_BIT(ep->caps) ? bits & ~UREL_FI_UNTAGGED_BIT : bits;
}

static void urel_fi_complete(struct urel_fi_ep *ep, struct urel_fi_op *op,
			     const struct urel_msg_status *st)
{
	struct urel_fi_cq *cq;
	struct urel_fi_cqe c;
	int err = st->error;

	if (op->discard && err == -EMSGSIZE)
		err = 0; /* the bytes were meant to go nowhere */
	/* An injected send's, mostly: nothing to report, nothing to scatter. */
	if (!err && !op->report && !op->iov)
		return;
	cq = urel_fi_op_cq(ep, op->flags);
	c = (struct urel_fi_cqe){
		.e = { .op_context = op->context, .flags = op->flags },
		.src = FI_ADDR_NOTAVAIL,
	};
	if (op->flags & FI_RECV) {
		if (op->iov)
			urel_fi_iov_scatter(op->iov, op->iov_count, op->bounce, st->received);
		c.e.len = op->discard ? 0 : st->received;
		c.e.buf = op->discard || !st->received ? NULL : op->buf;
		c.e.tag = op->flags & FI_TAGGED ? urel_fi_user_tag(ep, st->tag) : 0;
		c.src = urel_fi_addr_of(ep, st->peer);
		/* Every message carries the immediate field: 0 when sent without data. */
		c.e.data = st->data;
		if (ep->caps & FI_REMOTE_CQ_DATA)
			c.e.flags |= FI_REMOTE_CQ_DATA;
	}
	if (err) {
		c.err = urel_fi_errno(err);
		c.prov_errno = -err;
		c.olen = st->len > st->received ? st->len - st->received : 0;
		FI_INFO(&urel_fi_prov, op->flags & FI_SEND ? FI_LOG_EP_DATA : FI_LOG_EP_DATA,
			"%s %p failed: %s\n", op->flags & FI_SEND ? "send" : "receive", op->context,
			urel_strerror(err));
	} else if (!op->report) {
		return;
	}
	if (cq)
		urel_fi_cq_push(cq, &c);
}

/*
 * Test every outstanding operation (after one progress pass, not a pass
 * each: quadratic with many in flight), then the notices and RMAs, and
 * say up to which of the library's completions that was. The count is
 * read first (acquire): a request done by then is seen done below, one
 * done later moves the count. Called with ep->lock held.
 */
void urel_fi_ep_collect(struct urel_fi_ep *ep)
{
	struct urel_fi_op *op, *next;
	uint64_t count;
	int ret;

	if (urel_msg_completions(ep->m, &count))
		count = UREL_FI_REAP_DUE;
	for (op = ep->ops; op; op = next) {
		struct urel_msg_status st = { 0 };

		next = op->next;
		ret = urel_msg_test_noprogress(op->req, &st);
		if (ret == 0)
			continue;
		if (ret < 0) {
			UREL_FI_WARN(FI_LOG_EP_DATA, "test: %s\n", urel_strerror(ret));
			continue;
		}
		urel_fi_op_unlink(ep, op);
		urel_fi_complete(ep, op, &st);
		urel_fi_op_free(ep, op);
	}
	urel_fi_note_progress(ep);
	urel_fi_rma_progress(ep);
	/* RMAs and a notice receive not posted again are not in the count: test them each time. */
	if (ep->rmas || (ep->note_buf && !ep->note_rx))
		count = UREL_FI_REAP_DUE;
	/* After the completions pushed above (see cq.c). */
	__atomic_store_n(&ep->reaped_at, count, __ATOMIC_RELEASE);
}

/* Progress once, then collect. Called with ep->lock held. */
void urel_fi_ep_reap(struct urel_fi_ep *ep)
{
	int ret = urel_msg_progress(ep->m);

	if (ret < 0)
		UREL_FI_WARN(FI_LOG_EP_DATA, "progress: %s\n", urel_strerror(ret));
	urel_fi_ep_collect(ep);
}

/*
 * An operation of @ep, with room for @niov iovs to scatter a receive over
 * (0: none); one without iovs is a finished one reused when there is one,
 * so that a message costs no allocation. Called with ep->lock held.
 */
static struct urel_fi_op *urel_fi_op_new(struct urel_fi_ep *ep, void *context, uint64_t flags,
					 void *buf, bool report, size_t niov)
{
	struct urel_fi_op *op = niov ? NULL : ep->spare_ops;

	if (op) {
		ep->spare_ops = op->next;
		ep->nspare_ops--;
		memset(op, 0, offsetof(struct urel_fi_op, inject));
	} else {
		op = calloc(1, sizeof(*op) + niov * sizeof(struct iovec));
		if (!op)
			return NULL;
	}
	if (niov) {
		op->iov = (struct iovec *)(op + 1);
		op->iov_count = niov;
	}
	op->context = context;
	op->flags = flags;
	op->buf = buf;
	op->report = report;
	return op;
}

/* Done with @op (not linked): keep it for reuse, or free it. Called with ep->lock held. */
void urel_fi_op_free(struct urel_fi_ep *ep, struct urel_fi_op *op)
{
	if (op->bounce != op->inject)
		free(op->bounce);
	if (op->iov || ep->nspare_ops >= UREL_FI_SPARE_OPS) {
		free(op);
		return;
	}
	op->next = ep->spare_ops;
	ep->spare_ops = op;
	ep->nspare_ops++;
}

void urel_fi_op_free_spares(struct urel_fi_ep *ep)
{
	while (ep->spare_ops) {
		struct urel_fi_op *op = ep->spare_ops;

		ep->spare_ops = op->next;
		free(op);
	}
	ep->nspare_ops = 0;
}

static ssize_t urel_fi_ret(int ret)
{
	if (ret == -EAGAIN || ret == -ENOBUFS)
		return -FI_EAGAIN;
	return ret;
}

/*
 * A send the library finished as it posted it (a tiny or eager standard
 * send: its bytes are in the ring or the staging area), as most are:
 * complete it now, with no record to keep and test at every poll; false
 * if it is still out. When nothing else completed since the operations
 * were last tested (@before, read before the send, was the count then),
 * they need no test now either. Called with ep->lock held.
 */
static bool urel_fi_send_done(struct urel_fi_ep *ep, struct urel_fi_op *op, uint64_t before)
{
	struct urel_msg_status st = { 0 };
	uint64_t after;

	if (urel_msg_test_noprogress(op->req, &st) != 1)
		return false;
	urel_fi_complete(ep, op, &st);
	urel_fi_op_free(ep, op);
	if (before != UREL_FI_REAP_DUE && before == ep->reaped_at &&
	    !urel_msg_completions(ep->m, &after) && after == before + 1)
		__atomic_store_n(&ep->reaped_at, after, __ATOMIC_RELEASE);
	return true;
}

/*
 * A standard send of one buffer posted at once, as most small ones are:
 * its bytes leave @buf before the call returns (so an inject needs no copy
 * of its own), with no operation to keep and test, and its completion, if
 * one is wanted, is pushed now. -FI_EAGAIN when it would have to wait (or
 * is not eager): the caller takes the general path. Called with ep->lock held.
 */
static ssize_t urel_fi_send_now(struct urel_fi_ep *ep, urel_peer_t peer, const void *buf,
				size_t len, uint64_t bits, uint64_t data, void *context,
				bool tagged, bool report)
{
	struct urel_fi_cqe c = {
		.e = { .op_context = context, .flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG) },
		.src = FI_ADDR_NOTAVAIL,
	};
	int ret = urel_msg_inject_data(ep->m, peer, buf, len, bits, data);

	if (ret)
		return urel_fi_ret(ret);
	ep->posted[UREL_FI_POSTED_SEND]++;
	if (report && ep->tx_cq)
		urel_fi_cq_push(ep->tx_cq, &c);
	return 0;
}

static ssize_t urel_fi_send(struct urel_fi_ep *ep, const struct iovec *iov, size_t count,
			    fi_addr_t dest, uint64_t bits, uint64_t data, void *context,
			    uint64_t flags, bool tagged)
{
	bool report = !(flags & FI_INJECT) && (!ep->tx_selective || (flags & FI_COMPLETION));
	struct urel_fi_op *op;
	urel_peer_t peer;
	const void *buf;
	uint64_t before;
	size_t len;
	ssize_t ret;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!(ep->caps & (tagged ? FI_TAGGED : FI_MSG)))
		return -FI_EOPNOTSUPP;
	if (tagged && UREL_FI_RESERVES_TOP_BIT(ep->caps) && (bits & UREL_FI_UNTAGGED_BIT))
		return -FI_EINVAL;
	if (urel_fi_iov_bytes(iov, count, &len))
		return -FI_EINVAL;
	if ((flags & FI_INJECT) && len > UREL_FI_INJECT_SIZE)
		return -FI_EINVAL;
	buf = count ? iov[0].iov_base : NULL;
	urel_fi_ep_lock(ep);
	peer = urel_fi_peer(ep, dest);
	if (!peer) {
		ret = -FI_EINVAL;
		goto out;
	}
	if (count <= 1 && !(flags & UREL_FI_SYNC_FLAGS)) {
		ret = urel_fi_send_now(ep, peer, buf, len, bits,
				       flags & FI_REMOTE_CQ_DATA ? data : 0, context, tagged,
				       report);
		if (ret != -FI_EAGAIN)
			goto out;
	}
	if (ep->ntx >= UREL_FI_QUEUE_SIZE) {
		urel_fi_ep_reap(ep);
		if (ep->ntx >= UREL_FI_QUEUE_SIZE) {
			ret = -FI_EAGAIN;
			goto out;
		}
	}
	op = urel_fi_op_new(ep, context, FI_SEND | (tagged ? FI_TAGGED : FI_MSG), (void *)buf,
			    report, 0);
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	if ((flags & FI_INJECT) || count > 1) {
		/* One buffer for the library; an injected one the caller may reuse at once. */
		op->bounce = len <= sizeof(op->inject) ? op->inject : malloc(len);
		if (!op->bounce) {
			urel_fi_op_free(ep, op);
			ret = -FI_ENOMEM;
			goto out;
		}
		urel_fi_iov_gather(op->bounce, iov, count);
		buf = op->bounce;
	}
	if (urel_msg_completions(ep->m, &before))
		before = UREL_FI_REAP_DUE;
	ret = urel_msg_isend_data(ep->m, peer, buf, len, bits, flags & FI_REMOTE_CQ_DATA ? data : 0,
				  flags & UREL_FI_SYNC_FLAGS ? UREL_MSG_SYNC : 0, &op->req);
	if (ret) {
		urel_fi_op_free(ep, op);
		ret = urel_fi_ret((int)ret);
		goto out;
	}
	ep->posted[UREL_FI_POSTED_SEND]++;
	if (!urel_fi_send_done(ep, op, before))
		urel_fi_op_link(ep, op);
	UREL_FI_DBG(FI_LOG_EP_DATA, "send %zu bytes to %llu bits %#llx\n", len,
		    (unsigned long long)dest, (unsigned long long)bits);
out:
	urel_fi_ep_unlock(ep);
	return ret;
}

/* A send of one buffer. */
static ssize_t urel_fi_send1(struct urel_fi_ep *ep, const void *buf, size_t len, fi_addr_t dest,
			     uint64_t bits, uint64_t data, void *context, uint64_t flags,
			     bool tagged)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return urel_fi_send(ep, &iov, 1, dest, bits, data, context, flags, tagged);
}

/* FI_PEEK: report what is waiting (FI_CLAIM: and take it), or FI_ENOMSG. */
static ssize_t urel_fi_peek(struct urel_fi_ep *ep, urel_peer_t peer, uint64_t bits, uint64_t ignore,
			    void *context, uint64_t flags, uint64_t cflags)
{
	struct urel_msg_handle *h = NULL;
	struct urel_msg_status st = { 0 };
	struct urel_fi_cqe c = {
		.e = { .op_context = context, .flags = cflags },
		.src = FI_ADDR_NOTAVAIL,
	};
	bool claim = flags & (FI_CLAIM | FI_DISCARD);
	int ret;

	if (claim && !context)
		return -FI_EINVAL;
	ret = claim ? urel_msg_improbe(ep->m, peer, bits, ignore, &h, &st)
		    : urel_msg_iprobe(ep->m, peer, bits, ignore, &st);
	if (ret < 0)
		return urel_fi_ret(ret);
	if (!ret) {
		c.err = FI_ENOMSG;
		c.prov_errno = ENOMSG;
	} else {
		c.e.len = st.len;
		c.e.tag = cflags & FI_TAGGED ? urel_fi_user_tag(ep, st.tag) : 0;
		c.src = urel_fi_addr_of(ep, st.peer);
		c.e.data = st.data;
		if (ep->caps & FI_REMOTE_CQ_DATA)
			c.e.flags |= FI_REMOTE_CQ_DATA;
	}
	if (ret && (flags & FI_DISCARD)) {
		struct urel_fi_op *op = urel_fi_op_new(ep, context, FI_RECV, NULL, false, 0);

		if (!op)
			return -FI_ENOMEM;
		op->discard = true;
		ret = urel_msg_imrecv(h, NULL, 0, &op->req);
		if (ret) {
			urel_fi_op_free(ep, op);
			return urel_fi_ret(ret);
		}
		urel_fi_op_link(ep, op);
	} else if (ret && claim) {
		((struct fi_context *)context)->internal[0] = h;
	}
	if (ep->rx_cq)
		urel_fi_cq_push(ep->rx_cq, &c);
	return 0;
}

static ssize_t urel_fi_recv(struct urel_fi_ep *ep, const struct iovec *iov, size_t count,
			    fi_addr_t src, uint64_t bits, uint64_t ignore, void *context,
			    uint64_t flags, bool tagged)
{
	uint64_t cflags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	bool report = !ep->rx_selective || (flags & FI_COMPLETION);
	struct urel_fi_op *op;
	urel_peer_t peer;
	void *buf;
	size_t len;
	ssize_t ret;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!(ep->caps & (tagged ? FI_TAGGED : FI_MSG)))
		return -FI_EOPNOTSUPP;
	if (urel_fi_iov_bytes(iov, count, &len))
		return -FI_EINVAL;
	buf = count ? iov[0].iov_base : NULL;
	if (UREL_FI_RESERVES_TOP_BIT(ep->caps)) {
		if (tagged) {
			bits &= ~UREL_FI_UNTAGGED_BIT;
			ignore &= ~UREL_FI_UNTAGGED_BIT;
		} else {
			bits = UREL_FI_UNTAGGED_BIT;
			ignore = 0;
		}
	}
	urel_fi_ep_lock(ep);
	ret = urel_fi_src(ep, src, &peer);
	if (ret)
		goto out;
	if (flags & FI_PEEK) {
		ret = urel_fi_peek(ep, peer, bits, ignore, context, flags, cflags);
		goto out;
	}
	if (ep->nrx >= UREL_FI_QUEUE_SIZE) {
		ret = -FI_EAGAIN;
		goto out;
	}
	op = urel_fi_op_new(ep, context, cflags, buf, report, count > 1 ? count : 0);
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	if (op->iov) {
		/* The message lands in one buffer, scattered over the iovs when complete. */
		memcpy(op->iov, iov, count * sizeof(*iov));
		op->bounce = malloc(len ? len : 1);
		if (!op->bounce) {
			urel_fi_op_free(ep, op);
			ret = -FI_ENOMEM;
			goto out;
		}
		buf = op->bounce;
	}
	if (flags & FI_CLAIM) {
		struct fi_context *ctx = context;
		struct urel_msg_handle *h = ctx ? ctx->internal[0] : NULL;

		if (!h) {
			ret = -FI_EINVAL;
			goto fail;
		}
		op->discard = flags & FI_DISCARD;
		ret = op->discard ? urel_msg_imrecv(h, NULL, 0, &op->req)
				  : urel_msg_imrecv(h, buf, len, &op->req);
		if (!ret)
			ctx->internal[0] = NULL;
	} else {
		ret = urel_msg_irecv(ep->m, peer, buf, len, bits, ignore, &op->req);
	}
	if (ret) {
		ret = urel_fi_ret((int)ret);
		goto fail;
	}
	urel_fi_op_link(ep, op);
	ep->posted[UREL_FI_POSTED_RECV]++;
	UREL_FI_DBG(FI_LOG_EP_DATA, "receive %zu bytes from %llu bits %#llx ignore %#llx\n", len,
		    (unsigned long long)src, (unsigned long long)bits, (unsigned long long)ignore);
	goto out;
fail:
	urel_fi_op_free(ep, op);
out:
	urel_fi_ep_unlock(ep);
	return ret;
}

/* A receive into one buffer. */
static ssize_t urel_fi_recv1(struct urel_fi_ep *ep, void *buf, size_t len, fi_addr_t src,
			     uint64_t bits, uint64_t ignore, void *context, uint64_t flags,
			     bool tagged)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return urel_fi_recv(ep, &iov, 1, src, bits, ignore, context, flags, tagged);
}

ssize_t urel_fi_ep_cancel(fid_t fid, void *context)
{
	struct urel_fi_ep *ep = container_of(fid, struct urel_fi_ep, fid.fid);
	ssize_t ret = -FI_ENOENT;

	urel_fi_ep_lock(ep);
	for (struct urel_fi_op *op = ep->ops; op; op = op->next) {
		if (op->context != context || !(op->flags & FI_RECV) || op->cancelled)
			continue;
		/* Matched already (or a claimed message): it completes normally. */
		if (!urel_msg_cancel(op->req)) {
			op->cancelled = true;
			ret = 0;
		}
		break;
	}
	urel_fi_ep_unlock(ep);
	return ret;
}

static struct urel_fi_ep *urel_fi_ep_of(struct fid_ep *fid)
{
	return container_of(fid, struct urel_fi_ep, fid);
}

/* --- Untagged ------------------------------------------------------------- */

static ssize_t urel_fi_msg_recv(struct fid_ep *fid, void *buf, size_t len, void *desc,
				fi_addr_t src, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_recv1(ep, buf, len, src, 0, 0, context, ep->rx_flags, false);
}

static ssize_t urel_fi_msg_recvv(struct fid_ep *fid, const struct iovec *iov, void **desc,
				 size_t count, fi_addr_t src, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_recv(ep, iov, count, src, 0, 0, context, ep->rx_flags, false);
}

static ssize_t urel_fi_msg_recvmsg(struct fid_ep *fid, const struct fi_msg *msg, uint64_t flags)
{
	return urel_fi_recv(urel_fi_ep_of(fid), msg->msg_iov, msg->iov_count, msg->addr, 0, 0,
			    msg->context, flags, false);
}

static ssize_t urel_fi_msg_send(struct fid_ep *fid, const void *buf, size_t len, void *desc,
				fi_addr_t dest, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_send1(ep, buf, len, dest, UREL_FI_UNTAGGED_BIT, 0, context, ep->tx_flags,
			     false);
}

static ssize_t urel_fi_msg_sendv(struct fid_ep *fid, const struct iovec *iov, void **desc,
				 size_t count, fi_addr_t dest, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_send(ep, iov, count, dest, UREL_FI_UNTAGGED_BIT, 0, context, ep->tx_flags,
			    false);
}

static ssize_t urel_fi_msg_sendmsg(struct fid_ep *fid, const struct fi_msg *msg, uint64_t flags)
{
	return urel_fi_send(urel_fi_ep_of(fid), msg->msg_iov, msg->iov_count, msg->addr,
			    UREL_FI_UNTAGGED_BIT, msg->data, msg->context, flags, false);
}

static ssize_t urel_fi_msg_inject(struct fid_ep *fid, const void *buf, size_t len, fi_addr_t dest)
{
	return urel_fi_send1(urel_fi_ep_of(fid), buf, len, dest, UREL_FI_UNTAGGED_BIT, 0, NULL,
			     FI_INJECT, false);
}

static ssize_t urel_fi_msg_senddata(struct fid_ep *fid, const void *buf, size_t len, void *desc,
				    uint64_t data, fi_addr_t dest, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_send1(ep, buf, len, dest, UREL_FI_UNTAGGED_BIT, data, context,
			     ep->tx_flags | FI_REMOTE_CQ_DATA, false);
}

static ssize_t urel_fi_msg_injectdata(struct fid_ep *fid, const void *buf, size_t len,
				      uint64_t data, fi_addr_t dest)
{
	return urel_fi_send1(urel_fi_ep_of(fid), buf, len, dest, UREL_FI_UNTAGGED_BIT, data, NULL,
			     FI_INJECT | FI_REMOTE_CQ_DATA, false);
}

struct fi_ops_msg urel_fi_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = urel_fi_msg_recv,
	.recvv = urel_fi_msg_recvv,
	.recvmsg = urel_fi_msg_recvmsg,
	.send = urel_fi_msg_send,
	.sendv = urel_fi_msg_sendv,
	.sendmsg = urel_fi_msg_sendmsg,
	.inject = urel_fi_msg_inject,
	.senddata = urel_fi_msg_senddata,
	.injectdata = urel_fi_msg_injectdata,
};

/* --- Tagged --------------------------------------------------------------- */

static ssize_t urel_fi_t_recv(struct fid_ep *fid, void *buf, size_t len, void *desc, fi_addr_t src,
			      uint64_t tag, uint64_t ignore, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_recv1(ep, buf, len, src, tag, ignore, context, ep->rx_flags, true);
}

static ssize_t urel_fi_t_recvv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			       size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore,
			       void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_recv(ep, iov, count, src, tag, ignore, context, ep->rx_flags, true);
}

static ssize_t urel_fi_t_recvmsg(struct fid_ep *fid, const struct fi_msg_tagged *msg,
				 uint64_t flags)
{
	return urel_fi_recv(urel_fi_ep_of(fid), msg->msg_iov, msg->iov_count, msg->addr, msg->tag,
			    msg->ignore, msg->context, flags, true);
}

static ssize_t urel_fi_t_send(struct fid_ep *fid, const void *buf, size_t len, void *desc,
			      fi_addr_t dest, uint64_t tag, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_send1(ep, buf, len, dest, tag, 0, context, ep->tx_flags, true);
}

static ssize_t urel_fi_t_sendv(struct fid_ep *fid, const struct iovec *iov, void **desc,
			       size_t count, fi_addr_t dest, uint64_t tag, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_send(ep, iov, count, dest, tag, 0, context, ep->tx_flags, true);
}

static ssize_t urel_fi_t_sendmsg(struct fid_ep *fid, const struct fi_msg_tagged *msg,
				 uint64_t flags)
{
	return urel_fi_send(urel_fi_ep_of(fid), msg->msg_iov, msg->iov_count, msg->addr, msg->tag,
			    msg->data, msg->context, flags, true);
}

static ssize_t urel_fi_t_inject(struct fid_ep *fid, const void *buf, size_t len, fi_addr_t dest,
				uint64_t tag)
{
	return urel_fi_send1(urel_fi_ep_of(fid), buf, len, dest, tag, 0, NULL, FI_INJECT, true);
}

static ssize_t urel_fi_t_senddata(struct fid_ep *fid, const void *buf, size_t len, void *desc,
				  uint64_t data, fi_addr_t dest, uint64_t tag, void *context)
{
	struct urel_fi_ep *ep = urel_fi_ep_of(fid);

	(void)desc;
	return urel_fi_send1(ep, buf, len, dest, tag, data, context,
			     ep->tx_flags | FI_REMOTE_CQ_DATA, true);
}

static ssize_t urel_fi_t_injectdata(struct fid_ep *fid, const void *buf, size_t len, uint64_t data,
				    fi_addr_t dest, uint64_t tag)
{
	return urel_fi_send1(urel_fi_ep_of(fid), buf, len, dest, tag, data, NULL,
			     FI_INJECT | FI_REMOTE_CQ_DATA, true);
}

struct fi_ops_tagged urel_fi_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = urel_fi_t_recv,
	.recvv = urel_fi_t_recvv,
	.recvmsg = urel_fi_t_recvmsg,
	.send = urel_fi_t_send,
	.sendv = urel_fi_t_sendv,
	.sendmsg = urel_fi_t_sendmsg,
	.inject = urel_fi_t_inject,
	.senddata = urel_fi_t_senddata,
	.injectdata = urel_fi_t_injectdata,
};
