// SPDX-License-Identifier: MIT
/*
 * In-VM test: two processes exchange messages over lo through libusnicrel on
 * both channels and every size class (empty, inline, staged, the channel's
 * max_msg). The parent posts with a window and polls the completion queue
 * directly; the child runs the progress engine, whose receive handler
 * echoes each message from inside the callback. Contents, immediate data,
 * channels and peers are checked on both sides; then the parent's waits
 * (urel_device_wait and epoll on urel_device_fd) must wake on a late message.
 * "vm_lib_msg serial": both endpoints created UREL_EP_SERIAL (each process
 * one thread: the library takes none of its locks), the same checks.
 */
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "urt.h"
#include "urt_lib.h"

#define REPS 20
#define NSIZES 6
#define TOTAL (UREL_NR_CHANS * NSIZES * REPS)
#define WINDOW 8
#define LATE_IMM 0x1a7eULL

static unsigned int ep_flags; /* urel_ep_create_flags(): 0 or UREL_EP_SERIAL */

static uint32_t msg_len(const struct urel_ep_info *info, uint64_t seq)
{
	static const uint32_t sizes[NSIZES - 1] = { 0, 1, UREL_INLINE_MAX, UREL_INLINE_MAX + 1,
						    700 };
	unsigned int k = (unsigned int)(seq / UREL_NR_CHANS) % NSIZES;

	return k < NSIZES - 1 ? sizes[k] : info->max_msg[seq % UREL_NR_CHANS];
}

static struct urel_ep *setup(struct urel_device **devp, int rfd, int wfd, urel_peer_t *peer)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	struct urel_ep *ep;
	uint16_t port, other;

	if (urel_device_open(NULL, devp) ||
	    urel_ep_create_flags(*devp, (struct sockaddr *)&sin, sizeof(sin), NULL, ep_flags,
				 &ep)) {
		fprintf(stderr, "setup failed\n");
		exit(1);
	}
	port = urt_ep_port(ep);
	if (write(wfd, &port, sizeof(port)) != sizeof(port) ||
	    read(rfd, &other, sizeof(other)) != sizeof(other))
		exit(1);
	sin = urt_sin("127.0.0.1", other);
	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin), peer), 0);
	return ep;
}

/* --- child: progress engine, echo from the receive handler --------------- */

struct echo_state {
	struct urel_ep_info info;
	urel_peer_t peer;
	int received, echo_done;
	struct urel_request req;
};

static void echo_sent(struct urel_request *req, const struct urel_completion *c)
{
	struct echo_state *st = req->user;

	URT_CHECK_EQ(c->status, 0);
	URT_CHECK_EQ(c->opcode, UREL_OP_SEND);
	st->echo_done++;
}

static int echo_recv(struct urel_ep *ep, const struct urel_completion *c, void *arg)
{
	struct echo_state *st = arg;
	int ret;

	URT_CHECK_EQ(c->status, 0);
	URT_CHECK_EQ(c->peer, st->peer);
	if (c->imm == LATE_IMM)
		return 0;
	URT_CHECK_EQ(c->channel, c->imm % UREL_NR_CHANS);
	URT_CHECK_EQ(c->len, msg_len(&st->info, c->imm));
	URT_CHECK_EQ(urt_verify(c->data, c->imm, c->len), 0);
	st->received++;
	/* Posting from a callback: the library holds no lock here. */
	do {
		ret = urel_ep_send(ep, c->peer, c->channel, c->data, c->len, c->imm, &st->req, 0);
		if (ret == -EAGAIN || ret == -ENOBUFS)
			urel_ep_progress(ep, 0);
	} while (ret == -EAGAIN || ret == -ENOBUFS);
	URT_CHECK_EQ(ret, 0);
	return 0;
}

static int child(int rfd, int wfd)
{
	struct urel_device *dev;
	struct echo_state st = { .req = { .complete = echo_sent } };
	struct urel_ep *ep = setup(&dev, rfd, wfd, &st.peer);
	long long end = urt_now_ms() + 60000;
	char go;

	st.req.user = &st;
	urel_ep_query(ep, &st.info);
	URT_CHECK_EQ(urel_ep_set_recv_handler(ep, echo_recv, &st), 0);
	while ((st.received < TOTAL || st.echo_done < TOTAL) && urt_now_ms() < end) {
		if (urel_ep_progress(ep, 0) == 0)
			urel_device_wait(dev, 100);
	}
	URT_CHECK_EQ(st.received, TOTAL);
	URT_CHECK_EQ(st.echo_done, TOTAL);

	/* Wake the parent's waits: a message after a pause. */
	if (read(rfd, &go, 1) != 1)
		exit(1);
	usleep(300 * 1000);
	URT_CHECK_EQ(urel_ep_send(ep, st.peer, UREL_CHAN_CMD, "late", 4, LATE_IMM, NULL, 0), 0);
	if (read(rfd, &go, 1) != 1)
		exit(1);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
	urel_device_close(dev);
	return urt_failures ? 1 : 0;
}

/* --- parent: windowed sends, raw completion polling ----------------------- */

static void parent_exchange(struct urel_device *dev, struct urel_ep *ep, urel_peer_t peer)
{
	static uint8_t buf[65536], seen[TOTAL];
	struct urel_completion c[32];
	struct urel_ep_info info;
	long long end = urt_now_ms() + 60000;
	int sent = 0, echoed = 0, send_done = 0;

	urel_ep_query(ep, &info);
	while ((echoed < TOTAL || send_done < TOTAL) && urt_now_ms() < end) {
		while (sent < TOTAL && sent - echoed < WINDOW) {
			uint32_t len = msg_len(&info, (uint64_t)sent);
			int ret;

			urt_fill(buf, (uint64_t)sent, len);
			ret = urel_ep_send(ep, peer, (unsigned int)sent % UREL_NR_CHANS, buf, len,
					   (uint64_t)sent, (void *)(uintptr_t)(sent + 1), 0);
			if (ret == -EAGAIN || ret == -ENOBUFS)
				break;
			URT_CHECK_EQ(ret, 0);
			sent++;
		}
		int n = urel_ep_poll_cq(ep, c, 32);

		URT_CHECK(n >= 0);
		if (n <= 0) {
			urel_device_wait(dev, 100);
			continue;
		}
		for (int i = 0; i < n; i++) {
			URT_CHECK_EQ(c[i].status, 0);
			URT_CHECK_EQ(c[i].peer, peer);
			if (c[i].opcode == UREL_OP_SEND) {
				uintptr_t id = (uintptr_t)c[i].context;

				URT_CHECK(id >= 1 && id <= TOTAL);
				URT_CHECK_EQ(c[i].channel, (id - 1) % UREL_NR_CHANS);
				send_done++;
				continue;
			}
			URT_CHECK_EQ(c[i].opcode, UREL_OP_RECV);
			URT_CHECK(c[i].imm < TOTAL);
			if (c[i].imm < TOTAL) {
				URT_CHECK_EQ(seen[c[i].imm], 0);
				seen[c[i].imm] = 1;
				URT_CHECK_EQ(c[i].channel, c[i].imm % UREL_NR_CHANS);
				URT_CHECK_EQ(c[i].len, msg_len(&info, c[i].imm));
				URT_CHECK_EQ(urt_verify(c[i].data, c[i].imm, c[i].len), 0);
			}
			URT_CHECK_EQ(urel_ep_release_recv(ep, c[i].buf), 0);
			echoed++;
		}
	}
	URT_CHECK_EQ(sent, TOTAL);
	URT_CHECK_EQ(send_done, TOTAL);
	URT_CHECK_EQ(echoed, TOTAL);
}

static void parent_waits(struct urel_device *dev, struct urel_ep *ep, int wfd)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct urel_completion c;
	int efd = epoll_create1(EPOLL_CLOEXEC);
	long long t0;

	URT_CHECK(efd >= 0);
	URT_CHECK_EQ(epoll_ctl(efd, EPOLL_CTL_ADD, urel_device_fd(dev), &ev), 0);
	/* Nothing pending: both time out. */
	URT_CHECK_EQ(urel_device_wait(dev, 50), 0);
	URT_CHECK_EQ(epoll_wait(efd, &out, 1, 50), 0);

	URT_CHECK_EQ(write(wfd, "g", 1), 1);
	t0 = urt_now_ms();
	URT_CHECK_EQ(epoll_wait(efd, &out, 1, 10000), 1);
	URT_CHECK(urt_now_ms() - t0 >= 150);
	/* Still pending: the device stays readable until polled. */
	URT_CHECK_EQ(urel_device_wait(dev, 5000), 1);
	URT_CHECK_EQ(urel_ep_poll_cq(ep, &c, 1), 1);
	URT_CHECK_EQ(c.opcode, UREL_OP_RECV);
	URT_CHECK_EQ(c.imm, LATE_IMM);
	URT_CHECK(c.len == 4 && !memcmp(c.data, "late", 4));
	URT_CHECK_EQ(urel_ep_release_recv(ep, c.buf), 0);
	URT_CHECK_EQ(urel_device_wait(dev, 0), 0);
	close(efd);
}

int main(int argc, char **argv)
{
	int to_child[2], to_parent[2], status;
	struct urel_device *dev;
	struct urel_ep *ep;
	urel_peer_t peer;
	pid_t pid;

	if (argc > 1 && strcmp(argv[1], "serial")) {
		fprintf(stderr, "usage: vm_lib_msg [serial]\n");
		return 2;
	}
	if (argc > 1)
		ep_flags = UREL_EP_SERIAL;
	if (pipe(to_child) || pipe(to_parent))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		_exit(child(to_child[0], to_parent[1]));

	ep = setup(&dev, to_parent[0], to_child[1], &peer);
	parent_exchange(dev, ep, peer);
	parent_waits(dev, ep, to_child[1]);
	URT_CHECK_EQ(write(to_child[1], "q", 1), 1);
	URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
	urel_device_close(dev);
	return urt_done("vm_lib_msg");
}
