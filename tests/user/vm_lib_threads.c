// SPDX-License-Identifier: MIT
/*
 * In-VM test: four threads post sends concurrently on one endpoint (and all
 * of them drive its progress engine), while two progress threads of another
 * device receive. Every message must arrive once with its content, each
 * sender's messages in that sender's order per channel (two threads driving
 * one endpoint must not dispatch out of ring order), and every send must
 * complete through its thread's request callback.
 */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stdlib.h>

#include "urt.h"
#include "urt_lib.h"

#define SENDERS 4
#define PER_SENDER 1500
#define WINDOW 16
#define RECEIVERS 2

struct sender {
	pthread_t thread;
	unsigned int id;
	struct urel_ep *ep;
	urel_peer_t peer;
	struct urel_request req;
	int completed; /* atomic: completions seen by this thread's callback */
	int failed; /* atomic */
};

static int received[SENDERS]; /* atomic, by the receiver */
/* Receive handler only: the library runs one handler at a time per endpoint. */
static int64_t last_seq[SENDERS][UREL_NR_CHANS];
static uint8_t seen[SENDERS][PER_SENDER];
static int recv_errors, reordered;
static int stop; /* atomic */

static uint32_t msg_len(uint64_t seq)
{
	static const uint32_t sizes[] = { 0, 8, UREL_INLINE_MAX, 65, 300, 700 };

	return sizes[seq % (sizeof(sizes) / sizeof(sizes[0]))];
}

static void send_done(struct urel_request *req, const struct urel_completion *c)
{
	struct sender *s = req->user;

	if (c->status)
		__atomic_add_fetch(&s->failed, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->completed, 1, __ATOMIC_RELAXED);
}

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	uint8_t buf[1024];

	for (uint64_t seq = 0; seq < PER_SENDER; seq++) {
		uint32_t len = msg_len(seq);
		unsigned int chan = (unsigned int)(seq / 3) % UREL_NR_CHANS;
		int ret;

		/* The receiver drops what it has no buffer for: keep a window. */
		long long end = urt_now_ms() + 10000;

		while ((int64_t)seq - __atomic_load_n(&received[s->id], __ATOMIC_ACQUIRE) >=
		       WINDOW) {
			if (urel_ep_progress(s->ep, 0) <= 0)
				sched_yield();
			if (urt_now_ms() > end) {
				fprintf(stderr, "sender %u: message lost near %llu\n", s->id,
					(unsigned long long)seq);
				__atomic_add_fetch(&s->failed, 1, __ATOMIC_RELAXED);
				return NULL;
			}
		}
		urt_fill(buf, seq + s->id * 1000000ULL, len);
		for (;;) {
			ret = urel_ep_send(s->ep, s->peer, chan, buf, len,
					   (uint64_t)s->id << 32 | seq, &s->req, 0);
			if (ret != -EAGAIN && ret != -ENOBUFS)
				break;
			urel_ep_progress(s->ep, 0);
		}
		if (ret) {
			fprintf(stderr, "sender %u: %s\n", s->id, urel_strerror(ret));
			__atomic_add_fetch(&s->failed, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		urel_ep_progress(s->ep, 0);
	}
	/* Drain this thread's completions (others may be dispatching them too). */
	for (long long end = urt_now_ms() + 30000;
	     __atomic_load_n(&s->completed, __ATOMIC_RELAXED) < PER_SENDER && urt_now_ms() < end;)
		if (urel_ep_progress(s->ep, 0) <= 0)
			sched_yield();
	return NULL;
}

static int on_recv(struct urel_ep *ep, const struct urel_completion *c, void *arg)
{
	unsigned int id = (unsigned int)(c->imm >> 32);
	uint64_t seq = (uint32_t)c->imm;

	(void)ep;
	(void)arg;
	if (c->status || id >= SENDERS || seq >= PER_SENDER || c->len != msg_len(seq) ||
	    c->channel != (seq / 3) % UREL_NR_CHANS ||
	    urt_verify(c->data, seq + id * 1000000ULL, c->len) || seen[id][seq]) {
		recv_errors++;
		return 0;
	}
	seen[id][seq] = 1;
	/* Each sender posts in order, and each channel delivers in order. */
	if ((int64_t)seq < last_seq[id][c->channel])
		reordered++;
	else
		last_seq[id][c->channel] = (int64_t)seq;
	__atomic_add_fetch(&received[id], 1, __ATOMIC_RELEASE);
	return 0;
}

static void *receiver_main(void *arg)
{
	struct urel_device *dev = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		if (urel_device_progress(dev, 0) <= 0)
			urel_device_wait(dev, 50);
	}
	return NULL;
}

int main(void)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0), rsin;
	struct urel_device *sdev, *rdev;
	struct urel_ep *sep, *rep;
	struct sender s[SENDERS];
	pthread_t receiver[RECEIVERS];
	urel_peer_t peer;

	if (urel_device_open(NULL, &sdev) || urel_device_open(NULL, &rdev) ||
	    urel_ep_create(sdev, (struct sockaddr *)&sin, sizeof(sin), NULL, &sep) ||
	    urel_ep_create(rdev, (struct sockaddr *)&sin, sizeof(sin), NULL, &rep)) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	rsin = urt_sin("127.0.0.1", urt_ep_port(rep));
	URT_CHECK_EQ(urel_av_insert(sep, (struct sockaddr *)&rsin, sizeof(rsin), &peer), 0);
	sin = urt_sin("127.0.0.1", urt_ep_port(sep));
	{
		urel_peer_t back;

		URT_CHECK_EQ(urel_av_insert(rep, (struct sockaddr *)&sin, sizeof(sin), &back), 0);
	}
	for (int i = 0; i < SENDERS; i++)
		for (int c = 0; c < UREL_NR_CHANS; c++)
			last_seq[i][c] = -1;
	URT_CHECK_EQ(urel_ep_set_recv_handler(rep, on_recv, NULL), 0);
	for (int i = 0; i < RECEIVERS; i++)
		URT_CHECK_EQ(pthread_create(&receiver[i], NULL, receiver_main, rdev), 0);
	for (unsigned int i = 0; i < SENDERS; i++) {
		s[i] = (struct sender){ .id = i,
					.ep = sep,
					.peer = peer,
					.req = { .complete = send_done, .user = &s[i] } };
		URT_CHECK_EQ(pthread_create(&s[i].thread, NULL, sender_main, &s[i]), 0);
	}
	for (int i = 0; i < SENDERS; i++)
		pthread_join(s[i].thread, NULL);
	for (long long end = urt_now_ms() + 10000; urt_now_ms() < end;) {
		int all = 1;

		for (int i = 0; i < SENDERS; i++)
			all &= __atomic_load_n(&received[i], __ATOMIC_ACQUIRE) == PER_SENDER;
		if (all)
			break;
		usleep(10000);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < RECEIVERS; i++)
		pthread_join(receiver[i], NULL);
	for (int i = 0; i < SENDERS; i++) {
		URT_CHECK_EQ(s[i].completed, PER_SENDER);
		URT_CHECK_EQ(s[i].failed, 0);
		URT_CHECK_EQ(received[i], PER_SENDER);
	}
	URT_CHECK_EQ(recv_errors, 0);
	if (reordered)
		printf("vm_lib_threads: %d messages overtaken on one channel\n", reordered);
	URT_CHECK_EQ(reordered, 0);
	URT_CHECK_EQ(urel_ep_destroy(sep), 0);
	URT_CHECK_EQ(urel_ep_destroy(rep), 0);
	urel_device_close(sdev);
	urel_device_close(rdev);
	return urt_done("vm_lib_threads");
}
