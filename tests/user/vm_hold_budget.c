// SPDX-License-Identifier: MIT
/*
 * In-VM test (run by rx_hold_budget.sh, module loaded with
 * max_rx_held_kb_per_user=1024): packets an endpoint holds out of order are
 * charged to its owner over all the owner's endpoints. Two peers, paired by
 * hand, each talk to one of two endpoints of this user and leave a gap at
 * sequence 0 so that everything after it is held. The first endpoint holds
 * until the user's 1 MiB is used and then refuses (rx_hold_user_full); the
 * second, holding nothing itself, refuses too. Once the gap fills, the
 * first delivers what it held, in order, the charge goes back, and the
 * second holds again.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>

#include <uapi/usnic_rel_wire.h>

#include "urt.h"
#include "urt_ep.h"

#define PAYLOAD 8000
#define N1 200
#define N2 20
#define MY_COOKIE 0x0b0d9e7c0ffee001ull

struct fake_peer {
	int sock;
	uint16_t ep_port;
	uint32_t my_inc;
	uint32_t ep_inc;
};

struct hello_pkt {
	struct usnic_rel_hdr h;
	struct usnic_rel_hello_hdr x;
};

static void peer_send(struct fake_peer *p, const void *buf, size_t len)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(p->ep_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	URT_CHECK_EQ(sendto(p->sock, buf, len, 0, (struct sockaddr *)&to, sizeof(to)),
		     (ssize_t)len);
}

static void hello_send(struct fake_peer *p, uint32_t dst, uint64_t echo)
{
	struct hello_pkt h = {
		.h = { .magic = htonl(USNIC_REL_WIRE_MAGIC),
		       .version = USNIC_REL_WIRE_VERSION,
		       .type = USNIC_REL_PKT_HELLO,
		       .flags = USNIC_REL_F_ACK_REQ,
		       .src_incarnation = htonl(p->my_inc),
		       .dst_incarnation = htonl(dst),
		       .rx_limit = htonl(65536) },
		.x = { .cookie = htobe64(MY_COOKIE), .echo = htobe64(echo) },
	};

	peer_send(p, &h, sizeof(h));
}

/* The endpoint's HELLO echoing @echo: its cookie (0 if none came). */
static uint64_t hello_recv(struct fake_peer *p, uint64_t echo)
{
	struct timeval tv = { .tv_sec = 2 };
	struct hello_pkt h;

	setsockopt(p->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (recv(p->sock, &h, sizeof(h), 0) > 0) {
		if (h.h.type != USNIC_REL_PKT_HELLO || be64toh(h.x.echo) != echo)
			continue;
		p->ep_inc = ntohl(h.h.src_incarnation);
		return be64toh(h.x.cookie);
	}
	return 0;
}

/* Insert a fake peer into @ep and pair with it by hand; its sequences start at 0. */
static void peer_pair(struct urt_ep *ep, struct fake_peer *p, uint32_t inc)
{
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(me);
	uint64_t cookie;

	p->sock = socket(AF_INET, SOCK_DGRAM, 0);
	URT_CHECK_EQ(bind(p->sock, (struct sockaddr *)&me, sizeof(me)), 0);
	URT_CHECK_EQ(getsockname(p->sock, (struct sockaddr *)&me, &len), 0);
	p->ep_port = ep->info.addr.port;
	p->my_inc = inc;
	URT_CHECK(urt_av_insert(ep, AF_INET, "127.0.0.1", ntohs(me.sin_port)) > 0);
	/* Ask for its challenge, then echo it. */
	hello_send(p, 0, 0);
	cookie = hello_recv(p, MY_COOKIE);
	URT_CHECK(cookie != 0);
	hello_send(p, p->ep_inc, cookie);
	for (int i = 0; i < 200 && urt_counter(ep->info.debug_id, "handshakes_completed") < 1; i++)
		usleep(10000);
	URT_CHECK_EQ(urt_counter(ep->info.debug_id, "handshakes_completed"), 1);
}

/* Message @seq of one fragment at sequence @seq. */
static void data_send(struct fake_peer *p, uint32_t seq)
{
	static struct {
		struct usnic_rel_hdr h;
		struct usnic_rel_data_hdr d;
		uint8_t payload[PAYLOAD];
	} pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.h.magic = htonl(USNIC_REL_WIRE_MAGIC);
	pkt.h.version = USNIC_REL_WIRE_VERSION;
	pkt.h.type = USNIC_REL_PKT_DATA;
	pkt.h.channel = USNIC_REL_CHAN_DATA;
	pkt.h.src_incarnation = htonl(p->my_inc);
	pkt.h.dst_incarnation = htonl(p->ep_inc);
	pkt.h.seq = htonl(seq);
	pkt.h.payload_len = htons(PAYLOAD);
	pkt.d.msg_id = htonl(seq);
	pkt.d.msg_len = htonl(PAYLOAD);
	pkt.d.imm = htobe64(seq);
	memset(pkt.payload, (int)(seq & 0xff), PAYLOAD);
	peer_send(p, &pkt, sizeof(pkt));
}

static long long cnt(struct urt_ep *ep, const char *name)
{
	return urt_counter(ep->info.debug_id, name);
}

/* Wait until @ep has held or refused @n packets in all. */
static void wait_seen(struct urt_ep *ep, long long n)
{
	for (int i = 0; i < 1000; i++) {
		if (cnt(ep, "rx_out_of_order") + cnt(ep, "rx_hold_user_full") +
			    cnt(ep, "rx_hold_full") >=
		    n)
			return;
		usleep(10000);
	}
}

int main(void)
{
	struct usnic_rel_cqe cqe;
	struct fake_peer p1, p2;
	struct urt_ep e1, e2;
	long long held1;
	uint32_t got = 0;
	int fd = open("/dev/usnic_rel", O_RDWR);

	URT_CHECK(fd >= 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &e1), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &e2), 0);
	urt_post_all_rx(&e1);
	urt_post_all_rx(&e2);
	peer_pair(&e1, &p1, 0x1001);
	peer_pair(&e2, &p2, 0x2002);

	/* A gap at 0: everything after it waits, until the user's budget is used. */
	for (uint32_t s = 1; s <= N1; s++)
		data_send(&p1, s);
	wait_seen(&e1, N1);
	held1 = cnt(&e1, "rx_out_of_order");
	printf("vm_hold_budget: ep1 holds %lld of %d packets of %d bytes, refuses %lld\n", held1,
	       N1, PAYLOAD, cnt(&e1, "rx_hold_user_full"));
	URT_CHECK(held1 > 0);
	URT_CHECK(cnt(&e1, "rx_hold_user_full") > 0);
	URT_CHECK_EQ(held1 + cnt(&e1, "rx_hold_user_full"), N1);
	/* Far below the endpoint's own 32 MiB: the user's budget refused them. */
	URT_CHECK_EQ(cnt(&e1, "rx_hold_full"), 0);

	/* The other endpoint holds nothing, but its owner has no budget left. */
	for (uint32_t s = 1; s <= N2; s++)
		data_send(&p2, s);
	wait_seen(&e2, N2);
	URT_CHECK_EQ(cnt(&e2, "rx_hold_user_full"), N2);
	URT_CHECK_EQ(cnt(&e2, "rx_out_of_order"), 0);

	/* The gap fills: what was held is delivered in order and uncharged. */
	data_send(&p1, 0);
	while (got <= held1 && !urt_cq_next(&e1, &cqe, 5000)) {
		URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_RECV);
		URT_CHECK_EQ(cqe.imm, got);
		URT_CHECK_EQ(cqe.len, PAYLOAD);
		URT_CHECK_EQ(((const uint8_t *)urt_rx_buf(&e1, cqe.buf))[PAYLOAD - 1], got & 0xff);
		urt_post_rx(&e1, cqe.buf);
		got++;
	}
	URT_CHECK_EQ(got, held1 + 1);
	URT_CHECK_EQ(urt_doorbell(&e1, USNIC_REL_DB_RX) >= 0, 1);

	/* With the budget back, the second endpoint holds what comes again. */
	for (uint32_t s = 1; s <= N2; s++)
		data_send(&p2, s);
	wait_seen(&e2, 2 * N2);
	URT_CHECK_EQ(cnt(&e2, "rx_out_of_order"), N2);
	URT_CHECK_EQ(cnt(&e2, "rx_hold_user_full"), N2);

	/* Teardown frees the held packets and their charge (the module warns if not). */
	URT_CHECK_EQ(urt_ep_destroy(&e2), 0);
	URT_CHECK_EQ(urt_ep_destroy(&e1), 0);
	close(p1.sock);
	close(p2.sock);
	close(fd);
	return urt_done("vm_hold_budget");
}
