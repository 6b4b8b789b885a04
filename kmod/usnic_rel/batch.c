// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: transmit batching. The packets of one message leave back to
 * back, all of the channel's full size but the last: exactly the shape UDP
 * GSO (SKB_GSO_UDP_L4) cuts a buffer into. Handing the stack a run of them
 * as one skb pays its per-datagram costs (skb setup, netfilter, qdisc)
 * once per run instead of once per packet; every packet still leaves as
 * its own datagram with its own header.
 */
#include <linux/uio.h>

#include "conn.h"
#include "usnic_rel.h"
#include "trace.h"

static bool usnic_rel_fault_active(struct usnic_rel_ep *ep)
{
	return READ_ONCE(ep->fault.drop_ppm) ||
	       READ_ONCE(ep->fault.duplicate_ppm) ||
	       READ_ONCE(ep->fault.reorder_ppm);
}

/* Send a run of at least two packets as one GSO skb; 0 or -errno. */
static int usnic_rel_batch_gso(struct usnic_rel_ep *ep,
			       struct usnic_rel_peer *peer,
			       struct usnic_rel_tx_batch *batch)
{
	struct kvec vec[USNIC_REL_BATCH_MAX];
	unsigned int i;

	for (i = 0; i < batch->n; i++) {
		vec[i].iov_base = batch->b[i]->data;
		vec[i].iov_len = batch->b[i]->len;
	}
	return usnic_rel_socket_send_gso(ep, &peer->route, &peer->addr,
					 vec, batch->n, batch->bytes);
}

/*
 * Put the run on the wire and let go of it. A run the stack cannot take
 * whole (no memory for its skb, a route that refuses GSO) goes packet by
 * packet; a full send buffer drops it here, to be resent early, and no
 * route or a denying policy leaves it to the retransmit timer
 * (usnic_rel_xmit_local_drop()). Caller holds tx_lock.
 */
void usnic_rel_batch_flush(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			   struct usnic_rel_tx_batch *batch)
{
	unsigned int i;
	int ret;

	lockdep_assert_held(&ep->tx_lock);
	if (batch->n > 1 && usnic_rel_route_gso(&peer->route) &&
	    !usnic_rel_fault_active(ep)) {
		ret = usnic_rel_batch_gso(ep, peer, batch);
		if (ret == -ENOBUFS || ret == -ENOMEM || ret == -EIO ||
		    ret == -EINVAL) {
			usnic_rel_count(ep, USNIC_REL_CNT_TX_GSO_FALLBACKS, 1);
			goto one_by_one;
		}
		for (i = 0; i < batch->n; i++)
			trace_usnic_rel_tx(ep->debug_id, peer->handle,
					   batch->b[i]->data, batch->b[i]->len);
		if (!ret) {
			usnic_rel_count(ep, USNIC_REL_CNT_TX_GSO_RUNS, 1);
			usnic_rel_count(ep, USNIC_REL_CNT_TX_PACKETS, batch->n);
			usnic_rel_count(ep, USNIC_REL_CNT_TX_BYTES, batch->bytes);
			goto out;
		}
		for (i = 0; i < batch->n; i++)
			usnic_rel_xmit_local_drop(ep, peer, batch->b[i]->data,
						  batch->b[i]->len, ret);
		goto out;
	}
one_by_one:
	/* One packet, faults to inject packet by packet, or the fallback. */
	for (i = 0; i < batch->n; i++)
		usnic_rel_xmit(ep, peer, batch->b[i]->data, batch->b[i]->len);
out:
	for (i = 0; i < batch->n; i++)
		usnic_rel_txbuf_put(ep, batch->b[i]);
	batch->n = 0;
	batch->bytes = 0;
}

/*
 * Add a packet (the caller's reference goes with it) to the run, sending
 * the run first when the packet cannot extend it: a run is packets of one
 * size, then at most one shorter packet, which ends it.
 */
void usnic_rel_batch_add(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			 struct usnic_rel_tx_batch *batch,
			 struct usnic_rel_txbuf *b)
{
	if (batch->n &&
	    (b->len > batch->b[0]->len ||
	     batch->b[batch->n - 1]->len < batch->b[0]->len ||
	     batch->n == USNIC_REL_BATCH_MAX ||
	     batch->bytes + b->len > USNIC_REL_BATCH_BYTES))
		usnic_rel_batch_flush(ep, peer, batch);
	batch->b[batch->n++] = b;
	batch->bytes += b->len;
}
