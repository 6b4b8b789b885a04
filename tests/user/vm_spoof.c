// SPDX-License-Identifier: MIT
/*
 * In-VM test (run by spoof_veth.sh): an off-path attacker forges the source
 * address and port of a real peer. Two endpoints, A and B, in two network
 * namespaces joined by a veth pair exchange numbered messages both ways
 * while a third process sends A, from a send-only raw socket (it never sees
 * the pair's traffic), datagrams with B's address: DATA claiming a restart
 * (a new source incarnation, sequence 0, the reset-then-inject attack), DATA
 * guessing A's incarnation, ACKs, and HELLOs that do not echo A's cookie.
 *
 * What must hold: no send fails, every message of the real peer arrives once
 * and in order, nothing of the attacker's is delivered, the connection is
 * never reset, and A counts every forged packet as unverified, each answered
 * by a challenge or refused one by the rate or size limit.
 *
 *   vm_spoof node A|B LOCAL_IP LOCAL_PORT PEER_IP PEER_PORT DIR
 *   vm_spoof attack SRC_IP SRC_PORT DST_IP DST_PORT DIR [WIRE_VERSION]
 *
 * DIR holds the files the three processes meet by: A.paired, B.paired
 * (written once the pair talks), attack.done (the number of forged
 * datagrams, written by the attacker), A.end and B.end.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stddef.h>
#include <sys/random.h>
#include <time.h>

#include <uapi/usnic_rel_wire.h>

#include "urt.h"
#include "urt_csum.h"
#include "urt_ep.h"

#define MSG_LEN 24
#define END_IMM 0xe0d0e0d0ull
#define EVIL_IMM 0xe71e71ull
#define PER_KIND 40
#define DEADLINE_S 120

static const char *dir;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static void put_file(const char *name, long long val)
{
	char p[256];
	FILE *f;

	path_of(p, sizeof(p), name);
	f = fopen(p, "w");
	URT_CHECK(f != NULL);
	if (f) {
		fprintf(f, "%lld\n", val);
		fclose(f);
	}
}

/* The number in file @name, or -1 while it does not exist. */
static long long get_file(const char *name)
{
	char p[256];

	path_of(p, sizeof(p), name);
	return urt_file_number(p);
}

static uint32_t rnd32(void)
{
	uint32_t v;

	while (getrandom(&v, sizeof(v), 0) != sizeof(v))
		;
	return v;
}

static uint64_t rnd64(void)
{
	return (uint64_t)rnd32() << 32 | rnd32();
}

/* ---- the real endpoints ---- */

struct node {
	struct urt_ep ep;
	uint32_t peer;
	uint32_t sent, completed, received;
	int peer_ended;
};

static void node_send(struct node *n, uint64_t imm)
{
	uint8_t buf[MSG_LEN];

	for (uint32_t i = 0; i < MSG_LEN; i++)
		buf[i] = urt_pattern((uint32_t)imm, MSG_LEN, i);
	URT_CHECK_EQ(urt_send(&n->ep, USNIC_REL_CHAN_DATA, n->peer, buf, MSG_LEN, imm, imm), 0);
	n->sent++;
}

/* Take every completion there is, waiting up to @ms for the first. */
static void node_poll(struct node *n, int ms)
{
	struct usnic_rel_cqe cqe;

	while (!urt_cq_next(&n->ep, &cqe, ms)) {
		ms = 0;
		if (cqe.opcode == USNIC_REL_OP_SEND) {
			URT_CHECK_EQ(cqe.status, 0);
			n->completed++;
			continue;
		}
		URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_RECV);
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK_EQ(cqe.peer, n->peer);
		URT_CHECK(cqe.imm != EVIL_IMM);
		if (cqe.imm == END_IMM) {
			n->peer_ended = 1;
		} else {
			const uint8_t *b = urt_rx_buf(&n->ep, cqe.buf);
			int same = cqe.len == MSG_LEN;

			/* In order, once: message k carries imm k + 1. */
			URT_CHECK_EQ(cqe.imm, n->received + 1);
			for (uint32_t i = 0; same && i < MSG_LEN; i++)
				same = b[i] == urt_pattern((uint32_t)cqe.imm, MSG_LEN, i);
			URT_CHECK(same);
			n->received++;
		}
		urt_post_rx(&n->ep, cqe.buf);
		urt_doorbell(&n->ep, USNIC_REL_DB_RX);
	}
}

static int run_node(char **argv)
{
	const char *role = argv[0];
	char name[32];
	struct node n = { 0 };
	long long unverified0, challenges0, limited0, forged;
	double deadline = now_s() + DEADLINE_S;
	int fd = open("/dev/usnic_rel", O_RDWR);

	URT_CHECK(fd >= 0);
	if (fd < 0 || urt_ep_create(fd, AF_INET, argv[1], atoi(argv[2]), &n.ep))
		return urt_done("vm_spoof node");
	urt_post_all_rx(&n.ep);
	n.peer = urt_av_insert(&n.ep, AF_INET, argv[3], atoi(argv[4]));
	URT_CHECK(n.peer > 0);

	/*
	 * The pair talks before the attack starts: A opens (B may not exist
	 * yet, A's handshake retries), B answers once it heard from A.
	 */
	if (!strcmp(role, "A"))
		node_send(&n, 1);
	while (n.received < 1 && now_s() < deadline)
		node_poll(&n, 100);
	if (strcmp(role, "A"))
		node_send(&n, 1);
	while (n.completed < 1 && now_s() < deadline)
		node_poll(&n, 100);
	URT_CHECK_EQ(n.received, 1);
	URT_CHECK_EQ(n.completed, 1);
	unverified0 = urt_counter(n.ep.info.debug_id, "rx_unverified");
	challenges0 = urt_counter(n.ep.info.debug_id, "challenges_sent");
	limited0 = urt_counter(n.ep.info.debug_id, "challenges_limited");
	snprintf(name, sizeof(name), "%s.paired", role);
	put_file(name, 1);

	/* Talk all through the attack, and a little after it. */
	while (get_file("attack.done") < 0 && now_s() < deadline) {
		node_send(&n, n.sent + 1);
		node_poll(&n, 20);
	}
	for (int i = 0; i < 5; i++) {
		node_send(&n, n.sent + 1);
		node_poll(&n, 20);
	}
	node_send(&n, END_IMM);
	while ((!n.peer_ended || n.completed < n.sent) && now_s() < deadline)
		node_poll(&n, 100);
	URT_CHECK(n.peer_ended);
	URT_CHECK_EQ(n.completed, n.sent);
	printf("vm_spoof %s: sent %u received %u\n", role, n.sent - 1, n.received);

	/* The connection was never reset or re-paired. */
	URT_CHECK_EQ(urt_counter(n.ep.info.debug_id, "peer_resets"), 0);
	URT_CHECK_EQ(urt_counter(n.ep.info.debug_id, "handshakes_completed"), 1);
	URT_CHECK_EQ(urt_counter(n.ep.info.debug_id, "rx_stale_incarnation"), 0);
	forged = get_file("attack.done");
	if (!strcmp(role, "A")) {
		long long unverified =
			urt_counter(n.ep.info.debug_id, "rx_unverified") - unverified0;
		long long challenges =
			urt_counter(n.ep.info.debug_id, "challenges_sent") - challenges0;
		long long limited =
			urt_counter(n.ep.info.debug_id, "challenges_limited") - limited0;

		printf("vm_spoof A: forged %lld unverified %lld challenges %lld limited %lld\n",
		       forged, unverified, challenges, limited);
		/* Every forged datagram, and nothing of the real peer's. */
		URT_CHECK(forged > 0);
		URT_CHECK_EQ(unverified, forged);
		URT_CHECK_EQ(challenges + limited, forged);
		/* The 40-byte ACKs never get a 64-byte answer. */
		URT_CHECK(limited >= PER_KIND);
	}
	/* Do not tear down while the peer may still need our ACKs. */
	snprintf(name, sizeof(name), "%s.end", role);
	put_file(name, 1);
	snprintf(name, sizeof(name), "%s.end", strcmp(role, "A") ? "A" : "B");
	while (get_file(name) < 0 && now_s() < deadline)
		node_poll(&n, 50);
	urt_ep_unmap(&n.ep);
	close(fd);
	return urt_done(strcmp(role, "A") ? "vm_spoof B" : "vm_spoof A");
}

/* ---- the attacker ---- */

/* One forged datagram: the packet, type header and payload kept apart. */
struct forged {
	struct usnic_rel_hdr h;
	union {
		struct usnic_rel_data_hdr data;
		struct usnic_rel_hello_hdr hello;
	};
	char payload[4];
};

static int raw;
static struct sockaddr_in victim;
static struct in_addr spoofed;
static uint16_t spoofed_port;
static int wire_version;

/* Put IPv4 and UDP headers with the spoofed source in front and send it. */
static void forge_send(struct forged *f, size_t type_len, size_t payload_len)
{
	uint8_t buf[256];
	struct iphdr ip = { 0 };
	struct udphdr udp = { 0 };
	size_t udp_len = sizeof(udp) + sizeof(f->h) + type_len + payload_len;
	size_t off = 0;

	ip.version = 4;
	ip.ihl = 5;
	ip.ttl = 64;
	ip.protocol = IPPROTO_UDP;
	ip.saddr = spoofed.s_addr;
	ip.daddr = victim.sin_addr.s_addr;
	ip.tot_len = htons(sizeof(ip) + udp_len);
	udp.source = htons(spoofed_port);
	udp.dest = victim.sin_port;
	udp.len = htons(udp_len);
	f->h.magic = htonl(USNIC_REL_WIRE_MAGIC);
	f->h.version = wire_version;
	memcpy(buf + off, &ip, sizeof(ip));
	off += sizeof(ip);
	memcpy(buf + off, &udp, sizeof(udp));
	off += sizeof(udp);
	memcpy(buf + off, &f->h, sizeof(f->h));
	off += sizeof(f->h);
	memcpy(buf + off, &f->data, type_len);
	off += type_len;
	memcpy(buf + off, f->payload, payload_len);
	off += payload_len;
	/* A real checksum: a datagram without one is refused before any check. */
	udp.check = urt_udp4_csum(spoofed, victim.sin_addr, buf + sizeof(ip), udp_len);
	memcpy(buf + sizeof(ip) + offsetof(struct udphdr, check), &udp.check, 2);
	URT_CHECK_EQ(sendto(raw, buf, off, 0, (struct sockaddr *)&victim, sizeof(victim)),
		     (ssize_t)off);
	usleep(2000);
}

static void forge_data(uint32_t src, uint32_t dst, uint32_t seq)
{
	struct forged f = { 0 };

	f.h.type = USNIC_REL_PKT_DATA;
	f.h.channel = USNIC_REL_CHAN_DATA;
	f.h.src_incarnation = htonl(src);
	f.h.dst_incarnation = htonl(dst);
	f.h.seq = htonl(seq);
	f.h.payload_len = htons(4);
	f.data.msg_id = htonl(seq);
	f.data.msg_len = htonl(4);
	f.data.imm = htobe64(EVIL_IMM);
	memcpy(f.payload, "EVIL", 4);
	forge_send(&f, sizeof(f.data), 4);
}

static void forge_ack(void)
{
	struct forged f = { 0 };

	f.h.type = USNIC_REL_PKT_ACK;
	f.h.channel = rnd32() % USNIC_REL_NR_CHANS;
	f.h.flags = USNIC_REL_F_ACK;
	f.h.src_incarnation = htonl(rnd32() | 1);
	f.h.dst_incarnation = htonl(rnd32());
	f.h.ack = htonl(rnd32());
	f.h.sack = htobe64(rnd64());
	forge_send(&f, 0, 0);
}

static void forge_hello(uint32_t dst, uint64_t echo)
{
	struct forged f = { 0 };

	f.h.type = USNIC_REL_PKT_HELLO;
	f.h.flags = USNIC_REL_F_ACK_REQ;
	f.h.src_incarnation = htonl(rnd32() | 1);
	f.h.dst_incarnation = htonl(dst);
	f.h.rx_limit = htonl(65536);
	f.hello.cookie = htobe64(rnd64() | 1);
	f.hello.echo = htobe64(echo);
	f.hello.isn[0] = htonl(rnd32());
	f.hello.isn[1] = htonl(rnd32());
	forge_send(&f, sizeof(f.hello), 0);
}

static int run_attack(int argc, char **argv)
{
	double deadline = now_s() + DEADLINE_S;
	long long n = 0;

	URT_CHECK(inet_pton(AF_INET, argv[0], &spoofed) == 1);
	spoofed_port = atoi(argv[1]);
	victim.sin_family = AF_INET;
	URT_CHECK(inet_pton(AF_INET, argv[2], &victim.sin_addr) == 1);
	victim.sin_port = htons(atoi(argv[3]));
	wire_version = argc > 5 ? atoi(argv[5]) : USNIC_REL_WIRE_VERSION;
	/* Send-only: an IPPROTO_RAW socket receives nothing, we are off-path. */
	raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	URT_CHECK(raw >= 0);
	while ((get_file("A.paired") < 0 || get_file("B.paired") < 0) && now_s() < deadline)
		usleep(20000);
	for (int i = 0; i < PER_KIND && raw >= 0; i++) {
		uint32_t restart = rnd32() | 1;

		/* "I restarted": new incarnation, then its first message. */
		forge_data(restart, 0, 0);
		forge_data(restart, 0, 0);
		/* Guessing the victim's incarnation and a sequence number. */
		forge_data(rnd32() | 1, rnd32(), rnd32());
		forge_ack();
		/* A handshake without the victim's cookie. */
		forge_hello(rnd32(), rnd64());
		forge_hello(0, 0);
		n += 6;
	}
	put_file("attack.done", n);
	printf("vm_spoof attacker: %lld forged datagrams\n", n);
	return urt_done("vm_spoof attacker");
}

int main(int argc, char **argv)
{
	if (argc >= 8 && !strcmp(argv[1], "node")) {
		dir = argv[7];
		return run_node(argv + 2);
	}
	if (argc >= 7 && !strcmp(argv[1], "attack")) {
		dir = argv[6];
		return run_attack(argc - 2, argv + 2);
	}
	fprintf(stderr, "usage: vm_spoof node A|B IP PORT PEER_IP PEER_PORT DIR\n"
			"       vm_spoof attack SRC_IP SRC_PORT DST_IP DST_PORT DIR [VERSION]\n");
	return 2;
}
