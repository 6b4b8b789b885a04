// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: congestion window state machine, in packets.
 *
 *	OPEN      ACKs grow cwnd: by one per packet below ssthresh (slow
 *	          start), by one per window above (congestion avoidance).
 *	RECOVERY  entered on loss evidence from ACKs, when the RTT shows
 *	          queueing (below; otherwise the window stays): ssthresh = cwnd / 2
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
 * A loss found by ACKs reduces the window only when it came with queueing
 * delay (usnic_rel_cwnd_queueing()): the recent RTT (a moving average of
 * samples, an eighth each, or the newest sample) above the path's least
 * RTT by cwnd_queue_pct percent of it. A queue that overflows was full
 * just before, so the packets ahead of the loss waited in it; a loss with
 * the RTT near its least is the wire's (a bit error, netem's dice), not a
 * sign that this sender overran anything, and reducing for it only idles
 * the path: at 1 % of a stream's 7 000 packets/s, a halving every round
 * trip held the window at its floor, well below what the path took
 * (bench/discussion.md, issue 11). Such a loss is counted (losses_spared)
 * and only ends slow start (ssthresh = cwnd, not below the floor), so a
 * random loss does not let the window double on. Why not the other rules:
 * a gentler decrease (CUBIC's 0.7) or one per round trip still answers
 * every isolated loss, and at ~1 loss per round trip any multiplicative
 * decrease settles near 1.2 / sqrt(loss) packets; a loss-rate threshold
 * cannot tell 1 % random loss from the one packet per round trip a
 * tail-drop queue takes from a sender growing into it. Delay tells them
 * apart.
 *
 * The least RTT is a windowed minimum (two periods of 5 s): a path that got
 * longer is seen within 10 s, and until then its losses look like
 * congestion, the safe way. A queue that stands for two periods with no
 * sample below it would pass for the path; one sender's halvings drain it.
 * A retransmit timeout collapses the window as before: nothing got
 * through, whatever the delay said.
 *
 * The margin (100 %) is not fitted to the test VM, where it cannot be: a
 * loaded TCG guest's RTTs run 10 to 100 times the least it ever saw (the
 * receiver's CPU is the queue), so there nearly every loss still reduces;
 * a margin wide enough to spare them (2000 %) also spared a real
 * bottleneck's drops and overran its 30-packet queue, 5 to 17 times the
 * drops (bench/discussion.md). Delay tells random loss from congestion only
 * where the path's own delay is steadier than its queue's.
 *
 * RTT samples come only from ACKs that passed the send window's checks (a
 * forged one, acknowledging what was never sent, is rejected before its
 * sample is taken), timed by this host's clock from the packet's sending.
 * A peer cannot make them shorter than the path: it can only delay its
 * ACKs, which makes losses reduce more, or acknowledge what it did not
 * receive, which loses its own messages. Either way the delay decides
 * only how the window toward that peer answers that peer's losses; no
 * other peer's window reads its samples.
 *
 * Not locked: the send window's caller serialises all calls.
 */
#include <linux/math64.h>
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
	/* Every loss congestion until told (cwnd_queue_pct): RFC 5681's. */
	cc->queue_pct = 0;
	usnic_rel_cwnd_reset(cc);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_init);

/* The least cwnd a loss reduction leaves, at least RFC 5681's two. */
void usnic_rel_cwnd_set_floor(struct usnic_rel_cwnd *cc, u32 floor)
{
	cc->floor = clamp(floor, USNIC_REL_CWND_MIN_SSTHRESH, cc->max);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_set_floor);

/* Queueing delay, in percent of the least RTT, that makes a loss congestion. */
void usnic_rel_cwnd_set_queue_pct(struct usnic_rel_cwnd *cc, u32 pct)
{
	cc->queue_pct = pct;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_set_queue_pct);

/**
 * usnic_rel_cwnd_rtt() - an RTT sample from a verified ACK
 * @cc: the state
 * @rtt_ns: the sample (Karn's rule applied by the caller)
 * @now_ns: when it was taken
 */
void usnic_rel_cwnd_rtt(struct usnic_rel_cwnd *cc, u64 rtt_ns, u64 now_ns)
{
	rtt_ns = max(rtt_ns, 1ULL);
	if (!cc->min_rtt_start_ns ||
	    now_ns - cc->min_rtt_start_ns >= USNIC_REL_CWND_MIN_RTT_PERIOD_NS) {
		/* A new period: the least of the last one and this sample. */
		cc->min_rtt_ns = cc->min_rtt_cur_ns ?
				 min(cc->min_rtt_cur_ns, rtt_ns) : rtt_ns;
		cc->min_rtt_cur_ns = rtt_ns;
		cc->min_rtt_start_ns = max(now_ns, 1ULL);
	} else {
		cc->min_rtt_cur_ns = min(cc->min_rtt_cur_ns, rtt_ns);
		cc->min_rtt_ns = min(cc->min_rtt_ns, rtt_ns);
	}
	if (cc->rtt_ns)
		cc->rtt_ns = cc->rtt_ns - (cc->rtt_ns >> 3) + (rtt_ns >> 3);
	else
		cc->rtt_ns = rtt_ns;
	cc->last_rtt_ns = rtt_ns;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_rtt);

/*
 * Is the recent RTT well above the path's least: are packets waiting in a
 * queue? The average, or the newest sample alone: in slow start a queue
 * fills within a round trip, before the average follows. Also true without
 * samples (nothing to tell by) or with cwnd_queue_pct 0 (every loss is
 * congestion, RFC 5681's reading).
 */
bool usnic_rel_cwnd_queueing(const struct usnic_rel_cwnd *cc)
{
	if (!cc->queue_pct || !cc->min_rtt_ns)
		return true;
	return max(cc->rtt_ns, cc->last_rtt_ns) >
	       cc->min_rtt_ns + div_u64(cc->min_rtt_ns * cc->queue_pct, 100);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_cwnd_queueing);

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
	/* Possibly another path: its delay is learnt again. */
	cc->min_rtt_ns = 0;
	cc->min_rtt_cur_ns = 0;
	cc->min_rtt_start_ns = 0;
	cc->rtt_ns = 0;
	cc->last_rtt_ns = 0;
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
 * answered this loss), while the peer is not ready, or when the loss came
 * without queueing delay (spared: slow start ends, the window stays).
 */
bool usnic_rel_cwnd_fast_loss(struct usnic_rel_cwnd *cc)
{
	if (cc->state != USNIC_REL_CC_OPEN || cc->peer_rnr)
		return false;
	if (!usnic_rel_cwnd_queueing(cc)) {
		cc->ssthresh = min(cc->ssthresh,
				   max(cc->cwnd, min(cc->floor, cc->max)));
		cc->losses_spared++;
		return false;
	}
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
