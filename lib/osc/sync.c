// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the per-window synchronisation state machine (the
 * sync types of Open MPI's osc components). Pure: the epoch calls ask it
 * first and act only on 0, so a misused call changes nothing.
 */
#include "osc.h"

static bool urel_osc_sync_is_lock(enum urel_osc_sync_type t)
{
	return t == UREL_OSC_SYNC_LOCK || t == UREL_OSC_SYNC_LOCK_NO_CHECK;
}

static bool urel_osc_sync_is_lock_all(enum urel_osc_sync_type t)
{
	return t == UREL_OSC_SYNC_LOCK_ALL || t == UREL_OSC_SYNC_LOCK_ALL_NO_CHECK;
}

/* No access epoch open: a fence that ended without NOSUCCEED is not one until an operation. */
static bool urel_osc_sync_idle(enum urel_osc_sync_type t)
{
	return t == UREL_OSC_SYNC_NONE || t == UREL_OSC_SYNC_FENCE;
}

int urel_osc_sync_op(struct urel_osc_sync *s, bool covered)
{
	switch (s->type) {
	case UREL_OSC_SYNC_NONE:
		return UREL_WIN_ERR_SYNC;
	case UREL_OSC_SYNC_FENCE:
		s->type = UREL_OSC_SYNC_FENCE_EPOCH;
		return 0;
	case UREL_OSC_SYNC_FENCE_EPOCH:
	case UREL_OSC_SYNC_LOCK_ALL:
	case UREL_OSC_SYNC_LOCK_ALL_NO_CHECK:
		return 0;
	case UREL_OSC_SYNC_LOCK:
	case UREL_OSC_SYNC_LOCK_NO_CHECK:
	case UREL_OSC_SYNC_PSCW:
		return covered ? 0 : UREL_WIN_ERR_SYNC;
	}
	return UREL_WIN_ERR_SYNC;
}

int urel_osc_sync_fence(struct urel_osc_sync *s, unsigned int assert)
{
	if (s->exposed || !(urel_osc_sync_idle(s->type) || s->type == UREL_OSC_SYNC_FENCE_EPOCH))
		return UREL_WIN_ERR_SYNC;
	/* NOPRECEDE promises that no operation preceded: one did. */
	if ((assert &UREL_WIN_MODE_NOPRECEDE) && s->type == UREL_OSC_SYNC_FENCE_EPOCH)
		return UREL_WIN_ERR_SYNC;
	s->type = (assert &UREL_WIN_MODE_NOSUCCEED) ? UREL_OSC_SYNC_NONE : UREL_OSC_SYNC_FENCE;
	return 0;
}

int urel_osc_sync_lock(struct urel_osc_sync *s, bool target_locked, bool nocheck)
{
	if (s->no_locks)
		return UREL_WIN_ERR_NOLOCKS;
	if (urel_osc_sync_idle(s->type)) {
		s->type = nocheck ? UREL_OSC_SYNC_LOCK_NO_CHECK : UREL_OSC_SYNC_LOCK;
		s->locks = 1;
		s->checked = !nocheck;
		return 0;
	}
	if (!urel_osc_sync_is_lock(s->type) || target_locked)
		return UREL_WIN_ERR_SYNC;
	s->locks++;
	if (!nocheck) {
		s->checked = true;
		s->type = UREL_OSC_SYNC_LOCK;
	}
	return 0;
}

int urel_osc_sync_unlock(struct urel_osc_sync *s, bool target_locked)
{
	if (!urel_osc_sync_is_lock(s->type) || !target_locked || !s->locks)
		return UREL_WIN_ERR_SYNC;
	if (!--s->locks) {
		s->type = UREL_OSC_SYNC_NONE;
		s->checked = false;
	}
	return 0;
}

int urel_osc_sync_lock_all(struct urel_osc_sync *s, bool nocheck)
{
	if (s->no_locks)
		return UREL_WIN_ERR_NOLOCKS;
	if (!urel_osc_sync_idle(s->type))
		return UREL_WIN_ERR_SYNC;
	s->type = nocheck ? UREL_OSC_SYNC_LOCK_ALL_NO_CHECK : UREL_OSC_SYNC_LOCK_ALL;
	return 0;
}

int urel_osc_sync_unlock_all(struct urel_osc_sync *s)
{
	if (!urel_osc_sync_is_lock_all(s->type))
		return UREL_WIN_ERR_SYNC;
	s->type = UREL_OSC_SYNC_NONE;
	return 0;
}

int urel_osc_sync_flush(const struct urel_osc_sync *s, bool covered)
{
	if (urel_osc_sync_is_lock_all(s->type))
		return 0;
	return urel_osc_sync_is_lock(s->type) && covered ? 0 : UREL_WIN_ERR_SYNC;
}

int urel_osc_sync_start(struct urel_osc_sync *s)
{
	if (!urel_osc_sync_idle(s->type))
		return UREL_WIN_ERR_SYNC; /* nested start, or inside a lock or fence epoch */
	s->type = UREL_OSC_SYNC_PSCW;
	return 0;
}

int urel_osc_sync_complete(struct urel_osc_sync *s)
{
	if (s->type != UREL_OSC_SYNC_PSCW)
		return UREL_WIN_ERR_SYNC;
	s->type = UREL_OSC_SYNC_NONE;
	return 0;
}

int urel_osc_sync_post(struct urel_osc_sync *s)
{
	if (s->exposed || s->type == UREL_OSC_SYNC_FENCE_EPOCH)
		return UREL_WIN_ERR_SYNC;
	s->exposed = true;
	return 0;
}

int urel_osc_sync_wait(struct urel_osc_sync *s)
{
	if (!s->exposed)
		return UREL_WIN_ERR_SYNC;
	s->exposed = false;
	return 0;
}

int urel_osc_sync_free(const struct urel_osc_sync *s)
{
	return urel_osc_sync_idle(s->type) && !s->exposed ? 0 : UREL_WIN_ERR_SYNC;
}
