// SPDX-License-Identifier: MIT
/*
 * libusnicrel: the progress engine. It drains completions in batches and
 * dispatches each: a send or one-sided operation to the struct urel_request
 * its context points to, a receive to the endpoint's receive handler, which
 * may keep the buffer. No library lock is held while a callback runs, so
 * callbacks may post, poll or progress again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

UREL_API int urel_ep_set_recv_handler(struct urel_ep *ep, urel_recv_fn fn, void *arg)
{
	if (!ep)
		return -EINVAL;
	pthread_mutex_lock(&ep->cq_lock);
	ep->recv_fn = fn;
	ep->recv_arg = arg;
	pthread_mutex_unlock(&ep->cq_lock);
	return 0;
}

static void urel_dispatch(struct urel_ep *ep, const struct urel_completion *c, urel_recv_fn fn,
			  void *arg)
{
	if (c->opcode == UREL_OP_RECV) {
		if (c->status)
			return;
		if (!fn || fn(ep, c, arg) != UREL_RECV_KEEP)
			urel_ep_release_recv(ep, c->buf);
		return;
	}
	if (c->context) {
		struct urel_request *req = c->context;

		if (req->complete)
			req->complete(req, c);
	}
}

UREL_API int urel_ep_progress(struct urel_ep *ep, unsigned int max)
{
	struct urel_completion batch[UREL_CQ_BATCH];
	unsigned int done = 0;
	urel_recv_fn fn;
	void *arg;
	int n;

	if (!ep)
		return -EINVAL;
	if (!max)
		max = UREL_CQ_BATCH;
	while (done < max) {
		n = urel_ep_poll_cq(ep, batch,
				    max - done < UREL_CQ_BATCH ? max - done : UREL_CQ_BATCH);
		if (n < 0)
			return done ? (int)done : n;
		if (!n)
			break;
		pthread_mutex_lock(&ep->cq_lock);
		fn = ep->recv_fn;
		arg = ep->recv_arg;
		pthread_mutex_unlock(&ep->cq_lock);
		for (int i = 0; i < n; i++)
			urel_dispatch(ep, &batch[i], fn, arg);
		done += (unsigned int)n;
	}
	return (int)done;
}

UREL_API int urel_device_progress(struct urel_device *dev, unsigned int max)
{
	struct urel_ep *local[64], **snap = local;
	unsigned int n = 0, cap = 64;
	int ret, total = 0, err = 0;

	if (!dev)
		return -EINVAL;
	/* Callbacks may create endpoints: dispatch from a snapshot, unlocked. */
	pthread_mutex_lock(&dev->lock);
	for (struct urel_ep *ep = dev->eps; ep; ep = ep->next) {
		if (n == cap) {
			struct urel_ep **grown = malloc(2 * cap * sizeof(*grown));

			if (!grown)
				break;
			memcpy(grown, snap, n * sizeof(*grown));
			if (snap != local)
				free(snap);
			snap = grown;
			cap *= 2;
		}
		snap[n++] = ep;
	}
	pthread_mutex_unlock(&dev->lock);
	for (unsigned int i = 0; i < n; i++) {
		ret = urel_ep_progress(snap[i], max);
		if (ret < 0)
			err = err ? err : ret;
		else
			total += ret;
	}
	if (snap != local)
		free(snap);
	return total ? total : err;
}
