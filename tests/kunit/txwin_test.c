// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: send window accounting, ACK/SACK validation, Karn's rule and the
 * fast-retransmit decision.
 */
#include <kunit/test.h>

#include "txwin.h"
#include "wire.h"

static void tw_init(struct kunit *test, struct usnic_rel_txwin *w, u32 size,
		    u32 isn)
{
	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(w, size, isn), 0);
	KUNIT_EXPECT_EQ(test, w->cap, 0);
	KUNIT_EXPECT_PTR_EQ(test, w->slots, NULL);
}

/* Push one packet, growing the slots as the connection does. */
static int tw_push(struct kunit *test, struct usnic_rel_txwin *w, u64 now,
		   u32 *seq)
{
	int ret = usnic_rel_txwin_push(w, now, seq);

	if (ret != -ENOBUFS)
		return ret;
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_inflight(w), w->cap);
	KUNIT_EXPECT_GT(test, usnic_rel_txwin_grow_cap(w), w->cap);
	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_grow(w, GFP_KERNEL), 0);
	return usnic_rel_txwin_push(w, now, seq);
}

/* Send @n packets at time @now; expect them numbered from w->next on. */
static void tw_send(struct kunit *test, struct usnic_rel_txwin *w, u32 n,
		    u64 now)
{
	u32 seq, want;

	while (n--) {
		want = w->next;
		KUNIT_ASSERT_EQ(test, tw_push(test, w, now, &seq), 0);
		KUNIT_EXPECT_EQ(test, seq, want);
	}
}

static void txwin_init_checks_size(struct kunit *test)
{
	static const u32 bad[] = { 0, 3, 100, USNIC_REL_MAX_WINDOW * 2 };
	struct usnic_rel_txwin w;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ(test, usnic_rel_txwin_init(&w, bad[i], 0),
				-EINVAL);
	tw_init(test, &w, USNIC_REL_MAX_WINDOW, 0);
	tw_send(test, &w, USNIC_REL_MAX_WINDOW, 1);
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_full(&w));
	usnic_rel_txwin_destroy(&w);
}

static void txwin_fills_to_limit(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq = 1234;

	tw_init(test, &w, 16, 100);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_inflight(&w), 0);
	tw_send(test, &w, 16, 1);
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_full(&w));
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_push(&w, 2, &seq), -ENOSPC);
	KUNIT_EXPECT_EQ(test, seq, 1234);
	KUNIT_EXPECT_EQ(test, w.next, 116);

	/* Freeing one slot admits exactly one more packet. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 101, 0, true, 3, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed_from, 100);
	KUNIT_EXPECT_EQ(test, res.freed, 1);
	tw_send(test, &w, 1, 4);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_push(&w, 5, &seq), -ENOSPC);

	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 117, 0, true, 6, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed, 16);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_inflight(&w), 0);

	/* A reset (peer restarted) empties a full window. */
	tw_send(test, &w, 16, 7);
	usnic_rel_txwin_reset(&w, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_inflight(&w), 0);
	KUNIT_EXPECT_EQ(test, w.size, 16);
	tw_send(test, &w, 16, 8);
	KUNIT_EXPECT_EQ(test, w.next, 16);
	usnic_rel_txwin_destroy(&w);
}

static void txwin_wraps_across_2_32(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 round;

	tw_init(test, &w, 16, 0xfffffff8U);
	/* Fill and drain the window four times across the wrap. */
	for (round = 0; round < 4; round++) {
		u32 start = w.next;

		tw_send(test, &w, 16, round);
		KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_full(&w));
		KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, start + 10, 0,
							  true, round, &res),
				USNIC_REL_ACK_NEW);
		KUNIT_EXPECT_EQ(test, res.freed_from, start);
		KUNIT_EXPECT_EQ(test, res.freed, 10);
		KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, start + 16, 0,
							  true, round, &res),
				USNIC_REL_ACK_NEW);
		KUNIT_EXPECT_EQ(test, res.freed, 6);
	}
	KUNIT_EXPECT_EQ(test, w.una, 0x38U);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_inflight(&w), 0);
	usnic_rel_txwin_destroy(&w);
}

static void txwin_rejects_stale_and_forged_acks(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	/* In flight: 0xfffffffe .. 0x00000005 (8 packets), across the wrap. */
	tw_init(test, &w, 64, 0xfffffffcU);
	tw_send(test, &w, 10, 1);
	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_ack(&w, 0xfffffffeU, 0, true, 2,
						  &res),
			USNIC_REL_ACK_NEW);

	/* Below una, near or almost 2^31 away: stale. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0xfffffffdU, 0, true, 3,
						  &res),
			USNIC_REL_ACK_STALE);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0x80000010U, 0, true, 3,
						  &res),
			USNIC_REL_ACK_STALE);
	/* Beyond next: acknowledges what was never sent. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 7, 0, true, 3, &res),
			USNIC_REL_ACK_FORGED);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0x7ffffff0U + 8, 0, true,
						  3, &res),
			USNIC_REL_ACK_FORGED);
	/* SACK bits past next - 1: ack 0 may SACK 1..5 (bits 0..4) only. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 1ULL << 5, true, 3,
						  &res),
			USNIC_REL_ACK_FORGED);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 6, 1, true, 3, &res),
			USNIC_REL_ACK_FORGED);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 5, 1, true, 3, &res),
			USNIC_REL_ACK_FORGED);
	/* None of that moved anything. */
	KUNIT_EXPECT_EQ(test, w.una, 0xfffffffeU);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 0);
	KUNIT_EXPECT_EQ(test, w.dup_acks, 0);

	/* The same ACK again is a duplicate; the last legal SACK bit is ok. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0xfffffffeU, 0, true, 4,
						  &res),
			USNIC_REL_ACK_DUP);
	KUNIT_EXPECT_EQ(test, res.freed, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 1ULL << 4, true, 5,
						  &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed, 2);
	KUNIT_EXPECT_EQ(test, res.newly_sacked, 1);
	/* Everything acknowledged: ack == next is legal, no SACK bit is. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 6, 0, true, 6, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 6, 1, true, 6, &res),
			USNIC_REL_ACK_FORGED);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 0);
	usnic_rel_txwin_destroy(&w);
}

static void txwin_karn_rtt_samples(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq;

	tw_init(test, &w, 16, 0);
	tw_send(test, &w, 1, 1000);
	usnic_rel_txwin_ack(&w, 1, 0, true, 1250, &res);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, 250);

	/* Retransmitted: ambiguous, no sample. */
	tw_send(test, &w, 1, 2000);
	usnic_rel_txwin_retransmitted(&w, 1, 3000);
	usnic_rel_txwin_ack(&w, 2, 0, true, 3100, &res);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, -1);

	/* An ACK covering a resent packet and a fresh one: no sample either. */
	tw_send(test, &w, 2, 4000);
	usnic_rel_txwin_retransmitted(&w, 2, 4500);
	usnic_rel_txwin_ack(&w, 4, 0, true, 4600, &res);
	KUNIT_EXPECT_EQ(test, res.freed, 2);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, -1);

	/*
	 * SACKed before the cumulative ACK reached it: the SACK measured the
	 * path, the cumulative ACK waited for the hole.
	 */
	tw_send(test, &w, 2, 5000);
	usnic_rel_txwin_ack(&w, 4, 1, true, 5100, &res);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, 100);
	usnic_rel_txwin_ack(&w, 6, 0, true, 9000, &res);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, -1);

	/* Several fresh packets: sample from the newest. */
	tw_send(test, &w, 1, 10000);
	tw_send(test, &w, 1, 10400);
	usnic_rel_txwin_ack(&w, 8, 0, true, 10500, &res);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, 100);

	/* A retransmission of a packet already acknowledged is ignored. */
	usnic_rel_txwin_retransmitted(&w, 7, 11000);
	KUNIT_EXPECT_EQ(test, tw_push(test, &w, 12000, &seq), 0);
	usnic_rel_txwin_ack(&w, 9, 0, true, 12300, &res);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, 300);
	usnic_rel_txwin_destroy(&w);
}

static void txwin_sack_fast_retransmit(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq;

	tw_init(test, &w, 64, 0);
	tw_send(test, &w, 10, 1);

	/* 0 lost; 1 and 2 arrive: not yet enough evidence. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x1, true, 2, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x3, true, 2, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.newly_sacked, 1);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	/* 4 arrives too (3 lost as well): three SACKed above the hole. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0xb, true, 3, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_lost_end(&w), 5);

	/* The holes below the highest SACK are 0 and 3, nothing else. */
	seq = 0;
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_retx(&w, &seq, 5));
	KUNIT_EXPECT_EQ(test, seq, 0);
	usnic_rel_txwin_retransmitted(&w, seq++, 4);
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_retx(&w, &seq, 5));
	KUNIT_EXPECT_EQ(test, seq, 3);
	usnic_rel_txwin_retransmitted(&w, seq++, 4);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_next_retx(&w, &seq, 5));
	/* Already resent in this recovery: not offered again. */
	seq = 0;
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_next_retx(&w, &seq, 5));

	/* More SACKs in the same recovery do not trigger it again. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x1b, true, 5, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x1b, true, 5, &res),
			USNIC_REL_ACK_DUP);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);

	/* Partial ACK (0 arrived, 3 still missing): resend the next hole. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 3, 0x3, true, 6, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed, 3);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, -1);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 2);

	/* Everything up to recover acknowledged: recovery over. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 10, 0, true, 7, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, w.in_recovery);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_lost_end(&w), 10);
	usnic_rel_txwin_destroy(&w);
}

static void txwin_duplicate_acks(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq = 0, end;
	int i;

	tw_init(test, &w, 128, 0);
	/* Beyond the SACK bitmap's reach, only duplicates tell of a loss. */
	tw_send(test, &w, 100, 1);
	usnic_rel_txwin_ack(&w, 1, 0, true, 2, &res);

	/* Piggy-backed repeats of an old ACK are not duplicates. */
	for (i = 0; i < 5; i++) {
		usnic_rel_txwin_ack(&w, 1, 0, false, 3, &res);
		KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	}
	KUNIT_EXPECT_EQ(test, w.dup_acks, 0);

	for (i = 1; i <= USNIC_REL_DUPACK_THRESH; i++) {
		KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 1, 0, true, 4,
							  &res),
				USNIC_REL_ACK_DUP);
		KUNIT_EXPECT_EQ(test, res.fast_retransmit,
				i == USNIC_REL_DUPACK_THRESH);
	}
	/* No SACK: only the first unacknowledged packet is known lost. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_lost_end(&w), 2);
	end = usnic_rel_txwin_lost_end(&w);
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_retx(&w, &seq, end));
	KUNIT_EXPECT_EQ(test, seq, 1);

	/* New data acknowledged resets the count. */
	usnic_rel_txwin_ack(&w, 100, 0, true, 5, &res);
	KUNIT_EXPECT_EQ(test, w.dup_acks, 0);
	/* Nothing in flight: an ACK is never a duplicate. */
	usnic_rel_txwin_ack(&w, 100, 0, true, 6, &res);
	KUNIT_EXPECT_EQ(test, w.dup_acks, 0);
	usnic_rel_txwin_destroy(&w);
}

static void txwin_early_retransmit(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq = 0;

	tw_init(test, &w, 16, 0);
	/* Two in flight: the second SACKed is enough to resend the first. */
	tw_send(test, &w, 2, 1);
	usnic_rel_txwin_ack(&w, 0, 0x1, true, 2, &res);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_retx(&w, &seq,
							  usnic_rel_txwin_lost_end(&w)));
	KUNIT_EXPECT_EQ(test, seq, 0);
	usnic_rel_txwin_ack(&w, 2, 0, true, 3, &res);

	/* Three in flight: one SACK may be reordering, two are a loss. */
	tw_send(test, &w, 3, 4);
	usnic_rel_txwin_ack(&w, 2, 0x2, true, 5, &res);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	usnic_rel_txwin_ack(&w, 2, 0x3, true, 6, &res);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	usnic_rel_txwin_ack(&w, 5, 0, true, 7, &res);

	/* From four on, the classic three. */
	tw_send(test, &w, 6, 8);
	usnic_rel_txwin_ack(&w, 5, 0x3, true, 9, &res);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	usnic_rel_txwin_ack(&w, 5, 0x7, true, 10, &res);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);

	/* One packet alone: a stray duplicate ACK proves nothing. */
	usnic_rel_txwin_ack(&w, 11, 0, true, 11, &res);
	tw_send(test, &w, 1, 12);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 11, 0, true, 13, &res),
			USNIC_REL_ACK_DUP);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	usnic_rel_txwin_destroy(&w);
}

/*
 * The connection's one retransmit timer must not be pushed back by one
 * channel's progress while the other's oldest packet waits past the RTO:
 * overdue counts from that packet's last transmission.
 */
static void txwin_overdue_from_last_send(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	tw_init(test, &w, 16, 100);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_overdue(&w, 1000000, 10));
	tw_send(test, &w, 3, 1000);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_overdue(&w, 1500, 500));
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_overdue(&w, 1501, 500));
	/* A clock read before the stamp (another CPU) is not overdue. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_overdue(&w, 900, 0));
	/* Resent: the wait starts again. */
	usnic_rel_txwin_retransmitted(&w, 100, 3000);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_overdue(&w, 3400, 500));
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_overdue(&w, 3600, 500));
	/* The head acknowledged: the next packet's own send time counts. */
	tw_send(test, &w, 1, 5000);
	usnic_rel_txwin_ack(&w, 103, 0, true, 5100, &res);
	KUNIT_EXPECT_EQ(test, res.freed, 3);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_overdue(&w, 5400, 500));
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_overdue(&w, 5600, 500));
	usnic_rel_txwin_ack(&w, 104, 0, true, 5700, &res);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_overdue(&w, 1000000, 500));
	usnic_rel_txwin_destroy(&w);
}

/*
 * A packet held in the window for the pairing first leaves when released:
 * its wait for an ACK (the stall limit) starts then. A packet this host
 * failed to send keeps the time it has waited.
 */
static void txwin_held_packet_waits_from_release(struct kunit *test)
{
	struct usnic_rel_txwin w;

	tw_init(test, &w, 16, 0);
	tw_send(test, &w, 2, 1000);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_oldest_ns(&w), 1000);
	usnic_rel_txwin_sent_late(&w, 0, 5000, true);
	usnic_rel_txwin_sent_late(&w, 1, 5000, true);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_oldest_ns(&w), 5000);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_sent_ns(&w, 1), 5000);
	usnic_rel_txwin_sent_late(&w, 0, 7000, false);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_oldest_ns(&w), 5000);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_sent_ns(&w, 0), 7000);
	usnic_rel_txwin_destroy(&w);
}

static void txwin_timeout_resends_unsacked(struct kunit *test)
{
	static const u32 want[] = { 0xfffffffeU, 0xffffffffU, 2, 3, 4 };
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	unsigned int n = 0;
	u32 seq;

	tw_init(test, &w, 16, 0xfffffffeU);
	tw_send(test, &w, 7, 1);
	/* 0 and 1 SACKed. */
	usnic_rel_txwin_ack(&w, 0xfffffffeU, 0x6, true, 2, &res);

	usnic_rel_txwin_timeout(&w);
	for (seq = w.una; usnic_rel_txwin_next_retx(&w, &seq, w.next); seq++) {
		KUNIT_ASSERT_LT(test, n, ARRAY_SIZE(want));
		KUNIT_EXPECT_EQ(test, seq, want[n]);
		usnic_rel_txwin_retransmitted(&w, seq, 3);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, ARRAY_SIZE(want));
	KUNIT_EXPECT_EQ(test, w.slots[usnic_rel_txwin_slot(&w, 2)].retx, 1);

	/* A second timeout offers them all again. */
	usnic_rel_txwin_timeout(&w);
	seq = 0xfffffff0U;	/* below una: clamped */
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_retx(&w, &seq, w.next));
	KUNIT_EXPECT_EQ(test, seq, 0xfffffffeU);
	/* New packets sent after the timeout are not losses of it. */
	tw_send(test, &w, 1, 4);
	seq = 5;
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_next_retx(&w, &seq, w.next));
	usnic_rel_txwin_destroy(&w);
}

/*
 * SACK blocks name what the receiver holds beyond the bitmap; the window
 * remembers them (a scoreboard) across ACKs, refuses whole an ACK whose
 * block names an unsent sequence, and a timeout then resends only what no
 * ACK covered.
 */
static void txwin_sack_blocks(struct kunit *test)
{
	const u32 isn = 0xffffff00U;
	u8 b[3 * sizeof(struct usnic_rel_sack_block)];
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq, n = 0;

	tw_init(test, &w, 512, isn);
	tw_send(test, &w, 200, 1);
	usnic_rel_sack_block_put(b, 0, 70, 3);
	usnic_rel_sack_block_put(b, 1, 100, 2);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_blocks(&w, isn, 0, b, 2, true,
							 2, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.newly_sacked, 5);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 5);
	KUNIT_EXPECT_EQ(test, w.sack_end, isn + 102);
	/* Five SACKed above the hole at una: a loss, resent up to the last. */
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_lost_end(&w), isn + 102);

	/* The same blocks again are nothing new; a later ACK adds a range. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_blocks(&w, isn, 0, b, 2, true,
							 3, &res),
			USNIC_REL_ACK_DUP);
	usnic_rel_sack_block_put(b, 0, 150, 50);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_blocks(&w, isn, 0, b, 1, true,
							 4, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 55);
	KUNIT_EXPECT_EQ(test, w.sack_end, w.next);

	/* One block past the last packet sent: the whole ACK is refused. */
	usnic_rel_sack_block_put(b, 0, 80, 1);
	usnic_rel_sack_block_put(b, 1, 190, 11);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_blocks(&w, isn + 5, 0, b, 2,
							 true, 5, &res),
			USNIC_REL_ACK_FORGED);
	KUNIT_EXPECT_EQ(test, w.una, isn);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 55);

	/* A cumulative ACK past a block keeps the count right. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, isn + 72, 0, true, 6,
						  &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 53);

	/* After a timeout only the un-SACKed are offered. */
	usnic_rel_txwin_timeout(&w);
	for (seq = w.una; usnic_rel_txwin_next_retx(&w, &seq, w.next); seq++) {
		u32 off = seq - isn;
		bool sacked = off == 72 || off == 100 || off == 101 ||
			      (off >= 150 && off < 200);

		KUNIT_EXPECT_FALSE(test, sacked);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, 200 - 72 - 53);
	usnic_rel_txwin_destroy(&w);
}

/* Distinct fake packet pointers, so that their moves can be checked. */
static void *tw_pkt(u32 seq)
{
	return (void *)(uintptr_t)(((unsigned long)seq << 4) | 8);
}

static void tw_send_pkts(struct kunit *test, struct usnic_rel_txwin *w, u32 n)
{
	u32 seq;

	while (n--) {
		KUNIT_ASSERT_EQ(test, tw_push(test, w, 1000, &seq), 0);
		usnic_rel_txwin_set_pkt(w, seq, tw_pkt(seq));
	}
}

/* Every in-flight packet is still where its sequence says, after a resize. */
static void tw_expect_pkts(struct kunit *test, struct usnic_rel_txwin *w)
{
	u32 seq;

	for (seq = w->una; seq != w->next; seq++)
		KUNIT_EXPECT_PTR_EQ(test, usnic_rel_txwin_pkt(w, seq),
				    tw_pkt(seq));
}

/*
 * The slots start empty and double on demand, up to the protocol window,
 * while the range in flight crosses 2^32; SACK state, retransmit state and
 * the caller's packets move with them.
 */
static void txwin_grows_across_wrap_keeping_sacks(struct kunit *test)
{
	const u32 isn = 0xffffffe0U;
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq, n;

	tw_init(test, &w, 256, isn);
	/* Nothing in flight, no slots: the first push asks for them. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_push(&w, 1, &seq), -ENOBUFS);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_grow_cap(&w), USNIC_REL_MIN_WINDOW);
	tw_send_pkts(test, &w, 16);
	KUNIT_EXPECT_EQ(test, w.cap, 16);

	/* isn + 2 and isn + 3 SACKed above the hole at isn and isn + 1. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, isn, 0x6, true, 2, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 2);
	usnic_rel_txwin_retransmitted(&w, isn + 5, 3);

	/* Up to 40 in flight: 16 -> 32 -> 64, crossing the wrap at isn + 32. */
	tw_send_pkts(test, &w, 24);
	KUNIT_EXPECT_EQ(test, w.cap, 64);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_bytes(w.cap),
			64 * (sizeof(struct usnic_rel_tx_slot) + sizeof(void *)));
	tw_expect_pkts(test, &w);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 2);
	KUNIT_EXPECT_TRUE(test, w.slots[usnic_rel_txwin_slot(&w, isn + 2)].sacked);
	KUNIT_EXPECT_TRUE(test, w.slots[usnic_rel_txwin_slot(&w, isn + 3)].sacked);
	KUNIT_EXPECT_FALSE(test, w.slots[usnic_rel_txwin_slot(&w, isn + 4)].sacked);
	KUNIT_EXPECT_EQ(test, w.slots[usnic_rel_txwin_slot(&w, isn + 5)].retx, 1);

	/* A third SACK makes the hole a loss; recovery skips the SACKed. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, isn, 0xe, true, 4, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_lost_end(&w), isn + 5);
	seq = w.una;
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_retx(&w, &seq, isn + 5));
	KUNIT_EXPECT_EQ(test, seq, isn);
	seq++;
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_retx(&w, &seq, isn + 5));
	KUNIT_EXPECT_EQ(test, seq, isn + 1);
	seq++;
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_next_retx(&w, &seq, isn + 5));

	/* Filling the protocol window: 256 slots, then -ENOSPC, not -ENOBUFS. */
	n = 256 - usnic_rel_txwin_inflight(&w);
	tw_send_pkts(test, &w, n);
	KUNIT_EXPECT_EQ(test, w.cap, 256);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_push(&w, 5, &seq), -ENOSPC);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_grow_cap(&w), 0);
	tw_expect_pkts(test, &w);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 3);

	/* The cumulative ACK across the wrap frees all, RTT from the newest. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, w.next, 0, true, 1500,
						  &res), USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed, 256);
	KUNIT_EXPECT_EQ(test, res.freed_from, isn);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 0);
	usnic_rel_txwin_destroy(&w);
}

/*
 * A receiver out of buffers holds what came in order (USNIC_REL_F_HELD):
 * the packet at its ACK is SACKed with the rest, so none is resent, and
 * none completes until a cumulative ACK says it was delivered. A held ACK
 * naming a sequence never sent is forged, an old one stale: neither
 * changes anything.
 */
static void txwin_peer_holds_in_order(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq;

	/* Before any RTT sample, held packets are no duplicate evidence. */
	tw_init(test, &w, 16, 100);
	tw_send(test, &w, 5, 10);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_held(&w, 100, GENMASK_ULL(3, 0),
						       NULL, 0, false, true,
						       20, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_FALSE(test, w.in_recovery);
	usnic_rel_txwin_destroy(&w);

	/* With one: time decides losses. */
	tw_init(test, &w, 16, 99);
	tw_send(test, &w, 1, 10);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_held(&w, 100, 0, NULL, 0,
						       false, false, 50010, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_GT(test, w.srtt_ns, 0);
	tw_send(test, &w, 5, 60000);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_una_held(&w));

	/* Never sent: forged, whatever else it says. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_held(&w, 105, 0, NULL, 0,
						       false, true, 60100, &res),
			USNIC_REL_ACK_FORGED);
	KUNIT_EXPECT_EQ(test, w.una, 100);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 0);

	/* 100 .. 104 held: nothing freed, nothing to resend, even on timeout. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_held(&w, 100, GENMASK_ULL(3, 0),
						       NULL, 0, false, true,
						       500000, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed, 0);
	KUNIT_EXPECT_EQ(test, res.newly_sacked, 5);
	KUNIT_EXPECT_EQ(test, res.rack_lost, 0);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_una_held(&w));
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_all_held(&w));
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 0);
	/* A zero window: nothing new until the oldest is delivered. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_may_send(&w));
	usnic_rel_txwin_timeout(&w);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, w.next, U64_MAX), 0);
	seq = w.una;
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_next_retx(&w, &seq, w.next));

	/* A peer that stopped answering: the oldest goes again, then is held anew. */
	usnic_rel_txwin_unhold(&w);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_una_held(&w));
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 4);
	seq = w.una;
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_next_retx(&w, &seq, w.next));
	KUNIT_EXPECT_EQ(test, seq, 100);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_held(&w, 100, GENMASK_ULL(3, 0),
						       NULL, 0, false, true,
						       550000, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.newly_sacked, 1);
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_all_held(&w));

	/* One more sent: held, but not all. */
	tw_send(test, &w, 1, 600000);
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_una_held(&w));
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_all_held(&w));

	/* Two delivered, the rest still held: only those two complete. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_held(&w, 102, BIT_ULL(0) | BIT_ULL(1),
						       NULL, 0, false, true,
						       700000, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed_from, 100);
	KUNIT_EXPECT_EQ(test, res.freed, 2);
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_una_held(&w));
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 3);

	/* The window update: every one delivered. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_held(&w, 106, 0, NULL, 0,
						       true, false, 800000, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed, 4);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 0);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_una_held(&w));
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_may_send(&w));

	/* A held ACK from before it, reordered: stale. */
	tw_send(test, &w, 1, 900000);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack_held(&w, 102, 0, NULL, 0,
						       false, true, 900100, &res),
			USNIC_REL_ACK_STALE);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_una_held(&w));
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 0);
	usnic_rel_txwin_destroy(&w);
}

/*
 * Shrinking looks back one period: a window busy at its peak keeps its
 * slots, one that used less than half moves what is in flight (across the
 * wrap) onto fewer, and an idle one frees them. Never below what is in
 * flight.
 */
static void txwin_shrinks_after_use(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_tx_slot *slots;
	struct usnic_rel_txwin w;
	void **pkts;
	u32 cap;

	tw_init(test, &w, 4096, 0xffffff0aU);
	tw_send_pkts(test, &w, 250);
	KUNIT_EXPECT_EQ(test, w.cap, 256);
	/* 10 left in flight, 0xfffffffa .. 0x3. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0xfffffffaU, BIT_ULL(1),
						  true, 2, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_inflight(&w), 10);

	/* This period peaked at 250: keep all. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_shrink_cap(&w), 256);
	/* The next one saw only 10 in flight: twice that, rounded up. */
	cap = usnic_rel_txwin_shrink_cap(&w);
	KUNIT_EXPECT_EQ(test, cap, 32);

	/* Too small for what is in flight: refused, nothing moves. */
	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_arrays_alloc(8, &slots, &pkts,
							   GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_resize(&w, 8, &slots, &pkts),
			-EBUSY);
	usnic_rel_txwin_arrays_free(slots, pkts);
	/* Not a power of two, or above the protocol window. */
	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_arrays_alloc(24, &slots, &pkts,
							   GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_resize(&w, 24, &slots, &pkts),
			-EINVAL);
	usnic_rel_txwin_arrays_free(slots, pkts);
	KUNIT_EXPECT_EQ(test, w.cap, 256);

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_arrays_alloc(cap, &slots, &pkts,
							   GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_resize(&w, cap, &slots, &pkts), 0);
	usnic_rel_txwin_arrays_free(slots, pkts);
	KUNIT_EXPECT_EQ(test, w.cap, 32);
	tw_expect_pkts(test, &w);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 1);
	KUNIT_EXPECT_TRUE(test,
			  w.slots[usnic_rel_txwin_slot(&w, 0xfffffffcU)].sacked);

	/* Still usable: fill past 32 again, then drain. */
	tw_send_pkts(test, &w, 30);
	KUNIT_EXPECT_EQ(test, w.cap, 64);
	tw_expect_pkts(test, &w);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, w.next, 0, true, 3, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed, 40);

	/* Busy this period, idle the next: then no slots at all. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_shrink_cap(&w), 64);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_shrink_cap(&w), 0);
	slots = NULL;
	pkts = NULL;
	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_resize(&w, 0, &slots, &pkts), 0);
	usnic_rel_txwin_arrays_free(slots, pkts);
	KUNIT_EXPECT_EQ(test, w.cap, 0);
	KUNIT_EXPECT_PTR_EQ(test, w.slots, NULL);
	/* ACKs for nothing in flight are harmless without slots. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, w.next, 0, true, 4, &res),
			USNIC_REL_ACK_DUP);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, w.next + 1, 0, true, 4,
						  &res), USNIC_REL_ACK_FORGED);
	/* And it starts again from the minimum. */
	tw_send_pkts(test, &w, 1);
	KUNIT_EXPECT_EQ(test, w.cap, USNIC_REL_MIN_WINDOW);
	usnic_rel_txwin_destroy(&w);
}

static struct kunit_case usnic_rel_txwin_cases[] = {
	KUNIT_CASE(txwin_init_checks_size),
	KUNIT_CASE(txwin_fills_to_limit),
	KUNIT_CASE(txwin_wraps_across_2_32),
	KUNIT_CASE(txwin_rejects_stale_and_forged_acks),
	KUNIT_CASE(txwin_karn_rtt_samples),
	KUNIT_CASE(txwin_sack_fast_retransmit),
	KUNIT_CASE(txwin_duplicate_acks),
	KUNIT_CASE(txwin_early_retransmit),
	KUNIT_CASE(txwin_overdue_from_last_send),
	KUNIT_CASE(txwin_held_packet_waits_from_release),
	KUNIT_CASE(txwin_timeout_resends_unsacked),
	KUNIT_CASE(txwin_sack_blocks),
	KUNIT_CASE(txwin_grows_across_wrap_keeping_sacks),
	KUNIT_CASE(txwin_shrinks_after_use),
	KUNIT_CASE(txwin_peer_holds_in_order),
	{}
};

static struct kunit_suite usnic_rel_txwin_suite = {
	.name = "usnic_rel_txwin",
	.test_cases = usnic_rel_txwin_cases,
};

kunit_test_suite(usnic_rel_txwin_suite);
