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
#include <time.h>

#include "internal.h"

/* How long a thread waits for another one's dispatch before it returns. */
#define UREL_PROGRESS_WAIT_NS 1000000L

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

/* Returns false when the receive handler asked to see @c again later. */
static bool urel_dispatch(struct urel_ep *ep, const struct urel_completion *c, urel_recv_fn fn,
			  void *arg)
{
	if (c->opcode == UREL_OP_RECV) {
		int ret;

		if (c->status)
			return true;
		ret = fn ? fn(ep, c, arg) : 0;
		if (ret == UREL_RECV_AGAIN)
			return false;
		if (ret != UREL_RECV_KEEP)
			urel_ep_release_recv(ep, c->buf);
		return true;
	}
	if (c->context) {
		struct urel_request *req = c->context;

		if (req->complete)
			req->complete(req, c);
	}
	return true;
}

void urel_progress_init(struct urel_ep *ep)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&ep->prog_idle, &attr);
	pthread_condattr_destroy(&attr);
}

void urel_progress_fini(struct urel_ep *ep)
{
	pthread_cond_destroy(&ep->prog_idle);
}

/*
 * The dispatcher changes prog_depth without cq_lock (urel_progress_leave()),
 * so every other thread reads it atomically, even under the lock.
 */
static unsigned int urel_progress_depth(struct urel_ep *ep)
{
	return __atomic_load_n(&ep->prog_depth, __ATOMIC_SEQ_CST);
}

/*
 * Under cq_lock: count the caller among those the dispatcher's leave must
 * wake, before it reads prog_depth. The full fence pairs with the one in
 * urel_progress_leave(): either the dispatcher sees the count, or the
 * caller sees the depth it left.
 */
static void urel_progress_wait_begin(struct urel_ep *ep)
{
	__atomic_add_fetch(&ep->prog_waiters, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * Become the endpoint's dispatcher, or nest in it when this thread already
 * is. Another thread's dispatch is waited out for at most
 * UREL_PROGRESS_WAIT_NS: what it dispatched may be what the caller waits
 * for, and the caller's loop checks again either way. The dispatcher gets
 * the receive handler in *@fn, *@arg and, when no batch is left to finish,
 * up to @n raw completions taken in the same lock hold (*@got, -1 when it
 * took none).
 */
static bool urel_progress_enter(struct urel_ep *ep, urel_recv_fn *fn, void **arg,
				struct usnic_rel_cqe *raw, uint32_t n, int *got)
{
	struct timespec until;

	urel_ep_lock(ep, &ep->cq_lock);
	if (urel_progress_depth(ep) && !pthread_equal(ep->prog_owner, pthread_self())) {
		/* A serial endpoint's caller broke its promise: no wait without the lock. */
		if (ep->serial)
			return false;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += UREL_PROGRESS_WAIT_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		urel_progress_wait_begin(ep);
		while (urel_progress_depth(ep) &&
		       !pthread_cond_timedwait(&ep->prog_idle, &ep->cq_lock, &until))
			;
		__atomic_sub_fetch(&ep->prog_waiters, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&ep->cq_lock);
		return false;
	}
	ep->prog_owner = pthread_self();
	/* Released: urel_progress_idle() reads it without the lock. */
	__atomic_store_n(&ep->prog_depth, ep->prog_depth + 1, __ATOMIC_RELEASE);
	*fn = ep->recv_fn;
	*arg = ep->recv_arg;
	/* After the depth: the take releases cq.idx, which the idle check reads first. */
	*got = -1;
	if (!ep->prog_parked && ep->prog_head == ep->prog_count)
		*got = urel_cq_take_locked(ep, raw, n);
	urel_ep_unlock(ep, &ep->cq_lock);
	return true;
}

/*
 * Translate @got raw completions (taken by urel_progress_enter(), or now if
 * it took none) into a fresh batch; returns its size or an error, as
 * urel_ep_poll_cq() would.
 */
static int urel_progress_refill(struct urel_ep *ep, struct usnic_rel_cqe *raw, int got, uint32_t n)
{
	int ret;

	if (got < 0) {
		urel_ep_lock(ep, &ep->cq_lock);
		got = urel_cq_take_locked(ep, raw, n);
		urel_ep_unlock(ep, &ep->cq_lock);
		if (got < 0)
			return got;
	}
	urel_cq_translate(ep, raw, ep->prog_batch, (uint32_t)got);
	ep->prog_head = 0;
	ep->prog_count = (unsigned int)got;
	/* Completions free room the kernel may have been waiting for. */
	ret = urel_sq_kick(ep);
	if (ret < 0 && !got && ret != -EINTR && ret != -EAGAIN && ret != -ENOMEM)
		return ret;
	return got;
}

/*
 * Without cq_lock in the common case (one thread alone): only the
 * dispatcher changes prog_depth and prog_epoch while the depth is raised.
 * The epoch moves before the depth falls, so a quiesce that saw this
 * dispatch under way sees it over by one or the other. A waiter counts
 * itself, then reads the depth (urel_progress_wait_begin()); we lower the
 * depth, then read the count: with a full fence on both sides one sees
 * the other, and a waiter we see is woken under the lock.
 */
static void urel_progress_leave(struct urel_ep *ep)
{
	unsigned int depth = ep->prog_depth - 1;

	if (!depth)
		__atomic_store_n(&ep->prog_epoch, ep->prog_epoch + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ep->prog_depth, depth, __ATOMIC_SEQ_CST);
	if (depth || !__atomic_load_n(&ep->prog_waiters, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&ep->cq_lock);
	pthread_cond_broadcast(&ep->prog_idle);
	pthread_mutex_unlock(&ep->cq_lock);
}

/*
 * Wait until a dispatch another thread has under way ends, so that the
 * caller may free what its handlers use: the dispatcher read the receive
 * handler and the upper layer's tables when it began. A dispatch that
 * begins after this call takes cq_lock after the caller's changes and sees
 * them. Only the dispatch seen here is waited for (the epoch), not every
 * later one a busy progress thread starts. The calling thread's own
 * dispatch, when it calls from a handler, is its caller's to finish.
 */
void urel_progress_quiesce(struct urel_ep *ep)
{
	unsigned int epoch;

	pthread_mutex_lock(&ep->cq_lock);
	epoch = __atomic_load_n(&ep->prog_epoch, __ATOMIC_RELAXED);
	urel_progress_wait_begin(ep);
	while (urel_progress_depth(ep) && !pthread_equal(ep->prog_owner, pthread_self()) &&
	       __atomic_load_n(&ep->prog_epoch, __ATOMIC_RELAXED) == epoch)
		pthread_cond_wait(&ep->prog_idle, &ep->cq_lock);
	__atomic_sub_fetch(&ep->prog_waiters, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ep->cq_lock);
}

/*
 * Completions are dispatched in ring order: a batch taken from the ring is
 * finished before the next is taken, by this call or by one nested in a
 * callback, and never by two threads at once (a receive handler may depend
 * on the order of messages on a channel). A thread that finds another
 * dispatching returns 0. A receive the handler answers UREL_RECV_AGAIN
 * ends the call.
 */
UREL_API int urel_ep_progress(struct urel_ep *ep, unsigned int max)
{
	struct usnic_rel_cqe raw[UREL_CQ_BATCH];
	bool drained = false;
	struct urel_completion c;
	unsigned int done = 0;
	urel_recv_fn fn;
	void *arg;
	int n, got, err = 0;

	if (!ep)
		return -EINVAL;
	if (!max)
		max = UREL_CQ_BATCH;
	if (urel_progress_idle(ep)) {
		/* What urel_ep_poll_cq() would do: hand over sends left in the rings. */
		n = urel_sq_kick(ep);
		return n < 0 && n != -EINTR && n != -EAGAIN && n != -ENOMEM ? n : 0;
	}
	if (!urel_progress_enter(ep, &fn, &arg, raw, max < UREL_CQ_BATCH ? max : UREL_CQ_BATCH,
				 &got))
		return 0;
	while (done < max) {
		if (!ep->prog_parked && ep->prog_head == ep->prog_count) {
			uint32_t want = max - done < UREL_CQ_BATCH ? max - done : UREL_CQ_BATCH;

			/*
			 * The last take emptied the ring: what came since is
			 * the next call's, and this one saves a lock round.
			 */
			if (drained)
				break;
			n = urel_progress_refill(ep, raw, got, want);
			got = -1;
			if (n <= 0) {
				err = n;
				break;
			}
			drained = (uint32_t)n < want;
		}
		/*
		 * A receive the handler could not take is parked: nothing
		 * after it is dispatched before it, and the next call offers
		 * it again.
		 */
		if (ep->prog_parked) {
			c = ep->prog_again;
			ep->prog_parked = false;
		} else {
			c = ep->prog_batch[ep->prog_head++];
		}
		if (!urel_dispatch(ep, &c, fn, arg)) {
			ep->prog_again = c;
			ep->prog_parked = true;
			break;
		}
		done++;
	}
	urel_progress_leave(ep);
	return done ? (int)done : err;
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
