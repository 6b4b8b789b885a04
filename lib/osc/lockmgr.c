// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the target-side lock manager of one window (MPICH's
 * passive-target design): the type held, how many share it, and a FIFO of
 * waiting requests. A request is granted at once only when nobody waits
 * (so a shared request never overtakes a queued exclusive one) and the held
 * type allows it. Whatever it grants, it grants through the window's lock
 * word (lockword.c): it cannot grant while an origin holds the word, and
 * frees the word when nothing it granted is held. Pure: the target's
 * message handler calls it under the context lock and sends the grants.
 */
#include <errno.h>
#include <stddef.h>

#include "osc.h"

static bool urel_osc_lock_fits(const struct urel_osc_lockmgr *lm, int type)
{
	if (!lm->type)
		return true;
	return lm->type == UREL_WIN_LOCK_SHARED && type == UREL_WIN_LOCK_SHARED;
}

/*
 * We hold the word, or it is marked so that its holders' release comes to
 * us. A shared grant beside readers holding it adds our own reader bit: a
 * shared lock never waits for shared ones.
 */
static bool urel_osc_lock_word(struct urel_osc_lockmgr *lm, int type)
{
	if (!lm->word || lm->type)
		return true;
	if (type == UREL_WIN_LOCK_SHARED && lm->reader_bit &&
	    urel_osc_lw_share(lm->word, lm->reader_bit)) {
		lm->by_bit = true;
		return true;
	}
	return urel_osc_lw_take(lm->word);
}

static void urel_osc_lock_take(struct urel_osc_lockmgr *lm, int type)
{
	lm->type = type;
	if (type == UREL_WIN_LOCK_SHARED)
		lm->shared++;
}

int urel_osc_lock_acquire(struct urel_osc_lockmgr *lm, struct urel_osc_lockreq *r)
{
	if (r->type != UREL_WIN_LOCK_SHARED && r->type != UREL_WIN_LOCK_EXCLUSIVE)
		return -EINVAL;
	if (!lm->head && urel_osc_lock_fits(lm, r->type) && urel_osc_lock_word(lm, r->type)) {
		urel_osc_lock_take(lm, r->type);
		return 1;
	}
	/* Held by our bit beside readers: none may join now, the last one tells us. */
	if (lm->by_bit)
		urel_osc_lw_mark(lm->word);
	r->next = NULL;
	if (lm->tail)
		lm->tail->next = r;
	else
		lm->head = r;
	lm->tail = r;
	lm->queued++;
	return 0;
}

/* Grant from the head while each fits: one exclusive, or a run of shared ones. */
static void urel_osc_lock_grant_head(struct urel_osc_lockmgr *lm, struct urel_osc_lockreq **granted)
{
	struct urel_osc_lockreq **tail = granted;

	*granted = NULL;
	while (lm->head && urel_osc_lock_fits(lm, lm->head->type) &&
	       urel_osc_lock_word(lm, lm->head->type)) {
		struct urel_osc_lockreq *r = lm->head;

		lm->head = r->next;
		if (!lm->head)
			lm->tail = NULL;
		lm->queued--;
		urel_osc_lock_take(lm, r->type);
		r->next = NULL;
		*tail = r;
		tail = &r->next;
	}
	/* A queued request keeps the word held or marked: its release must come to us. */
	if (lm->head || !lm->word)
		return;
	if (!lm->type)
		urel_osc_lw_drop(lm->word);
	/* A mark left by requests that went would make readers wait for readers. */
	urel_osc_lw_unmark(lm->word);
}

int urel_osc_lock_release(struct urel_osc_lockmgr *lm, int type, struct urel_osc_lockreq **granted)
{
	*granted = NULL;
	if (!lm->type || lm->type != type)
		return -EINVAL;
	if (type == UREL_WIN_LOCK_SHARED && --lm->shared)
		return 0;
	lm->type = 0;
	if (lm->by_bit) {
		urel_osc_lw_unshare(lm->word, lm->reader_bit);
		lm->by_bit = false;
	}
	urel_osc_lock_grant_head(lm, granted);
	return 0;
}

void urel_osc_lock_forget(struct urel_osc_lockmgr *lm, int origin,
			  struct urel_osc_lockreq **forgotten, struct urel_osc_lockreq **granted)
{
	struct urel_osc_lockreq **pp = &lm->head, *last = NULL, **out = forgotten;

	*forgotten = NULL;
	while (*pp) {
		struct urel_osc_lockreq *r = *pp;

		if (r->origin != origin) {
			last = r;
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		lm->queued--;
		r->next = NULL;
		*out = r;
		out = &r->next;
	}
	lm->tail = last;
	/* An exclusive request that went may have held back the ones behind it. */
	urel_osc_lock_grant_head(lm, granted);
}

int urel_osc_lock_handoff(struct urel_osc_lockmgr *lm, int origin,
			  struct urel_osc_lockreq **granted)
{
	*granted = NULL;
	if (!lm->word || lm->type || !urel_osc_lw_handoff(lm->word, origin))
		return -EINVAL;
	urel_osc_lock_grant_head(lm, granted);
	return 0;
}

int urel_osc_lock_readers_gone(struct urel_osc_lockmgr *lm, int origin,
			       struct urel_osc_lockreq **granted)
{
	*granted = NULL;
	/* Not a reader (any more: taken back as dead): nothing to do, nobody else's bit. */
	if (!lm->word || !urel_osc_lw_leave(lm->word, origin))
		return -EINVAL;
	urel_osc_lock_grant_head(lm, granted);
	return 0;
}

int urel_osc_lock_reclaim(struct urel_osc_lockmgr *lm, int origin,
			  struct urel_osc_lockreq **granted)
{
	*granted = NULL;
	/* Beside our own reader bit, a dead reader's bit still comes back. */
	if (!lm->word || (lm->type && !lm->by_bit) || !urel_osc_lw_reclaim(lm->word, origin))
		return 0;
	urel_osc_lock_grant_head(lm, granted);
	return 1;
}
