// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the origin side of locks held through the target's
 * lock word (lockword.c). An exclusive lock is one remote compare-and-swap
 * 0 -> OWNER(me), its release one OWNER(me) -> 0; a shared one adds our
 * reader bit to a word holding only readers, its release takes the bit
 * out (the last one out of a word marked WAITERS tells the manager
 * instead, which takes the bit out). The target's kernel applies them, on the data channel after
 * the epoch's puts: the target process takes no part unless someone waits. A swap that finds the
 * word held otherwise (or marked) falls back to the lock manager's request (FIFO); a release that
 * finds WAITERS set tells the manager, which hands the word on. NOCHECK and locks to ourselves keep
 * to the manager, shared ones too in groups wider than the word has reader
 * bits. UREL_WIN_FAST_LOCK=0 turns this off; UREL_WIN_FAST_SHARED=0 keeps
 * shared locks (and lock_all) to the manager.
 * A swap's wait fails only if its own target dies; a swap whose wait
 * failed may still land, so unlock looks at its outcome (settle).
 */
#include <errno.h>
#include <string.h>

#include "osc.h"

/* Swaps a shared lock tries on a word that readers keep changing, before it queues. */
#define UREL_OSC_LW_TRIES 4

bool urel_osc_word_eligible(const struct urel_win *w, int target)
{
	const struct urel_osc_target *t = &w->t[target];

	if (!w->fast_locks || target == w->rank || !t->info.has_word || t->lock_nocheck)
		return false;
	return t->lock == UREL_WIN_LOCK_EXCLUSIVE ||
	       (t->lock == UREL_WIN_LOCK_SHARED && w->fast_shared &&
		w->size <= UREL_OSC_LW_READERS_MAX);
}

static bool urel_osc_word_done(struct urel_win *w, void *arg)
{
	const struct urel_osc_word_op *op = arg;

	(void)w;
	return op->done;
}

static bool urel_osc_word_unlocked(struct urel_win *w, void *arg)
{
	return w->t[*(int *)arg].unlocked;
}

/*
 * Post the swap @want and wait for it; its old value in *@old. Its outcome
 * lands in the target's state, not on our stack: a wait that fails leaves
 * it in flight.
 */
static int urel_osc_word_run(struct urel_win *w, int target, struct urel_osc_word_op want,
			     uint64_t *old)
{
	struct urel_osc_word_op *op = &w->t[target].wop;
	int ret;

	pthread_mutex_lock(&w->ctx->lock);
	*op = want;
	op->done = false;
	/* Known dead: nothing to post (its late failure would taint the next call). */
	if (urel_osc_is_dead(w->ctx, w->t[target].peer)) {
		op->done = true;
		op->status = UREL_WIN_ERR_PEER;
		pthread_mutex_unlock(&w->ctx->lock);
		return UREL_WIN_ERR_PEER;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	ret = urel_osc_word_cas(w, target, op);
	if (ret) {
		pthread_mutex_lock(&w->ctx->lock);
		op->done = true; /* never posted */
		op->status = -ECANCELED;
		pthread_mutex_unlock(&w->ctx->lock);
	} else {
		ret = urel_osc_wait_one(w, target, urel_osc_word_done, op);
	}
	pthread_mutex_lock(&w->ctx->lock);
	if (!ret) {
		ret = op->status;
		*old = op->old;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	return urel_osc_peer_fatal(ret) ? UREL_WIN_ERR_PEER : ret;
}

static int urel_osc_word_granted(struct urel_win *w, int target, uint64_t seen)
{
	pthread_mutex_lock(&w->ctx->lock);
	w->t[target].word = true;
	w->t[target].word_seen = seen;
	w->t[target].granted = true;
	pthread_mutex_unlock(&w->ctx->lock);
	__atomic_fetch_add(&w->ctx->lock_fast, 1, __ATOMIC_RELAXED);
	return 1;
}

/* A swap that may take the word failed to complete: unlock looks at its outcome. */
static int urel_osc_word_failed(struct urel_win *w, int target, int ret)
{
	pthread_mutex_lock(&w->ctx->lock);
	w->t[target].word_unsure = true;
	pthread_mutex_unlock(&w->ctx->lock);
	return ret;
}

int urel_osc_word_settle(struct urel_win *w, int target)
{
	struct urel_osc_target *t = &w->t[target];
	struct urel_osc_word_op *op = &t->wop;
	bool held;

	pthread_mutex_lock(&w->ctx->lock);
	held = t->word_unsure;
	t->word_unsure = false;
	pthread_mutex_unlock(&w->ctx->lock);
	/* Its target dead: nothing to give back. */
	if (!held || urel_osc_wait_one(w, target, urel_osc_word_done, op))
		return 0;
	pthread_mutex_lock(&w->ctx->lock);
	held = !op->status && op->old == op->compare && op->compare != op->swap;
	if (held) {
		t->word = true;
		t->word_seen = op->swap;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	return held;
}

/* Our reader bit into a word that holds only readers: 1, or 0 to queue at the manager. */
static int urel_osc_word_share(struct urel_win *w, int target)
{
	uint64_t me = UREL_OSC_LW_READER(w->rank), guess = 0, old;

	for (int i = 0; i < UREL_OSC_LW_TRIES; i++) {
		int ret = urel_osc_word_run(
			w, target,
			(struct urel_osc_word_op){ .compare = guess, .swap = guess | me }, &old);

		if (ret)
			return urel_osc_word_failed(w, target, ret);
		if (old == guess)
			return urel_osc_word_granted(w, target, guess | me);
		if (!urel_osc_lw_readers_only(old) || (old & me))
			return 0;
		guess = old; /* other readers came or went: try on what is there */
	}
	return 0;
}

int urel_osc_word_lock(struct urel_win *w, int target)
{
	uint64_t me = UREL_OSC_LW_OWNER(w->rank), old;
	int ret;

	if (w->t[target].lock == UREL_WIN_LOCK_SHARED)
		return urel_osc_word_share(w, target);
	ret = urel_osc_word_run(w, target, (struct urel_osc_word_op){ .swap = me }, &old);
	if (ret)
		return urel_osc_word_failed(w, target, ret);
	if (old)
		return 0; /* held or waited for: the manager queues us */
	return urel_osc_word_granted(w, target, me);
}

/* Tell the manager that our release found its WAITERS mark, and wait for its answer. */
static int urel_osc_word_tell(struct urel_win *w, int target, int type)
{
	struct urel_osc_wire wi = { .win = w->id, .lock_type = (uint8_t)type };
	int ret;

	pthread_mutex_lock(&w->ctx->lock);
	w->t[target].unlocked = false;
	pthread_mutex_unlock(&w->ctx->lock);
	ret = urel_osc_send(w->ctx, w->t[target].peer, UREL_CHAN_CMD, UREL_OSC_UNLOCK,
			    UREL_OSC_F_WORD, &wi, NULL, 0);
	if (!ret)
		ret = urel_osc_wait_one(w, target, urel_osc_word_unlocked, &target);
	return ret;
}

/* The word's answer to our exclusive release: done, or the manager must hand it on. */
static int urel_osc_word_released(struct urel_win *w, int target, uint64_t old)
{
	uint64_t me = UREL_OSC_LW_OWNER(w->rank);

	if (old == me)
		return 0;
	/* Not ours any more: the target took it back, believing us dead. */
	if (old != (me | UREL_OSC_LW_WAITERS))
		return -EPROTO;
	return urel_osc_word_tell(w, target, UREL_WIN_LOCK_EXCLUSIVE);
}

/*
 * Take our reader bit out of a word last seen as @seen: the swap retries on
 * what it finds while other readers change it. The last reader out of a
 * marked word leaves its bit in and tells the manager, which takes it out:
 * if we die before, the bit names us and the manager takes it back.
 */
static int urel_osc_word_unshare(struct urel_win *w, int target, uint64_t seen)
{
	uint64_t me = UREL_OSC_LW_READER(w->rank), old, to;

	for (;;) {
		int ret;

		/* Not ours any more: the target took it back, believing us dead. */
		if (!(seen & me) || (seen & (UREL_OSC_LW_MANAGED | UREL_OSC_LW_EXCL)))
			return -EPROTO;
		if (!urel_osc_lw_release_to(seen, me, &to))
			return urel_osc_word_tell(w, target, UREL_WIN_LOCK_SHARED);
		ret = urel_osc_word_run(
			w, target, (struct urel_osc_word_op){ .compare = seen, .swap = to }, &old);
		if (ret)
			return ret;
		if (old == seen)
			return 0;
		seen = old;
	}
}

int urel_osc_word_unlock(struct urel_win *w, int target)
{
	uint64_t me = UREL_OSC_LW_OWNER(w->rank), old = 0, seen;
	bool shared;
	int ret;

	pthread_mutex_lock(&w->ctx->lock);
	shared = w->t[target].lock == UREL_WIN_LOCK_SHARED;
	seen = w->t[target].word_seen;
	pthread_mutex_unlock(&w->ctx->lock);
	if (shared)
		ret = urel_osc_word_unshare(w, target, seen);
	else
		ret = urel_osc_word_run(w, target, (struct urel_osc_word_op){ .compare = me },
					&old);
	pthread_mutex_lock(&w->ctx->lock);
	w->t[target].word = false;
	pthread_mutex_unlock(&w->ctx->lock);
	return ret || shared ? ret : urel_osc_word_released(w, target, old);
}

int urel_osc_word_epoch(struct urel_win *w, int target)
{
	bool shared = w->t[target].lock == UREL_WIN_LOCK_SHARED;
	uint64_t old;
	int ret;

	/*
	 * An empty epoch: one swap that changes nothing, answered once the
	 * target applied everything before it. A word free then (for a shared
	 * epoch, holding only readers) means the lock was ours at that instant:
	 * the epoch took and gave it back there, between everyone else's,
	 * without a release to send or to wait for. Held or marked: the
	 * manager queues us.
	 */
	ret = urel_osc_word_run(w, target, (struct urel_osc_word_op){ 0 }, &old);
	if (ret)
		return ret;
	if (old && !(shared && urel_osc_lw_readers_only(old)))
		return 1;
	__atomic_fetch_add(&w->ctx->lock_fast, 1, __ATOMIC_RELAXED);
	return 0;
}
