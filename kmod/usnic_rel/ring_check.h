/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: validation of ring indices read from user-writable memory.
 * Indices are free-running u32 counters; a slot is index & (size - 1).
 */
#ifndef _USNIC_REL_RING_CHECK_H
#define _USNIC_REL_RING_CHECK_H

#include <linux/errno.h>
#include <linux/log2.h>
#include <linux/types.h>

/**
 * usnic_rel_ring_count() - entries between two free-running ring indices
 * @ahead: the producer index (e.g. the user's tail of a send ring)
 * @behind: the consumer index (e.g. the kernel's private head)
 * @size: ring size in entries, a power of two
 * @count: set to the number of entries in [@behind, @ahead)
 *
 * One side of every index pair lives in memory userspace can scribble on, so
 * it is only trusted after this check: more than @size entries apart (which
 * also catches an index moved backwards, as the u32 difference wraps) means
 * the ring is corrupt.
 *
 * Return: 0, or -EINVAL if the indices cannot describe a ring of @size.
 */
static inline int usnic_rel_ring_count(u32 ahead, u32 behind, u32 size,
				       u32 *count)
{
	u32 n = ahead - behind;

	if (!is_power_of_2(size) || n > size)
		return -EINVAL;
	*count = n;
	return 0;
}

#endif /* _USNIC_REL_RING_CHECK_H */
