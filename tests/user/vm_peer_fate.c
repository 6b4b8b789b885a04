// SPDX-License-Identifier: MIT
/*
 * In-VM test: what a sender sees when its peer vanishes or restarts.
 * Run with the module loaded with a small retry_limit and rto_max_us (see
 * peer_fate.sh): a silent peer is declared dead and every send to it
 * completes with -ETIMEDOUT, later ones with -EHOSTUNREACH; a peer that
 * restarts on the same port proves itself by the handshake, what was in
 * flight to its old life fails with -ECONNRESET, and new sends reach it.
 */
#include "urt.h"
#include "urt_ep.h"

static int open_ep(int fd, uint16_t port, struct urt_ep *ep)
{
	int ret = urt_ep_create(fd, AF_INET, "127.0.0.1", port, ep);

	URT_CHECK_EQ(ret, 0);
	return ret;
}

/* The next CQE, waiting up to 10 s (a deadline, not a timing check). */
static int next_cqe(struct urt_ep *ep, struct usnic_rel_cqe *cqe)
{
	int ret = urt_cq_next(ep, cqe, 10000);

	URT_CHECK_EQ(ret, 0);
	return ret;
}

static void check_dead_peer(int fd)
{
	struct usnic_rel_cqe cqe;
	struct urt_ep tx;
	int peer;

	if (open_ep(fd, 0, &tx))
		return;
	/* Nobody listens on this port. */
	peer = urt_av_insert(&tx, AF_INET, "127.0.0.1", 7999);
	URT_CHECK(peer > 0);
	/*
	 * Both in one doorbell: with separate ones a slow (debug) kernel may
	 * declare the peer dead between the two, and "b" fails differently.
	 */
	urt_queue_sqe(&tx, USNIC_REL_CHAN_CMD,
		      &(struct usnic_rel_sqe){ .opcode = USNIC_REL_OP_SEND,
					       .flags = USNIC_REL_SQE_INLINE,
					       .peer = peer,
					       .imm = 1,
					       .user_ctx = 11,
					       .len = 1,
					       .inline_data = "a" });
	urt_queue_sqe(&tx, USNIC_REL_CHAN_DATA,
		      &(struct usnic_rel_sqe){ .opcode = USNIC_REL_OP_SEND,
					       .flags = USNIC_REL_SQE_INLINE,
					       .peer = peer,
					       .imm = 2,
					       .user_ctx = 12,
					       .len = 1,
					       .inline_data = "b" });
	URT_CHECK_EQ(urt_doorbell(&tx, USNIC_REL_DB_SQ_CMD | USNIC_REL_DB_SQ_DATA), 2);
	for (int i = 0; i < 2; i++) {
		if (next_cqe(&tx, &cqe))
			break;
		URT_CHECK(cqe.user_ctx == 11 || cqe.user_ctx == 12);
		URT_CHECK_EQ(cqe.status, -ETIMEDOUT);
	}
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "peers_dead"), 1);
	/* Nothing was paired, so the handshake is what was retried. */
	URT_CHECK(urt_counter(tx.info.debug_id, "hellos_sent") >= 2);
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "handshakes_completed"), 0);

	/* A dead peer stays dead: sends fail at once. */
	URT_CHECK_EQ(urt_send(&tx, USNIC_REL_CHAN_CMD, peer, "c", 1, 3, 13), 0);
	if (!next_cqe(&tx, &cqe)) {
		URT_CHECK_EQ(cqe.user_ctx, 13);
		URT_CHECK_EQ(cqe.status, -EHOSTUNREACH);
	}
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

static void check_restarted_peer(int fd)
{
	struct usnic_rel_cqe cqe;
	struct urt_ep tx, rx;
	uint16_t port;
	int peer;

	if (open_ep(fd, 0, &tx))
		return;
	if (open_ep(fd, 0, &rx))
		return;
	port = rx.info.addr.port;
	peer = urt_av_insert(&tx, AF_INET, "127.0.0.1", port);
	URT_CHECK(urt_av_insert(&rx, AF_INET, "127.0.0.1", tx.info.addr.port) > 0);
	urt_post_all_rx(&rx);
	URT_CHECK_EQ(urt_send(&tx, USNIC_REL_CHAN_CMD, peer, "1", 1, 1, 1), 0);
	if (!next_cqe(&rx, &cqe))
		URT_CHECK_EQ(cqe.imm, 1);
	if (!next_cqe(&tx, &cqe))
		URT_CHECK_EQ(cqe.status, 0);

	/* The receiver restarts: a new endpoint, a new incarnation, same port. */
	uint32_t old = rx.info.incarnation;

	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	if (open_ep(fd, port, &rx))
		return;
	URT_CHECK(rx.info.incarnation != old);
	URT_CHECK(urt_av_insert(&rx, AF_INET, "127.0.0.1", tx.info.addr.port) > 0);
	urt_post_all_rx(&rx);

	/* Sent to the old life: refused there, reported as a reset. */
	URT_CHECK_EQ(urt_send(&tx, USNIC_REL_CHAN_CMD, peer, "2", 1, 2, 2), 0);
	if (!next_cqe(&tx, &cqe)) {
		URT_CHECK_EQ(cqe.user_ctx, 2);
		URT_CHECK_EQ(cqe.status, -ECONNRESET);
	}
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "peer_resets"), 1);
	/* The new life has no pairing yet: the old one's packet proves nothing. */
	URT_CHECK(urt_counter(rx.info.debug_id, "rx_unverified") >= 1);
	URT_CHECK_EQ(urt_counter(rx.info.debug_id, "handshakes_completed"), 1);

	/* The new life gets what is sent now, and only that. */
	URT_CHECK_EQ(urt_send(&tx, USNIC_REL_CHAN_CMD, peer, "3", 1, 3, 3), 0);
	if (!next_cqe(&rx, &cqe)) {
		URT_CHECK_EQ(cqe.imm, 3);
		URT_CHECK_EQ(*(const char *)urt_rx_buf(&rx, cqe.buf), '3');
	}
	if (!next_cqe(&tx, &cqe)) {
		URT_CHECK_EQ(cqe.user_ctx, 3);
		URT_CHECK_EQ(cqe.status, 0);
	}
	URT_CHECK_EQ(urt_cq_next(&rx, &cqe, 300), -ETIMEDOUT);
	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

int main(void)
{
	int fd = open("/dev/usnic_rel", O_RDWR | O_CLOEXEC);

	URT_CHECK(fd >= 0);
	if (fd < 0)
		return urt_done("vm_peer_fate");
	check_dead_peer(fd);
	check_restarted_peer(fd);
	close(fd);
	return urt_done("vm_peer_fate");
}
