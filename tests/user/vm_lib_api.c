// SPDX-License-Identifier: MIT
/*
 * In-VM test of libusnicrel's verbs-like API against the module: endpoints,
 * address vector, registrations, sends to self, receive buffers, the limits
 * (-EAGAIN, -ENOBUFS, -EMSGSIZE), an endpoint destroyed behind the library's
 * back, deregistered memory, independent devices, and the one-sided
 * operations the kernel does not implement yet.
 */
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uapi/usnic_rel.h>

#include "urt.h"
#include "urt_ep.h"
#include "urt_lib.h"

static struct urel_device *open_dev(void)
{
	struct urel_device *dev;
	int ret = urel_device_open(NULL, &dev);

	if (ret) {
		fprintf(stderr, "urel_device_open: %s\n", urel_strerror(ret));
		exit(1);
	}
	return dev;
}

static struct urel_ep *make_ep(struct urel_device *dev, const struct urel_ep_attr *attr)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	struct urel_ep *ep;
	int ret = urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), attr, &ep);

	if (ret) {
		fprintf(stderr, "urel_ep_create: %s\n", urel_strerror(ret));
		exit(1);
	}
	return ep;
}

static urel_peer_t self_peer(struct urel_ep *ep)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", urt_ep_port(ep));
	urel_peer_t peer = 0;

	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin), &peer), 0);
	return peer;
}

static void test_create_query(struct urel_device *dev)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0), dup;
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr sa_unix = { .sa_family = AF_UNIX };
	struct urel_ep_attr huge = { .sq_entries = 1U << 30 };
	struct urel_ep *a, *b, *ep;
	struct urel_ep_info ia, ib;
	int ret;

	URT_CHECK_EQ(urel_ep_create(dev, &sa_unix, sizeof(sa_unix), NULL, &ep), -EAFNOSUPPORT);
	URT_CHECK_EQ(urel_ep_create(dev, (struct sockaddr *)&sin, 4, NULL, &ep), -EINVAL);
	URT_CHECK_EQ(urel_ep_create(dev, NULL, 0, NULL, &ep), -EINVAL);
	URT_CHECK_EQ(urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), &huge, &ep),
		     -EINVAL);
	URT_CHECK(ep == NULL);

	a = make_ep(dev, NULL);
	b = make_ep(dev, NULL);
	URT_CHECK_EQ(urel_ep_query(a, &ia), 0);
	URT_CHECK_EQ(urel_ep_query(b, &ib), 0);
	URT_CHECK_EQ(ia.addr.ss_family, AF_INET);
	URT_CHECK(urt_ep_port(a) != 0 && urt_ep_port(a) != urt_ep_port(b));
	URT_CHECK(ia.incarnation != 0);
	URT_CHECK(ia.mtu[UREL_CHAN_CMD] > 0 && ia.mtu[UREL_CHAN_CMD] <= ia.mtu[UREL_CHAN_DATA]);
	URT_CHECK(ia.max_msg[UREL_CHAN_CMD] >= ia.mtu[UREL_CHAN_CMD]);
	URT_CHECK(ia.max_msg[UREL_CHAN_DATA] >= ia.mtu[UREL_CHAN_DATA]);
	URT_CHECK_EQ(ia.inline_max, UREL_INLINE_MAX);
	URT_CHECK(ia.sq_entries && ia.cq_entries && ia.rx_bufs && ia.staging_size);
	URT_CHECK(ia.rx_buf_size >= ia.mtu[UREL_CHAN_DATA]);
	URT_CHECK_EQ(urel_ep_query(a, NULL), -EINVAL);

	/* A bound port is taken. */
	dup = urt_sin("127.0.0.1", urt_ep_port(a));
	URT_CHECK_EQ(urel_ep_create(dev, (struct sockaddr *)&dup, sizeof(dup), NULL, &ep),
		     -EADDRINUSE);
	URT_CHECK_EQ(urel_ep_destroy(a), 0);
	URT_CHECK_EQ(urel_ep_destroy(b), 0);

	/* IPv6 where the VM has ::1. */
	ret = urel_ep_create(dev, (struct sockaddr *)&sin6, sizeof(sin6), NULL, &ep);
	if (ret) {
		printf("vm_lib_api: no IPv6 endpoint (%s), skipped\n", urel_strerror(ret));
	} else {
		struct urel_completion c;
		urel_peer_t peer, refused;

		URT_CHECK_EQ(urel_ep_query(ep, &ia), 0);
		URT_CHECK_EQ(ia.addr.ss_family, AF_INET6);
		sin6.sin6_port = ((struct sockaddr_in6 *)&ia.addr)->sin6_port;
		URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin6, sizeof(sin6), &peer), 0);
		/* The address vector speaks the endpoint's family only. */
		URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin), &refused),
			     -EAFNOSUPPORT);
		URT_CHECK_EQ(refused, 0);
		URT_CHECK_EQ(urel_ep_send(ep, peer, UREL_CHAN_CMD, "v6", 2, 6, NULL, 0), 0);
		for (int got = 0; got < 2;) {
			URT_CHECK_EQ(urt_poll_n(dev, ep, &c, 1, 2000), 1);
			got++;
			if (c.opcode == UREL_OP_RECV) {
				URT_CHECK(c.len == 2 && !memcmp(c.data, "v6", 2) && c.imm == 6);
				URT_CHECK_EQ(urel_ep_release_recv(ep, c.buf), 0);
			}
		}
		URT_CHECK_EQ(urel_ep_destroy(ep), 0);
	}
}

static void test_av(struct urel_device *dev)
{
	struct urel_ep *ep = make_ep(dev, NULL);
	struct sockaddr_in sin = urt_sin("127.0.0.1", 9), zero_port = urt_sin("127.0.0.1", 0);
	urel_peer_t p1, p2;

	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin), &p1), 0);
	URT_CHECK(p1 != 0);
	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin), &p2), -EEXIST);
	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&zero_port, sizeof(zero_port), &p2),
		     -EINVAL);
	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin), NULL), -EINVAL);
	URT_CHECK_EQ(urel_av_remove(ep, 0), -ENXIO);
	URT_CHECK_EQ(urel_av_remove(ep, p1 + 1000), -ENXIO);
	URT_CHECK_EQ(urel_av_remove(ep, UINT32_MAX), -ENXIO);
	URT_CHECK_EQ(urel_ep_send(ep, p1, UREL_CHAN_CMD, "x", 1, 0, NULL, 0), 0);
	URT_CHECK_EQ(urel_av_remove(ep, p1), 0);
	URT_CHECK_EQ(urel_av_remove(ep, p1), -ENXIO);
	/* Unknown peers are refused before anything reaches the ring. */
	URT_CHECK_EQ(urel_ep_send(ep, p1, UREL_CHAN_CMD, "x", 1, 0, NULL, 0), -ENXIO);
	URT_CHECK_EQ(urel_ep_send(ep, 0, UREL_CHAN_CMD, "x", 1, 0, NULL, 0), -ENXIO);
	URT_CHECK_EQ(urel_ep_send(ep, 77777, UREL_CHAN_CMD, "x", 1, 0, NULL, 0), -ENXIO);
	/* Re-inserting the address gives a working handle again. */
	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin), &p2), 0);
	URT_CHECK_EQ(urel_av_remove(ep, p2), 0);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
}

/* Sends to self on both channels: every size class, content, imm, context. */
static void test_self_send(struct urel_device *dev)
{
	struct urel_ep *ep = make_ep(dev, NULL);
	urel_peer_t me = self_peer(ep);
	struct urel_ep_info info;
	static uint8_t buf[65536];
	struct urel_completion c[8];
	uint32_t sizes[] = { 0, 1, UREL_INLINE_MAX, UREL_INLINE_MAX + 1, 700, 0 };
	int sends = 0, recvs = 0;

	URT_CHECK_EQ(urel_ep_query(ep, &info), 0);
	for (unsigned int chan = 0; chan < UREL_NR_CHANS; chan++) {
		sizes[5] = info.max_msg[chan];
		for (unsigned int k = 0; k < 6; k++) {
			uint64_t seq = chan * 100 + k;
			uint32_t len = sizes[k];
			int n;

			urt_fill(buf, seq, len);
			URT_CHECK_EQ(urel_ep_send(ep, me, chan, buf, len, seq,
						  (void *)(uintptr_t)(seq + 1), 0),
				     0);
			/* The caller's buffer is free at once. */
			memset(buf, 0xee, len);
			n = urt_poll_n(dev, ep, c, 2, 2000);
			URT_CHECK_EQ(n, 2);
			for (int i = 0; i < n; i++) {
				URT_CHECK_EQ(c[i].status, 0);
				URT_CHECK_EQ(c[i].peer, me);
				URT_CHECK_EQ(c[i].channel, chan);
				URT_CHECK_EQ(c[i].len, len);
				if (c[i].opcode == UREL_OP_SEND) {
					URT_CHECK(c[i].context == (void *)(uintptr_t)(seq + 1));
					sends++;
				} else {
					URT_CHECK_EQ(c[i].opcode, UREL_OP_RECV);
					URT_CHECK_EQ(c[i].imm, seq);
					URT_CHECK(c[i].context == NULL);
					URT_CHECK_EQ(urt_verify(c[i].data, seq, len), 0);
					URT_CHECK_EQ(urel_ep_release_recv(ep, c[i].buf), 0);
					/* Given back twice: refused. */
					URT_CHECK_EQ(urel_ep_release_recv(ep, c[i].buf), -EINVAL);
					recvs++;
				}
			}
		}
		URT_CHECK_EQ(urel_ep_send(ep, me, chan, buf, info.max_msg[chan] + 1, 0, NULL, 0),
			     -EMSGSIZE);
	}
	URT_CHECK_EQ(sends, 12);
	URT_CHECK_EQ(recvs, 12);

	/* Gathered sends: inline and staged, with an empty piece in the middle. */
	for (uint32_t total = 40; total <= 4000; total += 3960) {
		struct iovec iov[3] = {
			{ .iov_base = buf, .iov_len = 10 },
			{ .iov_base = NULL, .iov_len = 0 },
			{ .iov_base = buf + 10, .iov_len = total - 10 },
		};

		urt_fill(buf, 77, total);
		URT_CHECK_EQ(urel_ep_sendv(ep, me, UREL_CHAN_DATA, iov, 3, 77, NULL, 0), 0);
		URT_CHECK_EQ(urt_poll_n(dev, ep, c, 2, 2000), 2);
		for (int i = 0; i < 2; i++) {
			URT_CHECK_EQ(c[i].len, total);
			if (c[i].opcode == UREL_OP_RECV) {
				URT_CHECK_EQ(urt_verify(c[i].data, 77, total), 0);
				URT_CHECK_EQ(urel_ep_release_recv(ep, c[i].buf), 0);
			}
		}
	}
	{
		struct iovec big[2] = { { .iov_base = buf, .iov_len = info.max_msg[UREL_CHAN_CMD] },
					{ .iov_base = buf, .iov_len = 1 } };
		struct iovec hole = { .iov_base = NULL, .iov_len = 1 };

		URT_CHECK_EQ(urel_ep_sendv(ep, me, UREL_CHAN_CMD, big, 2, 0, NULL, 0), -EMSGSIZE);
		URT_CHECK_EQ(urel_ep_sendv(ep, me, UREL_CHAN_CMD, &hole, 1, 0, NULL, 0), -EINVAL);
		URT_CHECK_EQ(urel_ep_sendv(ep, me, UREL_CHAN_CMD, big, 65, 0, NULL, 0), -EINVAL);
		URT_CHECK_EQ(urel_ep_sendv(ep, me, UREL_CHAN_CMD, NULL, 0, 5, NULL, 0), 0);
		URT_CHECK_EQ(urt_poll_n(dev, ep, c, 2, 2000), 2);
		for (int i = 0; i < 2; i++) {
			URT_CHECK_EQ(c[i].len, 0);
			URT_CHECK_EQ(c[i].imm, 5);
			if (c[i].opcode == UREL_OP_RECV)
				URT_CHECK_EQ(urel_ep_release_recv(ep, c[i].buf), 0);
		}
	}
	URT_CHECK_EQ(urel_ep_send(ep, me, 2, buf, 1, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_CMD, NULL, 1, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_CMD, buf, 1, 0, NULL, 0x80), -EINVAL);
	URT_CHECK_EQ(urel_ep_release_recv(ep, info.rx_bufs), -EINVAL);
	URT_CHECK_EQ(urel_ep_release_recv(ep, 0), -EINVAL); /* with the kernel */
	URT_CHECK_EQ(urel_ep_poll_cq(ep, NULL, 1), -EINVAL);
	URT_CHECK_EQ(urel_ep_poll_cq(ep, c, 8), 0);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
}

/* Poll until @want send completions arrived, giving receive buffers back. */
static int drain_sends(struct urel_device *dev, struct urel_ep *ep, int want)
{
	struct urel_completion c[16];
	long long end = urt_now_ms() + 5000;
	int sends = 0;

	while (sends < want && urt_now_ms() < end) {
		int n = urel_ep_poll_cq(ep, c, 16);

		if (n < 0)
			return n;
		if (!n)
			urel_device_wait(dev, 10);
		for (int i = 0; i < n; i++) {
			if (c[i].opcode == UREL_OP_SEND) {
				URT_CHECK_EQ(c[i].status, 0);
				sends++;
			} else {
				URT_CHECK_EQ(urel_ep_release_recv(ep, c[i].buf), 0);
			}
		}
	}
	return sends;
}

/* Batching, a full send queue (-EAGAIN) and a full staging area (-ENOBUFS). */
static void test_limits(struct urel_device *dev)
{
	struct urel_ep_attr attr = { .sq_entries = 4, .cq_entries = 4, .staging_size = 4096 };
	struct urel_ep *ep = make_ep(dev, &attr);
	urel_peer_t me = self_peer(ep);
	struct urel_completion c[16];
	struct urel_ep_info info;
	static uint8_t buf[8192];
	long long tx;
	int i, ret = 0, posted = 0;

	/* Batched posts wait for the doorbell. */
	for (i = 0; i < 3; i++)
		URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_CMD, "b", 1, (uint64_t)i, NULL,
					  UREL_POST_MORE),
			     0);
	URT_CHECK_EQ(urel_ep_poll_cq(ep, c, 16), 0);
	URT_CHECK_EQ(urel_ep_flush(ep), 0);
	URT_CHECK_EQ(drain_sends(dev, ep, 3), 3);
	while (urt_poll_n(dev, ep, c, 1, 100) == 1)
		if (c[0].opcode == UREL_OP_RECV)
			urel_ep_release_recv(ep, c[0].buf);

	/* A post without the flag rings for what waits on the other channel too. */
	URT_CHECK_EQ(urel_ep_query(ep, &info), 0);
	/* ACKs go out meanwhile: count the messages' own packets. */
	tx = urt_counter(info.debug_id, "tx_data_packets");
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_CMD, "m", 1, 0, NULL, UREL_POST_MORE), 0);
	URT_CHECK_EQ(urt_counter(info.debug_id, "tx_data_packets"), tx);
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, "d", 1, 0, NULL, 0), 0);
	URT_CHECK_EQ(urt_counter(info.debug_id, "tx_data_packets"), tx + 2);
	URT_CHECK_EQ(drain_sends(dev, ep, 2), 2);
	while (urt_poll_n(dev, ep, c, 1, 100) == 1)
		if (c[0].opcode == UREL_OP_RECV)
			urel_ep_release_recv(ep, c[0].buf);

	/*
	 * Nobody polls: the kernel fills the 4-slot CQ, then leaves the 4-slot
	 * send ring alone, and the next post finds it full.
	 */
	for (i = 0; i < 64; i++) {
		ret = urel_ep_send(ep, me, UREL_CHAN_CMD, "f", 1, 0, NULL, 0);
		if (ret)
			break;
		posted++;
	}
	URT_CHECK_EQ(ret, -EAGAIN);
	URT_CHECK(posted >= 4 && posted <= 8);
	/* Draining completions lets the kernel take the rest. */
	URT_CHECK_EQ(drain_sends(dev, ep, posted), posted);
	while (urt_poll_n(dev, ep, c, 1, 100) == 1)
		if (c[0].opcode == UREL_OP_RECV)
			urel_ep_release_recv(ep, c[0].buf);

	/* Staging: 4 KiB holds two 2000-byte payloads until they complete. */
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, buf, 2000, 0, NULL, UREL_POST_MORE), 0);
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, buf, 2000, 0, NULL, UREL_POST_MORE), 0);
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, buf, 2000, 0, NULL, UREL_POST_MORE),
		     -ENOBUFS);
	/* Inline payloads need no staging. */
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, buf, 64, 0, NULL, 0), 0);
	URT_CHECK_EQ(drain_sends(dev, ep, 3), 3);
	/* Completed: the space is back, merged. */
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, buf, 4000, 0, NULL, 0), 0);
	URT_CHECK_EQ(drain_sends(dev, ep, 1), 1);
	/* Bigger than the whole staging area, though within max_msg. */
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, buf, 5000, 0, NULL, 0), -EMSGSIZE);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
}

/* Wait for the completion of the one op outstanding; returns its status. */
static int one_op(struct urel_device *dev, struct urel_ep *ep, void *context, int opcode)
{
	struct urel_completion c;

	if (urt_poll_n(dev, ep, &c, 1, 5000) != 1)
		return -ETIME;
	URT_CHECK(c.context == context);
	URT_CHECK_EQ(c.opcode, opcode);
	return c.status;
}

/*
 * One-sided operations on the endpoint's own memory (through its loopback
 * peer): results, old values, and the statuses of a deregistered rkey and
 * an out-of-bounds offset, which leave the memory alone. vm_rdma covers two
 * processes.
 */
static void test_rdma(struct urel_device *dev)
{
	struct urel_ep *ep = make_ep(dev, NULL);
	urel_peer_t me = self_peer(ep);
	uint64_t *target = aligned_alloc(4096, 4096), old = 0xdead, got[4] = { 0 };
	struct urel_atomic fadd = {
		.op = UREL_ATOMIC_FETCH_ADD, .size = 8, .operand = 5, .result = &old
	};
	struct urel_atomic cas = { .op = UREL_ATOMIC_CAS, .size = 4, .operand = 1, .compare = 0 };
	struct urel_atomic swap = { .op = UREL_ATOMIC_SWAP, .size = 8, .operand = 9 };
	struct urel_atomic bad = fadd;
	struct urel_mr *mr, *gone;
	uint64_t rkey, stale;

	memset(target, 0, 4096);
	URT_CHECK_EQ(urel_mr_reg(ep, target, 4096, 0x10, &mr), -EINVAL);
	URT_CHECK_EQ(urel_mr_reg(ep, target, 0, UREL_ACCESS_REMOTE_READ, &mr), -EINVAL);
	URT_CHECK_EQ(urel_mr_reg(ep, NULL, 4096, UREL_ACCESS_REMOTE_READ, &mr), -EINVAL);
	URT_CHECK_EQ(urel_mr_reg(ep, (void *)(uintptr_t)4096, 4096, UREL_ACCESS_REMOTE_READ, &mr),
		     -EFAULT);
	URT_CHECK_EQ(urel_mr_reg(ep, target, 4096,
				 UREL_ACCESS_REMOTE_READ | UREL_ACCESS_REMOTE_WRITE |
					 UREL_ACCESS_REMOTE_ATOMIC,
				 &mr),
		     0);
	rkey = urel_mr_rkey(mr);
	URT_CHECK_EQ(urel_mr_reg(ep, target, 64, UREL_ACCESS_REMOTE_READ, &gone), 0);
	stale = urel_mr_rkey(gone);
	URT_CHECK_EQ(urel_mr_dereg(gone), 0);
	{
		/* The kernel forgot the key. */
		struct usnic_rel_dereg_mr d = { .size = sizeof(d), .rkey = stale };

		URT_CHECK_EQ(ioctl(urel_device_fd(dev), USNIC_REL_IOC_DEREG_MR, &d), -1);
		URT_CHECK_EQ(errno, EINVAL);
	}

	/* One at a time: puts and gets travel on different channels. */
	URT_CHECK_EQ(urel_ep_put(ep, me, "hello", 5, rkey, 0, (void *)1, 0), 0);
	URT_CHECK_EQ(one_op(dev, ep, (void *)1, UREL_OP_PUT), 0);
	URT_CHECK(!memcmp(target, "hello", 5));
	URT_CHECK_EQ(urel_ep_put(ep, me, target, 1000, rkey, 8, (void *)2, 0), 0);
	URT_CHECK_EQ(one_op(dev, ep, (void *)2, UREL_OP_PUT), 0);
	URT_CHECK(!memcmp((char *)target + 8, "hello", 5));
	URT_CHECK_EQ(urel_ep_get(ep, me, got, 16, rkey, 0, (void *)3, 0), 0);
	URT_CHECK_EQ(one_op(dev, ep, (void *)3, UREL_OP_GET), 0);
	URT_CHECK(!memcmp(got, target, 16));
	target[100] = 10;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &fadd, rkey, 800, (void *)4, 0), 0);
	URT_CHECK_EQ(one_op(dev, ep, (void *)4, UREL_OP_ATOMIC), 0);
	URT_CHECK_EQ(old, 10);
	URT_CHECK_EQ(target[100], 15);
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &cas, rkey, 808, (void *)5, 0), 0);
	URT_CHECK_EQ(one_op(dev, ep, (void *)5, UREL_OP_ATOMIC), 0);
	URT_CHECK_EQ(((uint32_t *)target)[202], 1);
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &swap, rkey, 816, (void *)6, 0), 0);
	URT_CHECK_EQ(one_op(dev, ep, (void *)6, UREL_OP_ATOMIC), 0);
	URT_CHECK_EQ(target[102], 9);
	/* Refused: nothing moves, nothing is delivered. */
	memset(got, 0, sizeof(got));
	old = 0xdead;
	URT_CHECK_EQ(urel_ep_put(ep, me, "x", 1, stale, 0, (void *)7, 0), 0);
	URT_CHECK_EQ(one_op(dev, ep, (void *)7, UREL_OP_PUT), -ENOKEY);
	URT_CHECK_EQ(urel_ep_get(ep, me, got, 16, rkey, 4090, (void *)8, 0), 0);
	URT_CHECK_EQ(one_op(dev, ep, (void *)8, UREL_OP_GET), -ERANGE);
	URT_CHECK_EQ(got[0], 0);
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &fadd, stale, 0, (void *)9, 0), 0);
	URT_CHECK_EQ(one_op(dev, ep, (void *)9, UREL_OP_ATOMIC), -ENOKEY);
	URT_CHECK_EQ(old, 0xdead);
	URT_CHECK_EQ(target[100], 15);
	URT_CHECK(!memcmp(target, "hello", 5));

	URT_CHECK_EQ(urel_ep_put(ep, me, NULL, 5, rkey, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_put(ep, me, "x", 0, rkey, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_put(ep, me, "x", 1, rkey, UINT64_MAX, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_get(ep, me, NULL, 5, rkey, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_get(ep, 999, got, 5, rkey, 0, NULL, 0), -ENXIO);
	URT_CHECK_EQ(urel_ep_atomic(ep, me, NULL, rkey, 0, NULL, 0), -EINVAL);
	bad.size = 2;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &bad, rkey, 0, NULL, 0), -EINVAL);
	bad.size = 8;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &bad, rkey, 4, NULL, 0), -EINVAL);
	bad.op = 0;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &bad, rkey, 0, NULL, 0), -EINVAL);
	bad = fadd;
	bad.compare = 1;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &bad, rkey, 0, NULL, 0), -EINVAL);
	bad = cas;
	bad.operand = 1ULL << 32;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &bad, rkey, 0, NULL, 0), -EINVAL);

	URT_CHECK_EQ(urel_mr_dereg(mr), 0);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
	free(target);
}

struct kept {
	int calls;
	uint32_t buf;
	char bytes[8];
};

static int keep_handler(struct urel_ep *ep, const struct urel_completion *c, void *arg)
{
	struct kept *k = arg;

	(void)ep;
	k->calls++;
	k->buf = c->buf;
	memcpy(k->bytes, c->data, c->len < sizeof(k->bytes) ? c->len : sizeof(k->bytes));
	return UREL_RECV_KEEP;
}

static void count_request(struct urel_request *req, const struct urel_completion *c)
{
	URT_CHECK_EQ(c->status, 0);
	URT_CHECK_EQ(c->opcode, UREL_OP_SEND);
	(*(int *)req->user)++;
}

/* Run the progress engine until @cond holds or two seconds pass. */
#define PROGRESS_UNTIL(dev, ep, cond)                                                              \
	for (long long end_ = urt_now_ms() + 2000; !(cond) && urt_now_ms() < end_;)                \
		if (urel_ep_progress(ep, 0) == 0)                                                  \
	urel_device_wait(dev, 10)

/* The progress engine: request callbacks, a handler keeping its buffer, no handler. */
static void test_progress(struct urel_device *dev)
{
	struct urel_ep *ep = make_ep(dev, NULL);
	urel_peer_t me = self_peer(ep);
	struct kept k = { 0 };
	int sent = 0;
	struct urel_request req = { .complete = count_request, .user = &sent };
	struct urel_request silent = { 0 };
	struct urel_completion c;

	URT_CHECK_EQ(urel_ep_set_recv_handler(ep, keep_handler, &k), 0);
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_CMD, "keep", 4, 1, &req, 0), 0);
	PROGRESS_UNTIL(dev, ep, sent == 1 && k.calls == 1);
	URT_CHECK_EQ(sent, 1);
	URT_CHECK_EQ(k.calls, 1);
	URT_CHECK(!memcmp(k.bytes, "keep", 4));
	/* Kept: still lent to us, given back once. */
	URT_CHECK_EQ(urel_ep_release_recv(ep, k.buf), 0);
	URT_CHECK_EQ(urel_ep_release_recv(ep, k.buf), -EINVAL);

	/* No handler: the receive is dropped and its buffer given back. */
	URT_CHECK_EQ(urel_ep_set_recv_handler(ep, NULL, NULL), 0);
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, "drop", 4, 2, &silent, 0), 0);
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, "none", 4, 3, NULL, 0), 0);
	PROGRESS_UNTIL(dev, ep, 0);
	URT_CHECK_EQ(k.calls, 1);
	URT_CHECK_EQ(urel_ep_poll_cq(ep, &c, 1), 0);
	/* Nothing is left to dispatch on the device either. */
	URT_CHECK_EQ(urel_device_progress(dev, 0), 0);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
}

/* An endpoint destroyed behind the library's back, and devices as independent contexts. */
static void test_destroyed_and_contexts(void)
{
	struct urel_device *d1 = open_dev(), *d2 = open_dev();
	struct urel_ep *e1 = make_ep(d1, NULL), *e2 = make_ep(d2, NULL);
	urel_peer_t p1 = self_peer(e1), p2 = self_peer(e2);
	struct usnic_rel_destroy_ep d = { .size = sizeof(d), .ep_id = 1 };
	struct sockaddr_in sin = urt_sin("127.0.0.1", 9);
	struct urel_completion c[2];
	struct urel_mr *mr;
	static char page[4096];
	urel_peer_t p;

	/* The first endpoint of a fresh device is id 1 in the module. */
	URT_CHECK_EQ(ioctl(urel_device_fd(d1), USNIC_REL_IOC_DESTROY_EP, &d), 0);
	URT_CHECK_EQ(urel_ep_send(e1, p1, UREL_CHAN_CMD, "x", 1, 0, NULL, 0), -ESHUTDOWN);
	URT_CHECK_EQ(urel_ep_send(e1, p1, UREL_CHAN_DATA, "x", 1, 0, NULL, 0), -ESHUTDOWN);
	URT_CHECK_EQ(urel_av_insert(e1, (struct sockaddr *)&sin, sizeof(sin), &p), -EINVAL);
	/* Nothing to take, and the endpoint is gone: say so. */
	URT_CHECK_EQ(urel_ep_poll_cq(e1, c, 2), -ESHUTDOWN);
	URT_CHECK_EQ(urel_ep_flush(e1), -ESHUTDOWN);
	URT_CHECK_EQ(urel_ep_destroy(e1), -EINVAL);

	/* Closing d1 with a live registration leaves d2 untouched. */
	e1 = make_ep(d1, NULL);
	URT_CHECK_EQ(urel_mr_reg(e1, page, sizeof(page), UREL_ACCESS_REMOTE_READ, &mr), 0);
	urel_device_close(d1);
	URT_CHECK_EQ(urel_ep_send(e2, p2, UREL_CHAN_CMD, "y", 1, 0, NULL, 0), 0);
	URT_CHECK_EQ(urt_poll_n(d2, e2, c, 2, 2000), 2);
	/* Closing a device destroys what it still holds. */
	urel_device_close(d2);
}

int main(void)
{
	struct urel_device *dev = open_dev();

	URT_CHECK(urel_device_fd(dev) >= 0);
	URT_CHECK_EQ(urel_device_abi_version(dev), urel_library_abi_version());
	URT_CHECK_EQ(urel_device_wait(dev, 0), 0);
	URT_CHECK_EQ(urel_device_wait(dev, -2), -EINVAL);
	URT_CHECK_EQ(urel_device_progress(dev, 0), 0);
	test_create_query(dev);
	test_av(dev);
	test_self_send(dev);
	test_limits(dev);
	test_rdma(dev);
	test_progress(dev);
	urel_device_close(dev);
	test_destroyed_and_contexts();
	return urt_done("vm_lib_api");
}
