/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: the receive window of one (peer, channel): in-order delivery,
 * duplicate detection and the acknowledgment to send back.
 */
#ifndef _USNIC_REL_RXWIN_H
#define _USNIC_REL_RXWIN_H

#include <linux/gfp.h>
#include <linux/types.h>

enum usnic_rel_rx_class {
	USNIC_REL_RX_IN_ORDER,		/* the next expected sequence */
	USNIC_REL_RX_OUT_OF_ORDER,	/* new, inside the window, after a gap */
	USNIC_REL_RX_DUPLICATE,		/* received before */
	USNIC_REL_RX_OUT_OF_WINDOW,	/* too far ahead, or ancient */
};

enum usnic_rel_ack_decision {
	USNIC_REL_ACK_DELAYED,	/* arm the delayed-ACK timer if idle */
	USNIC_REL_ACK_NOW,	/* send (or piggy-back) an ACK at once */
};

struct usnic_rel_rxwin {
	unsigned long *ooo;	/* bit seq & (cap - 1): held out of order */
	void **held;		/* the caller's packet of each bit, same index */
	u32 size;		/* accepted ahead of next: a power of two */
	u32 cap;		/* slots allocated: 0, or a power of two <= size */
	u32 peak;		/* furthest held ahead since the last shrink check */
	u32 next;		/* next in-order sequence: the cumulative ACK */
	u32 nr_ooo;		/* bits set in @ooo */
	u32 unacked;		/* in-order arrivals since the last ACK */
	u32 ack_every;
	u32 sack_from;		/* where the next ACK's SACK blocks start */
};

struct usnic_rel_rx_result {
	enum usnic_rel_rx_class class;
	enum usnic_rel_ack_decision ack;
	u32 deliver_from;	/* in order: deliver [from, from + count) */
	u32 deliver_count;	/* 0 unless class is IN_ORDER */
};

int usnic_rel_rxwin_init(struct usnic_rel_rxwin *w, u32 size, u32 isn,
			 u32 ack_every);
void usnic_rel_rxwin_destroy(struct usnic_rel_rxwin *w);
u32 usnic_rel_rxwin_grow_cap(const struct usnic_rel_rxwin *w, u32 seq);
u32 usnic_rel_rxwin_shrink_cap(struct usnic_rel_rxwin *w);
int usnic_rel_rxwin_arrays_alloc(u32 cap, unsigned long **ooo, void ***held,
				 gfp_t gfp);
void usnic_rel_rxwin_arrays_free(unsigned long *ooo, void **held);
int usnic_rel_rxwin_resize(struct usnic_rel_rxwin *w, u32 cap,
			   unsigned long **ooo, void ***held);
int usnic_rel_rxwin_grow(struct usnic_rel_rxwin *w, u32 seq, gfp_t gfp);
size_t usnic_rel_rxwin_bytes(u32 cap);
void usnic_rel_rxwin_reset(struct usnic_rel_rxwin *w, u32 isn);
enum usnic_rel_rx_class usnic_rel_rxwin_classify(const struct usnic_rel_rxwin *w,
						 u32 seq);
void usnic_rel_rxwin_receive(struct usnic_rel_rxwin *w, u32 seq, bool ack_req,
			     struct usnic_rel_rx_result *res);
void usnic_rel_rxwin_build_ack_from(const struct usnic_rel_rxwin *w, u32 from,
				    u32 *ack, u64 *sack);
u32 usnic_rel_rxwin_sack_blocks_from(struct usnic_rel_rxwin *w, u32 from,
				     void *blocks, u32 max);
void usnic_rel_rxwin_ack_sent(struct usnic_rel_rxwin *w);

/* Index of @seq's slot. The window has slots (@cap > 0). */
static inline u32 usnic_rel_rxwin_slot(const struct usnic_rel_rxwin *w,
				       u32 seq)
{
	return seq & (w->cap - 1);
}

/*
 * An out-of-order @seq can be held in the slots allocated: if not, the
 * caller grows the window (usnic_rel_rxwin_grow_cap()) or drops the packet
 * unseen before usnic_rel_rxwin_receive().
 */
static inline bool usnic_rel_rxwin_fits(const struct usnic_rel_rxwin *w,
					u32 seq)
{
	return seq - w->next < w->cap;
}

/* Keep the caller's packet for @seq, just taken out of order. */
static inline void usnic_rel_rxwin_set_held(struct usnic_rel_rxwin *w, u32 seq,
					    void *pkt)
{
	w->held[usnic_rel_rxwin_slot(w, seq)] = pkt;
}

/* Take back the caller's packet for @seq, delivered in order now. */
static inline void *usnic_rel_rxwin_take_held(struct usnic_rel_rxwin *w,
					      u32 seq)
{
	void **p = &w->held[usnic_rel_rxwin_slot(w, seq)];
	void *pkt = *p;

	*p = NULL;
	return pkt;
}

#endif /* _USNIC_REL_RXWIN_H */
