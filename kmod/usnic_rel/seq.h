/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: 32-bit sequence numbers. They wrap, so they are only ever
 * compared through their signed difference; two numbers more than 2^31
 * apart cannot be ordered and the window limits keep them far closer.
 */
#ifndef _USNIC_REL_SEQ_H
#define _USNIC_REL_SEQ_H

#include <linux/types.h>

/* Signed distance from @b to @a: positive when @a comes after @b. */
static inline s32 usnic_rel_seq_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

static inline bool usnic_rel_seq_before(u32 a, u32 b)
{
	return usnic_rel_seq_diff(a, b) < 0;
}

static inline bool usnic_rel_seq_after(u32 a, u32 b)
{
	return usnic_rel_seq_diff(a, b) > 0;
}

static inline bool usnic_rel_seq_before_eq(u32 a, u32 b)
{
	return usnic_rel_seq_diff(a, b) <= 0;
}

static inline bool usnic_rel_seq_after_eq(u32 a, u32 b)
{
	return usnic_rel_seq_diff(a, b) >= 0;
}

/* True when @seq lies in [@start, @start + @size). @size must be below 2^31. */
static inline bool usnic_rel_seq_in_window(u32 seq, u32 start, u32 size)
{
	return seq - start < size;
}

#endif /* _USNIC_REL_SEQ_H */
