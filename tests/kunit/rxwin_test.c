// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: receive window classification, in-order delivery, the SACK it
 * reports and the delayed-ACK decisions.
 */
#include <kunit/test.h>

#include "rxwin.h"

static void rw_init(struct kunit *test, struct usnic_rel_rxwin *w, u32 size,
		    u32 isn, u32 ack_every)
{
	KUNIT_ASSERT_EQ(test, usnic_rel_rxwin_init(w, size, isn, ack_every,
						   GFP_KERNEL), 0);
}

static void rxwin_init_checks_args(struct kunit *test)
{
	struct usnic_rel_rxwin w;

	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_init(&w, 0, 0, 1, GFP_KERNEL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_init(&w, 48, 0, 1, GFP_KERNEL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_init(&w, 8192, 0, 1, GFP_KERNEL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_init(&w, 64, 0, 0, GFP_KERNEL),
			-EINVAL);
}

static void rxwin_delayed_ack_decisions(struct kunit *test)
{
	struct usnic_rel_rx_result res;
	struct usnic_rel_rxwin w;
	u32 seq;

	rw_init(test, &w, 64, 0xfffffffeU, 4);
	/* Three in order: coalesce; the fourth reaches ack_every. */
	for (seq = 0xfffffffeU; seq != 1; seq++) {
		usnic_rel_rxwin_receive(&w, seq, false, &res);
		KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_IN_ORDER);
		KUNIT_EXPECT_EQ(test, res.deliver_from, seq);
		KUNIT_EXPECT_EQ(test, res.deliver_count, 1);
		KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_DELAYED);
	}
	usnic_rel_rxwin_receive(&w, 1, false, &res);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	usnic_rel_rxwin_ack_sent(&w);

	usnic_rel_rxwin_receive(&w, 2, false, &res);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_DELAYED);
	/* The sender asked for an ACK. */
	usnic_rel_rxwin_receive(&w, 3, true, &res);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	usnic_rel_rxwin_ack_sent(&w);

	/* Duplicate (our ACK was lost): at once. */
	usnic_rel_rxwin_receive(&w, 3, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_DUPLICATE);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 0);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	/* A gap (the sender's packet was lost): at once. */
	usnic_rel_rxwin_receive(&w, 5, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_ORDER);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	/* Filling the gap: at once, so the sender stops recovering. */
	usnic_rel_rxwin_receive(&w, 4, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 2);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	/* Out of window: at once. */
	usnic_rel_rxwin_receive(&w, 6 + 64, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_WINDOW);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	KUNIT_EXPECT_EQ(test, w.next, 6);
	usnic_rel_rxwin_destroy(&w);
}

static void rxwin_classify_edges(struct kunit *test)
{
	struct usnic_rel_rx_result res;
	struct usnic_rel_rxwin w;

	rw_init(test, &w, 16, 0xfffffff8U, 32);
	usnic_rel_rxwin_receive(&w, 0xfffffff8U, false, &res);
	usnic_rel_rxwin_receive(&w, 0xfffffff9U, false, &res);
	/* next = 0xfffffffa; window [next, next + 16) crosses the wrap. */
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 0xfffffffaU),
			USNIC_REL_RX_IN_ORDER);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 9),
			USNIC_REL_RX_OUT_OF_ORDER);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 10),
			USNIC_REL_RX_OUT_OF_WINDOW);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 0xfffffff9U),
			USNIC_REL_RX_DUPLICATE);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 0xfffffffaU - 16),
			USNIC_REL_RX_DUPLICATE);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 0xfffffffaU - 17),
			USNIC_REL_RX_OUT_OF_WINDOW);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 0x7ffffffaU),
			USNIC_REL_RX_OUT_OF_WINDOW);

	/* Held out of order, then again: a duplicate, still held once. */
	usnic_rel_rxwin_receive(&w, 9, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_ORDER);
	usnic_rel_rxwin_receive(&w, 9, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_DUPLICATE);
	KUNIT_EXPECT_EQ(test, w.nr_ooo, 1);

	/* Classification alone changes nothing. */
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 3),
			USNIC_REL_RX_OUT_OF_ORDER);
	KUNIT_EXPECT_EQ(test, w.nr_ooo, 1);

	/* A restarted peer starts over. */
	usnic_rel_rxwin_reset(&w, 0);
	KUNIT_EXPECT_EQ(test, w.nr_ooo, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 9),
			USNIC_REL_RX_OUT_OF_ORDER);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, 0),
			USNIC_REL_RX_IN_ORDER);
	usnic_rel_rxwin_destroy(&w);
}

static void rxwin_sack_bitmap(struct kunit *test)
{
	struct usnic_rel_rx_result res;
	struct usnic_rel_rxwin w;
	u32 ack;
	u64 sack;

	rw_init(test, &w, 128, 1000, 32);
	usnic_rel_rxwin_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, 1000);
	KUNIT_EXPECT_EQ(test, sack, 0);

	/* Bit i is 1001 + i; 1065 is past the bitmap but still held. */
	usnic_rel_rxwin_receive(&w, 1001, false, &res);
	usnic_rel_rxwin_receive(&w, 1006, false, &res);
	usnic_rel_rxwin_receive(&w, 1064, false, &res);
	usnic_rel_rxwin_receive(&w, 1065, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_ORDER);
	usnic_rel_rxwin_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, 1000);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(0) | BIT_ULL(5) | BIT_ULL(63));

	/* 1000 delivers 1000 and 1001; the SACK shifts with the ACK. */
	usnic_rel_rxwin_receive(&w, 1000, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_from, 1000);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 2);
	usnic_rel_rxwin_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, 1002);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(3) | BIT_ULL(61) | BIT_ULL(62));
	usnic_rel_rxwin_destroy(&w);

	/* A window smaller than the bitmap reports only inside itself. */
	rw_init(test, &w, 16, 0, 32);
	usnic_rel_rxwin_receive(&w, 15, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_ORDER);
	usnic_rel_rxwin_receive(&w, 16, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_WINDOW);
	usnic_rel_rxwin_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(14));
	usnic_rel_rxwin_destroy(&w);
}

/* Every arrival order of a window's worth delivers each packet once, in order. */
static void rxwin_delivers_in_order(struct kunit *test)
{
	const u32 n = 256, isn = 0xffffff80U;
	struct usnic_rel_rx_result res;
	struct usnic_rel_rxwin w;
	u32 *order, i, j, t, expect, delivered, round, rnd = 12345;

	order = kunit_kmalloc_array(test, n, sizeof(*order), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, order);
	for (round = 0; round < 8; round++) {
		rw_init(test, &w, 256, isn, 16);
		/* Fisher-Yates with a fixed LCG, plus a few repeats. */
		for (i = 0; i < n; i++)
			order[i] = isn + i;
		for (i = n - 1; i > 0; i--) {
			rnd = rnd * 1103515245 + 12345;
			j = (rnd >> 8) % (i + 1);
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		expect = isn;
		delivered = 0;
		for (i = 0; i < n + n / 4; i++) {
			u32 seq = order[i < n ? i : (i * 7) % n];

			usnic_rel_rxwin_receive(&w, seq, false, &res);
			if (i >= n || seq - isn < delivered)
				KUNIT_EXPECT_EQ(test, res.class,
						USNIC_REL_RX_DUPLICATE);
			if (res.class != USNIC_REL_RX_IN_ORDER)
				continue;
			KUNIT_EXPECT_EQ(test, res.deliver_from, expect);
			expect += res.deliver_count;
			delivered += res.deliver_count;
		}
		KUNIT_EXPECT_EQ(test, delivered, n);
		KUNIT_EXPECT_EQ(test, w.next, isn + n);
		KUNIT_EXPECT_EQ(test, w.nr_ooo, 0);
		usnic_rel_rxwin_destroy(&w);
	}
}

static struct kunit_case usnic_rel_rxwin_cases[] = {
	KUNIT_CASE(rxwin_init_checks_args),
	KUNIT_CASE(rxwin_delayed_ack_decisions),
	KUNIT_CASE(rxwin_classify_edges),
	KUNIT_CASE(rxwin_sack_bitmap),
	KUNIT_CASE(rxwin_delivers_in_order),
	{}
};

static struct kunit_suite usnic_rel_rxwin_suite = {
	.name = "usnic_rel_rxwin",
	.test_cases = usnic_rel_rxwin_cases,
};

kunit_test_suite(usnic_rel_rxwin_suite);
