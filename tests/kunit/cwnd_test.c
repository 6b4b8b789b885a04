// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the congestion window state machine (slow start, congestion
 * avoidance, one reduction per recovery, collapse on timeout) and how the
 * send window gates new data and retransmissions by it (pipe, lost marks).
 */
#include <kunit/test.h>

#include "cwnd.h"
#include "txwin.h"

static void cwnd_slow_start(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	usnic_rel_cwnd_init(&cc, 10, 4096);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 10);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 4096);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_OPEN);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_allows(&cc, 9));
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_allows(&cc, 10));
	/* One more per packet acknowledged: a full window doubles it. */
	usnic_rel_cwnd_ack(&cc, 4, 10);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 14);
	usnic_rel_cwnd_ack(&cc, 6, 10);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20);
	/* Nothing acknowledged, nothing gained. */
	usnic_rel_cwnd_ack(&cc, 0, 20);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20);
	/* Never above the protocol window. */
	usnic_rel_cwnd_ack(&cc, 4096, 20);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 4096);
	usnic_rel_cwnd_ack(&cc, 4096, 4096);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 4096);
	/* Bad initial windows are clamped. */
	usnic_rel_cwnd_init(&cc, 0, 16);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 1);
	usnic_rel_cwnd_init(&cc, 100, 16);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 16);
}

static void cwnd_app_limited_does_not_grow(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	usnic_rel_cwnd_init(&cc, 10, 4096);
	/* A ping-pong with one packet in flight never needed ten. */
	usnic_rel_cwnd_ack(&cc, 1, 1);
	usnic_rel_cwnd_ack(&cc, 1, 4);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 10);
	/* Half used is used. */
	usnic_rel_cwnd_ack(&cc, 1, 5);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 11);
}

static void cwnd_congestion_avoidance(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	usnic_rel_cwnd_init(&cc, 10, 4096);
	cc.ssthresh = 12;
	/* Slow start stops at ssthresh; the rest counts toward avoidance. */
	usnic_rel_cwnd_ack(&cc, 5, 10);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 12);
	KUNIT_EXPECT_EQ(test, cc.acked, 3);
	/* One more per window's worth of ACKs. */
	usnic_rel_cwnd_ack(&cc, 8, 12);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 12);
	usnic_rel_cwnd_ack(&cc, 1, 12);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 13);
	KUNIT_EXPECT_EQ(test, cc.acked, 0);
	/* A large ACK may be worth several windows. */
	usnic_rel_cwnd_ack(&cc, 13 + 14 + 2, 13);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 15);
	KUNIT_EXPECT_EQ(test, cc.acked, 2);
}

static void cwnd_fast_recovery_once_per_episode(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	usnic_rel_cwnd_init(&cc, 40, 4096);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_RECOVERY);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 20);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20);
	KUNIT_EXPECT_EQ(test, cc.fast_episodes, 1);
	/* More losses in the same episode change nothing. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20);
	KUNIT_EXPECT_EQ(test, cc.fast_episodes, 1);
	/* ACKs during recovery do not grow it: the pipe decides. */
	usnic_rel_cwnd_ack(&cc, 30, 40);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20);
	usnic_rel_cwnd_recovered(&cc);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_OPEN);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20);
	/* Then congestion avoidance. */
	usnic_rel_cwnd_ack(&cc, 20, 20);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 21);
	/* A new episode halves again, never below two. */
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 10);
	KUNIT_EXPECT_EQ(test, cc.fast_episodes, 2);
	usnic_rel_cwnd_recovered(&cc);
	cc.cwnd = 3;
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, USNIC_REL_CWND_MIN_SSTHRESH);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, USNIC_REL_CWND_MIN_SSTHRESH);
}

static void cwnd_timeout_restarts_slow_start(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	usnic_rel_cwnd_init(&cc, 40, 4096);
	usnic_rel_cwnd_timeout(&cc);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_LOSS);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 1);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 20);
	KUNIT_EXPECT_EQ(test, cc.rto_episodes, 1);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_allows(&cc, 0));
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_allows(&cc, 1));
	/* The timer firing again for the same loss keeps ssthresh. */
	usnic_rel_cwnd_timeout(&cc);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 20);
	KUNIT_EXPECT_EQ(test, cc.rto_episodes, 1);
	/* ACK evidence meanwhile starts no second reduction. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.fast_episodes, 0);
	/* Slow start, even before the recovery point is reached. */
	usnic_rel_cwnd_ack(&cc, 1, 1);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 2);
	usnic_rel_cwnd_ack(&cc, 2, 2);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 4);
	usnic_rel_cwnd_recovered(&cc);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_OPEN);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 4);
	usnic_rel_cwnd_ack(&cc, 30, 4);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20);
	/* A timeout during fast recovery halves what recovery left. */
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	usnic_rel_cwnd_timeout(&cc);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 5);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 1);
	KUNIT_EXPECT_EQ(test, cc.rto_episodes, 2);
	/* A restarted peer starts over; the counters stay. */
	usnic_rel_cwnd_reset(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 40);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 4096);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_OPEN);
	KUNIT_EXPECT_EQ(test, cc.rto_episodes, 2);
}

/*
 * With a floor (cwnd_min), a loss halves the window down to the floor and
 * no further, and never raises a window that is already below it.
 */
static void cwnd_loss_stops_at_floor(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	usnic_rel_cwnd_init(&cc, 40, 4096);
	usnic_rel_cwnd_set_floor(&cc, 16);
	KUNIT_EXPECT_EQ(test, cc.floor, 16);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20);
	usnic_rel_cwnd_recovered(&cc);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 16);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 16);
	usnic_rel_cwnd_recovered(&cc);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 16);
	/* A timeout still starts from one, slow start back to the floor. */
	usnic_rel_cwnd_timeout(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 1);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 16);
	/* Below the floor (early slow start), a loss leaves the window be. */
	usnic_rel_cwnd_init(&cc, 6, 4096);
	usnic_rel_cwnd_set_floor(&cc, 16);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 6);
	/* The floor is clamped to [2, max]. */
	usnic_rel_cwnd_set_floor(&cc, 0);
	KUNIT_EXPECT_EQ(test, cc.floor, USNIC_REL_CWND_MIN_SSTHRESH);
	usnic_rel_cwnd_init(&cc, 6, 8);
	usnic_rel_cwnd_set_floor(&cc, 16);
	KUNIT_EXPECT_EQ(test, cc.floor, 8);
}

/* Push @n packets at @now, growing the slots as the connection does. */
static void cw_send(struct kunit *test, struct usnic_rel_txwin *w, u32 n,
		    u64 now)
{
	u32 seq;

	while (n--) {
		KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_may_send(w));
		KUNIT_ASSERT_EQ(test, usnic_rel_txwin_grow(w, GFP_KERNEL), 0);
		KUNIT_ASSERT_EQ(test, usnic_rel_txwin_push(w, now, &seq), 0);
	}
}

static void cwnd_gates_the_send_window(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, USNIC_REL_CWND_INITIAL);
	usnic_rel_cwnd_init(&w.cc, 8, 64);
	cw_send(test, &w, 8, 1);
	/* The protocol window has room, the congestion window has not. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_full(&w));
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_may_send(&w));
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 8);
	/* 0 and 1 acknowledged: slow start admits four more. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 2, 0, true, 2, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 10);
	cw_send(test, &w, 4, 3);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_may_send(&w));
	/* In flight 2..11; 2 lost, 3, 4, 5 SACKed: recovery, cwnd halved. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 2, 0x7, true, 4, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_EXPECT_TRUE(test, res.recovery_started);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 5);
	KUNIT_EXPECT_EQ(test, w.cc.state, USNIC_REL_CC_RECOVERY);
	/* Only the hole below the SACKs is presumed lost: out of the pipe. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, usnic_rel_txwin_lost_end(&w),
							U64_MAX), 1);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, usnic_rel_txwin_lost_end(&w),
							U64_MAX), 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 10 - 3 - 1);
	/* New data waits until the lost packet went again. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_may_send(&w));
	seq = 0;
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_lost(&w, &seq));
	KUNIT_EXPECT_EQ(test, seq, 2);
	usnic_rel_txwin_retransmitted(&w, seq, 5);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 0);
	seq = 0;
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_next_lost(&w, &seq));
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 7);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_may_send(&w));
	/* 6, 7 and 8 SACKed: the pipe drops below cwnd, new data may go. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 2, 0x3f, true, 6, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, res.recovery_started);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 4);
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_may_send(&w));
	cw_send(test, &w, 1, 7);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_may_send(&w));
	/* All up to the recovery point acknowledged: open again, at ssthresh. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 12, 0, true, 8, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, w.in_recovery);
	KUNIT_EXPECT_EQ(test, w.cc.state, USNIC_REL_CC_OPEN);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 5);
	usnic_rel_txwin_destroy(&w);
}

static void cwnd_timeout_marks_what_had_time(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 100), 0);
	cw_send(test, &w, 6, 10);
	cw_send(test, &w, 2, 50);
	/* Nothing reported received: the timeout starts over from one. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 100, 0, true, 60, &res),
			USNIC_REL_ACK_DUP);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_timeout(&w));
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 1);
	KUNIT_EXPECT_EQ(test, w.cc.state, USNIC_REL_CC_LOSS);
	/* 106 and 107 were sent too recently. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, w.next, 20), 6);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 2);
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_allows(&w.cc,
						       usnic_rel_txwin_pipe(&w)));
	seq = 0;
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_lost(&w, &seq));
	KUNIT_EXPECT_EQ(test, seq, 100);
	/* Lost and then SACKed, or acknowledged: out of the count. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 100, 0x6, true, 70, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 4);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 102, 0, true, 80, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 2);
	/* The ACK of a timeout's slow start grows the window at once. */
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 3);
	seq = 0;
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_lost(&w, &seq));
	KUNIT_EXPECT_EQ(test, seq, 104);
	/* A reset forgets the marks and restarts the window. */
	usnic_rel_txwin_reset(&w, 0);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 0);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, USNIC_REL_CWND_INITIAL);
	KUNIT_EXPECT_EQ(test, w.cc.rto_episodes, 1);
	usnic_rel_txwin_destroy(&w);
}

/*
 * A timeout while the peer holds packets sent after the hole: the path
 * delivers, only the hole (a lost resend, a lost tail) went missing. One
 * loss episode, the window halved once, not started over from one packet;
 * the timeout still resends every hole that had the time. Without SACKs
 * the window collapses as before.
 */
static void cwnd_timeout_past_sacks_halves_once(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	usnic_rel_cwnd_init(&w.cc, 32, 64);
	cw_send(test, &w, 8, 10);
	/* 1 and 2 SACKed: fewer than the duplicates that call 0 lost. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x3, true, 20, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_timeout(&w));
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 16);
	KUNIT_EXPECT_EQ(test, w.cc.ssthresh, 16);
	KUNIT_EXPECT_EQ(test, w.cc.state, USNIC_REL_CC_RECOVERY);
	KUNIT_EXPECT_EQ(test, w.cc.rto_episodes, 0);
	KUNIT_EXPECT_EQ(test, w.cc.fast_episodes, 1);
	KUNIT_EXPECT_TRUE(test, w.in_recovery);
	/* Every hole that had the time is resent: 0 and 3..7. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, w.next, 15), 6);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 0);
	seq = 0;
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_lost(&w, &seq));
	KUNIT_EXPECT_EQ(test, seq, 0);
	/* The resends lost too, timed out again: the same episode. */
	for (seq = 0; usnic_rel_txwin_next_lost(&w, &seq); seq++)
		usnic_rel_txwin_retransmitted(&w, seq, 30);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_timeout(&w));
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 16);
	KUNIT_EXPECT_EQ(test, w.cc.fast_episodes, 1);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, w.next, 40), 6);
	/* All acknowledged: open again at the halved window. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 8, 0, true, 50, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, w.in_recovery);
	KUNIT_EXPECT_EQ(test, w.cc.state, USNIC_REL_CC_OPEN);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 16);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 0);
	/* Silence with nothing SACKed: back to one packet. */
	cw_send(test, &w, 4, 60);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_timeout(&w));
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 1);
	KUNIT_EXPECT_EQ(test, w.cc.state, USNIC_REL_CC_LOSS);
	KUNIT_EXPECT_EQ(test, w.cc.rto_episodes, 1);
	usnic_rel_txwin_destroy(&w);
}

/*
 * The connection's one retransmit timer fires for the channel whose oldest
 * packet waited it out; the other channel, whose packets went out since,
 * keeps its window and its packets. With none overdue (the RTO grew since
 * the timer was armed) every channel with packets in flight is concerned.
 */
static void cwnd_timeout_spares_progressing_window(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin a, b;
	const struct usnic_rel_txwin *w[2] = { &a, &b };

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&a, 64, 0), 0);
	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&b, 64, 500), 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_timed_out(w, 2, 1000, 500), 0);
	cw_send(test, &a, 4, 100);
	cw_send(test, &b, 4, 900);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_timed_out(w, 2, 1000, 500), BIT(0));
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_timed_out(w, 2, 1500, 500),
			BIT(0) | BIT(1));
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_timed_out(w, 2, 1000, 5000),
			BIT(0) | BIT(1));
	/* A resend of its oldest packet restarts a window's wait. */
	usnic_rel_txwin_retransmitted(&a, 0, 950);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_timed_out(w, 2, 1450, 500), BIT(1));
	/* A window with nothing in flight is never concerned. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&b, 504, 0, true, 1460, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_timed_out(w, 2, 1460, 5000), BIT(0));
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_timed_out(w, 2, 1460, 100), BIT(0));
	usnic_rel_txwin_destroy(&a);
	usnic_rel_txwin_destroy(&b);
}

/*
 * A peer that dropped in order for want of buffers said so: its timeouts
 * and holes are flow control until an ACK frees packets, then congestion
 * control is back as before.
 */
static void cwnd_peer_not_ready_is_not_congestion(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	usnic_rel_cwnd_init(&w.cc, 16, 64);
	cw_send(test, &w, 16, 1);
	/* 0 dropped by the receiver, 1..3 held and SACKed, RNR said. */
	usnic_rel_cwnd_peer_rnr(&w.cc);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x7, true, 2, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_EXPECT_FALSE(test, res.recovery_started);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 16);
	/* Timeout after timeout: no collapse, no ssthresh cut, no episode. */
	usnic_rel_txwin_timeout(&w);
	usnic_rel_txwin_timeout(&w);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 16);
	KUNIT_EXPECT_EQ(test, w.cc.ssthresh, 64);
	KUNIT_EXPECT_EQ(test, w.cc.rto_episodes, 0);
	KUNIT_EXPECT_EQ(test, w.cc.state, USNIC_REL_CC_OPEN);
	/* The timeout still resends what had time (the pace is the timer's). */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, w.next, 1), 13);
	/* A duplicate without new information keeps the flag. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x7, true, 3, &res),
			USNIC_REL_ACK_DUP);
	KUNIT_EXPECT_TRUE(test, w.cc.peer_rnr);
	/* Buffers back: cumulative progress ends it. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 4, 0, true, 4, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, w.cc.peer_rnr);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 20);
	usnic_rel_txwin_timeout(&w);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 1);
	KUNIT_EXPECT_EQ(test, w.cc.ssthresh, 10);
	KUNIT_EXPECT_EQ(test, w.cc.rto_episodes, 1);
	/* Told after the timer fired, no progress since: the collapse is undone. */
	usnic_rel_cwnd_peer_rnr(&w.cc);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 20);
	KUNIT_EXPECT_EQ(test, w.cc.ssthresh, 64);
	KUNIT_EXPECT_EQ(test, w.cc.state, USNIC_REL_CC_OPEN);
	/* After progress, a timeout then the flag: the path lost it, kept. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 6, 0, true, 5, &res),
			USNIC_REL_ACK_NEW);
	usnic_rel_txwin_timeout(&w);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 7, 0, true, 6, &res),
			USNIC_REL_ACK_NEW);
	usnic_rel_cwnd_peer_rnr(&w.cc);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, 2);
	/* A reset forgets it too. */
	usnic_rel_txwin_reset(&w, 0);
	KUNIT_EXPECT_FALSE(test, w.cc.peer_rnr);
	usnic_rel_txwin_destroy(&w);
}

static void cwnd_lost_resend_found_by_acks(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	w.srtt_ns = 8;
	cw_send(test, &w, 8, 10);
	/* 0 missing, 1..7 SACKed at 15: not yet its time (10 + 5 + 2). */
	usnic_rel_txwin_ack(&w, 0, 0x7f, true, 15, &res);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, w.reo_deadline_ns, 18);
	/* No ACK since: the reorder timer finds it; 0 is resent at 20. */
	usnic_rel_txwin_reo_timeout(&w, 18, &res);
	KUNIT_ASSERT_TRUE(test, res.recovery_started);
	KUNIT_EXPECT_EQ(test, res.rack_lost, 1);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, usnic_rel_txwin_lost_end(&w),
							U64_MAX), 0);
	seq = 0;
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_lost(&w, &seq));
	usnic_rel_txwin_retransmitted(&w, seq, 20);
	/* A repeat of what was known: no news about the resend. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x7f, true, 25, &res),
			USNIC_REL_ACK_DUP);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 0);
	/* One sent within the reordering window after it: still none. */
	cw_send(test, &w, 1, 21);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0xff, true, 30, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, res.rack_lost, 0);
	/* One sent well after it arrives: the resend was lost as well. */
	cw_send(test, &w, 1, 40);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x1ff, true, 45, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.rack_lost, 1);
	/* Marked, sent within the pipe: not a finding forced past cwnd. */
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_FALSE(test, res.recovery_started);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 1);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 0);
	seq = 0;
	KUNIT_ASSERT_TRUE(test, usnic_rel_txwin_next_lost(&w, &seq));
	KUNIT_EXPECT_EQ(test, seq, 0);
	/* Sent again: no second finding until newer news. */
	usnic_rel_txwin_retransmitted(&w, seq, 50);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x1ff, true, 55, &res),
			USNIC_REL_ACK_DUP);
	KUNIT_EXPECT_EQ(test, res.rack_lost, 0);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 0);
	/* Its arrival ends the recovery, at the halved window. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 10, 0, true, 60, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, w.in_recovery);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, USNIC_REL_CWND_INITIAL / 2);
	usnic_rel_txwin_destroy(&w);
}

/*
 * Packets that left from two CPUs overtake each other: six SACKed above a
 * hole are no loss while the hole's time has not come (with an RTT sample
 * only time decides), and its late arrival resends nothing. Before the
 * first sample, the same ACK is a loss by count.
 */
static void cwnd_reordering_is_not_loss(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	w.srtt_ns = 40;
	cw_send(test, &w, 10, 100);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x1f8, true, 150, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, w.nr_sacked, 6);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_FALSE(test, w.in_recovery);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 0);
	/* Due at 100 + 50 + 10: the reorder timer is set for it. */
	KUNIT_EXPECT_EQ(test, w.reo_deadline_ns, 161);
	/* The timer firing before then finds nothing. */
	usnic_rel_txwin_reo_timeout(&w, 156, &res);
	KUNIT_EXPECT_EQ(test, res.rack_lost, 0);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	/* They arrive: all acknowledged, nothing resent, no timer. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 10, 0, true, 158, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, w.reo_deadline_ns, 0);
	KUNIT_EXPECT_EQ(test, w.cc.cwnd, USNIC_REL_CWND_INITIAL + 10);
	/* Without an RTT sample (none under 1 us), counting is all there is, */
	usnic_rel_txwin_reset(&w, 0);
	cw_send(test, &w, 10, 200);
	usnic_rel_txwin_ack(&w, 0, 0x1f8, true, 250, &res);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_EXPECT_TRUE(test, w.in_recovery);
	/* ... but the first ACK's own sample is one: time judges at once. */
	usnic_rel_txwin_reset(&w, 0);
	cw_send(test, &w, 10, 1000);
	usnic_rel_txwin_ack(&w, 0, 0x1f8, true, 41000, &res);
	KUNIT_EXPECT_EQ(test, w.srtt_ns, 40000);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_FALSE(test, w.in_recovery);
	KUNIT_EXPECT_EQ(test, w.reo_deadline_ns, 1000 + 40000 + 10000 + 1);
	usnic_rel_txwin_destroy(&w);
}

/*
 * Packets that left from another CPU than the newest one delivered may
 * only wait in that CPU's queue: they get a whole SRTT, where packets of
 * the same CPU get the reordering window.
 */
static void cw_lost_by_time_from(struct kunit *test, bool other_cpu)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	w.srtt_ns = 40;
	cw_send(test, &w, 8, 100);
	for (seq = 0; other_cpu && seq < 8; seq++)
		w.slots[usnic_rel_txwin_slot(&w, seq)].cpu ^= 1;
	cw_send(test, &w, 1, 120);
	/* 8 arrived after a round trip of 40: 0..7 due at 150, or 180. */
	usnic_rel_txwin_ack(&w, 0, 0x80, true, 160, &res);
	KUNIT_EXPECT_EQ(test, res.rack_lost, other_cpu ? 0 : 8);
	KUNIT_EXPECT_EQ(test, res.fast_retransmit, !other_cpu);
	if (other_cpu) {
		KUNIT_EXPECT_EQ(test, w.reo_deadline_ns, 181);
		usnic_rel_txwin_reo_timeout(&w, 180, &res);
		KUNIT_EXPECT_EQ(test, res.rack_lost, 0);
		usnic_rel_txwin_reo_timeout(&w, 181, &res);
		KUNIT_EXPECT_EQ(test, res.rack_lost, 8);
		KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	}
	usnic_rel_txwin_destroy(&w);
}

static void cwnd_other_cpu_gets_srtt(struct kunit *test)
{
	cw_lost_by_time_from(test, false);
	cw_lost_by_time_from(test, true);
}

/*
 * A flight too short for more ACKs (three packets, the first lost): the
 * reorder timer calls it lost once its time has come, not the probe or
 * the RTO.
 */
static void cwnd_reorder_timer_finds_short_flight_loss(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	w.srtt_ns = 40;
	cw_send(test, &w, 3, 100);
	usnic_rel_txwin_ack(&w, 0, 0x3, true, 150, &res);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, w.reo_deadline_ns, 161);
	usnic_rel_txwin_reo_timeout(&w, 160, &res);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, w.reo_deadline_ns, 161);
	usnic_rel_txwin_reo_timeout(&w, 161, &res);
	KUNIT_EXPECT_EQ(test, res.rack_lost, 1);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_EXPECT_TRUE(test, res.recovery_started);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 1);
	KUNIT_EXPECT_EQ(test, w.reo_deadline_ns, 0);
	usnic_rel_txwin_destroy(&w);
}

/*
 * A loss with too few packets after it for duplicate ACKs (a message's
 * tail) is found once a packet sent a reordering window later arrives.
 */
static void cwnd_first_send_lost_by_time(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	w.srtt_ns = 40;
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_reo_wnd(&w), 10);
	cw_send(test, &w, 8, 100);
	cw_send(test, &w, 1, 105);
	/* 8 arrived, sent within the window after 0..7: reordering, maybe. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x80, true, 150, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_FALSE(test, w.in_recovery);
	/* Due at 100 + 45 + 10 unless an ACK says otherwise first. */
	KUNIT_EXPECT_EQ(test, w.reo_deadline_ns, 156);
	/* 9, sent well after them, arrived too: 0..7 are lost. */
	cw_send(test, &w, 1, 200);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x180, true, 250, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.rack_lost, 8);
	KUNIT_EXPECT_TRUE(test, res.fast_retransmit);
	KUNIT_EXPECT_TRUE(test, res.recovery_started);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 8);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 0);
	usnic_rel_txwin_destroy(&w);
}

/*
 * A resend acknowledged sooner than any round trip was answered by its
 * original: it widens the reordering window and is not taken as the newest
 * delivery (which would call everything sent before it lost).
 */
static void cwnd_spurious_resend_widens_reordering(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	w.srtt_ns = 40;
	cw_send(test, &w, 4, 100);
	usnic_rel_txwin_ack(&w, 3, 0, true, 150, &res);
	KUNIT_EXPECT_EQ(test, w.min_rtt_ns, 50);
	/* The tail probe resends 3; its original's ACK comes at once. */
	usnic_rel_txwin_retransmitted(&w, 3, 300);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 4, 0, true, 310, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.spurious, 1);
	KUNIT_EXPECT_FALSE(test, res.fast_retransmit);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 0);
	KUNIT_EXPECT_EQ(test, w.spurious, 1);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_reo_wnd(&w), 20);
	/* Growth stops at SRTT, ... */
	w.reo_mult = USNIC_REL_REO_MULT_MAX;
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_reo_wnd(&w), 40);
	/* ... and a new sequence space starts from a quarter. */
	usnic_rel_txwin_reset(&w, 0);
	w.srtt_ns = 40;
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_reo_wnd(&w), 10);
	usnic_rel_txwin_destroy(&w);
}

/*
 * In a recovery every cumulative ACK covers a resend (Karn: no sample); a
 * SACK of a packet never resent still measures the path, so a timeout's
 * backoff can end before the recovery does.
 */
static void cwnd_sack_gives_rtt_sample(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	cw_send(test, &w, 2, 100);
	cw_send(test, &w, 2, 150);
	usnic_rel_txwin_retransmitted(&w, 0, 200);
	/* 0 (resent) and 3 arrive: 3's send dates the ACK, the resend does not. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 1, 0x2, true, 260, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, 110);
	KUNIT_EXPECT_EQ(test, w.min_rtt_ns, 110);
	/* Only resends newly known: no sample. */
	usnic_rel_txwin_retransmitted(&w, 1, 300);
	usnic_rel_txwin_retransmitted(&w, 2, 300);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 2, 0x1, true, 420, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, -1);
	/* Several newly SACKed: the newest send, the least waiting. */
	cw_send(test, &w, 1, 430);
	cw_send(test, &w, 1, 440);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 2, 0x7, true, 500, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, 60);
	usnic_rel_txwin_destroy(&w);
}

/*
 * A packet presumed lost and not yet sent again, then reported received: the
 * ACK of its arrival was lost, and the next one came only after the timer
 * resent something, so its delay is the timer's, not the path's. At 30 %
 * loss such samples drove the RTO to its ceiling with no backoff at all.
 * Neither a SACK nor a cumulative ACK of one gives a sample.
 */
static void cwnd_presumed_lost_gives_no_rtt_sample(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	cw_send(test, &w, 3, 100);
	usnic_rel_txwin_timeout(&w);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, w.next, 10000), 3);
	/* The timeout resends 0 first; 1 and 2 wait for room in the pipe. */
	usnic_rel_txwin_retransmitted(&w, 0, 10000);
	/* 0's resend and 2's original are reported. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 1, 0x1, true, 10100, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed, 1);
	KUNIT_EXPECT_EQ(test, res.newly_sacked, 1);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, -1);
	KUNIT_EXPECT_EQ(test, w.nr_lost, 1);
	/* 1's original, acknowledged as late. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 2, 0, true, 10200, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.freed, 1);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, -1);
	KUNIT_EXPECT_EQ(test, w.min_rtt_ns, 0);
	/* A packet sent since dates the path again. */
	cw_send(test, &w, 1, 10300);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 4, 0, true, 10350, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, res.rtt_ns, 50);
	KUNIT_EXPECT_EQ(test, w.min_rtt_ns, 50);
	usnic_rel_txwin_destroy(&w);
}

static void cwnd_peer_not_ready_undoes_fast_recovery(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	usnic_rel_cwnd_init(&cc, 40, 4096);
	cc.ssthresh = 64;
	/* What the peer held after its drop was SACKed: it looked a loss. */
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20);
	usnic_rel_cwnd_peer_rnr(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 40);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 64);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_OPEN);
	usnic_rel_cwnd_recovered(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 40);
	/* A recovery, a timeout inside it, then the news: before both. */
	usnic_rel_cwnd_ack(&cc, 1, 40);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 41);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	usnic_rel_cwnd_timeout(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 1);
	usnic_rel_cwnd_peer_rnr(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 41);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 64);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_OPEN);
	/* Progress after the reduction: the loss was the path's, kept. */
	usnic_rel_cwnd_ack(&cc, 1, 41);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	usnic_rel_cwnd_ack(&cc, 1, 42);
	usnic_rel_cwnd_peer_rnr(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 21);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_RECOVERY);
}

static void cwnd_local_drop_marks_one_packet(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;
	u32 seq = 0;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	cw_send(test, &w, 4, 10);
	/* 2 is SACKed: the host's drop of an old copy changes nothing. */
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 0, 0x2, true, 11, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_mark_local(&w, 2));
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_mark_local(&w, 4));
	/* 1 never left: out of the pipe, and only it is a local resend. */
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_mark_local(&w, 1));
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_mark_local(&w, 1));
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 2);
	/* A recovery finds 0 lost on the path. */
	w.epoch++;
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_mark_lost(&w, 1, U64_MAX), 1);
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_next_lost(&w, &seq));
	KUNIT_EXPECT_EQ(test, seq, 0);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_lost_locally(&w, 0));
	KUNIT_EXPECT_TRUE(test, usnic_rel_txwin_lost_locally(&w, 1));
	/* Sent again: the mark goes with the loss. */
	usnic_rel_txwin_sent_late(&w, 1, 12, false);
	KUNIT_EXPECT_FALSE(test, usnic_rel_txwin_lost_locally(&w, 1));
	KUNIT_EXPECT_EQ(test, w.slots[1].retx, 0);
	usnic_rel_txwin_retransmitted(&w, 0, 12);
	KUNIT_EXPECT_EQ(test, w.slots[0].retx, 1);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_pipe(&w), 3);
	usnic_rel_txwin_destroy(&w);
}

/* @n RTT samples of @rtt_ns, one a microsecond from @now_ns on. */
static void cw_rtt(struct usnic_rel_cwnd *cc, u32 n, u64 rtt_ns, u64 now_ns)
{
	while (n--) {
		usnic_rel_cwnd_rtt(cc, rtt_ns, now_ns);
		now_ns += NSEC_PER_USEC;
	}
}

/* A window in congestion avoidance, judging losses by delay. */
static void cw_delay_init(struct usnic_rel_cwnd *cc)
{
	usnic_rel_cwnd_init(cc, 10, 4096);
	usnic_rel_cwnd_set_floor(cc, 16);
	usnic_rel_cwnd_set_queue_pct(cc, 100);
	cc->cwnd = 64;
	cc->ssthresh = 32;
}

/*
 * A loss while the RTT stays at the path's least is the wire's: the
 * window stays, in congestion avoidance it keeps growing, the loss is
 * counted as spared. In slow start it ends slow start (not below the floor).
 */
static void cwnd_random_loss_keeps_window(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	cw_delay_init(&cc);
	cw_rtt(&cc, 20, 100 * NSEC_PER_USEC, NSEC_PER_MSEC);
	/* Jitter within the margin is no queue. */
	cw_rtt(&cc, 4, 180 * NSEC_PER_USEC, 2 * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, cc.min_rtt_ns, 100 * NSEC_PER_USEC);
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_queueing(&cc));
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 64);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 32);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_OPEN);
	KUNIT_EXPECT_EQ(test, cc.losses_spared, 1);
	KUNIT_EXPECT_EQ(test, cc.fast_episodes, 0);
	usnic_rel_cwnd_ack(&cc, 64, 64);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 65);
	/* Slow start ends where it is, or at the floor below it. */
	usnic_rel_cwnd_init(&cc, 40, 4096);
	usnic_rel_cwnd_set_floor(&cc, 16);
	usnic_rel_cwnd_set_queue_pct(&cc, 100);
	cw_rtt(&cc, 8, 100 * NSEC_PER_USEC, NSEC_PER_MSEC);
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 40);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 40);
	usnic_rel_cwnd_init(&cc, 10, 4096);
	usnic_rel_cwnd_set_floor(&cc, 16);
	usnic_rel_cwnd_set_queue_pct(&cc, 100);
	cw_rtt(&cc, 8, 100 * NSEC_PER_USEC, NSEC_PER_MSEC);
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 10);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 16);
}

/*
 * A loss after the RTT grew well above its least (a queue filled up) is
 * congestion: halved as before, once per episode.
 */
static void cwnd_loss_with_queueing_reduces(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	cw_delay_init(&cc);
	cw_rtt(&cc, 20, 100 * NSEC_PER_USEC, NSEC_PER_MSEC);
	cw_rtt(&cc, 20, 400 * NSEC_PER_USEC, 2 * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, cc.min_rtt_ns, 100 * NSEC_PER_USEC);
	KUNIT_EXPECT_GT(test, cc.rtt_ns, 200 * NSEC_PER_USEC);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_queueing(&cc));
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 32);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_RECOVERY);
	KUNIT_EXPECT_EQ(test, cc.fast_episodes, 1);
	KUNIT_EXPECT_EQ(test, cc.losses_spared, 0);
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 32);
	/* The queue drained: the next loss is the wire's again. */
	usnic_rel_cwnd_recovered(&cc);
	cw_rtt(&cc, 40, 100 * NSEC_PER_USEC, 3 * NSEC_PER_MSEC);
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 32);
	KUNIT_EXPECT_EQ(test, cc.losses_spared, 1);
	/*
	 * A queue that filled within a round trip (slow start) shows in the
	 * newest sample before the average follows.
	 */
	cw_rtt(&cc, 1, 400 * NSEC_PER_USEC, 4 * NSEC_PER_MSEC);
	KUNIT_EXPECT_LT(test, cc.rtt_ns, 200 * NSEC_PER_USEC);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_queueing(&cc));
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 16);
}

/*
 * Without a sample, or with cwnd_queue_pct 0, every loss is congestion;
 * and a timeout collapses the window whatever the delay said.
 */
static void cwnd_delay_rule_limits(struct kunit *test)
{
	struct usnic_rel_cwnd cc;

	cw_delay_init(&cc);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_queueing(&cc));
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 32);

	cw_delay_init(&cc);
	usnic_rel_cwnd_set_queue_pct(&cc, 0);
	cw_rtt(&cc, 20, 100 * NSEC_PER_USEC, NSEC_PER_MSEC);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 32);

	cw_delay_init(&cc);
	cw_rtt(&cc, 20, 100 * NSEC_PER_USEC, NSEC_PER_MSEC);
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_queueing(&cc));
	usnic_rel_cwnd_timeout(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 1);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 32);
	KUNIT_EXPECT_EQ(test, cc.rto_episodes, 1);
	KUNIT_EXPECT_EQ(test, cc.state, USNIC_REL_CC_LOSS);
	/* A restarted peer: the path's delay is learnt again. */
	usnic_rel_cwnd_reset(&cc);
	KUNIT_EXPECT_EQ(test, cc.min_rtt_ns, 0);
	KUNIT_EXPECT_EQ(test, cc.rtt_ns, 0);
	KUNIT_EXPECT_EQ(test, cc.last_rtt_ns, 0);
	KUNIT_EXPECT_EQ(test, cc.queue_pct, 100);
}

/*
 * The least RTT is that of the last one or two periods: a longer path
 * looks like a queue (losses reduce) until the shorter one's period has
 * passed, then it is the path.
 */
static void cwnd_min_rtt_expires(struct kunit *test)
{
	const u64 period = USNIC_REL_CWND_MIN_RTT_PERIOD_NS;
	struct usnic_rel_cwnd cc;

	cw_delay_init(&cc);
	cw_rtt(&cc, 10, 100 * NSEC_PER_USEC, NSEC_PER_MSEC);
	/* The path got longer; within the next period the old least holds. */
	cw_rtt(&cc, 30, 400 * NSEC_PER_USEC, period / 2);
	cw_rtt(&cc, 30, 400 * NSEC_PER_USEC, period + 2 * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, cc.min_rtt_ns, 100 * NSEC_PER_USEC);
	KUNIT_EXPECT_TRUE(test, usnic_rel_cwnd_queueing(&cc));
	/* A period later the shorter path is forgotten. */
	cw_rtt(&cc, 1, 400 * NSEC_PER_USEC, 2 * period + 3 * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, cc.min_rtt_ns, 400 * NSEC_PER_USEC);
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_queueing(&cc));
	KUNIT_EXPECT_FALSE(test, usnic_rel_cwnd_fast_loss(&cc));
	KUNIT_EXPECT_EQ(test, cc.cwnd, 64);
	/* A shorter sample counts at once. */
	cw_rtt(&cc, 1, 50 * NSEC_PER_USEC, 2 * period + 4 * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, cc.min_rtt_ns, 50 * NSEC_PER_USEC);
}

/*
 * The send window feeds the delay rule the samples of ACKs it accepted,
 * never those of a forged ACK (one acknowledging what was never sent).
 */
static void cwnd_samples_only_from_verified_acks(struct kunit *test)
{
	struct usnic_rel_ack_result res;
	struct usnic_rel_txwin w;

	KUNIT_ASSERT_EQ(test, usnic_rel_txwin_init(&w, 64, 0), 0);
	cw_send(test, &w, 4, 1000);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 9, 0, true, 1010, &res),
			USNIC_REL_ACK_FORGED);
	KUNIT_EXPECT_EQ(test, w.cc.min_rtt_ns, 0);
	KUNIT_EXPECT_EQ(test, w.cc.rtt_ns, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_txwin_ack(&w, 2, 0, true, 1300, &res),
			USNIC_REL_ACK_NEW);
	KUNIT_EXPECT_EQ(test, w.cc.min_rtt_ns, 300);
	KUNIT_EXPECT_EQ(test, w.cc.rtt_ns, 300);
	usnic_rel_txwin_destroy(&w);
}

static struct kunit_case usnic_rel_cwnd_cases[] = {
	KUNIT_CASE(cwnd_slow_start),
	KUNIT_CASE(cwnd_app_limited_does_not_grow),
	KUNIT_CASE(cwnd_congestion_avoidance),
	KUNIT_CASE(cwnd_fast_recovery_once_per_episode),
	KUNIT_CASE(cwnd_timeout_restarts_slow_start),
	KUNIT_CASE(cwnd_loss_stops_at_floor),
	KUNIT_CASE(cwnd_gates_the_send_window),
	KUNIT_CASE(cwnd_timeout_marks_what_had_time),
	KUNIT_CASE(cwnd_timeout_past_sacks_halves_once),
	KUNIT_CASE(cwnd_timeout_spares_progressing_window),
	KUNIT_CASE(cwnd_peer_not_ready_is_not_congestion),
	KUNIT_CASE(cwnd_lost_resend_found_by_acks),
	KUNIT_CASE(cwnd_first_send_lost_by_time),
	KUNIT_CASE(cwnd_reordering_is_not_loss),
	KUNIT_CASE(cwnd_reorder_timer_finds_short_flight_loss),
	KUNIT_CASE(cwnd_other_cpu_gets_srtt),
	KUNIT_CASE(cwnd_spurious_resend_widens_reordering),
	KUNIT_CASE(cwnd_sack_gives_rtt_sample),
	KUNIT_CASE(cwnd_presumed_lost_gives_no_rtt_sample),
	KUNIT_CASE(cwnd_peer_not_ready_undoes_fast_recovery),
	KUNIT_CASE(cwnd_local_drop_marks_one_packet),
	KUNIT_CASE(cwnd_random_loss_keeps_window),
	KUNIT_CASE(cwnd_loss_with_queueing_reduces),
	KUNIT_CASE(cwnd_delay_rule_limits),
	KUNIT_CASE(cwnd_min_rtt_expires),
	KUNIT_CASE(cwnd_samples_only_from_verified_acks),
	{}
};

static struct kunit_suite usnic_rel_cwnd_suite = {
	.name = "usnic_rel_cwnd",
	.test_cases = usnic_rel_cwnd_cases,
};

kunit_test_suite(usnic_rel_cwnd_suite);
