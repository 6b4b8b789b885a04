// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: receive window classification, in-order delivery, the SACK it
 * reports and the delayed-ACK decisions.
 */
#include <kunit/test.h>

#include "rxwin.h"
#include "txwin.h"
#include "wire.h"

static void rw_init(struct kunit *test, struct usnic_rel_rxwin *w, u32 size,
		    u32 isn, u32 ack_every)
{
	KUNIT_ASSERT_EQ(test, usnic_rel_rxwin_init(w, size, isn, ack_every), 0);
	KUNIT_EXPECT_EQ(test, w->cap, 0);
}

/* The acknowledgment when everything received in order was delivered. */
static void rw_build_ack(const struct usnic_rel_rxwin *w, u32 *ack, u64 *sack)
{
	usnic_rel_rxwin_build_ack_from(w, w->next, ack, sack);
}

/* ... and its SACK blocks. */
static u32 rw_sack_blocks(struct usnic_rel_rxwin *w, void *blocks, u32 max)
{
	return usnic_rel_rxwin_sack_blocks_from(w, w->next, blocks, max);
}

/* Receive @seq, growing the slots first as the connection does. */
static void rw_recv(struct kunit *test, struct usnic_rel_rxwin *w, u32 seq,
		    bool ack_req, struct usnic_rel_rx_result *res)
{
	if (usnic_rel_rxwin_classify(w, seq) == USNIC_REL_RX_OUT_OF_ORDER &&
	    !usnic_rel_rxwin_fits(w, seq))
		KUNIT_ASSERT_EQ(test, usnic_rel_rxwin_grow(w, seq, GFP_KERNEL), 0);
	usnic_rel_rxwin_receive(w, seq, ack_req, res);
}

static void rxwin_init_checks_args(struct kunit *test)
{
	struct usnic_rel_rxwin w;

	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_init(&w, 0, 0, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_init(&w, 48, 0, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_init(&w, 8192, 0, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_init(&w, 64, 0, 0),
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
		rw_recv(test, &w, seq, false, &res);
		KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_IN_ORDER);
		KUNIT_EXPECT_EQ(test, res.deliver_from, seq);
		KUNIT_EXPECT_EQ(test, res.deliver_count, 1);
		KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_DELAYED);
	}
	rw_recv(test, &w, 1, false, &res);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	usnic_rel_rxwin_ack_sent(&w);

	rw_recv(test, &w, 2, false, &res);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_DELAYED);
	/* The sender asked for an ACK. */
	rw_recv(test, &w, 3, true, &res);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	usnic_rel_rxwin_ack_sent(&w);

	/* Duplicate (our ACK was lost): at once. */
	rw_recv(test, &w, 3, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_DUPLICATE);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 0);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	/* A gap (the sender's packet was lost): at once. */
	rw_recv(test, &w, 5, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_ORDER);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	/* Filling the gap: at once, so the sender stops recovering. */
	rw_recv(test, &w, 4, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 2);
	KUNIT_EXPECT_EQ(test, res.ack, USNIC_REL_ACK_NOW);
	/* Out of window: at once. */
	rw_recv(test, &w, 6 + 64, false, &res);
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
	rw_recv(test, &w, 0xfffffff8U, false, &res);
	rw_recv(test, &w, 0xfffffff9U, false, &res);
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
	rw_recv(test, &w, 9, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_ORDER);
	rw_recv(test, &w, 9, false, &res);
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
	rw_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, 1000);
	KUNIT_EXPECT_EQ(test, sack, 0);

	/* Bit i is 1001 + i; 1065 is past the bitmap but still held. */
	rw_recv(test, &w, 1001, false, &res);
	rw_recv(test, &w, 1006, false, &res);
	rw_recv(test, &w, 1064, false, &res);
	rw_recv(test, &w, 1065, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_ORDER);
	rw_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, 1000);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(0) | BIT_ULL(5) | BIT_ULL(63));

	/* 1000 delivers 1000 and 1001; the SACK shifts with the ACK. */
	rw_recv(test, &w, 1000, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_from, 1000);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 2);
	rw_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, 1002);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(3) | BIT_ULL(61) | BIT_ULL(62));
	usnic_rel_rxwin_destroy(&w);

	/* A window smaller than the bitmap reports only inside itself. */
	rw_init(test, &w, 16, 0, 32);
	rw_recv(test, &w, 15, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_ORDER);
	rw_recv(test, &w, 16, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_WINDOW);
	rw_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(14));
	usnic_rel_rxwin_destroy(&w);
}

/* Check the (start, len) pairs of @n blocks at @b. */
static void rw_expect_blocks(struct kunit *test, const void *b, u32 n,
			     const u32 (*want)[2], u32 nwant)
{
	u32 i, start, len;

	KUNIT_ASSERT_EQ(test, n, nwant);
	for (i = 0; i < n; i++) {
		usnic_rel_sack_block_get(b, i, &start, &len);
		KUNIT_EXPECT_EQ(test, start, want[i][0]);
		KUNIT_EXPECT_EQ(test, len, want[i][1]);
	}
}

/*
 * Ranges held beyond the bitmap become SACK blocks relative to the ACK;
 * with less room than ranges, successive ACKs go on where the last stopped
 * and then start over, so the sender hears of every range.
 */
static void rxwin_sack_blocks(struct kunit *test)
{
	static const u32 all[][2] = { { 70, 3 }, { 80, 1 }, { 100, 2 },
				      { 3000, 10 } };
	static const u32 after[][2] = { { 98, 2 }, { 2998, 10 } };
	static const u32 offs[] = { 5, 70, 71, 72, 80, 100, 101 };
	u8 b[USNIC_REL_WIRE_SACK_BLOCKS * sizeof(struct usnic_rel_sack_block)];
	const u32 isn = 0xfffffff0U;
	struct usnic_rel_rx_result res;
	struct usnic_rel_rxwin w;
	u32 i, n;

	rw_init(test, &w, 4096, isn, 32);
	KUNIT_EXPECT_EQ(test, rw_sack_blocks(&w, b, 4), 0);
	for (i = 0; i < ARRAY_SIZE(offs); i++)
		rw_recv(test, &w, isn + offs[i], false, &res);
	for (i = 3000; i < 3010; i++)
		rw_recv(test, &w, isn + i, false, &res);
	n = rw_sack_blocks(&w, b, USNIC_REL_WIRE_SACK_BLOCKS);
	rw_expect_blocks(test, b, n, all, 4);

	/* Two at a time: 1-2, 3-4, then nothing left past 3009, then 1-2 again. */
	n = rw_sack_blocks(&w, b, 2);
	rw_expect_blocks(test, b, n, all, 2);
	n = rw_sack_blocks(&w, b, 2);
	rw_expect_blocks(test, b, n, all + 2, 2);
	n = rw_sack_blocks(&w, b, 2);
	KUNIT_EXPECT_EQ(test, n, 0);
	n = rw_sack_blocks(&w, b, 2);
	rw_expect_blocks(test, b, n, all, 2);

	/*
	 * 0 and 1 arrive: the blocks are relative to the new cumulative ACK,
	 * and the list goes on after the last one reported.
	 */
	rw_recv(test, &w, isn, false, &res);
	rw_recv(test, &w, isn + 1, false, &res);
	KUNIT_EXPECT_EQ(test, w.next, isn + 2);
	n = rw_sack_blocks(&w, b, 2);
	rw_expect_blocks(test, b, n, after, 2);
	usnic_rel_rxwin_destroy(&w);
}

/*
 * Packets received in order but waiting for receive buffers (from the
 * first one not delivered up to next) are not acknowledged: the ACK stops
 * at the first of them and SACKs the rest, before what is held out of
 * order; in the bitmap and, past it, in blocks.
 */
static void rxwin_ack_from_undelivered(struct kunit *test)
{
	static const u32 blocks[][2] = { { 65, 35 }, { 101, 1 } };
	u8 b[USNIC_REL_WIRE_SACK_BLOCKS * sizeof(struct usnic_rel_sack_block)];
	struct usnic_rel_rx_result res;
	struct usnic_rel_rxwin w;
	const u32 isn = 0xffffffe0U;
	u32 ack, i, n;
	u64 sack;

	rw_init(test, &w, 256, isn, 32);
	for (i = 0; i < 5; i++)
		rw_recv(test, &w, isn + i, false, &res);
	rw_recv(test, &w, isn + 6, false, &res);
	/* isn + 2 .. isn + 4 wait for buffers; isn + 5 is missing. */
	usnic_rel_rxwin_build_ack_from(&w, isn + 2, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, isn + 2);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(0) | BIT_ULL(1) | BIT_ULL(3));
	/* All delivered: as before. */
	usnic_rel_rxwin_build_ack_from(&w, w.next, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, isn + 5);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(0));
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_sack_blocks_from(&w, w.next, b, 4), 0);
	/* Nothing waits and nothing is held: an empty bitmap. */
	rw_recv(test, &w, isn + 5, false, &res);
	usnic_rel_rxwin_build_ack_from(&w, w.next, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, isn + 7);
	KUNIT_EXPECT_EQ(test, sack, 0);

	/* 100 waiting, across 2^32, and one held out of order after a hole. */
	for (i = 7; i < 107; i++)
		rw_recv(test, &w, isn + i, false, &res);
	rw_recv(test, &w, isn + 108, false, &res);
	usnic_rel_rxwin_build_ack_from(&w, isn + 7, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, isn + 7);
	KUNIT_EXPECT_EQ(test, sack, ~0ULL);
	n = usnic_rel_rxwin_sack_blocks_from(&w, isn + 7, b, 4);
	rw_expect_blocks(test, b, n, blocks, 2);
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

			rw_recv(test, &w, seq, false, &res);
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

static void *rw_pkt(u32 seq)
{
	return (void *)(uintptr_t)(((unsigned long)seq << 4) | 8);
}

/* Hold out-of-order @seq with its fake packet, growing as needed. */
static void rw_hold(struct kunit *test, struct usnic_rel_rxwin *w, u32 seq)
{
	struct usnic_rel_rx_result res;

	rw_recv(test, w, seq, false, &res);
	KUNIT_ASSERT_EQ(test, res.class, USNIC_REL_RX_OUT_OF_ORDER);
	usnic_rel_rxwin_set_held(w, seq, rw_pkt(seq));
}

/*
 * The slots start empty and grow to hold the furthest out-of-order packet
 * the sender's window allows, across the wrap; the held packets, their
 * bits and the SACK they produce move with them.
 */
static void rxwin_grows_across_wrap_keeping_held(struct kunit *test)
{
	const u32 isn = 0xfffffff0U;
	struct usnic_rel_rx_result res;
	struct usnic_rel_rxwin w;
	u64 sack, sack2;
	u32 ack, ack2, seq;

	rw_init(test, &w, 4096, isn, 32);
	/* In order needs no slots. */
	usnic_rel_rxwin_receive(&w, isn, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_IN_ORDER);
	KUNIT_EXPECT_EQ(test, w.cap, 0);
	rw_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, ack, isn + 1);
	KUNIT_EXPECT_EQ(test, sack, 0);

	/* Beyond the slots but inside the window: out of order, never a dup. */
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, isn + 4000),
			USNIC_REL_RX_OUT_OF_ORDER);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, isn + 1 + 4096),
			USNIC_REL_RX_OUT_OF_WINDOW);
	KUNIT_EXPECT_FALSE(test, usnic_rel_rxwin_fits(&w, isn + 3));
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_grow_cap(&w, isn + 3),
			USNIC_REL_MIN_WINDOW);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_grow_cap(&w, isn + 1 + 100), 128);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_grow_cap(&w, isn + 1 + 4096), 0);

	rw_hold(test, &w, isn + 3);
	rw_hold(test, &w, isn + 7);
	KUNIT_EXPECT_EQ(test, w.cap, 16);
	rw_build_ack(&w, &ack, &sack);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(1) | BIT_ULL(5));

	/* isn + 40 crosses the wrap and needs 64 slots; then 4096. */
	rw_hold(test, &w, isn + 40);
	KUNIT_EXPECT_EQ(test, w.cap, 64);
	rw_build_ack(&w, &ack2, &sack2);
	KUNIT_EXPECT_EQ(test, ack2, ack);
	KUNIT_EXPECT_EQ(test, sack2, sack | BIT_ULL(38));
	rw_hold(test, &w, isn + 4000);
	KUNIT_EXPECT_EQ(test, w.cap, 4096);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_bytes(w.cap),
			4096 / 8 + 4096 * sizeof(void *));
	rw_build_ack(&w, &ack2, &sack2);
	KUNIT_EXPECT_EQ(test, sack2, sack | BIT_ULL(38));
	KUNIT_EXPECT_EQ(test, w.nr_ooo, 4);
	/* Held before the resize: still duplicates after it. */
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, isn + 7),
			USNIC_REL_RX_DUPLICATE);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, isn + 40),
			USNIC_REL_RX_DUPLICATE);

	/* Filling the holes delivers in order; the packets come back. */
	usnic_rel_rxwin_receive(&w, isn + 1, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 1);
	usnic_rel_rxwin_receive(&w, isn + 2, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_from, isn + 2);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 2);
	KUNIT_EXPECT_PTR_EQ(test, usnic_rel_rxwin_take_held(&w, isn + 3),
			    rw_pkt(isn + 3));
	for (seq = isn + 4; seq != isn + 7; seq++)
		usnic_rel_rxwin_receive(&w, seq, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 2);
	KUNIT_EXPECT_PTR_EQ(test, usnic_rel_rxwin_take_held(&w, isn + 7),
			    rw_pkt(isn + 7));
	for (seq = isn + 8; seq != isn + 40; seq++)
		usnic_rel_rxwin_receive(&w, seq, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_from, isn + 39);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 2);
	KUNIT_EXPECT_PTR_EQ(test, usnic_rel_rxwin_take_held(&w, isn + 40),
			    rw_pkt(isn + 40));
	KUNIT_EXPECT_EQ(test, w.next, isn + 41);
	KUNIT_EXPECT_EQ(test, w.nr_ooo, 1);
	KUNIT_EXPECT_PTR_EQ(test, w.held[usnic_rel_rxwin_slot(&w, isn + 4000)],
			    rw_pkt(isn + 4000));
	usnic_rel_rxwin_destroy(&w);
}

/*
 * Shrinking looks back one period and never drops a held packet: the far
 * one keeps the slots; once delivered, twice the peak since; idle: none.
 */
static void rxwin_shrinks_after_use(struct kunit *test)
{
	const u32 isn = 0xffffffd0U;
	struct usnic_rel_rx_result res;
	struct usnic_rel_rxwin w;
	unsigned long *ooo;
	void **held;
	u32 seq, cap;
	u64 sack;

	rw_init(test, &w, 1024, isn, 32);
	rw_hold(test, &w, isn + 2);
	rw_hold(test, &w, isn + 500);
	KUNIT_EXPECT_EQ(test, w.cap, 512);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_shrink_cap(&w), 512);
	/* Still held at isn + 500: refused smaller than that. */
	KUNIT_ASSERT_EQ(test, usnic_rel_rxwin_arrays_alloc(256, &ooo, &held,
							   GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_resize(&w, 256, &ooo, &held),
			-EBUSY);
	usnic_rel_rxwin_arrays_free(ooo, held);
	KUNIT_EXPECT_EQ(test, w.cap, 512);

	/* Deliver up to isn + 490 (across the wrap): 10 ahead still held. */
	for (seq = isn; seq != isn + 490; seq++) {
		usnic_rel_rxwin_receive(&w, seq, false, &res);
		if (seq == isn + 1)
			KUNIT_EXPECT_PTR_EQ(test,
					    usnic_rel_rxwin_take_held(&w, isn + 2),
					    rw_pkt(isn + 2));
	}
	rw_hold(test, &w, isn + 492);
	KUNIT_EXPECT_EQ(test, w.nr_ooo, 2);
	/* This period reached 501 ahead: no change; the next, 11. */
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_shrink_cap(&w), 512);
	cap = usnic_rel_rxwin_shrink_cap(&w);
	KUNIT_EXPECT_EQ(test, cap, 32);
	KUNIT_ASSERT_EQ(test, usnic_rel_rxwin_arrays_alloc(cap, &ooo, &held,
							   GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, usnic_rel_rxwin_resize(&w, cap, &ooo, &held), 0);
	usnic_rel_rxwin_arrays_free(ooo, held);
	KUNIT_EXPECT_EQ(test, w.cap, 32);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_classify(&w, isn + 492),
			USNIC_REL_RX_DUPLICATE);
	rw_build_ack(&w, &seq, &sack);
	KUNIT_EXPECT_EQ(test, seq, isn + 490);
	KUNIT_EXPECT_EQ(test, sack, BIT_ULL(1) | BIT_ULL(9));

	usnic_rel_rxwin_receive(&w, isn + 490, false, &res);
	usnic_rel_rxwin_receive(&w, isn + 491, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 2);
	KUNIT_EXPECT_PTR_EQ(test, usnic_rel_rxwin_take_held(&w, isn + 492),
			    rw_pkt(isn + 492));
	for (seq = isn + 493; seq != isn + 500; seq++)
		usnic_rel_rxwin_receive(&w, seq, false, &res);
	KUNIT_EXPECT_EQ(test, res.deliver_count, 2);
	KUNIT_EXPECT_PTR_EQ(test, usnic_rel_rxwin_take_held(&w, isn + 500),
			    rw_pkt(isn + 500));
	KUNIT_EXPECT_EQ(test, w.nr_ooo, 0);

	/* Held something this period, nothing the next: free. */
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_shrink_cap(&w), 32);
	KUNIT_EXPECT_EQ(test, usnic_rel_rxwin_shrink_cap(&w), 0);
	ooo = NULL;
	held = NULL;
	KUNIT_ASSERT_EQ(test, usnic_rel_rxwin_resize(&w, 0, &ooo, &held), 0);
	usnic_rel_rxwin_arrays_free(ooo, held);
	KUNIT_EXPECT_EQ(test, w.cap, 0);
	/* In order and duplicates need no slots; out of order grows again. */
	usnic_rel_rxwin_receive(&w, isn + 501, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_IN_ORDER);
	usnic_rel_rxwin_receive(&w, isn + 5, false, &res);
	KUNIT_EXPECT_EQ(test, res.class, USNIC_REL_RX_DUPLICATE);
	rw_build_ack(&w, &seq, &sack);
	KUNIT_EXPECT_EQ(test, sack, 0);
	rw_hold(test, &w, isn + 504);
	KUNIT_EXPECT_EQ(test, w.cap, USNIC_REL_MIN_WINDOW);
	usnic_rel_rxwin_destroy(&w);
}

static struct kunit_case usnic_rel_rxwin_cases[] = {
	KUNIT_CASE(rxwin_init_checks_args),
	KUNIT_CASE(rxwin_delayed_ack_decisions),
	KUNIT_CASE(rxwin_classify_edges),
	KUNIT_CASE(rxwin_sack_bitmap),
	KUNIT_CASE(rxwin_sack_blocks),
	KUNIT_CASE(rxwin_ack_from_undelivered),
	KUNIT_CASE(rxwin_delivers_in_order),
	KUNIT_CASE(rxwin_grows_across_wrap_keeping_held),
	KUNIT_CASE(rxwin_shrinks_after_use),
	{}
};

static struct kunit_suite usnic_rel_rxwin_suite = {
	.name = "usnic_rel_rxwin",
	.test_cases = usnic_rel_rxwin_cases,
};

kunit_test_suite(usnic_rel_rxwin_suite);
