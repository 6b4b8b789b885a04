// SPDX-License-Identifier: MIT
/*
 * In-VM test: the device fd is readable exactly when a completion ring has
 * entries, and a process blocked in epoll_wait() sleeps (uses no CPU) until
 * a message arrives.
 */
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "urt.h"
#include "urt_ep.h"

#define PORT_RX 17201
#define PORT_TX 17202

static long cpu_us(const struct rusage *ru)
{
	return (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000L + ru->ru_utime.tv_usec +
	       ru->ru_stime.tv_usec;
}

static int receiver(int ready_fd)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct pollfd pfd;
	struct usnic_rel_cqe cqe;
	struct rusage r0, r1;
	struct urt_ep ep;
	int fd = open("/dev/usnic_rel", O_RDWR);
	int efd = epoll_create1(0);

	if (fd < 0 || urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_RX, &ep))
		return 1;
	urt_post_all_rx(&ep);
	URT_CHECK(urt_av_insert(&ep, AF_INET, "127.0.0.1", PORT_TX) > 0);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	URT_CHECK_EQ(poll(&pfd, 1, 0), 0);
	URT_CHECK_EQ(epoll_ctl(efd, EPOLL_CTL_ADD, fd, &ev), 0);

	getrusage(RUSAGE_SELF, &r0);
	URT_CHECK_EQ(write(ready_fd, "r", 1), 1);
	URT_CHECK_EQ(epoll_wait(efd, &out, 1, 10000), 1);
	getrusage(RUSAGE_SELF, &r1);
	/* The sender waits a second before sending: we slept through it. */
	URT_CHECK(cpu_us(&r1) - cpu_us(&r0) < 200000);
	URT_CHECK_EQ(poll(&pfd, 1, 0), 1);
	URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 0), 0);
	URT_CHECK_EQ(cqe.imm, 7);
	/* Consumed: not readable any more. */
	URT_CHECK_EQ(poll(&pfd, 1, 0), 0);
	urt_ep_unmap(&ep);
	close(fd);
	return urt_done("vm_poll receiver");
}

int main(void)
{
	struct usnic_rel_cqe cqe;
	struct urt_ep ep;
	int pipefd[2], status, fd, peer;
	char c;
	pid_t pid;

	URT_CHECK_EQ(pipe(pipefd), 0);
	pid = fork();
	if (pid == 0)
		exit(receiver(pipefd[1]));
	fd = open("/dev/usnic_rel", O_RDWR);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_TX, &ep), 0);
	peer = urt_av_insert(&ep, AF_INET, "127.0.0.1", PORT_RX);
	URT_CHECK_EQ(read(pipefd[0], &c, 1), 1);
	sleep(1);
	URT_CHECK_EQ(urt_send(&ep, USNIC_REL_CHAN_CMD, peer, "hi", 2, 7, 99), 0);
	/* Our own send completion makes our fd readable too. */
	URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 1000), 0);
	URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_SEND);
	URT_CHECK_EQ(cqe.user_ctx, 99);
	URT_CHECK_EQ(cqe.status, 0);
	URT_CHECK_EQ(cqe.len, 2);
	URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	urt_ep_unmap(&ep);
	close(fd);
	return urt_done("vm_poll");
}
