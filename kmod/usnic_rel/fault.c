// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: fault injection. Every packet an endpoint transmits passes
 * through usnic_rel_fault_send(), which may drop it, send it twice, or hold
 * it back and send it right after the next one (a reordering). A held packet
 * never waits long: the next transmission of the endpoint sends it, and so
 * does the endpoint's teardown. Rates are in parts per million; each file
 * refuses values above 1000000 with -EINVAL. ep<N>/fault_nomem_every = N
 * makes every Nth allocation of the send path (a packet, a parked send, an
 * answer to a one-sided request, a send window's slots) fail as if memory
 * were short (0: never).
 * ep<N>/fault_pin_hold = 1 stops every REG_MR for the endpoint after it
 * pinned its first pages, until the knob is set back to 0 (or the caller
 * gets a fatal signal), so that a test can show what does not wait behind
 * pinning; ep<N>/fault's pin_held says how many wait.
 * On the receive side, fault_window_nomem_next = N makes the next N growths
 * of a receive window fail as if memory ran out (it reads back how many are
 * left): exactly N, so that a test knows what it caused;
 * fault_tx_window_nomem_next = N does the same to the growths of the
 * endpoint's send windows. fault_xmit_nomem_next = N fails the next N
 * skb allocations of the transmit path (xmit.c) and fault_gso_nomem_next
 * those of GSO runs only, as a full machine would: the packets never
 * leave the host. ep<N>/fault counts what was done. Dropped,
 * duplicated and reordered packets count in tx_packets once.
 */
#include <linux/debugfs.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "usnic_rel.h"

/* Registrations waiting on a fault_pin_hold knob, of any endpoint. */
static DECLARE_WAIT_QUEUE_HEAD(usnic_rel_fault_pin_wq);

struct usnic_rel_fault_held {
	union usnic_rel_sockaddr to;
	size_t len;
	u8 data[];
};

static bool usnic_rel_fault_roll(u32 ppm)
{
	return ppm && get_random_u32_below(USNIC_REL_FAULT_PPM_MAX) < ppm;
}

/*
 * Keep a copy of the packet to send after the next one; false if no memory.
 * Never sleeps, so that any transmit path may inject faults.
 */
static bool usnic_rel_fault_hold(struct usnic_rel_fault *f,
				 const union usnic_rel_sockaddr *to,
				 const void *buf, size_t len)
{
	struct usnic_rel_fault_held *h;

	h = kmalloc(struct_size(h, data, len), GFP_NOWAIT | __GFP_NOWARN);
	if (!h)
		return false;
	h->to = *to;
	h->len = len;
	memcpy(h->data, buf, len);
	f->held = h;
	atomic64_inc(&f->reordered);
	return true;
}

/* Send the held packet, if any. Caller holds ep->tx_lock. */
void usnic_rel_fault_flush(struct usnic_rel_ep *ep)
{
	struct usnic_rel_fault_held *h = ep->fault.held;

	lockdep_assert_held(&ep->tx_lock);
	if (!h)
		return;
	ep->fault.held = NULL;
	/*
	 * Lost like any packet if the socket is gone or full. Its peer may be
	 * gone too: the route is looked up for this packet alone.
	 */
	if (ep->sock)
		usnic_rel_socket_send(ep, NULL, &h->to, h->data, h->len);
	kfree(h);
}

/*
 * Transmit one packet, or pretend to. Returns what the socket returned for
 * it, or 0 when the packet was dropped or held. Caller holds ep->tx_lock.
 */
int usnic_rel_fault_send(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			 const void *buf, size_t len)
{
	const union usnic_rel_sockaddr *to = &peer->addr;
	struct usnic_rel_fault *f = &ep->fault;
	int ret;

	if (usnic_rel_fault_roll(READ_ONCE(f->drop_ppm))) {
		atomic64_inc(&f->dropped);
		usnic_rel_fault_flush(ep);
		return 0;
	}
	if (!f->held && usnic_rel_fault_roll(READ_ONCE(f->reorder_ppm)) &&
	    usnic_rel_fault_hold(f, to, buf, len))
		return 0;
	ret = usnic_rel_socket_send(ep, &peer->route, to, buf, len);
	if (!ret && usnic_rel_fault_roll(READ_ONCE(f->duplicate_ppm)) &&
	    !usnic_rel_socket_send(ep, &peer->route, to, buf, len))
		atomic64_inc(&f->duplicated);
	usnic_rel_fault_flush(ep);
	return ret;
}

/*
 * Whether any fault is set up on the send path. The answers that could
 * leave from the receive softirq go through the work item instead while
 * one is, so that every fault applies, in order, under tx_lock.
 */
bool usnic_rel_fault_tx_configured(struct usnic_rel_ep *ep)
{
	struct usnic_rel_fault *f = &ep->fault;

	return READ_ONCE(f->drop_ppm) || READ_ONCE(f->duplicate_ppm) ||
	       READ_ONCE(f->reorder_ppm) || READ_ONCE(f->held) ||
	       READ_ONCE(f->nomem_every) ||
	       atomic_read(&f->tx_window_nomem_next) > 0 ||
	       atomic_read(&f->xmit_nomem_next) > 0 ||
	       atomic_read(&f->gso_nomem_next) > 0;
}

/* Softirq: should this receive window growth fail? */
bool usnic_rel_fault_window_nomem(struct usnic_rel_ep *ep)
{
	struct usnic_rel_fault *f = &ep->fault;

	if (atomic_dec_if_positive(&f->window_nomem_next) < 0)
		return false;
	atomic64_inc(&f->window_nomem);
	return true;
}

/* Process context, under tx_lock: should this send window growth fail? */
bool usnic_rel_fault_tx_window_nomem(struct usnic_rel_ep *ep)
{
	struct usnic_rel_fault *f = &ep->fault;

	if (atomic_dec_if_positive(&f->tx_window_nomem_next) < 0)
		return false;
	atomic64_inc(&f->tx_window_nomem);
	return true;
}

/* Under tx_lock: should this skb (a GSO run's if @gso) fail to allocate? */
bool usnic_rel_fault_xmit_nomem(struct usnic_rel_ep *ep, bool gso)
{
	struct usnic_rel_fault *f = &ep->fault;

	if (gso && atomic_dec_if_positive(&f->gso_nomem_next) >= 0) {
		atomic64_inc(&f->gso_nomem);
		return true;
	}
	if (atomic_dec_if_positive(&f->xmit_nomem_next) < 0)
		return false;
	atomic64_inc(&f->xmit_nomem);
	return true;
}

/* True when the send path's next allocation is to fail. */
bool usnic_rel_fault_nomem(struct usnic_rel_ep *ep)
{
	struct usnic_rel_fault *f = &ep->fault;
	u32 every = READ_ONCE(f->nomem_every);

	if (!every || (u32)atomic_inc_return(&f->nomem_seen) % every)
		return false;
	atomic64_inc(&f->nomem);
	return true;
}

/*
 * REG_MR for @ep pinned its first pages: wait here while fault_pin_hold is
 * set. Returns 0, or -EINTR on a fatal signal. May sleep.
 */
int usnic_rel_fault_pin_wait(struct usnic_rel_ep *ep)
{
	struct usnic_rel_fault *f = &ep->fault;
	int ret;

	if (!READ_ONCE(f->pin_hold))
		return 0;
	atomic_inc(&f->pin_held);
	ret = wait_event_killable(usnic_rel_fault_pin_wq,
				  !READ_ONCE(f->pin_hold));
	atomic_dec(&f->pin_held);
	return ret ? -EINTR : 0;
}

static int usnic_rel_fault_pin_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	wake_up_all(&usnic_rel_fault_pin_wq);
	return 0;
}

static int usnic_rel_fault_every_set(void *data, u64 val)
{
	if (val > U32_MAX)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	return 0;
}

static int usnic_rel_fault_rate_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(u32 *)data);
	return 0;
}

static int usnic_rel_fault_rate_set(void *data, u64 val)
{
	if (val > USNIC_REL_FAULT_PPM_MAX)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	return 0;
}

static int usnic_rel_fault_next_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int usnic_rel_fault_next_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(usnic_rel_fault_rate_fops, usnic_rel_fault_rate_get,
			 usnic_rel_fault_rate_set, "%llu\n");
DEFINE_DEBUGFS_ATTRIBUTE(usnic_rel_fault_every_fops, usnic_rel_fault_rate_get,
			 usnic_rel_fault_every_set, "%llu\n");
DEFINE_DEBUGFS_ATTRIBUTE(usnic_rel_fault_pin_fops, usnic_rel_fault_rate_get,
			 usnic_rel_fault_pin_set, "%llu\n");
DEFINE_DEBUGFS_ATTRIBUTE(usnic_rel_fault_next_fops, usnic_rel_fault_next_get,
			 usnic_rel_fault_next_set, "%llu\n");

static int usnic_rel_fault_show(struct seq_file *s, void *unused)
{
	struct usnic_rel_fault *f = s->private;

	seq_printf(s, "dropped %lld\nduplicated %lld\nreordered %lld\nnomem %lld\nwindow_nomem %lld\ntx_window_nomem %lld\nxmit_nomem %lld\ngso_nomem %lld\npin_held %d\n",
		   (long long)atomic64_read(&f->dropped),
		   (long long)atomic64_read(&f->duplicated),
		   (long long)atomic64_read(&f->reordered),
		   (long long)atomic64_read(&f->nomem),
		   (long long)atomic64_read(&f->window_nomem),
		   (long long)atomic64_read(&f->tx_window_nomem),
		   (long long)atomic64_read(&f->xmit_nomem),
		   (long long)atomic64_read(&f->gso_nomem),
		   atomic_read(&f->pin_held));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(usnic_rel_fault);

/* Removed with ep->debugfs, before the endpoint can be freed. */
void usnic_rel_fault_debugfs_add(struct usnic_rel_ep *ep)
{
	struct usnic_rel_fault *f = &ep->fault;

	debugfs_create_file_unsafe("fault_drop", 0600, ep->debugfs,
				   &f->drop_ppm, &usnic_rel_fault_rate_fops);
	debugfs_create_file_unsafe("fault_duplicate", 0600, ep->debugfs,
				   &f->duplicate_ppm, &usnic_rel_fault_rate_fops);
	debugfs_create_file_unsafe("fault_reorder", 0600, ep->debugfs,
				   &f->reorder_ppm, &usnic_rel_fault_rate_fops);
	debugfs_create_file_unsafe("fault_window_nomem_next", 0600, ep->debugfs,
				   &f->window_nomem_next,
				   &usnic_rel_fault_next_fops);
	debugfs_create_file_unsafe("fault_tx_window_nomem_next", 0600,
				   ep->debugfs, &f->tx_window_nomem_next,
				   &usnic_rel_fault_next_fops);
	debugfs_create_file_unsafe("fault_xmit_nomem_next", 0600, ep->debugfs,
				   &f->xmit_nomem_next,
				   &usnic_rel_fault_next_fops);
	debugfs_create_file_unsafe("fault_gso_nomem_next", 0600, ep->debugfs,
				   &f->gso_nomem_next,
				   &usnic_rel_fault_next_fops);
	debugfs_create_file_unsafe("fault_nomem_every", 0600, ep->debugfs,
				   &f->nomem_every, &usnic_rel_fault_every_fops);
	debugfs_create_file_unsafe("fault_pin_hold", 0600, ep->debugfs,
				   &f->pin_hold, &usnic_rel_fault_pin_fops);
	debugfs_create_file("fault", 0444, ep->debugfs, f,
			    &usnic_rel_fault_fops);
}
