/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: the in-flight access count of a registration. One atomic word
 * holds both the number of peer accesses touching the pages right now and
 * the REVOKED bit DEREG_MR sets. Keeping both in one word is the whole of
 * the ordering argument: the revoker's fetch_or and an access's cmpxchg are
 * ordered against each other on that word, so an access either counted
 * itself first (the revoker sees the count and waits for it) or sees the bit
 * and touches nothing. No grace period: a DEREG_MR with nothing in flight
 * does one atomic and returns.
 */
#ifndef _USNIC_REL_MR_ACCESS_H
#define _USNIC_REL_MR_ACCESS_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/types.h>

/* Far above any count: an access never sleeps, a few per CPU at most. */
#define USNIC_REL_MR_REVOKED	BIT(30)

/**
 * usnic_rel_mr_access_begin() - count an access to the pages, if allowed
 * @a: the registration's access word
 *
 * Acquire: the access's reads and writes of the pages stay after it.
 *
 * Return: true when counted (end it with usnic_rel_mr_access_end()), false
 * once revoked.
 */
static inline bool usnic_rel_mr_access_begin(atomic_t *a)
{
	int v = atomic_read(a);

	do {
		if (v & USNIC_REL_MR_REVOKED)
			return false;
	} while (!atomic_try_cmpxchg_acquire(a, &v, v + 1));
	return true;
}

/**
 * usnic_rel_mr_access_end() - end an access counted by access_begin()
 * @a: the registration's access word
 *
 * Release: the access's reads and writes of the pages happen before the
 * revoker can see the count drop.
 *
 * Return: true when this was the last access a revoker waits for: the
 * caller must wake it.
 */
static inline bool usnic_rel_mr_access_end(atomic_t *a)
{
	return atomic_sub_return_release(1, a) == USNIC_REL_MR_REVOKED;
}

/**
 * usnic_rel_mr_access_revoke() - refuse every later access
 * @a: the registration's access word
 *
 * Return: true when accesses were under way: the caller must wait for the
 * one whose access_end() returns true. False when nothing was in flight (or
 * it was revoked already): the pages are untouched from here on.
 */
static inline bool usnic_rel_mr_access_revoke(atomic_t *a)
{
	int v = atomic_fetch_or(USNIC_REL_MR_REVOKED, a);

	return !(v & USNIC_REL_MR_REVOKED) && v;
}

/* Whether usnic_rel_mr_access_revoke() ran: a hint, for early refusal. */
static inline bool usnic_rel_mr_access_revoked(const atomic_t *a)
{
	return atomic_read(a) & USNIC_REL_MR_REVOKED;
}

#endif /* _USNIC_REL_MR_ACCESS_H */
