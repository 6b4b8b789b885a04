// SPDX-License-Identifier: MIT
/*
 * In-VM test: a message longer than the receiver's receive buffers is never
 * reported as sent. The receiver has 1 KiB buffers, the sender the default
 * 64 KiB. A too-long message sent before the handshake (its packets wait in
 * the window) fails with -EMSGSIZE once the peer's limit is known, and the
 * receiver answers it with a TOO_BIG status that the sender counts; one sent
 * after the handshake fails at once, without a packet; messages up to the
 * limit still arrive whole on both channels, before and after the refusals.
 */
#include <stdlib.h>

#include "urt.h"
#include "urt_ep.h"

#define PORT_RX 17311
#define PORT_TX 17312
#define RX_LIMIT 1024

static int send_status(struct urt_ep *ep, int chan, uint32_t peer, const void *buf, uint32_t len,
		       uint64_t ctx)
{
	struct usnic_rel_cqe cqe;

	URT_CHECK_EQ(urt_send(ep, chan, peer, buf, len, 0, ctx), 0);
	URT_CHECK_EQ(urt_cq_next(ep, &cqe, 10000), 0);
	URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_SEND);
	URT_CHECK_EQ(cqe.user_ctx, ctx);
	return cqe.status;
}

/* The receiver gets exactly @len bytes of @pattern on @chan. */
static void expect_msg(struct urt_ep *rx, int chan, const uint8_t *pattern, uint32_t len)
{
	struct usnic_rel_cqe cqe;

	URT_CHECK_EQ(urt_cq_next(rx, &cqe, 10000), 0);
	URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_RECV);
	URT_CHECK_EQ(cqe.status, 0);
	URT_CHECK_EQ(cqe.channel, chan);
	URT_CHECK_EQ(cqe.len, len);
	URT_CHECK_EQ(memcmp(urt_rx_buf(rx, cqe.buf), pattern, len), 0);
	urt_post_rx(rx, cqe.buf);
}

/* Wait up to 10 s for counter @name of @ep to reach @want. */
static long long wait_counter(struct urt_ep *ep, const char *name, long long want)
{
	long long v = -1;

	for (int i = 0; i < 1000; i++) {
		v = urt_counter(ep->info.debug_id, name);
		if (v >= want)
			break;
		usleep(10000);
	}
	return v;
}

int main(void)
{
	static uint8_t big[4096];
	struct usnic_rel_cqe cqe;
	struct urt_ep rx, tx, bad;
	int fd = open("/dev/usnic_rel", O_RDWR);
	int to_rx, to_tx;
	long long pkts;

	URT_CHECK(fd >= 0);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);

	/* The buffer size is the caller's, within bounds. */
	URT_CHECK_EQ(urt_ep_create_rx(fd, AF_INET, "127.0.0.1", 0, 100, &bad), -EINVAL);
	URT_CHECK_EQ(urt_ep_create_rx(fd, AF_INET, "127.0.0.1", 0, 1000, &bad), -EINVAL);
	URT_CHECK_EQ(urt_ep_create_rx(fd, AF_INET, "127.0.0.1", 0, 65536 + 64, &bad), -EINVAL);
	URT_CHECK_EQ(urt_ep_create_rx(fd, AF_INET, "127.0.0.1", PORT_RX, RX_LIMIT, &rx), 0);
	URT_CHECK_EQ(rx.info.rx_buf_size, RX_LIMIT);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_TX, &tx), 0);
	URT_CHECK_EQ(tx.info.rx_buf_size, 65536);
	urt_post_all_rx(&rx);
	urt_post_all_rx(&tx);
	to_rx = urt_av_insert(&tx, AF_INET, "127.0.0.1", PORT_RX);
	to_tx = urt_av_insert(&rx, AF_INET, "127.0.0.1", PORT_TX);
	URT_CHECK(to_rx > 0 && to_tx > 0);

	/*
	 * Before the handshake: the three packets of a 2000-byte command
	 * message are numbered and wait for the pairing; the receiver drops
	 * the message. Its send must fail, not complete.
	 */
	URT_CHECK_EQ(send_status(&tx, USNIC_REL_CHAN_CMD, to_rx, big, 2000, 1), -EMSGSIZE);
	URT_CHECK_EQ(wait_counter(&rx, "rx_too_big", 1), 1);
	/* The receiver said so too (the belt and braces of the HELLO limit). */
	URT_CHECK_EQ(wait_counter(&tx, "tx_refused_too_big", 1), 1);
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "tx_msg_too_big"), 1);

	/* The channel goes on: a message at the limit arrives whole. */
	URT_CHECK_EQ(send_status(&tx, USNIC_REL_CHAN_CMD, to_rx, big, RX_LIMIT, 2), 0);
	expect_msg(&rx, USNIC_REL_CHAN_CMD, big, RX_LIMIT);

	/* After the handshake a too-long send fails at once: no packet leaves. */
	pkts = urt_counter(tx.info.debug_id, "tx_data_packets");
	URT_CHECK_EQ(send_status(&tx, USNIC_REL_CHAN_DATA, to_rx, big, RX_LIMIT + 1, 3), -EMSGSIZE);
	URT_CHECK_EQ(send_status(&tx, USNIC_REL_CHAN_CMD, to_rx, big, sizeof(big), 4), -EMSGSIZE);
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "tx_data_packets"), pkts);
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "tx_msg_too_big"), 3);
	URT_CHECK_EQ(urt_counter(rx.info.debug_id, "rx_too_big"), 1);

	/* Both channels still deliver, in both directions. */
	URT_CHECK_EQ(send_status(&tx, USNIC_REL_CHAN_DATA, to_rx, big + 1, RX_LIMIT, 5), 0);
	expect_msg(&rx, USNIC_REL_CHAN_DATA, big + 1, RX_LIMIT);
	URT_CHECK_EQ(send_status(&tx, USNIC_REL_CHAN_CMD, to_rx, big + 2, 10, 6), 0);
	expect_msg(&rx, USNIC_REL_CHAN_CMD, big + 2, 10);
	URT_CHECK_EQ(send_status(&rx, USNIC_REL_CHAN_CMD, to_tx, big, sizeof(big), 7), 0);
	expect_msg(&tx, USNIC_REL_CHAN_CMD, big, sizeof(big));

	/* Nothing else arrived: no stray or duplicate completion. */
	URT_CHECK_EQ(urt_cq_next(&rx, &cqe, 200), -ETIMEDOUT);
	URT_CHECK_EQ(urt_cq_next(&tx, &cqe, 200), -ETIMEDOUT);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	close(fd);
	return urt_done("vm_msgsize");
}
