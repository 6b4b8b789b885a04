// SPDX-License-Identifier: MIT
/*
 * In-VM test (run by peer_recover.sh with the module parameters each case
 * needs): a pair of endpoints that lost their connection state talks again.
 *
 *   reinsert  AV_REMOVE + AV_INSERT of a live peer on one side: the sends
 *             outstanding at the removal complete with -ECANCELED, the
 *             re-inserted side starts a new epoch that the other side
 *             accepts through the handshake, and traffic flows both ways
 *             with no failure; then the same on both sides at once.
 *   dead      a peer declared dead by the retry limit (its endpoint drops
 *             everything it sends, by fault injection) comes back: sends
 *             fail at once while it is dead, and succeed again once it
 *             answers.
 *   stall     a peer that acknowledges one packet per retransmission
 *             timeout, never letting the retry limit pass, is declared dead
 *             by stall_timeout_ms: what it left unacknowledged fails with
 *             -ETIMEDOUT and peers_stalled counts it.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <time.h>

#include <uapi/usnic_rel_wire.h>

#include "urt.h"
#include "urt_ep.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int av_remove(struct urt_ep *ep, uint32_t peer)
{
	struct usnic_rel_av_remove arg = { .size = sizeof(arg),
					   .ep_id = ep->info.ep_id,
					   .peer = peer };

	return urt_ioctl(ep->fd, USNIC_REL_IOC_AV_REMOVE, &arg);
}

static long long cnt(struct urt_ep *ep, const char *name)
{
	return urt_counter(ep->info.debug_id, name);
}

/* Send @n messages from @a to @b (handle @peer there) and check all arrive. */
static void exchange(struct urt_ep *a, uint32_t peer, struct urt_ep *b, int n, uint64_t tag)
{
	struct usnic_rel_cqe cqe;
	int sent_ok = 0, got = 0;
	double deadline = now_s() + 30;

	for (int i = 0; i < n; i++) {
		char msg[16];

		snprintf(msg, sizeof(msg), "m%llu.%d", (unsigned long long)tag, i);
		URT_CHECK_EQ(urt_send(a, USNIC_REL_CHAN_CMD, peer, msg, sizeof(msg), tag + i, i),
			     0);
	}
	while ((sent_ok < n || got < n) && now_s() < deadline) {
		if (sent_ok < n && !urt_cq_next(a, &cqe, 10)) {
			URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_SEND);
			URT_CHECK_EQ(cqe.status, 0);
			sent_ok++;
		}
		if (got < n && !urt_cq_next(b, &cqe, 10)) {
			URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_RECV);
			URT_CHECK_EQ(cqe.status, 0);
			/* In order, once. */
			URT_CHECK_EQ(cqe.imm, tag + got);
			urt_post_rx(b, cqe.buf);
			urt_doorbell(b, USNIC_REL_DB_RX);
			got++;
		}
	}
	URT_CHECK_EQ(sent_ok, n);
	URT_CHECK_EQ(got, n);
}

static int open_pair(int fd, struct urt_ep *a, struct urt_ep *b, uint32_t *pa, uint32_t *pb)
{
	if (urt_ep_create(fd, AF_INET, "127.0.0.1", 0, a) ||
	    urt_ep_create(fd, AF_INET, "127.0.0.1", 0, b))
		return -1;
	urt_post_all_rx(a);
	urt_post_all_rx(b);
	*pb = urt_av_insert(a, AF_INET, "127.0.0.1", b->info.addr.port);
	*pa = urt_av_insert(b, AF_INET, "127.0.0.1", a->info.addr.port);
	URT_CHECK(*pa > 0 && *pb > 0);
	return 0;
}

static void check_reinsert(int fd)
{
	struct urt_ep a, b;
	struct usnic_rel_cqe cqe;
	uint32_t pa, pb;
	int cancelled = 0;

	if (open_pair(fd, &a, &b, &pa, &pb))
		return;
	exchange(&a, pb, &b, 3, 100);
	exchange(&b, pa, &a, 3, 200);

	/* Three sends B never acknowledges (A's packets are lost), then removal. */
	URT_CHECK_EQ(urt_fault_set(a.info.debug_id, "drop", 1000000), 0);
	for (int i = 0; i < 3; i++)
		URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, pb, "lost", 4, 900 + i, 900 + i), 0);
	URT_CHECK_EQ(av_remove(&a, pb), 0);
	while (!urt_cq_next(&a, &cqe, 500)) {
		URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_SEND);
		URT_CHECK_EQ(cqe.status, -ECANCELED);
		cancelled++;
	}
	URT_CHECK_EQ(cancelled, 3);
	URT_CHECK_EQ(urt_fault_set(a.info.debug_id, "drop", 0), 0);

	/* Re-inserted: a new epoch on A's side only; B still holds the old one. */
	pb = urt_av_insert(&a, AF_INET, "127.0.0.1", b.info.addr.port);
	URT_CHECK(pb > 0);
	exchange(&a, pb, &b, 5, 300);
	exchange(&b, pa, &a, 5, 400);
	URT_CHECK_EQ(cnt(&a, "handshakes_completed"), 2);
	/* B paired with A's new epoch, which reset what B had with the old. */
	URT_CHECK_EQ(cnt(&b, "handshakes_completed"), 2);
	URT_CHECK_EQ(cnt(&b, "peer_resets"), 1);

	/* Both sides at once. */
	URT_CHECK_EQ(av_remove(&a, pb), 0);
	URT_CHECK_EQ(av_remove(&b, pa), 0);
	pb = urt_av_insert(&a, AF_INET, "127.0.0.1", b.info.addr.port);
	pa = urt_av_insert(&b, AF_INET, "127.0.0.1", a.info.addr.port);
	URT_CHECK(pa > 0 && pb > 0);
	exchange(&b, pa, &a, 5, 500);
	exchange(&a, pb, &b, 5, 600);
	URT_CHECK_EQ(urt_cq_next(&a, &cqe, 200), -ETIMEDOUT);
	URT_CHECK_EQ(urt_cq_next(&b, &cqe, 0), -ETIMEDOUT);
	URT_CHECK_EQ(cnt(&a, "peers_dead"), 0);
	URT_CHECK_EQ(cnt(&b, "peers_dead"), 0);
	URT_CHECK_EQ(urt_ep_destroy(&a), 0);
	URT_CHECK_EQ(urt_ep_destroy(&b), 0);
}

static void check_dead(int fd)
{
	struct urt_ep a, b;
	struct usnic_rel_cqe cqe;
	uint32_t pa, pb;
	int ok = 0;

	if (open_pair(fd, &a, &b, &pa, &pb))
		return;
	exchange(&a, pb, &b, 2, 100);
	exchange(&b, pa, &a, 2, 200);

	/* B goes silent: A's sends time out and A declares B dead. */
	URT_CHECK_EQ(urt_fault_set(b.info.debug_id, "drop", 1000000), 0);
	URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, pb, "x", 1, 900, 900), 0);
	if (!urt_cq_next(&a, &cqe, 10000))
		URT_CHECK_EQ(cqe.status, -ETIMEDOUT);
	URT_CHECK_EQ(cnt(&a, "peers_dead"), 1);
	/* B got the message before it fell silent; take it out of the way. */
	while (!urt_cq_next(&b, &cqe, 200)) {
		URT_CHECK_EQ(cqe.imm, 900);
		urt_post_rx(&b, cqe.buf);
		urt_doorbell(&b, USNIC_REL_DB_RX);
	}
	/* Dead: sends fail at once. */
	URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, pb, "y", 1, 901, 901), 0);
	if (!urt_cq_next(&a, &cqe, 10000))
		URT_CHECK_EQ(cqe.status, -EHOSTUNREACH);

	/* B answers again: the next send after that goes through. */
	URT_CHECK_EQ(urt_fault_set(b.info.debug_id, "drop", 0), 0);
	for (int i = 0; i < 200 && !ok; i++) {
		URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, pb, "z", 1, 1000, 1000 + i), 0);
		if (urt_cq_next(&a, &cqe, 10000))
			break;
		if (cqe.status == 0) {
			ok = 1;
			break;
		}
		URT_CHECK_EQ(cqe.status, -EHOSTUNREACH);
		usleep(50000);
	}
	URT_CHECK(ok);
	if (!urt_cq_next(&b, &cqe, 10000)) {
		URT_CHECK_EQ(cqe.imm, 1000);
		urt_post_rx(&b, cqe.buf);
		urt_doorbell(&b, USNIC_REL_DB_RX);
	}
	exchange(&a, pb, &b, 5, 300);
	exchange(&b, pa, &a, 5, 400);
	URT_CHECK_EQ(cnt(&a, "handshakes_completed"), 2);
	URT_CHECK_EQ(cnt(&b, "peer_resets"), 1);
	URT_CHECK_EQ(cnt(&a, "peers_dead"), 1);
	URT_CHECK_EQ(urt_ep_destroy(&a), 0);
	URT_CHECK_EQ(urt_ep_destroy(&b), 0);
}

/*
 * A peer of our own making on a UDP socket: it pairs through the handshake
 * and then acknowledges only what it sees twice (a retransmission), one
 * packet per RTO.
 */
static void check_stall(int fd)
{
	struct sockaddr_in me = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in ep_addr = { .sin_family = AF_INET,
				       .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(me);
	struct timeval tv = { .tv_usec = 100000 };
	struct usnic_rel_cqe cqe;
	struct urt_ep a;
	uint32_t peer, next_ack = 0, isn = 0, acks = 0;
	int s = socket(AF_INET, SOCK_DGRAM, 0), ok = 0, timedout = 0, unsent = 0, n = 32;
	int have_isn = 0;
	uint8_t seen[64] = { 0 };
	double deadline = now_s() + 60, last_ack = 0;

	URT_CHECK(s >= 0);
	URT_CHECK_EQ(bind(s, (struct sockaddr *)&me, sizeof(me)), 0);
	URT_CHECK_EQ(getsockname(s, (struct sockaddr *)&me, &len), 0);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &a))
		return;
	ep_addr.sin_port = htons(a.info.addr.port);
	peer = urt_av_insert(&a, AF_INET, "127.0.0.1", ntohs(me.sin_port));
	URT_CHECK(peer > 0);
	for (int i = 0; i < n; i++)
		URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, peer, "s", 1, i, i), 0);

	while (ok + timedout + unsent < n && now_s() < deadline) {
		uint8_t buf[2048];
		struct usnic_rel_hdr h, r;
		ssize_t got = recv(s, buf, sizeof(buf), 0);

		while (!urt_cq_next(&a, &cqe, 0)) {
			if (cqe.status == 0)
				ok++;
			else if (cqe.status == -ETIMEDOUT)
				timedout++;
			/* Held back by the congestion window, then the peer died. */
			else if (cqe.status == -EHOSTUNREACH)
				unsent++;
			else
				URT_CHECK_EQ(cqe.status, 0);
		}
		if (got < (ssize_t)sizeof(h))
			continue;
		memcpy(&h, buf, sizeof(h));
		memset(&r, 0, sizeof(r));
		r.magic = h.magic;
		r.version = h.version; /* whatever the module speaks */
		r.src_incarnation = htonl(0x51a11);
		r.dst_incarnation = h.src_incarnation;
		if (h.type == USNIC_REL_PKT_HELLO) {
			struct usnic_rel_hello_hdr x, rx = { 0 };
			uint8_t out[sizeof(r) + sizeof(rx)];

			memcpy(&x, buf + sizeof(h), sizeof(x));
			/* Echo its cookie; our sequences start at 0. */
			rx.cookie = htobe64(0xc00c1e);
			rx.echo = x.cookie;
			r.type = USNIC_REL_PKT_HELLO;
			r.rx_limit = htonl(65536);
			r.flags = h.flags & USNIC_REL_F_ACK_REQ;
			memcpy(out, &r, sizeof(r));
			memcpy(out + sizeof(r), &rx, sizeof(rx));
			if (h.flags & USNIC_REL_F_ACK_REQ)
				sendto(s, out, sizeof(out), 0, (struct sockaddr *)&ep_addr,
				       sizeof(ep_addr));
			continue;
		}
		if (h.type != USNIC_REL_PKT_DATA || h.channel != USNIC_REL_CHAN_CMD)
			continue;
		uint32_t seq = ntohl(h.seq);

		if (!have_isn) {
			/* The first packet seen is the first one sent. */
			isn = next_ack = seq;
			have_isn = 1;
		}
		uint32_t k = seq - isn;

		if (k >= sizeof(seen))
			continue;
		/*
		 * Seen before (resent), the oldest unacknowledged, and no ACK
		 * for most of an RTO (rto_max_us is 200 ms): acknowledge it
		 * alone. Without the pause the sender's recovery would resend
		 * the next one at once and the peer would not be slow at all.
		 */
		if (seen[k] && seq == next_ack && now_s() - last_ack >= 0.15) {
			last_ack = now_s();
			next_ack++;
			r.type = USNIC_REL_PKT_ACK;
			r.channel = USNIC_REL_CHAN_CMD;
			r.flags = USNIC_REL_F_ACK;
			r.ack = htonl(next_ack);
			sendto(s, &r, sizeof(r), 0, (struct sockaddr *)&ep_addr, sizeof(ep_addr));
			acks++;
		}
		seen[k] = 1;
	}
	printf("vm_recover stall: %d acknowledged, %d timed out, %d never sent, %u acks\n", ok,
	       timedout, unsent, acks);
	URT_CHECK(ok >= 1);
	URT_CHECK(timedout >= 1);
	URT_CHECK_EQ(ok + timedout + unsent, n);
	URT_CHECK_EQ(cnt(&a, "peers_stalled"), 1);
	URT_CHECK_EQ(cnt(&a, "peers_dead"), 1);
	URT_CHECK_EQ(urt_ep_destroy(&a), 0);
	close(s);
}

int main(int argc, char **argv)
{
	int fd = open("/dev/usnic_rel", O_RDWR | O_CLOEXEC);
	const char *what = argc > 1 ? argv[1] : "";

	URT_CHECK(fd >= 0);
	if (fd < 0)
		return urt_done("vm_recover");
	if (!strcmp(what, "reinsert"))
		check_reinsert(fd);
	else if (!strcmp(what, "dead"))
		check_dead(fd);
	else if (!strcmp(what, "stall"))
		check_stall(fd);
	else
		URT_CHECK(!"usage: vm_recover reinsert|dead|stall");
	close(fd);
	return urt_done("vm_recover");
}
