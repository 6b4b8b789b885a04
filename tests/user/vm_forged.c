// SPDX-License-Identifier: MIT
/*
 * In-VM test: datagrams an endpoint did not ask for (garbage, truncated
 * headers, lengths that lie, strangers) are dropped and counted, and a
 * well-formed message still gets through afterwards.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>

#include "urt.h"
#include "urt_ep.h"

/* The provisional header of kmod/usnic_rel/proto_tmp.h (to be replaced). */
struct tmp_hdr {
	uint32_t magic;
	uint8_t channel;
	uint8_t opcode;
	uint16_t reserved;
	uint32_t incarnation;
	uint32_t len;
	uint64_t imm;
} __attribute__((packed));

static int udp_send(int s, uint16_t port, const void *buf, size_t len)
{
	struct sockaddr_in to = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};

	return sendto(s, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len ?
	       0 : -errno;
}

int main(void)
{
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t melen = sizeof(me);
	struct usnic_rel_cqe cqe;
	struct tmp_hdr h = { 0 };
	char pkt[2048] = { 0 };
	struct urt_ep ep;
	int fd, s, stranger;
	uint16_t port;

	fd = open("/dev/usnic_rel", O_RDWR);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	stranger = socket(AF_INET, SOCK_DGRAM, 0);
	URT_CHECK(fd >= 0 && s >= 0 && stranger >= 0);
	URT_CHECK_EQ(bind(s, (struct sockaddr *)&me, sizeof(me)), 0);
	URT_CHECK_EQ(getsockname(s, (struct sockaddr *)&me, &melen), 0);
	if (urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &ep))
		return urt_done("vm_forged");
	port = ep.info.addr.port;
	urt_post_all_rx(&ep);
	URT_CHECK(urt_av_insert(&ep, AF_INET, "127.0.0.1", ntohs(me.sin_port)) > 0);

	h.magic = htonl(0x55525430);
	h.opcode = USNIC_REL_OP_SEND;
	h.len = htonl(4);
	h.imm = htobe64(42);

	/* Empty, garbage, truncated header. */
	URT_CHECK_EQ(udp_send(s, port, pkt, 0), 0);
	memset(pkt, 0xff, 64);
	URT_CHECK_EQ(udp_send(s, port, pkt, 64), 0);
	URT_CHECK_EQ(udp_send(s, port, &h, sizeof(h) - 1), 0);
	/* Length says 4, datagram carries 3 or 5. */
	memcpy(pkt, &h, sizeof(h));
	URT_CHECK_EQ(udp_send(s, port, pkt, sizeof(h) + 3), 0);
	URT_CHECK_EQ(udp_send(s, port, pkt, sizeof(h) + 5), 0);
	/* Unknown channel, unknown opcode, reserved bits. */
	((struct tmp_hdr *)pkt)->channel = 2;
	URT_CHECK_EQ(udp_send(s, port, pkt, sizeof(h) + 4), 0);
	((struct tmp_hdr *)pkt)->channel = 0;
	((struct tmp_hdr *)pkt)->opcode = 200;
	URT_CHECK_EQ(udp_send(s, port, pkt, sizeof(h) + 4), 0);
	((struct tmp_hdr *)pkt)->opcode = USNIC_REL_OP_SEND;
	((struct tmp_hdr *)pkt)->reserved = 1;
	URT_CHECK_EQ(udp_send(s, port, pkt, sizeof(h) + 4), 0);
	/* Longer than the command channel's MTU. */
	((struct tmp_hdr *)pkt)->reserved = 0;
	((struct tmp_hdr *)pkt)->len = htonl(1000);
	URT_CHECK_EQ(udp_send(s, port, pkt, sizeof(h) + 1000), 0);
	/* Well formed, from a sender not in the address vector. */
	((struct tmp_hdr *)pkt)->len = htonl(4);
	URT_CHECK_EQ(udp_send(stranger, port, pkt, sizeof(h) + 4), 0);
	usleep(50000);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_bad_header"), 9);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_unknown_peer"), 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_packets"), 0);
	URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 0), -ETIMEDOUT);

	/* And the real thing is delivered. */
	memcpy(pkt + sizeof(h), "abcd", 4);
	URT_CHECK_EQ(udp_send(s, port, pkt, sizeof(h) + 4), 0);
	URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 1000), 0);
	URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_RECV);
	URT_CHECK_EQ(cqe.len, 4);
	URT_CHECK_EQ(cqe.imm, 42);
	URT_CHECK(!memcmp(urt_rx_buf(&ep, cqe.buf), "abcd", 4));
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_packets"), 1);
	urt_ep_unmap(&ep);
	close(fd);
	close(s);
	close(stranger);
	return urt_done("vm_forged");
}
