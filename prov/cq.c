// SPDX-License-Identifier: MIT
/*
 * urel provider: completion queues. Completions wait in a FIFO in the order
 * the operations finished, errors in line with the rest: fi_cq_read stops in
 * front of an error and says -FI_EAVAIL, fi_cq_readerr takes it. Reading
 * progresses every endpoint bound to the queue first (manual progress).
 *
 * A busy poll mostly finds nothing: then it takes no lock. The endpoints'
 * list is a fixed array read with atomic loads (binding and unbinding
 * store under the lock), and the ring's count is stored atomically under
 * the lock and read without it: an endpoint's pass that pushed a
 * completion published it before its endpoint said it was reaped
 * (urel_fi_ep_progress(), release and acquire), so a poll that found the
 * endpoint quiet and then reads the count sees that completion.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "urel_fi.h"

static size_t urel_fi_cq_entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return 0;
	}
}

int urel_fi_cq_push(struct urel_fi_cq *cq, const struct urel_fi_cqe *c)
{
	urel_fi_cq_lock(cq);
	if (cq->count == cq->cap) {
		size_t cap = cq->cap ? cq->cap * 2 : 256;
		struct urel_fi_cqe *ring = malloc(cap * sizeof(*ring));

		if (!ring) {
			urel_fi_cq_unlock(cq);
			UREL_FI_WARN(FI_LOG_CQ, "completion lost: out of memory\n");
			return -FI_ENOMEM;
		}
		for (size_t i = 0; i < cq->count; i++)
			ring[i] = cq->ring[(cq->head + i) % cq->cap];
		free(cq->ring);
		cq->ring = ring;
		cq->cap = cap;
		cq->head = 0;
	}
	cq->ring[(cq->head + cq->count) % cq->cap] = *c;
	__atomic_store_n(&cq->count, cq->count + 1, __ATOMIC_RELAXED);
	urel_fi_cq_unlock(cq);
	return 0;
}

/* Endpoints are progressed without the CQ lock (they take it to push). */
static void urel_fi_cq_progress(struct urel_fi_cq *cq)
{
	size_t n = __atomic_load_n(&cq->neps, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < n; i++) {
		struct urel_fi_ep *ep = __atomic_load_n(&cq->eps[i], __ATOMIC_ACQUIRE);

		if (ep)
			urel_fi_ep_progress(ep);
	}
}

static void urel_fi_cq_copy(const struct urel_fi_cq *cq, const struct urel_fi_cqe *c, void *dst)
{
	switch (cq->format) {
	case FI_CQ_FORMAT_CONTEXT: {
		struct fi_cq_entry *e = dst;

		e->op_context = c->e.op_context;
		break;
	}
	case FI_CQ_FORMAT_MSG: {
		struct fi_cq_msg_entry *e = dst;

		e->op_context = c->e.op_context;
		e->flags = c->e.flags;
		e->len = c->e.len;
		break;
	}
	case FI_CQ_FORMAT_DATA: {
		struct fi_cq_data_entry *e = dst;

		e->op_context = c->e.op_context;
		e->flags = c->e.flags;
		e->len = c->e.len;
		e->buf = c->e.buf;
		e->data = c->e.data;
		break;
	}
	default:
		*(struct fi_cq_tagged_entry *)dst = c->e;
	}
}

static ssize_t urel_fi_cq_readfrom(struct fid_cq *fid, void *buf, size_t count, fi_addr_t *src)
{
	struct urel_fi_cq *cq = container_of(fid, struct urel_fi_cq, fid);
	unsigned char *out = buf;
	ssize_t n = 0;
	size_t esz;

	urel_fi_cq_progress(cq);
	/* Nothing there (see the top): no lock. */
	if (!__atomic_load_n(&cq->count, __ATOMIC_RELAXED))
		return -FI_EAGAIN;
	esz = urel_fi_cq_entry_size(cq->format);
	urel_fi_cq_lock(cq);
	while ((size_t)n < count && cq->count) {
		const struct urel_fi_cqe *c = &cq->ring[cq->head];

		if (c->err)
			break;
		urel_fi_cq_copy(cq, c, out + (size_t)n * esz);
		if (src)
			src[n] = c->src;
		cq->head = (cq->head + 1) % cq->cap;
		__atomic_store_n(&cq->count, cq->count - 1, __ATOMIC_RELAXED);
		n++;
	}
	if (!n)
		n = cq->count ? -FI_EAVAIL : -FI_EAGAIN;
	urel_fi_cq_unlock(cq);
	return n;
}

static ssize_t urel_fi_cq_read(struct fid_cq *fid, void *buf, size_t count)
{
	return urel_fi_cq_readfrom(fid, buf, count, NULL);
}

static ssize_t urel_fi_cq_readerr(struct fid_cq *fid, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct urel_fi_cq *cq = container_of(fid, struct urel_fi_cq, fid);
	const struct urel_fi_cqe *c;

	(void)flags;
	urel_fi_cq_lock(cq);
	if (!cq->count || !cq->ring[cq->head].err) {
		urel_fi_cq_unlock(cq);
		return -FI_EAGAIN;
	}
	c = &cq->ring[cq->head];
	buf->op_context = c->e.op_context;
	buf->flags = c->e.flags;
	buf->len = c->e.len;
	buf->buf = c->e.buf;
	buf->data = c->e.data;
	buf->tag = c->e.tag;
	buf->olen = c->olen;
	buf->err = c->err;
	buf->prov_errno = c->prov_errno;
	/* No provider error data: the application's pointer and size are left alone. */
	UREL_FI_DBG(FI_LOG_CQ, "error completion: %s (%s)\n", fi_strerror(c->err),
		    urel_strerror(-c->prov_errno));
	cq->head = (cq->head + 1) % cq->cap;
	__atomic_store_n(&cq->count, cq->count - 1, __ATOMIC_RELAXED);
	urel_fi_cq_unlock(cq);
	return 1;
}

static long long urel_fi_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Blocking read: progress, and sleep on the device between rounds. */
static ssize_t urel_fi_cq_sreadfrom(struct fid_cq *fid, void *buf, size_t count, fi_addr_t *src,
				    const void *cond, int timeout)
{
	struct urel_fi_cq *cq = container_of(fid, struct urel_fi_cq, fid);
	long long end = timeout < 0 ? -1 : urel_fi_now_ms() + timeout;
	ssize_t n;

	(void)cond;
	for (;;) {
		long long left;

		n = urel_fi_cq_readfrom(fid, buf, count, src);
		if (n != -FI_EAGAIN)
			return n;
		left = end < 0 ? 50 : end - urel_fi_now_ms();
		if (left <= 0)
			return -FI_EAGAIN;
		urel_device_wait(cq->dom->dev, left < 50 ? (int)left : 50);
	}
}

static ssize_t urel_fi_cq_sread(struct fid_cq *fid, void *buf, size_t count, const void *cond,
				int timeout)
{
	return urel_fi_cq_sreadfrom(fid, buf, count, NULL, cond, timeout);
}

static int urel_fi_cq_signal(struct fid_cq *fid)
{
	(void)fid;
	return -FI_ENOSYS;
}

static const char *urel_fi_cq_strerror(struct fid_cq *fid, int prov_errno, const void *err_data,
				       char *buf, size_t len)
{
	const char *s = urel_strerror(-prov_errno);

	(void)fid, (void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
	}
	return buf && len ? buf : s;
}

static int urel_fi_cq_close(struct fid *fid)
{
	struct urel_fi_cq *cq = container_of(fid, struct urel_fi_cq, fid.fid);

	if (cq->neps)
		return -FI_EBUSY;
	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

static struct fi_ops urel_fi_cq_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = urel_fi_cq_close,
	.bind = urel_fi_no_bind,
	.control = urel_fi_no_control,
	.ops_open = urel_fi_no_ops_open,
};

static struct fi_ops_cq urel_fi_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = urel_fi_cq_read,
	.readfrom = urel_fi_cq_readfrom,
	.readerr = urel_fi_cq_readerr,
	.sread = urel_fi_cq_sread,
	.sreadfrom = urel_fi_cq_sreadfrom,
	.signal = urel_fi_cq_signal,
	.strerror = urel_fi_cq_strerror,
};

int urel_fi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cqp,
		    void *context)
{
	struct urel_fi_domain *d = container_of(domain, struct urel_fi_domain, fid);
	enum fi_cq_format fmt =
		attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	struct urel_fi_cq *cq;

	if (!urel_fi_cq_entry_size(fmt))
		return -FI_ENOSYS;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) {
		UREL_FI_INFO(FI_LOG_CQ, "wait object %d not supported\n", attr->wait_obj);
		return -FI_ENOSYS;
	}
	if (attr->flags & FI_AFFINITY)
		return -FI_ENOSYS;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->dom = d;
	cq->format = fmt;
	cq->locked = d->cq_locks;
	pthread_mutex_init(&cq->lock, NULL);
	cq->fid.fid.fclass = FI_CLASS_CQ;
	cq->fid.fid.context = context;
	cq->fid.fid.ops = &urel_fi_cq_fid_ops;
	cq->fid.ops = &urel_fi_cq_ops;
	*cqp = &cq->fid;
	return 0;
}

int urel_fi_cq_bind_ep(struct urel_fi_cq *cq, struct urel_fi_ep *ep)
{
	urel_fi_cq_lock(cq);
	for (size_t i = 0; i < cq->neps; i++) {
		if (cq->eps[i] == ep) {
			urel_fi_cq_unlock(cq);
			return 0;
		}
	}
	if (cq->neps == UREL_FI_CQ_EPS) {
		urel_fi_cq_unlock(cq);
		return -FI_ENOSPC;
	}
	/* The entry before the count that shows it (lock-free readers, urel_fi_cq_progress()). */
	__atomic_store_n(&cq->eps[cq->neps], ep, __ATOMIC_RELEASE);
	__atomic_store_n(&cq->neps, cq->neps + 1, __ATOMIC_RELEASE);
	urel_fi_cq_unlock(cq);
	return 0;
}

void urel_fi_cq_unbind_ep(struct urel_fi_cq *cq, struct urel_fi_ep *ep)
{
	urel_fi_cq_lock(cq);
	for (size_t i = 0; i < cq->neps; i++) {
		if (cq->eps[i] == ep) {
			size_t last = cq->neps - 1;

			/* The last one moves into the gap, then the count drops. */
			__atomic_store_n(&cq->eps[i], cq->eps[last], __ATOMIC_RELEASE);
			__atomic_store_n(&cq->neps, last, __ATOMIC_RELEASE);
			__atomic_store_n(&cq->eps[last], NULL, __ATOMIC_RELEASE);
			break;
		}
	}
	urel_fi_cq_unlock(cq);
}
