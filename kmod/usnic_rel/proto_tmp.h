/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: PROVISIONAL packet header, to be replaced by the versioned wire
 * format of include/uapi/usnic_rel_wire.h. Only usnic_rel_pkt_build() and
 * usnic_rel_pkt_parse() know its layout, so the swap touches this file only.
 * It carries no sequence numbers: the path it serves is not reliable.
 */
#ifndef _USNIC_REL_PROTO_TMP_H
#define _USNIC_REL_PROTO_TMP_H

#include <linux/skbuff.h>
#include <linux/udp.h>

#define USNIC_REL_TMP_MAGIC	0x55525430	/* "URT0" */

struct usnic_rel_tmp_hdr {
	__be32 magic;
	u8 channel;
	u8 opcode;
	__be16 reserved;
	__be32 src_incarnation;
	__be32 len;
	__be64 imm;
} __packed;

#define USNIC_REL_PKT_HDR_LEN	sizeof(struct usnic_rel_tmp_hdr)

/* What the send path says about a packet and the receive path learns. */
struct usnic_rel_pkt_info {
	u8 channel;
	u8 opcode;
	u32 incarnation;
	u32 len;		/* payload bytes after the header */
	u64 imm;
};

static inline void usnic_rel_pkt_build(void *buf,
				       const struct usnic_rel_pkt_info *info)
{
	struct usnic_rel_tmp_hdr *hdr = buf;

	hdr->magic = cpu_to_be32(USNIC_REL_TMP_MAGIC);
	hdr->channel = info->channel;
	hdr->opcode = info->opcode;
	hdr->reserved = 0;
	hdr->src_incarnation = cpu_to_be32(info->incarnation);
	hdr->len = cpu_to_be32(info->len);
	hdr->imm = cpu_to_be64(info->imm);
}

/*
 * Parse the header following the UDP header of @skb (as encap_rcv sees it)
 * into @info. Returns the payload offset in @skb, or -EBADMSG for anything
 * malformed: truncated, wrong magic, unknown channel or opcode, length that
 * disagrees with the datagram.
 */
static inline int usnic_rel_pkt_parse(const struct sk_buff *skb,
				      struct usnic_rel_pkt_info *info)
{
	struct usnic_rel_tmp_hdr hdr;
	unsigned int off = sizeof(struct udphdr);

	if (skb_copy_bits(skb, off, &hdr, sizeof(hdr)))
		return -EBADMSG;
	if (be32_to_cpu(hdr.magic) != USNIC_REL_TMP_MAGIC || hdr.reserved ||
	    hdr.channel >= USNIC_REL_NR_CHANS || hdr.opcode != USNIC_REL_OP_SEND)
		return -EBADMSG;
	info->channel = hdr.channel;
	info->opcode = hdr.opcode;
	info->incarnation = be32_to_cpu(hdr.src_incarnation);
	info->len = be32_to_cpu(hdr.len);
	info->imm = be64_to_cpu(hdr.imm);
	off += sizeof(hdr);
	if (info->len != skb->len - off)
		return -EBADMSG;
	return off;
}

#endif /* _USNIC_REL_PROTO_TMP_H */
