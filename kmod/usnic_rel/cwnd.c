// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: congestion window state machine, in packets.
 *
 *	OPEN      ACKs grow cwnd: by one per packet below ssthresh (slow
 *	          start), by one per window above (congestion avoidance).
 *	RECOVERY  entered on loss evidence from ACKs: ssthresh = cwnd / 2
 *	          (at least 2) and cwnd = ssthresh, once per episode; cwnd
 *	          stays while the holes are repaired, the pipe decides.
 *	LOSS      entered on a timeout: cwnd = 1, slow start up to ssthresh
 *	          (halved only on the first timeout of a run, RFC 5681). A
 *	          timeout while the peer holds SACKed packets past the hole
 *	          enters RECOVERY instead (the send window decides).
 *
 * A reduction never takes the window below its floor (cwnd_min), nor below
 * what it was: RFC 5681's two segments suit a flow that shares a bottleneck
 * queue of a few packets on the Internet; over one fabric hop a window
 * halved to two turns random loss into timeouts.
 *
 * Neither a loss nor a timeout changes anything while the peer said it is
 * not ready (peer_rnr), until an ACK frees packets: it dropped them for
 * want of buffers, which says nothing of the path.
 *
 * ssthresh halves cwnd rather than the flight (as Linux does): cwnd only
 * grows while it is used (below), so it is what the path was shown to take,
 * while a flight that happened to be short when a message ended would
 * collapse the window of a sender that is only intermittently busy.
 *
 * Not locked: the send window's caller serialises all calls.
 */
#include <linux/minmax.h>
#include <linux/module.h>

#include <kunit/visibility.h>
#include "cwnd.h"

/**
 * usnic_rel_cwnd_init() - start a window
 * @cc: the state
 * @initial: initial cwnd in packets (clamped to [1, @max])
 * @max: largest cwnd, the protocol window
 */
void usnic_rel_cwnd_init(struct usnic_rel_cwnd *cc, u32 initial, u32 max)
{
	memset(cc, 0, sizeof(*cc));
	cc->max = max(max, 1U);
	cc->initial = clamp(initial, 1U, cc->max);
	cc->floor = USNIC_REL_CWND_MIN_SSTHRESH;
	usnic_rel_cwnd_reset(cc);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_init);

/* The least cwnd a loss reduction leaves, at least RFC 5681's two. */
void usnic_rel_cwnd_set_floor(struct usnic_rel_cwnd *cc, u32 floor)
{
	cc->floor = clamp(floor, USNIC_REL_CWND_MIN_SSTHRESH, cc->max);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_set_floor);

/* ssthresh after a loss: half of cwnd, but not below the floor nor above cwnd. */
static u32 usnic_rel_cwnd_reduced(const struct usnic_rel_cwnd *cc)
{
	return max3(cc->cwnd / 2, min(cc->floor, cc->cwnd),
		    (u32)USNIC_REL_CWND_MIN_SSTHRESH);
}

/* A new sequence space (restarted peer): start over, keep the counters. */
void usnic_rel_cwnd_reset(struct usnic_rel_cwnd *cc)
{
	cc->cwnd = cc->initial;
	cc->ssthresh = cc->max;
	cc->acked = 0;
	cc->state = USNIC_REL_CC_OPEN;
	cc->peer_rnr = false;
	cc->undo_cwnd = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_reset);

/**
 * usnic_rel_cwnd_ack() - packets were newly acknowledged
 * @cc: the state
 * @acked: how many the cumulative ACK freed
 * @flight: packets in flight before this ACK
 *
 * A window less than half used (the sender had no more to send) does not
 * grow: it would grow without bound and mean nothing at the next loss.
 */
void usnic_rel_cwnd_ack(struct usnic_rel_cwnd *cc, u32 acked, u32 flight)
{
	u32 ss;

	if (acked) {
		cc->peer_rnr = false;
		cc->undo_cwnd = 0;
	}
	if (cc->state == USNIC_REL_CC_RECOVERY || !acked ||
	    (u64)flight * 2 < cc->cwnd)
		return;
	if (cc->cwnd < cc->ssthresh) {
		ss = min(acked, cc->ssthresh - cc->cwnd);
		cc->cwnd += ss;
		acked -= ss;
	}
	cc->acked += acked;
	while (cc->acked >= cc->cwnd && cc->cwnd < cc->max) {
		cc->acked -= cc->cwnd;
		cc->cwnd++;
	}
	if (cc->cwnd >= cc->max) {
		cc->cwnd = cc->max;
		cc->acked = 0;
	}
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_ack);

/**
 * usnic_rel_cwnd_fast_loss() - ACKs showed a loss
 * @cc: the state
 *
 * Return: true when this starts an episode (the window was reduced), false
 * inside one (a recovery, or the slow start after a timeout, already
 * answered this loss) or while the peer is not ready.
 */
bool usnic_rel_cwnd_fast_loss(struct usnic_rel_cwnd *cc)
{
	if (cc->state != USNIC_REL_CC_OPEN || cc->peer_rnr)
		return false;
	cc->undo_cwnd = cc->cwnd;
	cc->undo_ssthresh = cc->ssthresh;
	cc->ssthresh = usnic_rel_cwnd_reduced(cc);
	cc->cwnd = cc->ssthresh;
	cc->acked = 0;
	cc->state = USNIC_REL_CC_RECOVERY;
	cc->fast_episodes++;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_fast_loss);

/* The retransmit timer fired with packets in flight. */
void usnic_rel_cwnd_timeout(struct usnic_rel_cwnd *cc)
{
	if (cc->peer_rnr)
		return;
	if (cc->state != USNIC_REL_CC_LOSS) {
		/* A recovery since the last progress: undo to before it. */
		if (cc->state == USNIC_REL_CC_OPEN || !cc->undo_cwnd) {
			cc->undo_cwnd = cc->cwnd;
			cc->undo_ssthresh = cc->ssthresh;
		}
		/* In recovery cwnd is already ssthresh: halve again. */
		cc->ssthresh = usnic_rel_cwnd_reduced(cc);
		cc->rto_episodes++;
	}
	cc->cwnd = 1;
	cc->acked = 0;
	cc->state = USNIC_REL_CC_LOSS;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_timeout);

/* Everything in flight when the loss was found is acknowledged. */
void usnic_rel_cwnd_recovered(struct usnic_rel_cwnd *cc)
{
	if (cc->state == USNIC_REL_CC_RECOVERY)
		cc->cwnd = cc->ssthresh;
	cc->state = USNIC_REL_CC_OPEN;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_recovered);

/*
 * The peer dropped the packet at the cumulative ACK for want of buffers
 * (USNIC_REL_F_RNR); cleared by the next ACK that frees packets. A timeout
 * or a fast recovery since the last progress was that drop, not congestion:
 * its reduction is undone (the ACK saying so can come after the timer, on a
 * busy receiver, or after the packets it held were SACKed).
 */
void usnic_rel_cwnd_peer_rnr(struct usnic_rel_cwnd *cc)
{
	cc->peer_rnr = true;
	if (cc->state != USNIC_REL_CC_OPEN && cc->undo_cwnd) {
		cc->cwnd = cc->undo_cwnd;
		cc->ssthresh = cc->undo_ssthresh;
		cc->acked = 0;
		cc->state = USNIC_REL_CC_OPEN;
	}
	cc->undo_cwnd = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_peer_rnr);
