// SPDX-License-Identifier: MIT
/*
 * In-VM test: endpoints die cleanly with traffic in flight, whether their
 * file is closed, their process is killed, or another thread is ringing
 * their doorbell; afterwards their ports are free again. Peers come and go
 * quickly too: 2000 AV insert/remove pairs on one endpoint, a quarter of
 * them with a send in flight (each completes once, with -ECANCELED), while
 * two other endpoints of the same file exchange checked messages; the
 * address vector is empty again after (the debug VM's kmemleak scan and
 * KASAN see the peers freed after their grace period).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "urt.h"
#include "urt_ep.h"

#define PORT_A 17101
#define PORT_B 17102
#define PORT_C 17103
#define PORT_D 17104
#define CHURN 2000

static uint8_t payload[9000];

/* Open a device and an endpoint on @port that knows @peer_port. */
static int open_ep(struct urt_ep *ep, uint16_t port, uint16_t peer_port)
{
	int fd = open("/dev/usnic_rel", O_RDWR);

	if (fd < 0 || urt_ep_create(fd, AF_INET, "127.0.0.1", port, ep))
		return -1;
	urt_post_all_rx(ep);
	return urt_av_insert(ep, AF_INET, "127.0.0.1", peer_port);
}

/* Send forever from @port to @peer_port, reaping completions, never waiting. */
static void blast(uint16_t port, uint16_t peer_port)
{
	struct usnic_rel_sqe sqe = { .opcode = USNIC_REL_OP_SEND };
	struct usnic_rel_cqe cqe;
	struct urt_ep ep;
	int peer = open_ep(&ep, port, peer_port);

	if (peer <= 0)
		exit(1);
	sqe.peer = peer;
	sqe.len = ep.info.mtu[USNIC_REL_CHAN_DATA];
	for (uint64_t n = 0;; n++) {
		for (int i = 0; i < 32; i++)
			urt_queue_sqe(&ep, USNIC_REL_CHAN_DATA, &sqe);
		if (urt_doorbell(&ep, USNIC_REL_DB_SQ_DATA) < 0)
			exit(1);
		while (!urt_cq_next(&ep, &cqe, 0))
			if (cqe.opcode == USNIC_REL_OP_RECV)
				urt_post_rx(&ep, cqe.buf);
		/* Keep the SQ from overflowing when the socket is full. */
		while (*urt_ring_tail(&ep, USNIC_REL_REGION_SQ_DATA) -
			       __atomic_load_n(urt_ring_head(&ep, USNIC_REL_REGION_SQ_DATA),
					       __ATOMIC_ACQUIRE) >
		       ep.info.sq_entries - 32) {
			urt_doorbell(&ep, USNIC_REL_DB_SQ_DATA);
			while (!urt_cq_next(&ep, &cqe, 0))
				;
		}
	}
}

static pid_t spawn_blaster(uint16_t port, uint16_t peer_port)
{
	pid_t pid = fork();

	if (pid == 0)
		blast(port, peer_port);
	return pid;
}

static void reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
	URT_CHECK(WIFSIGNALED(status));
}

/* Both ports must be free: nothing of the old endpoints survives. */
static void check_ports_free(void)
{
	struct urt_ep a, b;
	int fd = open("/dev/usnic_rel", O_RDWR);

	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_A, &a), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_B, &b), 0);
	urt_ep_unmap(&a);
	urt_ep_unmap(&b);
	close(fd);
}

/* The receiver closes its file while the sender keeps sending at it. */
static void check_close_in_flight(void)
{
	pid_t pid = spawn_blaster(PORT_B, PORT_A);

	for (int round = 0; round < 20; round++) {
		struct usnic_rel_cqe cqe;
		struct urt_ep ep;
		int got = 0;

		if (open_ep(&ep, PORT_A, PORT_B) <= 0) {
			URT_CHECK(0);
			break;
		}
		/* Consume a little, leave the rest in the rings. */
		while (got < 5 && !urt_cq_next(&ep, &cqe, 2000))
			got++;
		URT_CHECK_EQ(got, 5);
		if (round & 1)
			urt_ep_unmap(&ep); /* else close while mapped */
		close(ep.fd);
		if (!(round & 1))
			urt_ep_unmap(&ep);
	}
	reap(pid);
}

/* Both sides are killed in the middle of a transfer. */
static void check_killed(void)
{
	for (int round = 0; round < 5; round++) {
		pid_t a = spawn_blaster(PORT_A, PORT_B);
		pid_t b = spawn_blaster(PORT_B, PORT_A);

		usleep(200000 + round * 50000);
		reap(a);
		reap(b);
		check_ports_free();
	}
}

struct ringer {
	struct urt_ep *ep;
	int last;
};

static void *ring_forever(void *arg)
{
	struct ringer *r = arg;
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND, .len = 1, .flags = USNIC_REL_SQE_INLINE, .peer = 1
	};

	for (;;) {
		if (*urt_ring_tail(r->ep, USNIC_REL_REGION_SQ_CMD) -
			    *urt_ring_head(r->ep, USNIC_REL_REGION_SQ_CMD) <
		    8)
			urt_queue_sqe(r->ep, USNIC_REL_CHAN_CMD, &sqe);
		r->last = urt_doorbell(r->ep, USNIC_REL_DB_SQ_CMD);
		if (r->last < 0)
			return NULL;
		/* Drop the completions so the CQ never fills. */
		__atomic_store_n(urt_ring_head(r->ep, USNIC_REL_REGION_CQ),
				 __atomic_load_n(urt_ring_tail(r->ep, USNIC_REL_REGION_CQ),
						 __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
	}
}

/* DESTROY_EP while another thread sends: the doorbell starts failing. */
static void check_destroy_racing_doorbell(void)
{
	pid_t pid = spawn_blaster(PORT_B, PORT_A);

	for (int round = 0; round < 10; round++) {
		struct ringer r;
		struct urt_ep ep;
		pthread_t t;
		void *mem;

		if (open_ep(&ep, PORT_A, PORT_B) <= 0) {
			URT_CHECK(0);
			break;
		}
		/* The thread keeps using the rings after DESTROY_EP: keep them mapped. */
		mem = ep.region[USNIC_REL_REGION_SQ_CMD];
		r.ep = &ep;
		pthread_create(&t, NULL, ring_forever, &r);
		usleep(50000);
		struct usnic_rel_destroy_ep d = { .size = sizeof(d), .ep_id = ep.info.ep_id };

		URT_CHECK_EQ(urt_ioctl(ep.fd, USNIC_REL_IOC_DESTROY_EP, &d), 0);
		pthread_join(t, NULL);
		URT_CHECK_EQ(r.last, -EINVAL);
		URT_CHECK(mem == ep.region[USNIC_REL_REGION_SQ_CMD]);
		urt_ep_unmap(&ep);
		close(ep.fd);
	}
	reap(pid);
	check_ports_free();
}

struct churn {
	struct urt_ep *ep;
	int sent;
	int cancelled;
	int bad;
	double secs;
	volatile int done;
};

static void churn_reap(struct churn *c, int timeout_ms)
{
	struct usnic_rel_cqe cqe;

	while (c->cancelled < c->sent && !urt_cq_next(c->ep, &cqe, timeout_ms)) {
		if (cqe.status == -ECANCELED)
			c->cancelled++;
		else
			c->bad++;
	}
}

/*
 * Insert a peer that never answers (it does not know us) and remove it, with
 * a send to it in flight one time in four.
 */
static void *churn_av(void *arg)
{
	struct churn *c = arg;
	struct usnic_rel_sqe sqe = { .opcode = USNIC_REL_OP_SEND,
				     .len = 8,
				     .flags = USNIC_REL_SQE_INLINE };
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < CHURN; i++) {
		int peer = urt_av_insert(c->ep, AF_INET, "127.0.0.1", PORT_C);

		if (peer <= 0) {
			c->bad++;
			continue;
		}
		if (!(i % 4)) {
			sqe.peer = peer;
			urt_queue_sqe(c->ep, USNIC_REL_CHAN_CMD, &sqe);
			if (urt_doorbell(c->ep, USNIC_REL_DB_SQ_CMD) == 1)
				c->sent++;
			else
				c->bad++;
		}
		if (urt_av_remove(c->ep, peer))
			c->bad++;
		churn_reap(c, 0);
	}
	churn_reap(c, 5000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c->secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	c->done = 1;
	return NULL;
}

/* A -> B traffic, checked, for as long as the churn goes on. */
static void check_av_churn(void)
{
	int fd = open("/dev/usnic_rel", O_RDWR);
	struct urt_ep a, b, c, d;
	struct churn ch = { .ep = &d };
	uint8_t buf[1024];
	pthread_t t;
	int pa, n = 0;

	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_A, &a), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_B, &b), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_C, &c), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_D, &d), 0);
	urt_post_all_rx(&b);
	urt_post_all_rx(&c);
	pa = urt_av_insert(&a, AF_INET, "127.0.0.1", PORT_B);
	URT_CHECK(pa > 0);
	URT_CHECK(urt_av_insert(&b, AF_INET, "127.0.0.1", PORT_A) > 0);
	pthread_create(&t, NULL, churn_av, &ch);
	while (!ch.done || n < 100) {
		struct usnic_rel_cqe cqe;
		uint32_t len = 1 + (n * 37) % sizeof(buf);
		int ok = 1;

		for (uint32_t i = 0; i < len; i++)
			buf[i] = urt_pattern(n, len, i);
		if (urt_send(&a, USNIC_REL_CHAN_DATA, pa, buf, len, n, n) ||
		    urt_cq_next(&a, &cqe, 5000) || cqe.status) {
			URT_CHECK(0);
			break;
		}
		if (urt_cq_next(&b, &cqe, 5000) || cqe.status || cqe.imm != (uint64_t)n ||
		    cqe.len != len) {
			URT_CHECK(0);
			break;
		}
		const uint8_t *got = urt_rx_buf(&b, cqe.buf);

		for (uint32_t i = 0; i < len; i++)
			ok &= got[i] == urt_pattern(n, len, i);
		URT_CHECK(ok);
		urt_post_rx(&b, cqe.buf);
		n++;
	}
	pthread_join(t, NULL);
	printf("  av churn: %d pairs in %.2f s, %d sends cancelled of %d, %d messages A->B "
	       "meanwhile\n",
	       CHURN, ch.secs, ch.cancelled, ch.sent, n);
	URT_CHECK_EQ(ch.bad, 0);
	URT_CHECK_EQ(ch.sent, CHURN / 4);
	URT_CHECK_EQ(ch.cancelled, ch.sent);
	URT_CHECK_EQ(urt_debugfs_value(d.info.debug_id, "memory", "peers"), 0);
	URT_CHECK_EQ(urt_debugfs_value(a.info.debug_id, "memory", "peers"), 1);
	URT_CHECK_EQ(urt_counter(a.info.debug_id, "retx_timeout"), 0);
	urt_ep_unmap(&a);
	urt_ep_unmap(&b);
	urt_ep_unmap(&c);
	urt_ep_unmap(&d);
	close(fd);
}

int main(void)
{
	memset(payload, 0xab, sizeof(payload));
	check_close_in_flight();
	check_killed();
	check_destroy_racing_doorbell();
	check_av_churn();
	check_ports_free();
	return urt_done("vm_teardown");
}
