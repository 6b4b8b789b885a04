// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: sequence-number arithmetic, above all across the 2^32 wrap.
 */
#include <kunit/test.h>

#include "seq.h"

static void seq_orders_plain_numbers(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_before(1, 2));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_after(2, 1));
	KUNIT_EXPECT_FALSE(test, usnic_rel_seq_before(2, 2));
	KUNIT_EXPECT_FALSE(test, usnic_rel_seq_after(2, 2));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_before_eq(2, 2));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_after_eq(2, 2));
	KUNIT_EXPECT_EQ(test, usnic_rel_seq_diff(10, 3), 7);
	KUNIT_EXPECT_EQ(test, usnic_rel_seq_diff(3, 10), -7);
}

static void seq_orders_across_wrap(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_before(0xffffffffU, 0));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_after(0, 0xffffffffU));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_before(0xfffffff0U, 0x10));
	KUNIT_EXPECT_EQ(test, usnic_rel_seq_diff(0x10, 0xfffffff0U), 0x20);
	KUNIT_EXPECT_EQ(test, usnic_rel_seq_diff(0xfffffff0U, 0x10), -0x20);
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_after_eq(5, 0xfffffffbU));
}

static void seq_half_range_limit(struct kunit *test)
{
	/* 2^31 - 1 ahead is still "after"; exactly 2^31 apart reads as "before". */
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_after(0x7fffffffU, 0));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_before(0x80000000U, 0));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_after(0x7fffffffU + 0x10U, 0x10));
}

static void seq_window_membership_across_wrap(struct kunit *test)
{
	u32 start = 0xfffffffeU;

	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_in_window(start, start, 4));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_in_window(0xffffffffU, start, 4));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_in_window(0, start, 4));
	KUNIT_EXPECT_TRUE(test, usnic_rel_seq_in_window(1, start, 4));
	KUNIT_EXPECT_FALSE(test, usnic_rel_seq_in_window(2, start, 4));
	KUNIT_EXPECT_FALSE(test, usnic_rel_seq_in_window(start - 1, start, 4));
	KUNIT_EXPECT_FALSE(test, usnic_rel_seq_in_window(0, 0, 0));
}

static struct kunit_case usnic_rel_seq_cases[] = {
	KUNIT_CASE(seq_orders_plain_numbers),
	KUNIT_CASE(seq_orders_across_wrap),
	KUNIT_CASE(seq_half_range_limit),
	KUNIT_CASE(seq_window_membership_across_wrap),
	{}
};

static struct kunit_suite usnic_rel_seq_suite = {
	.name = "usnic_rel_seq",
	.test_cases = usnic_rel_seq_cases,
};

kunit_test_suite(usnic_rel_seq_suite);

MODULE_LICENSE("GPL");
/* The core exports its symbols to this namespace only in KUnit builds. */
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests for usnic_rel's protocol core");
