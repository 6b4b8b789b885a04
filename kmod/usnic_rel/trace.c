// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the tracepoints' definitions, and the receive verdict of a
 * sequenced packet, worked out only while the event is enabled.
 */
#include "usnic_rel.h"
#include "rxwin.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/*
 * Trace a DATA or RDMA packet before the receive window takes it: where in
 * the window it falls decides what happens to it. Caller holds conn->lock.
 */
void usnic_rel_trace_rx_seq(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			    const struct usnic_rel_pkt *pkt, u32 len)
{
	static const int verdict[] = {
		[USNIC_REL_RX_IN_ORDER] = USNIC_REL_RXV_IN_ORDER,
		[USNIC_REL_RX_OUT_OF_ORDER] = USNIC_REL_RXV_OUT_OF_ORDER,
		[USNIC_REL_RX_DUPLICATE] = USNIC_REL_RXV_DUPLICATE,
		[USNIC_REL_RX_OUT_OF_WINDOW] = USNIC_REL_RXV_OUT_OF_WINDOW,
	};
	enum usnic_rel_rx_class class;

	if (pkt->type == USNIC_REL_PKT_ACK) {
		trace_usnic_rel_rx(ep->debug_id, peer->handle, pkt, len,
				   USNIC_REL_RXV_ACK, 0);
		return;
	}
	class = usnic_rel_rxwin_classify(&peer->conn.chan[pkt->channel].rx,
					 pkt->seq);
	trace_usnic_rel_rx(ep->debug_id, peer->handle, pkt, len,
			   verdict[class], 0);
}
