// SPDX-License-Identifier: MIT
/*
 * In-VM test: debugfs ep<N>/peers tells an operator why a peer does not
 * talk. Each peer has a "handshake" line: idle (nothing sent yet),
 * hello_sent (our HELLO is unanswered: nobody there), packets from an
 * unverified incarnation (someone there who cannot prove itself), paired
 * (with the limit the peer announced, the incarnations matching the other
 * side's), and the cookie never shown.
 */
#include <stdlib.h>

#include <uapi/usnic_rel_wire.h>

#include "urt.h"
#include "urt_ep.h"

#define PORT_A 17331
#define PORT_SILENT 17332
#define PORT_B 17333

struct hs_line {
	char state[32];
	unsigned int local_inc, remote_inc, prev_inc, rx_limit, hellos_sent, hellos_rx, unverified,
		pairings;
	long long last_rx_ms;
};

/* Parse peer @handle's lines of ep<@debug_id>/peers; 0 or -ENOENT. */
static int hs_read(uint32_t debug_id, uint32_t handle, struct hs_line *h)
{
	char path[96], line[512];
	int found = -ENOENT, in_peer = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/usnic_rel/ep%u/peers", debug_id);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	memset(h, 0, sizeof(*h));
	while (fgets(line, sizeof(line), f)) {
		unsigned int hd;
		char state[32];

		/* The proof a peer must echo is nobody's business. */
		URT_CHECK(!strstr(line, "cookie"));
		if (sscanf(line, "peer %u %*s %31s incarnation %x", &hd, state, &h->remote_inc) ==
		    3) {
			in_peer = hd == handle;
			continue;
		}
		if (in_peer &&
		    sscanf(line,
			   " handshake %31s local_incarnation %x prev_incarnation %x peer_rx_limit "
			   "%u "
			   "hellos_sent %u hellos_received %u unverified %u pairings %u last_rx_ms "
			   "%lld",
			   h->state, &h->local_inc, &h->prev_inc, &h->rx_limit, &h->hellos_sent,
			   &h->hellos_rx, &h->unverified, &h->pairings, &h->last_rx_ms) == 9)
			found = 0;
	}
	fclose(f);
	return found;
}

/* Wait up to 10 s for peer @handle of @ep to show handshake state @state. */
static int hs_wait(struct urt_ep *ep, uint32_t handle, const char *state, struct hs_line *h)
{
	for (int i = 0; i < 1000; i++) {
		if (!hs_read(ep->info.debug_id, handle, h) && !strcmp(h->state, state))
			return 0;
		usleep(10000);
	}
	fprintf(stderr, "peer %u: handshake '%s', wanted '%s'\n", handle, h->state, state);
	return -ETIMEDOUT;
}

static int udp_bound(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 10 };
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	URT_CHECK_EQ(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	URT_CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	return s;
}

/* An empty message from incarnation @src, which A never paired with. */
static void send_unverified(int s, uint32_t src, uint32_t dst)
{
	struct {
		struct usnic_rel_hdr h;
		struct usnic_rel_data_hdr d;
	} p = {
		.h = { .magic = htonl(USNIC_REL_WIRE_MAGIC),
		       .version = USNIC_REL_WIRE_VERSION,
		       .type = USNIC_REL_PKT_DATA,
		       .src_incarnation = htonl(src),
		       .dst_incarnation = htonl(dst) },
	};
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(PORT_A) };

	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	URT_CHECK_EQ(sendto(s, &p, sizeof(p), 0, (struct sockaddr *)&to, sizeof(to)),
		     (ssize_t)sizeof(p));
}

int main(void)
{
	struct usnic_rel_cqe cqe;
	struct urt_ep a, b;
	struct hs_line h, hb;
	struct usnic_rel_hdr in;
	int fd = open("/dev/usnic_rel", O_RDWR);
	int silent = udp_bound(PORT_SILENT);
	int to_silent, to_b, to_a;

	URT_CHECK(fd >= 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_A, &a), 0);
	urt_post_all_rx(&a);
	to_silent = urt_av_insert(&a, AF_INET, "127.0.0.1", PORT_SILENT);
	URT_CHECK(to_silent > 0);

	/* Inserted, nothing sent: idle, nothing heard. */
	URT_CHECK_EQ(hs_read(a.info.debug_id, to_silent, &h), 0);
	URT_CHECK_EQ(strcmp(h.state, "idle"), 0);
	URT_CHECK_EQ(h.hellos_sent, 0);
	URT_CHECK_EQ(h.pairings, 0);
	URT_CHECK_EQ(h.last_rx_ms, -1);

	/* A send asks for a handshake that nobody answers. */
	URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, to_silent, "x", 1, 0, 1), 0);
	URT_CHECK_EQ(hs_wait(&a, to_silent, "hello_sent", &h), 0);
	URT_CHECK(h.hellos_sent >= 1);
	URT_CHECK_EQ(h.remote_inc, 0);
	/* The HELLO on the wire names the incarnation debugfs shows. */
	URT_CHECK(recv(silent, &in, sizeof(in), 0) >= (ssize_t)sizeof(in));
	URT_CHECK_EQ(in.type, USNIC_REL_PKT_HELLO);
	URT_CHECK_EQ(ntohl(in.src_incarnation), h.local_inc);

	/* Someone there who cannot prove itself: counted, still not paired. */
	send_unverified(silent, 0x5eed, h.local_inc);
	send_unverified(silent, 0x5eee, 0);
	for (int i = 0; i < 1000 && (hs_read(a.info.debug_id, to_silent, &h) || h.unverified < 2);
	     i++)
		usleep(10000);
	URT_CHECK_EQ(h.unverified, 2);
	URT_CHECK_EQ(strcmp(h.state, "hello_sent"), 0);
	URT_CHECK(h.last_rx_ms >= 0);

	/* A real peer pairs, and both sides agree on who is who. */
	URT_CHECK_EQ(urt_ep_create_rx(fd, AF_INET, "127.0.0.1", PORT_B, 4096, &b), 0);
	urt_post_all_rx(&b);
	to_b = urt_av_insert(&a, AF_INET, "127.0.0.1", PORT_B);
	to_a = urt_av_insert(&b, AF_INET, "127.0.0.1", PORT_A);
	URT_CHECK(to_b > 0 && to_a > 0);
	URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, to_b, "hi", 2, 0, 2), 0);
	URT_CHECK_EQ(urt_cq_next(&b, &cqe, 10000), 0);
	URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_RECV);
	URT_CHECK_EQ(hs_wait(&a, to_b, "paired", &h), 0);
	URT_CHECK_EQ(hs_wait(&b, to_a, "paired", &hb), 0);
	URT_CHECK_EQ(h.pairings, 1);
	URT_CHECK_EQ(h.rx_limit, 4096);
	URT_CHECK_EQ(hb.rx_limit, 65536);
	URT_CHECK(h.local_inc != 0 && h.local_inc == hb.remote_inc);
	URT_CHECK(hb.local_inc != 0 && hb.local_inc == h.remote_inc);
	URT_CHECK(h.hellos_rx >= 1 && hb.hellos_rx >= 1);
	URT_CHECK_EQ(h.unverified, 0);
	/*
	 * "hi" waited in the window for the pairing and left with it, as a
	 * first transmission (not at the first timeout, as a resend); the
	 * silent peer's "x" never left.
	 */
	URT_CHECK_EQ(urt_counter(a.info.debug_id, "tx_data_packets"), 1);
	/* The silent peer runs out of retries (about 10 s of backoff): dead. */
	for (int i = 0; i < 3000 && (hs_read(a.info.debug_id, to_silent, &h) ||
				     strcmp(h.state, "hello_sent") == 0);
	     i++)
		usleep(10000);
	URT_CHECK_EQ(strcmp(h.state, "dead"), 0);
	URT_CHECK_EQ(h.pairings, 0);
	/* Its send failed; the real peer's completed. */
	for (int n = 0; n < 2; n++) {
		URT_CHECK_EQ(urt_cq_next(&a, &cqe, 10000), 0);
		URT_CHECK_EQ(cqe.status, cqe.user_ctx == 1 ? -ETIMEDOUT : 0);
	}

	URT_CHECK_EQ(urt_ep_destroy(&b), 0);
	URT_CHECK_EQ(urt_ep_destroy(&a), 0);
	close(silent);
	close(fd);
	return urt_done("vm_peer_state");
}
