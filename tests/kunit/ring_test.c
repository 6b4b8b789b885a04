// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: validation of ring indices read from user memory.
 */
#include <kunit/test.h>

#include "ring_check.h"

struct rc_case {
	u32 ahead;
	u32 behind;
	u32 size;
	int ret;
	u32 count;
};

static const struct rc_case rc_cases[] = {
	{ 0, 0, 8, 0, 0 },			/* empty */
	{ 5, 2, 8, 0, 3 },
	{ 10, 2, 8, 0, 8 },			/* exactly full */
	{ 11, 2, 8, -EINVAL, 0 },		/* one past full */
	{ 3, 0xfffffffeU, 8, 0, 5 },		/* across the wrap */
	{ 6, 0xfffffffeU, 8, 0, 8 },
	{ 7, 0xfffffffeU, 8, -EINVAL, 0 },
	{ 1, 2, 8, -EINVAL, 0 },		/* producer moved backwards */
	{ 0x80000000U, 0, 4096, -EINVAL, 0 },
	{ 4096, 0, 4096, 0, 4096 },
	{ 4, 0, 0, -EINVAL, 0 },		/* sizes not a power of two */
	{ 0, 0, 0, -EINVAL, 0 },
	{ 4, 0, 12, -EINVAL, 0 },
	{ 1, 0, 1, 0, 1 },
};

static void ring_count_table(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rc_cases); i++) {
		const struct rc_case *c = &rc_cases[i];
		u32 count = 0xdeadbeef;

		KUNIT_EXPECT_EQ_MSG(test, usnic_rel_ring_count(c->ahead,
							       c->behind,
							       c->size, &count),
				    c->ret, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, count, c->ret ? 0xdeadbeef : c->count,
				    "case %u: count untouched on error", i);
	}
}

static void ring_count_every_distance(struct kunit *test)
{
	u32 base, d, count;

	/* Around the wrap, every distance up to the size passes, none past. */
	for (base = 0xffffff00U; base != 0x100; base += 0x40)
		for (d = 0; d <= 66; d++)
			KUNIT_EXPECT_EQ(test,
					usnic_rel_ring_count(base + d, base, 64,
							     &count),
					d <= 64 ? 0 : -EINVAL);
}

static struct kunit_case usnic_rel_ring_cases[] = {
	KUNIT_CASE(ring_count_table),
	KUNIT_CASE(ring_count_every_distance),
	{}
};

static struct kunit_suite usnic_rel_ring_suite = {
	.name = "usnic_rel_ring",
	.test_cases = usnic_rel_ring_cases,
};

kunit_test_suite(usnic_rel_ring_suite);
