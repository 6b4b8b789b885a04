/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: fault injection on an endpoint's transmit path, set through
 * debugfs (ep<N>/fault_drop, fault_duplicate, fault_reorder, in parts per
 * million) so that loss recovery can be tested without netem, and
 * allocation failures on the send path (ep<N>/fault_nomem_every) and in
 * receive window growth (ep<N>/fault_window_nomem_next) and send window
 * growth (ep<N>/fault_tx_window_nomem_next) and transmit skbs
 * (ep<N>/fault_xmit_nomem_next, fault_gso_nomem_next), and a registration
 * held part-way through pinning (ep<N>/fault_pin_hold).
 */
#ifndef _USNIC_REL_FAULT_H
#define _USNIC_REL_FAULT_H

#include <linux/atomic.h>
#include <linux/types.h>

#define USNIC_REL_FAULT_PPM_MAX	1000000

struct usnic_rel_ep;
struct usnic_rel_fault_held;
struct usnic_rel_peer;

struct usnic_rel_fault {
	u32 drop_ppm;			/* READ_ONCE: written by debugfs */
	u32 duplicate_ppm;
	u32 reorder_ppm;
	atomic_t window_nomem_next;	/* so many receive window growths fail */
	atomic_t tx_window_nomem_next;	/* so many send window growths fail */
	atomic_t xmit_nomem_next;	/* so many transmit skbs fail */
	atomic_t gso_nomem_next;	/* so many GSO run skbs fail */
	struct usnic_rel_fault_held *held;	/* sent after the next one (tx_lock) */
	u32 nomem_every;		/* fail every Nth send-path allocation */
	atomic_t nomem_seen;		/* allocations counted for nomem_every */
	atomic64_t nomem;		/* allocations failed */
	atomic64_t dropped;
	atomic64_t duplicated;
	atomic64_t reordered;
	atomic64_t window_nomem;
	atomic64_t tx_window_nomem;
	atomic64_t xmit_nomem;
	atomic64_t gso_nomem;
	u32 pin_hold;			/* REG_MR waits after its first pages */
	atomic_t pin_held;		/* registrations waiting on pin_hold */
};

int usnic_rel_fault_send(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			 const void *buf, size_t len);
void usnic_rel_fault_flush(struct usnic_rel_ep *ep);
bool usnic_rel_fault_tx_configured(struct usnic_rel_ep *ep);
bool usnic_rel_fault_window_nomem(struct usnic_rel_ep *ep);
bool usnic_rel_fault_tx_window_nomem(struct usnic_rel_ep *ep);
bool usnic_rel_fault_nomem(struct usnic_rel_ep *ep);
bool usnic_rel_fault_xmit_nomem(struct usnic_rel_ep *ep, bool gso);
int usnic_rel_fault_pin_wait(struct usnic_rel_ep *ep);
void usnic_rel_fault_debugfs_add(struct usnic_rel_ep *ep);

#endif /* _USNIC_REL_FAULT_H */
