/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: the send window of one (peer, channel): what is in flight, what
 * the peer acknowledged, and what must be sent again.
 */
#ifndef _USNIC_REL_TXWIN_H
#define _USNIC_REL_TXWIN_H

#include <linux/gfp.h>
#include <linux/types.h>

#include "cwnd.h"

/* Largest send or receive window, as in usNIC. */
#define USNIC_REL_MAX_WINDOW	4096
/*
 * Fewest slots a window allocates. The slot arrays of both windows start
 * empty, are allocated on first use and double while what is in flight (or
 * held) needs it, up to the protocol window; an idle window gives them back.
 */
#define USNIC_REL_MIN_WINDOW	16
/*
 * Duplicate ACKs, or SACKed packets above a hole, that mean a loss: only
 * before the first RTT sample, while time cannot tell.
 */
#define USNIC_REL_DUPACK_THRESH	3
/*
 * Time-based loss detection (RFC 8985's RACK): a packet sent before one
 * that was delivered is lost once it stayed unacknowledged for that one's
 * round trip plus the reordering window; found by an ACK, or by the reorder
 * timer when no ACK comes. The window is a quarter of SRTT, grows by a
 * quarter (up to a whole SRTT) each time a resend proves spurious, and
 * shrinks back after that many recoveries without one. Counting duplicates
 * instead calls a loss whatever the time: packets that left from two CPUs
 * (two transmit queues, two veth backlogs) overtake each other by more
 * than three on a lossless path.
 */
#define USNIC_REL_REO_MULT_MAX	4
#define USNIC_REL_REO_PERSIST	16

/*
 * Per in-flight packet. The caller's copy of the packet itself is in @pkts,
 * at the same index, so that it moves with the slot when the window resizes.
 */
struct usnic_rel_tx_slot {
	u64 sent_ns;	/* last (re)transmission, for RTT samples */
	u64 first_ns;	/* first transmission: how long it waits (stall) */
	u32 epoch;	/* recovery epoch of the last transmission */
	u16 retx;	/* retransmissions: no RTT sample (Karn) */
	u16 cpu;	/* the CPU it last left from (see usnic_rel_txwin_rack) */
	bool sacked;	/* the receiver holds it out of order */
	bool lost;	/* presumed lost, not yet sent again: out of the pipe */
	bool local;	/* ... because this host dropped it: its resend is a send */
};

struct usnic_rel_txwin {
	struct usnic_rel_tx_slot *slots;	/* @cap of them, or NULL */
	void **pkts;	/* the caller's packet of each slot, or NULL */
	u32 size;	/* most packets in flight, a power of two */
	u32 cap;	/* slots allocated: 0, or a power of two <= @size */
	u32 peak;	/* most in flight since usnic_rel_txwin_shrink_cap() */
	u32 una;	/* oldest unacknowledged sequence */
	u32 next;	/* next sequence to send */
	u32 sack_end;	/* one past the highest SACKed sequence, at least una */
	u32 nr_sacked;	/* SACKed packets in [una, next) */
	u32 nr_lost;	/* slots marked lost and not yet resent */
	u64 delivered_ns;	/* newest (re)transmission known delivered */
	u64 rack_rtt_ns;	/* ... its round trip, when its ACK came */
	u64 reo_deadline_ns;	/* when a packet may be lost by time, or 0 */
	u64 srtt_ns;	/* the caller's smoothed RTT, set before each ACK; 0: none */
	u64 min_rtt_ns;	/* smallest RTT sample, or 0 */
	u32 reo_mult;	/* reordering window in quarters of SRTT, or 0 for 1 */
	u32 reo_persist;	/* recoveries left before it shrinks back */
	u64 spurious;	/* resends answered by their original */
	u32 dup_acks;
	u32 epoch;	/* bumped when a loss is detected */
	u32 recover;	/* next when the current recovery started */
	bool in_recovery;
	bool una_held;	/* the peer said it holds una (USNIC_REL_F_HELD) */
	u16 delivered_cpu;	/* the CPU delivered_ns's packet left from */
	struct usnic_rel_cwnd cc;
};

enum usnic_rel_ack_verdict {
	USNIC_REL_ACK_NEW,	/* freed packets or learnt of new SACKs */
	USNIC_REL_ACK_DUP,	/* valid, but nothing new */
	USNIC_REL_ACK_STALE,	/* ack below una: an old, reordered ACK */
	USNIC_REL_ACK_FORGED,	/* acks or SACKs a sequence never sent */
};

struct usnic_rel_ack_result {
	u32 freed_from;		/* first newly acknowledged sequence */
	u32 freed;		/* how many: [freed_from, freed_from + freed) */
	u32 newly_sacked;
	s64 rtt_ns;		/* RTT sample, or -1 */
	s64 sack_rtt_ns;	/* ... of the newest newly SACKed, never resent */
	bool fast_retransmit;	/* a loss was detected: resend the holes */
	bool recovery_started;	/* ... and it began a congestion episode */
	u32 rack_lost;		/* newly presumed lost by time */
	u32 spurious;		/* resends found answered by their original */
};

int usnic_rel_txwin_init(struct usnic_rel_txwin *w, u32 size, u32 isn);
void usnic_rel_txwin_destroy(struct usnic_rel_txwin *w);
u32 usnic_rel_txwin_grow_cap(const struct usnic_rel_txwin *w);
u32 usnic_rel_txwin_shrink_cap(struct usnic_rel_txwin *w);
int usnic_rel_txwin_arrays_alloc(u32 cap, struct usnic_rel_tx_slot **slots,
				 void ***pkts, gfp_t gfp);
void usnic_rel_txwin_arrays_free(struct usnic_rel_tx_slot *slots, void **pkts);
int usnic_rel_txwin_resize(struct usnic_rel_txwin *w, u32 cap,
			   struct usnic_rel_tx_slot **slots, void ***pkts);
int usnic_rel_txwin_grow(struct usnic_rel_txwin *w, gfp_t gfp);
size_t usnic_rel_txwin_bytes(u32 cap);
void usnic_rel_txwin_reset(struct usnic_rel_txwin *w, u32 isn);
int usnic_rel_txwin_push(struct usnic_rel_txwin *w, u64 now_ns, u32 *seq);
enum usnic_rel_ack_verdict
usnic_rel_txwin_ack_held(struct usnic_rel_txwin *w, u32 ack, u64 sack,
			 const void *blocks, u32 nblocks, bool pure, bool held,
			 u64 now_ns, struct usnic_rel_ack_result *res);
enum usnic_rel_ack_verdict
usnic_rel_txwin_ack_blocks(struct usnic_rel_txwin *w, u32 ack, u64 sack,
			   const void *blocks, u32 nblocks, bool pure,
			   u64 now_ns, struct usnic_rel_ack_result *res);
enum usnic_rel_ack_verdict usnic_rel_txwin_ack(struct usnic_rel_txwin *w,
					       u32 ack, u64 sack, bool pure,
					       u64 now_ns,
					       struct usnic_rel_ack_result *res);
bool usnic_rel_txwin_timeout(struct usnic_rel_txwin *w);
void usnic_rel_txwin_unhold(struct usnic_rel_txwin *w);
unsigned long usnic_rel_txwin_timed_out(const struct usnic_rel_txwin *const *w,
					unsigned int n, u64 now_ns, u64 rto_ns);
void usnic_rel_txwin_reo_timeout(struct usnic_rel_txwin *w, u64 now_ns,
				 struct usnic_rel_ack_result *res);
u32 usnic_rel_txwin_lost_end(const struct usnic_rel_txwin *w);
bool usnic_rel_txwin_next_retx(const struct usnic_rel_txwin *w, u32 *seq,
			       u32 end);
void usnic_rel_txwin_retransmitted(struct usnic_rel_txwin *w, u32 seq,
				   u64 now_ns);
u32 usnic_rel_txwin_mark_lost(struct usnic_rel_txwin *w, u32 end,
			      u64 sent_before);
bool usnic_rel_txwin_next_lost(const struct usnic_rel_txwin *w, u32 *seq);
void usnic_rel_txwin_sent_late(struct usnic_rel_txwin *w, u32 seq, u64 now_ns,
			       bool held);
bool usnic_rel_txwin_mark_local(struct usnic_rel_txwin *w, u32 seq);
bool usnic_rel_txwin_lost_locally(const struct usnic_rel_txwin *w, u32 seq);
u64 usnic_rel_txwin_reo_wnd(const struct usnic_rel_txwin *w);

static inline u32 usnic_rel_txwin_inflight(const struct usnic_rel_txwin *w)
{
	return w->next - w->una;
}

/*
 * Packets presumed in the network (RFC 6675's pipe): in flight, minus those
 * the receiver holds and those presumed lost and not yet sent again.
 */
static inline u32 usnic_rel_txwin_pipe(const struct usnic_rel_txwin *w)
{
	return usnic_rel_txwin_inflight(w) - w->nr_sacked - w->nr_lost;
}

/*
 * The peer holds the oldest packet in flight, received but not delivered
 * (USNIC_REL_F_HELD): its receiver is short of buffers.
 */
static inline bool usnic_rel_txwin_una_held(const struct usnic_rel_txwin *w)
{
	return w->una_held && usnic_rel_txwin_inflight(w);
}

/* ... and every other one in flight: nothing is there to resend. */
static inline bool usnic_rel_txwin_all_held(const struct usnic_rel_txwin *w)
{
	return usnic_rel_txwin_una_held(w) &&
	       w->nr_sacked == usnic_rel_txwin_inflight(w);
}

/*
 * May a new packet be sent? Only within the protocol window and the
 * congestion window, only once every packet presumed lost went again
 * (RFC 6675: retransmissions come first), and not while the peer holds the
 * oldest for want of receive buffers: a zero window, for what it holds is
 * delivered first; the sends that wait meanwhile leave packed when the ACK
 * after the delivery opens it.
 */
static inline bool usnic_rel_txwin_may_send(const struct usnic_rel_txwin *w)
{
	return usnic_rel_txwin_inflight(w) < w->size && !w->nr_lost &&
	       !usnic_rel_txwin_una_held(w) &&
	       usnic_rel_cwnd_allows(&w->cc, usnic_rel_txwin_pipe(w));
}

/* When the oldest packet in flight was first sent; only if one is. */
static inline u64 usnic_rel_txwin_oldest_ns(const struct usnic_rel_txwin *w)
{
	return w->slots[w->una & (w->cap - 1)].first_ns;
}

/* When in-flight @seq was last (re)transmitted. */
static inline u64 usnic_rel_txwin_sent_ns(const struct usnic_rel_txwin *w,
					  u32 seq)
{
	return w->slots[seq & (w->cap - 1)].sent_ns;
}

/*
 * Has the oldest packet in flight waited more than @rto_ns since it last
 * went out, at @now_ns? (A packet is stamped when pushed, never 0.)
 */
static inline bool usnic_rel_txwin_overdue(const struct usnic_rel_txwin *w,
					   u64 now_ns, u64 rto_ns)
{
	u64 sent;

	if (!usnic_rel_txwin_inflight(w))
		return false;
	sent = usnic_rel_txwin_sent_ns(w, w->una);
	return now_ns > sent && now_ns - sent > rto_ns;
}

/* The protocol window is full: no more may be sent until an ACK. */
static inline bool usnic_rel_txwin_full(const struct usnic_rel_txwin *w)
{
	return usnic_rel_txwin_inflight(w) >= w->size;
}

/* Index of in-flight @seq's slot. The window has slots (@cap > 0). */
static inline u32 usnic_rel_txwin_slot(const struct usnic_rel_txwin *w,
				       u32 seq)
{
	return seq & (w->cap - 1);
}

/* The caller's packet for in-flight @seq (NULL if none was set). */
static inline void *usnic_rel_txwin_pkt(const struct usnic_rel_txwin *w,
					u32 seq)
{
	return w->pkts[usnic_rel_txwin_slot(w, seq)];
}

static inline void usnic_rel_txwin_set_pkt(struct usnic_rel_txwin *w, u32 seq,
					   void *pkt)
{
	w->pkts[usnic_rel_txwin_slot(w, seq)] = pkt;
}

/* Take the caller's packet of in-flight @seq out of the window. */
static inline void *usnic_rel_txwin_take_pkt(struct usnic_rel_txwin *w,
					     u32 seq)
{
	void **p = &w->pkts[usnic_rel_txwin_slot(w, seq)];
	void *pkt = *p;

	*p = NULL;
	return pkt;
}

#endif /* _USNIC_REL_TXWIN_H */
