// SPDX-License-Identifier: MIT
/*
 * In-VM test: endpoints as independent contexts used from several threads.
 * Four workers each create an endpoint at the same time (two on one shared
 * device, two on devices of their own), send messages to themselves on both
 * channels while registering and deregistering memory, and wait with
 * urel_device_wait() on their device, which wakes for any of its endpoints.
 * Meanwhile a churn thread creates and destroys endpoints on the shared
 * device (up to CHURN_MAX times). Every worker must get exactly its own messages (no completion of
 * another endpoint), intact, in order per channel, and every send completion
 * with its own context.
 */
#include <pthread.h>
#include <stdlib.h>

#include "urt.h"
#include "urt_lib.h"

#define WORKERS 4
#define MSGS 200
#define CHURN_MAX 200
/* A worker gives up when nothing completes for this long (a stall, not a timing check). */
#define STALL_MS 30000
#define WINDOW 8

struct worker {
	pthread_t thread;
	uint64_t id;
	struct urel_device *dev; /* shared, or NULL: open one */
	int own_dev;
	int sends, recvs, errors;
};

static int stop; /* atomic */

#define W_CHECK(w, cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "worker %llu: %s:%d: %s\n", (unsigned long long)(w)->id,   \
				__FILE__, __LINE__, #cond);                                        \
			(w)->errors++;                                                             \
		}                                                                                  \
	} while (0)

static uint32_t msg_len(uint64_t seq)
{
	static const uint32_t sizes[] = { 0, 8, UREL_INLINE_MAX, 65, 900 };

	return sizes[seq % 5];
}

static void take(struct worker *w, struct urel_ep *ep, const struct urel_completion *c,
		 int64_t next[UREL_NR_CHANS])
{
	W_CHECK(w, c->status == 0);
	if (c->opcode == UREL_OP_SEND) {
		uintptr_t ctx = (uintptr_t)c->context;

		/* The context names this worker and the message. */
		W_CHECK(w, ctx >> 16 == w->id + 1);
		w->sends++;
		return;
	}
	W_CHECK(w, c->opcode == UREL_OP_RECV);
	W_CHECK(w, c->imm >> 32 == w->id);
	if (c->imm >> 32 == w->id) {
		uint64_t seq = c->imm & 0xffffffffULL;

		W_CHECK(w, c->channel < UREL_NR_CHANS && c->channel == seq % UREL_NR_CHANS);
		if (c->channel < UREL_NR_CHANS) {
			W_CHECK(w, (int64_t)seq == next[c->channel]);
			next[c->channel] = (int64_t)seq + UREL_NR_CHANS;
		}
		W_CHECK(w, c->len == msg_len(seq));
		W_CHECK(w, urt_verify(c->data, seq ^ w->id << 20, c->len) == 0);
	}
	W_CHECK(w, urel_ep_release_recv(ep, c->buf) == 0);
	w->recvs++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	int64_t next[UREL_NR_CHANS] = { 0, 1 };
	static _Thread_local uint8_t buf[1024], region[8192];
	struct urel_completion c[8];
	struct urel_ep *ep;
	urel_peer_t me;
	uint64_t seq = 0;
	long long end;

	if (!w->dev) {
		W_CHECK(w, urel_device_open(NULL, &w->dev) == 0);
		w->own_dev = 1;
		if (!w->dev)
			return NULL;
	}
	if (urel_ep_create(w->dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep)) {
		W_CHECK(w, !"urel_ep_create");
		return NULL;
	}
	sin = urt_sin("127.0.0.1", urt_ep_port(ep));
	W_CHECK(w, urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin), &me) == 0);
	end = urt_now_ms() + STALL_MS;
	while ((w->sends < MSGS || w->recvs < MSGS) && urt_now_ms() < end) {
		int n;

		if (seq < MSGS && (int64_t)seq - w->sends < WINDOW) {
			struct urel_mr *mr = NULL;
			uint32_t len = msg_len(seq);
			int ret;

			urt_fill(buf, seq ^ w->id << 20, len);
			ret = urel_ep_send(ep, me, (unsigned int)(seq % UREL_NR_CHANS), buf, len,
					   w->id << 32 | seq,
					   (void *)(uintptr_t)((w->id + 1) << 16 | seq), 0);
			W_CHECK(w, ret == 0 || ret == -EAGAIN || ret == -ENOBUFS);
			if (ret == 0)
				seq++;
			/* Registrations of several threads share the device's list. */
			W_CHECK(w, urel_mr_reg(ep, region, sizeof(region), UREL_ACCESS_REMOTE_READ,
					       &mr) == 0);
			W_CHECK(w, urel_mr_dereg(mr) == 0);
			continue;
		}
		n = urel_ep_poll_cq(ep, c, 8);
		W_CHECK(w, n >= 0);
		if (n <= 0) {
			W_CHECK(w, urel_device_wait(w->dev, 50) >= 0);
			continue;
		}
		for (int i = 0; i < n; i++)
			take(w, ep, &c[i], next);
		end = urt_now_ms() + STALL_MS;
	}
	W_CHECK(w, urel_ep_poll_cq(ep, c, 8) == 0);
	W_CHECK(w, urel_ep_destroy(ep) == 0);
	if (w->own_dev)
		urel_device_close(w->dev);
	return NULL;
}

static void *churn_main(void *arg)
{
	struct urel_device *dev = arg;
	long failures = 0, cycles = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED) && cycles < CHURN_MAX) {
		struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
		struct urel_ep *ep;

		if (urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep) ||
		    urel_ep_destroy(ep))
			failures++;
		cycles++;
	}
	return (void *)(failures ? -1L : cycles);
}

int main(void)
{
	struct worker w[WORKERS] = { 0 };
	struct urel_device *shared;
	pthread_t churn;
	void *churned;
	int ret = urel_device_open(NULL, &shared);

	if (ret) {
		fprintf(stderr, "urel_device_open: %s\n", urel_strerror(ret));
		return 1;
	}
	URT_CHECK_EQ(pthread_create(&churn, NULL, churn_main, shared), 0);
	for (int i = 0; i < WORKERS; i++) {
		w[i].id = (uint64_t)i;
		w[i].dev = i % 2 ? NULL : shared;
		URT_CHECK_EQ(pthread_create(&w[i].thread, NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(w[i].thread, NULL);
		URT_CHECK_EQ(w[i].errors, 0);
		URT_CHECK_EQ(w[i].sends, MSGS);
		URT_CHECK_EQ(w[i].recvs, MSGS);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(churn, &churned);
	/* The churn thread must have run its cycles without a failure. */
	URT_CHECK((long)churned > 0);
	urel_device_close(shared);
	return urt_done("vm_lib_contexts");
}
