// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: receive window. Packets in [next, next + size) are accepted; the
 * ones after a gap are held (the caller keeps them, this file keeps one bit
 * each) until the gap fills, then delivered in order.
 *
 * Not locked: the caller serialises all calls on one window.
 */
#include <linux/bitmap.h>
#include <linux/errno.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <kunit/visibility.h>
#include "rxwin.h"
#include "seq.h"
#include "txwin.h"
#include "wire.h"

/**
 * usnic_rel_rxwin_init() - set up an empty receive window, with no slots yet
 * @w: the window
 * @size: a power of two up to USNIC_REL_MAX_WINDOW
 * @isn: first sequence number expected
 * @ack_every: acknowledge at least every this many in-order packets (>= 1)
 *
 * Return: 0 or -EINVAL.
 */
int usnic_rel_rxwin_init(struct usnic_rel_rxwin *w, u32 size, u32 isn,
			 u32 ack_every)
{
	memset(w, 0, sizeof(*w));
	if (!is_power_of_2(size) || size > USNIC_REL_MAX_WINDOW || !ack_every)
		return -EINVAL;
	w->size = size;
	w->next = isn;
	w->ack_every = ack_every;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_init);

/* Bytes of slot arrays a window of @cap slots holds. */
size_t usnic_rel_rxwin_bytes(u32 cap)
{
	return cap ? BITS_TO_LONGS(cap) * sizeof(long) + cap * sizeof(void *) : 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_bytes);

/**
 * usnic_rel_rxwin_arrays_alloc() - allocate slot arrays for a resize
 * @cap: slots, a power of two
 * @ooo: set to the bitmap
 * @held: set to the caller's packet array
 * @gfp: allocation flags; only a context that may sleep uses vmalloc
 *
 * Return: 0 or -ENOMEM.
 */
int usnic_rel_rxwin_arrays_alloc(u32 cap, unsigned long **ooo, void ***held,
				 gfp_t gfp)
{
	*ooo = bitmap_zalloc(cap, gfp);
	if (gfpflags_allow_blocking(gfp))
		*held = kvcalloc(cap, sizeof(**held), gfp);
	else
		*held = kcalloc(cap, sizeof(**held), gfp);
	if (*ooo && *held)
		return 0;
	usnic_rel_rxwin_arrays_free(*ooo, *held);
	*ooo = NULL;
	*held = NULL;
	return -ENOMEM;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_arrays_alloc);

void usnic_rel_rxwin_arrays_free(unsigned long *ooo, void **held)
{
	bitmap_free(ooo);
	kvfree(held);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_arrays_free);

/**
 * usnic_rel_rxwin_grow_cap() - slots needed to hold out-of-order @seq
 * @w: the window
 * @seq: a sequence classified USNIC_REL_RX_OUT_OF_ORDER that does not fit
 *
 * Return: the smallest power of two holding it, at least double the slots
 * now and USNIC_REL_MIN_WINDOW, at most @size; 0 if it fits already or is
 * not in the window at all.
 */
u32 usnic_rel_rxwin_grow_cap(const struct usnic_rel_rxwin *w, u32 seq)
{
	u32 ahead = seq - w->next, cap;

	if (ahead < w->cap || ahead >= w->size)
		return 0;
	cap = max_t(u32, USNIC_REL_MIN_WINDOW, w->cap * 2);
	cap = max_t(u32, cap, roundup_pow_of_two(ahead + 1));
	return min(cap, w->size);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_grow_cap);

/* One past the furthest sequence held, as a distance from next. */
static u32 usnic_rel_rxwin_held_end(const struct usnic_rel_rxwin *w)
{
	u32 i, end = 0;

	if (!w->nr_ooo)
		return 0;
	for (i = 0; i < w->cap; i++)
		if (test_bit(usnic_rel_rxwin_slot(w, w->next + i), w->ooo))
			end = i + 1;
	return end;
}

/**
 * usnic_rel_rxwin_shrink_cap() - slots the window needs, looking back
 * @w: the window
 *
 * Called periodically; starts a new period. A window that held nothing for
 * a whole period needs no slots; otherwise twice the furthest it held
 * ahead in the period, and at least what it holds now. Never more than it
 * has.
 *
 * Return: the slots to keep: @cap for no change, less to shrink, 0 to free.
 */
u32 usnic_rel_rxwin_shrink_cap(struct usnic_rel_rxwin *w)
{
	u32 end = usnic_rel_rxwin_held_end(w);
	u32 peak = max(w->peak, end), want;

	w->peak = end;
	if (!peak)
		return 0;
	want = max_t(u32, USNIC_REL_MIN_WINDOW, roundup_pow_of_two(2 * peak));
	return min(want, w->cap);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_shrink_cap);

/**
 * usnic_rel_rxwin_resize() - move the window onto arrays of @cap slots
 * @w: the window
 * @cap: 0 (to free: nothing may be held) or a power of two up to @size
 * @ooo: in: the new zeroed bitmap (NULL for 0); out: the old one
 * @held: in: the new zeroed packet array (NULL for 0); out: the old one
 *
 * Every held sequence, its bit and its packet, moves to its index in the
 * new arrays. The caller frees what comes back in @ooo and @held in both
 * cases.
 *
 * Return: 0, -EINVAL for a bad @cap, or -EBUSY when a held sequence would
 * not fit (the arrays are then left as they were).
 */
int usnic_rel_rxwin_resize(struct usnic_rel_rxwin *w, u32 cap,
			   unsigned long **ooo, void ***held)
{
	unsigned long *old_ooo = w->ooo;
	void **old_held = w->held;
	u32 i;

	if (cap > w->size || (cap && !is_power_of_2(cap)) ||
	    !cap != !*ooo || !cap != !*held)
		return -EINVAL;
	if (usnic_rel_rxwin_held_end(w) > cap)
		return -EBUSY;
	for (i = 0; w->nr_ooo && i < w->cap; i++) {
		u32 seq = w->next + i;
		u32 from = seq & (w->cap - 1), to = seq & (cap - 1);

		if (!test_bit(from, old_ooo))
			continue;
		__set_bit(to, *ooo);
		(*held)[to] = old_held[from];
	}
	w->ooo = *ooo;
	w->held = *held;
	w->cap = cap;
	*ooo = old_ooo;
	*held = old_held;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_resize);

/**
 * usnic_rel_rxwin_grow() - allocate the slots to hold @seq, in one go
 * @w: the window
 * @seq: a sequence classified USNIC_REL_RX_OUT_OF_ORDER
 * @gfp: allocation flags
 *
 * Return: 0 (it fits now, or growing cannot help) or -ENOMEM.
 */
int usnic_rel_rxwin_grow(struct usnic_rel_rxwin *w, u32 seq, gfp_t gfp)
{
	u32 cap = usnic_rel_rxwin_grow_cap(w, seq);
	unsigned long *ooo;
	void **held;

	if (!cap)
		return 0;
	if (usnic_rel_rxwin_arrays_alloc(cap, &ooo, &held, gfp))
		return -ENOMEM;
	/* Cannot fail: cap is valid and above everything held. */
	WARN_ON_ONCE(usnic_rel_rxwin_resize(w, cap, &ooo, &held));
	usnic_rel_rxwin_arrays_free(ooo, held);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_grow);

void usnic_rel_rxwin_destroy(struct usnic_rel_rxwin *w)
{
	usnic_rel_rxwin_arrays_free(w->ooo, w->held);
	w->ooo = NULL;
	w->held = NULL;
	w->cap = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_destroy);

/*
 * The peer restarted: forget everything it sent before. The caller freed
 * its held packets; the arrays stay, emptied.
 */
void usnic_rel_rxwin_reset(struct usnic_rel_rxwin *w, u32 isn)
{
	if (w->cap) {
		bitmap_zero(w->ooo, w->cap);
		memset(w->held, 0, w->cap * sizeof(*w->held));
	}
	w->next = isn;
	w->nr_ooo = 0;
	w->unacked = 0;
	w->peak = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_reset);

/**
 * usnic_rel_rxwin_classify() - what an arriving sequence number is
 * @w: the window
 * @seq: the packet's sequence number
 *
 * Does not change the window, so the caller can decide whether it has room to
 * hold an out-of-order packet before usnic_rel_rxwin_receive().
 *
 * Return: the class.
 */
enum usnic_rel_rx_class usnic_rel_rxwin_classify(const struct usnic_rel_rxwin *w,
						 u32 seq)
{
	u32 ahead = seq - w->next;

	if (!ahead)
		return USNIC_REL_RX_IN_ORDER;
	/* Beyond the slots allocated nothing is held yet. */
	if (ahead < w->cap)
		return test_bit(usnic_rel_rxwin_slot(w, seq), w->ooo) ?
		       USNIC_REL_RX_DUPLICATE : USNIC_REL_RX_OUT_OF_ORDER;
	if (ahead < w->size)
		return USNIC_REL_RX_OUT_OF_ORDER;
	/*
	 * Behind next: delivered already. A sender never resends below its
	 * una, which is at most a window behind our next.
	 */
	if (usnic_rel_seq_before(seq, w->next) && w->next - seq <= w->size)
		return USNIC_REL_RX_DUPLICATE;
	return USNIC_REL_RX_OUT_OF_WINDOW;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_classify);

/**
 * usnic_rel_rxwin_receive() - account for an arriving packet
 * @w: the window
 * @seq: its sequence number
 * @ack_req: the sender asked for an immediate ACK (USNIC_REL_F_ACK_REQ)
 * @res: the class, what became deliverable in order, and the ACK decision
 *
 * An in-order packet is deliverable with every held packet that follows it
 * without a gap (usnic_rel_rxwin_take_held() gives them back); an
 * out-of-order one must fit the slots (usnic_rel_rxwin_fits()) and be kept
 * with usnic_rel_rxwin_set_held(); duplicates and out-of-window packets are
 * dropped.
 *
 * ACK at once when something looks wrong to the sender (a duplicate means
 * our ACK was lost, a gap means its packet was), when a gap just filled so
 * the sender learns quickly, when asked, or every @ack_every packets;
 * otherwise let the delayed-ACK timer coalesce.
 */
void usnic_rel_rxwin_receive(struct usnic_rel_rxwin *w, u32 seq, bool ack_req,
			     struct usnic_rel_rx_result *res)
{
	memset(res, 0, sizeof(*res));
	res->class = usnic_rel_rxwin_classify(w, seq);
	res->ack = USNIC_REL_ACK_NOW;

	switch (res->class) {
	case USNIC_REL_RX_IN_ORDER:
		res->deliver_from = seq;
		res->deliver_count = 1;
		w->next++;
		while (w->nr_ooo &&
		       __test_and_clear_bit(usnic_rel_rxwin_slot(w, w->next),
					    w->ooo)) {
			w->nr_ooo--;
			w->next++;
			res->deliver_count++;
		}
		w->unacked++;
		if (res->deliver_count == 1 && !w->nr_ooo && !ack_req &&
		    w->unacked < w->ack_every)
			res->ack = USNIC_REL_ACK_DELAYED;
		break;
	case USNIC_REL_RX_OUT_OF_ORDER:
		if (WARN_ON_ONCE(!usnic_rel_rxwin_fits(w, seq))) {
			/* The caller's bug: not taken, so never acknowledged. */
			res->class = USNIC_REL_RX_OUT_OF_WINDOW;
			break;
		}
		__set_bit(usnic_rel_rxwin_slot(w, seq), w->ooo);
		w->nr_ooo++;
		if (seq - w->next >= w->peak)
			w->peak = seq - w->next + 1;
		break;
	case USNIC_REL_RX_DUPLICATE:
	case USNIC_REL_RX_OUT_OF_WINDOW:
		break;
	}
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_receive);

/*
 * Was @from + @off received, @from being the first sequence not delivered?
 * Everything in [@from, next) was (it waits for receive buffers); past next,
 * what is held out of order.
 */
static bool usnic_rel_rxwin_has(const struct usnic_rel_rxwin *w, u32 from,
				u32 off)
{
	u32 ahead = from + off - w->next;

	if (off < w->next - from)
		return true;
	return ahead && ahead < w->cap && w->nr_ooo &&
	       test_bit(usnic_rel_rxwin_slot(w, from + off), w->ooo);
}

/*
 * @from as the caller gives it, or next when it is not within a window
 * behind next (the caller's bug: then nothing waits).
 */
static u32 usnic_rel_rxwin_from(const struct usnic_rel_rxwin *w, u32 from)
{
	if (WARN_ON_ONCE(w->next - from > w->size))
		return w->next;
	return from;
}

/**
 * usnic_rel_rxwin_build_ack_from() - the acknowledgment to send now
 * @w: the window
 * @from: the first sequence not delivered yet: next, or before it when
 *	packets received in order wait for receive buffers. Those are not
 *	acknowledged (the sender completes a send only once delivered) but
 *	SACKed, so that the sender does not send them again.
 * @ack: set to the cumulative ACK, @from
 * @sack: set to the SACK bitmap: bit i for @ack + 1 + i received
 */
void usnic_rel_rxwin_build_ack_from(const struct usnic_rel_rxwin *w, u32 from,
				    u32 *ack, u64 *sack)
{
	u64 bits = 0;
	u32 i;

	from = usnic_rel_rxwin_from(w, from);
	/* Nothing waits and nothing is held: the common case, no walk. */
	if (from == w->next && !w->nr_ooo)
		i = USNIC_REL_WIRE_SACK_BITS;
	else
		i = 0;
	for (; i < USNIC_REL_WIRE_SACK_BITS; i++)
		if (usnic_rel_rxwin_has(w, from, i + 1))
			bits |= 1ULL << i;
	*ack = from;
	*sack = bits;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_build_ack_from);

/**
 * usnic_rel_rxwin_sack_blocks_from() - the SACK blocks of a standalone ACK
 * @w: the window
 * @from: its cumulative ACK (usnic_rel_rxwin_build_ack_from())
 * @blocks: room for @max blocks, written in wire format
 * @max: at most USNIC_REL_WIRE_SACK_BLOCKS
 *
 * The ranges received beyond the ACK's bitmap, relative to @from. When more
 * are held than fit, the list starts where the previous one stopped, so
 * that a few ACKs tell the sender about the whole window.
 *
 * Return: how many blocks were written.
 */
u32 usnic_rel_rxwin_sack_blocks_from(struct usnic_rel_rxwin *w, u32 from,
				     void *blocks, u32 max)
{
	u32 first = USNIC_REL_WIRE_SACK_BITS + 1, n = 0, off, start, reach;

	from = usnic_rel_rxwin_from(w, from);
	reach = min_t(u32, w->next - from + w->cap, USNIC_REL_WIRE_SACK_REACH);
	if ((!w->nr_ooo && w->next - from <= first) || reach <= first)
		return 0;
	off = w->sack_from - from;
	if (off < first || off >= reach)
		off = first;
	while (off < reach && n < max) {
		if (!usnic_rel_rxwin_has(w, from, off)) {
			off++;
			continue;
		}
		start = off;
		while (off < reach && usnic_rel_rxwin_has(w, from, off))
			off++;
		usnic_rel_sack_block_put(blocks, n++, start, off - start);
	}
	/* Stopped for room: go on from here next time; else from the start. */
	w->sack_from = from + (off < reach ? off : first);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_sack_blocks_from);

/* An ACK (standalone or piggy-backed) left: restart the coalescing count. */
void usnic_rel_rxwin_ack_sent(struct usnic_rel_rxwin *w)
{
	w->unacked = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_ack_sent);
