// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the RFC 6298 estimator, its backoff and its clamps, the hold of
 * the RTTVAR peak and the tail-loss probe's timeout.
 */
#include <kunit/test.h>

#include "rto.h"

/* Feed @n samples of @rtt_us, one per hold period from *@t: RTTVAR settles. */
static void rto_settle(struct usnic_rel_rto *r, u32 rtt_us, int n, u64 *t)
{
	while (n--) {
		usnic_rel_rto_sample_at(r, rtt_us, *t);
		*t += USNIC_REL_RTTVAR_HOLD_US;
	}
}

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
	usnic_rel_rto_sample_at(&r, 1000, 0);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 1000);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 500);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 1000 + 4 * 500);

	/* RTTVAR = (3 * 500 + |1000 - 2000|) / 4, SRTT = (7000 + 2000) / 8 */
	usnic_rel_rto_sample_at(&r, 2000, 10);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 625);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 1125);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 1125 + 4 * 625);
}

static void rto_steady_state(struct kunit *test)
{
	struct usnic_rel_rto r;
	u64 t = 0;

	usnic_rel_rto_init(&r, 100, 2000000);
	rto_settle(&r, 800, 100, &t);
	/* RTTVAR decays to nothing; the granularity G keeps a margin. */
	KUNIT_EXPECT_EQ(test, r.srtt_us, 800);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r),
			800 + USNIC_REL_RTO_GRANULARITY_US);

	/* A jump in RTT moves SRTT towards it and widens RTTVAR. */
	rto_settle(&r, 5000, 100, &t);
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
	usnic_rel_rto_sample_at(&r, 1000, 0);
	KUNIT_ASSERT_EQ(test, usnic_rel_rto_current_us(&r), 3000);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 100));
		KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), want[i]);
	}
	/* Far past 32 doublings: still the ceiling, no shift overflow. */
	for (i = 0; i < 40; i++)
		usnic_rel_rto_timeout(&r, 100);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 50000);

	/* Only the doublings up to the ceiling count: 5 here. */
	KUNIT_EXPECT_EQ(test, r.backoff, 5);

	/*
	 * Progress without a sample (Karn) undoes one doubling per ACK
	 * that frees packets, whatever came before...
	 */
	usnic_rel_rto_progress(&r);
	KUNIT_EXPECT_EQ(test, r.retries, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 48000);
	usnic_rel_rto_progress(&r);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 24000);
	/* ...and a timeout doubles it again. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 100));
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 48000);
	for (i = 0; i < 10; i++)
		usnic_rel_rto_progress(&r);
	KUNIT_EXPECT_EQ(test, r.backoff, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 3000);
	usnic_rel_rto_timeout(&r, 100);
	/* A valid sample ends it (a second later: the first RTTVAR decayed). */
	usnic_rel_rto_sample_at(&r, 1000, 1000000);
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

/* A not-ready answer ends the backoff and the retry count, not the RTO. */
static void rto_not_ready(struct kunit *test)
{
	struct usnic_rel_rto r;
	u32 base;
	int i;

	usnic_rel_rto_init(&r, 1000, 2000000);
	usnic_rel_rto_sample(&r, 1000);
	base = usnic_rel_rto_current_us(&r);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 5));
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), base << 4);
	usnic_rel_rto_not_ready(&r);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), base);
	for (i = 1; i < 5; i++)
		KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 5));
	KUNIT_EXPECT_TRUE(test, usnic_rel_rto_timeout(&r, 5));
}

/*
 * The HELLO's retries back the timer off before the pairing; the data's
 * first timeout after it must come one plain RTO later, and the retry
 * count starts over (both would otherwise pace the data's recovery at
 * rto_max_us with no sample to end it).
 */
static void rto_paired_restarts_backoff(struct kunit *test)
{
	struct usnic_rel_rto r;
	int i;

	usnic_rel_rto_init(&r, 5000, 2000000);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 12));
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r),
			USNIC_REL_RTO_INITIAL_US << 5);
	usnic_rel_rto_paired(&r);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r),
			USNIC_REL_RTO_INITIAL_US);
	KUNIT_EXPECT_FALSE(test, r.has_sample);
	for (i = 1; i < 12; i++)
		KUNIT_EXPECT_FALSE(test, usnic_rel_rto_timeout(&r, 12));
	KUNIT_EXPECT_TRUE(test, usnic_rel_rto_timeout(&r, 12));
}

/*
 * A stall spikes RTTVAR; RFC 6298's RTTVAR forgets it in a few samples, the
 * RTO keeps covering it for the hold period, then lets it decay.
 */
static void rto_rttvar_hold(struct kunit *test)
{
	struct usnic_rel_rto r;
	u64 t = 0, spike;
	int i;

	usnic_rel_rto_init(&r, 200, 2000000);
	rto_settle(&r, 1000, 64, &t);
	KUNIT_ASSERT_EQ(test, usnic_rel_rto_current_us(&r),
			1000 + USNIC_REL_RTO_GRANULARITY_US);

	/* RTTVAR = 8000 / 4, SRTT = (7000 + 9000) / 8 */
	spike = t;
	usnic_rel_rto_sample_at(&r, 9000, spike);
	KUNIT_EXPECT_EQ(test, r.rttvar_peak_us, 2000);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 2000 + 4 * 2000);

	/* Many quiet samples within the period: the peak holds. */
	for (i = 1; i <= 1000; i++)
		usnic_rel_rto_sample_at(&r, 1000, spike + i * 50);
	KUNIT_EXPECT_LT(test, r.rttvar_us, 10);
	KUNIT_EXPECT_EQ(test, r.rttvar_peak_us, 2000);
	KUNIT_EXPECT_GE(test, usnic_rel_rto_current_us(&r), 1000 + 4 * 2000);

	/* One period later it has lost a quarter, not more. */
	usnic_rel_rto_sample_at(&r, 1000, spike + USNIC_REL_RTTVAR_HOLD_US);
	KUNIT_EXPECT_LE(test, r.rttvar_peak_us, 1500 + 10);
	KUNIT_EXPECT_GE(test, r.rttvar_peak_us, 1500);

	/* Long past the hold it is gone, without overflowing the decay. */
	usnic_rel_rto_sample_at(&r, 1000, spike + 1000ULL * USNIC_REL_RTTVAR_HOLD_US);
	KUNIT_EXPECT_EQ(test, r.rttvar_peak_us, r.rttvar_us);
	KUNIT_EXPECT_LT(test, usnic_rel_rto_current_us(&r), 1200);

	/* A clock behind the peak's period (a caller's bug) decays nothing. */
	usnic_rel_rto_sample_at(&r, 9000, 5);
	usnic_rel_rto_sample_at(&r, 1000, 5);
	KUNIT_EXPECT_GE(test, r.rttvar_peak_us, 1500);
}

static void rto_probe_timeout(struct kunit *test)
{
	struct usnic_rel_rto r;
	u64 t = 0;

	/* No RTT sample: no probe, the RTO runs. */
	usnic_rel_rto_init(&r, 5000, 2000000);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, 1000, 2000), 0);

	/* LAN: SRTT 100 us, RTTVAR settled; the floor decides... */
	rto_settle(&r, 100, 64, &t);
	KUNIT_ASSERT_EQ(test, usnic_rel_rto_current_us(&r), 5000);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, 1000, 2000), 2000);
	/* ...or two round trips and the peer's delayed ACK. */
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, 1000, 0), 1200);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, 4000, 0), 4200);
	/* Never past the RTO. */
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, 1000, 9000), 5000);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, U32_MAX, 0), 5000);

	/* Jitter learned from RTTVAR widens it: twice the held peak. */
	usnic_rel_rto_sample_at(&r, 900, t);
	KUNIT_EXPECT_EQ(test, r.rttvar_peak_us, 200);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, 1000, 0),
			2 * r.srtt_us + 1000 + 2 * 200);

	/* Long round trips, capped by the RTO. */
	usnic_rel_rto_init(&r, 1000, 2000000);
	t = 0;
	rto_settle(&r, 3000, 64, &t);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, 1000, 0),
			3000 + USNIC_REL_RTO_GRANULARITY_US);
	usnic_rel_rto_init(&r, 10000, 2000000);
	t = 0;
	rto_settle(&r, 3000, 64, &t);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, 1000, 0), 7000);

	/*
	 * Backing off: a new flight (after an ACK that freed packets but gave
	 * no sample) is still probed after round trips, not the doubled RTO.
	 */
	usnic_rel_rto_timeout(&r, 100);
	usnic_rel_rto_timeout(&r, 100);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_current_us(&r), 4 * 10000);
	KUNIT_EXPECT_EQ(test, usnic_rel_rto_probe_us(&r, 1000, 0), 7000);
}

static struct kunit_case usnic_rel_rto_cases[] = {
	KUNIT_CASE(rto_initial_value),
	KUNIT_CASE(rto_first_and_second_sample),
	KUNIT_CASE(rto_steady_state),
	KUNIT_CASE(rto_clamps),
	KUNIT_CASE(rto_backoff),
	KUNIT_CASE(rto_retry_limit),
	KUNIT_CASE(rto_not_ready),
	KUNIT_CASE(rto_paired_restarts_backoff),
	KUNIT_CASE(rto_rttvar_hold),
	KUNIT_CASE(rto_probe_timeout),
	{}
};

static struct kunit_suite usnic_rel_rto_suite = {
	.name = "usnic_rel_rto",
	.test_cases = usnic_rel_rto_cases,
};

kunit_test_suite(usnic_rel_rto_suite);
