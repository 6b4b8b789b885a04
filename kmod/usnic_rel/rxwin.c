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
#include "../../include/uapi/usnic_rel_wire.h"

/**
 * usnic_rel_rxwin_init() - set up an empty receive window
 * @w: the window
 * @size: a power of two up to USNIC_REL_MAX_WINDOW
 * @isn: first sequence number expected
 * @ack_every: acknowledge at least every this many in-order packets (>= 1)
 * @gfp: allocation flags
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int usnic_rel_rxwin_init(struct usnic_rel_rxwin *w, u32 size, u32 isn,
			 u32 ack_every, gfp_t gfp)
{
	memset(w, 0, sizeof(*w));
	if (!is_power_of_2(size) || size > USNIC_REL_MAX_WINDOW || !ack_every)
		return -EINVAL;
	w->ooo = bitmap_zalloc(size, gfp);
	if (!w->ooo)
		return -ENOMEM;
	w->size = size;
	w->next = isn;
	w->ack_every = ack_every;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_init);

void usnic_rel_rxwin_destroy(struct usnic_rel_rxwin *w)
{
	bitmap_free(w->ooo);
	w->ooo = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_destroy);

/* The peer restarted: forget everything it sent before. */
void usnic_rel_rxwin_reset(struct usnic_rel_rxwin *w, u32 isn)
{
	bitmap_zero(w->ooo, w->size);
	w->next = isn;
	w->nr_ooo = 0;
	w->unacked = 0;
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
	if (ahead < w->size)
		return test_bit(usnic_rel_rxwin_slot(w, seq), w->ooo) ?
		       USNIC_REL_RX_DUPLICATE : USNIC_REL_RX_OUT_OF_ORDER;
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
 * without a gap; an out-of-order one must be held by the caller in slot
 * usnic_rel_rxwin_slot(); duplicates and out-of-window packets are dropped.
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
		__set_bit(usnic_rel_rxwin_slot(w, seq), w->ooo);
		w->nr_ooo++;
		break;
	case USNIC_REL_RX_DUPLICATE:
	case USNIC_REL_RX_OUT_OF_WINDOW:
		break;
	}
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_receive);

/**
 * usnic_rel_rxwin_build_ack() - the acknowledgment to send now
 * @w: the window
 * @ack: set to the cumulative ACK
 * @sack: set to the SACK bitmap: bit i for @ack + 1 + i held
 */
void usnic_rel_rxwin_build_ack(const struct usnic_rel_rxwin *w, u32 *ack,
			       u64 *sack)
{
	u32 i, n = min_t(u32, USNIC_REL_WIRE_SACK_BITS, w->size - 1);
	u64 bits = 0;

	for (i = 0; w->nr_ooo && i < n; i++)
		if (test_bit(usnic_rel_rxwin_slot(w, w->next + 1 + i), w->ooo))
			bits |= 1ULL << i;
	*ack = w->next;
	*sack = bits;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_build_ack);

/* An ACK (standalone or piggy-backed) left: restart the coalescing count. */
void usnic_rel_rxwin_ack_sent(struct usnic_rel_rxwin *w)
{
	w->unacked = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rxwin_ack_sent);
