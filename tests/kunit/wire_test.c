// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the packet parser against malformed input, and build/parse round
 * trips of every packet type.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "wire.h"

#define WT_BUF	(128 + 64)
#define WT_PAYLOAD 16

/* A valid packet of @type, payload included when the type takes one. */
static void wt_valid(struct usnic_rel_pkt *p, u8 type)
{
	memset(p, 0, sizeof(*p));
	p->type = type;
	p->channel = USNIC_REL_CHAN_DATA;
	p->flags = USNIC_REL_F_ACK;
	p->src_incarnation = 0x11223344;
	p->dst_incarnation = 0x55667788;
	p->seq = 0xfffffffe;
	p->ack = 7;
	p->sack = 0x8000000000000005ULL;
	switch (type) {
	case USNIC_REL_PKT_DATA:
		p->payload_len = WT_PAYLOAD;
		p->data.msg_id = 9;
		p->data.frag_offset = 32;
		p->data.msg_len = 64;
		p->data.imm = 0xfedcba9876543210ULL;
		break;
	case USNIC_REL_PKT_PUT:
		p->payload_len = WT_PAYLOAD;
		p->put.rkey = 0xa5a5a5a5a5a5a5a5ULL;
		p->put.offset = 4096;
		p->put.op_id = 3;
		p->put.frag_offset = 0;
		p->put.op_len = WT_PAYLOAD;
		p->put.flags = USNIC_REL_PUT_F_QUIET;
		break;
	case USNIC_REL_PKT_GET_REQ:
		p->get_req.rkey = 1;
		p->get_req.offset = 8;
		p->get_req.op_id = 4;
		p->get_req.length = 100000;
		break;
	case USNIC_REL_PKT_GET_RESP:
		p->payload_len = WT_PAYLOAD;
		p->get_resp.op_id = 4;
		p->get_resp.frag_offset = 99984;
		p->get_resp.op_len = 100000;
		break;
	case USNIC_REL_PKT_ATOMIC_REQ:
		p->atomic_req.rkey = 2;
		p->atomic_req.offset = 24;
		p->atomic_req.op_id = 5;
		p->atomic_req.op = USNIC_REL_ATOMIC_CAS;
		p->atomic_req.size = 8;
		p->atomic_req.operand = 0x8000000000000001ULL;
		p->atomic_req.compare = 42;
		break;
	case USNIC_REL_PKT_ATOMIC_RESP:
		p->atomic_resp.op_id = 5;
		p->atomic_resp.old = 42;
		p->quiet = USNIC_REL_WIRE_MAX_QUIET;
		break;
	case USNIC_REL_PKT_STATUS:
		p->status.op_id = 3;
		p->status.status = USNIC_REL_ST_OUT_OF_BOUNDS;
		p->status.req_type = USNIC_REL_PKT_PUT;
		break;
	case USNIC_REL_PKT_HELLO:
		/* Not sequenced: no channel, flags, sequence or ACK. */
		p->channel = 0;
		p->flags = USNIC_REL_F_ACK_REQ;
		p->seq = 0;
		p->ack = 0;
		p->sack = 0;
		p->hello.cookie = 0x0123456789abcdefULL;
		p->hello.echo = 0xfedcba9876543210ULL;
		p->hello.isn[0] = 0x80000001;
		p->hello.isn[1] = 0xfffffff0;
		p->hello.rx_limit = 4096;
		break;
	case USNIC_REL_PKT_PACKED:
		/* wt_encode() writes the two records: 5 and 3 bytes. */
		p->payload_len = 2 * sizeof(struct usnic_rel_packed_rec) + 8;
		p->packed.count = 2;
		p->packed.bytes_off = 2 * sizeof(struct usnic_rel_packed_rec);
		break;
	}
}

/* Encode @p with a recognisable payload; returns the datagram length. */
static size_t wt_encode(struct kunit *test, const struct usnic_rel_pkt *p,
			u8 *buf)
{
	size_t hlen = usnic_rel_wire_build(buf, WT_BUF, p);
	u32 i;

	KUNIT_ASSERT_NE(test, hlen, 0);
	for (i = 0; i < p->payload_len; i++)
		buf[hlen + i] = (u8)(i * 7 + 1);
	if (p->type == USNIC_REL_PKT_PACKED) {
		usnic_rel_packed_rec_put(buf + hlen, 0, 5, 0x1111);
		usnic_rel_packed_rec_put(buf + hlen, 1, 3, 0x2222);
	}
	return hlen + p->payload_len;
}

static const u8 wt_types[] = {
	USNIC_REL_PKT_DATA, USNIC_REL_PKT_ACK, USNIC_REL_PKT_PUT,
	USNIC_REL_PKT_GET_REQ, USNIC_REL_PKT_GET_RESP,
	USNIC_REL_PKT_ATOMIC_REQ, USNIC_REL_PKT_ATOMIC_RESP,
	USNIC_REL_PKT_STATUS, USNIC_REL_PKT_HELLO, USNIC_REL_PKT_PACKED,
};

/* The parser reads these types' payloads, in place. */
static bool wt_payload_parsed(u8 type)
{
	return type == USNIC_REL_PKT_ACK || type == USNIC_REL_PKT_PACKED;
}

static void wire_round_trip_every_type(struct kunit *test)
{
	struct usnic_rel_pkt in, out;
	u8 buf[WT_BUF];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wt_types); i++) {
		size_t len;

		wt_valid(&in, wt_types[i]);
		len = wt_encode(test, &in, buf);
		KUNIT_ASSERT_EQ_MSG(test, usnic_rel_wire_parse(buf, len, &out),
				    USNIC_REL_DROP_NONE, "type %u", wt_types[i]);
		KUNIT_EXPECT_EQ(test, out.type, in.type);
		KUNIT_EXPECT_EQ(test, out.channel, in.channel);
		KUNIT_EXPECT_EQ(test, out.flags, in.flags);
		KUNIT_EXPECT_EQ(test, out.src_incarnation, in.src_incarnation);
		KUNIT_EXPECT_EQ(test, out.dst_incarnation, in.dst_incarnation);
		KUNIT_EXPECT_EQ(test, out.seq, in.seq);
		KUNIT_EXPECT_EQ(test, out.ack, in.ack);
		KUNIT_EXPECT_EQ(test, out.sack, in.sack);
		KUNIT_EXPECT_EQ(test, out.payload_len, in.payload_len);
		KUNIT_EXPECT_EQ(test, out.payload_off, len - in.payload_len);
		/* Only an ACK's and a PACKED's payload is read, in place. */
		KUNIT_EXPECT_PTR_EQ(test, out.payload,
				    wt_payload_parsed(in.type) ?
				    (const void *)(buf + out.payload_off) : NULL);
		/* The decoded union must match what was encoded, byte for byte. */
		out.payload = NULL;
		out.payload_off = 0;
		KUNIT_EXPECT_EQ_MSG(test, memcmp(&in, &out, sizeof(in)), 0,
				    "type %u", wt_types[i]);
	}
}

static void wire_header_is_big_endian(struct kunit *test)
{
	struct usnic_rel_pkt p;
	u8 buf[WT_BUF];
	static const u8 head[] = {
		0x55, 0x53, 0x52, 0x4c,		/* "USRL" */
		USNIC_REL_WIRE_VERSION, USNIC_REL_PKT_ACK,
		USNIC_REL_CHAN_DATA, USNIC_REL_F_ACK,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
	};

	wt_valid(&p, USNIC_REL_PKT_ACK);
	KUNIT_ASSERT_EQ(test, wt_encode(test, &p, buf), sizeof(head));
	KUNIT_EXPECT_EQ(test, memcmp(buf, head, sizeof(head)), 0);
}

static void wire_truncated_at_every_length(struct kunit *test)
{
	struct usnic_rel_pkt p, out;
	u8 buf[WT_BUF];
	unsigned int i;
	size_t len, n;

	for (i = 0; i < ARRAY_SIZE(wt_types); i++) {
		wt_valid(&p, wt_types[i]);
		len = wt_encode(test, &p, buf);
		for (n = 0; n < len; n++)
			KUNIT_EXPECT_EQ_MSG(test,
					    usnic_rel_wire_parse(buf, n, &out),
					    USNIC_REL_DROP_TRUNCATED,
					    "type %u len %zu of %zu",
					    wt_types[i], n, len);
	}
}

/*
 * The receive path makes only usnic_rel_wire_head_len() bytes linear: the
 * parser must find all it reads there. Each datagram's head is copied to an
 * allocation of exactly that size, so KASAN sees any read past it; the data
 * payload must not be part of it.
 */
static void wire_parse_reads_only_head(struct kunit *test)
{
	struct usnic_rel_pkt p, full, out;
	u8 buf[WT_BUF], *head;
	unsigned int i;
	size_t len, n;

	for (i = 0; i < ARRAY_SIZE(wt_types); i++) {
		wt_valid(&p, wt_types[i]);
		if (p.type == USNIC_REL_PKT_ACK)
			p.payload_len = sizeof(struct usnic_rel_sack_block);
		len = wt_encode(test, &p, buf);
		if (p.type == USNIC_REL_PKT_ACK)
			usnic_rel_sack_block_put(buf + len - p.payload_len, 0,
						 70, 3);
		n = usnic_rel_wire_head_len(buf, len);
		KUNIT_EXPECT_EQ_MSG(test, n, wt_payload_parsed(p.type) ? len :
				    len - p.payload_len, "type %u", p.type);
		head = kunit_kmalloc(test, n, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, head);
		memcpy(head, buf, n);
		KUNIT_ASSERT_EQ(test, usnic_rel_wire_parse(buf, len, &full),
				USNIC_REL_DROP_NONE);
		KUNIT_ASSERT_EQ_MSG(test, usnic_rel_wire_parse(head, len, &out),
				    USNIC_REL_DROP_NONE, "type %u", p.type);
		if (wt_payload_parsed(p.type))
			KUNIT_EXPECT_EQ(test, memcmp(out.payload, full.payload,
						     p.payload_len), 0);
		out.payload = NULL;
		full.payload = NULL;
		KUNIT_EXPECT_EQ(test, memcmp(&out, &full, sizeof(out)), 0);
	}
	/* Shorter than a header: all of it; a bad type: the common header. */
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_head_len(buf, 7), 7);
	buf[5] = 0;
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_head_len(buf, len),
			sizeof(struct usnic_rel_hdr));
}

static void wire_build_refuses_bad_requests(struct kunit *test)
{
	struct usnic_rel_pkt p;
	u8 buf[WT_BUF];

	wt_valid(&p, USNIC_REL_PKT_DATA);
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_build(buf, 63, &p), 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_build(buf, 64, &p), 64);
	p.payload_len = USNIC_REL_WIRE_MAX_PAYLOAD + 1;
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_build(buf, WT_BUF, &p), 0);
	p.type = 0;
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_build(buf, WT_BUF, &p), 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_hdr_len(USNIC_REL_PKT_TYPE_MAX + 1),
			0);
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_hdr_len(USNIC_REL_PKT_ACK), 40);
}

static void wire_drop_reasons_have_names(struct kunit *test)
{
	unsigned int r;

	for (r = 0; r < USNIC_REL_DROP_MAX; r++)
		KUNIT_EXPECT_STRNEQ(test, usnic_rel_drop_reason_name(r),
				    "unknown");
	KUNIT_EXPECT_STREQ(test, usnic_rel_drop_reason_name(USNIC_REL_DROP_MAX),
			   "unknown");
}

static void wire_accepts_empty_message(struct kunit *test)
{
	struct usnic_rel_pkt p, out;
	u8 buf[WT_BUF];
	size_t len;

	wt_valid(&p, USNIC_REL_PKT_DATA);
	p.payload_len = 0;
	p.data.frag_offset = 0;
	p.data.msg_len = 0;
	len = wt_encode(test, &p, buf);
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_parse(buf, len, &out),
			USNIC_REL_DROP_NONE);
	KUNIT_EXPECT_EQ(test, out.payload_len, 0);
}

/* Overwrite one field of an encoded packet, big-endian. */
struct wt_poke {
	u8 off;
	u8 width;	/* 0: no poke */
	u64 val;
};

/*
 * One malformed packet per case: a valid packet of @type with up to two
 * fields overwritten and its length changed by @len_delta.
 */
struct wt_reject {
	const char *name;
	u8 type;
	struct wt_poke poke[2];
	int len_delta;
	enum usnic_rel_drop_reason want;
};

/* Offsets of fields in an encoded packet; widths are spelt out in the table. */
#define HDR(f) offsetof(struct usnic_rel_hdr, f)
#define TYP(s, f) (sizeof(struct usnic_rel_hdr) + offsetof(struct s, f))
#define DATA(f) TYP(usnic_rel_data_hdr, f)
#define PUT(f) TYP(usnic_rel_put_hdr, f)
#define GREQ(f) TYP(usnic_rel_get_req_hdr, f)
#define GRSP(f) TYP(usnic_rel_get_resp_hdr, f)
#define AREQ(f) TYP(usnic_rel_atomic_req_hdr, f)
#define ARSP(f) TYP(usnic_rel_atomic_resp_hdr, f)
#define STAT(f) TYP(usnic_rel_status_hdr, f)
#define HELO(f) TYP(usnic_rel_hello_hdr, f)
#define PKD(f) TYP(usnic_rel_packed_hdr, f)
#define REC(i, f) (PKD(count) + sizeof(struct usnic_rel_packed_hdr) + \
		   (i) * sizeof(struct usnic_rel_packed_rec) + \
		   offsetof(struct usnic_rel_packed_rec, f))

#define T_DATA USNIC_REL_PKT_DATA
#define T_ACK USNIC_REL_PKT_ACK
#define T_PUT USNIC_REL_PKT_PUT
#define T_GREQ USNIC_REL_PKT_GET_REQ
#define T_GRSP USNIC_REL_PKT_GET_RESP
#define T_AREQ USNIC_REL_PKT_ATOMIC_REQ
#define T_ARSP USNIC_REL_PKT_ATOMIC_RESP
#define T_STAT USNIC_REL_PKT_STATUS
#define T_HELO USNIC_REL_PKT_HELLO
#define T_PKD USNIC_REL_PKT_PACKED

static const struct wt_reject wt_rejects[] = {
	{ "bad_magic", T_DATA, {{ HDR(magic), 4, 0x5553524d }}, 0,
	  USNIC_REL_DROP_BAD_MAGIC },
	{ "version_0", T_DATA, {{ HDR(version), 1, 0 }}, 0,
	  USNIC_REL_DROP_BAD_VERSION },
	{ "version_1", T_DATA, {{ HDR(version), 1, 1 }}, 0,
	  USNIC_REL_DROP_BAD_VERSION },
	{ "version_next", T_DATA, {{ HDR(version), 1, USNIC_REL_WIRE_VERSION + 1 }}, 0,
	  USNIC_REL_DROP_BAD_VERSION },
	{ "type_0", T_DATA, {{ HDR(type), 1, 0 }}, 0, USNIC_REL_DROP_BAD_TYPE },
	{ "type_max_plus_1", T_DATA, {{ HDR(type), 1, USNIC_REL_PKT_TYPE_MAX + 1 }},
	  0, USNIC_REL_DROP_BAD_TYPE },
	{ "type_255", T_DATA, {{ HDR(type), 1, 255 }}, 0, USNIC_REL_DROP_BAD_TYPE },
	{ "channel_2", T_DATA, {{ HDR(channel), 1, USNIC_REL_NR_CHANS }}, 0,
	  USNIC_REL_DROP_BAD_CHANNEL },
	{ "unknown_flag", T_DATA, {{ HDR(flags), 1, USNIC_REL_F_ACK | 0x80 }}, 0,
	  USNIC_REL_DROP_BAD_FLAGS },
	{ "ack_without_f_ack", T_ACK, {{ HDR(flags), 1, USNIC_REL_F_ACK_REQ }}, 0,
	  USNIC_REL_DROP_BAD_FLAGS },
	{ "rnr_without_f_ack", T_DATA, {{ HDR(flags), 1, USNIC_REL_F_RNR }}, 0,
	  USNIC_REL_DROP_BAD_FLAGS },
	{ "ack_rnr_without_f_ack", T_ACK, {{ HDR(flags), 1, USNIC_REL_F_RNR }}, 0,
	  USNIC_REL_DROP_BAD_FLAGS },
	{ "held_without_rnr", T_ACK,
	  {{ HDR(flags), 1, USNIC_REL_F_ACK | USNIC_REL_F_HELD }}, 0,
	  USNIC_REL_DROP_BAD_FLAGS },
	{ "data_held_without_rnr", T_DATA,
	  {{ HDR(flags), 1, USNIC_REL_F_ACK | USNIC_REL_F_HELD }}, 0,
	  USNIC_REL_DROP_BAD_FLAGS },
	{ "ack_held", T_ACK, {{ HDR(flags), 1, USNIC_REL_F_ACK | USNIC_REL_F_RNR |
				 USNIC_REL_F_HELD }}, 0, USNIC_REL_DROP_NONE },
	{ "ack_persist_probe", T_ACK,
	  {{ HDR(flags), 1, USNIC_REL_F_ACK | USNIC_REL_F_ACK_REQ }}, 0,
	  USNIC_REL_DROP_NONE },
	{ "src_incarnation_0", T_DATA, {{ HDR(src_incarnation), 4, 0 }}, 0,
	  USNIC_REL_DROP_NO_INCARNATION },
	{ "hdr_reserved", T_DATA, {{ HDR(reserved), 2, 1 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "hdr_rx_limit_outside_hello", T_DATA, {{ HDR(rx_limit), 4, 0x80000000 }},
	  0, USNIC_REL_DROP_RESERVED },
	{ "ack_with_rx_limit", T_ACK, {{ HDR(rx_limit), 4, 4096 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "data_reserved", T_DATA, {{ DATA(reserved), 4, 1 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "put_unknown_flag", T_PUT, {{ PUT(flags), 4, 2 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "put_not_quiet", T_PUT, {{ PUT(flags), 4, 0 }}, 0,
	  USNIC_REL_DROP_NONE },
	{ "get_resp_quiet_after_first", T_GRSP, {{ GRSP(quiet), 4, 1 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "get_resp_quiet_first", T_GRSP,
	  {{ GRSP(quiet), 4, USNIC_REL_WIRE_MAX_QUIET }, { GRSP(frag_offset), 4, 0 }},
	  0, USNIC_REL_DROP_NONE },
	{ "get_resp_quiet_too_many", T_GRSP,
	  {{ GRSP(quiet), 4, USNIC_REL_WIRE_MAX_QUIET + 1 }, { GRSP(frag_offset), 4, 0 }},
	  0, USNIC_REL_DROP_RESERVED },
	{ "atomic_reserved", T_AREQ, {{ AREQ(reserved), 2, 1 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "atomic_resp_quiet_too_many", T_ARSP,
	  {{ ARSP(quiet), 4, USNIC_REL_WIRE_MAX_QUIET + 1 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "status_quiet_for_data", T_STAT,
	  {{ STAT(req_type), 1, T_DATA }, { STAT(quiet), 1, 1 }},
	  0, USNIC_REL_DROP_RESERVED },
	{ "status_quiet_max", T_STAT, {{ STAT(quiet), 1, USNIC_REL_WIRE_MAX_QUIET }},
	  0, USNIC_REL_DROP_NONE },
	{ "trailing_byte", T_DATA, {}, 1, USNIC_REL_DROP_BAD_LENGTH },
	{ "ack_trailing_byte", T_ACK, {}, 1, USNIC_REL_DROP_BAD_LENGTH },
	{ "payload_len_huge", T_DATA, {{ HDR(payload_len), 2, 0xffff }}, 0,
	  USNIC_REL_DROP_BAD_LENGTH },
	{ "ack_with_partial_sack_block", T_ACK, {{ HDR(payload_len), 2, 1 }}, 1,
	  USNIC_REL_DROP_BAD_SACK },
	{ "get_req_with_payload", T_GREQ, {{ HDR(payload_len), 2, 4 }}, 4,
	  USNIC_REL_DROP_BAD_LENGTH },
	{ "atomic_with_payload", T_AREQ, {{ HDR(payload_len), 2, 8 }}, 8,
	  USNIC_REL_DROP_BAD_LENGTH },
	{ "status_with_payload", T_STAT, {{ HDR(payload_len), 2, 1 }}, 1,
	  USNIC_REL_DROP_BAD_LENGTH },
	{ "data_frag_past_end", T_DATA, {{ DATA(frag_offset), 4, 49 }}, 0,
	  USNIC_REL_DROP_FRAG_RANGE },
	{ "data_frag_offset_wraps", T_DATA, {{ DATA(frag_offset), 4, 0xffffffff }},
	  0, USNIC_REL_DROP_FRAG_RANGE },
	{ "data_empty_fragment", T_DATA, {{ HDR(payload_len), 2, 0 }}, -WT_PAYLOAD,
	  USNIC_REL_DROP_BAD_LENGTH },
	{ "data_msg_too_big", T_DATA,
	  {{ DATA(msg_len), 4, USNIC_REL_WIRE_MAX_MSG + 1 }}, 0,
	  USNIC_REL_DROP_TOO_BIG },
	{ "put_frag_past_end", T_PUT, {{ PUT(frag_offset), 4, 1 }}, 0,
	  USNIC_REL_DROP_FRAG_RANGE },
	{ "put_op_too_big", T_PUT, {{ PUT(op_len), 4, USNIC_REL_WIRE_MAX_RDMA + 1 }},
	  0, USNIC_REL_DROP_TOO_BIG },
	{ "put_offset_wraps", T_PUT, {{ PUT(offset), 8, ~0ULL - 8 }}, 0,
	  USNIC_REL_DROP_ADDR_WRAP },
	{ "get_zero_length", T_GREQ, {{ GREQ(length), 4, 0 }}, 0,
	  USNIC_REL_DROP_BAD_LENGTH },
	{ "get_too_big", T_GREQ, {{ GREQ(length), 4, USNIC_REL_WIRE_MAX_RDMA + 1 }},
	  0, USNIC_REL_DROP_TOO_BIG },
	{ "get_offset_wraps", T_GREQ, {{ GREQ(offset), 8, ~0ULL }}, 0,
	  USNIC_REL_DROP_ADDR_WRAP },
	{ "get_resp_empty_op", T_GRSP, {{ GRSP(op_len), 4, 0 }}, 0,
	  USNIC_REL_DROP_BAD_LENGTH },
	{ "get_resp_past_end", T_GRSP, {{ GRSP(op_len), 4, 99999 }}, 0,
	  USNIC_REL_DROP_FRAG_RANGE },
	{ "atomic_op_0", T_AREQ, {{ AREQ(op), 1, 0 }}, 0,
	  USNIC_REL_DROP_BAD_ATOMIC },
	{ "atomic_op_4", T_AREQ, {{ AREQ(op), 1, 4 }}, 0,
	  USNIC_REL_DROP_BAD_ATOMIC },
	{ "atomic_size_2", T_AREQ, {{ AREQ(size), 1, 2 }}, 0,
	  USNIC_REL_DROP_BAD_ATOMIC },
	{ "atomic_size_16", T_AREQ, {{ AREQ(size), 1, 16 }}, 0,
	  USNIC_REL_DROP_BAD_ATOMIC },
	{ "atomic_unaligned", T_AREQ, {{ AREQ(offset), 8, 28 }}, 0,
	  USNIC_REL_DROP_BAD_ATOMIC },
	{ "atomic_operand_wider_than_32", T_AREQ, {{ AREQ(size), 1, 4 }}, 0,
	  USNIC_REL_DROP_BAD_ATOMIC },
	{ "atomic_32bit_ok", T_AREQ,
	  {{ AREQ(size), 1, 4 }, { AREQ(operand), 8, 1 }}, 0,
	  USNIC_REL_DROP_NONE },
	{ "atomic_compare_too_wide", T_AREQ,
	  {{ AREQ(size), 1, 4 }, { AREQ(compare), 8, 1ULL << 32 }}, 0,
	  USNIC_REL_DROP_BAD_ATOMIC },
	{ "atomic_fadd_with_compare", T_AREQ,
	  {{ AREQ(op), 1, USNIC_REL_ATOMIC_FADD }}, 0, USNIC_REL_DROP_BAD_ATOMIC },
	{ "status_unknown_code", T_STAT, {{ STAT(status), 2, USNIC_REL_ST_MAX + 1 }},
	  0, USNIC_REL_DROP_BAD_STATUS },
	{ "status_answers_data", T_STAT, {{ STAT(req_type), 1, T_DATA }}, 0,
	  USNIC_REL_DROP_BAD_STATUS },
	{ "status_too_big_for_data_ok", T_STAT,
	  {{ STAT(req_type), 1, T_DATA }, { STAT(status), 2, USNIC_REL_ST_TOO_BIG }},
	  0, USNIC_REL_DROP_NONE },
	{ "status_too_big_for_put", T_STAT,
	  {{ STAT(status), 2, USNIC_REL_ST_TOO_BIG }}, 0, USNIC_REL_DROP_BAD_STATUS },
	{ "status_ok_for_data", T_STAT,
	  {{ STAT(req_type), 1, T_DATA }, { STAT(status), 2, USNIC_REL_ST_OK }}, 0,
	  USNIC_REL_DROP_BAD_STATUS },
	{ "status_ok_for_get", T_STAT,
	  {{ STAT(req_type), 1, T_GREQ }, { STAT(status), 2, USNIC_REL_ST_OK }}, 0,
	  USNIC_REL_DROP_BAD_STATUS },
	{ "hello_no_cookie", T_HELO, {{ HELO(cookie), 8, 0 }}, 0,
	  USNIC_REL_DROP_BAD_HELLO },
	{ "hello_rx_limit_0", T_HELO, {{ HDR(rx_limit), 4, 0 }}, 0,
	  USNIC_REL_DROP_BAD_HELLO },
	{ "hello_rx_limit_over_max_msg", T_HELO,
	  {{ HDR(rx_limit), 4, USNIC_REL_WIRE_MAX_MSG + 1 }}, 0,
	  USNIC_REL_DROP_BAD_HELLO },
	{ "hello_rx_limit_max_msg_ok", T_HELO,
	  {{ HDR(rx_limit), 4, USNIC_REL_WIRE_MAX_MSG }}, 0, USNIC_REL_DROP_NONE },
	{ "hello_no_echo_ok", T_HELO, {{ HELO(echo), 8, 0 }}, 0,
	  USNIC_REL_DROP_NONE },
	{ "hello_with_seq", T_HELO, {{ HDR(seq), 4, 1 }}, 0,
	  USNIC_REL_DROP_BAD_HELLO },
	{ "hello_with_ack", T_HELO, {{ HDR(ack), 4, 1 }}, 0,
	  USNIC_REL_DROP_BAD_HELLO },
	{ "hello_with_sack", T_HELO, {{ HDR(sack), 8, 1 }}, 0,
	  USNIC_REL_DROP_BAD_HELLO },
	{ "hello_with_flag_ack", T_HELO, {{ HDR(flags), 1, USNIC_REL_F_ACK }}, 0,
	  USNIC_REL_DROP_BAD_HELLO },
	{ "hello_on_data_channel", T_HELO, {{ HDR(channel), 1, 1 }}, 0,
	  USNIC_REL_DROP_BAD_HELLO },
	{ "hello_with_payload", T_HELO, {{ HDR(payload_len), 2, 1 }}, 1,
	  USNIC_REL_DROP_BAD_LENGTH },
	{ "hello_truncated", T_HELO, {}, -1, USNIC_REL_DROP_TRUNCATED },
	{ "packed_count_0", T_PKD, {{ PKD(count), 2, 0 }}, 0,
	  USNIC_REL_DROP_BAD_PACKED },
	{ "packed_count_1", T_PKD, {{ PKD(count), 2, 1 }}, 0,
	  USNIC_REL_DROP_BAD_PACKED },
	{ "packed_count_over_max", T_PKD,
	  {{ PKD(count), 2, USNIC_REL_WIRE_PACKED_MAX + 1 }}, 0,
	  USNIC_REL_DROP_BAD_PACKED },
	{ "packed_records_past_payload", T_PKD, {{ PKD(count), 2, 3 }}, 0,
	  USNIC_REL_DROP_BAD_PACKED },
	{ "packed_reserved0", T_PKD, {{ PKD(reserved0), 2, 1 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "packed_reserved", T_PKD, {{ PKD(reserved), 4, 1 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "packed_record_reserved", T_PKD, {{ REC(1, reserved), 4, 1 }}, 0,
	  USNIC_REL_DROP_RESERVED },
	{ "packed_message_too_long", T_PKD,
	  {{ REC(0, len), 4, USNIC_REL_WIRE_PACKED_MSG_MAX + 1 }}, 0,
	  USNIC_REL_DROP_BAD_PACKED },
	{ "packed_message_len_wraps", T_PKD,
	  {{ REC(0, len), 4, 0xfffffffd }}, 0, USNIC_REL_DROP_BAD_PACKED },
	{ "packed_bytes_missing", T_PKD, {{ REC(0, len), 4, 6 }}, 0,
	  USNIC_REL_DROP_BAD_PACKED },
	{ "packed_bytes_left_over", T_PKD, {{ REC(0, len), 4, 4 }}, 0,
	  USNIC_REL_DROP_BAD_PACKED },
	{ "packed_empty_message_ok", T_PKD,
	  {{ REC(0, len), 4, 0 }, { REC(1, len), 4, 8 }}, 0, USNIC_REL_DROP_NONE },
	{ "packed_trailing_byte", T_PKD, {}, 1, USNIC_REL_DROP_BAD_LENGTH },
};

static void wt_reject_desc(const struct wt_reject *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(wt_reject, wt_rejects, wt_reject_desc);

static void wire_rejects_malformed(struct kunit *test)
{
	const struct wt_reject *r = test->param_value;
	struct usnic_rel_pkt p, out;
	u8 buf[WT_BUF];
	unsigned int i, b;
	size_t len;

	wt_valid(&p, r->type);
	len = wt_encode(test, &p, buf);
	for (i = 0; i < ARRAY_SIZE(r->poke); i++) {
		const struct wt_poke *k = &r->poke[i];

		for (b = 0; b < k->width; b++)
			buf[k->off + b] = k->val >> (8 * (k->width - 1 - b));
	}
	len += r->len_delta;
	KUNIT_EXPECT_EQ(test, usnic_rel_wire_parse(buf, len, &out), r->want);
}

/* Parse a standalone ACK whose payload is the @n blocks (start, len) of @b. */
static enum usnic_rel_drop_reason wt_parse_sack(struct kunit *test,
						const u32 (*b)[2], u32 n)
{
	struct usnic_rel_pkt p, out;
	u8 buf[sizeof(struct usnic_rel_hdr) + 40 * 8];
	size_t hlen;
	u32 i;

	wt_valid(&p, USNIC_REL_PKT_ACK);
	p.payload_len = n * sizeof(struct usnic_rel_sack_block);
	hlen = usnic_rel_wire_build(buf, sizeof(buf), &p);
	KUNIT_ASSERT_EQ(test, hlen, sizeof(struct usnic_rel_hdr));
	for (i = 0; i < n; i++)
		usnic_rel_sack_block_put(buf + hlen, i, b[i][0], b[i][1]);
	return usnic_rel_wire_parse(buf, hlen + p.payload_len, &out);
}

static void wire_sack_blocks(struct kunit *test)
{
	static const u32 ok[][2] = { { 65, 1 }, { 67, 10 }, { 100, 3900 } };
	static const u32 in_bitmap[][2] = { { 64, 2 } };
	static const u32 empty[][2] = { { 70, 0 } };
	static const u32 touching[][2] = { { 70, 5 }, { 75, 1 } };
	static const u32 overlapping[][2] = { { 70, 5 }, { 72, 10 } };
	static const u32 descending[][2] = { { 90, 1 }, { 70, 1 } };
	static const u32 far[][2] = { { USNIC_REL_WIRE_SACK_REACH - 2, 3 } };
	static const u32 wraps[][2] = { { 70, 0xfffffff0 } };
	static const u32 reach_ok[][2] = { { USNIC_REL_WIRE_SACK_REACH - 2, 2 } };
	u32 many[USNIC_REL_WIRE_SACK_BLOCKS + 1][2], i;
	struct usnic_rel_pkt p, out;
	u8 buf[sizeof(struct usnic_rel_hdr) + 3 * 8];
	u32 start, len;

	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, ok, 3), USNIC_REL_DROP_NONE);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, ok, 0), USNIC_REL_DROP_NONE);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, reach_ok, 1), USNIC_REL_DROP_NONE);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, in_bitmap, 1), USNIC_REL_DROP_BAD_SACK);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, empty, 1), USNIC_REL_DROP_BAD_SACK);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, touching, 2), USNIC_REL_DROP_BAD_SACK);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, overlapping, 2), USNIC_REL_DROP_BAD_SACK);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, descending, 2), USNIC_REL_DROP_BAD_SACK);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, far, 1), USNIC_REL_DROP_BAD_SACK);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, wraps, 1), USNIC_REL_DROP_BAD_SACK);
	for (i = 0; i < ARRAY_SIZE(many); i++) {
		many[i][0] = 65 + 2 * i;
		many[i][1] = 1;
	}
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, many, USNIC_REL_WIRE_SACK_BLOCKS),
			USNIC_REL_DROP_NONE);
	KUNIT_EXPECT_EQ(test, wt_parse_sack(test, many, USNIC_REL_WIRE_SACK_BLOCKS + 1),
			USNIC_REL_DROP_BAD_SACK);

	/* Round trip: the parsed payload is the blocks, in order. */
	wt_valid(&p, USNIC_REL_PKT_ACK);
	p.payload_len = 3 * 8;
	KUNIT_ASSERT_EQ(test, usnic_rel_wire_build(buf, sizeof(buf), &p), 40);
	for (i = 0; i < 3; i++)
		usnic_rel_sack_block_put(buf + 40, i, ok[i][0], ok[i][1]);
	KUNIT_ASSERT_EQ(test, usnic_rel_wire_parse(buf, sizeof(buf), &out),
			USNIC_REL_DROP_NONE);
	KUNIT_EXPECT_EQ(test, out.payload_len, 24);
	for (i = 0; i < 3; i++) {
		usnic_rel_sack_block_get(out.payload, i, &start, &len);
		KUNIT_EXPECT_EQ(test, start, ok[i][0]);
		KUNIT_EXPECT_EQ(test, len, ok[i][1]);
	}
}

static struct kunit_case usnic_rel_wire_cases[] = {
	KUNIT_CASE(wire_round_trip_every_type),
	KUNIT_CASE(wire_header_is_big_endian),
	KUNIT_CASE(wire_truncated_at_every_length),
	KUNIT_CASE(wire_parse_reads_only_head),
	KUNIT_CASE(wire_build_refuses_bad_requests),
	KUNIT_CASE(wire_drop_reasons_have_names),
	KUNIT_CASE(wire_accepts_empty_message),
	KUNIT_CASE(wire_sack_blocks),
	KUNIT_CASE_PARAM(wire_rejects_malformed, wt_reject_gen_params),
	{}
};

static struct kunit_suite usnic_rel_wire_suite = {
	.name = "usnic_rel_wire",
	.test_cases = usnic_rel_wire_cases,
};

kunit_test_suite(usnic_rel_wire_suite);
