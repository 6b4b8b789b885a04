/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel tracepoints (events/usnic_rel/ in tracefs): every packet sent
 * and received, every ACK processed and every retransmission. Without
 * CONFIG_TRACEPOINTS they compile to nothing.
 */
#ifndef _USNIC_REL_TRACE_DEFS_H
#define _USNIC_REL_TRACE_DEFS_H

#include "../../include/uapi/usnic_rel_wire.h"
#include "wire.h"

struct usnic_rel_ep;
struct usnic_rel_peer;

/* What the receive path did with a packet (usnic_rel_rx's verdict). */
enum usnic_rel_rx_verdict {
	USNIC_REL_RXV_IN_ORDER,		/* the next expected: taken for delivery */
	USNIC_REL_RXV_OUT_OF_ORDER,	/* held until the gap before it fills */
	USNIC_REL_RXV_ACK,		/* a standalone ACK, processed */
	USNIC_REL_RXV_DUPLICATE,	/* dropped: received before */
	USNIC_REL_RXV_OUT_OF_WINDOW,	/* dropped */
	USNIC_REL_RXV_BAD_HEADER,	/* dropped: the parser refused it */
	USNIC_REL_RXV_UNKNOWN_PEER,	/* dropped: sender not in the AV */
	USNIC_REL_RXV_DEAD_PEER,	/* dropped: connection dead or removed */
	USNIC_REL_RXV_STALE,		/* dropped: wrong incarnation */
	USNIC_REL_RXV_UNVERIFIED,	/* dropped: not paired, challenged */
	USNIC_REL_RXV_HELLO,		/* a handshake packet (see below) */
};

#define usnic_rel_show_rx_verdict(v)					\
	__print_symbolic(v,						\
		{ USNIC_REL_RXV_IN_ORDER, "in_order" },			\
		{ USNIC_REL_RXV_OUT_OF_ORDER, "out_of_order" },		\
		{ USNIC_REL_RXV_ACK, "ack" },				\
		{ USNIC_REL_RXV_DUPLICATE, "drop_duplicate" },		\
		{ USNIC_REL_RXV_OUT_OF_WINDOW, "drop_out_of_window" },	\
		{ USNIC_REL_RXV_BAD_HEADER, "drop_bad_header" },	\
		{ USNIC_REL_RXV_UNKNOWN_PEER, "drop_unknown_peer" },	\
		{ USNIC_REL_RXV_DEAD_PEER, "drop_dead_peer" },		\
		{ USNIC_REL_RXV_STALE, "drop_stale_incarnation" },	\
		{ USNIC_REL_RXV_UNVERIFIED, "drop_unverified" },	\
		{ USNIC_REL_RXV_HELLO, "hello" })

/* Values of enum usnic_rel_hello_verdict (handshake.h). */
#define usnic_rel_show_hello_verdict(v)				\
	__print_symbolic(v,						\
		{ 0, "unverified" },					\
		{ 1, "current" },					\
		{ 2, "pair" },						\
		{ 3, "stale" })

void usnic_rel_trace_rx_seq(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			    const struct usnic_rel_pkt *pkt, u32 len);

#endif /* _USNIC_REL_TRACE_DEFS_H */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM usnic_rel

#if !defined(_USNIC_REL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _USNIC_REL_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(usnic_rel_tx,
	    TP_PROTO(u32 ep, u32 peer, const void *buf, size_t len),
	    TP_ARGS(ep, peer, buf, len),
	    TP_STRUCT__entry(__field(u32, ep)
			     __field(u32, peer)
			     __field(u8, type)
			     __field(u8, channel)
			     __field(u32, seq)
			     __field(u32, len)),
	    TP_fast_assign(__entry->ep = ep;
			   __entry->peer = peer;
			   __entry->type = ((const struct usnic_rel_hdr *)buf)->type;
			   __entry->channel = ((const struct usnic_rel_hdr *)buf)->channel;
			   __entry->seq = be32_to_cpu(((const struct usnic_rel_hdr *)buf)->seq);
			   __entry->len = len;),
	    TP_printk("ep=%u peer=%u type=%u channel=%u seq=%u len=%u",
		      __entry->ep, __entry->peer, __entry->type, __entry->channel,
		      __entry->seq, __entry->len)
);

/* @pkt is NULL when the header could not be parsed; @peer 0 when unknown. */
TRACE_EVENT(usnic_rel_rx,
	    TP_PROTO(u32 ep, u32 peer, const struct usnic_rel_pkt *pkt, u32 len,
		     int verdict, int reason),
	    TP_ARGS(ep, peer, pkt, len, verdict, reason),
	    TP_STRUCT__entry(__field(u32, ep)
			     __field(u32, peer)
			     __field(u8, type)
			     __field(u8, channel)
			     __field(u32, seq)
			     __field(u32, len)
			     __field(int, verdict)
			     __field(int, reason)),
	    TP_fast_assign(__entry->ep = ep;
			   __entry->peer = peer;
			   __entry->type = pkt ? pkt->type : 0;
			   __entry->channel = pkt ? pkt->channel : 0;
			   __entry->seq = pkt ? pkt->seq : 0;
			   __entry->len = len;
			   __entry->verdict = verdict;
			   __entry->reason = reason;),
	    TP_printk("ep=%u peer=%u type=%u channel=%u seq=%u len=%u %s reason=%d",
		      __entry->ep, __entry->peer, __entry->type, __entry->channel,
		      __entry->seq, __entry->len,
		      usnic_rel_show_rx_verdict(__entry->verdict), __entry->reason)
);

/* @valid is false for a stale or forged ACK, which frees nothing. */
TRACE_EVENT(usnic_rel_ack,
	    TP_PROTO(u32 ep, u32 peer, const struct usnic_rel_pkt *pkt, bool valid,
		     u32 freed),
	    TP_ARGS(ep, peer, pkt, valid, freed),
	    TP_STRUCT__entry(__field(u32, ep)
			     __field(u32, peer)
			     __field(u8, channel)
			     __field(bool, valid)
			     __field(u32, ack)
			     __field(u64, sack)
			     __field(u32, freed)),
	    TP_fast_assign(__entry->ep = ep;
			   __entry->peer = peer;
			   __entry->channel = pkt->channel;
			   __entry->valid = valid;
			   __entry->ack = pkt->ack;
			   __entry->sack = pkt->sack;
			   __entry->freed = freed;),
	    TP_printk("ep=%u peer=%u channel=%u ack=%u sack=0x%llx freed=%u%s",
		      __entry->ep, __entry->peer, __entry->channel, __entry->ack,
		      (unsigned long long)__entry->sack, __entry->freed,
		      __entry->valid ? "" : " refused")
);

TRACE_EVENT(usnic_rel_retransmit,
	    TP_PROTO(u32 ep, u32 peer, unsigned int channel, u32 seq, bool timeout),
	    TP_ARGS(ep, peer, channel, seq, timeout),
	    TP_STRUCT__entry(__field(u32, ep)
			     __field(u32, peer)
			     __field(u8, channel)
			     __field(u32, seq)
			     __field(bool, timeout)),
	    TP_fast_assign(__entry->ep = ep;
			   __entry->peer = peer;
			   __entry->channel = channel;
			   __entry->seq = seq;
			   __entry->timeout = timeout;),
	    TP_printk("ep=%u peer=%u channel=%u seq=%u %s",
		      __entry->ep, __entry->peer, __entry->channel, __entry->seq,
		      __entry->timeout ? "timeout" : "fast")
);

/* A HELLO and what the handshake decided (enum usnic_rel_hello_verdict). */
TRACE_EVENT(usnic_rel_handshake,
	    TP_PROTO(u32 ep, u32 peer, const struct usnic_rel_pkt *pkt,
		     int verdict),
	    TP_ARGS(ep, peer, pkt, verdict),
	    TP_STRUCT__entry(__field(u32, ep)
			     __field(u32, peer)
			     __field(u32, src)
			     __field(u32, dst)
			     __field(u8, flags)
			     __field(int, verdict)),
	    TP_fast_assign(__entry->ep = ep;
			   __entry->peer = peer;
			   __entry->src = pkt->src_incarnation;
			   __entry->dst = pkt->dst_incarnation;
			   __entry->flags = pkt->flags;
			   __entry->verdict = verdict;),
	    TP_printk("ep=%u peer=%u src=%08x dst=%08x flags=0x%x %s",
		      __entry->ep, __entry->peer, __entry->src, __entry->dst,
		      __entry->flags,
		      usnic_rel_show_hello_verdict(__entry->verdict))
);

#endif /* _USNIC_REL_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
