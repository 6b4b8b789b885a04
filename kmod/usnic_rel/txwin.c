// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: send window. Sequence numbers in [una, next) are in flight and
 * own one slot each; an ACK frees a prefix of them and marks SACKed ones so
 * loss recovery resends only the holes instead of going back N.
 *
 * Not locked: the caller serialises all calls on one window.
 */
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/time64.h>

#include <kunit/visibility.h>
#include "seq.h"
#include "txwin.h"
#include "wire.h"

/**
 * usnic_rel_txwin_init() - set up an empty send window, with no slots yet
 * @w: the window
 * @size: most packets in flight, a power of two up to USNIC_REL_MAX_WINDOW
 * @isn: first sequence number to send
 *
 * Return: 0, or -EINVAL for a bad @size.
 */
int usnic_rel_txwin_init(struct usnic_rel_txwin *w, u32 size, u32 isn)
{
	memset(w, 0, sizeof(*w));
	if (!is_power_of_2(size) || size > USNIC_REL_MAX_WINDOW)
		return -EINVAL;
	w->size = size;
	w->una = isn;
	w->next = isn;
	w->sack_end = isn;
	usnic_rel_cwnd_init(&w->cc, USNIC_REL_CWND_INITIAL, size);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_init);

/* Bytes of slot arrays a window of @cap slots holds. */
size_t usnic_rel_txwin_bytes(u32 cap)
{
	return (size_t)cap * (sizeof(struct usnic_rel_tx_slot) + sizeof(void *));
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_bytes);

/**
 * usnic_rel_txwin_arrays_alloc() - allocate slot arrays for a resize
 * @cap: slots, a power of two
 * @slots: set to the slot array
 * @pkts: set to the caller's packet array
 * @gfp: allocation flags; only a context that may sleep uses vmalloc
 *
 * Return: 0 or -ENOMEM.
 */
int usnic_rel_txwin_arrays_alloc(u32 cap, struct usnic_rel_tx_slot **slots,
				 void ***pkts, gfp_t gfp)
{
	if (gfpflags_allow_blocking(gfp)) {
		*slots = kvcalloc(cap, sizeof(**slots), gfp);
		*pkts = kvcalloc(cap, sizeof(**pkts), gfp);
	} else {
		*slots = kcalloc(cap, sizeof(**slots), gfp);
		*pkts = kcalloc(cap, sizeof(**pkts), gfp);
	}
	if (*slots && *pkts)
		return 0;
	usnic_rel_txwin_arrays_free(*slots, *pkts);
	*slots = NULL;
	*pkts = NULL;
	return -ENOMEM;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_arrays_alloc);

void usnic_rel_txwin_arrays_free(struct usnic_rel_tx_slot *slots, void **pkts)
{
	kvfree(slots);
	kvfree(pkts);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_arrays_free);

/**
 * usnic_rel_txwin_grow_cap() - slots to allocate before the next push
 * @w: the window
 *
 * Return: 0 when the window has a free slot or the protocol window is full
 * (growing would not help), else double the slots (at least
 * USNIC_REL_MIN_WINDOW, at most @size).
 */
u32 usnic_rel_txwin_grow_cap(const struct usnic_rel_txwin *w)
{
	u32 inflight = usnic_rel_txwin_inflight(w);

	if (inflight < w->cap || inflight >= w->size)
		return 0;
	return min(max_t(u32, USNIC_REL_MIN_WINDOW, w->cap * 2), w->size);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_grow_cap);

/**
 * usnic_rel_txwin_shrink_cap() - slots the window needs, looking back
 * @w: the window
 *
 * Called periodically; starts a new period. A window that had nothing in
 * flight for a whole period needs no slots; one that used less than half
 * of its slots at its busiest needs twice that peak (so that it does not
 * grow again at once). Never more than it has.
 *
 * Return: the slots to keep: @cap for no change, less to shrink, 0 to free.
 */
u32 usnic_rel_txwin_shrink_cap(struct usnic_rel_txwin *w)
{
	u32 inflight = usnic_rel_txwin_inflight(w);
	u32 peak = max(w->peak, inflight), want;

	w->peak = inflight;
	if (!peak)
		return 0;
	want = max_t(u32, USNIC_REL_MIN_WINDOW, roundup_pow_of_two(2 * peak));
	return min(want, w->cap);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_shrink_cap);

/**
 * usnic_rel_txwin_resize() - move the window onto arrays of @cap slots
 * @w: the window
 * @cap: 0 (to free the arrays: nothing may be in flight) or a power of two
 *	up to @size, holding at least what is in flight
 * @slots: in: the new slot array (NULL for 0); out: the old one
 * @pkts: in: the new packet array (NULL for 0); out: the old one
 *
 * The new arrays come from usnic_rel_txwin_arrays_alloc(@cap) and are
 * zeroed; every in-flight slot, its SACK state and its packet, moves to its
 * index in the new arrays, so nothing the ACK and retransmit logic knows is
 * lost. The caller frees what comes back in @slots and @pkts in both cases.
 *
 * Return: 0, -EINVAL for a bad @cap, -EBUSY when @cap is smaller than what
 * is in flight (the arrays are then left as they were).
 */
int usnic_rel_txwin_resize(struct usnic_rel_txwin *w, u32 cap,
			   struct usnic_rel_tx_slot **slots, void ***pkts)
{
	struct usnic_rel_tx_slot *old_slots = w->slots;
	void **old_pkts = w->pkts;
	u32 seq;

	if (cap > w->size || (cap && !is_power_of_2(cap)) ||
	    !cap != !*slots || !cap != !*pkts)
		return -EINVAL;
	if (usnic_rel_txwin_inflight(w) > cap)
		return -EBUSY;
	for (seq = w->una; seq != w->next; seq++) {
		u32 from = seq & (w->cap - 1), to = seq & (cap - 1);

		(*slots)[to] = old_slots[from];
		(*pkts)[to] = old_pkts[from];
	}
	w->slots = *slots;
	w->pkts = *pkts;
	w->cap = cap;
	*slots = old_slots;
	*pkts = old_pkts;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_resize);

/**
 * usnic_rel_txwin_grow() - allocate what the next push needs, in one go
 * @w: the window
 * @gfp: allocation flags
 *
 * For callers that may allocate where they are; the connection drops its
 * lock around the allocation instead and uses the steps above.
 *
 * Return: 0 (the next push will not fail for want of slots, or the protocol
 * window is full), or -ENOMEM.
 */
int usnic_rel_txwin_grow(struct usnic_rel_txwin *w, gfp_t gfp)
{
	struct usnic_rel_tx_slot *slots;
	u32 cap = usnic_rel_txwin_grow_cap(w);
	void **pkts;

	if (!cap)
		return 0;
	if (usnic_rel_txwin_arrays_alloc(cap, &slots, &pkts, gfp))
		return -ENOMEM;
	/* Cannot fail: cap is valid and above what is in flight. */
	WARN_ON_ONCE(usnic_rel_txwin_resize(w, cap, &slots, &pkts));
	usnic_rel_txwin_arrays_free(slots, pkts);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_grow);

void usnic_rel_txwin_destroy(struct usnic_rel_txwin *w)
{
	usnic_rel_txwin_arrays_free(w->slots, w->pkts);
	w->slots = NULL;
	w->pkts = NULL;
	w->cap = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_destroy);

/**
 * usnic_rel_txwin_reset() - start over, for a restarted peer
 * @w: the window
 * @isn: first sequence number to send
 *
 * The caller first completes (with an error) and frees whatever it still
 * holds for the packets in flight. The arrays stay, emptied.
 */
void usnic_rel_txwin_reset(struct usnic_rel_txwin *w, u32 isn)
{
	struct usnic_rel_tx_slot *slots = w->slots;
	struct usnic_rel_cwnd cc = w->cc;
	void **pkts = w->pkts;
	u32 size = w->size, cap = w->cap;

	if (cap) {
		memset(slots, 0, cap * sizeof(*slots));
		memset(pkts, 0, cap * sizeof(*pkts));
	}
	memset(w, 0, sizeof(*w));
	w->slots = slots;
	w->pkts = pkts;
	w->size = size;
	w->cap = cap;
	w->una = isn;
	w->next = isn;
	w->sack_end = isn;
	w->cc = cc;
	usnic_rel_cwnd_reset(&w->cc);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_reset);

/**
 * usnic_rel_txwin_push() - take the next sequence number for a new packet
 * @w: the window
 * @now_ns: transmission time
 * @seq: set to the packet's sequence number
 *
 * Return: 0, -ENOSPC when the window is full, or -ENOBUFS when it is not
 * but all its slots are taken: usnic_rel_txwin_grow_cap() says how many to
 * allocate.
 */
int usnic_rel_txwin_push(struct usnic_rel_txwin *w, u64 now_ns, u32 *seq)
{
	u32 inflight = usnic_rel_txwin_inflight(w);
	struct usnic_rel_tx_slot *s;

	if (inflight >= w->size)
		return -ENOSPC;
	if (unlikely(inflight >= w->cap))
		return -ENOBUFS;
	if (inflight >= w->peak)
		w->peak = inflight + 1;
	s = &w->slots[usnic_rel_txwin_slot(w, w->next)];
	s->sent_ns = now_ns;
	s->first_ns = now_ns;
	s->cpu = raw_smp_processor_id();
	/* A packet first sent during a recovery is not one of its losses. */
	s->epoch = w->epoch;
	s->retx = 0;
	s->sacked = false;
	s->lost = false;
	s->local = false;
	*seq = w->next++;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_push);

/* Bits of a SACK for @ack that may be set: those naming sequences sent. */
static u64 usnic_rel_sack_valid_mask(const struct usnic_rel_txwin *w, u32 ack)
{
	u32 beyond = w->next - ack;	/* sent at or after ack */

	if (beyond <= 1)
		return 0;
	if (beyond - 1 >= USNIC_REL_WIRE_SACK_BITS)
		return ~0ULL;
	return GENMASK_ULL(beyond - 2, 0);
}

/* @s is known received or sent again: back in the pipe, or gone. */
static void usnic_rel_txwin_unlose(struct usnic_rel_txwin *w,
				   struct usnic_rel_tx_slot *s)
{
	if (s->lost) {
		s->lost = false;
		w->nr_lost--;
	}
	s->local = false;
}

/*
 * Whether the acknowledgment of @s, arriving now, dates the path: not if it
 * was resent (Karn), nor if it was presumed lost and not yet sent again.
 * The receiver answers only what arrives: when the ACK of a delivered packet
 * is lost, the next one comes after the retransmission timer (or the time
 * rule) resent something, so its delay is our own timer's. Taken as an RTT,
 * it raises the RTO, which delays the next such ACK further: under heavy loss
 * the RTO climbs to its ceiling without any backoff.
 */
static bool usnic_rel_txwin_times_path(const struct usnic_rel_tx_slot *s)
{
	return !s->retx && !s->lost;
}

/*
 * @s arrived at @now_ns: what was sent before it, and is not known received,
 * may be lost. A resend acknowledged sooner than any round trip was answered
 * by its original: the resend was spurious (the original was only late), and
 * its time says nothing of what was sent before it. Returns whether so.
 */
static bool usnic_rel_txwin_delivered(struct usnic_rel_txwin *w,
				      const struct usnic_rel_tx_slot *s,
				      u64 now_ns)
{
	if (s->retx && now_ns < s->sent_ns + w->min_rtt_ns)
		return true;
	if (s->sent_ns > w->delivered_ns) {
		w->delivered_ns = s->sent_ns;
		w->delivered_cpu = s->cpu;
		w->rack_rtt_ns = now_ns > s->sent_ns ? now_ns - s->sent_ns : 0;
	}
	return false;
}

/*
 * Forget [una, ack); returns whether any of them was retransmitted. Counts
 * in *@spurious those resends that proved spurious.
 */
static bool usnic_rel_txwin_free(struct usnic_rel_txwin *w, u32 ack,
				 u64 now_ns, u32 *spurious)
{
	bool retx = false;

	if (w->una != ack)
		w->una_held = false;
	for (; w->una != ack; w->una++) {
		struct usnic_rel_tx_slot *s =
			&w->slots[usnic_rel_txwin_slot(w, w->una)];

		if (s->retx)
			retx = true;
		usnic_rel_txwin_unlose(w, s);
		if (!s->sacked && usnic_rel_txwin_delivered(w, s, now_ns))
			(*spurious)++;
		if (s->sacked) {
			s->sacked = false;
			w->nr_sacked--;
		}
	}
	if (usnic_rel_seq_before(w->sack_end, w->una))
		w->sack_end = w->una;
	return retx;
}

/*
 * The receiver holds @s, reported at @now_ns. A packet that dates the path
 * (usnic_rel_txwin_times_path()) gives an RTT sample: in a recovery, where
 * every cumulative ACK covers a resend, these are the only samples, and
 * without them a timeout's backoff would last until the recovery ends. The
 * newest of an ACK is kept: an older one may have waited for room in an
 * earlier ACK's SACK. Returns whether it is news.
 */
static bool usnic_rel_txwin_sack_one(struct usnic_rel_txwin *w,
				     struct usnic_rel_tx_slot *s, u64 now_ns,
				     struct usnic_rel_ack_result *res)
{
	bool timed = usnic_rel_txwin_times_path(s);

	if (s->sacked)
		return false;
	usnic_rel_txwin_unlose(w, s);
	if (usnic_rel_txwin_delivered(w, s, now_ns))
		res->spurious++;
	if (timed && now_ns >= s->sent_ns &&
	    (res->sack_rtt_ns < 0 ||
	     (s64)(now_ns - s->sent_ns) < res->sack_rtt_ns))
		res->sack_rtt_ns = now_ns - s->sent_ns;
	s->sacked = true;
	w->nr_sacked++;
	return true;
}

static u32 usnic_rel_txwin_mark_sacked(struct usnic_rel_txwin *w, u64 sack,
				       u64 now_ns,
				       struct usnic_rel_ack_result *res)
{
	u32 newly = 0;

	while (sack) {
		unsigned int bit = __ffs64(sack);
		u32 seq = w->una + 1 + bit;
		struct usnic_rel_tx_slot *s =
			&w->slots[usnic_rel_txwin_slot(w, seq)];

		sack &= sack - 1;
		if (!usnic_rel_txwin_sack_one(w, s, now_ns, res))
			continue;
		newly++;
		if (usnic_rel_seq_after(seq + 1, w->sack_end))
			w->sack_end = seq + 1;
	}
	return newly;
}

/* SACK blocks for @ack name only sequences sent (the parser checked their shape). */
static bool usnic_rel_sack_blocks_valid(const struct usnic_rel_txwin *w,
					u32 ack, const void *blocks, u32 n)
{
	u32 i, start, len;

	for (i = 0; i < n; i++) {
		usnic_rel_sack_block_get(blocks, i, &start, &len);
		if (usnic_rel_seq_after(ack + start + len, w->next))
			return false;
	}
	return true;
}

/* Mark what the SACK blocks name; una is the ACK they are relative to. */
static u32 usnic_rel_txwin_mark_blocks(struct usnic_rel_txwin *w,
				       const void *blocks, u32 n, u64 now_ns,
				       struct usnic_rel_ack_result *res)
{
	u32 i, start, len, newly = 0;

	for (i = 0; i < n; i++) {
		u32 seq, end;

		usnic_rel_sack_block_get(blocks, i, &start, &len);
		end = w->una + start + len;
		for (seq = w->una + start; seq != end; seq++) {
			struct usnic_rel_tx_slot *s =
				&w->slots[usnic_rel_txwin_slot(w, seq)];

			if (usnic_rel_txwin_sack_one(w, s, now_ns, res))
				newly++;
		}
		if (usnic_rel_seq_after(end, w->sack_end))
			w->sack_end = end;
	}
	return newly;
}

/*
 * Evidence needed to call the oldest packet lost before the first RTT
 * sample. A flight of fewer than four packets cannot produce three
 * duplicates: then all but one of those in flight will do (early
 * retransmit, RFC 5827), so that a loss among few packets is repaired by
 * the ACKs rather than by the retransmit timer.
 */
static u32 usnic_rel_txwin_dupthresh(const struct usnic_rel_txwin *w)
{
	u32 inflight = w->next - w->una;

	if (inflight >= 2 && inflight <= USNIC_REL_DUPACK_THRESH)
		return inflight - 1;
	return USNIC_REL_DUPACK_THRESH;
}

/**
 * usnic_rel_txwin_reo_wnd() - reordering tolerated before a packet is lost
 * @w: the window
 *
 * Return: a quarter of SRTT per step of the multiplier, at most SRTT.
 */
u64 usnic_rel_txwin_reo_wnd(const struct usnic_rel_txwin *w)
{
	u64 quarter = w->srtt_ns / 4;

	return min(quarter * max(w->reo_mult, 1U), w->srtt_ns);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_reo_wnd);

/* @n resends proved spurious: tolerate more reordering for a while. */
static void usnic_rel_txwin_reo_grow(struct usnic_rel_txwin *w, u32 n)
{
	w->spurious += n;
	w->reo_mult = min(max(w->reo_mult, 1U) + 1, USNIC_REL_REO_MULT_MAX);
	w->reo_persist = USNIC_REL_REO_PERSIST;
}

/* A recovery starts: after enough of them without a spurious resend, shrink. */
static void usnic_rel_txwin_reo_age(struct usnic_rel_txwin *w)
{
	if (w->reo_persist && !--w->reo_persist)
		w->reo_mult = 1;
}

/*
 * Packets still missing, sent before the newest one delivered, when their
 * own round trip took that one's plus the reordering window: lost, first
 * transmissions and resends alike. Packets that left from one CPU stay in
 * order up to the peer (one transmit queue, one backlog); one that left
 * from another CPU than the newest delivered may only wait in that CPU's
 * queue, so it gets a whole SRTT (RFC 8985's largest window) before it is
 * called lost. Otherwise a send path that moved between CPUs (the
 * process's doorbell, the connection's work item) resends what is only
 * queued behind the other CPU's backlog. A lost resend is found here, from the
 * ACKs, rather than by the retransmit timer that collapses the congestion
 * window (at 10 % loss one resend in ten is lost); so is a loss with too few
 * packets after it for duplicate ACKs. Those not due yet set
 * reo_deadline_ns, for the reorder timer. Marks them lost and returns how
 * many.
 */
static u32 usnic_rel_txwin_rack(struct usnic_rel_txwin *w, u64 now_ns)
{
	u64 reo = usnic_rel_txwin_reo_wnd(w), due;
	bool same_cpu;
	u32 seq, n = 0;

	w->reo_deadline_ns = 0;
	if (!w->delivered_ns || !w->srtt_ns)
		return 0;
	for (seq = w->una; seq != w->next; seq++) {
		struct usnic_rel_tx_slot *s =
			&w->slots[usnic_rel_txwin_slot(w, seq)];

		if (s->sacked || s->lost)
			continue;
		same_cpu = s->cpu == w->delivered_cpu;
		due = s->sent_ns + w->rack_rtt_ns + (same_cpu ? reo : w->srtt_ns);
		if (s->sent_ns > w->delivered_ns || now_ns <= due) {
			if (s->sent_ns <= w->delivered_ns &&
			    (!w->reo_deadline_ns || due < w->reo_deadline_ns))
				w->reo_deadline_ns = due + 1;
			/*
			 * Sent once, not due, with the smaller window: every
			 * later packet was first sent after it, so none is
			 * due before it. Stops the walk at the recent part of
			 * the flight.
			 */
			if (s->sent_ns == s->first_ns && same_cpu)
				break;
			continue;
		}
		s->lost = true;
		w->nr_lost++;
		n++;
	}
	return n;
}

/*
 * Decide whether the ACK just taken, or the reorder timer at @now_ns, shows
 * a loss. With an RTT sample only time decides; before it, duplicates.
 */
static void usnic_rel_txwin_detect(struct usnic_rel_txwin *w, u64 now_ns,
				   struct usnic_rel_ack_result *res)
{
	u32 thresh = usnic_rel_txwin_dupthresh(w);
	bool by_count;

	if (w->una == w->next) {
		w->reo_deadline_ns = 0;
		return;
	}
	res->rack_lost = usnic_rel_txwin_rack(w, now_ns);
	/* Packets the peer holds in order, for want of buffers, show no hole. */
	by_count = !w->srtt_ns && !usnic_rel_txwin_una_held(w) &&
		   (w->dup_acks >= thresh || w->nr_sacked >= thresh);
	if (!w->in_recovery && (by_count || res->rack_lost)) {
		w->in_recovery = true;
		w->recover = w->next;
		w->epoch++;
		usnic_rel_txwin_reo_age(w);
		res->fast_retransmit = true;
		res->recovery_started = usnic_rel_cwnd_fast_loss(&w->cc);
	} else if (w->in_recovery && res->freed && !w->srtt_ns) {
		/*
		 * A partial ACK: the next hole was lost too. (With an RTT
		 * sample, time finds it.) What the time rule found inside a
		 * recovery is already marked and goes within the pipe, not as
		 * a new finding that may exceed it.
		 */
		res->fast_retransmit = true;
	}
}

/**
 * usnic_rel_txwin_ack_held() - process an acknowledgment from the peer
 * @w: the window
 * @ack: cumulative ACK: everything before it was received and delivered
 * @sack: SACK bitmap, bit i for @ack + 1 + i
 * @blocks: @nblocks SACK blocks beyond the bitmap (wire format, checked by
 *	the parser for shape), or NULL
 * @nblocks: how many
 * @pure: it came in a standalone ACK, not piggy-backed on data; only those
 *	count as duplicates without new SACK information
 * @held: the peer holds @ack itself too, for want of a receive buffer
 *	(USNIC_REL_F_HELD): SACKed like the others, so neither resent nor
 *	completed; only a sequence sent may be held
 * @now_ns: arrival time
 * @res: what changed; only filled for USNIC_REL_ACK_NEW and _DUP
 *
 * Only una < @ack <= next moves the window. An older @ack is a reordered ACK
 * and a newer one, or SACK bits or blocks past the last packet sent, were
 * never earned: both are ignored whole so a forged ACK cannot free unsent
 * slots. What the peer holds is remembered across ACKs (a scoreboard), so
 * a receiver that reports its ranges a few at a time describes the window.
 *
 * Return: the verdict, for the caller's counters.
 */
enum usnic_rel_ack_verdict
usnic_rel_txwin_ack_held(struct usnic_rel_txwin *w, u32 ack, u64 sack,
			 const void *blocks, u32 nblocks, bool pure, bool held,
			 u64 now_ns, struct usnic_rel_ack_result *res)
{
	const struct usnic_rel_tx_slot *last;
	u32 flight = w->next - w->una;
	bool had_flight = flight;
	bool retx;

	if (usnic_rel_seq_before(ack, w->una))
		return USNIC_REL_ACK_STALE;
	if (usnic_rel_seq_after(ack, w->next) || (held && ack == w->next) ||
	    (sack & ~usnic_rel_sack_valid_mask(w, ack)) ||
	    !usnic_rel_sack_blocks_valid(w, ack, blocks, nblocks))
		return USNIC_REL_ACK_FORGED;

	memset(res, 0, sizeof(*res));
	res->rtt_ns = -1;
	res->sack_rtt_ns = -1;
	res->freed_from = w->una;
	res->freed = ack - w->una;
	if (res->freed) {
		/*
		 * Karn: sample only if nothing acknowledged now was ever resent,
		 * and from the newest packet, unless a SACK had already
		 * covered it (then the ACK waited for a hole, not the path).
		 */
		last = &w->slots[usnic_rel_txwin_slot(w, ack - 1)];
		if (!last->sacked && usnic_rel_txwin_times_path(last) &&
		    now_ns >= last->sent_ns)
			res->rtt_ns = now_ns - last->sent_ns;
		retx = usnic_rel_txwin_free(w, ack, now_ns, &res->spurious);
		if (retx)
			res->rtt_ns = -1;
		w->dup_acks = 0;
		usnic_rel_cwnd_ack(&w->cc, res->freed, flight);
	}
	res->newly_sacked =
		usnic_rel_txwin_mark_sacked(w, sack, now_ns, res) +
		usnic_rel_txwin_mark_blocks(w, blocks, nblocks, now_ns, res);
	if (held && usnic_rel_txwin_sack_one(w, &w->slots[usnic_rel_txwin_slot(w, ack)],
					     now_ns, res)) {
		res->newly_sacked++;
		if (usnic_rel_seq_after(ack + 1, w->sack_end))
			w->sack_end = ack + 1;
	}
	if (held)
		w->una_held = true;
	if (res->rtt_ns < 0)
		res->rtt_ns = res->sack_rtt_ns;
	if (res->rtt_ns >= 0 &&
	    (!w->min_rtt_ns || (u64)res->rtt_ns < w->min_rtt_ns))
		w->min_rtt_ns = max_t(u64, res->rtt_ns, 1);
	/* Before the loss it may reveal: was there queueing? */
	if (res->rtt_ns >= 0)
		usnic_rel_cwnd_rtt(&w->cc, res->rtt_ns, now_ns);
	if (res->spurious)
		usnic_rel_txwin_reo_grow(w, res->spurious);
	/*
	 * The first sample stands in for SRTT (the caller feeds it to the
	 * estimator after): already the first flight, reordered, is judged
	 * by time. Not one under a microsecond, which the estimator takes
	 * for none.
	 */
	if (!w->srtt_ns && res->rtt_ns >= NSEC_PER_USEC)
		w->srtt_ns = res->rtt_ns;

	if (!res->freed && had_flight && (pure || res->newly_sacked))
		w->dup_acks++;

	if (w->in_recovery && usnic_rel_seq_after_eq(w->una, w->recover)) {
		w->in_recovery = false;
		usnic_rel_cwnd_recovered(&w->cc);
	}

	usnic_rel_txwin_detect(w, now_ns, res);
	return res->freed || res->newly_sacked ? USNIC_REL_ACK_NEW :
						 USNIC_REL_ACK_DUP;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_ack_held);

/* usnic_rel_txwin_ack_held() of an ACK whose own sequence is not held. */
enum usnic_rel_ack_verdict
usnic_rel_txwin_ack_blocks(struct usnic_rel_txwin *w, u32 ack, u64 sack,
			   const void *blocks, u32 nblocks, bool pure,
			   u64 now_ns, struct usnic_rel_ack_result *res)
{
	return usnic_rel_txwin_ack_held(w, ack, sack, blocks, nblocks, pure,
					false, now_ns, res);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_ack_blocks);

/* usnic_rel_txwin_ack_blocks() of an ACK without SACK blocks. */
enum usnic_rel_ack_verdict usnic_rel_txwin_ack(struct usnic_rel_txwin *w,
					       u32 ack, u64 sack, bool pure,
					       u64 now_ns,
					       struct usnic_rel_ack_result *res)
{
	return usnic_rel_txwin_ack_blocks(w, ack, sack, NULL, 0, pure, now_ns,
					  res);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_ack);

/**
 * usnic_rel_txwin_unhold() - forget that the peer holds the oldest packet
 * @w: the window
 *
 * A peer that held it (USNIC_REL_F_HELD) stopped answering: it goes again
 * at the next retransmission, like any packet not known received. The
 * peer, if it still holds it, takes it for a duplicate and says so again.
 */
void usnic_rel_txwin_unhold(struct usnic_rel_txwin *w)
{
	struct usnic_rel_tx_slot *s;

	if (!usnic_rel_txwin_una_held(w))
		return;
	w->una_held = false;
	s = &w->slots[usnic_rel_txwin_slot(w, w->una)];
	if (s->sacked) {
		s->sacked = false;
		w->nr_sacked--;
	}
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_unhold);

/**
 * usnic_rel_txwin_timeout() - the retransmit timer fired
 * @w: the window
 *
 * Every packet not known to be received becomes a candidate for
 * usnic_rel_txwin_next_retx() up to next, whatever an earlier recovery sent.
 * When the peer holds packets sent after the hole (SACKed), the path
 * delivers and only the holes were lost (a resend, or the tail of a burst,
 * with nothing sent after it for the time rule to compare): that is a loss
 * episode like one found by ACKs (RFC 6675's recovery), and the congestion
 * window is halved once for it rather than started over from one packet.
 * Without such evidence the window starts over from one.
 *
 * Return: true when this started a loss episode of the first kind (for the
 * caller's count of fast recoveries).
 */
bool usnic_rel_txwin_timeout(struct usnic_rel_txwin *w)
{
	bool started = false;

	w->epoch++;
	w->dup_acks = 0;
	w->in_recovery = w->una != w->next;
	w->recover = w->next;
	if (w->in_recovery && w->nr_sacked)
		started = usnic_rel_cwnd_fast_loss(&w->cc);
	else
		usnic_rel_cwnd_timeout(&w->cc);
	if (!w->in_recovery)
		usnic_rel_cwnd_recovered(&w->cc);
	return started;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_timeout);

/**
 * usnic_rel_txwin_timed_out() - the windows a retransmit timeout concerns
 * @w: the windows sharing the timer (a connection's channels)
 * @n: how many, at most BITS_PER_LONG
 * @now_ns: the time
 * @rto_ns: the timeout that expired
 *
 * The timer serves all the windows of a connection, and progress on one does
 * not restart it while another is overdue: when it fires, a window whose
 * oldest packet went out less than @rto_ns ago is making progress (its
 * packets are on their way or being acknowledged) and is left alone, its
 * congestion window included. When none is overdue (the RTO grew since the
 * timer was armed), all windows with packets in flight are, as before.
 *
 * Return: a bit for each window concerned.
 */
unsigned long usnic_rel_txwin_timed_out(const struct usnic_rel_txwin *const *w,
					unsigned int n, u64 now_ns, u64 rto_ns)
{
	unsigned long overdue = 0, busy = 0;
	unsigned int i;

	for (i = 0; i < n && i < BITS_PER_LONG; i++) {
		if (!usnic_rel_txwin_inflight(w[i]))
			continue;
		busy |= BIT(i);
		if (usnic_rel_txwin_overdue(w[i], now_ns, rto_ns))
			overdue |= BIT(i);
	}
	return overdue ? overdue : busy;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_timed_out);

/**
 * usnic_rel_txwin_reo_timeout() - the reorder timer fired
 * @w: the window
 * @now_ns: the time
 * @res: what was found (rack_lost, fast_retransmit, recovery_started)
 *
 * No ACK came since packets sent before a delivered one became candidates
 * (the tail of a burst, or a flight too short for more ACKs): those past
 * their time now are lost, as an ACK arriving now would have found.
 */
void usnic_rel_txwin_reo_timeout(struct usnic_rel_txwin *w, u64 now_ns,
				 struct usnic_rel_ack_result *res)
{
	memset(res, 0, sizeof(*res));
	res->rtt_ns = -1;
	res->sack_rtt_ns = -1;
	usnic_rel_txwin_detect(w, now_ns, res);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_reo_timeout);

/**
 * usnic_rel_txwin_lost_end() - end of the range known lost after a fast
 *	retransmit decision
 * @w: the window
 *
 * Return: una once there is an RTT sample (time marked what is lost; a
 * hole below a SACK may only be reordered); before it, one past the
 * highest SACKed sequence, or without SACKs (duplicate ACKs only) una + 1,
 * for only the first packet is known lost.
 */
u32 usnic_rel_txwin_lost_end(const struct usnic_rel_txwin *w)
{
	if (w->una == w->next || w->srtt_ns)
		return w->una;
	if (usnic_rel_seq_after(w->sack_end, w->una))
		return w->sack_end;
	return w->una + 1;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_lost_end);

/**
 * usnic_rel_txwin_next_retx() - find the next packet to retransmit
 * @w: the window
 * @seq: in: where to start (clamped to una); out: the packet
 * @end: stop before this sequence (usnic_rel_txwin_lost_end() for a fast
 *	retransmit, next after a timeout)
 *
 * Skips SACKed packets and those already sent again since the loss was
 * detected. Typical use: seq = una; while (next_retx(w, &seq, end)) {
 * resend; usnic_rel_txwin_retransmitted(); seq++; }
 *
 * Return: true with *@seq set, or false when none is left.
 */
bool usnic_rel_txwin_next_retx(const struct usnic_rel_txwin *w, u32 *seq,
			       u32 end)
{
	u32 s = *seq;

	if (usnic_rel_seq_before(s, w->una))
		s = w->una;
	if (usnic_rel_seq_after(end, w->next))
		end = w->next;
	for (; usnic_rel_seq_before(s, end); s++) {
		const struct usnic_rel_tx_slot *slot =
			&w->slots[usnic_rel_txwin_slot(w, s)];

		if (!slot->sacked && slot->epoch != w->epoch) {
			*seq = s;
			return true;
		}
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_next_retx);

/* Stamp in-flight packet @seq as sent at @now_ns; its slot, or NULL. */
static struct usnic_rel_tx_slot *
usnic_rel_txwin_stamp(struct usnic_rel_txwin *w, u32 seq, u64 now_ns)
{
	struct usnic_rel_tx_slot *s;

	if (!usnic_rel_seq_in_window(seq, w->una, w->next - w->una))
		return NULL;
	s = &w->slots[usnic_rel_txwin_slot(w, seq)];
	s->sent_ns = now_ns;
	s->cpu = raw_smp_processor_id();
	s->epoch = w->epoch;
	usnic_rel_txwin_unlose(w, s);
	return s;
}

/* Record that in-flight packet @seq was sent again at @now_ns. */
void usnic_rel_txwin_retransmitted(struct usnic_rel_txwin *w, u32 seq,
				   u64 now_ns)
{
	struct usnic_rel_tx_slot *s = usnic_rel_txwin_stamp(w, seq, now_ns);

	if (s && s->retx < U16_MAX)
		s->retx++;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_retransmitted);

/**
 * usnic_rel_txwin_mark_lost() - presume packets lost, taking them out of
 *	the pipe until they are sent again
 * @w: the window
 * @end: one past the last candidate (usnic_rel_txwin_lost_end() after ACK
 *	evidence, next after a timeout)
 * @sent_before: only packets last sent at or before this time (a timeout
 *	spares those that had no time to be acknowledged)
 *
 * Candidates are those usnic_rel_txwin_next_retx() would pick: not SACKed,
 * not sent again since the loss was detected.
 *
 * Return: how many were newly marked.
 */
u32 usnic_rel_txwin_mark_lost(struct usnic_rel_txwin *w, u32 end,
			      u64 sent_before)
{
	u32 seq = w->una, n = 0;

	while (usnic_rel_txwin_next_retx(w, &seq, end)) {
		struct usnic_rel_tx_slot *s =
			&w->slots[usnic_rel_txwin_slot(w, seq)];

		if (!s->lost && s->sent_ns <= sent_before) {
			s->lost = true;
			w->nr_lost++;
			n++;
		}
		seq++;
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_mark_lost);

/**
 * usnic_rel_txwin_next_lost() - the next packet presumed lost
 * @w: the window
 * @seq: in: where to start (clamped to una); out: the packet
 *
 * Return: true with *@seq set, or false when none is left.
 */
bool usnic_rel_txwin_next_lost(const struct usnic_rel_txwin *w, u32 *seq)
{
	u32 s = *seq;

	if (!w->nr_lost)
		return false;
	if (usnic_rel_seq_before(s, w->una))
		s = w->una;
	for (; usnic_rel_seq_before(s, w->next); s++) {
		if (w->slots[usnic_rel_txwin_slot(w, s)].lost) {
			*seq = s;
			return true;
		}
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_next_lost);

/*
 * Record that in-flight packet @seq left at @now_ns, late: it waited in the
 * window for the pairing (@held) or after this host failed to send it. Not
 * a retransmission, so its ACK still gives an RTT sample. A held packet
 * never left before: its wait for an ACK (stall_timeout_ms) starts now,
 * not while the handshake took its time.
 */
void usnic_rel_txwin_sent_late(struct usnic_rel_txwin *w, u32 seq, u64 now_ns,
			       bool held)
{
	struct usnic_rel_tx_slot *s = usnic_rel_txwin_stamp(w, seq, now_ns);

	if (s && held)
		s->first_ns = now_ns;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_sent_late);

/*
 * In-flight packet @seq never left this host (the send buffer was full):
 * out of the pipe until sent again, and that send is not a retransmission
 * (its ACK still gives an RTT sample). Only a packet neither held by the
 * peer nor already presumed lost; returns whether it was marked.
 */
bool usnic_rel_txwin_mark_local(struct usnic_rel_txwin *w, u32 seq)
{
	struct usnic_rel_tx_slot *s;

	if (!usnic_rel_seq_in_window(seq, w->una, w->next - w->una))
		return false;
	s = &w->slots[usnic_rel_txwin_slot(w, seq)];
	if (s->lost || s->sacked)
		return false;
	s->lost = true;
	s->local = true;
	w->nr_lost++;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_mark_local);

/* Whether in-flight packet @seq waits to be resent after a local drop. */
bool usnic_rel_txwin_lost_locally(const struct usnic_rel_txwin *w, u32 seq)
{
	return usnic_rel_seq_in_window(seq, w->una, w->next - w->una) &&
	       w->slots[usnic_rel_txwin_slot(w, seq)].local;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_txwin_lost_locally);
