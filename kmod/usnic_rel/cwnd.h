/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: congestion window of one send window, in packets, in the
 * spirit of RFC 5681 (slow start, congestion avoidance) and RFC 6675 (one
 * reduction per loss-recovery episode, sending by pipe during recovery).
 * Pure state: the send window feeds it ACKs, losses and timeouts.
 *
 * A receiver short of buffers drops what comes in order and says so
 * (USNIC_REL_F_RNR): until the next ACK that moves the window, losses and
 * timeouts are flow control, not congestion, and leave the window alone. A
 * reduction (timeout or fast recovery) made before the news came is undone.
 */
#ifndef _USNIC_REL_CWND_H
#define _USNIC_REL_CWND_H

#include <linux/time64.h>
#include <linux/types.h>

/* Initial window (RFC 6928's ten segments), unless initial_cwnd says. */
#define USNIC_REL_CWND_INITIAL	10
/* Smallest ssthresh (RFC 5681: two segments). */
#define USNIC_REL_CWND_MIN_SSTHRESH	2
/*
 * Default floor of a loss reduction (cwnd_min): a window of 16 packets is
 * what one flow over a single fabric hop needs to keep its goodput under
 * random loss (at 10 % loss, a window halved to 2 spends most of its time
 * in tail-loss probes and retransmit timeouts).
 */
#define USNIC_REL_CWND_FLOOR		16
/*
 * Default queueing delay that makes a loss congestion (cwnd_queue_pct):
 * recent RTT above the path's least by this share of it. A full queue of a
 * few dozen packets doubles a fabric hop's RTT many times over. Where the
 * host's own delay varies more (a loaded VM), losses reduce as before.
 */
#define USNIC_REL_CWND_QUEUE_PCT	100
/* Largest cwnd_queue_pct: a hundred times the path's RTT. */
#define USNIC_REL_CWND_QUEUE_PCT_MAX	10000
/*
 * The least RTT is the least of the samples of the last one to two periods
 * of this length: a longer path is seen within two, and a queue must stand
 * that long, without a sample below it, to pass for the path.
 */
#define USNIC_REL_CWND_MIN_RTT_PERIOD_NS	(5ULL * NSEC_PER_SEC)

enum usnic_rel_cc_state {
	USNIC_REL_CC_OPEN,	/* no loss outstanding */
	USNIC_REL_CC_RECOVERY,	/* fast recovery: cwnd held at ssthresh */
	USNIC_REL_CC_LOSS,	/* after a timeout: slow start from 1 */
};

struct usnic_rel_cwnd {
	u32 cwnd;		/* packets that may be in the network */
	u32 ssthresh;
	u32 acked;		/* congestion avoidance: acked since last growth */
	u32 initial;		/* cwnd to start (and restart) with */
	u32 floor;		/* a loss reduces cwnd to no less than this */
	u32 max;		/* never above the protocol window */
	enum usnic_rel_cc_state state;
	bool peer_rnr;		/* peer not ready, no cumulative progress since */
	u32 undo_cwnd;		/* before the last reduction, until progress; or 0 */
	u32 undo_ssthresh;
	u32 queue_pct;		/* queueing that makes a loss congestion; 0: any */
	u64 min_rtt_ns;		/* least RTT of this period and the last, or 0 */
	u64 min_rtt_cur_ns;	/* ... of this period alone, or 0 */
	u64 min_rtt_start_ns;	/* when this period began */
	u64 rtt_ns;		/* recent RTT: moving average of samples, or 0 */
	u64 last_rtt_ns;	/* the newest sample, or 0 */
	u64 fast_episodes;	/* recoveries started by SACK/dup-ACK evidence */
	u64 rto_episodes;	/* timeouts that collapsed the window */
	u64 losses_spared;	/* losses without queueing delay: no reduction */
};

void usnic_rel_cwnd_init(struct usnic_rel_cwnd *cc, u32 initial, u32 max);
void usnic_rel_cwnd_set_floor(struct usnic_rel_cwnd *cc, u32 floor);
void usnic_rel_cwnd_set_queue_pct(struct usnic_rel_cwnd *cc, u32 pct);
void usnic_rel_cwnd_reset(struct usnic_rel_cwnd *cc);
void usnic_rel_cwnd_rtt(struct usnic_rel_cwnd *cc, u64 rtt_ns, u64 now_ns);
bool usnic_rel_cwnd_queueing(const struct usnic_rel_cwnd *cc);
void usnic_rel_cwnd_ack(struct usnic_rel_cwnd *cc, u32 acked, u32 flight);
bool usnic_rel_cwnd_fast_loss(struct usnic_rel_cwnd *cc);
void usnic_rel_cwnd_timeout(struct usnic_rel_cwnd *cc);
void usnic_rel_cwnd_recovered(struct usnic_rel_cwnd *cc);
void usnic_rel_cwnd_peer_rnr(struct usnic_rel_cwnd *cc);

/* May a packet go out while @pipe are in the network? */
static inline bool usnic_rel_cwnd_allows(const struct usnic_rel_cwnd *cc,
					 u32 pipe)
{
	return pipe < cc->cwnd;
}

#endif /* _USNIC_REL_CWND_H */
