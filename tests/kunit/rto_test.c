// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the RFC 6298 estimator, its backoff and its clamps.
 */
#include <kunit/test.h>

#include "rto.h"

static void rto_initial_value(struct kunit *test)
{
	struct usnic_rel_rto r;

	usnic_rel_rto_init(&r, 1000, 2000000);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r),
			USNIC_REL_RTO_INITIAL_US);
	/* The initial guess obeys the clamps too. */
	usnic_rel_rto_init(&r, 100000, 2000000);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 100000);
	usnic_rel_rto_init(&r, 10, 20000);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 20000);
	/* Nonsense bounds are repaired: min >= 1, max >= min. */
	usnic_rel_rto_init(&r, 0, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 1);
}

static void rto_first_and_second_sample(struct kunit *test)
{
	struct usnic_rel_rto r;

	usnic_rel_rto_init(&r, 100, 2000000);
	usnic_rel_rto_sample(&r, 1000);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 1000);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 500);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 1000 + 4 * 500);

	/* RTTVAR = (3 * 500 + |1000 - 2000|) / 4, SRTT = (7000 + 2000) / 8 */
	usnic_rel_rto_sample(&r, 2000);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 625);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 1125);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 1125 + 4 * 625);
}

static void rto_steady_state(struct kunit *test)
{
	struct usnic_rel_rto r;
	int i;

	usnic_rel_rto_init(&r, 100, 2000000);
	for (i = 0; i < 100; i++)
		usnic_rel_rto_sample(&r, 800);
	/* RTTVAR decays to nothing; the granularity G keeps a margin. */
	KUNIT_EXPECT_EQ(test, r.srtt_us, 800);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r),
			800 + USNIC_REL_RTO_GRANULARITY_US);

	/* A jump in RTT moves SRTT towards it and widens RTTVAR. */
	for (i = 0; i < 100; i++)
		usnic_rel_rto_sample(&r, 5000);
	KUNIT_EXPECT_GE(test, r.srtt_us, 4990);
	KUNIT_EXPECT_LE(test, r.srtt_us, 5000);
	KUNIT_EXPECT_LE(test, usnic_rel_rto_current_us(&r),
			5000 + USNIC_REL_RTO_GRANULARITY_US);
}

static void rto_clamps(struct kunit *test)
{
	struct usnic_rel_rto r;

	usnic_rel_rto_init(&r, 5000, 200000);
	usnic_rel_rto_sample(&r, 1);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 5000);
	usnic_rel_rto_sample(&r, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 5000);

	usnic_rel_rto_init(&r, 5000, 200000);
	usnic_rel_rto_sample(&r, U32_MAX);
	KUNIT_EXPECT_EQ(test, r.srtt_us, USNIC_REL_RTT_MAX_US);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 200000);
	/* Huge samples in a row cannot overflow the arithmetic. */
	usnic_rel_rto_sample(&r, U32_MAX);
	usnic_rel_rto_sample(&r, 0);
	KUNIT_EXPECT_LE(test, r.srtt_us, USNIC_REL_RTT_MAX_US);
	KUNIT_EXPECT_LE(test, r.rttvar_us, USNIC_REL_RTT_MAX_US);
}

static void rto_backoff(struct kunit *test)
{
	static const u32 want[] = { 6000, 12000, 24000, 48000, 50000, 50000 };
	struct usnic_rel_rto r;
	unsigned int i;

	usnic_rel_rto_init(&r, 1000, 50000);
	usnic_rel_rto_sample(&r, 1000);
	KUNIT_ASSERT_EQ(test, usnic_rel_rto_current_us(&r), 3000);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 100));
		KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), want[i]);
	}
	/* Far past 32 doublings: still the ceiling, no shift overflow. */
	for (i = 0; i < 40; i++)
		usnic_rel_rto_timeout(&r, 100);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 50000);

	/* Progress without a sample (Karn) keeps the backoff... */
	usnic_rel_rto_progress(&r);
	KUNIT_EXPECT_EQ(test, r.retries, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 50000);
	/* ...a valid sample ends it. */
	usnic_rel_rto_sample(&r, 1000);
	KUNIT_EXPECT_LT(test, usnic_rel_rto_current_us(&r), 3000);
	KUNIT_EXPECT_EQ(test, r.backoff, 0);
}

static void rto_retry_limit(struct kunit *test)
{
	struct usnic_rel_rto r;
	int i;

	usnic_rel_rto_init(&r, 1000, 50000);
	for (i = 1; i < 5; i++)
		KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 5));
	KUNIT_EXPECT_TRUE(test, usnic_rel_rto_timeout(&r, 5));

	/* The peer answered: it gets retry_limit timeouts again. */
	usnic_rel_rto_progress(&r);
	for (i = 1; i < 5; i++)
		KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 5));
	usnic_rel_rto_sample(&r, 1000);
	KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 5));
	KUNIT_EXPECT_TRUE(test, usnic_rel_rto_timeout(&r, 1));
}

static struct kunit_case usnic_rel_rto_cases[] = {
	KUNIT_CASE(rto_initial_value),
	KUNIT_CASE(rto_first_and_second_sample),
	KUNIT_CASE(rto_steady_state),
	KUNIT_CASE(rto_clamps),
	KUNIT_CASE(rto_backoff),
	KUNIT_CASE(rto_retry_limit),
	{}
};

static struct kunit_suite usnic_rel_rto_suite = {
	.name = "usnic_rel_rto",
	.test_cases = usnic_rel_rto_cases,
};

kunit_test_suite(usnic_rel_rto_suite);
