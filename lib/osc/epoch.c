// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the synchronisation calls. Each asks the state
 * machine (sync.c) on a copy of the window's state and acts only when it
 * agrees, so a misused call returns UREL_WIN_ERR_SYNC and changes nothing.
 * Completion is remote completion: an RDMA completion reports the outcome
 * at the target, an accumulate counts until the target acknowledges it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "osc.h"

void urel_osc_forget_regions(struct urel_win *w)
{
	for (int r = 0; r < w->size; r++) {
		while (w->t[r].regions) {
			struct urel_osc_region *g = w->t[r].regions;

			w->t[r].regions = g->next;
			free(g);
		}
	}
}

static bool urel_osc_quiet(struct urel_win *w, void *arg)
{
	int scope = *(int *)arg;

	for (int r = 0; r < w->size; r++) {
		if ((w->t[r].rdma_out || w->t[r].am_out) && urel_osc_in_scope(w, scope, r))
			return false;
	}
	/* Request-based fetches not yet answered. */
	for (const struct urel_osc_fetch *f = w->fetches; f; f = f->next) {
		if (!f->done && urel_osc_in_scope(w, scope, f->target))
			return false;
	}
	return true;
}

/*
 * Everything to @target completed but what the target's kernel applies
 * before a lock word release posted now (puts: rma.c); under c->lock.
 */
static bool urel_osc_ordered(struct urel_win *w, void *arg)
{
	int target = *(int *)arg;

	if (w->t[target].unordered_out || w->t[target].am_out)
		return false;
	for (const struct urel_osc_fetch *f = w->fetches; f; f = f->next) {
		if (!f->done && f->target == target)
			return false;
	}
	return true;
}

/*
 * Wait for what must be answered before @target's word release. Nothing
 * such (the common case: only puts): no wait at all, so that the puts
 * posted without a doorbell leave with the release, in one kernel pass.
 */
static int urel_osc_wait_ordered(struct urel_win *w, int target)
{
	bool ok;

	pthread_mutex_lock(&w->ctx->lock);
	ok = urel_osc_ordered(w, &target);
	pthread_mutex_unlock(&w->ctx->lock);
	return ok ? 0 : urel_osc_wait_one(w, target, urel_osc_ordered, &target);
}

int urel_osc_take_err(struct urel_win *w, int scope)
{
	int ret = 0;

	for (int r = 0; r < w->size; r++) {
		if (w->t[r].err && urel_osc_in_scope(w, scope, r)) {
			ret = ret ? ret : w->t[r].err;
			w->t[r].err = 0;
		}
	}
	return ret;
}

/* Done, or quiet puts to some target of @scope wait for an answered request (another thread's). */
static bool urel_osc_quiet_or_open(struct urel_win *w, void *arg)
{
	int scope = *(int *)arg;

	if (urel_osc_quiet(w, arg))
		return true;
	for (int r = 0; r < w->size; r++) {
		if (urel_osc_quiet_open(&w->t[r]) && urel_osc_in_scope(w, scope, r))
			return true;
	}
	return false;
}

int urel_osc_flush_targets(struct urel_win *w, int scope)
{
	bool done = false;
	int ret = 0, err;

	/* Quiet puts complete with an answer after them: ask for one where none is posted. */
	while (!ret && !done) {
		for (int r = 0; r < w->size && !ret; r++) {
			if (r != w->rank && urel_osc_in_scope(w, scope, r))
				ret = urel_osc_quiet_close(w, r);
		}
		if (!ret)
			ret = urel_osc_wait_in(w, scope, urel_osc_quiet_or_open, &scope);
		pthread_mutex_lock(&w->ctx->lock);
		done = urel_osc_quiet(w, &scope);
		pthread_mutex_unlock(&w->ctx->lock);
	}
	pthread_mutex_lock(&w->ctx->lock);
	err = urel_osc_take_err(w, scope);
	pthread_mutex_unlock(&w->ctx->lock);
	return ret ? ret : err;
}

static bool urel_osc_valid_target(const struct urel_win *w, int target)
{
	return target >= 0 && target < w->size;
}

/* --- Fence --------------------------------------------------------------- */

UREL_API int urel_win_fence(struct urel_win *w, unsigned int assert)
{
	struct urel_osc_sync next;
	int ret, err;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->ctx->lock);
	next = w->sync;
	ret = urel_osc_sync_fence(&next, assert);
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret;
	err = urel_osc_flush_targets(w, UREL_OSC_ALL);
	/* Everyone's operations completed at their targets once everyone is here. */
	ret = urel_osc_any_dead(w) ? UREL_WIN_ERR_PEER : urel_group_barrier(w->g);
	pthread_mutex_lock(&w->ctx->lock);
	w->sync.type = next.type;
	urel_osc_forget_regions(w);
	pthread_mutex_unlock(&w->ctx->lock);
	return err ? err : ret;
}

/* --- Passive target ------------------------------------------------------ */

static bool urel_osc_granted(struct urel_win *w, void *arg)
{
	int target = *(int *)arg;

	for (int r = target < 0 ? 0 : target; r < (target < 0 ? w->size : target + 1); r++) {
		if (w->t[r].lock && !w->t[r].lock_nocheck && !w->t[r].lazy && !w->t[r].granted)
			return false;
	}
	return true;
}

static bool urel_osc_unlocked(struct urel_win *w, void *arg)
{
	int target = *(int *)arg;

	for (int r = target < 0 ? 0 : target; r < (target < 0 ? w->size : target + 1); r++) {
		if (r != w->rank && w->t[r].lock && !w->t[r].lock_nocheck && !w->t[r].unlocked)
			return false;
	}
	return true;
}

/*
 * Ask @target for its lock (ourselves: the lock manager directly); the
 * grant comes later. @flags: UREL_OSC_F_UNLOCK, release once granted.
 */
static int urel_osc_request_lock(struct urel_win *w, int target, int type, unsigned int flags)
{
	struct urel_osc_wire wi = { .win = w->id, .lock_type = (uint8_t)type };

	if (target == w->rank)
		return urel_osc_self_lock(w, type) < 0 ? -EINVAL : 0;
	return urel_osc_send(w->ctx, w->t[target].peer, UREL_CHAN_CMD, UREL_OSC_LOCK, flags, &wi,
			     NULL, 0);
}

bool urel_osc_is_lazy(const struct urel_win *w, int target)
{
	return target >= 0 && target < w->size && w->t[target].lazy;
}

bool urel_osc_piggy_first(const struct urel_win *w, int target)
{
	return urel_osc_is_lazy(w, target) && !urel_osc_word_eligible(w, target);
}

/* Take @target's lock: through its lock word if we may and it is free, else from its manager. */
static int urel_osc_acquire(struct urel_win *w, int target, int type)
{
	bool word;
	int ret;

	pthread_mutex_lock(&w->ctx->lock);
	word = urel_osc_word_eligible(w, target);
	pthread_mutex_unlock(&w->ctx->lock);
	if (word) {
		ret = urel_osc_word_lock(w, target);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	ret = urel_osc_request_lock(w, target, type, 0);
	if (!ret)
		ret = urel_osc_wait_one(w, target, urel_osc_granted, &target);
	return ret;
}

/*
 * After the wait for a grant: the first failure, and the lock is then not
 * held. Either way the threads waiting for it (lazy) may look now.
 */
static int urel_osc_grant_result(struct urel_win *w, struct urel_osc_target *t, int ret)
{
	pthread_mutex_lock(&w->ctx->lock);
	if (!ret)
		ret = t->lock_status; /* the target refused */
	if (ret)
		t->lock_status = ret;
	t->acquiring = false;
	pthread_mutex_unlock(&w->ctx->lock);
	return ret;
}

void urel_osc_acquiring(struct urel_win *w, int target)
{
	w->t[target].lazy = false;
	w->t[target].acquiring = true;
}

/* Another thread's request of the lazy lock has its answer. */
static bool urel_osc_acquired(struct urel_win *w, void *arg)
{
	const struct urel_osc_target *t = &w->t[*(int *)arg];

	return !t->acquiring || t->granted || t->lock_status;
}

int urel_osc_lazy_acquire(struct urel_win *w, int target)
{
	struct urel_osc_target *t = &w->t[target];
	bool other;
	int ret;

	pthread_mutex_lock(&w->ctx->lock);
	if (!t->lazy) {
		other = t->acquiring;
		pthread_mutex_unlock(&w->ctx->lock);
		/*
		 * Not granted yet: an operation now would reach the target
		 * outside the lock, inside another origin's exclusive epoch.
		 */
		ret = other ? urel_osc_wait_one(w, target, urel_osc_acquired, &target) : 0;
		pthread_mutex_lock(&w->ctx->lock);
		if (!ret && t->lock)
			ret = t->lock_status;
		pthread_mutex_unlock(&w->ctx->lock);
		return ret;
	}
	urel_osc_acquiring(w, target);
	pthread_mutex_unlock(&w->ctx->lock);
	ret = urel_osc_acquire(w, target, t->lock);
	return urel_osc_grant_result(w, t, ret);
}

static int urel_osc_release_lock(struct urel_win *w, int target, int type)
{
	struct urel_osc_wire wi = { .win = w->id, .lock_type = (uint8_t)type };

	if (target == w->rank)
		return urel_osc_self_unlock(w, type);
	return urel_osc_send(w->ctx, w->t[target].peer, UREL_CHAN_CMD, UREL_OSC_UNLOCK, 0, &wi,
			     NULL, 0);
}

UREL_API int urel_win_lock(struct urel_win *w, int lock_type, int target, unsigned int assert)
{
	bool nocheck = assert &UREL_WIN_MODE_NOCHECK;
	struct urel_osc_target *t;
	struct urel_osc_sync next;
	int ret;

	if (!w || !urel_osc_valid_target(w, target) ||
	    (lock_type != UREL_WIN_LOCK_SHARED && lock_type != UREL_WIN_LOCK_EXCLUSIVE))
		return -EINVAL;
	t = &w->t[target];
	pthread_mutex_lock(&w->ctx->lock);
	next = w->sync;
	ret = urel_osc_sync_lock(&next, t->lock != 0, nocheck);
	if (!ret) {
		w->sync = next;
		t->lock = lock_type;
		t->lock_nocheck = nocheck;
		t->granted = false;
		t->lock_status = 0;
		t->piggy_applied = false;
		t->word = false;
		t->word_unsure = false;
		t->acquiring = false;
		/* Remote and checked: requested by the first operation, or by the unlock. */
		t->lazy = !nocheck && target != w->rank && w->lazy_locks;
		if (w->sync.locks == 1)
			urel_osc_forget_regions(w);
	}
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret || nocheck || t->lazy)
		return ret;
	ret = urel_osc_acquire(w, target, lock_type);
	ret = urel_osc_grant_result(w, t, ret);
	pthread_mutex_lock(&w->ctx->lock);
	if (ret) {
		t->lock = 0;
		t->lock_status = 0;
		urel_osc_sync_unlock(&w->sync, true);
	}
	pthread_mutex_unlock(&w->ctx->lock);
	return ret;
}

UREL_API int urel_win_unlock(struct urel_win *w, int target)
{
	struct urel_osc_target *t;
	struct urel_osc_sync next;
	int ret, err, failed;
	bool lazy, word, eligible;

	if (!w || !urel_osc_valid_target(w, target))
		return -EINVAL;
	t = &w->t[target];
	pthread_mutex_lock(&w->ctx->lock);
	next = w->sync;
	ret = urel_osc_sync_unlock(&next, t->lock != 0);
	word = t->word;
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret;
	/* The word's release follows the puts in order: only the rest first. */
	err = word ? urel_osc_wait_ordered(w, target) : urel_osc_flush_targets(w, target);
	pthread_mutex_lock(&w->ctx->lock);
	lazy = t->lazy;
	t->lazy = false;
	t->unlocked = false;
	t->unlocking = true;
	failed = t->lock_status; /* a lazy lock refused: nothing to release */
	eligible = urel_osc_word_eligible(w, target);
	pthread_mutex_unlock(&w->ctx->lock);
	/* An empty epoch still takes its turn: lock and release in one round trip. */
	ret = lazy ? (eligible ? urel_osc_word_epoch(w, target) : 1) : 0;
	if (lazy && ret == 1) {
		ret = urel_osc_request_lock(w, target, t->lock, UREL_OSC_F_UNLOCK);
		if (!ret)
			ret = urel_osc_wait_one(w, target, urel_osc_unlocked, &target);
		ret = urel_osc_grant_result(w, t, ret);
	} else if (lazy) {
		/* done through the word */
	} else if (failed) {
		/* A swap that failed here but landed there still holds the word: give it back. */
		if (urel_osc_word_settle(w, target))
			urel_osc_word_unlock(w, target);
		ret = failed;
	} else if (word) {
		ret = urel_osc_word_unlock(w, target);
		/* Everything before the release is answered by now; its first error. */
		failed = urel_osc_flush_targets(w, target);
		ret = ret ? ret : failed;
	} else if (!t->lock_nocheck) {
		ret = urel_osc_release_lock(w, target, t->lock);
		if (!ret && target != w->rank)
			ret = urel_osc_wait_one(w, target, urel_osc_unlocked, &target);
	}
	pthread_mutex_lock(&w->ctx->lock);
	t->lock = 0;
	t->lazy = false;
	t->acquiring = false;
	t->word = false;
	t->lock_status = 0;
	t->lock_nocheck = false;
	t->unlocking = false;
	w->sync = next;
	failed = urel_osc_take_err(w, target);
	ret = ret ? ret : failed;
	pthread_mutex_unlock(&w->ctx->lock);
	return err ? err : ret;
}

UREL_API int urel_win_lock_all(struct urel_win *w, unsigned int assert)
{
	bool nocheck = assert &UREL_WIN_MODE_NOCHECK;
	struct urel_osc_sync next;
	int all = -1, ret;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->ctx->lock);
	next = w->sync;
	ret = urel_osc_sync_lock_all(&next, nocheck);
	if (!ret) {
		w->sync = next;
		for (int r = 0; r < w->size; r++) {
			w->t[r].lock = UREL_WIN_LOCK_SHARED;
			w->t[r].lock_nocheck = nocheck;
			w->t[r].granted = false;
			w->t[r].lock_status = 0;
			w->t[r].word = false;
			w->t[r].word_unsure = false;
			w->t[r].acquiring = false;
			/* Taken on the lock word by the first operation to it, if any. */
			w->t[r].lazy = urel_osc_word_eligible(w, r);
		}
		urel_osc_forget_regions(w);
	}
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret || nocheck)
		return ret;
	for (int r = 0; r < w->size && !ret; r++) {
		if (!w->t[r].lazy)
			ret = urel_osc_request_lock(w, r, UREL_WIN_LOCK_SHARED, 0);
	}
	if (!ret)
		ret = urel_osc_wait(w, urel_osc_granted, &all);
	pthread_mutex_lock(&w->ctx->lock);
	for (int r = 0; r < w->size; r++) {
		if (w->t[r].lock_status) {
			ret = ret ? ret : w->t[r].lock_status; /* a target refused */
			w->t[r].lock = 0; /* not held: unlock_all leaves it out */
		}
		w->t[r].lock_status = 0;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	return ret;
}

UREL_API int urel_win_unlock_all(struct urel_win *w)
{
	struct urel_osc_sync next;
	int ret, err, left;
	bool nocheck;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->ctx->lock);
	next = w->sync;
	ret = urel_osc_sync_unlock_all(&next);
	nocheck = w->sync.type == UREL_OSC_SYNC_LOCK_ALL_NO_CHECK;
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret;
	err = urel_osc_flush_targets(w, UREL_OSC_ALL);
	if (!nocheck) {
		pthread_mutex_lock(&w->ctx->lock);
		for (int r = 0; r < w->size; r++) {
			w->t[r].unlocked = false;
			w->t[r].unlocking = true;
		}
		pthread_mutex_unlock(&w->ctx->lock);
		/* Every target is released, whoever died: the first error is reported. */
		for (int r = 0; r < w->size; r++) {
			struct urel_osc_target *t = &w->t[r];
			bool skip, word;
			int rc = 0;

			/* A failed swap may have landed all the same: ours to release. */
			if (urel_osc_word_settle(w, r)) {
				pthread_mutex_lock(&w->ctx->lock);
				t->lock_status = 0;
				pthread_mutex_unlock(&w->ctx->lock);
			}
			pthread_mutex_lock(&w->ctx->lock);
			word = t->word;
			/* Never taken (no operation, or its acquire failed): nothing to release. */
			skip = !t->lock || t->lazy || (!word && t->lock_status);
			t->unlocked = skip;
			pthread_mutex_unlock(&w->ctx->lock);
			if (skip)
				continue;
			/* A death elsewhere cut the flush short: this target's first. */
			if (err && r != w->rank)
				rc = urel_osc_wait_one(
					w, r, word ? urel_osc_ordered : urel_osc_quiet, &r);
			if (!rc)
				rc = word ? urel_osc_word_unlock(w, r)
					  : urel_osc_release_lock(w, r, UREL_WIN_LOCK_SHARED);
			if (rc || word) {
				pthread_mutex_lock(&w->ctx->lock);
				t->unlocked = true;
				pthread_mutex_unlock(&w->ctx->lock);
			}
			ret = ret ? ret : rc;
		}
		for (int r = 0; r < w->size; r++) {
			int rc = r == w->rank ? 0 : urel_osc_wait_one(w, r, urel_osc_unlocked, &r);

			ret = ret ? ret : rc;
		}
	}
	pthread_mutex_lock(&w->ctx->lock);
	for (int r = 0; r < w->size; r++) {
		w->t[r].lock = 0;
		w->t[r].lock_nocheck = false;
		w->t[r].unlocking = false;
		w->t[r].lazy = false;
		w->t[r].acquiring = false;
		w->t[r].word = false;
		w->t[r].lock_status = 0;
	}
	w->sync = next;
	left = urel_osc_take_err(w, UREL_OSC_ALL);
	ret = ret ? ret : left;
	pthread_mutex_unlock(&w->ctx->lock);
	return err ? err : ret;
}

static int urel_osc_flush(struct urel_win *w, int target)
{
	int ret;

	if (!w || (target != -1 && !urel_osc_valid_target(w, target)))
		return -EINVAL;
	pthread_mutex_lock(&w->ctx->lock);
	ret = urel_osc_sync_flush(&w->sync, target < 0 || w->t[target].lock != 0);
	pthread_mutex_unlock(&w->ctx->lock);
	return ret ? ret : urel_osc_flush_targets(w, target);
}

UREL_API int urel_win_flush(struct urel_win *w, int target)
{
	return urel_osc_flush(w, target < 0 ? -2 : target);
}

UREL_API int urel_win_flush_all(struct urel_win *w)
{
	return urel_osc_flush(w, -1);
}

/* Local completion: a put's bytes are copied when posted, so only gets remain, which flush covers.
 */
UREL_API int urel_win_flush_local(struct urel_win *w, int target)
{
	return urel_win_flush(w, target);
}

UREL_API int urel_win_flush_local_all(struct urel_win *w)
{
	return urel_win_flush_all(w);
}

/* --- Post, start, complete, wait ----------------------------------------- */

/* Ranks in range and each once. */
static int urel_osc_check_ranks(const struct urel_win *w, const int *ranks, int n)
{
	unsigned char *seen;
	int ret = 0;

	if (n < 0 || n > w->size || (n && !ranks))
		return -EINVAL;
	seen = calloc((size_t)w->size + 1, 1);
	if (!seen)
		return -ENOMEM;
	for (int i = 0; i < n && !ret; i++) {
		if (!urel_osc_valid_target(w, ranks[i]) || seen[ranks[i]])
			ret = -EINVAL;
		else
			seen[ranks[i]] = 1;
	}
	free(seen);
	return ret;
}

UREL_API int urel_win_post(struct urel_win *w, const int *ranks, int n, unsigned int assert)
{
	struct urel_osc_wire wi;
	struct urel_osc_sync next;
	int ret;

	(void)assert;
	if (!w)
		return -EINVAL;
	ret = urel_osc_check_ranks(w, ranks, n);
	if (ret)
		return ret;
	pthread_mutex_lock(&w->ctx->lock);
	next = w->sync;
	ret = urel_osc_sync_post(&next);
	if (!ret) {
		w->sync = next;
		for (int i = 0; i < n; i++) {
			w->t[ranks[i]].in_exposure = true;
			if (ranks[i] == w->rank)
				w->t[w->rank].posts++;
		}
	}
	pthread_mutex_unlock(&w->ctx->lock);
	memset(&wi, 0, sizeof(wi));
	wi.win = w->id;
	for (int i = 0; i < n && !ret; i++) {
		if (ranks[i] != w->rank)
			ret = urel_osc_send(w->ctx, w->t[ranks[i]].peer, UREL_CHAN_CMD,
					    UREL_OSC_POST, 0, &wi, NULL, 0);
	}
	return ret;
}

static bool urel_osc_posted(struct urel_win *w, void *arg)
{
	(void)arg;
	for (int r = 0; r < w->size; r++) {
		if (w->t[r].in_access && !w->t[r].posts)
			return false;
	}
	return true;
}

UREL_API int urel_win_start(struct urel_win *w, const int *ranks, int n, unsigned int assert)
{
	struct urel_osc_sync next;
	int ret;

	(void)assert;
	if (!w)
		return -EINVAL;
	ret = urel_osc_check_ranks(w, ranks, n);
	if (ret)
		return ret;
	pthread_mutex_lock(&w->ctx->lock);
	next = w->sync;
	ret = urel_osc_sync_start(&next);
	if (!ret) {
		w->sync = next;
		for (int i = 0; i < n; i++)
			w->t[ranks[i]].in_access = true;
		urel_osc_forget_regions(w);
	}
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret;
	/* Every target must have posted before we touch its memory. */
	ret = urel_osc_wait_in(w, UREL_OSC_PSCW_ACCESS, urel_osc_posted, NULL);
	pthread_mutex_lock(&w->ctx->lock);
	for (int r = 0; !ret && r < w->size; r++) {
		if (w->t[r].in_access)
			w->t[r].posts--;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	return ret;
}

UREL_API int urel_win_complete(struct urel_win *w)
{
	struct urel_osc_wire wi;
	struct urel_osc_sync next;
	int ret, err;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->ctx->lock);
	next = w->sync;
	ret = urel_osc_sync_complete(&next);
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret;
	/* Only the access group's targets: a death elsewhere does not end this epoch. */
	err = urel_osc_flush_targets(w, UREL_OSC_PSCW_ACCESS);
	memset(&wi, 0, sizeof(wi));
	wi.win = w->id;
	for (int r = 0; r < w->size; r++) {
		if (!w->t[r].in_access)
			continue;
		if (r == w->rank) {
			pthread_mutex_lock(&w->ctx->lock);
			w->t[r].completes++;
			pthread_mutex_unlock(&w->ctx->lock);
		} else {
			ret = urel_osc_send(w->ctx, w->t[r].peer, UREL_CHAN_CMD, UREL_OSC_COMPLETE,
					    0, &wi, NULL, 0);
			err = err ? err : ret;
		}
	}
	pthread_mutex_lock(&w->ctx->lock);
	for (int r = 0; r < w->size; r++)
		w->t[r].in_access = false;
	w->sync = next;
	pthread_mutex_unlock(&w->ctx->lock);
	return err;
}

static bool urel_osc_completed(struct urel_win *w, void *arg)
{
	(void)arg;
	for (int r = 0; r < w->size; r++) {
		if (w->t[r].in_exposure && !w->t[r].completes)
			return false;
	}
	return true;
}

/* End the exposure epoch: under c->lock, once every origin completed. */
static void urel_osc_end_exposure(struct urel_win *w)
{
	for (int r = 0; r < w->size; r++) {
		if (w->t[r].in_exposure) {
			w->t[r].completes--;
			w->t[r].in_exposure = false;
		}
	}
	urel_osc_sync_wait(&w->sync);
}

UREL_API int urel_win_wait(struct urel_win *w)
{
	int ret;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->ctx->lock);
	ret = w->sync.exposed ? 0 : UREL_WIN_ERR_SYNC;
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret;
	ret = urel_osc_wait_in(w, UREL_OSC_PSCW_EXPOSURE, urel_osc_completed, NULL);
	if (ret)
		return ret;
	pthread_mutex_lock(&w->ctx->lock);
	urel_osc_end_exposure(w);
	pthread_mutex_unlock(&w->ctx->lock);
	return 0;
}

UREL_API int urel_win_test(struct urel_win *w)
{
	int ret;

	if (!w)
		return -EINVAL;
	urel_msg_progress(w->ctx->m);
	pthread_mutex_lock(&w->ctx->lock);
	if (!w->sync.exposed) {
		ret = UREL_WIN_ERR_SYNC;
	} else if (urel_osc_completed(w, NULL)) {
		urel_osc_end_exposure(w);
		ret = 1;
	} else {
		ret = 0;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	return ret;
}
