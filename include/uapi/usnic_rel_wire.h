/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * usnic_rel: the wire format, carried in UDP datagrams between endpoints.
 *
 * Every datagram is exactly:
 *
 *	struct usnic_rel_hdr | type header (fixed size per type) | payload
 *
 * and its UDP payload length must equal the sum of the three; anything else
 * is dropped. All multi-byte fields are big-endian. Every field sits at its
 * natural alignment so no structure needs packing, and every reserved field
 * must be zero on the wire (receivers drop the packet otherwise, which keeps
 * them free for a later version).
 *
 * Reliability is per connection: each side draws a random 32-bit
 * incarnation for its connection to one peer (anew when the peer is inserted
 * in the address vector, and when it is declared dead). Two incarnations are
 * paired by a handshake of USNIC_REL_PKT_HELLO packets in which each side
 * echoes the other's random cookie, so that a peer is verified (it sees our
 * packets) before it may open, reset or re-open a connection. Each direction
 * of each channel has its own 32-bit sequence space starting at a random
 * initial sequence number announced in the sender's HELLO, compared only by
 * signed difference. Every type except USNIC_REL_PKT_ACK and
 * USNIC_REL_PKT_HELLO consumes one sequence number and is delivered in order
 * exactly once, and is accepted only from the paired incarnation to ours. Any
 * sequenced packet may piggy-back the acknowledgment of the reverse direction
 * of its channel (USNIC_REL_F_ACK).
 */
#ifndef _UAPI_USNIC_REL_WIRE_H
#define _UAPI_USNIC_REL_WIRE_H

#include <linux/types.h>

/* USNIC_REL_CHAN_*: the channels, shared with the ioctl ABI. */
#include "usnic_rel.h"

/* "USRL": first four bytes of every packet. */
#define USNIC_REL_WIRE_MAGIC		0x5553524cU
/* Bumped on any incompatible change; receivers drop other versions. */
#define USNIC_REL_WIRE_VERSION		8

/* Largest payload of one datagram: a 64 KiB UDP datagram less every header. */
#define USNIC_REL_WIRE_MAX_PAYLOAD	64512U
/*
 * Largest two-sided message (USNIC_REL_PKT_DATA). Bigger transfers go by
 * rendezvous over RDMA GET, which needs no reassembly buffer in the kernel.
 */
#define USNIC_REL_WIRE_MAX_MSG		0x100000U	/* 1 MiB */
/* Largest single PUT or GET operation. */
#define USNIC_REL_WIRE_MAX_RDMA		0x40000000U	/* 1 GiB */
/* Most messages one USNIC_REL_PKT_PACKED carries, and the longest of them. */
#define USNIC_REL_WIRE_PACKED_MAX	64
#define USNIC_REL_WIRE_PACKED_MSG_MAX	256
/* Bits in the selective-ACK bitmap. */
#define USNIC_REL_WIRE_SACK_BITS	64
/* Most SACK blocks (struct usnic_rel_sack_block) one standalone ACK carries. */
#define USNIC_REL_WIRE_SACK_BLOCKS	32
/* A SACK block ends at most this far past the cumulative ACK. */
#define USNIC_REL_WIRE_SACK_REACH	0x10000U
/*
 * Most quiet PUTs (USNIC_REL_PUT_F_QUIET) one answer reports as applied in
 * its @quiet field: the target answers the next one by itself instead.
 */
#define USNIC_REL_WIRE_MAX_QUIET	255U

enum usnic_rel_pkt_type {
	USNIC_REL_PKT_DATA		= 1,	/* message fragment */
	USNIC_REL_PKT_ACK		= 2,	/* standalone ACK, no sequence */
	USNIC_REL_PKT_PUT		= 3,	/* RDMA write fragment */
	USNIC_REL_PKT_GET_REQ		= 4,	/* RDMA read request */
	USNIC_REL_PKT_GET_RESP		= 5,	/* RDMA read data fragment */
	USNIC_REL_PKT_ATOMIC_REQ	= 6,	/* remote atomic request */
	USNIC_REL_PKT_ATOMIC_RESP	= 7,	/* remote atomic result */
	USNIC_REL_PKT_STATUS		= 8,	/* completion status / NAK */
	USNIC_REL_PKT_HELLO		= 9,	/* handshake, no sequence */
	USNIC_REL_PKT_PACKED		= 10,	/* several short messages */
	USNIC_REL_PKT_TYPE_MAX		= USNIC_REL_PKT_PACKED,
};

/* usnic_rel_hdr.flags */
#define USNIC_REL_F_ACK		0x01	/* ack and sack are valid */
#define USNIC_REL_F_ACK_REQ	0x02	/* please acknowledge at once */
/*
 * Receiver not ready, only with USNIC_REL_F_ACK: the packet at @ack came in
 * order and was dropped for want of a receive buffer or completion queue
 * room. Flow control, not loss: the sender keeps its congestion window.
 */
#define USNIC_REL_F_RNR		0x04
/*
 * Held, only with USNIC_REL_F_RNR: the packet at @ack came in order too, and
 * the receiver keeps it (with every one up to its next hole, SACKed) until
 * a receive buffer frees. Received, not delivered: the sender neither sends
 * it again nor completes it. A cumulative ACK past it follows the delivery.
 */
#define USNIC_REL_F_HELD	0x08
#define USNIC_REL_F_ALL		(USNIC_REL_F_ACK | USNIC_REL_F_ACK_REQ | \
				 USNIC_REL_F_RNR | USNIC_REL_F_HELD)

/**
 * struct usnic_rel_hdr - common header of every packet (40 bytes)
 * @magic: USNIC_REL_WIRE_MAGIC.
 * @version: USNIC_REL_WIRE_VERSION.
 * @type: enum usnic_rel_pkt_type; selects the type header that follows.
 * @channel: USNIC_REL_CHAN_*, below USNIC_REL_NR_CHANS; selects the
 *	sequence space.
 * @flags: USNIC_REL_F_*; unknown bits are rejected. USNIC_REL_PKT_ACK must
 *	carry USNIC_REL_F_ACK, and so must any packet with USNIC_REL_F_RNR;
 *	USNIC_REL_F_HELD comes only with USNIC_REL_F_RNR. A USNIC_REL_PKT_ACK
 *	with USNIC_REL_F_ACK_REQ asks for an ACK back (a persist probe, sent
 *	while the receiver holds what it was sent).
 * @src_incarnation: the sender's incarnation of its connection to the
 *	receiver, random, never 0 (dropped). A new value from a peer's address
 *	is only a claim: the receiver answers it with a HELLO challenge and
 *	changes nothing until the sender echoed that challenge.
 * @dst_incarnation: the receiver's incarnation as the sender knows it; 0 only
 *	in a HELLO sent before the sender heard from the receiver. A sequenced
 *	packet or ACK must name the receiver's current incarnation.
 * @seq: sequence number of this packet in (sender, channel). In a standalone
 *	ACK it is the sender's next sequence number and is only informational;
 *	zero in a HELLO.
 * @ack: cumulative ACK for the reverse direction of @channel: every sequence
 *	number before @ack was received and delivered (a send completes on
 *	it). Only valid with USNIC_REL_F_ACK.
 * @payload_len: bytes after the type header, at most
 *	USNIC_REL_WIRE_MAX_PAYLOAD.
 * @reserved: zero.
 * @rx_limit: in a HELLO, the largest message (USNIC_REL_PKT_DATA @msg_len)
 *	the sender receives, its receive buffer size, 1..USNIC_REL_WIRE_MAX_MSG:
 *	the receiver of the HELLO refuses longer sends to it locally. Zero in
 *	every other type.
 * @sack: selective ACK: bit i (LSB first) set means @ack + 1 + i was
 *	received. @ack itself is missing by definition. Only valid with
 *	USNIC_REL_F_ACK; bits naming sequences the receiver never sent make
 *	the whole acknowledgment invalid. A standalone ACK may describe what
 *	was received beyond the bitmap in SACK blocks, its payload.
 */
struct usnic_rel_hdr {
	__be32 magic;
	__u8 version;
	__u8 type;
	__u8 channel;
	__u8 flags;
	__be32 src_incarnation;
	__be32 dst_incarnation;
	__be32 seq;
	__be32 ack;
	__be16 payload_len;
	__be16 reserved;
	__be32 rx_limit;
	__be64 sack;
};

/**
 * struct usnic_rel_sack_block - the payload of a USNIC_REL_PKT_ACK is 0 to
 *	USNIC_REL_WIRE_SACK_BLOCKS of these: ranges of sequences received
 *	beyond the @sack bitmap (8 bytes)
 * @start: first sequence of the range, as its distance from @ack: more than
 *	USNIC_REL_WIRE_SACK_BITS (the bitmap covers the sequences before).
 * @len: sequences in the range, at least 1; @start + @len is at most
 *	USNIC_REL_WIRE_SACK_REACH.
 *
 * Blocks are in increasing order with a gap between any two. A receiver
 * holding more ranges than fit reports the rest in later ACKs, so the
 * sender learns the whole window; a block naming a sequence the sender
 * never sent makes the whole acknowledgment invalid.
 */
struct usnic_rel_sack_block {
	__be32 start;
	__be32 len;
};

/**
 * struct usnic_rel_data_hdr - USNIC_REL_PKT_DATA: one fragment of a message
 *	(24 bytes)
 * @msg_id: sender-chosen id, unique among the sender's incomplete messages
 *	on this channel.
 * @frag_offset: offset of the payload in the message.
 * @msg_len: length of the whole message, the same in every fragment, at most
 *	USNIC_REL_WIRE_MAX_MSG. @frag_offset + payload_len <= @msg_len, and a
 *	fragment is never empty unless the message is.
 * @reserved: zero.
 * @imm: opaque 64-bit immediate (the library's match bits), the same in every
 *	fragment and handed to the receiver with the completion.
 *
 * The fragments of a message take consecutive sequence numbers of one
 * sequence space (one life of the connection); nothing else is interleaved
 * with them on the channel. A message longer than the receiver's
 * @rx_limit (its HELLO) is never delivered: the receiver drops all its
 * fragments (and acknowledges them: the channel goes on) and answers its
 * first one with a USNIC_REL_PKT_STATUS USNIC_REL_ST_TOO_BIG whose @op_id
 * is the @msg_id; its sender completes it with an error, never as sent.
 * A sender whose connection resets part-way
 * never sends the rest in the new space: the send fails. A receiver that
 * sees a first fragment (@frag_offset 0) while a message on the channel is
 * incomplete gives the incomplete one up (its buffer is returned with an
 * error) and takes the new one: the channel never wedges. A later fragment
 * that does not continue the current message is dropped.
 */
struct usnic_rel_data_hdr {
	__be32 msg_id;
	__be32 frag_offset;
	__be32 msg_len;
	__be32 reserved;
	__be64 imm;
};

/**
 * struct usnic_rel_put_hdr - USNIC_REL_PKT_PUT: one fragment of an RDMA write
 *	(32 bytes)
 * @rkey: key of the target's memory registration.
 * @offset: byte offset of this fragment's payload in that registration
 *	(never a virtual address). @offset + payload_len must not wrap.
 * @op_id: initiator's operation id, echoed in USNIC_REL_PKT_STATUS.
 * @frag_offset: offset of the payload in the operation.
 * @op_len: length of the whole operation, at most USNIC_REL_WIRE_MAX_RDMA;
 *	@frag_offset + payload_len <= @op_len.
 * @flags: USNIC_REL_PUT_F_*, the same in every fragment; unknown bits are
 *	dropped.
 *
 * The target answers with one USNIC_REL_PKT_STATUS: an error for the first
 * fragment it refuses, or USNIC_REL_ST_OK after the last fragment
 * (@frag_offset + payload_len == @op_len). Fragments of one operation travel
 * on one channel, so they reach the target in order.
 *
 * A quiet PUT (USNIC_REL_PUT_F_QUIET) applied in full is not answered by
 * itself: the target counts it, and its next answer on the channel (to any
 * one-sided request; not a DATA refusal) says in @quiet how many quiet PUTs
 * were applied since its previous answer. The origin completes that many of
 * its oldest operations of the channel, each of which must be a quiet PUT,
 * before the one answered. A refused quiet PUT is answered with its error
 * STATUS as any other; one that would make the count exceed
 * USNIC_REL_WIRE_MAX_QUIET is answered with USNIC_REL_ST_OK. So a quiet
 * PUT completes only once a later answer proves the target applied it:
 * its origin must follow it with an answered request on the channel.
 */
struct usnic_rel_put_hdr {
	__be64 rkey;
	__be64 offset;
	__be32 op_id;
	__be32 frag_offset;
	__be32 op_len;
	__be32 flags;
};

/* usnic_rel_put_hdr.flags */
#define USNIC_REL_PUT_F_QUIET	0x1	/* answered by the next answer, unless refused */
#define USNIC_REL_PUT_F_ALL	USNIC_REL_PUT_F_QUIET

/**
 * struct usnic_rel_get_req_hdr - USNIC_REL_PKT_GET_REQ: RDMA read request,
 *	no payload (24 bytes)
 * @rkey: key of the target's memory registration.
 * @offset: byte offset of the first byte to read in that registration;
 *	@offset + @length must not wrap.
 * @op_id: initiator's operation id, echoed in the response.
 * @length: bytes to read, 1..USNIC_REL_WIRE_MAX_RDMA.
 *
 * The target answers with GET_RESP fragments on the same channel, or with one
 * USNIC_REL_PKT_STATUS error.
 */
struct usnic_rel_get_req_hdr {
	__be64 rkey;
	__be64 offset;
	__be32 op_id;
	__be32 length;
};

/**
 * struct usnic_rel_get_resp_hdr - USNIC_REL_PKT_GET_RESP: one fragment of read
 *	data (16 bytes)
 * @op_id: op_id of the request.
 * @frag_offset: offset of the payload in the operation.
 * @op_len: length of the request; @frag_offset + payload_len <= @op_len.
 * @quiet: quiet PUTs applied before the request (struct usnic_rel_put_hdr),
 *	at most USNIC_REL_WIRE_MAX_QUIET; zero unless @frag_offset is zero.
 */
struct usnic_rel_get_resp_hdr {
	__be32 op_id;
	__be32 frag_offset;
	__be32 op_len;
	__be32 quiet;
};

enum usnic_rel_atomic_op {
	USNIC_REL_ATOMIC_FADD	= 1,	/* *p += operand, returns old */
	USNIC_REL_ATOMIC_CAS	= 2,	/* if *p == compare: *p = operand; old */
	USNIC_REL_ATOMIC_SWAP	= 3,	/* *p = operand, returns old */
};

/**
 * struct usnic_rel_atomic_req_hdr - USNIC_REL_PKT_ATOMIC_REQ, no payload
 *	(40 bytes)
 * @rkey: key of the target's memory registration.
 * @offset: offset of the operand in the registration, a multiple of @size.
 * @op_id: initiator's operation id, echoed in the response.
 * @op: enum usnic_rel_atomic_op.
 * @size: operand width in bytes, 4 or 8.
 * @reserved: zero.
 * @operand: value to add or to store; below 2^32 when @size is 4.
 * @compare: CAS only, the expected value (below 2^32 when @size is 4);
 *	zero for other ops.
 *
 * The target answers with ATOMIC_RESP or one USNIC_REL_PKT_STATUS error.
 */
struct usnic_rel_atomic_req_hdr {
	__be64 rkey;
	__be64 offset;
	__be32 op_id;
	__u8 op;
	__u8 size;
	__be16 reserved;
	__be64 operand;
	__be64 compare;
};

/**
 * struct usnic_rel_atomic_resp_hdr - USNIC_REL_PKT_ATOMIC_RESP, no payload
 *	(16 bytes)
 * @op_id: op_id of the request.
 * @quiet: quiet PUTs applied before the request (struct usnic_rel_put_hdr),
 *	at most USNIC_REL_WIRE_MAX_QUIET.
 * @old: the value before the operation (zero-extended when 32-bit).
 */
struct usnic_rel_atomic_resp_hdr {
	__be32 op_id;
	__be32 quiet;
	__be64 old;
};

enum usnic_rel_wire_status {
	USNIC_REL_ST_OK			= 0,	/* PUT applied in full */
	USNIC_REL_ST_BAD_RKEY		= 1,	/* no such registration */
	USNIC_REL_ST_OUT_OF_BOUNDS	= 2,	/* range outside registration */
	USNIC_REL_ST_ACCESS		= 3,	/* registration forbids it */
	USNIC_REL_ST_UNALIGNED		= 4,	/* misaligned atomic operand */
	USNIC_REL_ST_NO_RESOURCES	= 5,	/* target out of memory */
	USNIC_REL_ST_TOO_BIG		= 6,	/* DATA: message over rx_limit */
	USNIC_REL_ST_MAX		= USNIC_REL_ST_TOO_BIG,
};

/**
 * struct usnic_rel_status_hdr - USNIC_REL_PKT_STATUS: outcome of a one-sided
 *	operation, or the refusal of a message; an error status is a NAK
 *	(8 bytes)
 * @op_id: op_id of the operation; @msg_id of a refused message.
 * @status: enum usnic_rel_wire_status; USNIC_REL_ST_TOO_BIG only, and
 *	always, when @req_type is USNIC_REL_PKT_DATA.
 * @req_type: type of the packet answered (PUT, GET_REQ, ATOMIC_REQ or
 *	DATA).
 * @quiet: quiet PUTs applied before the request (struct usnic_rel_put_hdr),
 *	at most USNIC_REL_WIRE_MAX_QUIET; zero when @req_type is DATA.
 */
struct usnic_rel_status_hdr {
	__be32 op_id;
	__be16 status;
	__u8 req_type;
	__u8 quiet;
};

/**
 * struct usnic_rel_hello_hdr - USNIC_REL_PKT_HELLO: handshake, no payload
 *	(24 bytes)
 * @cookie: the sender's challenge, random, never 0: a HELLO that echoes it
 *	proves its sender received a packet sent to its address.
 * @echo: the receiver's cookie as the sender last saw it, 0 if none.
 * @isn: the sender's initial sequence number on each channel for its
 *	current incarnation (@src_incarnation of the common header).
 *
 * The common header of a HELLO has channel 0, no flags and zero @seq, @ack
 * and @sack. A HELLO is verified when @dst_incarnation is the receiver's
 * incarnation and @echo its cookie; only a verified HELLO pairs the
 * receiver's connection with @src_incarnation (resetting what was paired
 * before) and sets its receive windows to @isn. Any other HELLO, and a
 * sequenced packet from an incarnation the receiver is not paired with, is
 * answered at most by one rate-limited HELLO that echoes its cookie, and
 * only when the trigger is at least as long as a HELLO (no amplification).
 */
struct usnic_rel_hello_hdr {
	__be64 cookie;
	__be64 echo;
	__be32 isn[USNIC_REL_NR_CHANS];
};

/**
 * struct usnic_rel_packed_hdr - USNIC_REL_PKT_PACKED: several whole short
 *	messages in one packet (8 bytes)
 * @count: messages in the packet, 2..USNIC_REL_WIRE_PACKED_MAX.
 * @reserved: zero.
 * The payload is @count struct usnic_rel_packed_rec, then the messages'
 * bytes back to back in the same order, nothing between or after them.
 * Each message is delivered as if it had come alone in a
 * USNIC_REL_PKT_DATA, in record order, and one acknowledgment of the packet
 * acknowledges them all. A sender packs messages it could have sent one
 * per packet, back to back on the channel: no message is ever split between
 * packets, and each is at most USNIC_REL_WIRE_PACKED_MSG_MAX bytes, which
 * every receive buffer holds (it is never refused as too long). A sender
 * packs only once the connection is paired.
 */
struct usnic_rel_packed_hdr {
	__be16 count;
	__be16 reserved0;
	__be32 reserved;
};

/**
 * struct usnic_rel_packed_rec - one message of a USNIC_REL_PKT_PACKED
 *	(16 bytes)
 * @len: its length, 0..USNIC_REL_WIRE_PACKED_MSG_MAX.
 * @reserved: zero.
 * @imm: its immediate, as struct usnic_rel_data_hdr's @imm.
 */
struct usnic_rel_packed_rec {
	__be32 len;
	__be32 reserved;
	__be64 imm;
};

#endif /* _UAPI_USNIC_REL_WIRE_H */
