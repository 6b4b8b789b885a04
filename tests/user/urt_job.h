/* SPDX-License-Identifier: MIT */
/*
 * In-VM test helpers for jobs of tagged messaging: the parent forks N ranks,
 * each opens its own device and endpoint on lo; the parent relays the ports
 * so every rank has every other in its address vector, and serves barriers
 * over one socketpair per rank (a test's own synchronisation, independent of
 * the library under test).
 */
#ifndef URT_JOB_H
#define URT_JOB_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <usnicrel_msg.h>

#include "urt.h"
#include "urt_lib.h"

#define URT_JOB_MAX 16

struct urt_job {
	int rank, size;
	int ctl; /* socketpair to the parent */
	struct urel_device *dev;
	struct urel_ep *ep;
	struct urel_msg *m;
	urel_peer_t peer[URT_JOB_MAX]; /* by rank; 0 for ourselves */
	struct sockaddr_storage addr[URT_JOB_MAX]; /* every rank's endpoint */
};

/* Set by tests of the library's own bootstrap: the harness leaves the address vector alone. */
static bool urt_job_no_av;
/* urel_ep_create_flags()' flags for every rank's endpoint (UREL_EP_SERIAL: one thread each). */
static unsigned int urt_job_ep_flags;

static inline void urt_job_xfer(int fd, void *buf, size_t len, int out)
{
	ssize_t n = out ? write(fd, buf, len) : read(fd, buf, len);

	if (n != (ssize_t)len) {
		fprintf(stderr, "job control channel broken\n");
		exit(2);
	}
}

/*
 * Wait until every rank of the job has called it, making progress meanwhile
 * as a library barrier would (a peer's synchronous send or rendezvous may
 * wait for our answer).
 */
static inline void urt_job_barrier(struct urt_job *j)
{
	struct pollfd pfd = { .fd = j->ctl, .events = POLLIN };
	char c = 'b';

	urt_job_xfer(j->ctl, &c, 1, 1);
	while (poll(&pfd, 1, j->m ? 1 : -1) == 0)
		urel_msg_progress(j->m);
	urt_job_xfer(j->ctl, &c, 1, 0);
}

static inline void urt_job_rank_setup(struct urt_job *j, const struct urel_msg_attr *attr)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	uint16_t ports[URT_JOB_MAX], port;
	int ret;

	if (urel_device_open(NULL, &j->dev) ||
	    urel_ep_create_flags(j->dev, (struct sockaddr *)&sin, sizeof(sin), NULL,
				 urt_job_ep_flags, &j->ep)) {
		fprintf(stderr, "rank %d: device or endpoint failed\n", j->rank);
		exit(1);
	}
	port = urt_ep_port(j->ep);
	urt_job_xfer(j->ctl, &port, sizeof(port), 1);
	urt_job_xfer(j->ctl, ports, sizeof(ports[0]) * (size_t)j->size, 0);
	for (int r = 0; r < j->size; r++) {
		j->peer[r] = 0;
		sin = urt_sin("127.0.0.1", ports[r]);
		memset(&j->addr[r], 0, sizeof(j->addr[r]));
		memcpy(&j->addr[r], &sin, sizeof(sin));
		if (r == j->rank || urt_job_no_av)
			continue;
		URT_CHECK_EQ(
			urel_av_insert(j->ep, (struct sockaddr *)&sin, sizeof(sin), &j->peer[r]),
			0);
	}
	ret = urel_msg_open(j->ep, attr, &j->m);
	if (ret) {
		fprintf(stderr, "rank %d: urel_msg_open: %s\n", j->rank, urel_strerror(ret));
		exit(1);
	}
}

static inline void urt_job_rank_teardown(struct urt_job *j)
{
	/* Everyone's last messages are acknowledged before anyone leaves. */
	urt_job_barrier(j);
	urel_msg_close(j->m);
	urel_ep_destroy(j->ep);
	urel_device_close(j->dev);
}

/* The rank of the peer handle @p, -1 if none. */
static inline int urt_job_rank_of(const struct urt_job *j, urel_peer_t p)
{
	for (int r = 0; r < j->size; r++) {
		if (r != j->rank && j->peer[r] == p)
			return r;
	}
	return -1;
}

/*
 * Run @fn in @size forked ranks; returns 0 when every rank exited 0. Each
 * rank gets @timeout_s seconds before SIGALRM ends it.
 */
static inline int urt_job_run(int size, const struct urel_msg_attr *attr,
			      void (*fn)(struct urt_job *j), unsigned int timeout_s)
{
	int fds[URT_JOB_MAX][2], failed = 0, status;
	uint16_t ports[URT_JOB_MAX];
	pid_t pids[URT_JOB_MAX];
	char c;

	fflush(NULL);
	for (int r = 0; r < size; r++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds[r]))
			return -1;
		pids[r] = fork();
		if (pids[r] < 0)
			return -1;
		if (!pids[r]) {
			struct urt_job j = { .rank = r, .size = size, .ctl = fds[r][1] };

			alarm(timeout_s);
			for (int k = 0; k <= r; k++)
				close(fds[k][0]);
			urt_job_rank_setup(&j, attr);
			fn(&j);
			urt_job_rank_teardown(&j);
			exit(urt_failures ? 1 : 0);
		}
		close(fds[r][1]);
	}
	for (int r = 0; r < size; r++)
		urt_job_xfer(fds[r][0], &ports[r], sizeof(ports[r]), 0);
	for (int r = 0; r < size; r++)
		urt_job_xfer(fds[r][0], ports, sizeof(ports[0]) * (size_t)size, 1);
	/* Barriers until the ranks hang up. */
	for (;;) {
		int gone = 0;

		for (int r = 0; r < size; r++) {
			if (read(fds[r][0], &c, 1) != 1)
				gone++;
		}
		if (gone)
			break;
		for (int r = 0; r < size; r++)
			urt_job_xfer(fds[r][0], &c, 1, 1);
	}
	for (int r = 0; r < size; r++) {
		close(fds[r][0]);
		if (waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "rank %d failed (status 0x%x)\n", r, status);
			failed++;
		}
	}
	return failed ? -1 : 0;
}

#endif /* URT_JOB_H */
