// SPDX-License-Identifier: MIT
/*
 * In-VM test: datagrams an endpoint did not ask for are dropped and counted,
 * never trusted: garbage, truncated or inconsistent headers (one of each kind
 * the wire format rules out), strangers, duplicates, sequence numbers far
 * outside the window, forged ACKs, packets for an earlier incarnation, and
 * anything from an address in the address vector before it completed the
 * handshake: well-formed data, a HELLO with a wrong echo. After a handshake
 * done by hand here, a well-formed packet is delivered and acknowledged.
 * Then checksums, from a raw socket: a datagram whose payload no longer
 * matches its UDP checksum is dropped by the stack (Udp InCsumErrors) before
 * the module sees it, one without a checksum (0, which IPv4 allows) is
 * refused by the module, and the same bytes rightly summed are delivered.
 * A header of another wire version from a peer is counted apart
 * (rx_bad_version) and named in the kernel log. An answer to one of the
 * endpoint's puts that says quiet puts went before it, when none did, is
 * dropped and completes nothing; the right answer then completes the put.
 * A receiver's "held" ACK (F_RNR | F_HELD: received, waiting for a buffer)
 * naming a packet never sent, or older than what was acknowledged, is
 * dropped; a true one completes nothing and resends nothing (the endpoint
 * asks again with a persist probe, a pure ACK with F_ACK_REQ); the ACK past
 * it then completes the send.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stddef.h>
#include <string.h>
#include <sys/klog.h>

#include <uapi/usnic_rel_wire.h>

#include "urt.h"
#include "urt_csum.h"
#include "urt_ep.h"

#define MY_INCARNATION 0x12345678u

static int sock, port;
/* The endpoint's incarnation of its connection to us, from its HELLO. */
static uint32_t ep_inc;

static int udp_send(int s, const void *buf, size_t len)
{
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};

	return sendto(s, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len ? 0
											  : -errno;
}

/* A DATA packet carrying "abcd" as message 0 of one fragment, imm 42. */
struct data_pkt {
	struct usnic_rel_hdr h;
	struct usnic_rel_data_hdr d;
	char payload[4];
};

/* The bytes on the wire: the structure's tail padding is not sent. */
#define PKT_LEN (offsetof(struct data_pkt, payload) + 4)

static void data_init(struct data_pkt *p, uint32_t seq)
{
	memset(p, 0, sizeof(*p));
	p->h.magic = htonl(USNIC_REL_WIRE_MAGIC);
	p->h.version = USNIC_REL_WIRE_VERSION;
	p->h.type = USNIC_REL_PKT_DATA;
	p->h.channel = USNIC_REL_CHAN_CMD;
	p->h.src_incarnation = htonl(MY_INCARNATION);
	p->h.dst_incarnation = htonl(ep_inc);
	p->h.seq = htonl(seq);
	p->h.payload_len = htons(4);
	p->d.msg_id = htonl(seq);
	p->d.msg_len = htonl(4);
	p->d.imm = htobe64(42);
	memcpy(p->payload, "abcd", 4);
}

/* Send a mutated copy of a good packet; it must be counted as a bad header. */
#define SEND_BAD(field, value)                                                                     \
	do {                                                                                       \
		struct data_pkt p_;                                                                \
		data_init(&p_, 0);                                                                 \
		p_.field = value;                                                                  \
		URT_CHECK_EQ(udp_send(sock, &p_, PKT_LEN), 0);                                     \
		bad++;                                                                             \
	} while (0)

struct hello_pkt {
	struct usnic_rel_hdr h;
	struct usnic_rel_hello_hdr x;
};

#define MY_COOKIE 0x1020304050607080ull

static void hello_send(uint32_t dst, uint64_t echo)
{
	struct hello_pkt p = {
		.h = { .magic = htonl(USNIC_REL_WIRE_MAGIC),
		       .version = USNIC_REL_WIRE_VERSION,
		       .type = USNIC_REL_PKT_HELLO,
		       .flags = USNIC_REL_F_ACK_REQ,
		       .src_incarnation = htonl(MY_INCARNATION),
		       .dst_incarnation = htonl(dst),
		       .rx_limit = htonl(65536) },
		.x = { .cookie = htobe64(MY_COOKIE), .echo = htobe64(echo) },
	};

	URT_CHECK_EQ(udp_send(sock, &p, sizeof(p)), 0);
}

/* Wait for a HELLO from the endpoint echoing @echo; returns its cookie or 0. */
static uint64_t recv_hello(uint64_t echo)
{
	struct timeval tv = { .tv_sec = 2 };
	struct hello_pkt p;

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (recv(sock, &p, sizeof(p), 0) > 0) {
		if (p.h.type != USNIC_REL_PKT_HELLO || be64toh(p.x.echo) != echo)
			continue;
		URT_CHECK_EQ(ntohl(p.h.dst_incarnation), MY_INCARNATION);
		URT_CHECK(p.h.src_incarnation != 0);
		ep_inc = ntohl(p.h.src_incarnation);
		return be64toh(p.x.cookie);
	}
	return 0;
}

/* Wait for the kernel's ACK to us and return its cumulative ACK, or -1. */
static long long recv_ack(uint32_t ep_incarnation)
{
	struct usnic_rel_hdr h;
	struct timeval tv = { .tv_sec = 2 };

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (recv(sock, &h, sizeof(h), 0) > 0) {
		if (h.type != USNIC_REL_PKT_ACK)
			continue;
		URT_CHECK_EQ(ntohl(h.src_incarnation), ep_incarnation);
		URT_CHECK_EQ(ntohl(h.dst_incarnation), MY_INCARNATION);
		URT_CHECK(h.flags & USNIC_REL_F_ACK);
		return ntohl(h.ack);
	}
	return -1;
}

struct put_pkt {
	struct usnic_rel_hdr h;
	struct usnic_rel_put_hdr p;
	uint8_t payload[8];
};

struct status_pkt {
	struct usnic_rel_hdr h;
	struct usnic_rel_status_hdr s;
};

/* Wait for the endpoint's PUT to us; its op_id, or -1. */
static long long recv_put(void)
{
	struct timeval tv = { .tv_sec = 2 };
	struct put_pkt p;

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (recv(sock, &p, sizeof(p), 0) > 0) {
		if (p.h.type == USNIC_REL_PKT_PUT)
			return ntohl(p.p.op_id);
	}
	return -1;
}

/* Our STATUS OK for the put @op_id, sequence @seq of our data channel, reporting @quiet. */
static void status_send(uint32_t seq, uint32_t op_id, uint8_t quiet)
{
	struct status_pkt p = {
		.h = { .magic = htonl(USNIC_REL_WIRE_MAGIC),
		       .version = USNIC_REL_WIRE_VERSION,
		       .type = USNIC_REL_PKT_STATUS,
		       .channel = USNIC_REL_CHAN_DATA,
		       .src_incarnation = htonl(MY_INCARNATION),
		       .dst_incarnation = htonl(ep_inc),
		       .seq = htonl(seq) },
		.s = { .op_id = htonl(op_id), .req_type = USNIC_REL_PKT_PUT, .quiet = quiet },
	};

	URT_CHECK_EQ(udp_send(sock, &p, sizeof(p)), 0);
}

/*
 * The endpoint puts 8 bytes to us (peer @peer). An answer counting a quiet
 * put before it, where there is none, is forged: dropped, nothing completes.
 * The answer without the count completes the put.
 */
static void forged_quiet_count(struct urt_ep *ep, uint32_t peer)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_PUT,
		.flags = USNIC_REL_SQE_INLINE,
		.peer = peer,
		.user_ctx = 77,
		.len = 8,
		.rkey = 0x1234,
	};
	long long bad = urt_counter(ep->info.debug_id, "rx_bad_header"), op_id;
	struct usnic_rel_cqe cqe;

	urt_queue_sqe(ep, USNIC_REL_CHAN_DATA, &sqe);
	URT_CHECK(urt_doorbell(ep, USNIC_REL_DB_SQ_DATA) >= 0);
	op_id = recv_put();
	URT_CHECK(op_id >= 0);
	/* Our HELLO announced 0 as the data channel's first sequence. */
	status_send(0, (uint32_t)op_id, 1);
	usleep(100000);
	URT_CHECK_EQ(urt_counter(ep->info.debug_id, "rx_bad_header"), bad + 1);
	URT_CHECK_EQ(urt_cq_next(ep, &cqe, 0), -ETIMEDOUT);
	status_send(1, (uint32_t)op_id, 0);
	if (urt_cq_next(ep, &cqe, 2000) == 0) {
		URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_PUT);
		URT_CHECK_EQ(cqe.user_ctx, 77);
		URT_CHECK_EQ(cqe.status, 0);
	} else {
		URT_CHECK(!"the put's answer did not complete it");
	}
	URT_CHECK_EQ(urt_counter(ep->info.debug_id, "rx_bad_header"), bad + 1);
}

/*
 * Wait for the endpoint's packet of type @type to us (any type for 0); its
 * header, or type 0.
 */
static struct usnic_rel_hdr recv_type(uint8_t type, int secs)
{
	struct timeval tv = { .tv_sec = secs };
	struct usnic_rel_hdr h = { 0 };
	uint8_t buf[2048];

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (recv(sock, buf, sizeof(buf), 0) >= (ssize_t)sizeof(h)) {
		memcpy(&h, buf, sizeof(h));
		if (h.type == type || !type)
			return h;
	}
	h.type = 0;
	return h;
}

/* Our standalone ACK of the endpoint's command channel. */
static void ack_send(uint32_t ack, uint8_t flags)
{
	struct usnic_rel_hdr h = {
		.magic = htonl(USNIC_REL_WIRE_MAGIC),
		.version = USNIC_REL_WIRE_VERSION,
		.type = USNIC_REL_PKT_ACK,
		.channel = USNIC_REL_CHAN_CMD,
		.flags = (uint8_t)(USNIC_REL_F_ACK | flags),
		.src_incarnation = htonl(MY_INCARNATION),
		.dst_incarnation = htonl(ep_inc),
		.ack = htonl(ack),
	};

	URT_CHECK_EQ(udp_send(sock, &h, sizeof(h)), 0);
}

/*
 * The endpoint sends us message 88 on its command channel (sequence S).
 * Held ACKs for S + 1 (never sent) and S - 1 (behind what it knows) are
 * dropped as bad ACKs; one for S is taken: nothing completes and nothing
 * is resent, and a persist probe asks us again. Our ACK of S + 1 then
 * completes the send, successfully.
 */
static void forged_hold(struct urt_ep *ep, uint32_t peer)
{
	const uint8_t held = USNIC_REL_F_RNR | USNIC_REL_F_HELD;
	long long bad_ack = urt_counter(ep->info.debug_id, "rx_bad_ack");
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND,
		.flags = USNIC_REL_SQE_INLINE,
		.peer = peer,
		.user_ctx = 88,
		.len = 4,
	};
	long long probes, resent = 0;
	int answered = 0;
	struct usnic_rel_cqe cqe;
	struct usnic_rel_hdr h;
	uint32_t s;

	urt_queue_sqe(ep, USNIC_REL_CHAN_CMD, &sqe);
	URT_CHECK(urt_doorbell(ep, USNIC_REL_DB_SQ_CMD) >= 0);
	h = recv_type(USNIC_REL_PKT_DATA, 2);
	URT_CHECK_EQ(h.type, USNIC_REL_PKT_DATA);
	if (h.type != USNIC_REL_PKT_DATA)
		return;
	s = ntohl(h.seq);
	ack_send(s + 1, held);
	ack_send(s - 1, held);
	usleep(100000);
	URT_CHECK_EQ(urt_counter(ep->info.debug_id, "rx_bad_ack"), bad_ack + 2);
	URT_CHECK_EQ(urt_cq_next(ep, &cqe, 0), -ETIMEDOUT);
	/*
	 * The true hold: no completion, and the held packet not sent again
	 * while each persist probe is answered at once, as the receiver would,
	 * holding it still (unanswered, it would go again after two). (The
	 * put above stays unacknowledged on the data channel: its resends
	 * are not counted.)
	 */
	probes = urt_counter(ep->info.debug_id, "persist_probes");
	ack_send(s, held);
	for (int i = 0; i < 500 && answered < 5; i++) {
		h = recv_type(0, 1);
		if (h.type == USNIC_REL_PKT_DATA && h.channel == USNIC_REL_CHAN_CMD)
			resent++;
		if (h.type != USNIC_REL_PKT_ACK || h.channel != USNIC_REL_CHAN_CMD ||
		    !(h.flags & USNIC_REL_F_ACK_REQ))
			continue;
		ack_send(s, held);
		answered++;
	}
	URT_CHECK_EQ(answered, 5);
	URT_CHECK_EQ(resent, 0);
	URT_CHECK_EQ(urt_cq_next(ep, &cqe, 0), -ETIMEDOUT);
	URT_CHECK_EQ(urt_counter(ep->info.debug_id, "rx_bad_ack"), bad_ack + 2);
	URT_CHECK(urt_counter(ep->info.debug_id, "persist_probes") >= probes + 5);
	URT_CHECK_EQ(urt_counter(ep->info.debug_id, "peers_dead"), 0);
	/* Delivered: the window update completes it. */
	ack_send(s + 1, 0);
	if (urt_cq_next(ep, &cqe, 2000) == 0) {
		URT_CHECK_EQ(cqe.user_ctx, 88);
		URT_CHECK_EQ(cqe.status, 0);
	} else {
		URT_CHECK(!"the ACK past the held packet did not complete its send");
	}
	URT_CHECK_EQ(urt_counter(ep->info.debug_id, "rx_bad_ack"), bad_ack + 2);
}

/* Udp InCsumErrors of /proc/net/snmp, or -1. */
static long long udp_csum_errors(void)
{
	char names[1024], vals[1024], *n, *v, *sn, *sv;
	long long ret = -1;
	FILE *f = fopen("/proc/net/snmp", "r");

	if (!f)
		return -1;
	while (fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		if (strncmp(names, "Udp: ", 5))
			continue;
		n = strtok_r(names, " \n", &sn);
		v = strtok_r(vals, " \n", &sv);
		while (n && v && strcmp(n, "InCsumErrors")) {
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
		if (n && v)
			ret = atoll(v);
		break;
	}
	fclose(f);
	return ret;
}

enum raw_csum {
	RAW_GOOD,
	RAW_CORRUPT,
	RAW_NONE
};

/* @p from our address and port, from a raw socket, with the checksum @how. */
static void raw_send(const struct data_pkt *p, uint16_t from_port, enum raw_csum how)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct udphdr u = { .source = from_port,
			    .dest = htons(port),
			    .len = htons(sizeof(u) + PKT_LEN) };
	uint8_t buf[sizeof(u) + PKT_LEN];
	int raw = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);

	URT_CHECK(raw >= 0);
	memcpy(buf, &u, sizeof(u));
	memcpy(buf + sizeof(u), p, PKT_LEN);
	if (how != RAW_NONE)
		u.check = urt_udp4_csum(to.sin_addr, to.sin_addr, buf, sizeof(buf));
	memcpy(buf + offsetof(struct udphdr, check), &u.check, 2);
	/* One payload bit flipped after summing: as on a bad link. */
	if (how == RAW_CORRUPT)
		buf[sizeof(buf) - 1] ^= 1;
	URT_CHECK_EQ(sendto(raw, buf, sizeof(buf), 0, (struct sockaddr *)&to, sizeof(to)),
		     (ssize_t)sizeof(buf));
	close(raw);
}

/* Lines of the kernel log that contain @needle. */
static int kernel_log_lines(const char *needle)
{
	static char log[1 << 20];
	int len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1), n = 0;

	URT_CHECK(len >= 0);
	if (len < 0)
		return -1;
	log[len] = 0;
	for (char *p = log; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

int main(void)
{
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t melen = sizeof(me);
	struct usnic_rel_cqe cqe;
	struct data_pkt good;
	char junk[256];
	struct urt_ep ep;
	int fd, stranger, bad = 0, version_lines, peer;
	uint64_t cookie;

	fd = open("/dev/usnic_rel", O_RDWR);
	sock = socket(AF_INET, SOCK_DGRAM, 0);
	stranger = socket(AF_INET, SOCK_DGRAM, 0);
	URT_CHECK(fd >= 0 && sock >= 0 && stranger >= 0);
	URT_CHECK_EQ(bind(sock, (struct sockaddr *)&me, sizeof(me)), 0);
	URT_CHECK_EQ(getsockname(sock, (struct sockaddr *)&me, &melen), 0);
	if (urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &ep))
		return urt_done("vm_forged");
	port = ep.info.addr.port;
	urt_post_all_rx(&ep);
	peer = urt_av_insert(&ep, AF_INET, "127.0.0.1", ntohs(me.sin_port));
	URT_CHECK(peer > 0);

	version_lines = kernel_log_lines("speaks wire version");
	/* Empty, garbage, and a header cut at every length. */
	URT_CHECK_EQ(udp_send(sock, junk, 0), 0);
	memset(junk, 0xff, sizeof(junk));
	URT_CHECK_EQ(udp_send(sock, junk, sizeof(junk)), 0);
	bad += 2;
	data_init(&good, 0);
	for (size_t n = 1; n < PKT_LEN; n += 7) {
		URT_CHECK_EQ(udp_send(sock, &good, n), 0);
		bad++;
	}
	/* The datagram is longer than its headers say. */
	memcpy(junk, &good, PKT_LEN);
	URT_CHECK_EQ(udp_send(sock, junk, PKT_LEN + 1), 0);
	bad++;
	/* One field at a time out of its range. */
	SEND_BAD(h.magic, 0);
	SEND_BAD(h.version, USNIC_REL_WIRE_VERSION + 1);
	SEND_BAD(h.type, 0);
	SEND_BAD(h.type, 99);
	SEND_BAD(h.channel, USNIC_REL_NR_CHANS);
	SEND_BAD(h.flags, 0x80);
	SEND_BAD(h.reserved, 1);
	SEND_BAD(h.payload_len, htons(5));
	SEND_BAD(d.reserved, 1);
	SEND_BAD(d.frag_offset, htonl(1));
	SEND_BAD(d.msg_len, htonl(3));
	SEND_BAD(d.msg_len, htonl(0x40000000));
	/* Well formed, from a sender not in the address vector. */
	URT_CHECK_EQ(udp_send(stranger, &good, PKT_LEN), 0);
	usleep(100000);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_bad_header"), bad);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_bad_version"), 1);
	URT_CHECK_EQ(kernel_log_lines("speaks wire version"), version_lines + 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_unknown_peer"), 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_packets"), 0);
	URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 0), -ETIMEDOUT);

	/* From the right address, but unverified: a challenge, no delivery. */
	URT_CHECK_EQ(udp_send(sock, &good, PKT_LEN), 0);
	cookie = recv_hello(0);
	URT_CHECK(cookie != 0);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_unverified"), 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "challenges_sent"), 1);
	/* A HELLO that does not echo the cookie pairs nothing. */
	hello_send(ep_inc, cookie ^ 1);
	usleep(100000);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_unverified"), 2);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "handshakes_completed"), 0);
	/* Data still unverified, even naming the endpoint's incarnation. */
	data_init(&good, 0);
	URT_CHECK_EQ(udp_send(sock, &good, PKT_LEN), 0);
	usleep(100000);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_unverified"), 3);
	URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 0), -ETIMEDOUT);
	/* The echo pairs us; the endpoint proves itself by echoing ours. */
	hello_send(ep_inc, cookie);
	URT_CHECK(recv_hello(MY_COOKIE) != 0);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "handshakes_completed"), 1);

	/* The real thing is delivered and acknowledged (ACK 1: seq 0 is in). */
	URT_CHECK_EQ(udp_send(sock, &good, PKT_LEN), 0);
	if (urt_cq_next(&ep, &cqe, 2000) == 0) {
		URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_RECV);
		URT_CHECK_EQ(cqe.len, 4);
		URT_CHECK_EQ(cqe.imm, 42);
		URT_CHECK(cqe.buf < ep.info.rx_bufs &&
			  !memcmp(urt_rx_buf(&ep, cqe.buf), "abcd", 4));
	} else {
		URT_CHECK(!"the well-formed packet was not delivered");
	}
	URT_CHECK_EQ(recv_ack(ep_inc), 1);

	/* The same packet again: a duplicate, answered at once, not delivered. */
	URT_CHECK_EQ(udp_send(sock, &good, PKT_LEN), 0);
	URT_CHECK_EQ(recv_ack(ep_inc), 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_duplicate"), 1);

	/* Far beyond the window. */
	data_init(&good, 1000000);
	URT_CHECK_EQ(udp_send(sock, &good, PKT_LEN), 0);
	URT_CHECK_EQ(recv_ack(ep_inc), 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_out_of_window"), 1);

	/* An ACK for packets the endpoint never sent us. */
	data_init(&good, 1);
	good.h.flags = USNIC_REL_F_ACK;
	good.h.ack = htonl(5);
	URT_CHECK_EQ(udp_send(sock, &good, PKT_LEN), 0);
	usleep(100000);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_bad_ack"), 1);

	/* Meant for an earlier incarnation of the endpoint. */
	data_init(&good, 2);
	good.h.dst_incarnation = htonl(ep_inc ^ 1);
	URT_CHECK_EQ(udp_send(sock, &good, PKT_LEN), 0);
	usleep(100000);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_stale_incarnation"), 1);

	/* Nothing of all that reached the completion ring but the one message... */
	int extra = 0;

	while (!urt_cq_next(&ep, &cqe, 200))
		extra++;
	/* ...except message 1, whose packet carried the forged ACK: still data. */
	URT_CHECK_EQ(extra, 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_messages"), 2);

	/* Message 2 (seq 2 is next, the stale one was not taken), corrupted. */
	long long csum_errors = udp_csum_errors(), rx_packets, bad_header;

	URT_CHECK(csum_errors >= 0);
	rx_packets = urt_counter(ep.info.debug_id, "rx_packets");
	bad_header = urt_counter(ep.info.debug_id, "rx_bad_header");
	data_init(&good, 2);
	raw_send(&good, me.sin_port, RAW_CORRUPT);
	usleep(100000);
	URT_CHECK_EQ(udp_csum_errors(), csum_errors + 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_packets"), rx_packets);
	/* No checksum: refused by the module, as a bad header. */
	raw_send(&good, me.sin_port, RAW_NONE);
	usleep(100000);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_bad_header"), bad_header + 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_packets"), rx_packets);
	URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 0), -ETIMEDOUT);
	/* The same bytes, rightly summed, from the same raw socket path. */
	raw_send(&good, me.sin_port, RAW_GOOD);
	if (urt_cq_next(&ep, &cqe, 2000) == 0) {
		URT_CHECK_EQ(cqe.len, 4);
		URT_CHECK(!memcmp(urt_rx_buf(&ep, cqe.buf), "abcd", 4));
	} else {
		URT_CHECK(!"the rightly summed packet was not delivered");
	}
	URT_CHECK_EQ(udp_csum_errors(), csum_errors + 1);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_messages"), 3);

	forged_quiet_count(&ep, (uint32_t)peer);
	forged_hold(&ep, (uint32_t)peer);

	urt_ep_unmap(&ep);
	close(fd);
	close(sock);
	close(stranger);
	return urt_done("vm_forged");
}
