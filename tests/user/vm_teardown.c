// SPDX-License-Identifier: MIT
/*
 * In-VM test: endpoints die cleanly with traffic in flight, whether their
 * file is closed, their process is killed, or another thread is ringing
 * their doorbell; afterwards their ports are free again.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "urt.h"
#include "urt_ep.h"

#define PORT_A 17101
#define PORT_B 17102

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

int main(void)
{
	memset(payload, 0xab, sizeof(payload));
	check_close_in_flight();
	check_killed();
	check_destroy_racing_doorbell();
	check_ports_free();
	return urt_done("vm_teardown");
}
