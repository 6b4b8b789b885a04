// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: packet header parsing and building. The parser is the only code
 * that reads a received header, and it trusts nothing: every field is checked
 * here, once, before any other file sees the packet.
 */
#include <linux/build_bug.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>

#include <kunit/visibility.h>
#include "wire.h"

static_assert(sizeof(struct usnic_rel_hdr) == 40);
static_assert(sizeof(struct usnic_rel_data_hdr) == 24);
static_assert(sizeof(struct usnic_rel_put_hdr) == 32);
static_assert(sizeof(struct usnic_rel_get_req_hdr) == 24);
static_assert(sizeof(struct usnic_rel_get_resp_hdr) == 16);
static_assert(sizeof(struct usnic_rel_atomic_req_hdr) == 40);
static_assert(sizeof(struct usnic_rel_atomic_resp_hdr) == 16);
static_assert(sizeof(struct usnic_rel_status_hdr) == 8);
static_assert(sizeof(struct usnic_rel_hello_hdr) == 24);
static_assert(sizeof(struct usnic_rel_packed_hdr) == 8);
static_assert(sizeof(struct usnic_rel_packed_rec) == 16);
/* Every receive buffer holds any packed message. */
static_assert(USNIC_REL_WIRE_PACKED_MSG_MAX <= USNIC_REL_RX_BUF_MIN);
/* A challenge answers any trigger at least this long: DATA is never shorter. */
static_assert(sizeof(struct usnic_rel_hello_hdr) <=
	      sizeof(struct usnic_rel_data_hdr));
static_assert(offsetof(struct usnic_rel_hdr, sack) % 8 == 0);
/* payload_len is 16 bits wide. */
static_assert(USNIC_REL_WIRE_MAX_PAYLOAD <= U16_MAX);

static const u8 usnic_rel_type_hdr_len[USNIC_REL_PKT_TYPE_MAX + 1] = {
	[USNIC_REL_PKT_DATA] = sizeof(struct usnic_rel_data_hdr),
	[USNIC_REL_PKT_ACK] = 0,
	[USNIC_REL_PKT_PUT] = sizeof(struct usnic_rel_put_hdr),
	[USNIC_REL_PKT_GET_REQ] = sizeof(struct usnic_rel_get_req_hdr),
	[USNIC_REL_PKT_GET_RESP] = sizeof(struct usnic_rel_get_resp_hdr),
	[USNIC_REL_PKT_ATOMIC_REQ] = sizeof(struct usnic_rel_atomic_req_hdr),
	[USNIC_REL_PKT_ATOMIC_RESP] = sizeof(struct usnic_rel_atomic_resp_hdr),
	[USNIC_REL_PKT_STATUS] = sizeof(struct usnic_rel_status_hdr),
	[USNIC_REL_PKT_HELLO] = sizeof(struct usnic_rel_hello_hdr),
	[USNIC_REL_PKT_PACKED] = sizeof(struct usnic_rel_packed_hdr),
};

static bool usnic_rel_type_valid(u8 type)
{
	return type >= USNIC_REL_PKT_DATA && type <= USNIC_REL_PKT_TYPE_MAX;
}

/* Types whose packets carry no payload at all. */
static bool usnic_rel_type_has_payload(u8 type)
{
	return type == USNIC_REL_PKT_DATA || type == USNIC_REL_PKT_PUT ||
	       type == USNIC_REL_PKT_GET_RESP || type == USNIC_REL_PKT_ACK ||
	       type == USNIC_REL_PKT_PACKED;
}

/*
 * A standalone ACK's SACK blocks: whole blocks, not too many, each beyond
 * the bitmap and within reach, in increasing order with gaps between.
 * Whether the sender sent what they name is for the send window to judge.
 */
static enum usnic_rel_drop_reason
usnic_rel_parse_sack_blocks(const struct usnic_rel_pkt *pkt)
{
	u32 i, n = pkt->payload_len / sizeof(struct usnic_rel_sack_block);
	u32 start, len, end = USNIC_REL_WIRE_SACK_BITS;

	if (pkt->payload_len % sizeof(struct usnic_rel_sack_block) ||
	    n > USNIC_REL_WIRE_SACK_BLOCKS)
		return USNIC_REL_DROP_BAD_SACK;
	for (i = 0; i < n; i++) {
		usnic_rel_sack_block_get(pkt->payload, i, &start, &len);
		/* The first block starts past the bitmap; each one past a gap. */
		if (start <= end || start > USNIC_REL_WIRE_SACK_REACH || !len ||
		    len > USNIC_REL_WIRE_SACK_REACH - start)
			return USNIC_REL_DROP_BAD_SACK;
		end = start + len;
	}
	return USNIC_REL_DROP_NONE;
}

/**
 * usnic_rel_wire_hdr_len() - bytes of headers before the payload
 * @type: packet type
 *
 * Return: the common plus the type header length, or 0 for an unknown type.
 */
size_t usnic_rel_wire_hdr_len(u8 type)
{
	if (!usnic_rel_type_valid(type))
		return 0;
	return sizeof(struct usnic_rel_hdr) + usnic_rel_type_hdr_len[type];
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_wire_hdr_len);

/**
 * usnic_rel_wire_head_len() - bytes at the start of a datagram the parser reads
 * @buf: the UDP payload's first min(@len, sizeof(struct usnic_rel_hdr)) bytes
 * @len: the UDP payload's whole length
 *
 * The headers, a standalone ACK's SACK blocks and a PACKED's records (with
 * the start of its messages when they are short: never more than the most
 * records take); never any other data payload, so that the receive path
 * makes only this much of a datagram linear. Nothing is checked here:
 * usnic_rel_wire_parse() does it all.
 *
 * Return: what usnic_rel_wire_parse() needs in linear memory, at most @len.
 */
size_t usnic_rel_wire_head_len(const void *buf, size_t len)
{
	struct usnic_rel_hdr h;
	size_t head;

	if (len < sizeof(h))
		return len;
	memcpy(&h, buf, sizeof(h));
	head = usnic_rel_wire_hdr_len(h.type);
	/*
	 * An ACK's SACK blocks, never more than the parser reads: a claimed
	 * 64 KiB payload from anyone must not make us pull 64 KiB.
	 */
	if (h.type == USNIC_REL_PKT_ACK)
		head += min_t(size_t, be16_to_cpu(h.payload_len),
			      USNIC_REL_WIRE_SACK_BLOCKS *
			      sizeof(struct usnic_rel_sack_block));
	if (h.type == USNIC_REL_PKT_PACKED)
		head += min_t(size_t, be16_to_cpu(h.payload_len),
			      USNIC_REL_WIRE_PACKED_MAX *
			      sizeof(struct usnic_rel_packed_rec));
	return clamp(head, sizeof(h), len);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_wire_head_len);

/* A fragment [off, off + len) must fit its whole, which must fit @max. */
static enum usnic_rel_drop_reason usnic_rel_check_frag(u32 off, u32 len,
						       u32 total, u32 max)
{
	if (total > max)
		return USNIC_REL_DROP_TOO_BIG;
	if (off > total || len > total - off)
		return USNIC_REL_DROP_FRAG_RANGE;
	/* Only an empty whole may arrive as an empty fragment. */
	if (!len && total)
		return USNIC_REL_DROP_BAD_LENGTH;
	return USNIC_REL_DROP_NONE;
}

static enum usnic_rel_drop_reason
usnic_rel_parse_data(const void *p, struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_data_hdr h;

	memcpy(&h, p, sizeof(h));
	if (h.reserved)
		return USNIC_REL_DROP_RESERVED;
	pkt->data.msg_id = be32_to_cpu(h.msg_id);
	pkt->data.frag_offset = be32_to_cpu(h.frag_offset);
	pkt->data.msg_len = be32_to_cpu(h.msg_len);
	pkt->data.imm = be64_to_cpu(h.imm);
	return usnic_rel_check_frag(pkt->data.frag_offset, pkt->payload_len,
				    pkt->data.msg_len, USNIC_REL_WIRE_MAX_MSG);
}

static enum usnic_rel_drop_reason
usnic_rel_parse_put(const void *p, struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_put_hdr h;
	enum usnic_rel_drop_reason r;

	memcpy(&h, p, sizeof(h));
	pkt->put.flags = be32_to_cpu(h.flags);
	if (pkt->put.flags & ~USNIC_REL_PUT_F_ALL)
		return USNIC_REL_DROP_RESERVED;
	pkt->put.rkey = be64_to_cpu(h.rkey);
	pkt->put.offset = be64_to_cpu(h.offset);
	pkt->put.op_id = be32_to_cpu(h.op_id);
	pkt->put.frag_offset = be32_to_cpu(h.frag_offset);
	pkt->put.op_len = be32_to_cpu(h.op_len);
	r = usnic_rel_check_frag(pkt->put.frag_offset, pkt->payload_len,
				 pkt->put.op_len, USNIC_REL_WIRE_MAX_RDMA);
	if (r)
		return r;
	if (pkt->put.offset + pkt->payload_len < pkt->put.offset)
		return USNIC_REL_DROP_ADDR_WRAP;
	return USNIC_REL_DROP_NONE;
}

static enum usnic_rel_drop_reason
usnic_rel_parse_get_req(const void *p, struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_get_req_hdr h;

	memcpy(&h, p, sizeof(h));
	pkt->get_req.rkey = be64_to_cpu(h.rkey);
	pkt->get_req.offset = be64_to_cpu(h.offset);
	pkt->get_req.op_id = be32_to_cpu(h.op_id);
	pkt->get_req.length = be32_to_cpu(h.length);
	if (!pkt->get_req.length)
		return USNIC_REL_DROP_BAD_LENGTH;
	if (pkt->get_req.length > USNIC_REL_WIRE_MAX_RDMA)
		return USNIC_REL_DROP_TOO_BIG;
	if (pkt->get_req.offset + pkt->get_req.length < pkt->get_req.offset)
		return USNIC_REL_DROP_ADDR_WRAP;
	return USNIC_REL_DROP_NONE;
}

static enum usnic_rel_drop_reason
usnic_rel_parse_get_resp(const void *p, struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_get_resp_hdr h;

	memcpy(&h, p, sizeof(h));
	pkt->get_resp.op_id = be32_to_cpu(h.op_id);
	pkt->get_resp.frag_offset = be32_to_cpu(h.frag_offset);
	pkt->get_resp.op_len = be32_to_cpu(h.op_len);
	pkt->quiet = be32_to_cpu(h.quiet);
	/* Counted once, before the answer's first fragment. */
	if (pkt->quiet > USNIC_REL_WIRE_MAX_QUIET ||
	    (pkt->quiet && pkt->get_resp.frag_offset))
		return USNIC_REL_DROP_RESERVED;
	/* A GET is never empty, so neither is any of its fragments. */
	if (!pkt->get_resp.op_len)
		return USNIC_REL_DROP_BAD_LENGTH;
	return usnic_rel_check_frag(pkt->get_resp.frag_offset,
				    pkt->payload_len, pkt->get_resp.op_len,
				    USNIC_REL_WIRE_MAX_RDMA);
}

static enum usnic_rel_drop_reason
usnic_rel_parse_atomic_req(const void *p, struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_atomic_req_hdr h;
	u64 limit;

	memcpy(&h, p, sizeof(h));
	if (h.reserved)
		return USNIC_REL_DROP_RESERVED;
	pkt->atomic_req.rkey = be64_to_cpu(h.rkey);
	pkt->atomic_req.offset = be64_to_cpu(h.offset);
	pkt->atomic_req.op_id = be32_to_cpu(h.op_id);
	pkt->atomic_req.op = h.op;
	pkt->atomic_req.size = h.size;
	pkt->atomic_req.operand = be64_to_cpu(h.operand);
	pkt->atomic_req.compare = be64_to_cpu(h.compare);

	if (h.op < USNIC_REL_ATOMIC_FADD || h.op > USNIC_REL_ATOMIC_SWAP)
		return USNIC_REL_DROP_BAD_ATOMIC;
	if (h.size != 4 && h.size != 8)
		return USNIC_REL_DROP_BAD_ATOMIC;
	/* Natural alignment also keeps the operand inside one page. */
	if (pkt->atomic_req.offset & (h.size - 1))
		return USNIC_REL_DROP_BAD_ATOMIC;
	limit = h.size == 4 ? U32_MAX : U64_MAX;
	if (pkt->atomic_req.operand > limit || pkt->atomic_req.compare > limit)
		return USNIC_REL_DROP_BAD_ATOMIC;
	if (h.op != USNIC_REL_ATOMIC_CAS && pkt->atomic_req.compare)
		return USNIC_REL_DROP_BAD_ATOMIC;
	return USNIC_REL_DROP_NONE;
}

static enum usnic_rel_drop_reason
usnic_rel_parse_atomic_resp(const void *p, struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_atomic_resp_hdr h;

	memcpy(&h, p, sizeof(h));
	pkt->quiet = be32_to_cpu(h.quiet);
	if (pkt->quiet > USNIC_REL_WIRE_MAX_QUIET)
		return USNIC_REL_DROP_RESERVED;
	pkt->atomic_resp.op_id = be32_to_cpu(h.op_id);
	pkt->atomic_resp.old = be64_to_cpu(h.old);
	return USNIC_REL_DROP_NONE;
}

static enum usnic_rel_drop_reason
usnic_rel_parse_status(const void *p, struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_status_hdr h;
	bool too_big, data;

	memcpy(&h, p, sizeof(h));
	pkt->status.op_id = be32_to_cpu(h.op_id);
	pkt->status.status = be16_to_cpu(h.status);
	pkt->status.req_type = h.req_type;
	pkt->quiet = h.quiet;
	/* A message's refusal answers no one-sided request. */
	if (h.quiet && h.req_type == USNIC_REL_PKT_DATA)
		return USNIC_REL_DROP_RESERVED;
	if (pkt->status.status > USNIC_REL_ST_MAX)
		return USNIC_REL_DROP_BAD_STATUS;
	/* TOO_BIG refuses a message, and only a message is refused so. */
	too_big = pkt->status.status == USNIC_REL_ST_TOO_BIG;
	data = h.req_type == USNIC_REL_PKT_DATA;
	if (too_big != data)
		return USNIC_REL_DROP_BAD_STATUS;
	switch (h.req_type) {
	case USNIC_REL_PKT_DATA:
	case USNIC_REL_PKT_PUT:
		return USNIC_REL_DROP_NONE;
	case USNIC_REL_PKT_GET_REQ:
	case USNIC_REL_PKT_ATOMIC_REQ:
		/* These succeed with their own response, never with OK. */
		if (pkt->status.status == USNIC_REL_ST_OK)
			return USNIC_REL_DROP_BAD_STATUS;
		return USNIC_REL_DROP_NONE;
	default:
		return USNIC_REL_DROP_BAD_STATUS;
	}
}

/*
 * A PACKED's records, in the parsed buffer after its header: a count the
 * payload holds, each message short enough, and their bytes filling the
 * rest of the payload exactly.
 */
static enum usnic_rel_drop_reason
usnic_rel_parse_packed(const void *p, struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_packed_hdr h;
	u32 i, len, bytes = 0;
	u64 imm;

	memcpy(&h, p, sizeof(h));
	if (h.reserved0 || h.reserved)
		return USNIC_REL_DROP_RESERVED;
	pkt->packed.count = be16_to_cpu(h.count);
	pkt->packed.bytes_off = pkt->packed.count *
				sizeof(struct usnic_rel_packed_rec);
	if (pkt->packed.count < 2 ||
	    pkt->packed.count > USNIC_REL_WIRE_PACKED_MAX ||
	    pkt->packed.bytes_off > pkt->payload_len)
		return USNIC_REL_DROP_BAD_PACKED;
	for (i = 0; i < pkt->packed.count; i++) {
		struct usnic_rel_packed_rec r;

		memcpy(&r, (const u8 *)pkt->payload + i * sizeof(r), sizeof(r));
		if (r.reserved)
			return USNIC_REL_DROP_RESERVED;
		usnic_rel_packed_rec_get(pkt->payload, i, &len, &imm);
		if (len > USNIC_REL_WIRE_PACKED_MSG_MAX)
			return USNIC_REL_DROP_BAD_PACKED;
		bytes += len;
	}
	if (bytes != pkt->payload_len - pkt->packed.bytes_off)
		return USNIC_REL_DROP_BAD_PACKED;
	return USNIC_REL_DROP_NONE;
}

static enum usnic_rel_drop_reason
usnic_rel_parse_hello(const void *p, struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_hello_hdr h;
	int i;

	memcpy(&h, p, sizeof(h));
	/* Not sequenced: nothing to number or acknowledge; may ask for an answer. */
	if (pkt->channel || (pkt->flags & ~USNIC_REL_F_ACK_REQ) || pkt->seq ||
	    pkt->ack || pkt->sack)
		return USNIC_REL_DROP_BAD_HELLO;
	pkt->hello.cookie = be64_to_cpu(h.cookie);
	pkt->hello.echo = be64_to_cpu(h.echo);
	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		pkt->hello.isn[i] = be32_to_cpu(h.isn[i]);
	if (!pkt->hello.cookie || !pkt->hello.rx_limit ||
	    pkt->hello.rx_limit > USNIC_REL_WIRE_MAX_MSG)
		return USNIC_REL_DROP_BAD_HELLO;
	return USNIC_REL_DROP_NONE;
}

/**
 * usnic_rel_wire_parse() - validate and decode one received datagram
 * @buf: the UDP payload's first usnic_rel_wire_head_len() bytes, in linear
 *	memory; the rest, a data payload, is never read here
 * @len: the UDP payload's whole length
 * @pkt: decoded fields; pkt->payload points into @buf (ACK only). Only
 *	meaningful on success.
 *
 * Checks everything a packet can be checked for on its own; the sequence,
 * incarnation and rkey checks need state and belong to the callers.
 *
 * Return: USNIC_REL_DROP_NONE (0), or why the packet must be dropped.
 */
enum usnic_rel_drop_reason usnic_rel_wire_parse(const void *buf, size_t len,
						struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_hdr h;
	size_t hlen;
	const u8 *p = buf;

	if (len < sizeof(h))
		return USNIC_REL_DROP_TRUNCATED;
	memcpy(&h, buf, sizeof(h));
	if (be32_to_cpu(h.magic) != USNIC_REL_WIRE_MAGIC)
		return USNIC_REL_DROP_BAD_MAGIC;
	if (h.version != USNIC_REL_WIRE_VERSION)
		return USNIC_REL_DROP_BAD_VERSION;
	if (!usnic_rel_type_valid(h.type))
		return USNIC_REL_DROP_BAD_TYPE;
	if (h.channel >= USNIC_REL_NR_CHANS)
		return USNIC_REL_DROP_BAD_CHANNEL;
	if (h.flags & ~USNIC_REL_F_ALL)
		return USNIC_REL_DROP_BAD_FLAGS;
	if ((h.type == USNIC_REL_PKT_ACK || (h.flags & USNIC_REL_F_RNR)) &&
	    !(h.flags & USNIC_REL_F_ACK))
		return USNIC_REL_DROP_BAD_FLAGS;
	if ((h.flags & USNIC_REL_F_HELD) && !(h.flags & USNIC_REL_F_RNR))
		return USNIC_REL_DROP_BAD_FLAGS;
	if (!h.src_incarnation)
		return USNIC_REL_DROP_NO_INCARNATION;
	if (h.reserved || (h.rx_limit && h.type != USNIC_REL_PKT_HELLO))
		return USNIC_REL_DROP_RESERVED;

	memset(pkt, 0, sizeof(*pkt));
	pkt->type = h.type;
	pkt->channel = h.channel;
	pkt->flags = h.flags;
	pkt->src_incarnation = be32_to_cpu(h.src_incarnation);
	pkt->dst_incarnation = be32_to_cpu(h.dst_incarnation);
	pkt->seq = be32_to_cpu(h.seq);
	pkt->ack = be32_to_cpu(h.ack);
	pkt->sack = be64_to_cpu(h.sack);
	pkt->payload_len = be16_to_cpu(h.payload_len);
	if (h.type == USNIC_REL_PKT_HELLO)
		pkt->hello.rx_limit = be32_to_cpu(h.rx_limit);

	hlen = usnic_rel_wire_hdr_len(h.type);
	if (len < hlen)
		return USNIC_REL_DROP_TRUNCATED;
	if (pkt->payload_len > USNIC_REL_WIRE_MAX_PAYLOAD)
		return USNIC_REL_DROP_BAD_LENGTH;
	if (pkt->payload_len && !usnic_rel_type_has_payload(h.type))
		return USNIC_REL_DROP_BAD_LENGTH;
	if (len < hlen + pkt->payload_len)
		return USNIC_REL_DROP_TRUNCATED;
	if (len > hlen + pkt->payload_len)
		return USNIC_REL_DROP_BAD_LENGTH;
	pkt->payload_off = hlen;
	if (h.type == USNIC_REL_PKT_ACK || h.type == USNIC_REL_PKT_PACKED)
		pkt->payload = p + hlen;

	p += sizeof(h);
	switch (h.type) {
	case USNIC_REL_PKT_DATA:
		return usnic_rel_parse_data(p, pkt);
	case USNIC_REL_PKT_PUT:
		return usnic_rel_parse_put(p, pkt);
	case USNIC_REL_PKT_GET_REQ:
		return usnic_rel_parse_get_req(p, pkt);
	case USNIC_REL_PKT_GET_RESP:
		return usnic_rel_parse_get_resp(p, pkt);
	case USNIC_REL_PKT_ATOMIC_REQ:
		return usnic_rel_parse_atomic_req(p, pkt);
	case USNIC_REL_PKT_ATOMIC_RESP:
		return usnic_rel_parse_atomic_resp(p, pkt);
	case USNIC_REL_PKT_STATUS:
		return usnic_rel_parse_status(p, pkt);
	case USNIC_REL_PKT_HELLO:
		return usnic_rel_parse_hello(p, pkt);
	case USNIC_REL_PKT_PACKED:
		return usnic_rel_parse_packed(p, pkt);
	default:
		return usnic_rel_parse_sack_blocks(pkt);	/* ACK */
	}
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_wire_parse);

static void usnic_rel_build_type_hdr(void *p, const struct usnic_rel_pkt *pkt)
{
	switch (pkt->type) {
	case USNIC_REL_PKT_DATA: {
		struct usnic_rel_data_hdr h = {
			.msg_id = cpu_to_be32(pkt->data.msg_id),
			.frag_offset = cpu_to_be32(pkt->data.frag_offset),
			.msg_len = cpu_to_be32(pkt->data.msg_len),
			.imm = cpu_to_be64(pkt->data.imm),
		};

		memcpy(p, &h, sizeof(h));
		break;
	}
	case USNIC_REL_PKT_PUT: {
		struct usnic_rel_put_hdr h = {
			.rkey = cpu_to_be64(pkt->put.rkey),
			.offset = cpu_to_be64(pkt->put.offset),
			.op_id = cpu_to_be32(pkt->put.op_id),
			.frag_offset = cpu_to_be32(pkt->put.frag_offset),
			.op_len = cpu_to_be32(pkt->put.op_len),
			.flags = cpu_to_be32(pkt->put.flags),
		};

		memcpy(p, &h, sizeof(h));
		break;
	}
	case USNIC_REL_PKT_GET_REQ: {
		struct usnic_rel_get_req_hdr h = {
			.rkey = cpu_to_be64(pkt->get_req.rkey),
			.offset = cpu_to_be64(pkt->get_req.offset),
			.op_id = cpu_to_be32(pkt->get_req.op_id),
			.length = cpu_to_be32(pkt->get_req.length),
		};

		memcpy(p, &h, sizeof(h));
		break;
	}
	case USNIC_REL_PKT_GET_RESP: {
		struct usnic_rel_get_resp_hdr h = {
			.op_id = cpu_to_be32(pkt->get_resp.op_id),
			.frag_offset = cpu_to_be32(pkt->get_resp.frag_offset),
			.op_len = cpu_to_be32(pkt->get_resp.op_len),
			.quiet = cpu_to_be32(pkt->quiet),
		};

		memcpy(p, &h, sizeof(h));
		break;
	}
	case USNIC_REL_PKT_ATOMIC_REQ: {
		struct usnic_rel_atomic_req_hdr h = {
			.rkey = cpu_to_be64(pkt->atomic_req.rkey),
			.offset = cpu_to_be64(pkt->atomic_req.offset),
			.op_id = cpu_to_be32(pkt->atomic_req.op_id),
			.op = pkt->atomic_req.op,
			.size = pkt->atomic_req.size,
			.operand = cpu_to_be64(pkt->atomic_req.operand),
			.compare = cpu_to_be64(pkt->atomic_req.compare),
		};

		memcpy(p, &h, sizeof(h));
		break;
	}
	case USNIC_REL_PKT_ATOMIC_RESP: {
		struct usnic_rel_atomic_resp_hdr h = {
			.op_id = cpu_to_be32(pkt->atomic_resp.op_id),
			.quiet = cpu_to_be32(pkt->quiet),
			.old = cpu_to_be64(pkt->atomic_resp.old),
		};

		memcpy(p, &h, sizeof(h));
		break;
	}
	case USNIC_REL_PKT_STATUS: {
		struct usnic_rel_status_hdr h = {
			.op_id = cpu_to_be32(pkt->status.op_id),
			.status = cpu_to_be16(pkt->status.status),
			.req_type = pkt->status.req_type,
			.quiet = (u8)pkt->quiet,
		};

		memcpy(p, &h, sizeof(h));
		break;
	}
	case USNIC_REL_PKT_HELLO: {
		struct usnic_rel_hello_hdr h = {
			.cookie = cpu_to_be64(pkt->hello.cookie),
			.echo = cpu_to_be64(pkt->hello.echo),
		};
		int i;

		for (i = 0; i < USNIC_REL_NR_CHANS; i++)
			h.isn[i] = cpu_to_be32(pkt->hello.isn[i]);
		memcpy(p, &h, sizeof(h));
		break;
	}
	case USNIC_REL_PKT_PACKED: {
		struct usnic_rel_packed_hdr h = {
			.count = cpu_to_be16(pkt->packed.count),
		};

		memcpy(p, &h, sizeof(h));
		break;
	}
	}
}

/**
 * usnic_rel_wire_build() - encode the headers of a packet to send
 * @buf: where the headers go; the payload follows them
 * @size: room at @buf
 * @pkt: fields to encode, host order (pkt->payload is ignored)
 *
 * Return: bytes of headers written, or 0 if the type is unknown, the payload
 * too long or @size too small.
 */
size_t usnic_rel_wire_build(void *buf, size_t size,
			    const struct usnic_rel_pkt *pkt)
{
	size_t hlen = usnic_rel_wire_hdr_len(pkt->type);
	struct usnic_rel_hdr h = {
		.magic = cpu_to_be32(USNIC_REL_WIRE_MAGIC),
		.version = USNIC_REL_WIRE_VERSION,
		.type = pkt->type,
		.channel = pkt->channel,
		.flags = pkt->flags,
		.src_incarnation = cpu_to_be32(pkt->src_incarnation),
		.dst_incarnation = cpu_to_be32(pkt->dst_incarnation),
		.seq = cpu_to_be32(pkt->seq),
		.ack = cpu_to_be32(pkt->ack),
		.payload_len = cpu_to_be16(pkt->payload_len),
		.sack = cpu_to_be64(pkt->sack),
	};

	if (pkt->type == USNIC_REL_PKT_HELLO)
		h.rx_limit = cpu_to_be32(pkt->hello.rx_limit);
	if (!hlen || size < hlen ||
	    pkt->payload_len > USNIC_REL_WIRE_MAX_PAYLOAD)
		return 0;
	memcpy(buf, &h, sizeof(h));
	usnic_rel_build_type_hdr((u8 *)buf + sizeof(h), pkt);
	return hlen;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_wire_build);

static const char * const usnic_rel_drop_names[USNIC_REL_DROP_MAX] = {
	[USNIC_REL_DROP_NONE] = "none",
	[USNIC_REL_DROP_TRUNCATED] = "truncated",
	[USNIC_REL_DROP_BAD_MAGIC] = "bad_magic",
	[USNIC_REL_DROP_BAD_VERSION] = "bad_version",
	[USNIC_REL_DROP_BAD_TYPE] = "bad_type",
	[USNIC_REL_DROP_BAD_CHANNEL] = "bad_channel",
	[USNIC_REL_DROP_BAD_FLAGS] = "bad_flags",
	[USNIC_REL_DROP_NO_INCARNATION] = "no_incarnation",
	[USNIC_REL_DROP_RESERVED] = "reserved_set",
	[USNIC_REL_DROP_BAD_LENGTH] = "bad_length",
	[USNIC_REL_DROP_FRAG_RANGE] = "frag_range",
	[USNIC_REL_DROP_TOO_BIG] = "too_big",
	[USNIC_REL_DROP_ADDR_WRAP] = "addr_wrap",
	[USNIC_REL_DROP_BAD_ATOMIC] = "bad_atomic",
	[USNIC_REL_DROP_BAD_STATUS] = "bad_status",
	[USNIC_REL_DROP_BAD_HELLO] = "bad_hello",
	[USNIC_REL_DROP_BAD_SACK] = "bad_sack",
	[USNIC_REL_DROP_NO_CSUM] = "no_checksum",
	[USNIC_REL_DROP_BAD_PACKED] = "bad_packed",
	[USNIC_REL_DROP_UNKNOWN_PEER] = "unknown_peer",
	[USNIC_REL_DROP_STALE_INCARNATION] = "stale_incarnation",
	[USNIC_REL_DROP_OUT_OF_WINDOW] = "out_of_window",
	[USNIC_REL_DROP_DUPLICATE] = "duplicate",
	[USNIC_REL_DROP_BAD_ACK] = "bad_ack",
	[USNIC_REL_DROP_REASM] = "reassembly",
	[USNIC_REL_DROP_NO_MEMORY] = "no_memory",
	[USNIC_REL_DROP_UNVERIFIED] = "unverified",
};

/**
 * usnic_rel_drop_reason_name() - counter name of a drop reason
 * @reason: the reason
 *
 * Return: a short lower-case name, "unknown" when out of range.
 */
const char *usnic_rel_drop_reason_name(enum usnic_rel_drop_reason reason)
{
	if ((unsigned int)reason >= USNIC_REL_DROP_MAX ||
	    !usnic_rel_drop_names[reason])
		return "unknown";
	return usnic_rel_drop_names[reason];
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_drop_reason_name);
