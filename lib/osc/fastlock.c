// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the origin side of exclusive locks held through the
 * target's lock word (lockword.c). A lock is one remote compare-and-swap
 * 0 -> OWNER(me), a release one OWNER(me) -> 0, both applied by the
 * target's kernel: the target process takes no part unless someone waits.
 * A swap that finds the word taken falls back to the lock manager's
 * request (FIFO); a release that finds WAITERS set tells the manager,
 * which hands the word on. Shared locks, lock_all, NOCHECK and locks to
 * ourselves keep to the manager. UREL_WIN_FAST_LOCK=0 turns this off.
 */
#include <errno.h>
#include <string.h>

#include "osc.h"

bool urel_osc_word_eligible(const struct urel_win *w, int target)
{
	const struct urel_osc_target *t = &w->t[target];

	return w->fast_locks && target != w->rank && t->info.has_word &&
	       t->lock == UREL_WIN_LOCK_EXCLUSIVE && !t->lock_nocheck;
}

static bool urel_osc_word_done(struct urel_win *w, void *arg)
{
	const struct urel_osc_word_op *op = arg;

	(void)w;
	return op[0].done && op[1].done;
}

static bool urel_osc_word_unlocked(struct urel_win *w, void *arg)
{
	return w->t[*(int *)arg].unlocked;
}

/*
 * Post @n swaps of @want (in order on one channel) and wait for all; the
 * first failure. Their outcome lands in the target's state, not on our
 * stack: a wait that fails leaves them in flight.
 */
static int urel_osc_word_run(struct urel_win *w, int target, const struct urel_osc_word_op *want,
			     int n, uint64_t *old)
{
	struct urel_osc_word_op *op = w->t[target].wop;
	int ret = 0, posted = 0;

	pthread_mutex_lock(&w->ctx->lock);
	/* Known dead: nothing to post (its late failure would taint the next call). */
	if (urel_osc_is_dead(w->ctx, w->t[target].peer)) {
		pthread_mutex_unlock(&w->ctx->lock);
		return UREL_WIN_ERR_PEER;
	}
	for (int i = 0; i < 2; i++) {
		op[i] = want[i];
		op[i].done = i >= n;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	while (posted < n && !ret) {
		ret = urel_osc_word_cas(w, target, &op[posted]);
		posted += !ret;
	}
	pthread_mutex_lock(&w->ctx->lock);
	for (int i = posted; i < n; i++)
		op[i].done = true; /* never posted */
	pthread_mutex_unlock(&w->ctx->lock);
	if (posted) {
		int err = urel_osc_wait(w, urel_osc_word_done, op);

		ret = ret ? ret : err;
	}
	pthread_mutex_lock(&w->ctx->lock);
	for (int i = 0; i < n && !ret; i++) {
		ret = op[i].status;
		old[i] = op[i].old;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	return urel_osc_peer_fatal(ret) ? UREL_WIN_ERR_PEER : ret;
}

int urel_osc_word_lock(struct urel_win *w, int target)
{
	uint64_t me = UREL_OSC_LW_OWNER(w->rank), old[2];
	struct urel_osc_word_op op[2] = { { .compare = 0, .swap = me } };
	int ret = urel_osc_word_run(w, target, op, 1, old);

	if (ret)
		return ret;
	if (old[0])
		return 0; /* held or waited for: the manager queues us */
	pthread_mutex_lock(&w->ctx->lock);
	w->t[target].word = true;
	w->t[target].granted = true;
	pthread_mutex_unlock(&w->ctx->lock);
	__atomic_fetch_add(&w->ctx->lock_fast, 1, __ATOMIC_RELAXED);
	return 1;
}

/* The word's answer to our release: done, or the manager must hand it on. */
static int urel_osc_word_released(struct urel_win *w, int target, uint64_t old)
{
	uint64_t me = UREL_OSC_LW_OWNER(w->rank);
	struct urel_osc_wire wi = { .win = w->id, .lock_type = UREL_WIN_LOCK_EXCLUSIVE };
	int ret;

	if (old == me)
		return 0;
	/* Not ours any more: the target took it back, believing us dead. */
	if (old != (me | UREL_OSC_LW_WAITERS))
		return -EPROTO;
	pthread_mutex_lock(&w->ctx->lock);
	w->t[target].unlocked = false;
	pthread_mutex_unlock(&w->ctx->lock);
	ret = urel_osc_send(w->ctx, w->t[target].peer, UREL_CHAN_CMD, UREL_OSC_UNLOCK,
			    UREL_OSC_F_WORD, &wi, NULL, 0);
	if (!ret)
		ret = urel_osc_wait(w, urel_osc_word_unlocked, &target);
	return ret;
}

int urel_osc_word_unlock(struct urel_win *w, int target)
{
	uint64_t me = UREL_OSC_LW_OWNER(w->rank), old[2];
	struct urel_osc_word_op op[2] = { { .compare = me, .swap = 0 } };
	int ret = urel_osc_word_run(w, target, op, 1, old);

	pthread_mutex_lock(&w->ctx->lock);
	w->t[target].word = false;
	pthread_mutex_unlock(&w->ctx->lock);
	return ret ? ret : urel_osc_word_released(w, target, old[0]);
}

int urel_osc_word_epoch(struct urel_win *w, int target)
{
	uint64_t me = UREL_OSC_LW_OWNER(w->rank), old[2];
	struct urel_osc_word_op op[2] = { { .compare = 0, .swap = me },
					  { .compare = me, .swap = 0 } };
	int ret;

	/*
	 * An empty epoch: take and release in one round trip, the two swaps
	 * applied in order. If the first fails so does the second (the word
	 * never holds OWNER(me) unless we put it there).
	 */
	ret = urel_osc_word_run(w, target, op, 2, old);
	if (ret)
		return ret;
	if (old[0])
		return 1;
	__atomic_fetch_add(&w->ctx->lock_fast, 1, __ATOMIC_RELAXED);
	return urel_osc_word_released(w, target, old[1]);
}
