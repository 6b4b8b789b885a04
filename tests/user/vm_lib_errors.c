// SPDX-License-Identifier: MIT
/*
 * In-VM test of the documented error paths of libusnicrel that vm_lib_api
 * leaves out: addresses no peer can have, an address of no interface, a
 * signal during urel_device_wait(), the argument checks of put, get and
 * atomic (bad flags, unknown and removed peers, zero and oversized lengths,
 * wrapping ranges, misaligned and malformed atomics), oversized gathered
 * sends, and every kind of post on an endpoint the kernel no longer has.
 * A refused post must not reach the kernel: the endpoint's tx_data_packets
 * counter and completion queue stay as they were.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

#include <uapi/usnic_rel.h>

#include "urt.h"
#include "urt_ep.h"
#include "urt_lib.h"

static struct urel_ep *make_ep(struct urel_device *dev, const struct urel_ep_attr *attr)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	struct urel_ep *ep = NULL;
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

static void test_addresses(struct urel_device *dev)
{
	static const char *const bad[] = { "224.0.0.1", "255.255.255.255", "0.0.0.0" };
	struct urel_ep *ep = make_ep(dev, NULL);
	struct sockaddr_in sin = urt_sin("127.0.0.1", 4000);
	urel_peer_t peer = 0;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sockaddr_in b = urt_sin(bad[i], 4000);

		URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&b, sizeof(b), &peer), -EINVAL);
	}
	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin) - 1, &peer), -EINVAL);
	URT_CHECK_EQ(urel_av_insert(ep, NULL, sizeof(sin), &peer), -EINVAL);
	URT_CHECK_EQ(peer, 0);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);

	/* TEST-NET-1 is configured on no interface of the VM. */
	sin = urt_sin("192.0.2.1", 0);
	ep = (struct urel_ep *)1;
	URT_CHECK_EQ(urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep),
		     -EADDRNOTAVAIL);
	URT_CHECK(ep == NULL);
	sin = urt_sin("127.0.0.1", 0);
	URT_CHECK_EQ(urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, NULL),
		     -EINVAL);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal ends a wait with -EINTR; a repeating timer makes sure one lands in it. */
static void test_wait_eintr(struct urel_device *dev)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval every = { .it_interval = { .tv_usec = 50000 },
				   .it_value = { .tv_usec = 50000 } };
	struct itimerval off = { 0 };
	struct urel_ep *ep = make_ep(dev, NULL);

	sigemptyset(&sa.sa_mask);
	URT_CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	URT_CHECK_EQ(setitimer(ITIMER_REAL, &every, NULL), 0);
	URT_CHECK_EQ(urel_device_wait(dev, 60000), -EINTR);
	URT_CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
	signal(SIGALRM, SIG_DFL);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
}

/* Nothing refused may reach the kernel or the completion queue. */
static void check_untouched(struct urel_ep *ep, const struct urel_ep_info *info, long long tx)
{
	struct urel_completion c;

	URT_CHECK_EQ(urt_counter(info->debug_id, "tx_data_packets"), tx);
	URT_CHECK_EQ(urel_ep_poll_cq(ep, &c, 1), 0);
	URT_CHECK_EQ(urel_ep_poll_cq(ep, NULL, 0), 0);
}

/* Argument checks of the one-sided operations (not their results). */
static void test_rma_args(struct urel_device *dev)
{
	struct urel_ep_attr small = { .staging_size = 4096 };
	struct urel_ep *ep = make_ep(dev, &small);
	urel_peer_t me = self_peer(ep), gone;
	struct sockaddr_in other = urt_sin("127.0.0.1", 9);
	struct urel_atomic ok = { .op = UREL_ATOMIC_FETCH_ADD, .size = 4, .operand = 1 };
	struct urel_atomic a;
	static uint8_t buf[8192];
	struct urel_ep_info info;
	const uint64_t rkey = 1;
	long long tx;

	URT_CHECK_EQ(urel_ep_query(ep, &info), 0);
	URT_CHECK(info.staging_size < sizeof(buf));
	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&other, sizeof(other), &gone), 0);
	URT_CHECK_EQ(urel_av_remove(ep, gone), 0);
	tx = urt_counter(info.debug_id, "tx_data_packets");
	URT_CHECK(tx >= 0);

	/* Unknown flags. */
	URT_CHECK_EQ(urel_ep_put(ep, me, buf, 8, rkey, 0, NULL, 1U << 2), -EINVAL);
	URT_CHECK_EQ(urel_ep_get(ep, me, buf, 8, rkey, 0, NULL, 1U << 31), -EINVAL);
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &ok, rkey, 0, NULL, 0x4), -EINVAL);
	/* Only a put can be quiet: a get or an atomic always has an answer. */
	URT_CHECK_EQ(urel_ep_get(ep, me, buf, 8, rkey, 0, NULL, UREL_POST_QUIET), -EINVAL);
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &ok, rkey, 0, NULL, UREL_POST_QUIET), -EINVAL);
	/* Peers never inserted, handle 0, and a removed peer. */
	URT_CHECK_EQ(urel_ep_put(ep, 0, buf, 8, rkey, 0, NULL, 0), -ENXIO);
	URT_CHECK_EQ(urel_ep_put(ep, gone, buf, 8, rkey, 0, NULL, 0), -ENXIO);
	URT_CHECK_EQ(urel_ep_get(ep, gone, buf, 8, rkey, 0, NULL, 0), -ENXIO);
	URT_CHECK_EQ(urel_ep_atomic(ep, 4242, &ok, rkey, 0, NULL, 0), -ENXIO);
	URT_CHECK_EQ(urel_ep_atomic(ep, gone, &ok, rkey, 0, NULL, 0), -ENXIO);
	/* Zero lengths, NULL buffers and ranges that wrap. */
	URT_CHECK_EQ(urel_ep_get(ep, me, buf, 0, rkey, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_put(ep, me, NULL, 0, rkey, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_get(ep, me, buf, 16, rkey, UINT64_MAX - 8, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &ok, rkey, UINT64_MAX - 3, NULL, 0), -EINVAL);
	/* Oversized: beyond the staging area that carries (put) or receives (get) the bytes. */
	URT_CHECK_EQ(urel_ep_put(ep, me, buf, sizeof(buf), rkey, 0, NULL, 0), -EMSGSIZE);
	URT_CHECK_EQ(urel_ep_get(ep, me, buf, sizeof(buf), rkey, 0, NULL, 0), -EMSGSIZE);
	/* Malformed atomics. */
	a = ok;
	a.size = 16;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &a, rkey, 0, NULL, 0), -EINVAL);
	a = ok;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &a, rkey, 2, NULL, 0), -EINVAL);
	a.size = 8;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &a, rkey, 4, NULL, 0), -EINVAL);
	a = ok;
	a.op = (enum urel_atomic_op)99;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &a, rkey, 0, NULL, 0), -EINVAL);
	a = ok;
	a.operand = 1ULL << 32;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &a, rkey, 0, NULL, 0), -EINVAL);
	a = ok;
	a.op = UREL_ATOMIC_CAS;
	a.compare = 1ULL << 40;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &a, rkey, 0, NULL, 0), -EINVAL);
	a = ok;
	a.op = UREL_ATOMIC_SWAP;
	a.compare = 3;
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &a, rkey, 0, NULL, 0), -EINVAL);
	/* Sends: an oversized gather, unknown flags and channels on sendv, a removed peer. */
	{
		struct iovec iov[2] = { { .iov_base = buf,
					  .iov_len = info.max_msg[UREL_CHAN_DATA] },
					{ .iov_base = buf, .iov_len = 1 } };

		URT_CHECK_EQ(urel_ep_sendv(ep, me, UREL_CHAN_DATA, iov, 2, 0, NULL, 0), -EMSGSIZE);
		URT_CHECK_EQ(urel_ep_sendv(ep, me, UREL_CHAN_DATA, iov + 1, 1, 0, NULL, 0x8),
			     -EINVAL);
		URT_CHECK_EQ(urel_ep_sendv(ep, me, UREL_NR_CHANS, iov + 1, 1, 0, NULL, 0), -EINVAL);
		URT_CHECK_EQ(urel_ep_sendv(ep, gone, UREL_CHAN_CMD, iov + 1, 1, 0, NULL, 0),
			     -ENXIO);
		URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, buf, info.staging_size + 1, 0,
					  NULL, 0),
			     -EMSGSIZE);
	}
	/* A doorbell with nothing posted is harmless. */
	URT_CHECK_EQ(urel_ep_flush(ep), 0);
	check_untouched(ep, &info, tx);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
}

/* Every kind of post on an endpoint the kernel destroyed behind the library. */
static void test_gone_endpoint(void)
{
	struct urel_device *dev = NULL;
	struct urel_ep *ep;
	struct usnic_rel_destroy_ep d = { .size = sizeof(d), .ep_id = 1 };
	struct urel_atomic at = { .op = UREL_ATOMIC_SWAP, .size = 8, .operand = 1 };
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	uint64_t word = 0;
	urel_peer_t me;
	int ret;

	ret = urel_device_open(NULL, &dev);
	URT_CHECK_EQ(ret, 0);
	if (ret)
		return;
	ep = make_ep(dev, NULL);
	me = self_peer(ep);
	/* The first endpoint of a fresh device is id 1 in the module. */
	URT_CHECK_EQ(ioctl(urel_device_fd(dev), USNIC_REL_IOC_DESTROY_EP, &d), 0);
	URT_CHECK_EQ(urel_ep_sendv(ep, me, UREL_CHAN_CMD, &iov, 1, 0, NULL, 0), -ESHUTDOWN);
	URT_CHECK_EQ(urel_ep_put(ep, me, "x", 1, 1, 0, NULL, 0), -ESHUTDOWN);
	URT_CHECK_EQ(urel_ep_get(ep, me, &word, 8, 1, 0, NULL, 0), -ESHUTDOWN);
	URT_CHECK_EQ(urel_ep_atomic(ep, me, &at, 1, 0, NULL, 0), -ESHUTDOWN);
	/* And they keep failing the same way. */
	URT_CHECK_EQ(urel_ep_send(ep, me, UREL_CHAN_DATA, "x", 1, 0, NULL, 0), -ESHUTDOWN);
	URT_CHECK_EQ(urel_ep_put(ep, me, "x", 1, 1, 0, NULL, UREL_POST_MORE), -ESHUTDOWN);
	URT_CHECK_EQ(urel_ep_destroy(ep), -EINVAL);
	urel_device_close(dev);
}

int main(void)
{
	struct urel_device *dev = NULL;
	int ret = urel_device_open(NULL, &dev);

	if (ret) {
		fprintf(stderr, "urel_device_open: %s\n", urel_strerror(ret));
		return 1;
	}
	test_addresses(dev);
	test_wait_eintr(dev);
	test_rma_args(dev);
	urel_device_close(dev);
	test_gone_endpoint();
	return urt_done("vm_lib_errors");
}
