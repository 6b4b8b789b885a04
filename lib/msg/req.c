// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: completing requests (test, wait and their
 * array forms) and the blocking calls built on them.
 */
#include <errno.h>
#include <stdlib.h>

#include "../internal.h"
#include "msg.h"

/* Hand a completed request's status out and give it back. */
static int urel_msg_reap(struct urel_msg_req *r, struct urel_msg_status *st)
{
	int err = r->st.error;

	if (st)
		*st = r->st;
	urel_msg_req_release(r->m, r);
	return err;
}

static bool urel_msg_req_done(void *arg)
{
	return ((struct urel_msg_req *)arg)->done;
}

UREL_API int urel_msg_test(struct urel_msg_req *r, struct urel_msg_status *st)
{
	struct urel_msg *m;
	bool done;
	int ret;

	if (!r)
		return -EINVAL;
	m = r->m;
	/* A request already done needs no progress pass (a tiny send is done when posted). */
	done = __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
	if (!done) {
		/* urel_msg_progress() without its PLT entry: @m is known valid here. */
		ret = urel_msg_progress_one(m, false);
		if (ret < 0)
			return ret;
		done = __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
	}
	if (!done)
		return 0;
	urel_msg_reap(r, st);
	return 1;
}

/* For callers that progress once for many requests (the provider's CQ read). */
UREL_API int urel_msg_test_noprogress(struct urel_msg_req *r, struct urel_msg_status *st)
{
	if (!r)
		return -EINVAL;
	if (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
		return 0;
	urel_msg_reap(r, st);
	return 1;
}

UREL_API int urel_msg_completions(struct urel_msg *m, uint64_t *count)
{
	if (!m || !count)
		return -EINVAL;
	*count = __atomic_load_n(&m->completed, __ATOMIC_ACQUIRE);
	return 0;
}

UREL_API int urel_msg_wait(struct urel_msg_req *r, struct urel_msg_status *st)
{
	int ret;

	if (!r)
		return -EINVAL;
	ret = urel_msg_block(r->m, urel_msg_req_done, r);
	if (ret)
		return ret;
	return urel_msg_reap(r, st);
}

struct urel_msg_any {
	unsigned int n;
	struct urel_msg_req **reqs;
	unsigned int found;
};

static bool urel_msg_any_done(void *arg)
{
	struct urel_msg_any *a = arg;

	for (unsigned int i = 0; i < a->n; i++) {
		if (a->reqs[i] && a->reqs[i]->done) {
			a->found = i;
			return true;
		}
	}
	return false;
}

/* The index of the first request of @a that is done, else -1. Takes each context's lock. */
static int urel_msg_any_scan(struct urel_msg_any *a)
{
	for (unsigned int i = 0; i < a->n; i++) {
		struct urel_msg_req *r = a->reqs[i];
		bool done;

		if (!r)
			continue;
		urel_msg_lock(&r->m->lock);
		done = r->done;
		urel_msg_unlock(&r->m->lock);
		if (done)
			return (int)i;
	}
	return -1;
}

/*
 * Requests of several contexts: progress each in turn; when none moved,
 * sleep briefly on the first one's device (the others may be on other
 * devices, so no single fd covers them all).
 */
static int urel_msg_any_contexts(struct urel_msg_any *a)
{
	for (;;) {
		struct urel_msg *first = NULL;
		int i = urel_msg_any_scan(a), n, moved = 0;

		if (i >= 0) {
			a->found = (unsigned int)i;
			return 0;
		}
		for (unsigned int k = 0; k < a->n; k++) {
			struct urel_msg *m = a->reqs[k] ? a->reqs[k]->m : NULL;
			bool seen = false;

			for (unsigned int p = 0; m && p < k && !seen; p++)
				seen = a->reqs[p] && a->reqs[p]->m == m;
			if (!m || seen)
				continue;
			if (!first)
				first = m;
			n = urel_msg_progress_one(m, true);
			if (n < 0)
				return n;
			moved += n;
		}
		if (!moved) {
			n = urel_device_wait(first->dev, 1);
			if (n < 0 && n != -EINTR)
				return n;
		}
	}
}

UREL_API int urel_msg_waitany(unsigned int n, struct urel_msg_req **reqs, unsigned int *index,
			      struct urel_msg_status *st)
{
	struct urel_msg_any a = { .n = n, .reqs = reqs };
	struct urel_msg *m = NULL;
	int ret;

	if (!reqs || !index)
		return -EINVAL;
	for (unsigned int i = 0; i < n && !m; i++)
		m = reqs[i] ? reqs[i]->m : NULL;
	if (!m)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		if (reqs[i] && reqs[i]->m != m)
			break;
		if (i == n - 1) {
			/* One context: its blocking loop, which sleeps on its device. */
			ret = urel_msg_block(m, urel_msg_any_done, &a);
			if (ret)
				return ret;
			goto found;
		}
	}
	ret = urel_msg_any_contexts(&a);
	if (ret)
		return ret;
found:
	*index = a.found;
	ret = urel_msg_reap(reqs[a.found], st);
	reqs[a.found] = NULL;
	return ret;
}

UREL_API int urel_msg_waitall(unsigned int n, struct urel_msg_req **reqs,
			      struct urel_msg_status *st)
{
	int first = 0, ret;

	if (!reqs && n)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		if (!reqs[i])
			continue;
		ret = urel_msg_block(reqs[i]->m, urel_msg_req_done, reqs[i]);
		if (ret)
			return ret;
		ret = urel_msg_reap(reqs[i], st ? &st[i] : NULL);
		reqs[i] = NULL;
		if (ret && !first)
			first = ret;
	}
	return first;
}

UREL_API int urel_msg_send(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len,
			   uint64_t tag)
{
	struct urel_msg_req *r;
	int ret = urel_msg_isend(m, peer, buf, len, tag, 0, &r);

	return ret ? ret : urel_msg_wait(r, NULL);
}

UREL_API int urel_msg_ssend(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len,
			    uint64_t tag)
{
	struct urel_msg_req *r;
	int ret = urel_msg_isend(m, peer, buf, len, tag, UREL_MSG_SYNC, &r);

	return ret ? ret : urel_msg_wait(r, NULL);
}

UREL_API int urel_msg_recv(struct urel_msg *m, urel_peer_t peer, void *buf, size_t len,
			   uint64_t tag, uint64_t ignore, struct urel_msg_status *st)
{
	struct urel_msg_req *r;
	int ret = urel_msg_irecv(m, peer, buf, len, tag, ignore, &r);

	return ret ? ret : urel_msg_wait(r, st);
}
