// SPDX-License-Identifier: MIT
/*
 * In-VM test: poll() and the other calls on a device file do not wait
 * behind a REG_MR that is pinning pages. One thread registers 16 MiB on an
 * endpoint whose debugfs fault_pin_hold stops the registration after its
 * first pages, until released; meanwhile, on the same file, poll() returns
 * with a message's completion, the message is read, a reply is sent and a
 * peer is inserted, all while fault shows the registration still held.
 * Deterministic: the registration waits on the knob, not on a clock. Should
 * poll() block (pinning under the file's lock), a watchdog releases the
 * registration after 20 s and the test fails instead of hanging.
 */
#include <pthread.h>
#include <stdlib.h>

#include "urt.h"
#include "urt_ep.h"

#define PORT_A 17341
#define PORT_B 17342
#define REG_BYTES (16UL << 20)

static struct urt_ep a;
static int fd_a;
static int reg_ret = 1;
static uint64_t reg_rkey;
static volatile int polled;

static void *registrar(void *mem)
{
	struct usnic_rel_reg_mr r = {
		.size = sizeof(r),
		.addr = (uintptr_t)mem,
		.length = REG_BYTES,
		.access = USNIC_REL_ACCESS_REMOTE_READ,
		.ep_id = a.info.ep_id,
	};

	reg_ret = urt_ioctl(fd_a, USNIC_REL_IOC_REG_MR, &r);
	reg_rkey = r.rkey;
	return NULL;
}

/* Releases a registration that poll() waits behind, so the failure is reported. */
static void *watchdog(void *unused)
{
	(void)unused;
	for (int i = 0; i < 2000 && !polled; i++)
		usleep(10000);
	if (!polled) {
		fprintf(stderr, "vm_pin_poll: poll() still blocked after 20 s of pinning\n");
		urt_fault_set(a.info.debug_id, "pin_hold", 0);
	}
	return NULL;
}

int main(void)
{
	struct pollfd pfd;
	struct usnic_rel_cqe cqe;
	struct urt_ep b;
	pthread_t reg_thread, dog;
	int fd_b, to_a, to_b, n;
	void *mem;

	fd_a = open("/dev/usnic_rel", O_RDWR);
	fd_b = open("/dev/usnic_rel", O_RDWR);
	URT_CHECK(fd_a >= 0 && fd_b >= 0);
	URT_CHECK_EQ(urt_ep_create(fd_a, AF_INET, "127.0.0.1", PORT_A, &a), 0);
	URT_CHECK_EQ(urt_ep_create(fd_b, AF_INET, "127.0.0.1", PORT_B, &b), 0);
	urt_post_all_rx(&a);
	urt_post_all_rx(&b);
	to_b = urt_av_insert(&a, AF_INET, "127.0.0.1", PORT_B);
	to_a = urt_av_insert(&b, AF_INET, "127.0.0.1", PORT_A);
	URT_CHECK(to_a > 0 && to_b > 0);
	mem = mmap(NULL, REG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	URT_CHECK(mem != MAP_FAILED);
	memset(mem, 1, REG_BYTES);

	/* Hold the registration after its first pages. */
	URT_CHECK_EQ(urt_fault_set(a.info.debug_id, "pin_hold", 1), 0);
	URT_CHECK_EQ(urt_fault_set(a.info.debug_id, "pin_hold", 2), -EINVAL);
	URT_CHECK_EQ(pthread_create(&reg_thread, NULL, registrar, mem), 0);
	for (int i = 0; i < 2000 && urt_fault_count(&a, "pin_held") != 1; i++)
		usleep(10000);
	URT_CHECK_EQ(urt_fault_count(&a, "pin_held"), 1);
	URT_CHECK_EQ(pthread_create(&dog, NULL, watchdog, NULL), 0);

	/* A message arrives on A while its file has a registration pinning. */
	URT_CHECK_EQ(urt_send(&b, USNIC_REL_CHAN_CMD, to_a, "ping", 4, 11, 1), 0);
	pfd = (struct pollfd){ .fd = fd_a, .events = POLLIN };
	n = poll(&pfd, 1, 30000);
	polled = 1;
	URT_CHECK_EQ(n, 1);
	/* poll() returned while the registration was still held. */
	URT_CHECK_EQ(urt_fault_count(&a, "pin_held"), 1);
	URT_CHECK_EQ(urt_cq_next(&a, &cqe, 0), 0);
	URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_RECV);
	URT_CHECK_EQ(cqe.imm, 11);
	urt_post_rx(&a, cqe.buf);
	/* Other calls on the file go on too: a reply and an AV insert. */
	URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, to_b, "pong", 4, 12, 2), 0);
	URT_CHECK_EQ(urt_cq_next(&a, &cqe, 10000), 0);
	URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_SEND);
	URT_CHECK_EQ(cqe.status, 0);
	URT_CHECK(urt_av_insert(&a, AF_INET, "127.0.0.1", PORT_B + 1) > 0);
	URT_CHECK_EQ(urt_fault_count(&a, "pin_held"), 1);
	URT_CHECK_EQ(reg_ret, 1);

	/* Released, the registration completes. */
	URT_CHECK_EQ(urt_fault_set(a.info.debug_id, "pin_hold", 0), 0);
	URT_CHECK_EQ(pthread_join(reg_thread, NULL), 0);
	URT_CHECK_EQ(pthread_join(dog, NULL), 0);
	URT_CHECK_EQ(reg_ret, 0);
	URT_CHECK(reg_rkey != 0);
	URT_CHECK_EQ(urt_fault_count(&a, "pin_held"), 0);
	{
		struct usnic_rel_dereg_mr d = { .size = sizeof(d), .rkey = reg_rkey };

		URT_CHECK_EQ(urt_ioctl(fd_a, USNIC_REL_IOC_DEREG_MR, &d), 0);
	}
	/* B's ping completed and A's pong arrived, in either order. */
	for (int i = 0, seen = 0; i < 2; i++) {
		URT_CHECK_EQ(urt_cq_next(&b, &cqe, 10000), 0);
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK(!(seen & (1 << cqe.opcode)));
		seen |= 1 << cqe.opcode;
		if (cqe.opcode == USNIC_REL_OP_RECV)
			URT_CHECK_EQ(cqe.imm, 12);
		else
			URT_CHECK_EQ(cqe.user_ctx, 1);
	}
	URT_CHECK_EQ(urt_ep_destroy(&a), 0);
	URT_CHECK_EQ(urt_ep_destroy(&b), 0);
	munmap(mem, REG_BYTES);
	close(fd_a);
	close(fd_b);
	return urt_done("vm_pin_poll");
}
