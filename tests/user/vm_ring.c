// SPDX-License-Identifier: MIT
/*
 * In-VM test: impossible ring indices written by userspace are counted,
 * stop the ring and never make the kernel read or write out of bounds.
 */
#include "urt.h"
#include "urt_ep.h"

static int open_ep(struct urt_ep *ep)
{
	int fd = open("/dev/usnic_rel", O_RDWR);

	if (fd < 0 || urt_ep_create(fd, AF_INET, "127.0.0.1", 0, ep)) {
		URT_CHECK(0);
		return -1;
	}
	return 0;
}

static void close_ep(struct urt_ep *ep)
{
	urt_ep_unmap(ep);
	close(ep->fd);
}

/* A send ring whose tail runs far ahead of the kernel's head. */
static void check_sq(void)
{
	struct usnic_rel_cqe cqe;
	struct urt_ep ep;

	if (open_ep(&ep))
		return;
	__atomic_store_n(urt_ring_tail(&ep, USNIC_REL_REGION_SQ_DATA), 0x80000000u,
			 __ATOMIC_RELEASE);
	URT_CHECK_EQ(urt_doorbell(&ep, USNIC_REL_DB_SQ_DATA), -EIO);
	URT_CHECK_EQ(urt_doorbell(&ep, USNIC_REL_DB_SQ_DATA), -EIO);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "ring_corrupt"), 1);
	/* Exactly one ring more than the ring holds is corrupt too. */
	__atomic_store_n(urt_ring_tail(&ep, USNIC_REL_REGION_SQ_CMD), ep.info.sq_entries + 1,
			 __ATOMIC_RELEASE);
	URT_CHECK_EQ(urt_doorbell(&ep, USNIC_REL_DB_SQ_CMD), -EIO);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "ring_corrupt"), 2);
	/* The kernel's head did not move and nothing completed. */
	URT_CHECK_EQ(*urt_ring_head(&ep, USNIC_REL_REGION_SQ_CMD), 0);
	URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 0), -ETIMEDOUT);
	close_ep(&ep);

	/* A full ring of zeroed SQEs (a whole ring, not more) is consumed. */
	if (open_ep(&ep))
		return;
	__atomic_store_n(urt_ring_tail(&ep, USNIC_REL_REGION_SQ_CMD), ep.info.sq_entries,
			 __ATOMIC_RELEASE);
	URT_CHECK_EQ(urt_doorbell(&ep, USNIC_REL_DB_SQ_CMD), ep.info.sq_entries);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "bad_sqe"), ep.info.sq_entries);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "ring_corrupt"), 0);
	close_ep(&ep);
}

/* Receive side: corrupt free ring, buffer index out of range, corrupt CQ. */
static void check_rx(void)
{
	struct usnic_rel_cqe cqe;
	struct urt_ep rx, tx;
	int peer;

	if (open_ep(&rx))
		return;
	if (open_ep(&tx)) {
		close_ep(&rx);
		return;
	}
	peer = urt_av_insert(&tx, AF_INET, "127.0.0.1", rx.info.addr.port);
	URT_CHECK(urt_av_insert(&rx, AF_INET, "127.0.0.1", tx.info.addr.port) > 0);

	/*
	 * No buffer posted: dropped unacknowledged, counted, and sent again.
	 * The first packet waits for the handshake: poll, do not time it.
	 */
	URT_CHECK_EQ(urt_send(&tx, USNIC_REL_CHAN_CMD, peer, "x", 1, 1, 0), 0);
	for (int i = 0; i < 300 && urt_counter(rx.info.debug_id, "rx_no_buf") < 1; i++)
		usleep(10000);
	URT_CHECK(urt_counter(rx.info.debug_id, "rx_no_buf") >= 1);

	/* A buffer index beyond the pool: consumed and counted; the packet waits. */
	urt_post_rx(&rx, 0x7fffffff);
	usleep(300000);
	URT_CHECK_EQ(urt_counter(rx.info.debug_id, "ring_corrupt"), 1);

	/* A good buffer: the message arrives, once, with its payload. */
	urt_post_rx(&rx, rx.info.rx_bufs - 1);
	URT_CHECK_EQ(urt_cq_next(&rx, &cqe, 3000), 0);
	URT_CHECK_EQ(cqe.imm, 1);
	URT_CHECK_EQ(cqe.buf, rx.info.rx_bufs - 1);
	URT_CHECK_EQ(*(const char *)urt_rx_buf(&rx, cqe.buf), 'x');
	URT_CHECK_EQ(urt_cq_next(&rx, &cqe, 0), -ETIMEDOUT);

	/* Free ring tail far ahead: the ring is dead, packets are dropped. */
	__atomic_store_n(urt_ring_tail(&rx, USNIC_REL_REGION_RX_FREE), 0xdead0000u,
			 __ATOMIC_RELEASE);
	URT_CHECK_EQ(urt_send(&tx, USNIC_REL_CHAN_CMD, peer, "z", 1, 4, 0), 0);
	usleep(20000);
	URT_CHECK_EQ(urt_counter(rx.info.debug_id, "ring_corrupt"), 2);
	URT_CHECK_EQ(urt_counter(rx.info.debug_id, "rx_messages"), 1);

	/* CQ head moved past the kernel's tail: no completion is written. */
	__atomic_store_n(urt_ring_head(&tx, USNIC_REL_REGION_CQ), 0x40000000u, __ATOMIC_RELEASE);
	URT_CHECK_EQ(urt_send(&tx, USNIC_REL_CHAN_CMD, peer, "w", 1, 5, 0), -EIO);
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "ring_corrupt"), 1);
	close_ep(&tx);
	close_ep(&rx);
}

int main(void)
{
	check_sq();
	check_rx();
	return urt_done("vm_ring");
}
