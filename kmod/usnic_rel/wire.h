/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: parsing and building packet headers (see uapi/usnic_rel_wire.h).
 */
#ifndef _USNIC_REL_WIRE_H
#define _USNIC_REL_WIRE_H

#include <linux/string.h>
#include <linux/types.h>
#include <asm/byteorder.h>

#include "../../include/uapi/usnic_rel_wire.h"

/*
 * Why a packet was dropped, one counter each. The parser returns the first
 * block; the rest are found by the callers (peer lookup, windows, RDMA).
 */
enum usnic_rel_drop_reason {
	USNIC_REL_DROP_NONE = 0,
	/* usnic_rel_wire_parse() */
	USNIC_REL_DROP_TRUNCATED,	/* shorter than its headers */
	USNIC_REL_DROP_BAD_MAGIC,
	USNIC_REL_DROP_BAD_VERSION,
	USNIC_REL_DROP_BAD_TYPE,
	USNIC_REL_DROP_BAD_CHANNEL,
	USNIC_REL_DROP_BAD_FLAGS,	/* unknown bit, ACK or RNR without F_ACK */
	USNIC_REL_DROP_NO_INCARNATION,	/* source incarnation 0 */
	USNIC_REL_DROP_RESERVED,	/* non-zero reserved field */
	USNIC_REL_DROP_BAD_LENGTH,	/* payload_len vs datagram or type */
	USNIC_REL_DROP_FRAG_RANGE,	/* fragment outside its message/op */
	USNIC_REL_DROP_TOO_BIG,		/* message or operation too long */
	USNIC_REL_DROP_ADDR_WRAP,	/* remote offset + length wraps */
	USNIC_REL_DROP_BAD_ATOMIC,	/* op, size, alignment or operand */
	USNIC_REL_DROP_BAD_STATUS,	/* unknown status or answered type */
	USNIC_REL_DROP_BAD_HELLO,	/* HELLO with sequence fields or no cookie */
	USNIC_REL_DROP_BAD_SACK,	/* ACK's SACK blocks malformed */
	USNIC_REL_DROP_NO_CSUM,		/* IPv4 datagram without a UDP checksum */
	USNIC_REL_DROP_BAD_PACKED,	/* PACKED's count or records malformed */
	/* callers */
	USNIC_REL_DROP_UNKNOWN_PEER,
	USNIC_REL_DROP_STALE_INCARNATION,
	USNIC_REL_DROP_OUT_OF_WINDOW,
	USNIC_REL_DROP_DUPLICATE,
	USNIC_REL_DROP_BAD_ACK,		/* stale or forged acknowledgment */
	USNIC_REL_DROP_REASM,		/* fragment disagrees with its message */
	USNIC_REL_DROP_NO_MEMORY,
	USNIC_REL_DROP_UNVERIFIED,	/* from an incarnation not paired with us */
	USNIC_REL_DROP_MAX,
};

/* The header fields of one packet, decoded to host order and validated. */
struct usnic_rel_pkt {
	u8 type;
	u8 channel;
	u8 flags;
	u32 src_incarnation;
	u32 dst_incarnation;
	u32 seq;
	u32 ack;
	u64 sack;
	u32 payload_len;
	/*
	 * Where the payload starts, from the start of the UDP payload: it
	 * stays in the datagram, which need not be linear. Only a standalone
	 * ACK's SACK blocks and a PACKED's records are read by the parser:
	 * @payload points at them, inside the parsed buffer; NULL for every
	 * other type.
	 */
	u32 payload_off;
	const void *payload;
	union {
		struct {
			u32 msg_id;
			u32 frag_offset;
			u32 msg_len;
			u64 imm;
		} data;
		struct {
			u64 rkey;
			u64 offset;
			u32 op_id;
			u32 frag_offset;
			u32 op_len;
		} put;
		struct {
			u64 rkey;
			u64 offset;
			u32 op_id;
			u32 length;
		} get_req;
		struct {
			u32 op_id;
			u32 frag_offset;
			u32 op_len;
		} get_resp;
		struct {
			u64 rkey;
			u64 offset;
			u64 operand;
			u64 compare;
			u32 op_id;
			u8 op;
			u8 size;
		} atomic_req;
		struct {
			u64 old;
			u32 op_id;
		} atomic_resp;
		struct {
			u32 op_id;
			u16 status;
			u8 req_type;
		} status;
		struct {
			u32 count;
			u32 bytes_off;	/* the first message's, from payload_off */
		} packed;
		struct {
			u64 cookie;
			u64 echo;
			u32 isn[USNIC_REL_NR_CHANS];
			u32 rx_limit;	/* common header's rx_limit */
		} hello;
	};
};

/* The longest standalone ACK: its header and every SACK block it may carry. */
#define USNIC_REL_ACK_MAX_LEN \
	(sizeof(struct usnic_rel_hdr) + \
	 USNIC_REL_WIRE_SACK_BLOCKS * sizeof(struct usnic_rel_sack_block))

/* Block @i of the SACK blocks at @blocks (wire order, any alignment). */
static inline void usnic_rel_sack_block_get(const void *blocks, u32 i,
					    u32 *start, u32 *len)
{
	struct usnic_rel_sack_block b;

	memcpy(&b, (const u8 *)blocks + i * sizeof(b), sizeof(b));
	*start = be32_to_cpu(b.start);
	*len = be32_to_cpu(b.len);
}

static inline void usnic_rel_sack_block_put(void *blocks, u32 i, u32 start,
					    u32 len)
{
	struct usnic_rel_sack_block b = {
		.start = cpu_to_be32(start),
		.len = cpu_to_be32(len),
	};

	memcpy((u8 *)blocks + i * sizeof(b), &b, sizeof(b));
}

/* Record @i of the records at @recs (wire order, any alignment). */
static inline void usnic_rel_packed_rec_get(const void *recs, u32 i, u32 *len,
					    u64 *imm)
{
	struct usnic_rel_packed_rec r;

	memcpy(&r, (const u8 *)recs + i * sizeof(r), sizeof(r));
	*len = be32_to_cpu(r.len);
	*imm = be64_to_cpu(r.imm);
}

static inline void usnic_rel_packed_rec_put(void *recs, u32 i, u32 len, u64 imm)
{
	struct usnic_rel_packed_rec r = {
		.len = cpu_to_be32(len),
		.imm = cpu_to_be64(imm),
	};

	memcpy((u8 *)recs + i * sizeof(r), &r, sizeof(r));
}

size_t usnic_rel_wire_hdr_len(u8 type);
size_t usnic_rel_wire_head_len(const void *buf, size_t len);
enum usnic_rel_drop_reason usnic_rel_wire_parse(const void *buf, size_t len,
						struct usnic_rel_pkt *pkt);
size_t usnic_rel_wire_build(void *buf, size_t size,
			    const struct usnic_rel_pkt *pkt);
const char *usnic_rel_drop_reason_name(enum usnic_rel_drop_reason reason);

#endif /* _USNIC_REL_WIRE_H */
